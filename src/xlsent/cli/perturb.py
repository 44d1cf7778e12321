"""``xlsent perturb``: a perturbed copy of a BIO test file (P1–P5, P4-random) and a JSON log of every replacement."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from xlsent.api.evaluation import PERTURB
from xlsent.cli.common import console, show_note
from xlsent.cli.options import declared, takes
from xlsent.perturbations.suite import KINDS


@takes("device")
def perturb_command(
    test: str = declared(PERTURB["test"], "--test"),
    train: str = declared(PERTURB["train"], "--train"),
    output: Path = declared(PERTURB["output"], "--output", "-o"),
    perturbation: Literal[KINDS] = declared(PERTURB["perturbation"], "--perturbation", "-p"),
    target_train: str = declared(PERTURB["target_train"]),
    names: Path = declared(PERTURB["names"]),
    places: Path = declared(PERTURB["places"]),
    stopwords: Path = declared(PERTURB["stopwords"]),
    lang: str = declared(PERTURB["lang"]),
    model: str = declared(PERTURB["model"], "--model", "-m"),
    seed: int = declared(PERTURB["seed"]),
    sample: int = declared(PERTURB["sample"]),
    strict: bool = declared(PERTURB["strict"], "--strict"),
    run: dict = None,
) -> None:
    """Perturb a test file (Manafi 2025 §3.1.2): P1 given names, P2 places, P3 shared entities → test-only
    ones, P4 shared context words → most similar test-only word, P5 = P3 + P4, P4-random = random substitutes."""
    from xlsent.api.evaluation import perturb_file

    out, log = perturb_file(test, train, output, perturbation, target_train=target_train, names=names, places=places,
                            stopwords=stopwords, lang=lang, model=model, seed=seed, sample=sample, strict=strict,
                            on_note=show_note)
    for k, v in out.counts.items():
        console.print(f"{k}: {v}")
    console.print(f"{out.name}: {len(out.replacements)} replacement(s) → {output}; log: {log}")
