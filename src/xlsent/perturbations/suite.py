"""One entry point for every perturbation, and the files it writes: ``xlsent perturb``.

:func:`perturb` applies P1–P5 or the random control of P4 (``P4-random``) to a test corpus and
:func:`write_perturbed` writes the perturbed copy (CoNLL) and a JSON log beside it: the perturbation,
seed, files, model, stop-word source, counts, the fixed mapping (P3, P4) and every replacement
(sentence, position, original and new tokens and tags). The training file is read, never written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from xlsent.data.formats.conll import TaggedCorpus, write_conll
from xlsent.perturbations.context import WordEmbedder, p4_context
from xlsent.perturbations.entities import (Perturbed, default_given_names, default_places, p1_given_names,
                                           p2_places, p3_shared_entities)
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_json_atomic

KINDS = ("P1", "P2", "P3", "P4", "P5", "P4-random")


@dataclass
class PerturbInputs:
    """What the perturbations read: the test file, the model's training file, the target language's own training
    file (default name lists), the lists, stop words and the model that embeds words for P4."""

    test: TaggedCorpus
    train: TaggedCorpus
    target_train: TaggedCorpus | None = None
    given_names: list[str] | None = None
    places: list[list[str]] | None = None
    stopwords: frozenset[str] = frozenset()
    stopwords_note: str = ""
    model: str = "e5-small"
    only_o: bool = True
    notes: list[str] = field(default_factory=list)
    _embedder: WordEmbedder | None = None

    def embed(self, words):
        """Word vectors of the model under test, memoised per word (P4 and P5 embed the same words)."""
        if self._embedder is None:
            self._embedder = WordEmbedder(self.model)
        return self._embedder(words)


def _default_list(inp: PerturbInputs, kind: str):
    """The user's list, else the target training file's PER first tokens (P1) / LOC entities (P2)."""
    given = inp.given_names if kind == "P1" else inp.places
    if given:
        return given
    src = inp.target_train or inp.train
    found = default_given_names(src) if kind == "P1" else default_places(src)
    label, what, option = ("PER", "given names", "names=") if kind == "P1" else ("LOC", "place names", "places=")
    if not found:
        raise XlsentError(f"{kind} needs {what}: {src.path or 'the training file'} has no {label} entity — "
                          f"give a list with {option}FILE")
    inp.notes.append(f"{kind}: {len(found)} {what} from the {label} entities of {src.path or 'the target training file'}")
    return found


def perturb(kind: str, inp: PerturbInputs, seed: int = 0) -> Perturbed:
    if kind not in KINDS:
        raise XlsentError(f"unknown perturbation {kind!r}: use one of {', '.join(KINDS)}")
    if kind == "P1":
        out = p1_given_names(inp.test, _default_list(inp, "P1"), seed)
    elif kind == "P2":
        out = p2_places(inp.test, _default_list(inp, "P2"), seed)
    elif kind == "P3":
        out = p3_shared_entities(inp.test, inp.train, seed)
    elif kind in ("P4", "P4-random"):
        out = p4_context(inp.test, inp.train, inp.stopwords, inp.embed, seed, kind == "P4-random", inp.only_o)
    else:
        p3 = p3_shared_entities(inp.test, inp.train, seed)
        p4 = p4_context(p3.corpus(), inp.train, inp.stopwords, inp.embed, seed, False, inp.only_o,
                        base=inp.test, name="P5")
        out = Perturbed("P5", p4.tokens, p4.tags, [{**r, "step": "P3"} for r in p3.replacements]
                        + [{**r, "step": "P4"} for r in p4.replacements],
                        {"P3": p3.mapping, "P4": p4.mapping},
                        {**{f"P3 {k}": v for k, v in p3.counts.items()}, **{f"P4 {k}": v for k, v in p4.counts.items()}},
                        p3.notes + p4.notes)
    out.notes = inp.notes + out.notes
    return out


def write_perturbed(out: Perturbed, path: Path, inp: PerturbInputs, seed: int, extra: dict | None = None) -> Path:
    """Write the perturbed CoNLL file and ``<path>.json`` (the log); returns the log's path."""
    write_conll(path, out.tokens, out.tags)
    log = Path(str(path) + ".json")
    write_json_atomic(log, {
        "schema": "xlsent.perturbation/1", "perturbation": out.name, "seed": seed, "output": str(path),
        "test": inp.test.path, "train": inp.train.path, "model": inp.model if out.name in ("P4", "P5") else None,
        "stopwords": inp.stopwords_note if out.name.startswith(("P4", "P5")) else None,
        "counts": out.counts, "notes": out.notes, "mapping": out.mapping, "replacements": out.replacements,
        **(extra or {})})
    return log
