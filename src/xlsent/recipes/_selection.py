"""The step chosen on held-out pairs: the trainer callback of ``xlsent train adapt`` (:mod:`xlsent.recipes.adapt`).

Its own module because it subclasses transformers' ``TrainerCallback``: the recipe's module stays importable
without transformers (reading a config never loads it), and this one is imported only when a run trains.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import torch
from transformers import TrainerCallback

from xlsent.utils.io import atomic_path


class HoldoutSelection(TrainerCallback):
    """Score the held-out pairs ``every`` times an epoch and at the end, keep the best trainable weights on disk
    (``best_path``, atomically, so a resumed run keeps them), and load them back into the model when training
    ends. Best = highest mean P@1 of both directions, ties broken by the larger gold-vs-best-wrong cosine gap (a
    held-out set of 100 pairs often saturates P@1). ``score(student, anchors, positives, groups)`` gives the
    figures (:func:`xlsent.recipes.adapt.holdout_scores`)."""

    def __init__(self, student, anchors: list[str], positives: list[str], best_path: Path, every: float,
                 on_note, score: Callable[..., dict], groups: list[str] | None = None):
        self.student, self.anchors, self.positives, self.groups = student, anchors, positives, groups
        self.best_path, self.every, self.on_note, self.score = Path(best_path), every, on_note, score
        self.interval = 1
        self.history: list[dict] = []

    def _best(self) -> dict | None:
        if not self.best_path.exists():
            return None
        return torch.load(self.best_path, weights_only=True)

    def on_train_begin(self, args, state, control, **kw):
        steps_per_epoch = max(1, math.ceil(state.max_steps / max(args.num_train_epochs, 1)))
        self.interval = max(1, math.ceil(steps_per_epoch / max(self.every, 1e-9)))
        best = self._best()
        self.history = list(best["history_json"]) if best else []

    def _score(self, step: int) -> None:
        student = self.student
        was_training = student.training
        m = self.score(student, self.anchors, self.positives, self.groups)
        student.train(was_training)
        # a resumed run scores again the steps after its last checkpoint: keep one entry a step
        self.history = [h for h in self.history if h["step"] < step]
        self.history.append({"step": step, **m})
        best = self._best()
        key = (m["mean"], m["gap"])
        if best is None or key > (float(best["score"]), float(best["gap"])):
            best = {"score": m["mean"], "gap": m["gap"], "step": step,
                    "weights": {n: p.detach().clone() for n, p in student.named_parameters() if p.requires_grad}}
        best["history_json"] = self.history
        with atomic_path(self.best_path) as tmp:
            torch.save(best, tmp)
        if self.on_note is not None:
            self.on_note(f"step {step}: held-out P@1 xx→en {m['xx2en']:.3f}, en→xx {m['en2xx']:.3f}, "
                         f"gap {m['gap']:.3f}")

    def on_step_end(self, args, state, control, **kw):
        if state.global_step % self.interval == 0 or state.global_step == state.max_steps:
            self._score(state.global_step)
        return control

    def on_train_end(self, args, state, control, **kw):
        best = self._best()
        if best is not None:
            self.student.load_state_dict({**self.student.state_dict(), **best["weights"]})
            if self.on_note is not None:
                self.on_note(f"chosen on the held-out pairs: step {best['step']} of {state.max_steps} "
                             f"(mean P@1 {float(best['score']):.3f}, gap {float(best['gap']):.3f})")
