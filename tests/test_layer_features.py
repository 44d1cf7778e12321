from __future__ import annotations

import numpy as np
import pytest
import torch

from xlsent.encoding.layer_features import LayerFeatures, parse_spec
from xlsent.models.handle import load_model
from xlsent.utils.errors import XlsentError

TEXTS = ["god is good", "the river is wide and the water is light", "mulungu ndi wabwino", "madzi"]


def test_cut_encoder_features_equal_full_hidden_states(tiny_model, tmp_path):
    handle = load_model(str(tiny_model))
    model = handle.model
    lf = LayerFeatures(handle, batch_size=2, cache_root=tmp_path)
    feats = lf.compute(TEXTS, ["mean:1", "cls:2", "mean:all"], show_progress=False)
    batch = model[0].preprocess(TEXTS)
    with torch.no_grad():
        hs = model[0].auto_model(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], output_hidden_states=True
        ).hidden_states
    mask = batch["attention_mask"].unsqueeze(-1).float()
    mean = lambda h: ((h * mask).sum(1) / mask.sum(1)).numpy()  # noqa: E731
    np.testing.assert_allclose(feats["mean:1"], mean(hs[1]), atol=1e-5)
    np.testing.assert_allclose(feats["cls:2"], hs[2][:, 0].numpy(), atol=1e-5)
    np.testing.assert_allclose(feats["mean:all"], np.mean([mean(h) for h in hs[1:]], 0), atol=1e-5)


def test_mean_last_equals_model_encode(tiny_model, tmp_path):
    handle = load_model(str(tiny_model))
    model = handle.model
    lf = LayerFeatures(handle, cache_root=tmp_path)
    x = lf.get(TEXTS, ["mean:last"], show_progress=False)["mean:last"]
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(x, model.encode(TEXTS), atol=1e-5)


def test_cache_hits_do_not_recompute(tiny_model, tmp_path, monkeypatch):
    handle = load_model(str(tiny_model))
    first = LayerFeatures(handle, cache_root=tmp_path).get(TEXTS, ["mean:3"], show_progress=False)["mean:3"]
    again = LayerFeatures(handle, cache_root=tmp_path)
    monkeypatch.setattr(again, "compute", lambda *a, **k: pytest.fail("recomputed cached features"))
    np.testing.assert_array_equal(again.get(TEXTS[::-1], ["mean:last"], show_progress=False)["mean:last"], first[::-1])


def test_parse_spec_errors():
    assert parse_spec("mean:all", 3) == ("mean", [1, 2, 3])
    assert parse_spec("cls:last", 3) == ("cls", [3])
    for bad in ("mean7", "max:7", "mean:13", "mean:x"):
        with pytest.raises(XlsentError):
            parse_spec(bad, 12)
