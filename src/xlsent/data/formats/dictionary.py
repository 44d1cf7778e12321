"""Bilingual word dictionaries and word-by-word glossing (Manafi 2025, §3.2.2, "Finetuned-SBERT").

Three sources, one format (:class:`BilingualDictionary`, low-resource word → English word):

* a **TSV** file ``word<TAB>translation`` (later lines for the same word are alternatives; the
  first wins);
* a **FreeDict** dictionary as Debian ships it (``dict-freedict-xxx-eng``:
  ``/usr/share/dictd/xxx-eng.index`` + ``.dict.dz``); each headword's first listed
  translation is used;
* **induced from parallel data** with the eflomal aligner (``pip install 'xlsent[gloss]'``):
  both directions are aligned, the intersection of the links is counted, and each word maps
  to the English word it is most often linked to (at least ``min_count`` links and a share
  ``min_share`` of that word's links), so rare noisy links are left out and counted.

Glossing lower-cases, splits a sentence into word and punctuation tokens (``\\w+`` Unicode
words) and replaces every word found in the dictionary; unknown words are kept as they are
(names and numbers often carry over), or dropped with ``unknown="drop"``.
"""

from __future__ import annotations

import gzip
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from xlsent.data.formats.readers import read_lines
from xlsent.utils.errors import InputFormatError, XlsentError

SYMMETRIZE = ("mean", "intersection")  # which induced links count (see BilingualDictionary.induce)
UNKNOWN = ("keep", "drop")  # what glossing does with a word the dictionary lacks

TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)
WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


