"""Romanisation inside the tokenizer: a model that reads a script its tokenizer cannot, by writing the script's
letters in Latin before it tokenises (issue 62).

A multilingual tokenizer maps a character it never saw to ``<unk>``; ``xlsent models extend-vocab`` adds pieces for
such a script, but their rows start from nothing and a user's few hundred pairs cannot teach them a language. Most
scripts have a standard romanisation, and the model reads Latin: a romanised text reuses rows the model has trained,
names and numbers line up with other languages', and a word shared with a related language comes close.

How a folder is built (:func:`romanize_tokenizer`, ``xlsent models romanize``):

1. **Which characters.** Those of the user's text that the base tokenizer maps to ``<unk>`` (after its own
   normaliser: :func:`xlsent.models.vocab.extend.unknown_characters`) — nothing the model already reads changes,
   so text in its other scripts is tokenised exactly as before.
2. **Their romanisation** is anyascii's (ISC licence, a fixed table from each Unicode character to ASCII:
   Cherokee ᏣᎳᎩ → ``TsaLaGi``, Tifinagh ⵜⴰⵎⴰⵣⵉⵖⵜ → ``tamazight``, Inuktitut ᐃᓄᒃᑎᑐᑦ → ``inoktitot``, Shavian and
   Deseret letters → their sounds). anyascii maps one character at a time, with no context, so a table of
   single-character replacements reproduces it exactly — but in lower case, except for a capital letter whose small
   letter the text also uses: Cherokee, which the UDHR writes in capitals only, becomes ``tsalagi``, the ordinary
   lower-case Latin the model read most of, not ``TsaLaGi``. A character it has nothing for (an empty romanisation), or
   whose romanisation the tokenizer cannot read either, stays — ``--extend`` adds pieces for what stays; so does a
   symbol (an emoji the tokenizer lacks is left alone: anyascii would write it as ``:grinning:`` in every text).
3. **The table goes into the tokenizer**: ``tokenizer.json``'s normaliser becomes the base normaliser followed by
   one ``tokenizers`` ``Replace`` rule per character (``Sequence``). The folder is an ordinary sentence-transformers
   model: ``SentenceTransformer(path)`` loads it and romanises its own input, with nothing of xlsent installed —
   whether a text reaches it in the script or already romanised, it sees the same pieces. The token table is not
   touched. ``xlsent_romanization.json`` records the table and the text's unknown-piece rate before and after. A
   tokenizer class that rebuilds its normaliser from its own settings when it loads (BERT's WordPiece, LaBSE's, in
   transformers 5) would drop the rules; such a tokenizer is saved as a plain ``PreTrainedTokenizerFast`` over the
   same ``tokenizer.json`` (its special tokens, lengths and inputs kept).

With ``extend`` the characters anyascii leaves are then given pieces and rows by
:func:`xlsent.models.vocab.extend.extend_vocabulary`, learnt from the romanised text (the two combine: the
romanised letters use the model's rows, the rest new ones). By default one piece a character left and no longer
one: a longer piece learnt from the romanised text holds romanised letters too, which then reach the model through a
new row instead of the trained ones — on the development split that did worse than the characters alone
(``docs/experiments/romanize.md``).
"""

from __future__ import annotations

import json
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from xlsent.utils.errors import XlsentError

ROMANIZED_FILE = "xlsent_romanization.json"
ROMANIZER = "anyascii"


@dataclass
class Romanization:
    """What :func:`xlsent.romanize` did, and where the romanised model is."""

    output: Path
    romanized: int  # characters given a romanisation
    left: int  # unknown characters anyascii has nothing readable for
    unk_rate_before: float
    unk_rate_after: float  # after romanising (and, with extend, after the added pieces)
    pieces_per_word_before: float
    pieces_per_word_after: float
    texts: int
    table: dict[str, str] = field(default_factory=dict)  # character → its romanisation
    left_characters: dict[str, int] = field(default_factory=dict)  # character → count in the text
    extended: int = 0  # pieces added by extend (0: not extended)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["output"] = str(self.output)
        return d


