"""``xlsent train adapt``: the best model for a user's own parallel pairs, without forgetting the others.

Not one paper's method but a combination (the measurements behind each choice:
``docs/experiments/adapt.md``, "The recipe, as its module described it"):

* **in-batch ranking, both directions** — sentence-transformers' ``MultipleNegativesRankingLoss``
  (van den Oord et al. 2018's InfoNCE; Henderson et al. 2017) with the backward term too;
* **hard negatives mined by the base model** — sentence-transformers' ``mine_hard_negatives``; off by default;
* **self-distillation to the frozen base model** — X-KD's targets (Reimers & Gurevych 2020) with the squared L2
  norm of Manafi (2025, Eq. 3.2), :class:`~xlsent.losses.RankingDistillLoss`;
* **Matryoshka widths** (``loss.matryoshka_dims``, off by default) — sentence-transformers' ``MatryoshkaLoss``
  (Kusupati et al. 2022) around the whole loss;
* **several languages** — temperature sampling of the batches' languages (Arivazhagan et al. 2019;
  :func:`xlsent.data.sets.mixing.temperature_rows`).

Where the method leaves a choice open, this recipe decides:

* the anchor is the non-English side, the positive its English translation; the distillation target of *both*
  sides is the frozen model's English vector (the English space, and every language aligned to it, stays put);
* the step is chosen on the user's own held-out pairs (``train.holdout``, at least ``train.holdout_min``, never
  more than half; drawn per language when there are several), scored ``eval.select_every`` times an epoch and at
  the end: mean P@1 of both directions, ties broken by the mean gap between the gold cosine and the best wrong
  one (not sentence-transformers' ``TranslationEvaluator``, P@1 alone, which saturates on 100 pairs); with
  ``train.holdout: 0`` the last step is the model;
* with several languages the held-out pairs are scored as one pool, where an English query's answer is also
  right when it translates the same English text in another language (:func:`holdout_scores`);
* at a Matryoshka width k the frozen model's cached targets are cut *and renormalised*
  (:class:`xlsent.losses.matryoshka.UnitTargets`; sentence-transformers' wrapper does not renormalise them);
  ``loss.matryoshka_kd: full`` distils at the full width only; the held-out selection scores the full width;
* duplicate texts never share a batch (sentence-transformers' ``NO_DUPLICATES`` sampler);
* ``negatives.relative_margin`` skips candidates scored within that share of the positive (likely translations);
* the defaults (λ = 1, scale 20, batch 32, lr 8e-5, 1 epoch, T = 1, dropout off, the token table frozen, sorted
  chunks of 8 texts on a CPU, bf16 where timed faster) were chosen on development data only — the figures are in
  the notebook section above and ``docs/results.md``, "adapt".
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Literal

import numpy as np

from xlsent.data.sets.bundled import is_bundled
from xlsent.data.sets.pairs import english_side, load_train_pairs, split_sources, write_pairs_jsonl
from xlsent.losses.matryoshka import matryoshka_widths
from xlsent.models.handle import load_model
from xlsent.recipes._common import load_student_for, say, teacher_targets
from xlsent.recipes.config import dump_config
from xlsent.recipes.config_schema import config_error
from xlsent.recipes.config_types import EvalConfig, RecipeConfig, TrainConfig
from xlsent.recipes.registry import RunResult
from xlsent.training.run_folder import StageFolder, config_hash, learning_optim
from xlsent.training.trainer import train_stage
from xlsent.training.settings import FractionFloat, NonNegFloat, NonNegInt, PosFloat, Section
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_text_atomic

HOLDOUT_FILE = "holdout.jsonl"


class AdaptTrain(TrainConfig):
    """``train:`` of this recipe: the shared fields and the held-out share that chooses the step."""

    holdout: FractionFloat = 0.0            # share of the pairs held out to choose the step
    holdout_min: NonNegInt = 100
    language_temperature: PosFloat = 1.0    # T: a language's share of an epoch ∝ (n_l/N)^(1/T); 1 = by size


class AdaptEval(EvalConfig):
    """``eval:`` of this recipe: the shared fields and how often the held-out part is scored."""

    select_every: PosFloat = 2.0            # held-out scoring per epoch


class AdaptLoss(Section):
    """``loss:`` — the in-batch ranking's scale and the self-distillation's weight."""

    scale: PosFloat = 20.0
    kd_weight: NonNegFloat = 1.0
    sorted_chunk: NonNegInt | Literal["auto"] = "auto"  # texts a forward pass, sorted by length (sorted_rows)


class AdaptNegatives(Section):
    """``negatives:`` — mined hard negatives a pair (0: in-batch only) and their margin below the positive."""

    hard: NonNegInt = 0
    relative_margin: NonNegFloat = 0.05


#: this recipe's own sections and fields, typed with their ranges (the schema reads them: xlsent.recipes.config_schema)
SECTIONS = {"train": AdaptTrain, "eval": AdaptEval, "loss": AdaptLoss, "negatives": AdaptNegatives}


def validate(cfg: RecipeConfig) -> None:
    """The checks that span several keys: ``eval.pairs=holdout`` needs ``train.holdout`` > 0."""
    if cfg.eval.pairs == "holdout" and not cfg.train.holdout:
        raise config_error("eval.pairs", "holdout", "train.holdout=0 holds nothing out to report on",
                           "give --set eval.pairs=FILE (or a bundled pool), or keep train.holdout > 0")

BEST_FILE = "best.pt"


def sorted_rows(spec, device: str) -> int:
    """``loss.sorted_chunk`` (its old name: ``loss.mini_batch_size``): texts a forward pass, a batch's texts sorted
    by length and each chunk padded to its own longest (:func:`xlsent.losses.sorted_forward.embed_sorted`).
    ``auto``: 8 on a CPU, where a step's cost follows its padded tokens (chosen on the demo's mixture over 4, 8, 12
    and one pass: docs/experiments/adapt.md); 0 elsewhere — on a GPU, one pass a column (sentence-transformers'
    own), where small chunks would leave it idle (not measured: no GPU here)."""
    if spec == "auto":
        return 8 if device.split(":")[0] == "cpu" else 0
    return int(spec)


def holdout_size(n: int, fraction: float, minimum: int) -> int:
    """How many of ``n`` pairs to hold out: ``fraction`` of them, at least ``minimum``, at most half."""
    if fraction <= 0:
        return 0
    return min(max(math.ceil(n * fraction), minimum), n // 2)


def split_holdout(n: int, size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, held-out rows), a seeded permutation of ``range(n)``."""
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[size:]), np.sort(order[:size])


