#!/usr/bin/env python3
"""Paper-002 ablations (Mao et al. 2021, Tables 5–7) on English–Chichewa, at an equal reduced CPU budget.

    python benchmarks/distillation/lightweight_ablations.py --output DIR [--epochs 2] [--only NAME ...]

Every variant is ``xlsent train lightweight --preset small`` (joint BPE 8k, hidden 256, 4 heads,
FFN 512, pieces cut at 64, batch 64, Adam 1e-3, gradient norm clipped at 1.0) cut to
``--epochs`` epochs over the 22,988 bundled Old-Testament pairs with a linear decay to 0 after the
10% warm-up (``optim.decay_epoch=0``: the preset's step decay at epoch 3 would never fire in a
2-epoch run). The variants differ only in the switch named:

* Table 6 — the generative task alone (``align_weight=0 sim_weight=0``): ``mlm``, ``smlm``,
  ``xtr``, ``mlm+xtr``, ``ugt``.
* Table 7 — ``ugt``, ``ugt + align`` (``sim_weight=0``), ``ugt + align + sim`` (the recipe's loss).
* Table 5 — ``ugt + align + sim`` with 1, 2 and 3 layers.

The 2-layer ``ugt + align + sim`` run and the 2-layer ``ugt`` run are shared between the tables.
Each model is scored on both of the paper's metrics:

* retrieval: the training run's own held-out pool (1,000 NT pairs, P@1 both directions, 95%
  bootstrap CIs) and the large pool (``xlsent eval retrieval --queries 2000``: 2,000 NT queries
  among every NT verse of the other side);
* classification: ``xlsent eval classify --dataset bible-genre`` (substitute task: a verse's book
  genre, trained on English, tested on Chichewa, split by book; 5 seeds).

Results: ``DIR/<variant>/{metrics,pool,classify}.json`` and ``DIR/ablations.json``; a summary
table is printed. A variant whose three files exist is not re-run (the script can be restarted).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # _ablation, in benchmarks/

from _ablation import slug, xlsent, xlsent_measured  # noqa: E402

FULL = "ugt + align + sim (2 layers)"
UGT = "ugt"

VARIANTS: list[tuple[str, str, list[str]]] = [
    # (name, tables, --set overrides)
    (FULL, "5 6 7", []),
    (UGT, "6 7", ["loss.align_weight=0", "loss.sim_weight=0"]),
    ("xtr", "6", ["loss.task=xtr", "loss.align_weight=0", "loss.sim_weight=0"]),
    ("mlm", "6", ["loss.task=mlm", "loss.align_weight=0", "loss.sim_weight=0"]),
    ("smlm", "6", ["loss.task=smlm", "loss.align_weight=0", "loss.sim_weight=0"]),
    ("mlm+xtr", "6", ["loss.task=mlm+xtr", "loss.align_weight=0", "loss.sim_weight=0"]),
    ("ugt + align", "7", ["loss.sim_weight=0"]),
    ("1 layer (ugt + align + sim)", "5", ["encoder.layers=1"]),
    ("3 layers (ugt + align + sim)", "5", ["encoder.layers=3"]),
]


def overrides(sets: list[str], epochs: int) -> list[str]:
    """A variant's ``--set`` keys on top of ``--preset small``: the shared budget, then its switch."""
    return ["models.reference=", f"optim.epochs={epochs}", "optim.decay_epoch=0", *sets]


def constant_floor(run: Path, n: int = 2000) -> float:
    """L_gen of the best *constant* prediction: each side's mean target over ``n`` training pairs
    (add-0.01 smoothed), scored on ``n`` other training pairs, with the run's own tokenizer, masking
    and target options — what a head that ignores the sentence reaches. A run's final L_gen near
    this floor means the sentence vector carries little of the targets."""
    import numpy as np
    import torch
    import yaml
    from transformers import PreTrainedTokenizerFast

    from xlsent.data.sets.pairs import load_pairs
    from xlsent.losses.lightweight_losses import generative_targets, mask_pair
    from xlsent.models.lightweight import maskable_ids

    cfg = yaml.safe_load((run / "config.yaml").read_text())
    lo, cut = cfg["loss"], int(cfg["models"]["max_seq_length"])
    tok = PreTrainedTokenizerFast.from_pretrained(str(run / "model"))
    ds = load_pairs(cfg["train"]["pairs"], sample=2 * n, seed=0).dataset
    enc = lambda texts: tok(texts, add_special_tokens=False, truncation=True, max_length=cut)["input_ids"]  # noqa: E731
    maskable, gen = maskable_ids(tok), torch.Generator().manual_seed(0)
    qa, qb = [], []
    for a, b in zip(enc(list(ds["tgt"])), enc(list(ds["src"]))):  # the recipe's order: other language, English
        a_in, b_in = mask_pair(lo["task"], a, b, maskable, tok.mask_token_id, gen, float(lo["mlm_rate"]))
        x, y = generative_targets(lo["task"], a, b, a_in, b_in, len(tok), lo["repeats"], lo["targets_from"],
                                  bool(lo["renormalise"]))
        qa.append(x.numpy())
        qb.append(y.numpy())
    total = 0.0
    for q in (np.stack(qa), np.stack(qb)):
        fit, score = q[:n], q[n:]
        p = fit.sum(0) + 0.01
        p /= p.sum()
        score = score[score.sum(1) > 0]
        with np.errstate(divide="ignore", invalid="ignore"):
            total += float(np.where(score > 0, score * np.log(score / p), 0.0).sum(1).mean())
    return total


