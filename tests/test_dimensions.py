"""``--dimensions`` / ``dimensions=`` (issue 50 §2): a vector cut to its first N coordinates and renormalised, the
same wherever it leaves xlsent — the encoder, :func:`xlsent.embed`, ``xlsent embed``, mining, evaluation and the
service (``dimensions`` and the int8 / ubinary encoding formats of ``/v1/embeddings``)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from test_cli import xlsent as run_cli

TEXTS = ["god is good", "the river is wide", "mulungu ndi wabwino", "madzi", "he said unto the lord"]


def prefix(x, n):
    x = np.asarray(x, np.float32)[:, :n]
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# -- the one cut, and the width read from a folder --------------------------------------------------------------

def test_cut_is_the_renormalised_prefix_and_checks_its_width():
    from xlsent.encoding.width import cut, valid_width
    from xlsent.utils.errors import XlsentError

    x = np.random.default_rng(0).normal(size=(4, 10)).astype(np.float32)
    got = cut(x, 3)
    assert got.shape == (4, 3) and np.allclose(got, prefix(x, 3), atol=1e-7)
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-6)
    assert cut(x, None) is not None and np.array_equal(cut(x, None), x)
    zero = cut(np.zeros((1, 10), np.float32), 4)
    assert np.array_equal(zero, np.zeros((1, 4), np.float32))  # a zero row stays zero, no NaN
    with pytest.raises(XlsentError, match="more than the model's width"):
        cut(x, 11)
    for bad, words in ((0, "must be ≥ 1"), (-3, "must be ≥ 1"), (11, "more than the model's width (10)"),
                       (2.5, "not a whole number"), (True, "not a whole number"), ("8", "not a whole number")):
        with pytest.raises(XlsentError, match="dimensions=") as exc:
            valid_width(bad, 10)
        assert words in str(exc.value) and "\n" not in str(exc.value) and "--" not in str(exc.value)
    assert valid_width(10, 10) == 10 and valid_width(None, 10) is None and valid_width(np.int64(4), 10) == 4


def test_the_width_is_read_from_the_folder_without_loading(tiny_model, tmp_path, monkeypatch):
    import sentence_transformers

    from xlsent.encoding.width import check_dimensions, model_width
    from xlsent.models.widths import WIDTHS_FILE, folder_dimension, recorded_widths

    def refuse(*a, **k):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(sentence_transformers.SentenceTransformer, "__init__", refuse)
    assert folder_dimension(tiny_model) == 32 and model_width(str(tiny_model)) == 32
    assert check_dimensions(str(tiny_model), 8) == 8
    # a Dense head sets the width; the older pooling layout (one flag a mode) counts its modes
    folder = tmp_path / "m"
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "2_Dense").mkdir()
    (folder / "config.json").write_text(json.dumps({"hidden_size": 48}))
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 48, "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True}))
    (folder / "2_Dense" / "config.json").write_text(json.dumps({"in_features": 96, "out_features": 24}))
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.base.modules.transformer.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
               {"idx": 3, "name": "3", "path": "3_Normalize", "type": "sentence_transformers.models.Normalize"}]
    (folder / "modules.json").write_text(json.dumps(modules))
    assert folder_dimension(folder) == 24
    (folder / "modules.json").write_text(json.dumps(modules[:2]))
    assert folder_dimension(folder) == 96
    (folder / "modules.json").write_text(json.dumps(modules[:1]))
    assert folder_dimension(folder) == 48
    (folder / "modules.json").write_text(json.dumps([*modules[:2], {"path": "x", "type": "my.Custom"}]))
    assert folder_dimension(folder) is None  # only loading would tell: checked once the model is loaded
    assert recorded_widths(folder) == []
    (folder / WIDTHS_FILE).write_text(json.dumps({"dims": [64, 256, 128, 256]}))
    assert recorded_widths(folder) == [256, 128, 64]


def test_the_encoder_cuts_last_and_keys_its_caches_by_the_width(tiny_model):
    from xlsent.encoding.encoder import Encoder, FunctionBackend
    from xlsent.exporter.load import load_encoder
    from xlsent.utils.errors import XlsentError

    full = load_encoder(str(tiny_model))
    cut = full.replace(dimensions=8)
    ref = full.encode(TEXTS)
    assert cut.dimension == 8 and full.dimension == 32
    assert np.allclose(cut.encode(TEXTS), prefix(ref, 8), atol=1e-6)
    assert cut.replace(batch_size=2).dimensions == 8  # every copy keeps it (mining's shards, evaluation's memo)
    assert cut.fingerprint != full.fingerprint and cut.fingerprint != full.replace(dimensions=16).fingerprint
    chunked = full.replace(chunk_words=2, dimensions=8)
    assert np.allclose(chunked.encode(TEXTS), prefix(full.replace(chunk_words=2).encode(TEXTS), 8), atol=1e-6)
    assert cut.encode([]).shape == (0, 8)
    with pytest.raises(XlsentError, match="dimensions=33: more than the model's width"):
        full.replace(dimensions=33)
    # a width only known once the model runs: one clear line then
    unknown = Encoder(FunctionBackend(lambda t: np.ones((len(t), 4), np.float32)), dimensions=6)
    with pytest.raises(XlsentError, match="dimensions=6: more than the model's width"):
        unknown.encode(["x"])


# -- the Python API and the command line -------------------------------------------------------------------------

def test_embed_cuts_then_quantises(tiny_model, tmp_path):
    import xlsent
    from xlsent.mining.store import quantize_int8

    full = xlsent.embed(TEXTS, model=str(tiny_model))
    got = xlsent.embed(TEXTS, model=str(tiny_model), dimensions=12)
    assert got.shape == (5, 12) and np.allclose(got, prefix(full, 12), atol=1e-6)
    assert np.allclose(xlsent.embed(TEXTS, model=str(tiny_model), dimensions=32), prefix(full, 32), atol=1e-6)
    binary = xlsent.embed(TEXTS, model=str(tiny_model), dimensions=12, precision="ubinary")
    assert binary.shape == (5, 2) and np.array_equal(binary, np.packbits(prefix(full, 12) > 0, axis=-1))
    q = xlsent.embed(TEXTS, model=str(tiny_model), dimensions=12, precision="int8")
    ref = quantize_int8(prefix(full, 12), 12)
    assert q["q"].shape == (5, 12) and (np.abs(q["q"].astype(int) - ref["q"]) <= 1).all()
    assert np.allclose(q["scale"], ref["scale"], rtol=1e-5)


def test_a_stored_language_mean_is_subtracted_at_full_width_before_the_cut(make_tiny_model, tmp_path):
    import xlsent

    model = make_tiny_model(tmp_path / "tiny")
    xlsent.calibrate(str(model), {"nya": ["mulungu ndi wabwino", "madzi", "mtsinje kuwala"]})
    full = xlsent.embed(TEXTS, model=str(model), lang="nya", center=True)
    got = xlsent.embed(TEXTS, model=str(model), lang="nya", center=True, dimensions=10)
    assert got.shape == (5, 10) and np.allclose(got, prefix(full, 10), atol=1e-6)


def test_embed_command_and_its_bad_widths(tiny_model, tmp_path):
    (tmp_path / "in.txt").write_text("".join(t + "\n" for t in TEXTS), encoding="utf-8")
    r = run_cli("embed", "-m", str(tiny_model), "-i", str(tmp_path / "in.txt"), "-o", str(tmp_path / "full.npy"))
    assert r.returncode == 0, r.stderr
    r = run_cli("embed", "-m", str(tiny_model), "-i", str(tmp_path / "in.txt"), "-o", str(tmp_path / "cut.npy"),
                "--dimensions", "12", "--precision", "ubinary")
    assert r.returncode == 0 and "rows × 12 dimensions, ubinary, 2 packed bytes a row" in r.stdout, r.stdout + r.stderr
    full = np.load(tmp_path / "full.npy")
    assert np.array_equal(np.load(tmp_path / "cut.npy"), np.packbits(prefix(full, 12) > 0, axis=-1))
    r = run_cli("embed", "-m", str(tiny_model), "-i", str(tmp_path / "in.txt"), "-o", str(tmp_path / "shards"),
                "--dimensions", "12", "--shard-size", "2")
    assert r.returncode == 0, r.stderr
    from xlsent.mining.embed_job import read_shards

    assert json.loads((tmp_path / "shards" / "_manifest.json").read_text())["dimension"] == 12
    assert np.allclose(read_shards(tmp_path / "shards")[1], prefix(full, 12), atol=1e-6)


def test_mining_and_evaluation_at_a_width(tiny_model, pairs_tsv, tmp_path):
    import xlsent
    from xlsent.encoding.encoder import Encoder, FunctionBackend
    from xlsent.encoding.width import cut
    from xlsent.mining.engine import EncodeWorker, EncoderSettings

    en = ["god is good", "the river is wide", "water light earth"]
    ny = ["madzi kuwala dziko", "mulungu ndi wabwino", "mtsinje"]
    found = xlsent.mine(en, ny, model=str(tiny_model), threshold=None, filters="none", dimensions=8,
                        workdir=tmp_path / "work")
    assert found.pairs
    stores = [json.loads(p.read_text()) for p in (tmp_path / "work").rglob("store.json")]
    assert stores and all(s["dim"] == 8 for s in stores)
    with pytest.raises(Exception, match="--overwrite"):  # another width never reuses those shards
        xlsent.mine(en, ny, model=str(tiny_model), threshold=None, filters="none", dimensions=16,
                    workdir=tmp_path / "work")
    # a Ray encoder worker loads the model cut to the same width
    assert EncodeWorker(EncoderSettings(str(tiny_model), threads=1, dimensions=8)).encoder.dimension == 8
    # evaluation at a width scores exactly the cut vectors
    full = xlsent.load(str(tiny_model))
    cut_encoder = Encoder(FunctionBackend(lambda t: cut(full.encode(t), 8), dimension=8))
    ours = xlsent.evaluate(str(tiny_model), "retrieval", pairs=pairs_tsv, dimensions=8, beside=False, resamples=10)
    theirs = xlsent.evaluate(cut_encoder, "retrieval", pairs=pairs_tsv, beside=False, resamples=10)
    assert ours.main_score == pytest.approx(theirs.main_score)


# -- the service ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def served(tiny_model):
    from fastapi.testclient import TestClient

    from xlsent.serve.app import Service, create_app

    service = Service(str(tiny_model), name="tiny")
    service.load()
    yield TestClient(create_app(service, load=False))
    service.close()


def _vectors(r):
    assert r.status_code == 200, r.text
    return np.array([d["embedding"] for d in r.json()["data"]], np.float32)


def test_service_dimensions_are_the_renormalised_prefix(served):
    full = _vectors(served.post("/v1/embeddings", json={"input": TEXTS}))
    for n in (1, 8, 20, 32):
        got = _vectors(served.post("/v1/embeddings", json={"input": TEXTS, "dimensions": n}))
        assert got.shape == (5, n) and np.abs(got - prefix(full, n)).max() <= 1e-6
        b64 = served.post("/v1/embeddings", json={"input": TEXTS, "dimensions": n, "encoding_format": "base64"})
        vecs = np.array([np.frombuffer(base64.b64decode(d["embedding"]), "<f4") for d in b64.json()["data"]])
        assert np.abs(vecs - prefix(full, n)).max() <= 1e-6
        tei = np.array(served.post("/embed", json={"inputs": TEXTS, "dimensions": n}).json(), np.float32)
        assert np.abs(tei - prefix(full, n)).max() <= 1e-6


def test_service_int8_and_ubinary_layouts(served):
    full = _vectors(served.post("/v1/embeddings", json={"input": TEXTS}))
    r = served.post("/v1/embeddings", json={"input": TEXTS, "dimensions": 12, "encoding_format": "ubinary"})
    assert r.status_code == 200, r.text
    bits = np.array([d["embedding"] for d in r.json()["data"]])
    assert bits.shape == (5, 2) and np.array_equal(bits, np.packbits(prefix(full, 12) > 0, axis=-1))
    assert np.array_equal(np.unpackbits(bits.astype(np.uint8), axis=1)[:, :12], prefix(full, 12) > 0)
    r = served.post("/v1/embeddings", json={"input": TEXTS, "encoding_format": "int8"})
    data = r.json()["data"]
    q = np.array([d["embedding"] for d in data])
    scale = np.array([d["scale"] for d in data])
    assert q.shape == (5, 32) and np.abs(q).max() == 127 and all(isinstance(x, int) for x in data[0]["embedding"])
    assert np.allclose(scale, np.abs(full).max(1) / 127, rtol=1e-5)
    assert (np.abs(q * scale[:, None] - full) <= scale[:, None] / 2 + 1e-7).all()


@pytest.mark.parametrize("route,payload", [
    ("/v1/embeddings", {"input": "god", "dimensions": 0}),
    ("/v1/embeddings", {"input": "god", "dimensions": 33}),
    ("/v1/embeddings", {"input": "god", "dimensions": -1}),
    ("/v1/embeddings", {"input": "god", "dimensions": "8"}),
    ("/v1/embeddings", {"input": "god", "dimensions": 8.5}),
    ("/v1/embeddings", {"input": "god", "dimensions": True}),
    ("/embed", {"inputs": "god", "dimensions": 33}),
    ("/embed", {"inputs": "god", "dimensions": 0}),
])
def test_a_bad_width_is_a_422_naming_the_field(served, route, payload):
    r = served.post(route, json=payload)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["limit"] == "dimensions" and err["value"] == 32 and err["type"] == "invalid_request_error"
    assert "'dimensions' must be a whole number from 1 to 32" in err["message"]


def test_an_unknown_encoding_format_is_a_422(served):
    r = served.post("/v1/embeddings", json={"input": "god", "encoding_format": "int4"})
    assert r.status_code == 422 and r.json()["error"]["limit"] == "encoding_format"
    assert "float, base64, int8, ubinary" in r.json()["error"]["message"]


def test_info_lists_widths_and_formats_and_the_server_default(tiny_model, make_tiny_model, tmp_path):
    from fastapi.testclient import TestClient

    from xlsent.models.widths import WIDTHS_FILE
    from xlsent.serve.app import Service, create_app

    model = make_tiny_model(tmp_path / "tiny")
    (model / WIDTHS_FILE).write_text(json.dumps({"dims": [32, 16, 8]}))
    service = Service(str(model), name="tiny", dimensions=16)
    service.load()
    c = TestClient(create_app(service, load=False))
    info = c.get("/info").json()
    assert info["dimensions"]["full"] == 32 and info["dimensions"]["default"] == 16
    assert info["dimensions"]["matryoshka"] == [32, 16, 8] and "1 to 32" in info["dimensions"]["note"]
    assert info["encoding_formats"] == ["float", "base64", "int8", "ubinary"]
    full = _vectors(c.post("/v1/embeddings", json={"input": TEXTS, "dimensions": 32}))
    default = _vectors(c.post("/v1/embeddings", json={"input": TEXTS}))  # the server's --dimensions
    assert default.shape == (5, 16) and np.abs(default - prefix(full, 16)).max() <= 1e-6
    assert np.array(c.post("/embed", json={"inputs": TEXTS}).json()).shape == (5, 16)
    spec = c.get("/openapi.json").json()["components"]["schemas"]
    assert spec["EmbeddingsRequest"]["properties"]["encoding_format"]["enum"] == ["float", "base64", "int8", "ubinary"]
    assert "renormalised" in spec["EmbeddingsRequest"]["properties"]["dimensions"]["description"]
    assert "dimensions" in spec["EmbedRequest"]["properties"] and "dimensions" in spec["Info"]["properties"]
    service.close()
    with pytest.raises(Exception, match="dimensions=64: more than the model's width"):
        Service(str(model), name="tiny", dimensions=64).load()


def test_an_exported_folder_carries_its_width_and_is_cut_the_same(make_tiny_model, tmp_path, monkeypatch):
    import xlsent
    from xlsent.encoding.width import model_width
    from xlsent.models.widths import WIDTHS_FILE, recorded_widths

    model = make_tiny_model(tmp_path / "tiny")
    (model / WIDTHS_FILE).write_text(json.dumps({"dims": [32, 16]}))
    out = tmp_path / "onnx"
    xlsent.export(str(model), out)
    assert recorded_widths(out) == [32, 16] and model_width(str(out)) == 32
    torch_vecs = xlsent.embed(TEXTS, model=str(model), truncate_dim=16)
    onnx_vecs = xlsent.embed(TEXTS, model=str(out), truncate_dim=16)
    assert onnx_vecs.shape == (5, 16) and np.abs(onnx_vecs - torch_vecs).max() < 1e-4
    with pytest.raises(Exception, match="truncate_dim=48: more than the model's width \\(32\\)"):
        xlsent.embed(TEXTS, model=str(out), truncate_dim=48)