def romanizer():
    """anyascii's function, or one line saying how to install it."""
    try:
        from anyascii import anyascii
    except ImportError:  # a dependency of xlsent; only a broken install lacks it
        raise XlsentError("romanising needs the anyascii package (ISC licence): pip install anyascii") from None
    return anyascii


def romanization_table(tokenizer_json: dict, texts: list[str]) -> tuple[dict[str, str], Counter]:
    """``{character: romanisation}`` for the characters of ``texts`` the tokenizer maps to ``<unk>`` and anyascii
    writes in characters the tokenizer reads; and the unknown characters left (with their counts)."""
    from xlsent.models.vocab.extend import unknown_characters

    anyascii = romanizer()
    unknown = unknown_characters(tokenizer_json, texts)
    seen = {c for t in texts for c in t}
    # a script's letters, marks, digits and punctuation; never a symbol (an emoji would become ":grinning:" in
    # every text, the model's other languages' too); a romanisation written as one word (anyascii spaces some)
    written = {c: _cased(c, anyascii(c), seen).replace(" ", "") for c in unknown if _script_character(c)}
    readable = unknown_characters(tokenizer_json, [r for r in written.values() if r])
    table = {c: r for c, r in written.items() if r.strip() and not any(x in readable for x in r)}
    left = Counter({c: n for c, n in unknown.items() if c not in table})
    return table, left


def _script_character(char: str) -> bool:
    """A letter, mark, digit or punctuation mark; or a letter of a script newer than this Python's Unicode database
    (:func:`xlsent.data.langid.scripts.newer_letter`: Garay, Kirat Rai…; a newer emoji is not one)."""
    from xlsent.data.langid.scripts import newer_letter

    return unicodedata.category(char)[0] in "LMNP" or newer_letter(char)


def _cased(char: str, roman: str, seen: set[str]) -> str:
    """``roman`` in lower case, but for a capital letter whose small letter the text also uses (a script written in
    two cases, as Deseret): a script written in one case (Cherokee's capitals, as the UDHR writes it) romanises as
    ordinary lower-case Latin (``udohiyuhi``, not anyascii's ``UDoHiYuHi``)."""
    small = char.lower()
    return roman if char.isupper() and small != char and small in seen else roman.lower()


def romanized_tokenizer_json(tokenizer_json: dict, table: dict[str, str]) -> dict:
    """``tokenizer_json`` whose normaliser is followed by one ``Replace`` rule a character of ``table`` (a
    normaliser already romanising is extended: the new rules after its own)."""
    out = json.loads(json.dumps(tokenizer_json))
    rules = [{"type": "Replace", "pattern": {"String": c}, "content": r} for c, r in sorted(table.items())]
    base = out.get("normalizer")
    steps = ([] if base is None else base["normalizers"] if base.get("type") == "Sequence" else [base])
    out["normalizer"] = {"type": "Sequence", "normalizers": steps + rules}
    return out


def romanizing_rule(rule: object) -> bool:
    """A normaliser step :func:`romanized_tokenizer_json` writes: ``Replace`` of one non-ASCII letter by ASCII
    text."""
    from xlsent.data.langid.scripts import letter_like

    if not isinstance(rule, dict) or rule.get("type") != "Replace":
        return False
    char, content = str((rule.get("pattern") or {}).get("String", "")), str(rule.get("content", ""))
    return len(char) == 1 and not char.isascii() and letter_like(char) and content.isascii()


def romanizes(tokenizer_json: dict) -> bool:
    """Whether a tokenizer's normaliser (``tokenizer.json``, read as a dict) romanises: holds
    :func:`romanizing_rule` steps, as :func:`romanize_tokenizer` writes them and a model trained from such a
    folder keeps them."""
    steps = (tokenizer_json.get("normalizer") or {}).get("normalizers") or []
    return any(romanizing_rule(r) for r in steps)


