"""Comparable corpora with known gold pairs, for thresholded mining evaluation (BUCC-style).

A :class:`ComparableCorpus` is two lists of (id, sentence) and the set of gold (src id, tgt id)
pairs hidden among them. Two sources:

* **BUCC files** (:func:`read_bucc`): ``PREFIX.SRC`` and ``PREFIX.TGT`` of ``id<TAB>sentence``
  lines and ``PREFIX.gold`` of ``src_id<TAB>tgt_id`` lines (the BUCC 2017/2018 release layout,
  e.g. ``de-en.sample.de``, ``de-en.sample.en``, ``de-en.sample.gold``).
* **Bundled Bible** (:func:`bible_comparable`): gold English–Chichewa verse pairs of the New
  Testament hidden among unrelated verses. The NT pairs are shuffled (seeded); ``dev`` takes
  the first ``n_gold``, ``test`` the next ``n_gold``. Distractors are the remaining pairs (Old
  Testament and the unused NT), each pair sent to one of four disjoint pools — dev-English,
  dev-Chichewa, test-English, test-Chichewa — so no distractor's translation is anywhere in
  the corpus, and dev and test share no sentence. Pairs are grouped by English text and by
  Chichewa text (the Bible repeats formulas such as "And the LORD spake unto Moses, saying"),
  a whole group goes to one pool, and groups that share a text with a gold pair are left out,
  so two copies of a formula can never form an unlisted true pair. The OT is the recipes'
  training data: its sentences appear here only as distractors, never with their translation.
* **Bundled UDHR** (:func:`udhr_comparable`): for one language, the paragraphs are split in two
  halves (dev: the preamble and articles 1–15, test: articles 16–30); in a half, every second
  paragraph keeps its English (gold) and the others lose it (distractors on the xx side), and
  English Bible verses are added as distractors on the English side (≈ 15 gold pairs a split:
  a small, noisy figure).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from xlsent.data.filters.cleaning import normalize_text
from xlsent.data.formats.readers import read_fields
from xlsent.utils.errors import InputFormatError, XlsentError

SPLITS = ("dev", "test")


@dataclass
class ComparableCorpus:
    name: str
    src_lang: str
    tgt_lang: str
    src: list[tuple[str, str]]  # (id, sentence)
    tgt: list[tuple[str, str]]
    gold: set[tuple[str, str]] = field(default_factory=set)

    def summary(self) -> dict:
        return {"name": self.name, "src_lang": self.src_lang, "tgt_lang": self.tgt_lang,
                "src_sentences": len(self.src), "tgt_sentences": len(self.tgt), "gold_pairs": len(self.gold)}


def read_bucc(prefix: str | Path, src_lang: str, tgt_lang: str) -> ComparableCorpus:
    """``PREFIX.{src_lang}``, ``PREFIX.{tgt_lang}`` (id<TAB>sentence) and ``PREFIX.gold`` (src_id<TAB>tgt_id)."""
    prefix = str(prefix)
    sides = []
    for lang in (src_lang, tgt_lang):
        path = Path(f"{prefix}.{lang}")
        cols, _ = read_fields(path, ("id", "sentence"), "error", "write id<TAB>sentence")
        ids, first = cols["id"], {}
        for n, i in enumerate(ids, 1):
            if first.setdefault(i, n) != n:
                raise InputFormatError(path, n, f"id '{i}' already on line {first[i]}", "give every sentence its own id")
        sides.append([(i, normalize_text(s)) for i, s in zip(ids, cols["sentence"])])
    gold_path = Path(f"{prefix}.gold")
    cols, _ = read_fields(gold_path, ("src_id", "tgt_id"), "error", "write src_id<TAB>tgt_id")
    known = [{i for i, _ in side} for side in sides]
    for n, (s, t) in enumerate(zip(cols["src_id"], cols["tgt_id"]), 1):
        if s not in known[0] or t not in known[1]:
            raise InputFormatError(gold_path, n, f"gold pair ({s}, {t}) names an id missing from the sentence files",
                                   f"check {prefix}.{src_lang} and {prefix}.{tgt_lang}")
    return ComparableCorpus(Path(prefix).name, src_lang, tgt_lang, sides[0], sides[1],
                            set(zip(cols["src_id"], cols["tgt_id"])))


def _groups(pairs: list[dict]) -> list[list[int]]:
    """Indices of pairs connected by a shared English or Chichewa text (union-find)."""
    parent = list(range(len(pairs)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for side in ("src", "tgt"):
        first: dict[str, int] = {}
        for i, p in enumerate(pairs):
            j = first.setdefault(p[side], i)
            parent[find(i)] = find(j)
    out: dict[int, list[int]] = {}
    for i in range(len(pairs)):
        out.setdefault(find(i), []).append(i)
    return list(out.values())


def bible_comparable(split: str = "test", n_gold: int = 1000, n_distractors: int = 7000,
                     seed: int = 0) -> ComparableCorpus:
    """English (src) – Chichewa (tgt): ``n_gold`` NT pairs among ``n_distractors`` unrelated verses a side."""
    from xlsent.data.sets import registry

    if split not in SPLITS:
        raise XlsentError(f"unknown split '{split}': use dev or test")
    nt = [dict(r) for r in registry.load("bible-en-ny:test", "pairs")]
    rows = nt + [dict(r) for r in registry.load("bible-en-ny:train", "pairs")]
    n_nt = len(nt)
    for r in rows:
        r["src"], r["tgt"] = normalize_text(r["src"]), normalize_text(r["tgt"])
    rng = random.Random(seed)
    groups = _groups(rows)
    rng.shuffle(groups)
    gold_sets: dict[str, list[int]] = {"dev": [], "test": []}
    pools: dict[str, list[int]] = {k: [] for k in ("dev-src", "dev-tgt", "test-src", "test-tgt")}
    # gold: single-pair NT groups (a repeated text cannot be gold: its copies would be ambiguous)
    for g in groups:
        if len(g) == 1 and g[0] < n_nt:
            for s in SPLITS:
                if len(gold_sets[s]) < n_gold:
                    gold_sets[s].append(g[0])
                    break
    used = {i for s in SPLITS for i in gold_sets[s]}
    order = list(pools)
    k = 0
    for g in groups:
        if any(i in used for i in g):
            continue
        pools[order[k % 4]].extend(g)  # a whole group to one pool: a repeated formula never meets its translation
        k += 1
    if any(len(gold_sets[s]) < n_gold for s in SPLITS) or any(len(p) < n_distractors for p in pools.values()):
        raise XlsentError(f"the Bible has too few pairs for {n_gold} gold and {n_distractors} distractors per side "
                          "and split — lower --n-gold or --n-distractors")
    src_ids = gold_sets[split] + pools[f"{split}-src"][:n_distractors]
    tgt_ids = gold_sets[split] + pools[f"{split}-tgt"][:n_distractors]
    rng.shuffle(src_ids)
    rng.shuffle(tgt_ids)
    return ComparableCorpus(f"bible-en-ny:{split}", "eng", "nya",
                            [(rows[i]["id"], rows[i]["src"]) for i in src_ids],
                            [(rows[i]["id"], rows[i]["tgt"]) for i in tgt_ids],
                            {(rows[i]["id"], rows[i]["id"]) for i in gold_sets[split]})


def udhr_comparable(lang: str, split: str = "test", n_distractors: int = 2000, seed: int = 0,
                    bundle: str = "udhr") -> ComparableCorpus:
    """English (src) – ``lang`` (tgt) UDHR paragraphs of one half, every second one without its English,
    with ``n_distractors`` English Bible verses on the English side (``bundle``: ``udhr`` or the development
    languages of ``udhr-dev``)."""
    from xlsent.data.sets import registry
    from xlsent.data.sets.bundled import load_bundled

    if split not in SPLITS:
        raise XlsentError(f"unknown split '{split}': use dev or test")
    units = [dict(r) for r in load_bundled(f"{bundle}:{lang}")]
    part = [u for u in units if (_article(u["id"]) <= 15) == (split == "dev")]
    gold = part[0::2]
    src = [(u["id"], normalize_text(u["src"])) for u in gold]
    seen = {t for _, t in src}
    bible = [dict(r) for r in registry.load("bible-en-ny:train", "pairs")]
    random.Random(seed).shuffle(bible)
    for r in bible:
        if len(src) >= len(gold) + n_distractors:
            break
        text = normalize_text(r["src"])
        if text not in seen:
            seen.add(text)
            src.append((r["id"], text))
    random.Random(seed + 1).shuffle(src)
    tgt = [(u["id"], normalize_text(u["tgt"])) for u in part]
    return ComparableCorpus(f"{bundle}:{lang}:{split}", "eng", lang, src, tgt, {(u["id"], u["id"]) for u in gold})


def bundled_comparable(name: str, n_gold: int = 1000, n_distractors: int = 7000, seed: int = 0
                       ) -> list[ComparableCorpus]:
    """The dev and test corpora of a bundled name (the registry's loader): ``bible``, ``udhr:CODE`` or
    ``udhr-dev:CODE`` (``n_gold`` applies to ``bible`` only)."""
    if name == "bible":
        return [bible_comparable(s, n_gold, n_distractors, seed) for s in SPLITS]
    bundle, _, code = name.partition(":")
    if bundle in ("udhr", "udhr-dev") and code:
        return [udhr_comparable(code, s, n_distractors, seed, bundle) for s in SPLITS]
    raise XlsentError(f"unknown comparable corpus '{name}': use bible, udhr:CODE or udhr-dev:CODE")


def _article(unit_id: str) -> int:
    """``preamble.3`` → 0, ``12.1`` / ``article12.1`` → 12."""
    head = unit_id.split(".")[0]
    digits = "".join(ch for ch in head if ch.isdigit())
    return int(digits) if digits else 0
