"""Pieces the distillation recipes share: models, training pairs, teacher targets, held-out evaluation."""

from __future__ import annotations

from typing import Callable

import numpy as np

from xlsent.data.pairs import english_side, load_pairs
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
    """Stop training the token table (the 96M-parameter bulk of e5-small); returns the frozen count."""
    emb = st[0].auto_model.get_input_embeddings()
    emb.weight.requires_grad_(False)
    return emb.weight.numel()


def pair_dataset(english: list[str], other: list[str], label):
    """Columns english, other, label (teacher/assistant targets, 2-D or 3-D) for the sentence-transformers trainer."""
    from datasets import Dataset

    return Dataset.from_dict({"english": english, "other": other,
                              "label": np.asarray(label, dtype=np.float32).tolist()})


def load_student_for(cfg: dict, name: str, teacher: ModelHandle):
    """The student to train: same width as the teacher, token table frozen if configured."""
    student = load_model(name, max_seq_length=cfg["model"]["max_seq_length"]).model
    if student.get_embedding_dimension() != teacher.dimension:
        raise XlsentError(
            f"student dimension {student.get_embedding_dimension()} ≠ teacher dimension "
            f"{teacher.dimension} — choose a teacher and student of the same width"
        )
    if cfg["model"]["freeze_word_embeddings"]:
        freeze_word_embeddings(student)
    return student


def teacher_targets(teacher: ModelHandle, texts: list[str], progress: bool = True) -> np.ndarray:
    from xlsent.encoding.cached_embeddings import cached_embeddings

    return cached_embeddings(teacher, texts, show_progress=progress, description="teacher embeddings")


def evaluate_models(encoders: dict, e: dict, teacher=None, seed: int = 0, on_note=None) -> dict:
    """Held-out retrieval (both directions), triplet accuracy and MSE to the teacher for each encoder.

    ``encoders`` maps a report name to a :class:`~xlsent.encoding.encoder.TextEncoder` (a gloss
    model's encoder glosses the non-English side itself); ``teacher`` is the teacher's encoder.
    ``e`` is the recipe's ``eval`` section: ``pairs``, ``sample``, ``similarity``, ``udhr`` (also
    score the bundled UDHR pools). Held-out triplets take their negative from another section
    of the same document where the pool has sections (Bible, UDHR, JSONL doc/section), else at random.
    Test data is only reported, never used to choose a checkpoint.
    """
    from xlsent.data.bundled import split_by_language
    from xlsent.data.pairs import section_keys, side_langs
    from xlsent.data.triplets import build_triplets
    from xlsent.evaluation.mse import evaluate_mse
    from xlsent.evaluation.retrieval import evaluate_many, evaluate_retrieval, mean_row
    from xlsent.evaluation.triplet import evaluate_triplets

    held = load_pairs(e["pairs"], dedupe=False, sample=e["sample"], seed=seed).dataset
    other_col, en_col = english_side(held)
    src, tgt = list(held["src"]), list(held["tgt"])
    sl, tl = side_langs(held)
    other_lang = sl if other_col == "src" else tl
    # paper 004's negatives (another section of the same document) where the pool has sections
    trip, _ = build_triplets(held, "section" if section_keys(held) is not None else "random", seed)
    out: dict = {"eval_pool": {"pairs": e["pairs"], "n": len(src), "sample_seed": seed}, "models": {}}
    for name, enc in encoders.items():
        say(on_note, [f"evaluating {name}…"])
        r = {"retrieval": evaluate_retrieval(src, tgt, enc, name, e["similarity"], dataset=e["pairs"], src_lang=sl,
                                             tgt_lang=tl).to_dict(),
             "triplets": evaluate_triplets(trip["anchor"], trip["positive"], trip["negative"], enc, name, e["pairs"],
                                           anchor_lang=other_lang or None)}
        if teacher is not None and enc.dimension == teacher.dimension:
            r["mse"] = evaluate_mse(list(held[en_col]), list(held[other_col]), enc, teacher, name,
                                    dataset=e["pairs"], tgt_lang=other_lang or None)
        if e.get("udhr"):
            from xlsent.data.bundled import load_bundled

            udhr = load_bundled("udhr")
            groups = {k: (list(p["src"]), list(p["tgt"]), p["src_lang"][0], p["tgt_lang"][0])
                      for k, p in split_by_language(udhr).items()}
            res = evaluate_many(groups, enc, name, e["similarity"], 1000, seed, 4, "udhr")
            r["udhr"] = {"mean": mean_row(res), "languages": [x.to_dict() for x in res]}
        out["models"][name] = r
    return out


def evaluate_named(cfg: dict, models: dict, gloss=None, on_note=None) -> dict:
    """Held-out metrics of ``models`` (report name → model name or folder) with the recipe's ``eval`` section;
    ``gloss`` (a gloss model's) is applied to every model, so a base English SBERT is scored on glossed input."""
    from xlsent.encoding.encoder import Encoder

    chunk = int(cfg["eval"]["chunk_words"])
    teacher = Encoder.load(cfg["teacher"] if "teacher" in cfg else cfg["model"]["name"], memo=True, gloss=None)
    kw = {"gloss": gloss} if gloss is not None else {}
    encoders = {name: Encoder.load(str(path), chunk_words=chunk, memo=True, name=name, **kw)
                for name, path in models.items()}
    return evaluate_models(encoders, cfg["eval"], teacher, int(cfg["optim"]["seed"]), on_note)


def evaluate_student(cfg: dict, model, output, on_note=None, no_eval: bool = False):
    """Evaluation hook of the one-student distillation recipes (xkd, triplet-kd): base student vs trained."""
    from xlsent.recipes.registry import Report

    metrics = None if no_eval else evaluate_named(
        cfg, {f"base {cfg['student']}": cfg["student"], "trained": model}, on_note=on_note)
    return Report(model, metrics, title="held-out, base student vs trained")
