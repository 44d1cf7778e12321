"""Distillation losses against their formulas on hand-made tensors."""

from __future__ import annotations

import math

import pytest
import torch

from xlsent.losses import MultilingualContrastiveLoss, SoftMarginTripletDistillLoss, mcl_loss, soft_margin_triplet_loss


def test_soft_margin_triplet_matches_eq_3_1():
    a = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
    p = torch.tensor([[3.0, 4.0], [1.0, 1.0]])  # d(a,p) = 5, 0
    n = torch.tensor([[0.0, 1.0], [1.0, 3.0]])  # d(a,n) = 1, 2
    alpha = 0.5
    expected = (math.log(1 + math.exp(5 - 1 + alpha)) + math.log(1 + math.exp(0 - 2 + alpha))) / 2
    assert soft_margin_triplet_loss(a, p, n, alpha).item() == pytest.approx(expected, rel=1e-6)
    # never zero: unlike a hinge, a satisfied triplet still has a (small) gradient
    assert soft_margin_triplet_loss(a, a, a + 10, 0.0).item() > 0


def test_triplet_kd_term_is_squared_l2_sum_times_lambda():
    loss = SoftMarginTripletDistillLoss(model=None, margin=1.0, kd_weight=0.9)
    a = torch.zeros(2, 3)
    p = torch.tensor([[1.0, 0, 0], [0, 1.0, 0]])
    n = torch.tensor([[0, 0, 1.0], [0, 0, 2.0]])
    tp = torch.zeros(2, 3)
    tn = torch.tensor([[0, 0, 1.0], [0, 0, 0.0]])
    labels = torch.stack([tp, tn], 1)
    kd = ((1 + 0) + (1 + 4)) / 2  # (‖p−tp‖² + ‖n−tn‖²) averaged over the batch
    expected = soft_margin_triplet_loss(a, p, n, 1.0).item() + 0.9 * kd
    assert loss.compute_loss_from_embeddings(a, p, n, labels).item() == pytest.approx(expected, rel=1e-6)
    with pytest.raises(ValueError, match=r"\(batch, 2, dim\)"):
        loss.compute_loss_from_embeddings(a, p, n, tp)


def _cos(x, y):
    x = torch.nn.functional.normalize(x, dim=-1)
    y = torch.nn.functional.normalize(y, dim=-1)
    return x @ y.T


def test_mcl_soft_counts_every_entry_including_the_diagonal():
    t = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # φ_T = I
    s_en = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    s_xx = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # φ_S = [[1, 0], [1, 0]]
    # differences: [[0, 0], [-1, 1]] → (0 + 0 + 1 + 1) / 4; the (2,2) diagonal entry contributes 1
    assert mcl_loss(t, s_en, s_xx, "soft").item() == pytest.approx(0.5)


def test_mcl_variants_against_formulas():
    g = torch.Generator().manual_seed(0)
    t, s_en, s_xx = (torch.randn(4, 5, generator=g) for _ in range(3))
    phi_t, phi_s = _cos(t, t), _cos(s_en, s_xx)
    assert mcl_loss(t, s_en, s_xx, "soft").item() == pytest.approx(((phi_t - phi_s) ** 2).mean().item(), rel=1e-5)
    assert mcl_loss(t, s_en, s_xx, "bool").item() == pytest.approx(((torch.eye(4) - phi_s) ** 2).mean().item(), rel=1e-5)
    tau = 0.05
    ce = 0.0
    for i in range(4):
        denom = sum(math.exp(phi_s[i, k].item() / tau) for k in range(4))
        ce -= sum(phi_t[i, j].item() * math.log(math.exp(phi_s[i, j].item() / tau) / denom) for j in range(4))
    assert mcl_loss(t, s_en, s_xx, "ce", tau).item() == pytest.approx(ce / 4, rel=1e-4)
    assert mcl_loss(t, s_en, s_xx, "off").item() == 0.0
    with pytest.raises(ValueError):
        mcl_loss(t, s_en, s_xx, "hard")


