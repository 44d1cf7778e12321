"""Per-language centering and CSLS: hand-made vectors with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.evaluation.retrieval import evaluate_retrieval
from xlsent.similarity import center, ranked_candidates, unit


def csls_matrix(queries: np.ndarray, candidates: np.ndarray, k_nn: int = 10) -> np.ndarray:
    """The whole CSLS matrix ``2 cos(x, y) − r(x) − r(y)``: the small-pool oracle the searches are checked against."""
    q, c = unit(queries), unit(candidates)
    cos = q @ c.T
    rq = np.sort(cos, axis=1)[:, ::-1][:, :min(k_nn, cos.shape[1])].mean(1)
    rc = np.sort(cos, axis=0)[::-1, :][:min(k_nn, cos.shape[0])].mean(0)
    return 2 * cos - rq[:, None] - rc[None, :]


def _offset_pools(n: int = 40, d: int = 16, seed: int = 0):
    """Two 'languages': the same content vectors (mean zero) plus a large language-specific offset each."""
    rng = np.random.default_rng(seed)
    content = rng.normal(size=(n, d)).astype(np.float32)
    content -= content.mean(0)
    off_a, off_b = rng.normal(size=d) * 5, rng.normal(size=d) * 5
    noise = rng.normal(scale=0.6, size=(n, d)).astype(np.float32)
    return content, content + off_a, content + noise + off_b


def test_center_removes_a_shared_language_offset_exactly():
    content, a, _ = _offset_pools()
    np.testing.assert_allclose(center(a), content, atol=1e-5)
    # a mean given in advance (a calibrated model) is used as given
    np.testing.assert_allclose(center(a, a.mean(0)), content, atol=1e-5)
    np.testing.assert_allclose(center(a, np.zeros(a.shape[1])), a)


def test_center_refuses_a_mean_of_another_width():
    from xlsent.utils.errors import XlsentError

    with pytest.raises(XlsentError, match="width 3 cannot center vectors of width 16"):
        center(np.zeros((2, 16)), np.zeros(3))


def test_csls_matches_a_hand_computed_matrix():
    q = np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32)
    c = np.array([[0.6, 0.8], [1, 0], [0, 1], [-1, 0]], dtype=np.float32)
    cos = unit(q) @ unit(c).T
    k = 2
    r_q = np.array([np.mean(sorted(row)[-k:]) for row in cos])
    r_c = np.array([np.mean(sorted(col)[-k:]) for col in cos.T])
    expected = np.array([[2 * cos[i, j] - r_q[i] - r_c[j] for j in range(4)] for i in range(3)])
    np.testing.assert_allclose(csls_matrix(q, c, k), expected, atol=1e-6)
    # the exact top-k search gives the same scores and order as the whole matrix
    scores, idx = ranked_candidates(q, c, "csls", 4, k)
    order = np.argsort(-expected, axis=1, kind="stable")
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_allclose(scores, np.take_along_axis(expected, order, 1), atol=1e-5)


def test_centering_and_csls_rescue_retrieval_that_an_offset_breaks():
    content, a, b = _offset_pools()
    texts_a, texts_b = [f"a{i}" for i in range(len(a))], [f"b{i}" for i in range(len(b))]

    def enc(texts):  # an encoder that looks the vectors up by text
        table = {**dict(zip(texts_a, a)), **dict(zip(texts_b, b))}
        return np.stack([table[t] for t in texts])

    plain = evaluate_retrieval(texts_a, texts_b, enc, beside=True)
    centered = evaluate_retrieval(texts_a, texts_b, enc, center=True)
    assert centered.centered and not plain.centered
    # with the offsets removed every query finds its pair; plain cosine is dominated by the offsets
    assert centered.src2tgt["p@1"] == 1.0 and centered.tgt2src["p@1"] == 1.0
    assert plain.src2tgt["p@1"] < 0.5
    assert plain.beside["center+cosine"] == {"src2tgt": 1.0, "tgt2src": 1.0}
    assert set(plain.beside) == {"center+cosine", "csls", "center+csls", "margin", "center+margin"}


# -- language means in a model folder: calibrate, embed --center, the service -------------------------------

@pytest.fixture(scope="module")
def calibrated(tiny_model, tmp_path_factory):
    """A copy of the tiny model with means for 'en' and 'ny' made by the CLI (once for the module)."""
    import shutil

    from test_cli import xlsent

    tmp_path = tmp_path_factory.mktemp("calibrated")
    model = tmp_path / "tiny-cal"
    shutil.copytree(tiny_model, model)
    en, ny = tmp_path / "en.txt", tmp_path / "ny.txt"
    en.write_text("god is good\nthe river is wide\nthe house\n", encoding="utf-8")
    ny.write_text("mulungu ndi wabwino\nmadzi\nnyumba\n", encoding="utf-8")
    r = xlsent("models", "calibrate", str(model), "--lang", f"en={en}", "--lang", f"ny={ny}",
               "--dtype", "fp32")  # checked against sentence-transformers' fp32 vectors below
    assert r.returncode == 0, r.stderr
    return model, en, ny


def test_calibrate_stores_the_mean_unit_vector_and_keeps_the_fingerprint(calibrated):
    from sentence_transformers import SentenceTransformer

    from xlsent.models.handle import model_fingerprint
    from xlsent.models.language_means import read_language_means

    model, en, ny = calibrated
    means = read_language_means(model)
    assert means.languages == ["en", "ny"] and means.sources["ny"]["texts"] == 3
    st = SentenceTransformer(str(model), device="cpu")  # the folder still loads as before
    v = st.encode(ny.read_text().split("\n")[:3], normalize_embeddings=True)
    np.testing.assert_allclose(means.mean("ny"), v.mean(0), atol=1e-5)
    fp = model_fingerprint(model)
    means.save(model)
    assert model_fingerprint(model) == fp  # cached vectors of the model stay valid


def test_embed_center_and_the_service_give_the_same_centered_vectors(calibrated, tmp_path):
    from test_cli import xlsent
    from test_serve import make_client

    from xlsent.models.language_means import read_language_means
    from xlsent.similarity import unit

    model, en, ny = calibrated
    out = tmp_path / "ny.npy"
    r = xlsent("embed", "-m", str(model), "-i", str(ny), "-o", str(out), "--lang", "ny", "--center")
    assert r.returncode == 0, r.stderr
    offline = np.load(out)
    means = read_language_means(model)
    texts = ny.read_text().split("\n")[:3]
    client, service = make_client(model)
    try:
        served = np.array([d["embedding"] for d in client.post(
            "/v1/embeddings", json={"input": texts, "language": "ny"}).json()["data"]])
        plain = np.array([d["embedding"] for d in client.post("/v1/embeddings", json={"input": texts}).json()["data"]])
        np.testing.assert_allclose(served, offline, atol=1e-5)
        np.testing.assert_allclose(served, unit(plain - means.mean("ny")), atol=1e-5)
        assert np.abs(served - plain).max() > 1e-3  # centering changed them
        tei = np.array(client.post("/embed", json={"inputs": texts, "language": "ny"}).json())
        np.testing.assert_allclose(tei, offline, atol=1e-5)
        bad = client.post("/v1/embeddings", json={"input": texts, "language": "zu"})
        assert bad.status_code == 422 and "calibrated: en, ny" in bad.json()["error"]["message"]
        info = client.get("/info").json()["centering"]
        assert info["languages"] == ["en", "ny"]
    finally:
        service.close()


def test_without_means_nothing_is_centered_and_info_says_so(tiny_model):
    from test_serve import make_client

    client, service = make_client(tiny_model)
    try:
        info = client.get("/info").json()["centering"]
        assert info["languages"] == [] and "never centered" in info["note"]
        r = client.post("/v1/embeddings", json={"input": "madzi", "language": "ny"})
        assert r.status_code == 422 and "calibrate" in r.json()["error"]["message"]
    finally:
        service.close()


def test_search_on_a_centered_index_equals_the_offline_centered_csls(calibrated, tiny_model, pairs_tsv):
    """An en–ny index with both languages calibrated is stored centered; a ny query named as such is centered
    with the ny mean, and every English entry's served score is the offline CSLS of the centered vectors."""
    from test_serve import make_client

    from xlsent.data.pairs import load_pairs
    from xlsent.encoding.encoder import Encoder
    from xlsent.models.language_means import read_language_means

    model, _, _ = calibrated
    means = read_language_means(model)
    ds = load_pairs(str(pairs_tsv), dedupe=False).dataset
    en, ny = list(ds["src"]), list(ds["tgt"])
    enc = Encoder.load(str(model), normalize=True)
    offline = csls_matrix(means.apply(enc.encode(ny), "ny"), means.apply(enc.encode(en), "en"), 4)
    client, service = make_client(model, index=str(pairs_tsv))  # an en–ny file: both languages calibrated
    plain, plain_service = make_client(tiny_model, index=str(pairs_tsv))
    try:
        assert service.index.centered and not plain_service.index.centered
        info = client.get("/info").json()
        assert info["index"]["centered"] is True and info["centering"]["index_languages_without_a_mean"] == []
        r = client.post("/search", json={"query": ny[3], "k": 80, "language": "NY"}).json()  # codes: any case
        assert r["query_centered"] is True and r["scoring"] == "csls"
        got = {m["text"]: m["score"] for m in r["matches"] if m["lang"] == "en"}
        assert len(got) == len(en)
        for j, text in enumerate(en):
            assert abs(got[text] - offline[3, j]) < 1e-4
        missing = client.post("/search", json={"query": ny[3], "k": 3})
        assert missing.status_code == 422 and "name the query's 'language'" in missing.json()["error"]["message"]
        p = plain.post("/search", json={"query": "madzi", "k": 3}).json()
        assert p["query_centered"] is False and p["index_centered"] is False
    finally:
        service.close()
        plain_service.close()


