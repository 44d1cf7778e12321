"""``xlsent serve`` against bad input that is valid JSON (issue 48): text that is not Unicode answers 422 naming the
field and the input's index; property-based mutations of valid bodies on every POST route get what the contract
says — 200 for a body the service must take, a 4xx in the one JSON error shape for one it must refuse, never a 5xx;
``/openapi.json`` describes every route (behind the key when keys are set) and a schema-driven run (schemathesis)
finds no 5xx, and no 200 for a body that breaks the schema."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import WORDS

LIMITS = dict(max_inputs=8, max_chars=400, max_k=20)
ROUTES = {  # a valid body of each POST route
    "/v1/embeddings": {"input": ["god is good", "madzi"], "model": "tiny", "encoding_format": "float",
                       "dimensions": 32},
    "/embed": {"inputs": ["god is good", "the river is wide"], "normalize": True, "truncate": True},
    "/search": {"query": "god is good", "k": 3},
}
ERROR_KEYS = {"message", "type", "limit", "value"}
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def index_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("index") / "pairs.tsv"
    rows = [f"{' '.join(WORDS[i:i + 4])}\t{' '.join(WORDS[i + 13:i + 17])}" for i in range(12)]
    p.write_text("en\tny\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def served(tiny_model, index_file):
    from fastapi.testclient import TestClient

    from xlsent.serve.app import Service, create_app
    from xlsent.serve.limits import ServeLimits

    service = Service(str(tiny_model), limits=ServeLimits(**LIMITS), index=str(index_file), name="tiny")
    service.load()
    app = create_app(service, load=False)
    yield TestClient(app), app
    service.close()


@pytest.fixture(scope="module")
def client(served):
    return served[0]


def post_raw(client, route: str, body: bytes):
    return client.post(route, content=body, headers={"Content-Type": "application/json"})


def post(client, route: str, obj):
    """JSON as a client writes it: ASCII escapes, so a lone surrogate travels as ``\\ud800`` (valid JSON)."""
    return post_raw(client, route, json.dumps(obj).encode("ascii"))


def assert_answered(r) -> None:
    """No 5xx; a 4xx is the one JSON error shape; a 200 is JSON."""
    assert r.status_code < 500, (r.status_code, r.text[:500])
    body = r.json()
    if r.status_code >= 400:
        assert set(body) == {"error"} and set(body["error"]) == ERROR_KEYS, body
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]
        assert "\n" not in body["error"]["message"]


# -- the cases of the issue ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("route,body,field,index", [
    ("/v1/embeddings", {"model": "tiny", "input": ["\ud800"]}, "input", 0),
    ("/v1/embeddings", {"input": ["fine", "cut \udfff emoji"]}, "input", 1),
    ("/v1/embeddings", {"input": "\ud83d"}, "input", None),
    ("/v1/embeddings", {"model": "\ud800", "input": ["x"]}, "model", None),
    ("/v1/embeddings", {"input": "x", "encoding_format": "\udc00"}, "encoding_format", None),
    ("/v1/embeddings", {"input": "x", "language": "ny\ud800"}, "language", None),
    ("/v1/embeddings", {"input": "x", "user": "\ud800"}, "user", None),
    ("/embed", {"inputs": ["a", "b", "\ud800"]}, "inputs", 2),
    ("/search", {"query": "\ud800"}, "query", None),
    ("/search", {"query": "god", "language": "\ud800"}, "language", None),
])
def test_text_that_is_not_unicode_is_422_naming_the_field_and_index(client, route, body, field, index):
    r = post(client, route, body)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["limit"] == "unicode" and err["value"] == {"field": field, "index": index}, err
    assert f"'{field}'" in err["message"] and "not Unicode" in err["message"]
    assert (f"input {index} of" in err["message"]) == (index is not None)


def test_messages_that_echo_a_value_escape_and_cut_it(client):
    r = post(client, "/v1/embeddings", {"model": "é" * 5000, "input": "x"})
    assert r.status_code == 422 and r.json()["error"]["limit"] == "model"
    message = r.json()["error"]["message"]
    assert len(message) < 300 and "\\xe9" in message  # escaped, cut
    r = post(client, "/v1/embeddings", {"input": "x", "encoding_format": ["a\nb"] * 1000})
    assert r.status_code == 422 and len(r.json()["error"]["message"]) < 300


def test_json_python_cannot_hold_is_422(client):
    for body in (b"[" * 100_000, b'{"input": ' + b"1" * 5000 + b"}", b'{"input": "x", "dimensions": NaN}',
                 b'\xff\xfe{"input": "x"}', b'{"input": "\\ud800"'):
        assert_answered(post_raw(client, "/v1/embeddings", body))
        assert post_raw(client, "/v1/embeddings", body).status_code == 422


# -- property-based: mutations of valid bodies ----------------------------------------------------------------------

SURROGATE = st.integers(0xD800, 0xDFFF).map(chr)
CONTROL = st.sampled_from([chr(c) for c in [*range(0, 32), 127, *range(0x80, 0xA0)]])
FORMAT = st.sampled_from(["\u200b", "\u200c", "\u200d", "\u200e", "\u202e", "\u2028", "\u2029", "\ufeff", "\u00ad",
                          "\U000e0001", "\ufffe", "\uffff"])
CHAR = st.one_of(st.characters(), SURROGATE, CONTROL, FORMAT, st.sampled_from(WORDS).map(lambda w: w + " "))
TEXT = st.one_of(
    st.lists(CHAR, max_size=30).map("".join),
    st.sampled_from(["", " ", "\t\n", "god is good", "tiny", "float", "base64", "ny"]),
    st.tuples(CHAR, st.integers(0, 2 * LIMITS["max_chars"] + 2)).map(lambda t: t[0] * t[1]),  # very long
)
NUMBER = st.one_of(st.integers(), st.sampled_from([0, -1, 1, 32, 2**31, 2**63, -(2**63), 10**30, -(10**30)]),
                   st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1.5, -0.0, 1e308]))
SCALAR = st.one_of(st.none(), st.booleans(), NUMBER, TEXT)
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=6),
                                                     st.dictionaries(TEXT, inner, max_size=4)), max_leaves=12)
KEYS = st.sampled_from(["input", "inputs", "query", "k", "model", "encoding_format", "dimensions", "normalize",
                        "truncate", "language", "user"])


TEXT_FIELDS = ("input", "inputs", "query", "model", "encoding_format", "language")


@st.composite
def mutated(draw, valid: dict):
    """A valid body with one to three mutations: a text field (or a list's item) given a nasty text, a field set to
    any JSON value or removed, or the whole body replaced; sometimes its bytes cut short."""
    body = json.loads(json.dumps(valid))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["text", "text", "item", "item", "set", "drop", "whole"]))
        if kind == "text":
            own = [k for k in TEXT_FIELDS if k in valid] * 3  # the route's own fields, mostly
            body[draw(st.sampled_from(own + list(TEXT_FIELDS)))] = draw(st.one_of(TEXT, TEXT, st.lists(TEXT, min_size=1,
                                                                                                       max_size=4)))
        elif kind == "set":
            body[draw(st.one_of(KEYS, TEXT))] = draw(VALUE)
        elif kind == "drop" and body:
            body.pop(draw(st.sampled_from(sorted(body))))
        elif kind == "item":
            field = next((k for k in ("input", "inputs") if isinstance(body.get(k), list)), None)
            if field and body[field]:
                body[field][draw(st.integers(0, len(body[field]) - 1))] = draw(st.one_of(TEXT, TEXT, VALUE))
        elif kind == "whole":
            body = draw(VALUE)
            break
    raw = json.dumps(body).encode("ascii")
    if draw(st.integers(0, 19)) == 0:
        raw = raw[:draw(st.integers(0, len(raw)))]
    return raw


def _surrogate(value) -> bool:
    """A lone surrogate in any string of ``value``, keys included (valid JSON, not text)."""
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(_surrogate(k) or _surrogate(v) for k, v in value.items())
    return isinstance(value, list) and any(_surrogate(v) for v in value)


def _texts(value) -> bool:
    """``input``/``inputs``/``query`` as the service takes them: one text or a list of 1 to ``max_inputs``, each a
    string, not blank (``str.strip``), at most ``max_chars`` characters."""
    texts = [value] if isinstance(value, str) else value
    return (isinstance(texts, list) and 1 <= len(texts) <= LIMITS["max_inputs"]
            and all(isinstance(t, str) and bool(t.strip()) and len(t) <= LIMITS["max_chars"] for t in texts))


def _int(value, lo: int, hi: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def expected(route: str, raw: bytes) -> set[int]:
    """What the contract (docs/guides/serving.md, the service's docstring) says a body gets, worked out here apart
    from the service: 200 for a body it takes, a 4xx for one it must refuse. The served model is "tiny", 32 wide,
    with no named prompts and no language means (so any 'language' is refused); other fields are ignored."""
    refuse = {413, 422}
    try:
        body = json.loads(raw)
    except ValueError:  # not JSON (cut short), or not UTF-8
        return refuse
    if not isinstance(body, dict) or _surrogate(body):
        return refuse
    common = (_int(body.get("dimensions", 1), 1, 32) or body.get("dimensions", 0) is None) and \
        body.get("language") is None and body.get("prompt_name") is None
    if route == "/v1/embeddings":
        ok = ("input" in body and _texts(body["input"]) and body.get("model") in (None, "tiny")
              and body.get("encoding_format", "float") in ("float", "base64", "int8", "ubinary"))
    elif route == "/embed":
        ok = ("inputs" in body and _texts(body["inputs"]) and isinstance(body.get("normalize", True), bool)
              and body.get("truncate") in (None, True, False))
        if ok and common and body.get("truncate") is False:
            return {200, 413}  # a text over the model's 64 pieces is refused (413) rather than cut
    else:
        ok = "query" in body and isinstance(body["query"], str) and _texts(body["query"]) \
            and _int(body.get("k", 1), 1, LIMITS["max_k"])
    return {200} if ok and common else refuse


def _fuzz(route: str, seen: list):
    @FUZZ
    @given(body=mutated(ROUTES[route]))
    def run(client, body):
        r = post_raw(client, route, body)
        assert_answered(r)
        want = expected(route, body)
        seen.append(r.status_code)
        assert r.status_code in want, (r.status_code, want, body[:300], r.text[:300])

    return run


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_mutated_bodies_never_get_a_5xx_and_every_refusal_is_the_one_shape(client, route):
    """Each mutated body gets what the contract says (:func:`expected`, worked out apart from the service): 200 for
    one the service must take, a 4xx in the one error shape for one it must refuse — never a 200 for a bad body,
    never a 5xx. Both kinds are drawn: a run that drew only one would test half of it."""
    assert post(client, route, ROUTES[route]).status_code == 200
    seen: list[int] = []
    _fuzz(route, seen)(client)
    assert seen.count(200) >= 10 and sum(400 <= s < 500 for s in seen) >= 50, sorted(set(seen))


# -- OpenAPI ------------------------------------------------------------------------------------------------------

def test_openapi_describes_every_route_with_this_servers_limits(client):
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    assert set(paths) == {"/v1/embeddings", "/embed", "/search", "/health", "/info", "/metrics", "/"}
    schemas = spec["components"]["schemas"]
    for route, name in (("/v1/embeddings", "EmbeddingsRequest"), ("/embed", "EmbedRequest"),
                        ("/search", "SearchRequest")):
        op = paths[route]["post"]
        assert op["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/" + name)
        for code in ("200", "401", "413", "422", "429", "503"):
            assert code in op["responses"], (route, code)
        assert op["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    for route in ("/health", "/info", "/metrics", "/"):
        assert "200" in paths[route]["get"]["responses"]
    texts = schemas["EmbeddingsRequest"]["properties"]["input"]["anyOf"]
    assert {"type": "string", "minLength": 1, "maxLength": LIMITS["max_chars"]} in texts
    assert any(t.get("maxItems") == LIMITS["max_inputs"] for t in texts)
    k = schemas["SearchRequest"]["properties"]["k"]
    assert (k["minimum"], k["maximum"]) == (1, LIMITS["max_k"])
    assert set(schemas["ErrorDetail"]["properties"]) == ERROR_KEYS
    assert client.get("/docs").status_code == 404 and client.get("/redoc").status_code == 404


def test_openapi_needs_the_key_when_keys_are_set(tiny_model):
    from fastapi.testclient import TestClient

    from xlsent.serve.app import Service, create_app
    from xlsent.serve.auth import ApiKeys

    key = "sk-test-0123456789abcdef"
    service = Service(str(tiny_model), name="tiny", api_keys=ApiKeys([key]))
    c = TestClient(create_app(service, load=False))
    r = c.get("/openapi.json")
    assert r.status_code == 401 and r.json()["error"]["limit"] == "api_key"
    assert c.get("/openapi.json", headers={"Authorization": f"Bearer {key}"}).status_code == 200


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_a_schema_driven_run_finds_no_server_error(served, mode):
    """schemathesis reads ``/openapi.json`` in process (ASGI) and sends bodies it generates from it — valid ones
    (positive) and ones that break it (negative) — to every route: none may answer 5xx, and a negative one is
    refused with a 4xx."""
    import schemathesis
    from schemathesis.checks import not_a_server_error
    from schemathesis.generation import GenerationMode

    schema = schemathesis.openapi.from_asgi("/openapi.json", served[1])
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 7
    calls = []
    for operation in operations:
        if mode == "negative" and operation.method.upper() != "POST":
            continue  # a GET route has nothing to break: no parameters, no body

        @settings(max_examples=25, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy(generation_mode=GenerationMode(mode)))
        def run(case):
            response = case.call()
            calls.append(response.status_code)
            assert response.status_code < 500, (case.method, case.path, case.body, response.text[:300])
            case.validate_response(response, checks=[not_a_server_error])
            if mode == "negative":  # a body that breaks the schema is refused (413: a text over max_chars), never 200
                assert 400 <= response.status_code < 500, (case.body, response.status_code, response.text[:300])

        run()
    assert len(calls) >= 3 * 25  # every POST route at least
