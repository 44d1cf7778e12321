"""Multi-stage distillation into a small multilingual student (Ding et al. 2022).

Ding, Liu, Fang, Zhao, Ju, Yang et al. (2022). *Multi-stage Distillation Framework for
Cross-Lingual Semantic Similarity Matching.* Findings of NAACL 2022.

Teacher T (English SBERT; default all-MiniLM-L6-v2), assistant A (large multilingual; default
multilingual-e5-small), student S (A's first M layers with parameter recurrence and an
embedding bottleneck of size B, stored as ALBERT — see :mod:`xlsent.models.student`):

1. **Teaching assistant** (Eq. 2): X-KD, MSE(A(en), T(en)) + MSE(A(xx), T(en))
   (:mod:`xlsent.recipes.xkd`).
2. **Align student embedding** (Eq. 3): S without transformer layers (lookup V×B → bias-free
   B→H projection, fresh position/type embeddings, LayerNorm) imitates A with zero layers
   (its mean-pooled embedding-layer output), each side against A's own embedding of it.
3. **Teaching student** (Eq. 4): S with the recurring unit (A's layers 1..M run ``repeats``
   times: 1..M, 1..M, …) imitates A's sentence embeddings of en and xx (two MSEs).
4. **Multilingual contrastive learning** (Eq. 5–7): MCL on the teacher's English cosine
   matrix vs the student's en–xx cosine matrix, plus MSE(S(en), T(en)) + MSE(S(xx), T(en))
   (:class:`~xlsent.losses.MultilingualContrastiveLoss`).

Every stage writes its model atomically under ``<output>/stageN-*/model`` with a
``stage.json`` record; a rerun skips finished stages whose config (and upstream stages)
did not change, and a stage cut short resumes from its last trainer checkpoint.

Paper defaults (``configs/multistage.yaml``): B = 128, |RU| = 3 with repeats = 12/3 = 4,
MCL soft, AdamW lr 2e-5 (the published configs use 1.6e-4), 10% warm-up, batch 64,
max length 128, 20 epochs for stages 1–3 and 60 for stage 4. ``--preset small`` fits each
stage in ≤ 30 min on 2 CPU cores. ``--preset compress`` is the compression target on a CPU:
self-distillation of e5-small (teacher = assistant, stage 1 off) into B = 128 with |RU| = 6
run once (37% of the parameters, six layer passes instead of twelve), ``svd-corpus`` init,
token-level stage 2 and the contrastive stage-3 loss (the options below).

Ablation switches: ``models.student.bottleneck`` (0 = b False) and size B (Tables 7–8),
``models.student.ru_layers`` / ``models.student.repeats`` (1 = "w/o Rec.", Tables 3–4, 7–8),
``mcl.variant`` soft / bool / ce / off (Table 5), ``stages.mode`` multistage /
single-random / single-predistill (Table 6), ``stages.stage1`` (false = use the assistant
as given).

Decisions where the paper is silent or ambiguous:

* ``stage2.objective``: ``sentence`` (the paper: mean-pooled sentences), ``token`` (xlsent: every
  (token, position) pair of the vocabulary fitted to the assistant's embedding layer, see
  :func:`~xlsent.models.student.align_bottleneck_tokens`) or ``both`` (token, then sentence);
* the bottleneck lookup starts from the assistant's word embeddings projected on their top-B
  principal directions (``models.student.init: svd``; ``random`` is the published code), so tokens
  the training corpus never shows (other scripts) still have sensible vectors.
  ``svd-corpus`` (xlsent) weights each token by its count in the training pairs (+1) when
  choosing the directions, and draws half of each token-alignment batch by that count: on
  e5-small at B = 128 the Bible's tokens are reconstructed far better, the vocabulary as a
  whole somewhat worse (``docs/experiments/distillation.md``);
* ``stage3.loss``: ``mse`` (the paper's Eq. 4) or ``contrastive`` (xlsent: MSE plus an in-batch
  InfoNCE of student embeddings against the assistant's, τ = ``stage3.temperature``; see
  :class:`~xlsent.losses.ContrastiveDistillLoss`) — on an anisotropic assistant like e5, MSE
  alone reaches a high cosine with the targets while retrieval is still at chance
  (``docs/experiments/distillation.md``);
* ``mcl.infonce_weight`` (xlsent, default 0 = the paper): stage 4 adds an in-batch InfoNCE of
  both student sides against the teacher's English embeddings, τ = ``mcl.temperature``. With
  e5-small as its own teacher, the paper's stage 4 (soft MCL + MSE, lr 1e-4, 188 steps) took
  the stage-3 student's NT ny→en P@1 down to chance (``docs/experiments/distillation.md``): e5's
  cosines are high for any two sentences, and matching them erases what tells sentences apart;
* every stage trains on texts with the model's default prompt (e5: ``"passage: "``), the
  prompt its targets were encoded with and the one ``encode`` adds;
* ALBERT places position/type embeddings and the LayerNorm before the projection (size B)
  rather than after it (size H); they are freshly initialised either way;
* single-stage baselines (Table 6): ``single-random`` = a randomly initialised bottleneck on A's
  first M layers, trained with X-KD alone; ``single-predistill`` = stages 2–3 against the
  *original* assistant (no stage 1), then X-KD (stage 4 without MCL);
* every stage trains on the same cleaned pairs (the paper adds more corpora for stages 1–3;
  ``stageN.sample`` takes a seeded subset per stage). ``train.monolingual`` (xlsent) adds a file
  of monolingual sentences (one per line) to stages 2–3, which only imitate the assistant and so
  need no translations: its tokens join the ``svd-corpus`` counts and its sentences, two to a
  row, join stage 3's pairs (``train.monolingual_sample`` takes a seeded subset). Distilled on
  English–Chichewa alone, the compressed student keeps its Chichewa but loses languages it never
  sees (UDHR Hausa falls to near chance; ``docs/experiments/distillation.md``); text in the languages
  to keep is the remedy;
* no checkpoint is picked on test data (the published code selected on STS test sets); the
  last step of each stage is its model.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import numpy as np

from xlsent.data.sets.pairs import TrainPairs, load_train_pairs
from xlsent.losses.multilingual_contrastive_loss import VARIANTS as MCL_VARIANTS
from xlsent.models.student import INITS
from xlsent.recipes._common import pair_dataset, say, teacher_targets
from xlsent.recipes.config import dump_config
from xlsent.recipes.config_types import EvalConfig, ModelsConfig, OptimConfig, RecipeConfig, Section, TrainConfig
from xlsent.recipes.registry import RunResult
from xlsent.training.run_folder import StageFolder, config_hash, learning_optim
from xlsent.training.settings import NonNegFloat, NonNegInt, PosFloat, PosInt
from xlsent.training.trainer import train_stage
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import atomic_path, write_json_atomic, write_text_atomic

STAGES = ("stage1-assistant", "stage2-embedding", "stage3-recurrence", "stage4-mcl")
MODES = ("multistage", "single-random", "single-predistill")
OBJECTIVES = ("sentence", "token", "both")  # stage 2

#: the allowed words of this recipe's own keys (``--set`` values are checked against them before anything loads)
CHOICES = {"mcl.variant": MCL_VARIANTS, "stages.mode": MODES, "stage2.objective": OBJECTIVES,
           "stage3.loss": ("mse", "contrastive"), "models.student.init": INITS,
           "models.student.positions": ("fresh", "copy")}


class StudentShape(Section):
    """``models.student`` of this recipe: the shape of the student it builds."""

    bottleneck: NonNegInt = 0
    init: str = "svd"                       # CHOICES: models.student.init
    positions: str = "fresh"
    ru_layers: PosInt = 3
    repeats: PosInt = 1


class MultistageModels(ModelsConfig):
    """``models:`` of this recipe: the shared fields and the teaching assistant."""

    assistant: str = ""


class MultistageTrain(TrainConfig):
    """``train:`` of this recipe: the shared fields and extra monolingual text for stages 2-3."""

    monolingual: str = ""                   # one sentence a line
    monolingual_sample: NonNegInt = 0


class MultistageEval(EvalConfig):
    """``eval:`` of this recipe: the shared fields and whether the stage-2/3 students are scored too."""

    each_stage: bool = False


class Stage(Section):
    """``stageN:`` — a stage's own length and sample; ``lr`` and ``batch_size`` null: ``optim``'s."""

    epochs: NonNegInt = 20
    max_steps: NonNegInt = 0
    sample: NonNegInt = 0
    lr: PosFloat | None = None
    batch_size: PosInt | None = None


class Stage2(Stage):
    token_steps: PosInt = 1000


class Stage3(Stage):
    temperature: PosFloat = 0.05
    contrastive_weight: NonNegFloat = 1.0


class Mcl(Section):
    """``mcl:`` — stage 4's terms: the multilingual contrastive loss, InfoNCE and distillation, and its
    temperature."""

    mcl_weight: NonNegFloat = 1.0
    infonce_weight: NonNegFloat = 0.0
    kd_weight: NonNegFloat = 1.0
    temperature: PosFloat = 0.05


#: this recipe's own sections and fields, typed with their ranges, and its keys that name files
#: (xlsent.recipes.config_schema)
SECTIONS = {"models": MultistageModels, "models.student": StudentShape, "train": MultistageTrain,
            "eval": MultistageEval, "stage1": Stage, "stage2": Stage2, "stage3": Stage3, "stage4": Stage, "mcl": Mcl}
FILES = ("train.monolingual",)


def _optim(cfg: RecipeConfig, stage: str) -> OptimConfig:
    """``optim`` with the stage's own non-null settings (``stage3.lr``…) over it."""
    o = OptimConfig(cfg.optim)
    not_optim = {"sample", "objective", "token_steps", "loss", "temperature", "contrastive_weight"}
    o.update({k: v for k, v in cfg[stage].items() if k not in not_optim and v is not None})
    return o