def test_embed_center_errors_are_one_line_before_the_model_loads(tiny_model, tmp_path):
    from test_cli import xlsent

    f = tmp_path / "t.txt"
    f.write_text("madzi\n")
    r = xlsent("embed", "-m", str(tiny_model), "-i", str(f), "-o", str(tmp_path / "o.npy"), "--center")
    assert r.returncode != 0 and "--center needs --lang" in r.stderr and "Traceback" not in r.stderr
    r = xlsent("embed", "-m", str(tiny_model), "-i", str(f), "-o", str(tmp_path / "o.npy"), "--center", "--lang", "ny")
    assert r.returncode != 0 and "carries no language means" in r.stderr
    r = xlsent("models", "calibrate", str(tiny_model), "--lang", "ny")
    assert r.returncode != 0 and "give CODE=FILE" in r.stderr


def test_served_csls_equals_the_offline_csls_of_the_two_languages(tiny_model, pairs_tsv):
    """For a query in one language of a two-language index, the served CSLS of every entry of the other language
    is the offline CSLS matrix's (r over the other language's entries each way, k = 4)."""
    from test_serve import make_client

    from xlsent.data.pairs import load_pairs
    from xlsent.encoding.encoder import Encoder

    ds = load_pairs(str(pairs_tsv), dedupe=False).dataset
    en, ny = list(ds["src"]), list(ds["tgt"])
    enc = Encoder.load(str(tiny_model), normalize=True)
    offline = csls_matrix(enc.encode(ny), enc.encode(en), 4)  # ny queries × en candidates
    client, service = make_client(tiny_model, index=str(pairs_tsv))
    try:
        assert service.index.scoring == "csls"
        r = client.post("/search", json={"query": ny[3], "k": 80, "language": "ny"})
        assert r.status_code == 422  # the tiny model carries no means: naming a language is refused …
        r = client.post("/search", json={"query": ny[3], "k": 80}).json()  # … without one, r(q) is over all entries
        assert r["scoring"] == "csls"
        got = {m["text"]: m["score"] for m in r["matches"] if m["lang"] == "en"}
        cos_q = enc.encode([ny[3]]) @ enc.encode(en + ny).T
        r_all = np.sort(cos_q[0])[-4:].mean()
        r_en = np.sort(cos_q[0][: len(en)])[-4:].mean()
        for j, text in enumerate(en):  # the offline matrix uses r(q) over the English entries only
            assert abs(got[text] - (offline[3, j] + r_en - r_all)) < 1e-4
        ranked = [m["score"] for m in r["matches"]]
        assert ranked == sorted(ranked, reverse=True)
    finally:
        service.close()


def test_language_means_travel_with_the_export_and_center_its_vectors_alike(calibrated, tmp_path):
    from test_cli import xlsent

    from xlsent.models.language_means import MEANS_FILE

    model, _, ny = calibrated
    onnx = tmp_path / "tiny-onnx"
    r = xlsent("export", str(model), "-o", str(onnx))
    assert r.returncode == 0, r.stderr
    assert (onnx / MEANS_FILE).read_bytes() == (model / MEANS_FILE).read_bytes()
    outs = []
    for m in (model, onnx):
        out = tmp_path / f"{m.name}.npy"
        r = xlsent("embed", "-m", str(m), "-i", str(ny), "-o", str(out), "--lang", "ny", "--center")
        assert r.returncode == 0, r.stderr
        outs.append(np.load(out))
    np.testing.assert_allclose(outs[0], outs[1], atol=1e-4)
