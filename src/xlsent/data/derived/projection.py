"""Silver tags for a language without annotated data: tag the English side, project through word alignments.

Word alignment: eflomal (``pip install 'xlsent[gloss]'``) aligns the lower-cased tokens in both
directions; :func:`grow_diag_final_and` symmetrises the two (Koehn et al. 2005; the standard of
Moses and fast_align's ``atools``) for entity projection, and their intersection — one-to-one links
only — serves POS.

Projection rules (every drop is counted in :class:`ProjectionStats`):

* **Entities** go through their aligned tokens: an English entity span (B- + I- run) covers the
  target tokens linked to any of its tokens (grow-diag-final-and), closed to the contiguous span
  min..max (as in Chen et al. 2023 for structural words), with punctuation trimmed from its edges.
  The entity is dropped when none of its tokens is linked (*unaligned*), when the projected span is
  longer than ``max(2·n, n + 2)`` tokens for an n-token entity (*too long*: a stray link), or when it
  overlaps a span projected earlier in the sentence (*overlap*). A target sentence that lost any
  entity is left out of the silver NER data (*sentence dropped*): keeping it would teach ``O`` for a
  name. Target tokens outside projected spans are ``O``.
* **POS** goes through one-to-one links only (the intersection of the two directions): a target
  token linked to exactly one English token, which is linked to it alone, takes that token's
  universal POS tag. A target token that is punctuation takes ``PUNCT`` whatever its links. Every
  other target token is ``_`` (unlabelled: ignored in training and in accuracy). A sentence with no
  labelled token is left out.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from xlsent.utils.errors import XlsentError

Links = set[tuple[int, int]]
_PUNCT = re.compile(r"^[^\w]+$")
_WORD = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def tokenize_words(text: str) -> list[str]:
    """Words and single punctuation marks (an apostrophe inside a word stays: Chichewa ``ng'ombe``)."""
    return _WORD.findall(text)


def words_with_offsets(text: str) -> tuple[list[str], list[int]]:
    """:func:`tokenize_words` with each word's character offset in ``text``."""
    found = list(_WORD.finditer(text))
    return [m.group() for m in found], [m.start() for m in found]


def is_punct(token: str) -> bool:
    return bool(_PUNCT.match(token))


def grow_diag_final_and(fwd: Links, rev: Links, n_src: int, n_tgt: int) -> Links:
    """Symmetrise two directional alignments of (source, target) index pairs (Koehn et al. 2005)."""
    union = fwd | rev
    links = set(fwd & rev)
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]

    def src_aligned(i: int) -> bool:
        return any(a == i for a, _ in links)

    def tgt_aligned(j: int) -> bool:
        return any(b == j for _, b in links)

    added = True
    while added:
        added = False
        for i, j in sorted(links):
            for di, dj in neighbours:
                ni, nj = i + di, j + dj
                if 0 <= ni < n_src and 0 <= nj < n_tgt and (ni, nj) in union and (ni, nj) not in links:
                    if not src_aligned(ni) or not tgt_aligned(nj):
                        links.add((ni, nj))
                        added = True
    for direction in (fwd, rev):  # final-and: a link of either direction whose both ends are still unaligned
        for i, j in sorted(direction):
            if not src_aligned(i) and not tgt_aligned(j):
                links.add((i, j))
    return links


def align(src: list[list[str]], tgt: list[list[str]]) -> list[tuple[Links, Links]]:
    """eflomal forward and reverse links for tokenised sentence pairs (lower-cased for aligning)."""
    try:
        from eflomal import Aligner
    except ImportError:
        raise XlsentError("word alignment needs the eflomal aligner: pip install 'xlsent[gloss]'") from None
    s = [" ".join(t.lower() for t in x) or "_" for x in src]
    t = [" ".join(w.lower() for w in x) or "_" for x in tgt]
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        Aligner().align([x + "\n" for x in s], [x + "\n" for x in t], links_filename_fwd=str(fwd),
                        links_filename_rev=str(rev), quiet=True)
        f_lines, r_lines = fwd.read_text().splitlines(), rev.read_text().splitlines()
    out = []
    for fl, rl in zip(f_lines, r_lines):
        out.append(({tuple(map(int, x.split("-"))) for x in fl.split()},
                    {tuple(map(int, x.split("-"))) for x in rl.split()}))
    return out