def _trains(cfg: RecipeConfig, stage: str) -> dict:
    """The optimiser settings that change what a stage learns (its config hash; logging/saving excluded)."""
    return learning_optim(_optim(cfg, stage))


def _monolingual(t: dict, seed: int, on_note=None) -> list[str]:
    """``train.monolingual`` read (blank lines and repeats counted), then a seeded subset of ``monolingual_sample``."""
    if not t["monolingual"]:
        return []
    from xlsent.data.formats.readers import read_sentences

    texts, report = read_sentences(t["monolingual"])
    notes = report.lines()
    n = int(t["monolingual_sample"])
    idx = _seeded_pick(len(texts), n, seed)
    if idx is not None:
        texts = [texts[i] for i in sorted(idx)]
        notes.append(f"{t['monolingual']}: sampled {n} of {report.rows} sentences (seed {seed})")
    say(on_note, notes + [f"{t['monolingual']}: {len(texts)} monolingual sentences for stages 2–3"])
    return texts


def _seeded_pick(total: int, n: int, seed: int) -> np.ndarray | None:
    """``n`` of ``range(total)`` in a seeded random order, or None when ``n`` is 0 or takes them all."""
    if not n or n >= total:
        return None
    return np.random.default_rng(seed).permutation(total)[:n]


def _subset(pairs: TrainPairs, n: int, seed: int) -> tuple[list[str], list[str]]:
    idx = _seeded_pick(len(pairs.english), n, seed)
    if idx is None:
        return pairs.english, pairs.other
    return [pairs.english[i] for i in idx], [pairs.other[i] for i in idx]