def final_gen_loss(run: Path, last: int = 5) -> float | None:
    """Mean logged L_gen over the run's last ``last`` log rows (None when the task was off)."""
    rows = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines() if line.strip()]
    vals = [r["generative"] for r in rows[-last:] if "generative" in r]
    return sum(vals) / len(vals) if vals else None


def run_variant(out: Path, sets: list[str], epochs: int) -> dict:
    if not (out / "metrics.json").exists():
        cost = xlsent_measured("train", "lightweight", "--preset", "small", "-o", str(out),
                               *[x for s in overrides(sets, epochs) for x in ("--set", s)])
        (out / "train_cost.json").write_text(json.dumps(cost))
    model = str(out / "model")
    if not (out / "pool.json").exists():
        xlsent("eval", "retrieval", "-m", model, "--dataset", "bible-en-ny:test", "--queries", "2000", "-o", str(out / "pool.json"))
    if not (out / "classify.json").exists():
        xlsent("eval", "classify", "-m", model, "--dataset", "bible-genre", "-o", str(out / "classify.json"))
    metrics = json.loads((out / "metrics.json").read_text())["models"]["lightweight"]
    seconds = out / "train_cost.json"
    cost = json.loads(seconds.read_text()) if seconds.exists() else {}
    return {
        "pool1000": metrics["retrieval"],
        "pool_large": json.loads((out / "pool.json").read_text()),
        "classify": json.loads((out / "classify.json").read_text()),
        "train_seconds": cost.get("seconds"),
        "train_max_rss_mb": cost.get("max_rss_mb"),
        "gen_loss_end": final_gen_loss(out),
        "gen_loss_constant": constant_floor(out),
    }


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def p1(direction: dict) -> str:
    lo, hi = direction["ci95"]["p@1"]
    return f"{direction['p@1']:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--output", required=True, type=Path)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--only", nargs="*", default=None, help="variant names to run (default: all)")
    args = ap.parse_args()
    if args.epochs < 1:
        ap.error("--epochs must be ≥ 1")
    args.output.mkdir(parents=True, exist_ok=True)
    summary_file = args.output / "ablations.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    for name, tables, sets in VARIANTS:
        if args.only and name not in args.only:
            continue
        summary[name] = {"tables": tables, "sets": sets, "epochs": args.epochs,
                         **run_variant(args.output / slug(name), sets, args.epochs)}
        summary_file.write_text(json.dumps(summary, indent=1))
    print(f"\nablations at {args.epochs} epochs of the small preset (P@1 [95% CI]; genre: 5 seeds, substitute task)\n")
    print("| variant | tables | NT ny→en, 1,000 pool | NT en→ny, 1,000 pool | ny→en, 2,000 among all NT | "
          "en→ny, 2,000 among all NT | genre transfer acc / macro-F1 | in-language acc | L_gen end / constant floor "
          "| training, peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, r in summary.items():
        small, large, cls = r["pool1000"], r["pool_large"], r["classify"]
        inl = cls.get("in_language") or {}
        minutes = f"{r['train_seconds'] / 60:.1f} min" if r.get("train_seconds") else "?"
        if r.get("train_max_rss_mb"):
            minutes += f", {r['train_max_rss_mb'] / 1024:.2f} GB"
        print(f"| {name} | {r['tables']} | {p1(small['tgt2src'])} | {p1(small['src2tgt'])} | {p1(large['tgt2src'])} | "
              f"{p1(large['src2tgt'])} | {cls['transfer']['accuracy']:.3f} / {cls['transfer']['macro_f1']:.3f} | "
              f"{inl.get('accuracy', float('nan')):.3f} | {_num(r['gen_loss_end'])} / {_num(r['gen_loss_constant'])} | {minutes} |")

if __name__ == "__main__":
    main()
