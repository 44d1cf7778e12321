"""``xlsent serve``: every route and every limit in process (FastAPI's test client), and the real server
called by the official ``openai`` client."""

from __future__ import annotations

import base64
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from conftest import WORDS

TEXTS = ["god is good", "the river is wide", "mulungu ndi wabwino", "madzi"]


def st_encode(path, texts):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu").encode(texts, convert_to_numpy=True)


def cos(a, b):
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


def make_client(model, index=None, **limits):
    from fastapi.testclient import TestClient

    from xlsent.serve.app import Service, create_app
    from xlsent.serve.limits import ServeLimits

    service = Service(str(model), limits=ServeLimits(**limits), index=index, name="tiny")
    service.load()
    return TestClient(create_app(service, load=False)), service


@pytest.fixture(scope="module")
def client(tiny_model):
    c, service = make_client(tiny_model)
    yield c
    service.close()


def test_health_is_503_until_loaded_then_200(tiny_model):
    from fastapi.testclient import TestClient

    from xlsent.serve.app import Service, create_app

    service = Service(str(tiny_model), name="tiny")
    c = TestClient(create_app(service, load=False))
    r = c.get("/health")
    assert r.status_code == 503 and r.json()["status"] == "loading" and r.headers["Retry-After"]
    assert c.post("/v1/embeddings", json={"input": "god"}).status_code == 503
    service.load()
    assert c.get("/health").status_code == 200
    info = c.get("/info").json()
    assert info["model"] == "tiny" and info["dimension"] == 32 and info["max_tokens"] == 64
    assert info["backend"] == "SentenceTransformerBackend" and info["limits"]["overlong"] == "truncate"
    service.close()


def test_openai_embeddings_float_and_base64_equal_sentence_transformers(client, tiny_model):
    ref = st_encode(tiny_model, TEXTS)
    r = client.post("/v1/embeddings", json={"input": TEXTS, "model": "tiny"})
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "list" and body["model"] == "tiny" and len(body["data"]) == 4
    assert [d["index"] for d in body["data"]] == [0, 1, 2, 3] and body["data"][0]["object"] == "embedding"
    assert body["usage"]["prompt_tokens"] == body["usage"]["total_tokens"] > 4
    assert cos([d["embedding"] for d in body["data"]], ref).min() >= 0.99999
    r = client.post("/v1/embeddings", json={"input": TEXTS, "encoding_format": "base64"})
    vecs = [np.frombuffer(base64.b64decode(d["embedding"]), dtype="<f4") for d in r.json()["data"]]
    assert cos(vecs, ref).min() >= 0.99999
    one = client.post("/v1/embeddings", json={"input": "god is good"}).json()["data"]
    assert len(one) == 1 and cos(one[0]["embedding"], ref[0]) >= 0.99999


def test_tei_embed_route(client, tiny_model):
    r = client.post("/embed", json={"inputs": ["god is good", "madzi"], "normalize": True})
    assert r.status_code == 200 and r.headers["X-Truncated-Inputs"] == "0"
    vecs = np.array(r.json())
    assert vecs.shape == (2, 32) and np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)
    assert cos(vecs, st_encode(tiny_model, ["god is good", "madzi"])).min() >= 0.99999
    assert client.post("/embed", json={"inputs": "madzi", "normalize": "yes"}).status_code == 422


def test_a_request_names_one_of_the_models_prompts(make_tiny_model, tmp_path):
    """``prompt_name`` (sentence-transformers' name, TEI's field) selects a prompt as ``xlsent.embed`` does, on every
    embedding route; the default is the model's default prompt; an unknown name is a 422 naming the prompts."""
    import xlsent

    model = make_tiny_model(tmp_path / "prompted", prompt="god ")
    c, service = make_client(model, index=None)
    try:
        info = c.get("/info").json()
        assert info["prompts"]["passage"] == "god " and info["default_prompt_name"] == "passage"
        plain = np.array(c.post("/embed", json={"inputs": TEXTS}).json())
        named = np.array(c.post("/embed", json={"inputs": TEXTS, "prompt_name": "passage"}).json())
        r = c.post("/v1/embeddings", json={"input": TEXTS, "prompt_name": "query"})
        query = np.array([d["embedding"] for d in r.json()["data"]])
        np.testing.assert_allclose(plain, named, atol=1e-6)
        assert cos(plain, xlsent.embed(TEXTS, model=str(model))).min() >= 0.99999
        assert cos(query, xlsent.embed(TEXTS, model=str(model), prompt_name="query")).min() >= 0.99999
        assert cos(query, plain).max() < 0.9999  # the named prompt changed the vectors
        # usage counts the pieces the model saw: the default prompt "god " is one more piece a text than query's ""
        base = c.post("/v1/embeddings", json={"input": TEXTS}).json()["usage"]["prompt_tokens"]
        assert r.json()["usage"]["prompt_tokens"] == base - len(TEXTS)
        bad = c.post("/embed", json={"inputs": "madzi", "prompt_name": "title"})
        err = bad.json()["error"]
        assert bad.status_code == 422 and err["limit"] == "prompt_name" and "query" in err["message"]
    finally:
        service.close()