def recorded_base(folder: Path) -> str | None:
    """The base model the romanisation record of ``folder`` (:data:`ROMANIZED_FILE`, :func:`write_record`) names;
    None where there is no record, it cannot be read or it names none."""
    try:
        record = json.loads((Path(folder) / ROMANIZED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(record["base_model"]) if isinstance(record, dict) and record.get("base_model") else None


def romanize_tokenizer(model, texts: list[str]) -> Romanization:
    """Romanise ``model`` (a loaded SentenceTransformer) in place for ``texts``: its tokenizer's normaliser gains
    the table of the module docstring. Returns what was done (``output`` left empty for the caller)."""
    from xlsent.data.sets.stats import tokenizer_stats
    from xlsent.models.vocab.tokenizer import tokenizer_with

    module = model[0]
    tok = module.tokenizer
    if tok is None or not getattr(tok, "is_fast", False):
        raise XlsentError("romanize needs a fast tokenizer (tokenizer.json), as e5-small's")
    full = json.loads(tok.backend_tokenizer.to_str())
    if (full.get("model") or {}).get("unk_id") is None and (full.get("model") or {}).get("unk_token") is None:
        raise XlsentError("the model's tokenizer has no unknown piece — it reads every character; nothing to "
                          "romanise")
    table, left = romanization_table(full, texts)
    if not table:
        which = "".join(sorted(left))[:20]
        raise XlsentError("nothing to romanise: " + (
            f"anyascii has no readable romanisation for the text's unknown characters ({which}) — add pieces for "
            "them instead: xlsent models extend-vocab" if left else
            "the model's tokenizer already reads every character of the text (no <unk>) — train on it as it is "
            "(xlsent train adapt)"))
    sample = texts[:5000]
    before = tokenizer_stats(tok, sample)
    romanized = romanized_tokenizer_json(full, table)
    new = tokenizer_with(tok, romanized)
    if not _keeps(new, table):  # its class rebuilt the normaliser from its settings (BERT's, in transformers 5)
        new = _generic(tok, romanized)
    module.processor = new
    after = tokenizer_stats(module.tokenizer, sample)
    return Romanization(
        output=Path(), romanized=len(table), left=len(left), unk_rate_before=round(before["unk_rate"], 6),
        unk_rate_after=round(after["unk_rate"], 6), pieces_per_word_before=round(before["pieces_per_word"], 4),
        pieces_per_word_after=round(after["pieces_per_word"], 4), texts=len(texts), table=table,
        left_characters=dict(left.most_common()))


def _keeps(tok, table: dict[str, str]) -> bool:
    """Whether ``tok``'s normaliser holds the romanisation rules."""
    rules = json.dumps(json.loads(tok.backend_tokenizer.to_str()).get("normalizer"), ensure_ascii=False)
    return all(json.dumps(c, ensure_ascii=False) in rules for c in list(table)[:3])


def _generic(tok, tokenizer_json: dict):
    """A plain ``PreTrainedTokenizerFast`` over ``tokenizer_json`` with ``tok``'s special tokens and lengths: what a
    tokenizer class that rebuilds its normaliser from its own settings (BERT's) is saved as, so that the folder's
    ``tokenizer.json`` is read as it is."""
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    specials = {k: getattr(tok, k) for k in ("unk_token", "pad_token", "cls_token", "sep_token", "mask_token",
                                             "bos_token", "eos_token") if getattr(tok, k, None) is not None}
    out = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(json.dumps(tokenizer_json, ensure_ascii=False)),
                                  model_max_length=tok.model_max_length, padding_side=tok.padding_side,
                                  truncation_side=tok.truncation_side, **specials)
    out.model_input_names = list(tok.model_input_names)
    return out


def write_record(folder: Path, rom: Romanization, base: str, source: str | None,
                 settings: dict | None = None) -> None:
    """The romanisation's record in the folder; ``source``: the texts' file (None: texts given in Python);
    ``settings``: what was asked (``extend``, ``pieces``, ``seed``)."""
    from xlsent.utils.io import write_text_atomic

    record = {"base_model": base, "texts": "texts given in Python" if source is None else source,
              "romanizer": f"{ROMANIZER} {_version()}", **(settings or {}),
              **{k: v for k, v in rom.to_dict().items() if k != "output"}}
    write_text_atomic(folder / ROMANIZED_FILE, json.dumps(record, ensure_ascii=False, indent=1) + "\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("anyascii")
    except PackageNotFoundError:
        return "?"