def split_holdout_by_language(languages: list[str], size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train rows, held-out rows): one language — :func:`split_holdout`, as always; several — each language
    contributes its share of ``size`` (:func:`xlsent.data.sets.mixing.stratified_split`)."""
    from xlsent.data.sets.mixing import stratified_split

    if len(set(languages)) <= 1:
        return split_holdout(len(languages), size, seed)
    return stratified_split(languages, size, seed)


def holdout_scores(student, anchors: list[str], positives: list[str], groups: list[str] | None = None) -> dict:
    """P@1 both ways over the held-out pairs (tie-aware: a candidate with the gold's text is correct, as in
    every xlsent retrieval figure), and the mean gap between each query's gold cosine and its best candidate
    of another text (both ways): the tie-break when P@1 saturates on a small held-out set.

    With ``groups`` (each pair's language) of several values the pairs are still scored as one pool, and an
    English query's answer is also correct when it translates the same English text in another language (the
    UDHR's English paragraph is the same for every language: which translation of it comes first is no error);
    per language, a language of one or two held-out pairs would score a trivial 1."""
    return _retrieval_scores(_similarities(student, anchors, positives), anchors, positives,
                             groups is not None and len(set(groups)) > 1)


def holdout_hits(student, anchors: list[str], positives: list[str], groups: list[str] | None = None):
    """Each held-out query's P@1 (0 or 1), xx→en then en→xx — :func:`holdout_scores`' per-query figures."""
    return _hit_arrays(_similarities(student, anchors, positives), anchors, positives,
                       groups is not None and len(set(groups)) > 1)


def _similarities(student, anchors: list[str], positives: list[str]) -> np.ndarray:
    """Cosines of every held-out anchor (rows) with every positive (columns), encoded by the model being trained
    (in the precision every encoder runs in on its device: :func:`xlsent.utils.device.encoding_dtype`)."""
    from xlsent.utils.device import cpu_autocast, encoding_dtype

    device = str(student.device)
    with cpu_autocast(encoding_dtype(device, student), device):
        a = student.encode(anchors, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        p = student.encode(positives, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    return a @ p.T


def _hit_arrays(sim: np.ndarray, anchors: list[str], positives: list[str], several: bool = False):
    from xlsent.evaluation.retrieval import hits

    pos, anc = np.asarray(positives, dtype=object), np.asarray(anchors, dtype=object)
    same_p, same_a = pos[:, None] == pos[None, :], anc[:, None] == anc[None, :]  # same text = not a wrong answer
    fwd = np.asarray(hits(sim.argmax(1)[:, None], positives, positives), dtype=float).ravel()
    if several:  # English query j: any translation of its English text is a right answer
        bwd = (same_a | same_p)[sim.argmax(0), np.arange(len(anchors))].astype(float)
    else:
        bwd = np.asarray(hits(sim.argmax(0)[:, None], anchors, anchors), dtype=float).ravel()
    return fwd, bwd


def _retrieval_scores(sim: np.ndarray, anchors: list[str], positives: list[str], several: bool = False) -> dict:
    gold = np.diag(sim).copy()
    pos, anc = np.asarray(positives, dtype=object), np.asarray(anchors, dtype=object)
    same_p, same_a = pos[:, None] == pos[None, :], anc[:, None] == anc[None, :]  # same text = not a wrong answer
    f_hits, b_hits = _hit_arrays(sim, anchors, positives, several)
    fwd, bwd = float(f_hits.mean()), float(b_hits.mean())
    if several:
        same_a = same_a | same_p
    wrong_f = np.where(same_p, -np.inf, sim).max(1)  # xx query i: best English candidate of another text
    wrong_b = np.where(same_a, -np.inf, sim).max(0)  # English query j: best xx candidate of another text
    gap = float((np.mean(gold - np.where(np.isfinite(wrong_f), wrong_f, gold))
                 + np.mean(gold - np.where(np.isfinite(wrong_b), wrong_b, gold))) / 2)
    return {"xx2en": fwd, "en2xx": bwd, "mean": (fwd + bwd) / 2, "gap": gap}


def _load_student(cfg: RecipeConfig):
    """The model to train when no frozen copy is needed (no distillation, no mining)."""
    from xlsent.recipes._common import prepare_trained

    student = load_model(cfg.models.student, max_seq_length=cfg.models.max_seq_length).model
    prepare_trained(student, cfg.models)
    return student


def train_adapt(cfg: RecipeConfig, output: str | Path, on_note=None, progress: bool = True) -> RunResult:
    """Train as configured; returns the model folder (``<output>/model``)."""
    from datasets import Dataset

    from xlsent.losses import RankingDistillLoss

    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    cfg = copy.deepcopy(cfg)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    m, t, o = cfg.models, cfg.train, cfg.optim
    folder = StageFolder(output, config_hash(m, t, cfg.loss, cfg.negatives, learning_optim(o),
                                             cfg.eval.select_every), on_note=on_note)
    if folder.skip_if_done():
        return RunResult(output, folder.model_dir)
    seed = int(o.seed)
    pairs = load_train_pairs(t, seed)  # data first: its errors precede any model
    n = len(pairs.english)
    size = holdout_size(n, float(t.holdout), int(t.holdout_min))
    if size and n - size < 2:
        raise XlsentError(f"{t.pairs}: {n} pairs are too few to hold out {size} — give more pairs or "
                          "--set train.holdout=0")
    langs = pairs.languages or [""] * n
    train_rows, held_rows = split_holdout_by_language(langs, size, seed)
    several = len(set(langs)) > 1
    notes = list(pairs.notes)
    for f in (x for x in split_sources(str(t.pairs)) if not is_bundled(x)):  # a user's file, sampled when told to
        if any(x.startswith(f"{f}: sampled ") for x in pairs.notes):
            drawn = n if f == str(t.pairs) else t.sample_files
            notes.append(f"{f}: train.sample_files={t.sample_files} drew {drawn} of your pairs — "
                         "--set train.sample_files=0 uses them all")
    (output / HOLDOUT_FILE).unlink(missing_ok=True)  # never report an earlier run's held-out pairs
    if size:
        write_pairs_jsonl(output / HOLDOUT_FILE, pairs.dataset, held_rows)
        notes.append(f"{t.pairs}: {len(held_rows)} of {n} pairs held out to choose the step and to report "
                     + (f"(each of {len(set(langs))} languages its share) " if several else "")
                     + f"({output / HOLDOUT_FILE})")
    temperature = float(t.get("language_temperature", 1.0))
    if several:  # temperature sampling over the languages (one language, or T = 1: the rows as they are)
        from xlsent.data.sets.mixing import shares_note, temperature_rows

        train_langs = [langs[i] for i in train_rows]
        drawn = temperature_rows(train_langs, temperature, seed)
        notes.append(shares_note(train_langs, drawn, temperature))
        train_rows = train_rows[drawn]
    say(on_note, notes)
    en = [pairs.english[i] for i in train_rows]
    xx = [pairs.other[i] for i in train_rows]

    hard, kd = int(cfg.negatives.hard), float(cfg.loss.kd_weight)
    # the frozen base (targets, mining), cut at the student's length so that both see the same text
    teacher = load_model(m.teacher or m.student, max_seq_length=m.max_seq_length) if hard or kd else None
    student = load_student_for(cfg, m.student, teacher) if teacher else _load_student(cfg)
    from xlsent.encoding.readable import check_readable

    check_readable(student.tokenizer, [(f"{t.pairs}, the non-English side", xx, None)], str(m.student))
    cols: dict = {"anchor": xx, "positive": en}
    if hard:
        from sentence_transformers.util import mine_hard_negatives

        prompt = teacher.prompt or None
        mined = mine_hard_negatives(
            Dataset.from_dict(cols), teacher.model, "anchor", "positive", num_negatives=hard,
            relative_margin=float(cfg.negatives.relative_margin), sampling_strategy="top",
            query_prompt=prompt, corpus_prompt=prompt, output_format="n-tuple", use_faiss=True,
            verbose=False, batch_size=64)
        kept = len(mined)
        if kept < 2:
            raise XlsentError(f"hard-negative mining kept {kept} of {len(xx)} pairs (no candidate scored below "
                              f"{1 - float(cfg.negatives.relative_margin):.0%} of its positive) — lower "
                              "negatives.relative_margin or set negatives.hard=0")
        notes.append(f"hard negatives: {hard} a pair mined by the base model; {len(xx) - kept} pair(s) without "
                     "enough candidates dropped")
        say(on_note, notes[-1:])
        cols = {c: list(mined[c]) for c in mined.column_names}
    if kd:
        targets = teacher_targets(teacher, cols["positive"], progress)
        cols["label"] = targets.tolist()
    del teacher  # its vectors are computed: a second copy of the model would only hold memory while training
    loss = RankingDistillLoss(student, scale=float(cfg.loss.scale), symmetric=bool(cfg.loss.symmetric),
                              kd_weight=kd, sorted_chunk=sorted_rows(cfg.loss.get("sorted_chunk", "auto"),
                                                                   str(student.device)))
    callbacks = []
    if size:
        held_en = [pairs.english[i] for i in held_rows]
        held_xx = [pairs.other[i] for i in held_rows]
        from xlsent.recipes._selection import HoldoutSelection

        callbacks.append(HoldoutSelection(student, held_xx, held_en, folder.checkpoints / BEST_FILE,
                                          float(cfg.eval.select_every), on_note, holdout_scores,
                                          [langs[i] for i in held_rows] if several else None))
    other_col = english_side(pairs.dataset)[0]
    described = f"{n - len(held_rows):,} pairs trained on" + (f", {len(held_rows):,} held out" if size else "") + ", "
    record = train_stage(student, Dataset.from_dict(cols), loss, o, folder, progress, "adapt", no_duplicates=True,
                         described=described,
                         callbacks=callbacks,
                         loss_wrapper=matryoshka_widths(cfg.loss, str(cfg.loss.get("matryoshka_kd") or "every")),
                         extra_record={
                             "data_notes": notes, "train_data": {**pairs.summary(), "examples": len(cols["anchor"]),
                                                                 "pairs_used": n, "notes": notes},
                             "holdout": {"pairs": len(held_rows), "file": HOLDOUT_FILE if size else None,
                                         "anchor_side": other_col},
                             **({"language_temperature": temperature} if several else {})},
                         late_record=_record_selection(folder) if size else None)
    say(on_note, [f"adapt: {record['steps']} steps in {record['seconds']:.0f} s"])
    return RunResult(output, folder.model_dir)


def _record_selection(folder: StageFolder):
    """Add the held-out history and the chosen step to the stage record (read before checkpoints go)."""
    def extra() -> dict:
        import torch

        p = folder.checkpoints / BEST_FILE
        if not p.exists():
            return {}
        best = torch.load(p, weights_only=True)
        return {"selection": {"chosen_step": int(best["step"]), "score": float(best["score"]),
                              "gap": float(best["gap"]), "history": list(best["history_json"])}}
    return extra


def resolve_eval_pairs(cfg: RecipeConfig, output: Path) -> RecipeConfig:
    """``eval.pairs: holdout`` → the run's own held-out file (all of it)."""
    if cfg.eval.pairs != "holdout":
        return cfg
    cfg = copy.deepcopy(cfg)
    path = Path(output) / HOLDOUT_FILE
    if not path.exists():
        raise XlsentError("eval.pairs=holdout: nothing was held out (train.holdout=0) — give "
                          "--set eval.pairs=FILE or a bundled pool")
    cfg.eval.pairs = str(path)
    cfg.eval.sample = 0
    return cfg


def evaluate_after(cfg: RecipeConfig, result: RunResult, output, on_note=None, no_eval: bool = False):
    """Evaluation hook: base model vs adapted on ``eval.pairs`` (the held-out pairs by default) and the UDHR."""
    from xlsent.recipes._common import evaluate_named
    from xlsent.recipes.registry import Report

    model = result.model_path
    if no_eval:
        return Report(model, None, title="")
    held = resolve_eval_pairs(cfg, Path(output))
    metrics = evaluate_named(held, {f"base {cfg.models.student}": cfg.models.student, "adapted": model},
                             on_note=on_note)
    title = ("held-out pairs of the training file (also used to choose the step)" if cfg.eval.pairs == "holdout"
             else f"held-out ({cfg.eval.pairs})")
    return Report(model, metrics, title=title)
