"""Matryoshka training (Kusupati et al. 2022) around any recipe loss: sentence-transformers' ``MatryoshkaLoss``
with the distillation targets cut the way the student's vectors are.

sentence-transformers' :class:`~sentence_transformers.sentence_transformer.losses.MatryoshkaLoss` computes the
wrapped loss once a width (the model's forward is run once and its ``sentence_embedding`` cut to the first k
coordinates and **renormalised** for each width) and adds them up, weighted. A label that looks like a batch
of embeddings (``(B, D)`` or ``(B, C, D)`` with ``D`` the model's width) is cut to its first k coordinates too,
but **not** renormalised: a distillation term would then pull a unit-length cut student vector towards a
shorter target (‖t[:k]‖ < 1). :class:`UnitTargets` renormalises such labels before the wrapped loss sees them,
so at every width each term compares what ``--dimensions k`` gives at inference — ``v[:k] / ‖v[:k]‖`` — for the
student and for the frozen model alike (at the full width of a normalising teacher, e5-small's, it changes
nothing). Every term of the wrapped loss is thus applied at every width: adapt's ranking (in-batch, both ways)
and its distillation to the frozen model; xkd's MSE; triplet-kd's and gloss's triplet and KD terms.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from torch import Tensor, nn


class UnitTargets(nn.Module):
    """``loss(features, labels)`` with embedding-shaped float labels renormalised to unit length along the last
    axis (other labels pass through). The wrapped loss's ``model`` and config are its own.

    ``kd_at_cuts=False`` (``loss.matryoshka_kd: full``): at a cut width (labels narrower than ``full``) the wrapped
    loss runs with its ``kd_weight`` at 0 — ranking at every width, distillation at the full width only, so a
    short prefix is not pulled towards the frozen model's own short prefix (e5-small cut to 128 keeps 71–91% of its
    P@1)."""

    def __init__(self, loss: nn.Module, kd_at_cuts: bool = True, full: int | None = None) -> None:
        super().__init__()
        if not kd_at_cuts and not hasattr(loss, "kd_weight"):
            from xlsent.utils.errors import XlsentError

            raise XlsentError(f"config loss.matryoshka_kd=full: {type(loss).__name__} has no distillation weight to "
                              "switch off at the cut widths — use every")
        self.loss, self.kd_at_cuts, self.full = loss, kd_at_cuts, full
        self.model = getattr(loss, "model", None)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        import torch
        import torch.nn.functional as F

        if isinstance(labels, torch.Tensor) and labels.is_floating_point() and labels.ndim in (2, 3):
            if not self.kd_at_cuts and self.full and labels.shape[-1] < self.full:
                weight, self.loss.kd_weight = self.loss.kd_weight, 0.0
                try:
                    return self.loss(sentence_features, labels)
                finally:
                    self.loss.kd_weight = weight
            labels = F.normalize(labels, p=2, dim=-1)
        return self.loss(sentence_features, labels)

    def get_config_dict(self) -> dict[str, Any]:
        inner = getattr(self.loss, "get_config_dict", None)
        return {"loss": type(self.loss).__name__, "unit_targets": True, **(inner() if inner else {})}


def matryoshka_loss(model, loss: nn.Module, dims: Sequence[int], weights: Sequence[float] | None = None,
                    kd: str = "every") -> nn.Module:
    """``loss`` applied at each width of ``dims`` (any order; equal weights when ``weights`` is empty), its
    embedding-shaped targets cut and renormalised like the student's vectors (:class:`UnitTargets`); ``kd="full"``
    keeps the distillation term at the full width only."""
    from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

    inner = UnitTargets(loss, kd_at_cuts=kd != "full", full=model.get_embedding_dimension())
    return MatryoshkaLoss(model, inner, list(dims), list(weights) if weights else None)


def matryoshka_setting(loss_cfg) -> tuple[list[int], list[float]] | None:
    """``(dims, weights)`` of a recipe's ``loss.matryoshka_dims`` / ``matryoshka_weights`` (checked again here for
    callers that bypass the config check), or ``None`` when off (empty, or no ``loss`` section)."""
    from xlsent.models.widths import check_matryoshka

    loss_cfg = loss_cfg or {}
    dims, weights = check_matryoshka(loss_cfg.get("matryoshka_dims") or [],
                                     loss_cfg.get("matryoshka_weights") or [], None)
    return (dims, weights) if dims else None


def matryoshka_hash_part(loss_cfg) -> list:
    """What a recipe that does not hash its whole ``loss`` section adds to its config hash: nothing when
    Matryoshka training is off (earlier run folders stay valid), the setting when it is on."""
    setting = matryoshka_setting(loss_cfg)
    return [{"matryoshka": setting}] if setting else []


class MatryoshkaWidths:
    """A recipe's Matryoshka setting as :func:`xlsent.training.trainer.train_stage` takes it (``loss_wrapper``):
    :meth:`wrap` the loss before training (:func:`matryoshka_loss`), :meth:`write` the widths into the saved model
    (:func:`xlsent.models.widths.write_widths`), :meth:`record` them in the stage record."""

    def __init__(self, dims: Sequence[int], weights: Sequence[float], kd: str = "every") -> None:
        self.dims, self.weights, self.kd = list(dims), list(weights), kd
        self.inner_name = ""

    def wrap(self, model, loss: nn.Module) -> nn.Module:
        """``loss`` at every width; an error when a width is more than the model's."""
        full = model.get_embedding_dimension()
        if full and max(self.dims) > full:
            from xlsent.utils.errors import XlsentError

            raise XlsentError(f"config loss.matryoshka_dims={self.dims}: {max(self.dims)} is more than the model's "
                              f"width ({full}) — give widths from 1 to {full}")
        self.inner_name = type(loss).__name__
        return matryoshka_loss(model, loss, self.dims, self.weights, kd=self.kd)

    def write(self, model_folder) -> None:
        """The widths, in the model folder being saved."""
        from xlsent.models.widths import write_widths

        write_widths(model_folder, self.dims, self.weights or [1.0] * len(self.dims), self.inner_name)

    def record(self) -> dict:
        """The stage record's ``matryoshka`` entry."""
        return {"matryoshka": {"dims": sorted(self.dims, reverse=True), "weights": self.weights or "equal",
                               **({"kd": self.kd} if self.kd != "every" else {})}}


def matryoshka_widths(loss_cfg, kd: str = "every") -> MatryoshkaWidths | None:
    """The :class:`MatryoshkaWidths` of a recipe's ``loss`` section (``kd``: ``loss.matryoshka_kd``, for the
    recipes that read it), or ``None`` when Matryoshka training is off."""
    setting = matryoshka_setting(loss_cfg)
    return MatryoshkaWidths(*setting, kd=kd) if setting else None
