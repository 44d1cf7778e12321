"""The learning curve: how many pairs does a user need? ``adapt`` trained on nested shares of her pairs, each
scored on the same held-out pairs, and a power law fitted to forecast twice the pairs (what
:func:`xlsent.learning_curve` and ``xlsent train curve`` run once their arguments are checked).

The fit, its uncertainty and where it misleads: :mod:`xlsent.evaluation.curve`. Each point's own 90% interval is
a bootstrap over the held-out queries (1,000 resamples, one seeded generator for all the shares in order).
Training a share and drawing the plot are steps above this layer, handed in as functions (as
:mod:`xlsent.recipes.bootstrap` is handed its steps).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from xlsent.utils.errors import XlsentError


@dataclass
class CurveResult:
    """What :func:`xlsent.learning_curve` found: one point a share (``pairs``, ``p_at_1`` with its 90% interval, each
    direction), the base model's P@1, the forecast for twice the pairs, its one-line summary, the cautions that
    apply, and the folder holding ``curve.json`` and ``curve.png``."""

    points: list[dict]
    base: float | None
    forecast: dict
    line: str
    cautions: list[str]
    output: Path

    @property
    def json_file(self) -> Path:
        return self.output / "curve.json"

    @property
    def plot(self) -> Path:
        return self.output / "curve.png"

    def to_dict(self) -> dict:
        return {"points": self.points, "base": self.base, "forecast": self.forecast, "line": self.line,
                "cautions": self.cautions, "output": str(self.output)}


def run_curve(cfg, pairs: str | Path, output: str | Path, *, model: str, shares: int, budget_minutes: float,
              held_out: str | Path | None, keep_models: bool,
              train_share: Callable[[Path, Path, list[str]], str | Path],
              plot: Callable[..., bytes], on_note: Callable[[str], None] | None = None) -> CurveResult:
    """The curve of ``adapt``'s config ``cfg`` on ``pairs`` (arguments checked by the caller), in ``output``.

    ``train_share(pairs_file, run_folder, extra_settings)`` trains adapt on one share and returns its model folder;
    ``plot(points, fit, base, title)`` draws ``curve.png``'s bytes."""
    import time

    import numpy as np

    from xlsent.data.sets.pairs import load_train_pairs, write_pairs_jsonl
    from xlsent.evaluation.curve import curve_cautions, fit_curve
    from xlsent.models.handle import load_model
    from xlsent.recipes.adapt import holdout_hits, holdout_size, split_holdout_by_language
    from xlsent.utils.io import atomic_path, write_json_atomic

    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    say = on_note or (lambda line: None)
    t, seed = cfg.train, int(cfg.optim.seed)
    elsewhere = load_train_pairs({**t, "pairs": str(held_out), "sample": int(cfg.eval.sample),
                                  "sample_files": int(cfg.eval.sample)}, seed) if held_out else None
    data = load_train_pairs(t, seed)
    n = len(data.english)
    held_n = 0 if elsewhere else holdout_size(n, float(t.holdout) or 0.1, int(t.holdout_min))
    if n - held_n < 16:
        raise XlsentError(f"{pairs}: {n} pairs leave {n - held_n} to train on beside {held_n} held out — a curve "
                          "needs at least 16 to train on (two shares of 8)")
    langs = data.languages or [""] * n
    train_rows, held_rows = split_holdout_by_language(langs, held_n, seed)
    scored_on = elsewhere or data
    if elsewhere:
        held_rows = np.arange(len(elsewhere.english))
    held_langs = scored_on.languages or [""] * len(scored_on.english)
    write_pairs_jsonl(output / "holdout.jsonl", scored_on.dataset, held_rows)
    order = np.random.default_rng(seed).permutation(train_rows)
    sizes = sorted({max(1, len(order) >> k) for k in range(shares)})
    sizes = [s for s in sizes if s >= 8]  # a share of fewer than 8 pairs is no batch
    anchors = [scored_on.other[i] for i in held_rows]
    positives = [scored_on.english[i] for i in held_rows]
    groups = [held_langs[i] for i in held_rows] if len(set(held_langs)) > 1 else None
    say(f"curve: {len(order):,} pairs to train on in {len(sizes)} nested shares ({', '.join(f'{s:,}' for s in sizes)}),"
        f" {len(held_rows):,} " + (f"pairs of {held_out}" if held_out else "held out") + " to score them all; "
        f"budget {budget_minutes:g} min")
    cache_path = output / "curve.json"
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    kept = {"pairs_file": str(pairs), "held_out_pairs": str(held_out) if held_out else None}
    scored: dict[str, list] = cache.get("hits", {}) if all(cache.get(k) == v for k, v in kept.items()) else {}

    def score(name: str, path: str) -> list:
        if name not in scored:
            fwd, bwd = holdout_hits(load_model(path, max_seq_length=int(cfg.models.max_seq_length)).model,
                                    anchors, positives, groups)
            scored[name] = np.concatenate([fwd, bwd]).tolist()
        return scored[name]

    base_hits = score("base", str(model))
    t0, last = time.perf_counter(), None
    done: list[int] = []
    for size in sizes:
        key = str(size)
        run = output / f"share-{size:06d}"
        if key not in scored:
            if last is not None:
                projected = last[1] * size / last[0]
                spent = time.perf_counter() - t0
                if spent + projected > 60 * budget_minutes:
                    say(f"curve: share {size:,} skipped — about {projected / 60:.0f} min more, past the "
                        f"{budget_minutes:g}-minute budget (--budget-minutes)")
                    break
            sub = output / f"share-{size:06d}.jsonl"
            write_pairs_jsonl(sub, data.dataset, np.sort(order[:size]))
            s0 = time.perf_counter()
            model_path = train_share(sub, run, ["train.holdout=0", "train.sample_files=0",
                                                f"eval.pairs={output / 'holdout.jsonl'}"])
            score(key, str(model_path))
            last = (size, time.perf_counter() - s0)
            sub.unlink(missing_ok=True)
            if not keep_models and size != sizes[-1]:
                import shutil

                shutil.rmtree(run / "model", ignore_errors=True)
            write_json_atomic(cache_path, {**kept, "hits": scored})
        done.append(size)
    if len(done) < 2:
        raise XlsentError(f"curve: only {len(done)} share fits in {budget_minutes:g} min — raise --budget-minutes")
    fit = fit_curve(done, [np.asarray(scored[str(s)]) for s in done], seed=seed)
    rng = np.random.default_rng(seed)
    points: list[dict[str, Any]] = []
    for s in done:
        h = np.asarray(scored[str(s)])
        boots = [h[rng.integers(0, len(h), len(h))].mean() for _ in range(1000)]
        points.append({"pairs": s, "p_at_1": float(h.mean()), "ci90": [float(np.percentile(boots, 5)),
                                                                       float(np.percentile(boots, 95))],
                       "xx2en": float(h[:len(h) // 2].mean()), "en2xx": float(h[len(h) // 2:].mean())})
    top = done[-1]
    lo, hi = fit.interval([2 * top])
    forecast = {"pairs": 2 * top, "p_at_1": float(np.clip(fit.p_at_1(2 * top), 0, 1)), "ci90": [float(lo[0]),
                                                                                               float(hi[0])],
                "law": {"a": fit.a, "b": fit.b, "form": "1 - P@1 = a * pairs^-b"}}
    p_top = points[-1]["p_at_1"]
    line = (f"With twice these pairs ({2 * top:,}) held-out P@1 would likely be {forecast['p_at_1']:.3f} (90% "
            f"interval {lo[0]:.3f}–{hi[0]:.3f}); {top:,} pairs gave {p_top:.3f}, {done[-2]:,} gave "
            f"{points[-2]['p_at_1']:.3f}, the base model {float(np.mean(base_hits)):.3f}.")
    cautions = curve_cautions(done, [float(p["p_at_1"]) for p in points],  # type: ignore[arg-type]
                              len(held_rows), fit, same_source=not held_out)
    png = output / "curve.png"
    with atomic_path(png) as tmp:
        Path(tmp).write_bytes(plot(points, fit, float(np.mean(base_hits)), f"{Path(str(pairs)).name}: "
                                   + (f"P@1 on {held_out}" if held_out else "held-out P@1") + " against pairs"))
    write_json_atomic(cache_path, {**kept, "hits": scored, "held_out": len(held_rows),
                                   "points": points, "base": float(np.mean(base_hits)), "forecast": forecast,
                                   "line": line, "cautions": cautions,
                                   "uncertainty": "bootstrap over the held-out pairs (not over training seeds)"})
    return CurveResult(points, float(np.mean(base_hits)), forecast, line, cautions, output)