def test_a_batch_runs_each_prompt_in_its_own_call():
    """Texts of requests with different prompts share a batch but not a forward pass: one call a prompt."""
    from xlsent.serve.batcher import Batcher

    gate, calls = threading.Event(), []

    def encode(texts, prompt=None):
        if texts == ["first"]:
            gate.wait(10)
        calls.append((prompt, list(texts)))
        return np.array([[len(prompt) if prompt is not None else -1, len(t)] for t in texts], np.float32)

    b = Batcher(encode, batch_tokens=10_000, max_wait_ms=0)
    try:
        b.submit(["first"], [1])
        deadline = time.time() + 10
        while b.depth and time.time() < deadline:  # the worker took it and waits inside encode
            time.sleep(0.01)
        a = b.submit(["aa", "bbb"], [2, 3])
        q = b.submit(["cc"], [2], prompt="query: ")
        d = b.submit(["d"], [1])
        gate.set()
        rows = [f.result(timeout=10) for f in a + q + d]
        assert calls[1:] == [(None, ["d", "aa", "bbb"]), ("query: ", ["cc"])]
        assert [r[0] for r in rows] == [-1, -1, 7, -1] and [r[1] for r in rows] == [2, 3, 2, 1]
    finally:
        b.close()


@pytest.mark.parametrize("payload,status,limit", [
    ({"input": ["a"] * 5}, 413, "max_inputs"),
    ({"input": "x" * 101}, 413, "max_chars"),
    ({"input": []}, 422, "inputs"),
    ({"input": ["god", ""]}, 422, "empty input"),
    ({"input": ["god", 3]}, 422, "input type"),
    ({"input": {"text": "god"}}, 422, "input type"),
    ({"input": "god", "encoding_format": "int4"}, 422, "encoding_format"),
    ({"input": "god", "model": "gpt-4"}, 422, "model"),
    ({"input": "god", "dimensions": 33}, 422, "dimensions"),
    ({"input": "god", "dimensions": 0}, 422, "dimensions"),
    ({"text": "god"}, 422, "input"),
])
def test_each_limit_has_its_status_and_names_itself(tiny_model, payload, status, limit):
    c, service = make_client(tiny_model, max_inputs=4, max_chars=100)
    r = c.post("/v1/embeddings", json=payload)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["limit"] == limit and err["message"]
    service.close()