def train_multistage(cfg: RecipeConfig, output: str | Path, on_note=None, progress: bool = True,
                     callbacks: list | None = None) -> RunResult:
    """Run the configured stages into ``output`` (finished stages are skipped); ``callbacks`` go to every trainer."""
    from sentence_transformers.sentence_transformer.losses import MSELoss

    from xlsent.encoding.cached_embeddings import cached_embeddings
    from xlsent.encoding.layer_features import LayerFeatures
    from xlsent.losses import ContrastiveDistillLoss, MultilingualContrastiveLoss
    from xlsent.models.handle import load_model
    from xlsent.models.registry import resolve_model_path
    from xlsent.models.student import build_student_st, count_tokens, load_student, size_report
    from xlsent.recipes.xkd import train_xkd

    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    cfg = copy.deepcopy(cfg)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    mode = cfg.stages.mode
    if mode not in MODES:
        raise XlsentError(f"stages.mode '{mode}': choose one of {', '.join(MODES)}")
    m = cfg.models
    s = m["student"]
    seed = int(cfg.optim.seed)
    repeats = int(s["repeats"])
    if repeats < 1:
        raise XlsentError(f"models.student.repeats = {repeats}: must be ≥ 1 (1 = no recurrence)")
    bottleneck = int(s["bottleneck"]) or None
    result = RunResult(output, output / "model", details={"stages": {}})  # each stage's model folder, as trained

    # Stage 1: the teaching assistant (X-KD from the teacher)
    base_path = resolve_model_path(m["assistant"])
    paired = {k: v for k, v in cfg.train.items() if not k.startswith("monolingual")}  # what stages 1 and 4 read
    h = config_hash(str(base_path), m["teacher"], paired, mode, m["max_seq_length"])
    if mode == "multistage" and cfg.stages.stage1:
        sub = RecipeConfig(models=ModelsConfig(teacher=m.teacher, student=m.assistant, max_seq_length=m.max_seq_length,
                                               freeze_word_embeddings=m.freeze_word_embeddings),
                           train=TrainConfig(paired, sample=cfg.stage1.sample or cfg.train.sample),
                           optim=_optim(cfg, "stage1"))
        assistant_path = train_xkd(sub, output, on_note, progress, stage_dir=output / STAGES[0]).model_path
        result.stages[STAGES[0]] = assistant_path
        h = config_hash(h, sub)
    else:
        assistant_path = base_path
    assistant_handle = load_model(assistant_path, max_seq_length=int(m["max_seq_length"]))
    assistant = assistant_handle.model
    h = config_hash(h, assistant_handle.fingerprint)

    pairs = load_train_pairs(cfg.train, seed)
    say(on_note, pairs.notes)
    mono = _monolingual(cfg.train, seed, on_note)
    teacher = load_model(m["teacher"])

    student_dir = None
    if mode in ("multistage", "single-predistill"):
        # Stage 2: the bottleneck embedding imitates the assistant's zero-layer output
        d2 = output / STAGES[1]
        emb_keys = {k: s[k] for k in ("bottleneck", "init", "positions", "ru_layers")}  # what stage 2 depends on
        h = config_hash(h, emb_keys, cfg.stage2, _trains(cfg, "stage2"), "stage2", *([mono] if mono else []))
        f2 = StageFolder(d2, h, on_note=on_note)
        if not f2.skip_if_done():
            counts = None  # svd-corpus: token counts of the training pairs, for the init and the token alignment
            if s["init"] == "svd-corpus":
                counts = count_tokens(assistant[0].tokenizer, pairs.english + pairs.other + mono,
                                      int(assistant[0].auto_model.config.vocab_size))
            student = build_student_st(assistant, int(s["ru_layers"]), 0, bottleneck, s["init"], s["positions"], seed,
                                       normalize=False, max_seq_length=m["max_seq_length"],
                                       token_counts=counts)
            objective = cfg.stage2.objective
            if objective not in OBJECTIVES:
                raise XlsentError(f"stage2.objective '{objective}': choose sentence (paper), token or both")
            extra = {}
            if objective in ("token", "both") and bottleneck:
                from xlsent.models.student import align_bottleneck_tokens
                from xlsent.utils.device import current_device

                student.to(current_device())  # built on the CPU to be saved; the alignment runs on the device
                f2.note(f"stage 2 — token-level bottleneck alignment ({cfg.stage2.token_steps} steps)")
                f2.begin()
                curve = align_bottleneck_tokens(student[0].auto_model, assistant[0].auto_model,
                                                int(cfg.stage2.token_steps), seed=seed, folder=f2, progress=progress,
                                                max_position=int(m["max_seq_length"]), token_counts=counts)
                extra["token_alignment_relative_mse"] = curve
            if objective == "token":
                f2.begin()
                f2.finish(lambda tmp: student.save(str(tmp)), [], {"steps": int(cfg.stage2.token_steps), **extra})
            else:
                en, xx = _subset(pairs, cfg.stage2.sample, seed)
                feats = LayerFeatures(assistant_handle, batch_size=64)
                z = feats.get(en + xx, ["mean:0"], show_progress=progress)["mean:0"]
                label = np.stack([z[: len(en)], z[len(en) :]], axis=1)
                train_stage(student, pair_dataset(en, xx, label), MSELoss(student), _optim(cfg, "stage2"), f2,
                            progress, "stage 2 — embedding bottleneck", callbacks=callbacks, extra_record=extra)
        result.stages[STAGES[1]] = d2 / "model"

        # Stage 3: recurrence on, imitate the assistant's sentence embeddings
        d3 = output / STAGES[2]
        h = config_hash(h, repeats, cfg.stage3, _trains(cfg, "stage3"), "stage3")
        f3 = StageFolder(d3, h, on_note=on_note)
        if not f3.skip_if_done():
            en, xx = _subset(pairs, cfg.stage3.sample, seed)
            if mono:  # two monolingual sentences to a row, each imitating the assistant's embedding of itself
                odd = mono + mono[:1] if len(mono) % 2 else mono
                en, xx = en + odd[0::2], xx + odd[1::2]
            a = cached_embeddings(assistant_handle, en + xx, show_progress=progress,
                                  description="assistant embeddings")
            label = np.stack([a[: len(en)], a[len(en) :]], axis=1)
            student = load_student(d2 / "model", repeats=repeats, normalize=True)
            student.max_seq_length = int(m["max_seq_length"])
            c3 = cfg.stage3
            if c3["loss"] == "mse":
                loss3 = MSELoss(student)
            elif c3["loss"] == "contrastive":
                loss3 = ContrastiveDistillLoss(student, float(c3["temperature"]), float(c3["contrastive_weight"]))
            else:
                raise XlsentError(f"stage3.loss '{c3['loss']}': choose mse (paper) or contrastive")
            train_stage(student, pair_dataset(en, xx, label), loss3, _optim(cfg, "stage3"), f3,
                        progress, f"stage 3 — parameter recurrence ({c3['loss']})", callbacks=callbacks)
        result.stages[STAGES[2]] = d3 / "model"
        student_dir = d3 / "model"

    # Stage 4: MCL + KD (single-stage baselines: KD only)
    d4 = output / STAGES[3]
    variant = cfg.mcl.variant if mode == "multistage" else "off"
    if student_dir is None:
        h = config_hash(h, s, "single-random")
    h = config_hash(h, cfg.stage4, cfg.mcl, variant, _trains(cfg, "stage4"), "stage4")
    f4 = StageFolder(d4, h, on_note=on_note)
    if not f4.skip_if_done():
        en, xx = _subset(pairs, cfg.stage4.sample, seed)
        if student_dir is None:  # single-random: untrained bottleneck on the assistant's first M layers
            student = build_student_st(assistant, int(s["ru_layers"]), repeats, bottleneck, "random", "fresh", seed,
                                       normalize=True, max_seq_length=m["max_seq_length"])
        else:
            student = load_student(student_dir)
            student.max_seq_length = int(m["max_seq_length"])
        t_en = teacher_targets(teacher, en, progress)
        loss = MultilingualContrastiveLoss(student, variant, float(cfg.mcl.temperature),
                                           float(cfg.mcl.mcl_weight), float(cfg.mcl.kd_weight),
                                           float(cfg.mcl.infonce_weight), float(cfg.mcl.temperature))
        name = f"stage 4 — MCL ({variant}) + KD" if variant != "off" else "stage 4 — KD (no MCL)"
        train_stage(student, pair_dataset(en, xx, t_en), loss, _optim(cfg, "stage4"), f4, progress,
                    name, no_duplicates=variant != "off", callbacks=callbacks,
                    extra_record={"train_data": {**pairs.summary(), "examples": len(en)}})
    result.stages[STAGES[3]] = d4 / "model"

    # The final student, its size next to the assistant's
    final = output / "model"
    with atomic_path(final) as tmp:
        shutil.copytree(d4 / "model", tmp)
    stu = load_student(final)
    a_size, s_size = size_report(assistant[0].auto_model), size_report(stu[0].auto_model)
    result.details["sizes"] = {"assistant": a_size.to_dict(), "student": s_size.to_dict(),
                               "student_share_of_assistant": s_size.total / a_size.total}
    write_json_atomic(output / "size_report.json", result.sizes)
    return result


