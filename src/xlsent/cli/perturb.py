"""``xlsent perturb``: a perturbed copy of a BIO test file (P1–P5, P4-random) and a JSON log of every replacement."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from xlsent.api._common import writes
from xlsent.cli.common import console, output_file, show_note
from xlsent.cli.options import takes
from xlsent.perturbations.suite import KINDS
from xlsent.utils.errors import XlsentError


@takes("device")
@writes("output")
def perturb_command(
    test: str = typer.Option(..., "--test", help="BIO test file (or bundled set, e.g. silver-ner:ny:test)"),
    train: str = typer.Option(..., "--train", help="the tagger's training file (read, never changed)"),
    output: Path = typer.Option(..., "--output", "-o", help="perturbed CoNLL file; the log goes to OUTPUT.json"),
    perturbation: Literal[KINDS] = typer.Option(..., "--perturbation", "-p", help="which perturbation"),
    target_train: str = typer.Option(None, help="the test language's own training file (default name/place lists "
                                     "come from its entities; default: --train)"),
    names: Path = typer.Option(None, help="given names for P1, one per line"),
    places: Path = typer.Option(None, help="place names for P2, one per line"),
    stopwords: Path = typer.Option(None, help="P4, P5, P4-random: stop words, one per line (default: stopwords-iso, "
                                   "or frequency-derived where it lacks the language)"),
    lang: str = typer.Option("", help="P4, P5, P4-random: the test language's code, for the stop words (default: "
                             "from a bundled set's name)"),
    model: str = typer.Option("e5-small", "--model", "-m", help="model that embeds words for P4/P5"),
    seed: int = typer.Option(0, help="seed of every random choice"),
    sample: int = typer.Option(0, help="perturb a seeded sample of N test sentences (0 = all)"),
    strict: bool = typer.Option(False, "--strict", help="an I- tag after O is an error instead of a repair"),
    run: dict = None,
) -> None:
    """Perturb a test file (Manafi 2025 §3.1.2): P1 given names, P2 places, P3 shared entities → test-only
    ones, P4 shared context words → most similar test-only word, P5 = P3 + P4, P4-random = random substitutes."""
    from xlsent.perturbations.suite import perturb, write_perturbed
    from xlsent.recipes.adversarial import load_inputs

    output_file(output)
    context = perturbation.startswith(("P4", "P5"))  # the ones that replace context words, which skip stop words
    if not context and (stopwords is not None or lang):
        raise XlsentError(f"--stopwords and --lang apply to P4, P5 and P4-random (context words); {perturbation} "
                          "replaces entities only — leave them out")
    inp = load_inputs(test, train, target_train, lang, names, places, stopwords, model, strict, sample, seed,
                      need_stopwords=context)
    for c in (inp.test, inp.train, inp.target_train):
        for n in (c.notes if c else []):
            show_note(n)
    if perturbation in ("P4", "P5"):
        from xlsent.models.registry import resolve_model_path

        resolve_model_path(model)
    out = perturb(perturbation, inp, seed)
    log = write_perturbed(out, output, inp, seed)
    for n in out.notes:
        show_note(n)
    for k, v in out.counts.items():
        console.print(f"{k}: {v}")
    console.print(f"{out.name}: {len(out.replacements)} replacement(s) → {output}; log: {log}")