def test_malformed_body_and_body_size(tiny_model):
    c, service = make_client(tiny_model, max_body_bytes=200)
    r = c.post("/v1/embeddings", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["error"]["limit"] == "json"
    r = c.post("/v1/embeddings", json={"input": ["god is good"] * 30})
    assert r.status_code == 413 and r.json()["error"] == {
        "message": r.json()["error"]["message"], "type": "payload_too_large", "limit": "max_body_bytes", "value": 200}
    service.close()


def test_overlong_inputs_truncate_visibly_or_are_rejected(tiny_model):
    long_text = " ".join(WORDS * 4)  # far past 16 pieces
    c, service = make_client(tiny_model, max_tokens=16)
    r = c.post("/v1/embeddings", json={"input": [long_text, "god"]})
    assert r.status_code == 200 and r.headers["X-Truncated-Inputs"] == "1"
    assert r.json()["usage"]["truncated_inputs"] == 1
    cut = service.encoder.backend.truncate(long_text, 16)
    assert service.encoder.backend.token_counts([cut])[0] <= 16
    assert cos(r.json()["data"][0]["embedding"], st_encode(tiny_model, [cut])[0]) >= 0.99999
    r = c.post("/embed", json={"inputs": [long_text], "truncate": False})
    assert r.status_code == 413 and r.json()["error"]["limit"] == "max_tokens"
    service.close()
    c, service = make_client(tiny_model, max_tokens=16, overlong="reject")
    r = c.post("/v1/embeddings", json={"input": [long_text]})
    assert r.status_code == 413 and r.json()["error"]["value"] == 16
    assert c.post("/embed", json={"inputs": [long_text], "truncate": True}).status_code == 200
    service.close()


def test_a_full_queue_gets_429_with_retry_after(tiny_model):
    c, service = make_client(tiny_model, max_queue=3, max_wait_ms=0)
    gate, entered = threading.Event(), threading.Event()
    real = service.batcher.encode
    service.batcher.encode = lambda texts: (entered.set(), gate.wait(10), real(texts))[2]
    futures = service.batcher.submit(["god"], [3])  # the worker takes it and blocks on the gate
    assert entered.wait(10)
    futures += service.batcher.submit(["madzi", "dziko", "nyumba"], [3, 3, 3])  # the queue is now full
    r = c.post("/v1/embeddings", json={"input": "god is good"})
    assert r.status_code == 429 and r.headers["Retry-After"] == "1" and r.json()["error"]["limit"] == "max_queue"
    assert not futures[0].done()  # refused at once: the queue never drained (the worker is still held)
    r = c.post("/embed", content=b"{not json")  # admission comes first: a full queue refuses before the body is read
    assert r.status_code == 429 and r.json()["error"]["limit"] == "max_queue"
    assert c.get("/health").status_code == 200  # only embedding routes are refused
    gate.set()
    assert all(f.result(10).shape == (32,) for f in futures)
    # room for one text but not two: the queue check at submit time refuses the whole request
    gate.clear()
    entered.clear()
    futures = service.batcher.submit(["god"], [3])
    assert entered.wait(10)
    futures += service.batcher.submit(["madzi", "dziko"], [3, 3])
    r = c.post("/v1/embeddings", json={"input": ["god is good", "madzi"]})
    assert r.status_code == 429 and "2 texts queued" in r.json()["error"]["message"]
    gate.set()
    assert all(f.result(10).shape == (32,) for f in futures)
    service.close()


def test_concurrent_requests_share_batches(tiny_model):
    c, service = make_client(tiny_model, max_wait_ms=100)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda t: c.post("/v1/embeddings", json={"input": t}), TEXTS * 4))
    assert all(r.status_code == 200 for r in results)
    metrics = c.get("/metrics").text
    batches = float(next(line.split()[-1] for line in metrics.splitlines() if line.startswith("xlsent_batch_size_count")))
    texts = float(next(line.split()[-1] for line in metrics.splitlines() if line.startswith("xlsent_texts_total")))
    assert texts >= 16 and batches < texts  # 16 one-text requests ran in fewer batches
    assert 'xlsent_requests_total{route="/v1/embeddings",status="200"}' in metrics
    assert "xlsent_queue_depth" in metrics and "xlsent_request_seconds_bucket" in metrics
    service.close()


def test_the_batcher_waits_for_company_only_under_load():
    """A lone text runs at once; after a batch with company, a text waits (up to max_wait) for others."""
    from xlsent.serve.batcher import Batcher

    sizes: list[int] = []
    entered, gate = threading.Event(), threading.Event()

    def encode(texts):
        entered.set()
        gate.wait(10)
        sizes.append(len(texts))
        return np.zeros((len(texts), 2), np.float32)

    patient = Batcher(lambda texts: np.zeros((len(texts), 2), np.float32), max_wait_ms=600_000)
    patient.submit(["alone"], [3])[0].result(timeout=30)  # no earlier batch had company: it did not wait 10 min
    patient.close()
    b = Batcher(encode, max_wait_ms=2_000)
    gate.set()
    b.submit(["alone"], [3])[0].result(timeout=10)
    gate.clear()
    entered.clear()
    first = b.submit(["a"], [3])
    assert entered.wait(10)  # "a" runs alone (the last batch had none); three more queue behind it
    rest = b.submit(["b", "c", "d"], [3, 3, 3])
    gate.set()
    for f in first + rest:
        f.result(timeout=10)
    late = b.submit(["e"], [3]) + b.submit(["f"], [3])  # the last batch had company: "e" waits and "f" joins
    for f in late:
        f.result(timeout=10)
    assert sizes == [1, 1, 3, 2]
    b.close()


def test_each_forward_pass_is_answered_before_the_next_runs():
    """model_batch 2: the shortest two texts' futures resolve while the rest of the batch is still to run."""
    from xlsent.serve.batcher import Batcher

    calls: list[list[str]] = []
    done_before: list[list[bool]] = []
    futures: list = []
    gate = threading.Event()

    def encode(texts):
        gate.wait(10)
        done_before.append([f.done() for f in futures])
        calls.append(list(texts))
        return np.zeros((len(texts), 2), np.float32)

    b = Batcher(encode, max_wait_ms=0, model_batch=2)
    futures.extend(b.submit(["dddd", "a", "ccc", "bb"], [4, 1, 3, 2]))
    gate.set()
    for f in futures:
        f.result(timeout=10)
    assert calls == [["a", "bb"], ["ccc", "dddd"]]  # length-sorted, two passes
    assert done_before[1] == [False, True, False, True]  # "a" and "bb" answered before the second pass
    b.close()


