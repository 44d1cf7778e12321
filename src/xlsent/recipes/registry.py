"""The recipes, by name: what ``xlsent train <name>`` runs, with which config, presets and held-out report.

Each :class:`Recipe` names its training function and its evaluation hook by dotted path, so the
registry (and ``xlsent train --help``) loads no torch; the CLI builds one command per entry
(:mod:`xlsent.cli.train`). A recipe's defaults are ``configs/<name>.yaml``, its presets
``configs/<name>.<preset>.yaml``.

A training function is ``train(cfg, output, on_note=None, progress=True) -> result``; an
evaluation hook is ``evaluate(cfg, result, output, on_note=None, no_eval=False) -> Report`` (data
only: recipes never print; ``on_note(text)`` hands what they report to the CLI, which shows it). :class:`Report` carries the trained model's folder, the metrics to save as
``metrics.json`` and, for recipes that have one, a size report.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from xlsent.recipes.config import presets


@dataclass
class Report:
    """What a run produced: the model folder, held-out metrics (None with --no-eval) and extras."""

    model: Path
    metrics: Any = None  # an xlsent.evaluation.suite.HeldOut
    sizes: dict | None = None
    title: str = ""
    usage: str = ""  # a line on how to use the model, when it needs more than SentenceTransformer(path)


@dataclass(frozen=True)
class Recipe:
    name: str
    help: str
    paper: str
    train: str  # "module:function"
    evaluate: str  # "module:function"
    report_models: tuple[str, ...] = field(default_factory=tuple)  # what the held-out report compares
    devices: bool = False  # trains on any device (the one loop or sentence-transformers' trainer); else the CPU

    @staticmethod
    def _load(dotted: str) -> Callable[..., Any]:
        module, _, fn = dotted.partition(":")
        return getattr(importlib.import_module(module), fn)

    def train_fn(self) -> Callable[..., Any]:
        fn = self._load(self.train)

        def train(cfg, output, on_note=None, *args, **kwargs):
            from xlsent.recipes.loop import is_main_process

            place(self, cfg, on_note)
            # under torchrun / accelerate launch every process trains; the main one reports
            return fn(cfg, output, on_note if is_main_process() else None, *args, **kwargs)

        return train

    def evaluate_fn(self) -> Callable[..., Report]:
        return self._load(self.evaluate)

    @property
    def presets(self) -> list[str]:
        return presets(self.name)


def place(recipe: Recipe, cfg, on_note=None) -> str:
    """Make ``models.device`` the process's device before anything loads (a device that is not there is one
    error line). A recipe whose loop does not place its tensors yet trains on the CPU: said when ``auto`` found
    an accelerator, an error when one was asked for by name."""
    from xlsent.utils.device import TRAINING_DEVICE, device_kind, resolve_device, training_precision, use_device
    from xlsent.utils.errors import XlsentError

    asked = str(cfg.models.get("device", "auto") or "auto")
    device = resolve_device(asked, "models.device")
    if not recipe.devices:
        for key, default in (("precision", "auto"), ("grad_accum", 1)):
            if cfg.optim.get(key, default) != default:
                raise XlsentError(f"optim.{key}={cfg.optim.get(key)}: {recipe.name}'s loop does not take it yet — "
                                  f"leave it at {default}")
    if not recipe.devices and device_kind(device) != "cpu":
        if asked.strip().lower() != "auto":
            raise XlsentError(f"models.device={asked}: {recipe.name} trains on the CPU only for now — use --device cpu")
        if on_note is not None:
            on_note(f"{recipe.name}: trains on the CPU ({device} found; this recipe's loop does not place its tensors "
                    "on an accelerator yet)")
        device = TRAINING_DEVICE
    training_precision(str(cfg.optim.get("precision", "auto")), device)  # fp16 on the CPU: one line, now
    return use_device(device, "models.device")


REGISTRY: dict[str, Recipe] = {r.name: r for r in (
    Recipe("adapt", "The best model for your own pairs: in-batch ranking both ways + self-distillation to the "
           "frozen base model, the step chosen on held-out pairs (--set train.pairs=FILE).",
           "none alone — in-batch ranking (Henderson et al. 2017, sentence-transformers' MultipleNegativesRankingLoss) "
           "+ X-KD's targets (Reimers & Gurevych 2020) as self-distillation", "xlsent.recipes.adapt:train_adapt",
           "xlsent.recipes.adapt:evaluate_after", ("base model", "adapted"), devices=True),
    Recipe("siamese", "Siamese fine-tuning over a frozen encoder (Huang et al. 2023, \"mBERT-SF\").",
           "Huang et al. 2023, ACM TALLIP 22(6)", "xlsent.recipes.siamese:train_siamese",
           "xlsent.recipes.siamese:evaluate_after", ("base model", "trained"), devices=True),
    Recipe("xkd", "X-KD (Reimers & Gurevych 2020): MSE(S(en), T(en)) + MSE(S(xx), T(en)).",
           "Reimers & Gurevych 2020, EMNLP", "xlsent.recipes.xkd:train_xkd",
           "xlsent.recipes._common:evaluate_student", ("base student", "trained"), devices=True),
    Recipe("triplet-kd", "Triplet KD (Manafi 2025, \"Distill-XLMR-Triplet\"): soft-margin triplet loss + λ·KD.",
           "Manafi 2025, §3.2.2", "xlsent.recipes.triplet_kd:train_triplet_kd",
           "xlsent.recipes._common:evaluate_student", ("base student", "trained"), devices=True),
    Recipe("gloss", "Word-gloss SBERT (Manafi 2025, \"Finetuned-SBERT\"): dictionary gloss + triplet fine-tuning "
           "of an English SBERT.", "Manafi 2025, §3.2.2", "xlsent.recipes.gloss:train_gloss",
           "xlsent.recipes.gloss:evaluate_after", ("base SBERT on glossed input", "trained"), devices=True),
    Recipe("lightweight", "Lightweight dual transformer trained from scratch (Mao et al. 2021): joint subword "
           "tokenizer + 2-layer encoder, UGT + align + sim.", "Mao et al. 2021, ACL",
           "xlsent.recipes.lightweight:train_lightweight", "xlsent.recipes.lightweight:evaluate_after",
           ("reference model", "lightweight"), devices=True),
    Recipe("multistage", "Multi-stage distillation (Ding et al. 2022): assistant → bottleneck → recurrence → MCL; "
           "resumable.", "Ding et al. 2022, Findings of NAACL", "xlsent.recipes.multistage:train_multistage",
           "xlsent.recipes.multistage:evaluate_after", ("base assistant", "each stage", "student")),
    Recipe("scp", "Structural contrastive pretraining with CL-MoCo (Chen et al. 2023): aligned subject/verb/object/"
           "entity spans, per-language momentum queues, + MLM.", "Chen et al. 2023, Findings of ACL",
           "xlsent.recipes.scp:train_scp", "xlsent.recipes.scp:evaluate_after", ("base model", "scp"), devices=True),
)}
