"""Pieces the distillation recipes share: models, training pairs, teacher targets, held-out evaluation
(:mod:`xlsent.evaluation.suite`) of named models."""

from __future__ import annotations

from typing import Callable

import numpy as np

from xlsent.recipes.config_types import RecipeConfig
from xlsent.recipes.registry import RunResult
from xlsent.models.handle import ModelHandle, load_model
from xlsent.utils.errors import XlsentError


def say(on_note: Callable[[str], None] | None, lines: list[str]) -> None:
    """Hand notes (what a reader or filter skipped or removed, what a stage did) to ``on_note``, when given.

    Recipes never print: the CLI passes a function that shows each note, tests one that collects them.
    """
    if on_note is not None:
        for line in lines:
            on_note(line)


def freeze_word_embeddings(st) -> int:
    """Stop training the token table (the 96M-parameter bulk of e5-small); returns the frozen count. The rows
    ``xlsent models extend-vocab`` added keep training (:func:`xlsent.models.vocab.extend.freeze_old_rows`)."""
    from xlsent.models.vocab.extend import freeze_old_rows

    frozen = freeze_old_rows(st[0].auto_model)
    if frozen is not None:
        return frozen
    emb = st[0].auto_model.get_input_embeddings()
    emb.weight.requires_grad_(False)
    return emb.weight.numel()


def without_dropout(st) -> int:
    """Dropout off while training (``models.dropout: false``): every dropout layer's rate set to 0 in this process
    (a CPU step no longer draws its masks); the saved model's config keeps its own rates. Returns the count."""
    import torch

    mods = [m for m in st.modules() if isinstance(m, torch.nn.Dropout)]
    for m in mods:
        m.p = 0.0
    return len(mods)


def prepare_trained(st, models) -> None:
    """What ``models:`` says about the model to train: the token table frozen (``freeze_word_embeddings``), only
    the top ``train_layers`` blocks trained (the embeddings and the blocks below frozen, so backpropagation stops
    at the lowest trained block and keeps no activations below it), dropout off (``dropout: false``)."""
    from xlsent.models.span_encoder import freeze_lower

    if models.get("freeze_word_embeddings", False):
        freeze_word_embeddings(st)
    layers = int(models.get("train_layers", 0) or 0)
    if layers:
        auto = st[0].auto_model
        freeze_lower(auto, layers, True)
        for p in (auto.pooler.parameters() if getattr(auto, "pooler", None) is not None else []):
            p.requires_grad_(False)  # BERT's pooler: sentence-transformers' pooling never reads it
    if not models.get("dropout", True):
        without_dropout(st)


def pair_dataset(english: list[str], other: list[str], label):
    """Columns english, other, label (teacher/assistant targets, 2-D or 3-D) for the sentence-transformers trainer."""
    from datasets import Dataset

    return Dataset.from_dict({"english": english, "other": other,
                              "label": np.asarray(label, dtype=np.float32).tolist()})


def load_student_for(cfg: RecipeConfig, name: str, teacher: ModelHandle):
    """The student to train: same width as the teacher, token table frozen if configured."""
    student = load_model(name, max_seq_length=cfg.models.max_seq_length).model
    if student.get_embedding_dimension() != teacher.dimension:
        raise XlsentError(
            f"student dimension {student.get_embedding_dimension()} ≠ teacher dimension "
            f"{teacher.dimension} — choose a teacher and student of the same width"
        )
    prepare_trained(student, cfg.models)
    return student


def teacher_targets(teacher: ModelHandle, texts: list[str], progress: bool = True) -> np.ndarray:
    from xlsent.encoding.cached_embeddings import cached_embeddings

    return cached_embeddings(teacher, texts, show_progress=progress, description="teacher embeddings")


def evaluate_named(cfg: RecipeConfig, models: dict, gloss=None, on_note=None):
    """Held-out metrics of ``models`` (report name → model name or folder) with the recipe's ``eval`` section;
    ``gloss`` (a gloss model's) is applied to every model, so a base English SBERT is scored on glossed input."""
    from xlsent.encoding.encoder import Encoder
    from xlsent.evaluation.suite import evaluate_held_out

    chunk = int(cfg.eval.chunk_words)
    m = cfg.models
    name = m.get("teacher") or m.get("student")  # the MSE reference; none for a model trained from scratch
    teacher = Encoder.load(name, memo=True, gloss=None) if name else None  # gloss: the SBERT as given
    kw = {"gloss": gloss} if gloss is not None else {}
    encoders = {}
    for report_name, path in models.items():
        if teacher is not None and str(path) == name and not chunk and gloss is None and teacher.gloss is None:
            encoders[report_name] = teacher  # the base model is the teacher as it stands: one model, its vectors once
        else:
            encoders[report_name] = Encoder.load(str(path), chunk_words=chunk, memo=True, name=report_name, **kw)
    return evaluate_held_out(encoders, cfg.eval, teacher, int(cfg.optim.seed), on_note)


def evaluate_student(cfg: RecipeConfig, result: RunResult, output, on_note=None, no_eval: bool = False):
    """Evaluation hook of the one-student distillation recipes (xkd, triplet-kd): base student vs trained."""
    from xlsent.recipes.registry import Report

    model = result.model_path
    metrics = None if no_eval else evaluate_named(
        cfg, {f"base {cfg.models.student}": cfg.models.student, "trained": model}, on_note=on_note)
    return Report(model, metrics, title="held-out, base student vs trained")