def test_mcl_total_adds_kd_mse_on_both_sides():
    t = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    s_en = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    s_xx = torch.tensor([[0.0, 1.0], [0.0, 1.0]])
    loss = MultilingualContrastiveLoss(model=None, variant="off")
    kd = ((s_en - t) ** 2).mean() + ((s_xx - t) ** 2).mean()
    assert loss.compute_loss_from_embeddings(s_en, s_xx, t).item() == pytest.approx(kd.item())
    both = MultilingualContrastiveLoss(model=None, variant="soft")
    assert both.compute_loss_from_embeddings(s_en, s_xx, t).item() == pytest.approx(
        kd.item() + mcl_loss(t, s_en, s_xx, "soft").item()
    )


def test_losses_train_a_sentence_transformer(tiny_model):
    """Through a real model: features in, a finite loss with gradients out."""
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(tiny_model), device="cpu")
    feats = [st.preprocess(x) for x in (["god is good", "the river"], ["mulungu ndi wabwino", "mtsinje"],
                                         ["water light", "he said"])]
    labels = torch.randn(2, 2, st.get_embedding_dimension())
    loss = SoftMarginTripletDistillLoss(st)(feats, labels)
    loss.backward()
    assert torch.isfinite(loss) and any(p.grad is not None and p.grad.abs().sum() > 0 for p in st.parameters())
    st.zero_grad()
    loss = MultilingualContrastiveLoss(st, "soft")(feats[:2], labels[:, 0])
    loss.backward()
    assert torch.isfinite(loss)


def test_contrastive_distill_is_infonce_plus_mse():
    from xlsent.losses import ContrastiveDistillLoss, contrastive_distill_loss

    g = torch.Generator().manual_seed(1)
    s_en, s_xx, t_en, t_xx = (torch.randn(3, 4, generator=g) for _ in range(4))
    s, t = torch.cat([s_en, s_xx]), torch.cat([t_en, t_xx])
    logits = _cos(s, t) / 0.1
    expected_ce = torch.nn.functional.cross_entropy(logits, torch.arange(6))
    assert contrastive_distill_loss(s, t, 0.1).item() == pytest.approx(expected_ce.item(), rel=1e-5)
    loss = ContrastiveDistillLoss(model=None, temperature=0.1, contrastive_weight=0.5, mse_weight=2.0)
    labels = torch.stack([t_en, t_xx], 1)  # (batch, columns, dim), as stage 3 stores them
    expected = 2.0 * ((s - t) ** 2).mean() + 0.5 * expected_ce
    assert loss.compute_loss_from_embeddings([s_en, s_xx], labels).item() == pytest.approx(expected.item(), rel=1e-5)


def test_contrastive_distill_counts_equal_targets_as_positives():
    from xlsent.losses import contrastive_distill_loss

    t = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # rows 0 and 1 share a target
    s = torch.tensor([[1.0, 0.1], [0.9, 0.0], [0.0, 1.0]])
    p = torch.softmax(_cos(s, t) / 0.5, dim=1)
    expected = -(torch.log(p[0, 0] + p[0, 1]) + torch.log(p[1, 0] + p[1, 1]) + torch.log(p[2, 2])) / 3
    assert contrastive_distill_loss(s, t, 0.5).item() == pytest.approx(expected.item(), rel=1e-5)


def test_mcl_infonce_option_adds_contrastive_kd_against_the_english_target():
    from xlsent.losses import contrastive_distill_loss

    g = torch.Generator().manual_seed(2)
    t, s_en, s_xx = (torch.randn(4, 6, generator=g) for _ in range(3))
    paper = MultilingualContrastiveLoss(model=None, variant="soft")
    plus = MultilingualContrastiveLoss(model=None, variant="soft", infonce_weight=0.5, infonce_temperature=0.1)
    extra = contrastive_distill_loss(torch.cat([s_en, s_xx]), torch.cat([t, t]), 0.1)
    got = plus.compute_loss_from_embeddings(s_en, s_xx, t) - paper.compute_loss_from_embeddings(s_en, s_xx, t)
    assert got.item() == pytest.approx(0.5 * extra.item(), rel=1e-5)
    # each row has two positives (S(en_i) and S(xx_i) share the target T(en_i)): the loss is below plain CE
    assert extra.item() < torch.nn.functional.cross_entropy(
        _cos(torch.cat([s_en, s_xx]), torch.cat([t, t])) / 0.1, torch.cat([torch.arange(4), torch.arange(4)])).item()
    assert paper.get_config_dict()["infonce_weight"] == 0.0
