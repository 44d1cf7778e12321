"""Distillation fit: mean squared error of the student's embeddings to the teacher's, on held-out pairs.

For English–xx pairs (s, t): ``MSE(S(s), T(s))`` and ``MSE(S(t), T(s))`` (element-wise mean,
as sentence-transformers' ``MSEEvaluator``, which reports the second × 100; both are given
here, raw and × 100), plus the mean cosine of S(t) to T(s).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from xlsent.encoding.encoder import TextEncoder, as_encoder


@dataclass
class MseResult:
    model: str
    teacher: str
    n: int
    dataset: str
    mse_src: float  # MSE(S(s), T(s)): the student on English against the teacher
    mse_tgt: float  # MSE(S(t), T(s)): the student on the other language against the teacher's English
    cosine_tgt_to_teacher: dict  # mean, std of cos(S(t), T(s))

    def to_dict(self) -> dict:
        """The JSON ``xlsent eval mse`` writes and metrics.json keeps (the MSEs also × 100, as sentence-transformers)."""
        d: dict = {"model": self.model, "teacher": self.teacher, "n": self.n}
        if self.dataset:
            d["dataset"] = self.dataset
        d.update(mse_src=self.mse_src, mse_tgt=self.mse_tgt, mse_src_x100=100 * self.mse_src,
                 mse_tgt_x100=100 * self.mse_tgt, cosine_tgt_to_teacher=self.cosine_tgt_to_teacher)
        return d


def evaluate_mse(
    src_texts: Sequence[str],
    tgt_texts: Sequence[str],
    student: TextEncoder | Callable[[list[str]], np.ndarray],
    teacher: TextEncoder | Callable[[list[str]], np.ndarray],
    model_name: str = "",
    teacher_name: str = "",
    dataset: str = "",
    tgt_lang: str | None = None,
) -> MseResult:
    """MSE of the student on both sides to the teacher's embedding of the English side (``src_texts``)."""
    if len(src_texts) != len(tgt_texts) or not len(src_texts):
        raise ValueError("MSE evaluation needs aligned, non-empty source and target lists")
    student, teacher = as_encoder(student), as_encoder(teacher)
    t = np.asarray(teacher.encode(list(src_texts), "en"), dtype=np.float64)
    ss = np.asarray(student.encode(list(src_texts), "en"), dtype=np.float64)
    st = np.asarray(student.encode(list(tgt_texts), tgt_lang), dtype=np.float64)
    if ss.shape[1] != t.shape[1]:
        raise ValueError(f"student dimension {ss.shape[1]} differs from the teacher's {t.shape[1]}")
    cos = (st * t).sum(1) / np.maximum(np.linalg.norm(st, axis=1) * np.linalg.norm(t, axis=1), 1e-12)
    mse_src, mse_tgt = float(((ss - t) ** 2).mean()), float(((st - t) ** 2).mean())
    return MseResult(model_name, teacher_name, len(t), dataset, mse_src, mse_tgt,
                     {"mean": float(cos.mean()), "std": float(cos.std())})
