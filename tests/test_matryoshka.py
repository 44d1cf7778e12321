"""Matryoshka training (issue 50 §1): ``loss.matryoshka_dims`` on the recipes that train through
sentence-transformers' trainer, the widths recorded in the model folder, and the loss at every width."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import build_tiny_model

WIDTHS = [32, 16, 8]  # the tiny model is 32 wide


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("mrl")
    return {"student": build_tiny_model(root / "student", layers=2, seed=2, prompt="passage: "),
            "teacher": build_tiny_model(root / "teacher", layers=2, seed=1)}


def test_adapt_with_matryoshka_dims_trains_records_its_widths_and_cuts(models, pairs_tsv, tmp_path):
    from sentence_transformers import SentenceTransformer
    from test_cli import xlsent

    from xlsent.models.widths import WIDTHS_FILE, recorded_widths
    from xlsent.recipes.adapt import train_adapt
    from xlsent.recipes.config import load_config

    cfg = load_config("adapt", None, [f"models.student={models['student']}", f"train.pairs={pairs_tsv}",
                                      "loss.matryoshka_dims=8,32,16", "optim.max_steps=3", "optim.batch_size=8",
                                      "optim.lr=1e-3", "optim.logging_steps=1"])
    assert cfg.loss.matryoshka_dims == [8, 32, 16]
    model = train_adapt(cfg, tmp_path, None, False).model_path
    record = json.loads((model / WIDTHS_FILE).read_text())
    assert record["dims"] == WIDTHS and record["weights"] == [1.0, 1.0, 1.0]
    assert record["loss"] == "RankingDistillLoss"
    assert recorded_widths(model) == WIDTHS
    stage = json.loads((tmp_path / "stage.json").read_text())
    assert stage["matryoshka"]["dims"] == WIDTHS and stage["steps"] == 3
    assert "matryoshka_dims:\n  - 8\n  - 32\n  - 16" in (tmp_path / "config.yaml").read_text()  # saved with the run

    full = SentenceTransformer(str(model), device="cpu").encode(["mulungu ndi wabwino"], normalize_embeddings=True)
    cut = SentenceTransformer(str(model), device="cpu", truncate_dim=8).encode(["mulungu ndi wabwino"])
    assert cut.shape == (1, 8)
    np.testing.assert_allclose(cut / np.linalg.norm(cut), full[:, :8] / np.linalg.norm(full[:, :8]), atol=1e-5)

    out = xlsent("models", "info", str(model), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["matryoshka_widths"] == WIDTHS
    table = xlsent("models", "info", str(model))
    assert "matryoshka_widths" in table.stdout and "32, 16, 8" in table.stdout


def test_plain_adapt_records_no_widths_and_keeps_its_config_hash(models, pairs_tsv, tmp_path):
    """Off by default: no record, and the run folder's hash is the one it had before the keys existed."""
    from xlsent.models.widths import recorded_widths
    from xlsent.recipes.adapt import train_adapt
    from xlsent.recipes.config import load_config
    from xlsent.training.run_folder import config_hash

    cfg = load_config("adapt", None, [f"models.student={models['student']}", f"train.pairs={pairs_tsv}",
                                      "optim.max_steps=1", "optim.batch_size=8"])
    loss = dict(cfg.loss)
    assert config_hash(loss) == config_hash({k: v for k, v in loss.items() if not k.startswith("matryoshka")})
    model = train_adapt(cfg, tmp_path, None, False).model_path
    assert recorded_widths(model) == [] and "matryoshka" not in json.loads((tmp_path / "stage.json").read_text())


@pytest.mark.parametrize("recipe, overrides", [
    ("xkd", ["optim.batch_size=8"]),
    ("triplet-kd", ["negatives.strategy=random", "optim.batch_size=8"]),
])
def test_the_distillation_recipes_take_matryoshka_dims(models, pairs_tsv, tmp_path, recipe, overrides):
    from xlsent.models.widths import recorded_widths
    from xlsent.recipes.config import load_config
    from xlsent.recipes.registry import REGISTRY

    cfg = load_config(recipe, None, [f"models.student={models['student']}", f"models.teacher={models['teacher']}",
                                     f"train.pairs={pairs_tsv}", "optim.max_steps=2", "loss.matryoshka_dims=32,8",
                                     "loss.matryoshka_weights=1,0.5", *overrides])
    REGISTRY[recipe].train_fn()(cfg, tmp_path, None, False)
    assert recorded_widths(tmp_path / "model") == [32, 8]
    assert json.loads((tmp_path / "model" / "xlsent_matryoshka.json").read_text())["weights"] == [1.0, 0.5]