@dataclass
class ProjectionStats:
    """What the projection kept and dropped, and why."""

    entities: int = 0
    projected: int = 0
    dropped: Counter = field(default_factory=Counter)  # unaligned / too long / overlap
    sentences_dropped_ner: int = 0
    pos_tokens: int = 0
    pos_labelled: int = 0
    pos_punct: int = 0
    sentences_dropped_pos: int = 0

    def notes(self) -> list[str]:
        d = self.dropped
        return [
            f"entities: {self.projected}/{self.entities} projected; dropped {d['unaligned']} unaligned, "
            f"{d['too long']} with a projected span too long, {d['overlap']} overlapping another",
            f"NER: {self.sentences_dropped_ner} target sentence(s) left out because an entity was dropped",
            f"POS: {self.pos_labelled}/{self.pos_tokens} target tokens labelled ({self.pos_punct} of them punctuation "
            f"→ PUNCT), the rest '_' (no one-to-one link); {self.sentences_dropped_pos} sentence(s) with none left out",
        ]


def entity_spans(tags: list[str]) -> list[tuple[int, int, str]]:
    """(start, end, label) of each B-/I- run of IOB2 tags; end exclusive."""
    spans, start, label = [], None, None
    for k, t in enumerate([*tags, "O"]):
        if t.startswith("I-") and label == t[2:]:
            continue
        if start is not None:
            spans.append((start, k, label))
            start, label = None, None
        if t.startswith(("B-", "I-")):
            start, label = k, t[2:]
    return spans


def project_entities(src_tags: list[str], tgt_tokens: list[str], links: Links,
                     stats: ProjectionStats) -> list[str] | None:
    """Target IOB2 tags, or None when an entity could not be projected (see the module docstring)."""
    out = ["O"] * len(tgt_tokens)
    taken: list[tuple[int, int]] = []
    ok = True
    for a, b, label in entity_spans(src_tags):
        stats.entities += 1
        js = sorted({j for i, j in links if a <= i < b and j < len(tgt_tokens)})
        if not js:
            stats.dropped["unaligned"] += 1
            ok = False
            continue
        lo, hi = js[0], js[-1]
        while lo <= hi and is_punct(tgt_tokens[lo]):
            lo += 1
        while hi >= lo and is_punct(tgt_tokens[hi]):
            hi -= 1
        if hi < lo:
            stats.dropped["unaligned"] += 1
            ok = False
            continue
        n = b - a
        if hi - lo + 1 > max(2 * n, n + 2):
            stats.dropped["too long"] += 1
            ok = False
            continue
        if any(lo <= y and x <= hi for x, y in taken):
            stats.dropped["overlap"] += 1
            ok = False
            continue
        taken.append((lo, hi))
        out[lo] = "B-" + label
        for k in range(lo + 1, hi + 1):
            out[k] = "I-" + label
        stats.projected += 1
    if not ok:
        stats.sentences_dropped_ner += 1
        return None
    return out


def project_pos(src_pos: list[str], tgt_tokens: list[str], one_to_one: Links, stats: ProjectionStats) -> list[str] | None:
    """Target UPOS tags through one-to-one links (``_`` elsewhere), or None when no token is labelled."""
    src_count = Counter(i for i, _ in one_to_one)
    tgt_count = Counter(j for _, j in one_to_one)
    out = [UNLABELLED_POS] * len(tgt_tokens)
    for i, j in one_to_one:
        if src_count[i] == 1 and tgt_count[j] == 1 and i < len(src_pos) and j < len(tgt_tokens):
            out[j] = src_pos[i]
    for j, tok in enumerate(tgt_tokens):
        if is_punct(tok):
            if out[j] != "PUNCT":
                stats.pos_punct += 1
            out[j] = "PUNCT"
    labelled = sum(t != UNLABELLED_POS for t in out)
    stats.pos_tokens += len(tgt_tokens)
    stats.pos_labelled += labelled
    if not labelled:
        stats.sentences_dropped_pos += 1
        return None
    return out


UNLABELLED_POS = "_"
