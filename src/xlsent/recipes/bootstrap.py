"""``xlsent train bootstrap``: from a few translated pairs and plain text to a model — adapt, mine, clean, retrain.

The loop LASER3 (Heffernan et al. 2022, "Bitext mining using distilled sentence representations for low-resource
languages") and NLLB (NLLB Team 2022, §5) grew their low-resource data with: a small seed of translations, a model
trained on it, margin mining over monolingual text in both languages (Artetxe & Schwenk 2019), filtering, and the
mined pairs added to the training data. Here every step is xlsent's own:

1. **Round 0.** ``holdout`` of the seed pairs (20%, at least ``holdout_min`` = 20, never more than half) are set aside
   once (``holdout.jsonl``); ``xlsent train adapt`` trains on the rest.
2. **Each round r.** The round's model encodes both plain texts and mines them (``xlsent mine``: margin scoring;
   its automatic cut, anchored on the held-out seed pairs scored in the same pool (``known_pairs``); its noise
   filters — language identification with the n-gram identifier for languages CLD2 does not know, copies,
   near-duplicates, length ratio, numbers); a mined pair holding a held-out seed sentence is dropped (the stop
   rule's pairs stay held out). The kept pairs (``round-r/pairs.tsv``, with their margin scores) and the seed's
   training pairs train round r + 1's model. With ``documents``, the plain texts are translated
   documents and each document pair is sentence-aligned (``xlsent align``, Vecalign) instead of mined.
3. **The stop rule.** Each round's model is scored on the held-out seed pairs in a *hard pool*: every line of the
   other side's plain text is a candidate too (:mod:`xlsent.evaluation.pool`), so the retrieval is as hard as the
   mining — a pool of 100 held-out pairs alone saturates P@1. Mean P@1 of both directions, ties broken by the mean
   gap between the gold's cosine and the best wrong candidate's (at equal P@1 a round must widen it by
   :data:`GAP_MIN`). The loop stops at the first round that does not beat the best so far, or after ``rounds``
   rounds; the best round's model is the output (``DIR/model``).

Decisions (where the papers leave a choice; the figures: ``docs/experiments/bootstrap.md``, chosen on development
data built from ``bible-en-ny:dev-train`` and ``udhr-all:dev``, scored on ``bible-en-ny:dev``):

* **Each round continues from the last round's model** (``start: last``), on the seed plus the latest round's
  pairs, its distillation targets still the base model's. LASER3 and NLLB retrain on the grown data
  (``start: base``, the switch); on the development data continuing gave the better models.
* **The cut anchored on the held-out pairs**: the held-out seed pairs, scored in the same pool, anchor ``mine``'s
  automatic cut (:func:`xlsent.mining.threshold.anchored_threshold`), closer to the best cut on the development
  mining sets than the unanchored one on average; ``mining["anchor"] = False`` (``--no-anchor``) is the switch. Only the
  held-out pairs the round's model retrieves anchor it, and 20 of them move the cut half the way from the
  unanchored one (60: three quarters): a first test run, anchored on all 20 with a fixed ¾, fell too low where a
  few held-out pairs scored low, and so did 12% of draws of held-out translations on dev
  (``benchmarks/mining/anchored_cut.py``; the notebook).
* **Thresholded pairs, not weighted ones**: the automatic cut keeps or drops a pair; adapt's in-batch ranking
  (sentence-transformers' ``MultipleNegativesRankingLoss``) has no per-pair weight, and a weighted loss would be a
  new loss to validate, not a setting.
* **Only the latest round's pairs**, not the union of every round's: a better model mines better pairs, and the
  union would keep the first round's mistakes.
* **No mined hard negatives** (adapt's default, in-batch only). ``--set negatives.hard=1`` (adapt mines them with
  the base model from the training pairs) drops every pair without enough candidates — on the development data
  most of the mined pairs — and the models it trained were worse.
* **Rounds**: at most 3 by default (``--rounds``); the stop rule usually ends the loop earlier.

Resumable per round after a kill (``bootstrap.json`` records each finished round; adapt resumes from its
checkpoints, mining from its work folder); a second run into a folder in use is refused in one line. A finished run
removes each round's own model folder (``DIR/model`` is the best one's copy) unless ``keep_rounds``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from xlsent.mining.mine import write_pairs_tsv
from xlsent.recipes._common import say
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import atomic_path, write_json_atomic

RECORD = "bootstrap.json"
HOLDOUT_FILE = "holdout.jsonl"
SEED_TRAIN_FILE = "seed-train.jsonl"
MIN_SEED = 20  # fewer pairs cannot both train and hold out a pool to stop on
STARTS = ("base", "last")
GAP_MIN = 0.005  # cosine: at equal held-out P@1, a round must widen the mean gap by this much to count as better


@dataclass
class BootstrapSettings:
    """Everything that decides what a bootstrap run does (saved in ``bootstrap.json``; a rerun with other settings
    into the same folder is refused)."""

    model: str = "e5-small"  # the base model (models.student of every round)
    rounds: int = 3  # mining rounds after round 0, at most
    start: str = "last"  # last: each round continues from the last round's model | base: from the base model
    holdout: float = 0.2  # share of the seed pairs held out for the stop rule
    holdout_min: int = 20
    documents: bool = False  # the plain texts are translated documents: aligned, not mined
    src_lang: str = ""
    tgt_lang: str = ""
    adapt: list[str] = field(default_factory=list)  # adapt's --set overrides
    adapt_config: str = ""  # adapt's config file and preset (the round's training step applies them)
    adapt_preset: str = ""
    mining: dict = field(default_factory=dict)  # xlsent.mine's options (threshold, filters, k, margin …)
    seed: int = 0


@dataclass
class Harvest:
    """What one round found in the plain texts: the kept pairs ``(score, src, tgt)``, the counts of each step
    (``counts``: lines, candidates, after the cut, after each filter), notes, and the pools (each an iterable of
    arrays of L2-normalised rows of the round's model) for the stop rule."""

    pairs: list[tuple[float, str, str]]
    counts: dict
    src_pool: Iterable[np.ndarray]
    tgt_pool: Iterable[np.ndarray]
    notes: list[str] = field(default_factory=list)
    cleanup: Callable[[], None] = lambda: None


@dataclass
class Steps:
    """The steps a round calls on the layers above the recipes (given by :func:`xlsent.bootstrap`): ``harvest(model
    folder, round folder, held-out pairs) → Harvest`` (mining — its automatic cut anchored on the held-out pairs —
    or, with documents, alignment, with the run's options) and ``encode(model
    folder, texts, side) → L2-normalised rows`` (the same encoder the harvest used)."""

    harvest: Callable[[str, Path, list[tuple[str, str]]], Harvest]
    encode: Callable[[str, list[str], str], np.ndarray]
    train: Callable[[Path, Path, list[str]], Path]  # (pairs file, run folder, adapt overrides) → model folder
    lines: dict  # {"src": n, "tgt": n}: plain lines (before de-duplication), for the price
    sample: list[str] = field(default_factory=list)  # the source text's first lines: the encoding rate is timed on them


@dataclass
class BootstrapResult:
    """A bootstrap run: the output model (the best round's), every round's figures, the folder."""

    output: Path
    model_path: Path
    best_round: int
    rounds: list[dict]
    estimate: dict
    held_out: int
    stopped: str = ""
    plot: Path | None = None
    model_card: Path | None = None

    def to_dict(self) -> dict:
        return {"output": str(self.output), "model_path": str(self.model_path), "best_round": self.best_round,
                "rounds": self.rounds, "estimate": self.estimate, "held_out": self.held_out,
                "stopped": self.stopped, "plot": str(self.plot) if self.plot else None,
                "model_card": str(self.model_card) if self.model_card else None}


def split_seed(n: int, settings: BootstrapSettings) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, held-out rows) of ``n`` seed pairs: ``holdout`` of them, at least ``holdout_min``, at most
    half; a seeded permutation."""
    size = min(max(math.ceil(n * settings.holdout), settings.holdout_min), n // 2)
    order = np.random.default_rng(settings.seed).permutation(n)
    return np.sort(order[size:]), np.sort(order[:size])


def training_steps(n: int, adapt_cfg) -> int:
    """adapt's steps for ``n`` pairs: an epoch a step per batch, at least ``optim.min_steps``."""
    o = adapt_cfg.optim
    steps = math.ceil(n / int(o.batch_size)) * max(1, int(o.epochs))
    if int(o.max_steps):
        return int(o.max_steps)
    return max(steps, int(o.get("min_steps", 0) or 0))


