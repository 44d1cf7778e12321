from __future__ import annotations

import math

import pytest
import torch

from xlsent.losses import SiameseContrastiveLoss, contrastive_loss, pair_distance


def test_contrastive_loss_matches_formula_by_hand():
    a = torch.tensor([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    b = torch.tensor([[3.0, 4.0], [0.3, 0.4], [3.0, 4.0]])
    # D = 5, 0.5, 5 ; labels: 0 = parallel, 1 = non-parallel ; m = 1
    labels = torch.tensor([0, 1, 1])
    per = contrastive_loss(a, b, labels, margin=1.0, reduction="none")
    assert per.tolist() == pytest.approx([0.5 * 25, 0.5 * (1 - 0.5) ** 2, 0.0])
    assert float(contrastive_loss(a, b, labels)) == pytest.approx((12.5 + 0.125) / 3)


def test_label_convention_is_the_papers_not_sentence_transformers():
    a, b = torch.zeros(1, 2), torch.tensor([[0.1, 0.0]])
    parallel = contrastive_loss(a, b, torch.tensor([0]), reduction="none")
    non_parallel = contrastive_loss(a, b, torch.tensor([1]), reduction="none")
    assert float(parallel) == pytest.approx(0.5 * 0.01)  # close parallel pair: small loss
    assert float(non_parallel) == pytest.approx(0.5 * 0.81)  # close non-parallel pair: pushed apart


def test_distances():
    a, b = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 2.0]])
    assert float(pair_distance(a, b, "euclidean")) == pytest.approx(math.sqrt(5))
    assert float(pair_distance(a, b, "manhattan")) == pytest.approx(3.0)
    assert float(pair_distance(a, b, "cosine")) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        pair_distance(a, b, "hamming")


def test_average_strategy_averages_over_candidates():
    a = torch.zeros(1, 2)
    b = torch.tensor([[[0.5, 0.0], [2.0, 0.0]]])  # two negative candidates: D = 0.5 and 2
    per = contrastive_loss(a, b, torch.tensor([1]), reduction="none")
    assert float(per) == pytest.approx((0.5 * 0.25 + 0.0) / 2)


def test_loss_class_runs_through_a_sentence_transformer(tiny_model):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(tiny_model), device="cpu")
    loss = SiameseContrastiveLoss(model, margin=1.0)
    f1 = model.preprocess(["god is good", "the river is wide"])
    f2 = model.preprocess(["mulungu ndi wabwino", "madzi"])
    value = loss([f1, f2], torch.tensor([0, 1]))
    value.backward()
    e1 = model.encode(["god is good", "the river is wide"], convert_to_tensor=True)
    e2 = model.encode(["mulungu ndi wabwino", "madzi"], convert_to_tensor=True)
    assert float(value.detach()) == pytest.approx(float(contrastive_loss(e1, e2, torch.tensor([0, 1]))), rel=1e-4)
    assert loss.get_config_dict()["labels"].startswith("0 = parallel")