@pytest.mark.parametrize("setting, message", [
    ("loss.matryoshka_dims=64,16", "loss.matryoshka_dims=[64, 16]: 64 is more than"),
    ("loss.matryoshka_dims=0,16", "every width must be > 0"),
    ("loss.matryoshka_dims=16,16", "a width is given twice"),
    ("loss.matryoshka_dims=wide", "expected whole numbers (widths)"),
    ("loss.matryoshka_weights=1,1", "weights without loss.matryoshka_dims"),
    ("loss.matryoshka_kd=some", "not every or full"),
])
def test_bad_widths_fail_in_one_line_before_any_model_loads(models, pairs_tsv, setting, message):
    from xlsent.recipes.config import load_config
    from xlsent.utils.errors import XlsentError

    with pytest.raises(XlsentError) as exc:
        load_config("adapt", None, [f"models.student={models['student']}", f"train.pairs={pairs_tsv}", setting])
    assert message in str(exc.value) and "\n" not in str(exc.value)
    if "more than" in message:
        assert "width (32)" in str(exc.value)


def test_wrong_weight_count_and_a_registered_models_width(pairs_tsv):
    from xlsent.recipes.config import load_config
    from xlsent.utils.errors import XlsentError

    with pytest.raises(XlsentError, match="2 weight\\(s\\) for 3 width\\(s\\)"):
        load_config("xkd", None, ["loss.matryoshka_dims=384,128,64", "loss.matryoshka_weights=1,1"])
    with pytest.raises(XlsentError, match="more than e5-small's width \\(384\\)"):  # from the registry: no load
        load_config("adapt", None, ["loss.matryoshka_dims=768,384"])


def test_the_wrapped_loss_is_every_term_at_every_width_with_renormalised_targets(models):
    """MatryoshkaLoss around adapt's loss = Σ_k w_k · (ranking + λ·KD) on the cut, renormalised student vectors
    against the cut, renormalised frozen targets — computed here by hand and compared."""
    import torch
    import torch.nn.functional as F
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

    from xlsent.losses import RankingDistillLoss
    from xlsent.losses.matryoshka import UnitTargets, matryoshka_loss

    model = SentenceTransformer(str(models["student"]), device="cpu")
    model.eval()  # no dropout: the two computations see the same vectors
    anchors = ["mulungu ndi wabwino", "mtsinje madzi", "kuwala dziko", "nyumba chala"]
    positives = ["god is good", "the river water", "light earth", "house of the lord"]
    feats = [model.tokenize(anchors), model.tokenize(positives)]
    torch.manual_seed(0)
    labels = torch.randn(4, 32) * 3  # targets not of unit length: the wrapper must renormalise each cut
    inner = RankingDistillLoss(model, kd_weight=1.0)
    wrapped = matryoshka_loss(model, inner, [8, 32, 16], [0.5, 1.0, 2.0])
    assert isinstance(wrapped, MatryoshkaLoss) and isinstance(wrapped.loss, UnitTargets)
    got = wrapped([dict(f) for f in feats], labels)

    with torch.no_grad():
        emb = [model(dict(f))["sentence_embedding"] for f in feats]
        want = sum(w * inner.compute_loss_from_embeddings([F.normalize(e[:, :k], dim=-1) for e in emb],
                                                          F.normalize(labels[:, :k], dim=-1))
                   for k, w in ((32, 1.0), (16, 2.0), (8, 0.5)))
        plain = inner([dict(f) for f in feats], F.normalize(labels, dim=-1))
    assert float(got) == pytest.approx(float(want), rel=1e-5)
    assert float(got) != pytest.approx(float(plain), rel=1e-3)  # not the full-width loss alone

    # loss.matryoshka_kd=full: ranking at every width, the distillation term at the full width only
    kd_full = matryoshka_loss(model, inner, [8, 32, 16], [0.5, 1.0, 2.0], kd="full")([dict(f) for f in feats], labels)
    ranking_only = RankingDistillLoss(model, kd_weight=0.0)
    with torch.no_grad():
        want_full = sum(w * (ranking_only if k < 32 else inner).compute_loss_from_embeddings(
            [F.normalize(e[:, :k], dim=-1) for e in emb], F.normalize(labels[:, :k], dim=-1))
            for k, w in ((32, 1.0), (16, 2.0), (8, 0.5)))
    assert float(kd_full) == pytest.approx(float(want_full), rel=1e-5)
    assert float(kd_full) < float(got) and inner.kd_weight == 1.0  # less KD, and the weight is put back
    from xlsent.utils.errors import XlsentError

    with pytest.raises(XlsentError, match="matryoshka_kd=full"):
        matryoshka_loss(model, torch.nn.MSELoss(), [8], kd="full")

    # the gradient reaches the model through every width: a width-8-only loss moves the first 8 coordinates' weights
    model.zero_grad()
    matryoshka_loss(model, inner, [8])([dict(f) for f in feats], labels).backward()
    dense = [p for n, p in model.named_parameters() if p.requires_grad and p.grad is not None]
    assert dense and any(float(p.grad.abs().sum()) > 0 for p in dense)