def evaluate_after(cfg: RecipeConfig, result: RunResult, output: Path, on_note=None, no_eval: bool = False):
    """Evaluation hook: the assistant as given, the stage-1 assistant, the stage-2/3 students (``eval.each_stage``)
    and the final student; the size report and the stage records join the metrics."""
    from xlsent.recipes._common import evaluate_named
    from xlsent.recipes.registry import Report

    metrics = None
    if not no_eval:
        models = {f"base {cfg.models.assistant}": cfg.models.assistant} if cfg.eval.base else {}
        if STAGES[0] in result.stages:
            models["assistant (stage 1)"] = result.stages[STAGES[0]]
        if cfg.eval.each_stage:
            for name in STAGES[1:3]:
                if name in result.stages:
                    models[name] = result.stages[name]
        models["student"] = result.model_path
        metrics = evaluate_named(cfg, models, on_note=on_note)
        metrics.run.update({"sizes": result.sizes, "stages": stage_records(output, list(result.stages))})
    return Report(result.model_path, metrics, title="multi-stage distillation, held-out",
                  details={"sizes": result.sizes})


def stage_records(output: Path, stages=STAGES) -> dict:
    """The ``stage.json`` records of this run's stages (a folder left by another config is not reported)."""
    out = {}
    for st in stages:
        f = Path(output) / st / "stage.json"
        if f.exists():
            out[st] = json.loads(f.read_text())
    return out