@dataclass
class BilingualDictionary:
    entries: dict[str, str]
    source: str = ""
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.entries)

    def gloss(self, text: str, unknown: str = "keep") -> str:
        out = []
        for tok in TOKEN.findall(text):
            low = tok.lower()
            if low in self.entries:
                out.append(self.entries[low])
            elif unknown == "keep" or not WORD.fullmatch(tok):
                out.append(tok)
        return " ".join(out)

    def coverage(self, texts: list[str]) -> float:
        toks = [w for t in texts for w in words(t)]
        return sum(w in self.entries for w in toks) / max(len(toks), 1)

    def to_tsv(self) -> str:
        return "".join(f"{k}\t{v}\n" for k, v in sorted(self.entries.items()))

    @classmethod
    def from_tsv(cls, path: str | Path) -> "BilingualDictionary":
        path = Path(path)
        entries: dict[str, str] = {}
        for i, line in enumerate(read_lines(path), 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                raise InputFormatError(path, i, "expected word<TAB>translation", "write one entry per line: word<TAB>translation")
            entries.setdefault(parts[0].strip().lower(), parts[1].strip().lower())
        if not entries:
            raise InputFormatError(path, None, "no entries", "write one entry per line: word<TAB>translation")
        return cls(entries, str(path), [f"{path}: {len(entries)} entries"])

    @classmethod
    def from_freedict(cls, index_path: str | Path) -> "BilingualDictionary":
        """Read a dictd dictionary: ``X.index`` next to ``X.dict.dz`` (or ``X.dict``)."""
        index_path = Path(index_path)
        stem = str(index_path)[: -len(".index")] if str(index_path).endswith(".index") else str(index_path)
        data_path = next((Path(stem + s) for s in (".dict.dz", ".dict") if Path(stem + s).exists()), None)
        if not Path(stem + ".index").exists() or data_path is None:
            raise XlsentError(f"{index_path}: expected a dictd dictionary ({stem}.index and {stem}.dict.dz) — "
                              "e.g. /usr/share/dictd/swh-eng.index from the Debian package dict-freedict-swh-eng")
        raw = gzip.open(data_path, "rb").read() if data_path.suffix == ".dz" else data_path.read_bytes()
        entries: dict[str, str] = {}
        skipped = 0
        for i, line in enumerate(read_lines(Path(stem + ".index")), 1):
            parts = line.split("\t")
            if len(parts) < 3:
                raise InputFormatError(Path(stem + ".index"), i, "expected headword<TAB>offset<TAB>length", "check the dictd files")
            head = parts[0].strip().lower()
            if head.startswith("00database") or not head:
                continue
            off, length = _b64(parts[1]), _b64(parts[2])
            body = raw[off : off + length].decode("utf-8", errors="replace").splitlines()
            translation = _first_translation(body[1:])
            if translation and head not in entries:
                entries[head] = translation
            elif not translation:
                skipped += 1
        notes = [f"{index_path}: {len(entries)} entries; {skipped} headword(s) without a readable translation skipped"]
        return cls(entries, str(index_path), notes)

    @classmethod
    def induce(cls, lrl: list[str], english: list[str], min_count: int = 2, min_share: float = 0.1,
               symmetrize: str = "mean") -> "BilingualDictionary":
        """Align ``lrl``–``english`` sentence pairs with eflomal and keep each word's most frequent link.

        ``symmetrize`` says which links are counted: ``"mean"`` averages the two directions' link counts (a link
        both directions agree on counts 1, a link only one direction makes counts ½, so ``min_count`` still means
        about that many aligned occurrences); ``"intersection"`` counts only links both directions agree on.
        eflomal's sampler is seeded from ``/dev/urandom`` and cannot be seeded. On small or repetitive corpora one
        direction now and then leaves a word wholly unaligned, which drops the word from an intersection but not
        from the mean.
        """
        if symmetrize not in SYMMETRIZE:
            raise XlsentError(f"dictionary.symmetrize must be mean or intersection, not {symmetrize!r}")
        try:
            from eflomal import Aligner
        except ImportError:
            raise XlsentError("inducing a dictionary needs the eflomal aligner: pip install 'xlsent[gloss]' "
                              "(or give dictionary.tsv / dictionary.freedict)") from None
        import tempfile

        src = [" ".join(words(t)) or "_" for t in lrl]
        tgt = [" ".join(words(t)) or "_" for t in english]
        with tempfile.TemporaryDirectory() as tmp:
            fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
            Aligner().align([s + "\n" for s in src], [t + "\n" for t in tgt], links_filename_fwd=str(fwd),
                            links_filename_rev=str(rev), quiet=True)
            f_lines, r_lines = fwd.read_text().splitlines(), rev.read_text().splitlines()
        counts: dict[str, Counter] = defaultdict(Counter)
        weight = 0.5 if symmetrize == "mean" else 1.0
        for s, t, fl, rl in zip(src, tgt, f_lines, r_lines):
            sw, tw = s.split(), t.split()
            f_links = {tuple(map(int, x.split("-"))) for x in fl.split()}
            r_links = {tuple(map(int, x.split("-"))) for x in rl.split()}
            links = [*f_links, *r_links] if symmetrize == "mean" else f_links & r_links
            for i, j in links:
                if i < len(sw) and j < len(tw):
                    counts[sw[i]][tw[j]] += weight
        entries, rare, vague = {}, 0, 0
        for w, c in counts.items():
            best, n = c.most_common(1)[0]
            if n < min_count:
                rare += 1
            elif n / sum(c.values()) < min_share:
                vague += 1
            else:
                entries[w] = best
        notes = [f"eflomal: {len(entries)} entries induced from {len(lrl)} pairs ({symmetrize} of both directions' links)",
                 f"eflomal: {rare} word(s) left out: fewer than {min_count} links",
                 f"eflomal: {vague} word(s) left out: best link under {min_share:.0%} of the word's links"]
        return cls(entries, "eflomal", notes)


_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _b64(s: str) -> int:
    """dictd's base-64 numbers (most significant digit first)."""
    n = 0
    for ch in s.strip():
        n = n * 64 + _B64.index(ch)
    return n


def _first_translation(lines: list[str]) -> str:
    for line in lines:
        line = re.sub(r"^\s*\d+\.\s*", "", line).strip()
        line = re.sub(r"<[^>]*>|\([^)]*\)|/[^/]*/", "", line).strip()
        if not line or line.lower().startswith(("synonym", "see also", "note")):
            continue
        first = re.split(r"[,;]", line)[0].strip().lower()
        if first:
            return first
    return ""