def _write_pairs(path: Path, rows: list[tuple[str, str]], langs: tuple[str, str]) -> None:
    """Pairs as JSONL (``src``, ``tgt`` and the languages when known), written atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            for s, t in rows:
                row = {"src": s, "tgt": t}
                if all(langs):
                    row.update(src_lang=langs[0], tgt_lang=langs[1])
                f.write(json.dumps(row, ensure_ascii=False) + "\n")


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def run_bootstrap(settings: BootstrapSettings, seed_pairs: list[tuple[str, str]], langs: tuple[str, str],
                  output: Path, steps: Steps, adapt_cfg, identity: dict, on_note=None,
                  keep_rounds: bool = False) -> BootstrapResult:
    """The loop (module docstring). ``seed_pairs``: the cleaned seed, (src, tgt), the source in the language of the
    source text; ``langs``: their codes ("" unknown); ``adapt_cfg``: adapt's merged config (for the price);
    ``identity``: what the inputs are (a rerun with other inputs into the folder is refused)."""
    from xlsent.data.filters.cleaning import normalize_text
    from xlsent.evaluation.pool import pool_retrieval

    note = (lambda line: say(on_note, [line]))
    record_path = output / RECORD
    record = {"settings": asdict(settings), "inputs": identity, "rounds": []}
    if record_path.exists():
        old = json.loads(record_path.read_text(encoding="utf-8"))
        if old.get("settings") != record["settings"] or old.get("inputs") != identity:
            was, now = old.get("settings") or {}, record["settings"]
            differ = [f"{k}: {was.get(k)!r} → {now[k]!r}" for k in now if was.get(k) != now[k]]
            differ += [f"the {k} input" for k in identity if (old.get("inputs") or {}).get(k) != identity[k]]
            raise XlsentError(f"{output}: holds a bootstrap of other inputs or settings ({record_path}; "
                              f"{', '.join(differ[:3]) or 'its record'}) — give another -o, the same options "
                              "(--start base for a run begun before --start last was the default), or remove that "
                              "folder to start over")
        record = old
        if record["rounds"]:
            note(f"bootstrap: resuming after round {record['rounds'][-1]['round']} ({record_path})")
    n = len(seed_pairs)
    train_rows, held_rows = split_seed(n, settings)
    seed_train = [seed_pairs[i] for i in train_rows]
    held = [seed_pairs[i] for i in held_rows]
    _write_pairs(output / HOLDOUT_FILE, held, langs)
    _write_pairs(output / SEED_TRAIN_FILE, seed_train, langs)
    held_src = {normalize_text(s) for s, _ in held}
    held_tgt = {normalize_text(t) for _, t in held}
    held_src_texts, held_tgt_texts = [s for s, _ in held], [t for _, t in held]
    note(f"bootstrap: {n:,} seed pairs — {len(seed_train):,} train round 0, {len(held):,} held out for the stop rule "
         f"({output / HOLDOUT_FILE}); plain text: {steps.lines['src']:,} × {steps.lines['tgt']:,} lines; at most "
         f"{settings.rounds} round(s) after round 0")

    def train_round(r: int, mined: list[tuple[float, str, str]]) -> Path:
        folder = output / f"round-{r}"
        rows = seed_train + [(s, t) for _, s, t in mined]
        pairs_file = folder / "train.jsonl"
        _write_pairs(pairs_file, rows, langs)
        start = settings.model
        if r and settings.start == "last":
            start = str(output / f"round-{r - 1}" / "run" / "model")
        sets = [f"models.student={start}", f"models.teacher={settings.model}", "train.holdout=0",
                "train.sample_files=0", f"eval.pairs={output / HOLDOUT_FILE}", *settings.adapt]
        note(f"round {r}: adapt on {len(rows):,} pairs ({len(seed_train):,} seed" +
             (f" + {len(mined):,} mined in round {r - 1}" if r else "") + f"), from {'the base model' if start == settings.model else f'round {r - 1}'}")
        return steps.train(pairs_file, folder / "run", sets)

    rounds: list[dict] = record["rounds"]
    estimate = record.get("estimate") or {}
    best = None
    for done in rounds:  # the best finished round, by the stop rule's own comparison
        if best is None or beats(done["key"], best["key"]):
            best = done
    stopped = record.get("stopped", "")
    r = len(rounds)
    mined: list[tuple[float, str, str]] = []
    if rounds:  # resume: the pairs of the last finished round train the next one
        last = output / f"round-{rounds[-1]['round']}" / "pairs.tsv"
        mined = [(float(a), b, c) for a, b, c in (line.split("\t", 2) for line in
                                                   last.read_text(encoding="utf-8").splitlines() if line)]
    while not stopped:
        t0 = time.perf_counter()
        folder = output / f"round-{r}"
        folder.mkdir(parents=True, exist_ok=True)
        model = train_round(r, mined)
        t_train = time.perf_counter() - t0
        if r == 0 and not estimate:
            estimate = _price(settings, steps, adapt_cfg, len(seed_train), t_train, str(model))
            record["estimate"] = estimate
            write_json_atomic(record_path, record)
            note(estimate["line"])
        t1 = time.perf_counter()
        harvest = steps.harvest(str(model), folder, held)
        for line in harvest.notes:
            note(f"round {r}: {line}")
        kept = [p for p in harvest.pairs if normalize_text(p[1]) not in held_src and normalize_text(p[2]) not in held_tgt]
        counts = {**harvest.counts, "held_out_sentences": len(harvest.pairs) - len(kept), "kept": len(kept)}
        write_pairs_tsv(folder / "pairs.tsv", kept)  # mine's own format: score, src, tgt
        src_vec = steps.encode(str(model), held_src_texts, "src")
        tgt_vec = steps.encode(str(model), held_tgt_texts, "tgt")
        score = pool_retrieval(src_vec, tgt_vec, held_src_texts, held_tgt_texts, harvest.src_pool, harvest.tgt_pool)
        harvest.cleanup()
        scored = score.to_dict(seed=settings.seed)
        entry = {"round": r, "trained_on": {"seed": len(seed_train), "mined": len(mined)}, "counts": counts,
                 "held_out": scored, "key": list(score.key()), "model": str(model),
                 "seconds": {"train": round(t_train, 1), "harvest_and_score": round(time.perf_counter() - t1, 1)}}
        lo, hi = scored["ci95"]
        note(f"round {r}: held-out P@1 in the hard pool {scored['p_at_1']:.3f} [{lo:.3f}, {hi:.3f}] "
             f"({scored['queries']} pairs × 2 directions among {scored['pool']['tgt']:,} / {scored['pool']['src']:,} "
             f"plain lines; src→tgt {scored['src2tgt']:.3f}, tgt→src {scored['tgt2src']:.3f}); "
             f"{_funnel(counts)}; {_minutes(time.perf_counter() - t0)}")
        rounds.append(entry)
        if best is not None and not beats(entry["key"], best["key"]):
            same = entry["key"][0] == best["key"][0]
            stopped = (f"round {r} did not beat round {best['round']} on the held-out pairs (P@1 "
                       f"{entry['held_out']['p_at_1']:.3f} against {best['held_out']['p_at_1']:.3f}"
                       + (f"; gap {entry['key'][1]:.3f} against {best['key'][1]:.3f}, wider by less than {GAP_MIN}"
                          if same else "") + "): stopped")
        else:
            best = entry
            if r >= settings.rounds:
                stopped = f"--rounds {settings.rounds} reached"
            elif not kept:
                stopped = f"round {r} kept no pairs: nothing to train the next round on"
        record.update(rounds=rounds, stopped=stopped, best_round=best["round"])
        write_json_atomic(record_path, record)
        if not stopped and estimate:  # priced again from this round's own times: the mining, a step of training
            left = settings.rounds - r
            n_trained = len(seed_train) + len(mined)
            per_step = t_train / max(1, training_steps(n_trained, adapt_cfg))
            per_round = entry["seconds"]["harvest_and_score"] + per_step * training_steps(len(seed_train) + len(kept),
                                                                                          adapt_cfg)
            note(f"bootstrap: at most {left} more round(s), about {_minutes(left * per_round)} "
                 f"({_minutes(per_round)} each with {len(kept):,} mined pairs)")
        mined = kept
        r += 1
    note(f"bootstrap: {stopped}; the model is round {best['round']}'s")
    final = output / "model"
    chosen = Path(best["model"])
    if _model_id(final) != str(chosen):
        with atomic_path(final) as tmp:
            shutil.copytree(chosen, tmp)
            (tmp / ".xlsent-bootstrap-round").write_text(str(chosen), encoding="utf-8")
    if not keep_rounds:  # the loop is over: no round trains from these again, and DIR/model is the best one's copy
        gone = [Path(e["model"]) for e in rounds if Path(e["model"]).is_dir()]
        for folder in gone:
            shutil.rmtree(folder)
        if gone:
            note(f"bootstrap: each round's own model folder removed ({len(gone)}; --keep-rounds keeps them) — "
                 f"the model is {final}")
    return BootstrapResult(output, final, best["round"], rounds, estimate, len(held), stopped)


def beats(key: list[float], best: list[float]) -> bool:
    """A round's (P@1, gap) beats the best so far: a higher P@1, or the same P@1 and a gap wider by at least
    :data:`GAP_MIN` — a smaller widening is noise (retraining the same pairs moves the gap by about 1e-4)."""
    return key[0] > best[0] or (key[0] == best[0] and key[1] >= best[1] + GAP_MIN)


def _model_id(folder: Path) -> str:
    marker = folder / ".xlsent-bootstrap-round"
    return marker.read_text(encoding="utf-8") if marker.exists() else ""


def _funnel(counts: dict) -> str:
    """``5,000 × 5,000 lines → 3,120 candidates → 1,840 after the cut → 1,702 after the filters (language −90, …)``."""
    parts = [f"{counts.get('src_lines', 0):,} × {counts.get('tgt_lines', 0):,} lines",
             f"{counts.get('candidates', 0):,} candidates"]
    if "after_cut" in counts:
        parts.append(f"{counts['after_cut']:,} after the cut")
    filters = counts.get("filters") or []
    if filters:
        removed = ", ".join(f"{f['filter']} −{f['removed']}" for f in filters if f["removed"])
        parts.append(f"{counts.get('after_filters', 0):,} after the filters" + (f" ({removed})" if removed else ""))
    if counts.get("held_out_sentences"):
        parts.append(f"{counts['kept']:,} without held-out sentences")
    return " → ".join(parts)


def _price(settings: BootstrapSettings, steps: Steps, adapt_cfg, n_seed: int, t_train: float, model: str) -> dict:
    """The whole run's time on this machine, said before round 1: round 0's training time per step (measured), the
    encoding rate (timed on 256 plain lines now), and at most ``rounds`` rounds trained on the seed plus at most as
    many mined pairs as the smaller text has lines."""
    sample = steps.sample[:256] or [f"a sentence of the plain text, number {i}." for i in range(256)]
    steps.encode(model, sample[:8], "src")  # the model loads (and warms) outside the timing
    t = time.perf_counter()
    steps.encode(model, sample, "src")
    rate = len(sample) / max(time.perf_counter() - t, 1e-6)
    lines = steps.lines["src"] + steps.lines["tgt"]
    encode_s = lines / rate * 1.15  # the search and selection on top of encoding, about 15% at these sizes
    per_step = t_train / max(1, training_steps(n_seed, adapt_cfg))
    most = min(steps.lines["src"], steps.lines["tgt"])
    low = (settings.rounds + 1) * encode_s + settings.rounds * per_step * training_steps(n_seed, adapt_cfg)
    high = (settings.rounds + 1) * encode_s + settings.rounds * per_step * training_steps(n_seed + most, adapt_cfg)
    line = (f"bootstrap: round 0 trained in {_minutes(t_train)}; each round encodes {lines:,} lines (about "
            f"{_minutes(encode_s)} at {rate:.0f} lines/s here) and retrains; up to {settings.rounds} more round(s): "
            f"about {_minutes(low)}–{_minutes(high)} more on this machine (the mined pairs, 0 to {most:,} a round, "
            "decide where)")
    return {"encode_s": encode_s, "lines_per_s": rate, "train_s_per_step": per_step, "round0_train_s": t_train,
            "low_s": low, "high_s": high, "line": line, "pid": os.getpid()}
