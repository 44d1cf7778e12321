#!/usr/bin/env python3
"""How much of a language's text a trimmed vocabulary still segments as the full tokenizer did.

    python benchmarks/export/vocab_coverage.py [--model e5-small] [--dataset udhr-dev]
        [--budgets 92700,120000,150000,180000] [--texts bible-en-ny:train [FILE ...]]

For each budget (pieces kept in all) and each selection rule, the share of the full tokenizer's pieces on each
language's side of ``--dataset`` that the kept vocabulary contains — a piece outside it is one the trimmed
tokenizer must re-segment into shorter ones. No model runs: this is the cheap side of choosing a rule; the
retrieval P@1 of a rule needs ``xlsent export --keep-vocab`` and ``xlsent eval retrieval``.

Every rule keeps the special tokens, every single-character piece and every piece ``--texts`` uses
(``xlsent export``'s rule), then fills the budget:

* ``score``: the highest-scoring pieces of the Unigram model (what ``--keep-vocab`` does);
* ``script^p``: each writing system (the Unicode script of a piece's first letter) gets a share of the
  budget in proportion to its piece count to the power ``p``, filled by score within it — ``p < 1`` moves
  pieces from Latin (110k of e5's 250k) to the smaller scripts.

Run it on ``udhr-dev`` (24 languages no figure reports), not on ``udhr``, the test set.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import unicodedata
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))


def script_of(piece: str) -> str:
    for ch in piece.replace("▁", ""):
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            return name.split()[0] if name else "?"
    return "OTHER"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--dataset", default="udhr-dev")
    ap.add_argument("--budgets", default="92700,120000,150000,180000")
    ap.add_argument("--powers", default="1,0.75,0.5", help="script^p rules to compare with the score rule")
    ap.add_argument("--texts", nargs="*", default=["bible-en-ny:train"])
    args = ap.parse_args()

    from tokenizers import Tokenizer

    from xlsent.data.sets.bundled import split_by_language
    from xlsent.data.sets.pairs import load_pairs
    from xlsent.models.registry import quiet_libraries, resolve_model_path
    from xlsent.models.vocab.trim import read_texts

    quiet_libraries()
    path = resolve_model_path(args.model) / "tokenizer.json"
    tok = Tokenizer.from_file(str(path))
    vocab = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    scripts = [script_of(p) for p, _ in vocab]
    order = np.argsort(-np.array([s for _, s in vocab]), kind="stable")
    base = {i for i, (p, _) in enumerate(vocab) if len(p.replace("▁", "")) <= 1} | {0, 1, 2, 3}
    for spec in args.texts:
        for e in tok.encode_batch(read_texts(spec)):
            base.update(e.ids)
    by_script: dict[str, list[int]] = collections.defaultdict(list)
    for i in order:
        by_script[scripts[i]].append(int(i))
    print(f"{len(vocab):,} pieces; {len(base):,} kept by every rule (special, single characters, pieces of "
          f"{', '.join(args.texts)}); largest scripts: "
          + ", ".join(f"{s} {len(v):,}" for s, v in sorted(by_script.items(), key=lambda kv: -len(kv[1]))[:6]))

    def score_rule(budget: int) -> set[int]:
        keep = set(base)
        for i in order:
            if len(keep) >= budget:
                break
            keep.add(int(i))
        return keep

    def script_rule(budget: int, power: float) -> set[int]:
        weight = {s: len(v) ** power for s, v in by_script.items()}

        def pick(scale: float) -> set[int]:
            keep = set(base)
            for s, v in by_script.items():
                keep.update(v[: int(min(len(v), scale * weight[s]))])
            return keep

        lo, hi = 0.0, float(len(vocab))
        for _ in range(50):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if len(pick(mid)) > budget else (mid, hi)
        return pick(lo)

    ds = load_pairs(args.dataset, dedupe=False).dataset
    langs = {lang: [e.ids for e in tok.encode_batch(list(p["tgt"]))] for lang, p in split_by_language(ds).items()}
    print(f"\nshare of {args.dataset}'s pieces kept (%), per language of its non-English side\n")
    print("| pieces kept | rule | mean | " + " | ".join(langs) + " |")
    print("|---|---|---|" + "---|" * len(langs))
    for budget in (int(b) for b in args.budgets.split(",")):
        rules = {"score": score_rule(budget)}
        rules.update({f"script^{p}": script_rule(budget, float(p)) for p in args.powers.split(",") if p})
        for name, keep in rules.items():
            cov = [100 * np.mean([i in keep for ids in v for i in ids]) for v in langs.values()]
            print(f"| {len(keep):,} | {name} | {np.mean(cov):.1f} | " + " | ".join(f"{c:.0f}" for c in cov) + " |")


if __name__ == "__main__":
    main()