def test_search_and_the_page(tiny_model, pairs_tsv):
    c, service = make_client(tiny_model, index=str(pairs_tsv))
    assert c.get("/info").json()["index"]["entries"] == 80
    first = pairs_tsv.read_text(encoding="utf-8").splitlines()[1].split("\t")
    r = c.post("/search", json={"query": first[0], "k": 3})
    assert r.status_code == 200
    m = r.json()["matches"]
    assert len(m) == 3 and m[0]["text"] == first[0] and m[0]["parallel"] == first[1] and m[0]["lang"] == "en"
    assert m[0]["score"] >= m[1]["score"] >= m[2]["score"]
    assert c.post("/search", json={"query": "god", "k": 0}).status_code == 422
    assert c.post("/search", json={"query": 5}).status_code == 422
    page = c.get("/")
    assert page.status_code == 200 and '<form id="form">' in page.text and 'fetch("/search"' in page.text
    service.close()
    c2, s2 = make_client(tiny_model)
    assert c2.post("/search", json={"query": "god"}).json()["error"]["limit"] == "index"
    s2.close()


def test_onnx_backend_serves_the_same_vectors(tiny_model):
    from fastapi.testclient import TestClient

    from xlsent.serve.app import Service, create_app

    service = Service(str(tiny_model), backend="onnx", name="tiny")
    service.load()
    c = TestClient(create_app(service, load=False))
    assert c.get("/info").json()["backend"] == "OnnxBackend"
    options = service.encoder.backend.session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"  # the HTTP loop keeps its CPU
    r = c.post("/v1/embeddings", json={"input": TEXTS})
    assert cos([d["embedding"] for d in r.json()["data"]], st_encode(tiny_model, TEXTS)).min() >= 0.99999
    service.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_real_server_with_the_official_openai_client(tiny_model):
    import openai
    import uvicorn

    from xlsent.serve.app import Service, create_app

    port = _free_port()
    service = Service(str(tiny_model), name="tiny")
    server = uvicorn.Server(uvicorn.Config(create_app(service), host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        import httpx

        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        ref = st_encode(tiny_model, TEXTS)
        default = client.embeddings.create(model="tiny", input=TEXTS)  # the client asks for base64 by default
        assert cos([d.embedding for d in default.data], ref).min() >= 0.99999
        floats = client.embeddings.create(model="tiny", input=TEXTS, encoding_format="float")
        assert cos([d.embedding for d in floats.data], ref).min() >= 0.99999
        assert floats.usage.total_tokens > 0
        cut = client.embeddings.create(model="tiny", input=TEXTS, dimensions=8)  # OpenAI's own parameter
        head = np.asarray([d.embedding for d in floats.data], np.float32)[:, :8]
        assert np.abs(np.asarray([d.embedding for d in cut.data]) - head / np.linalg.norm(head, axis=1,
                                                                                        keepdims=True)).max() <= 1e-6
        with pytest.raises(openai.UnprocessableEntityError):
            client.embeddings.create(model="other", input="god")
    finally:
        server.should_exit = True
        thread.join(10)


def test_cli_checks_options_before_loading(tmp_path):
    from typer.testing import CliRunner

    from xlsent.cli.main import app
    from xlsent.utils.errors import XlsentError

    runner = CliRunner()
    for args, words in ((["--overlong", "drop"], "--overlong"), (["--index", str(tmp_path / "nope.txt")], "nope.txt"),
                        (["--port", "0"], "--port"), (["--backend", "tpu"], "--backend"),
                        (["--max-inputs", "0"], "--max-inputs"), (["--worker-nice", "20"], "--worker-nice")):
        r = runner.invoke(app, ["serve", "e5-small", *args])
        assert isinstance(r.exception, XlsentError) and words in str(r.exception), (args, r.output)


def test_the_service_checks_worker_nice_as_the_command_does(tiny_model):
    """``Service(worker_nice=)`` from Python: the range the CLI's --worker-nice has (0–19), one line, before any
    model loads."""
    from xlsent.serve.app import Service
    from xlsent.utils.errors import XlsentError

    with pytest.raises(XlsentError, match=r"worker_nice=20: must be ≤ 19"):
        Service(str(tiny_model), name="tiny", worker_nice=20)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_the_model_threads_run_below_the_http_loop(tiny_model):
    """Loaded in its own thread, the model's worker runs at a lower priority than the thread that serves HTTP."""
    import os
    import threading

    from xlsent.serve.app import Service

    service = Service(str(tiny_model), name="tiny", worker_nice=5)
    service.load_in_background().join(120)
    assert service.ready
    worker = service.batcher._thread.native_id
    here = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert os.getpriority(os.PRIO_PROCESS, worker) == min(19, here + 5)
    service.close()
