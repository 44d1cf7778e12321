from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from xlsent.modules import CenterNormalize, SiameseHead, pool_hidden


def test_center_normalize_is_unit_center_unit():
    x = torch.tensor([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]])
    cn = CenterNormalize(2).fit(x)
    unit = F.normalize(x, dim=-1)
    center = unit.mean(0)
    assert torch.allclose(cn.center, center)
    expected = F.normalize(unit - center, dim=-1)
    assert torch.allclose(cn.apply(x), expected)
    assert torch.allclose(cn.apply(x).norm(dim=-1), torch.ones(3))


def test_hidden_layer_pooling_masks_padding_and_averages_layers():
    h1 = torch.tensor([[[1.0, 1.0], [3.0, 3.0], [100.0, 100.0]]])
    h2 = torch.tensor([[[0.0, 2.0], [2.0, 0.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert pool_hidden(h1, mask, "mean").tolist() == [[2.0, 2.0]]
    assert pool_hidden(h2, mask, "mean").tolist() == [[1.0, 1.0]]  # the padded third token never counts
    assert pool_hidden(h2, mask, "cls").tolist() == [[0.0, 2.0]]
    with pytest.raises(ValueError):
        pool_hidden(h1, mask, "max")


@pytest.mark.parametrize("head_type", ["linear", "tanh", "relu", "tanh2"])
def test_head_shapes_and_identity_start(head_type):
    head = SiameseHead(4, head_type=head_type).eval()
    x = torch.tensor([[0.1, -0.2, 0.3, 0.05]])
    y = head.transform(x)
    assert y.shape == (1, 4)
    if head_type == "linear":
        assert torch.allclose(y, x)
    assert len(head.fcs) == (2 if head_type == "tanh2" else 1)
    head.train()
    assert head.drop.p == 0.2
