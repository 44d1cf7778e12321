"""``xlsent serve``: API keys (every route, the ``openai`` client, refusals counted by reason, keys never echoed
or logged, the start-up refusal) and shutdown (``/health`` during a drain, SIGTERM with requests in flight,
a drain that runs out of time, a restart under a steady stream)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_serve import _free_port

KEY, OTHER = "sk-test-0123456789abcdef", "sk-second-key-fedcba"
WRONG = "sk-wrong-key-zzzzzzzzzz"
ROOT = Path(__file__).resolve().parents[1]
TEXTS = ["god is good", "the river is wide", "mulungu ndi wabwino"]


def keyed_client(model, index=None):
    from fastapi.testclient import TestClient

    from xlsent.serve.app import Service, create_app
    from xlsent.serve.auth import ApiKeys

    service = Service(str(model), index=index, name="tiny", api_keys=ApiKeys([KEY, OTHER]))
    service.load()
    return TestClient(create_app(service, load=False)), service


def bearer(key: str) -> dict:
    return {"Authorization": f"Bearer {key}"}


# -- where keys come from ---------------------------------------------------------------------------------------

def test_keys_come_from_a_file_and_the_environment(tmp_path):
    from xlsent.serve.auth import ApiKeys
    from xlsent.utils.errors import XlsentError

    f = tmp_path / "keys.txt"
    f.write_text(f"{KEY}\n\n  {OTHER}  \n", encoding="utf-8")
    keys = ApiKeys.load(str(f), env="")
    assert len(keys) == 2 and keys.check(f"Bearer {OTHER}") is None
    both = ApiKeys.load(str(f), env=f" {WRONG} ,")  # the union of file and variable
    assert len(both) == 3 and both.check(f"Bearer {WRONG}") is None
    assert ApiKeys.load(None, env="") is None
    assert len(ApiKeys.load(None, env=f"{KEY},{OTHER}")) == 2
    f.write_text(f"{KEY}\nhas a space {OTHER}\n", encoding="utf-8")
    with pytest.raises(XlsentError, match=r"keys.txt:2") as err:
        ApiKeys.load(str(f), env="")
    assert OTHER not in str(err.value)  # the bad line is named by number, never by its text
    f.write_text("\n\n", encoding="utf-8")
    with pytest.raises(XlsentError, match="no keys"):
        ApiKeys.load(str(f), env="")
    with pytest.raises(XlsentError, match="no such file"):
        ApiKeys.load(str(tmp_path / "nope"), env="")
    with pytest.raises(XlsentError, match="XLSENT_API_KEYS: key 2") as err:
        ApiKeys.load(None, env=f"{KEY},bad\tkey")
    assert "bad" not in str(err.value)


def test_a_key_check_says_why_it_refused():
    from xlsent.serve.auth import ApiKeys

    keys = ApiKeys([KEY, OTHER])
    assert keys.check(f"Bearer {KEY}") is None and keys.check(f"bearer {OTHER}".encode()) is None
    assert keys.check(None) == "missing"
    for header in ("Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", KEY):
        assert keys.check(header) == "malformed", header
    for header in (f"Bearer {WRONG}", f"Bearer {KEY}x", f"Bearer {KEY[:-1]}", "Bearer é"):
        assert keys.check(header) == "wrong", header


def test_listening_beyond_loopback_needs_a_key_or_an_explicit_choice(monkeypatch):
    from typer.testing import CliRunner

    from xlsent.cli.main import app
    from xlsent.serve.auth import ApiKeys, check_exposure, is_loopback
    from xlsent.utils.errors import XlsentError

    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.7", "192.168.1.2", "example.org"))
    check_exposure("127.0.0.1", None, False)
    check_exposure("0.0.0.0", ApiKeys([KEY]), False)
    check_exposure("0.0.0.0", None, True)
    monkeypatch.delenv("XLSENT_API_KEYS", raising=False)
    r = CliRunner().invoke(app, ["serve", "e5-small", "--host", "0.0.0.0"])
    assert isinstance(r.exception, XlsentError)
    assert "--host 0.0.0.0" in str(r.exception) and "--allow-unauthenticated" in str(r.exception)
    r = CliRunner().invoke(app, ["serve", "e5-small", "--host", "0.0.0.0", "--api-key-file", "/nonexistent/keys"])
    assert isinstance(r.exception, XlsentError) and "/nonexistent/keys" in str(r.exception)


# -- routes -------------------------------------------------------------------------------------------------------

def test_every_route_but_health_and_the_page_needs_a_key(tiny_model, pairs_tsv):
    c, service = keyed_client(tiny_model, index=str(pairs_tsv))
    calls = [("post", "/v1/embeddings", {"input": TEXTS}), ("post", "/embed", {"inputs": TEXTS}),
             ("post", "/search", {"query": "god", "k": 2}), ("get", "/info", None), ("get", "/metrics", None),
             ("get", "/no-such-route", None)]
    for method, route, body in calls:
        kw = {"json": body} if body is not None else {}
        for headers, reason in (({}, "missing"), (bearer(WRONG), "wrong"), ({"Authorization": KEY}, "malformed"),
                                ({"Authorization": f"Basic {KEY}"}, "malformed")):
            r = getattr(c, method)(route, headers=headers, **kw)
            assert r.status_code == 401, (route, reason)
            assert r.headers["www-authenticate"] == "Bearer"
            err = r.json()["error"]
            assert err["type"] == "authentication_error" and err["limit"] == "api_key", (route, err)
            assert KEY not in r.text and WRONG not in r.text
        for key in (KEY, OTHER):
            r = getattr(c, method)(route, headers=bearer(key), **kw)
            assert r.status_code == (404 if route == "/no-such-route" else 200), (route, r.text)
    assert c.get("/health").status_code == 200  # load balancers probe without credentials
    page = c.get("/")
    assert page.status_code == 200 and 'id="key"' in page.text and "Authorization" in page.text
    assert "[hidden] { display: none !important; }" in page.text  # else the form rule shows the hidden key form
    assert not any(s in page.text for s in ("localStorage", "sessionStorage", "document.cookie"))  # kept in the page
    info = c.get("/info", headers=bearer(KEY)).json()
    assert info["api_keys"] is True and KEY not in str(info)
    from starlette.websockets import WebSocketDisconnect

    for route in ("/health", "/v1/embeddings"):  # no route speaks websocket: refused before any key check matters
        with pytest.raises(WebSocketDisconnect):
            with c.websocket_connect(route, headers=bearer(KEY)):
                pass
    service.close()


def test_refusals_are_counted_by_reason_and_no_key_reaches_metrics(tiny_model):
    c, service = keyed_client(tiny_model)
    for _ in range(3):
        c.post("/v1/embeddings", json={"input": "god"})
    c.post("/v1/embeddings", json={"input": "god"}, headers=bearer(WRONG))
    c.post("/v1/embeddings", json={"input": "god"}, headers=bearer(WRONG + "2"))
    c.get("/info", headers={"Authorization": "Token abc"})
    assert c.post("/v1/embeddings", json={"input": "god"}, headers=bearer(KEY)).status_code == 200
    text = c.get("/metrics", headers=bearer(KEY)).text
    counts = {m.group(1): float(m.group(2)) for m in
              re.finditer(r'^xlsent_auth_refusals_total\{reason="(\w+)"\} (\S+)$', text, re.M)}
    assert counts == {"missing": 3.0, "wrong": 2.0, "malformed": 1.0}
    assert 'xlsent_requests_total{route="/v1/embeddings",status="401"} 5.0' in text
    for k in (KEY, OTHER, WRONG, "Token abc"):
        assert k not in text
    service.close()


def test_health_turns_503_while_draining_and_requests_are_still_answered(tiny_model):
    c, service = keyed_client(tiny_model)
    assert c.get("/health").status_code == 200
    service.draining = True
    r = c.get("/health")
    assert r.status_code == 503 and r.json()["status"] == "draining"
    assert c.post("/v1/embeddings", json={"input": "god"}, headers=bearer(KEY)).status_code == 200
    assert service.answered_in_drain >= 2 and service.unanswered == 0
    service.close()


# -- the real server, as a process -------------------------------------------------------------------------------

def wait_in_flight(port: int, n: int, seconds: float = 30) -> list[float]:
    """Poll /metrics until ``n`` requests are inside the server (the /metrics call itself not counted)."""
    import httpx

    seen, deadline = [], time.time() + seconds
    while time.time() < deadline:
        m = re.search(r"^xlsent_requests_in_flight (\S+)$", httpx.get(f"http://127.0.0.1:{port}/metrics").text, re.M)
        seen.append(float(m.group(1)) - 1)
        if seen[-1] >= n:
            break
    return seen


_STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _no_server_outlives_its_test():
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def start_server(model, port: int, log: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    sys.path.insert(0, str(ROOT / "benchmarks" / "serving"))
    from serve_load import wait_healthy

    proc = subprocess.Popen([sys.executable, "-m", "xlsent.cli.main", "serve", str(model), "--port", str(port),
                             "--threads", "1", *args], stdout=log.open("w"), stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})}, cwd=ROOT)
    _STARTED.append(proc)
    wait_healthy(port, proc, "xlsent serve", seconds=120, log=log)
    return proc


def test_the_openai_client_with_api_key_and_no_key_in_the_logs(tiny_model, tmp_path):
    import openai

    from test_serve import cos, st_encode

    port, log = _free_port(), tmp_path / "serve.log"
    keyfile = tmp_path / "keys"
    keyfile.write_text(KEY + "\n", encoding="utf-8")
    proc = start_server(tiny_model, port, log, "--name", "tiny", "--api-key-file", str(keyfile),
                        env={"XLSENT_API_KEYS": OTHER})
    try:
        base = f"http://127.0.0.1:{port}/v1"
        ref = st_encode(tiny_model, TEXTS)
        for key in (KEY, OTHER):
            out = openai.OpenAI(base_url=base, api_key=key, max_retries=0).embeddings.create(model="tiny", input=TEXTS)
            assert cos([d.embedding for d in out.data], ref).min() >= 0.99999
        with pytest.raises(openai.AuthenticationError) as err:
            openai.OpenAI(base_url=base, api_key=WRONG, max_retries=0).embeddings.create(model="tiny", input="god")
        assert WRONG not in str(err.value)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    text = log.read_text(encoding="utf-8")
    assert "with 2 API key(s)" in text and "drained: " in text
    for k in (KEY, OTHER, WRONG):
        assert k not in text


def test_sigterm_answers_every_request_in_flight_then_exits_0(tiny_model, tmp_path):
    import httpx

    from conftest import WORDS

    port, log = _free_port(), tmp_path / "serve.log"
    proc = start_server(tiny_model, port, log, "--max-inputs", "256", "--max-queue", "4096")
    rng = np.random.default_rng(0)
    batch = [" ".join(rng.choice(WORDS, 40)) for _ in range(256)]
    results: list = []

    def send() -> None:
        try:
            r = httpx.post(f"http://127.0.0.1:{port}/v1/embeddings", json={"input": batch}, timeout=120)
            results.append((r.status_code, len(r.json()["data"])))
        except httpx.HTTPError as exc:
            results.append((type(exc).__name__, 0))

    threads = [threading.Thread(target=send) for _ in range(12)]
    for t in threads:
        t.start()
    seen = wait_in_flight(port, 12)
    assert seen[-1] >= 12, f"the requests never reached the server together: {seen}"
    proc.send_signal(signal.SIGTERM)
    for t in threads:
        t.join(120)
    assert proc.wait(60) == 0
    assert results == [(200, 256)] * 12
    with pytest.raises(httpx.ConnectError):  # the listener is closed
        httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
    m = re.search(r"drained: (\d+) request\(s\) answered during the drain, 0 accepted request\(s\) left unanswered",
                  log.read_text(encoding="utf-8"))
    assert m and int(m.group(1)) >= 1, log.read_text()


def test_with_a_drain_delay_a_health_probe_sees_503_while_requests_are_still_served(tiny_model, tmp_path):
    """--drain-delay: after SIGTERM the listener stays open for the delay, /health answers 503 on new connections
    (what a load balancer polls), embedding requests are still answered; then the drain and exit 0."""
    import httpx

    port, log = _free_port(), tmp_path / "serve.log"
    proc = start_server(tiny_model, port, log, "--drain-delay", "3")
    base = f"http://127.0.0.1:{port}"
    proc.send_signal(signal.SIGTERM)
    deadline = time.time() + 2
    while httpx.get(f"{base}/health", timeout=5).status_code != 503:  # the handler runs between two bytecodes
        assert time.time() < deadline, "SIGTERM did not turn /health to 503"
        time.sleep(0.05)
    h = httpx.get(f"{base}/health", timeout=5)
    assert h.status_code == 503 and h.json()["status"] == "draining"
    assert httpx.post(f"{base}/v1/embeddings", json={"input": "god"}, timeout=30).status_code == 200
    assert proc.wait(60) == 0
    assert "0 accepted request(s) left unanswered" in log.read_text()


def test_a_drain_that_runs_out_of_time_says_so_and_exits_1(tiny_model, tmp_path):
    import httpx

    from conftest import WORDS

    port, log = _free_port(), tmp_path / "serve.log"
    proc = start_server(tiny_model, port, log, "--max-inputs", "256", "--drain-seconds", "0", "--model-batch", "1")
    batch = [" ".join(WORDS[:40])] * 256
    threads = [threading.Thread(target=lambda: httpx.post(f"http://127.0.0.1:{port}/v1/embeddings",
                                                          json={"input": batch}, timeout=60)) for _ in range(6)]
    for t in threads:
        t.start()
    assert wait_in_flight(port, 6)[-1] >= 6, "the requests never reached the server together"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 1
    for t in threads:
        t.join(60)
    m = re.search(r"(\d+) accepted request\(s\) left unanswered \(--drain-seconds 0 ran out\)", log.read_text())
    assert m and int(m.group(1)) >= 1, log.read_text()


def test_a_restart_under_a_steady_stream_loses_no_request(tiny_model):
    """benchmarks/serving/serve_restart.py at small scale: SIGTERM to A mid-stream, B takes over, every check holds."""
    sys.path.insert(0, str(ROOT / "benchmarks" / "serving"))
    import serve_restart

    assert serve_restart.main(["--model", str(tiny_model), "--rate", "30", "--seconds", "4", "--term-at", "2",
                               "--threads", "1"]) == 0
