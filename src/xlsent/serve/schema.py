"""The service's request and response bodies: pydantic models, as FastAPI takes them, and this server's limits.

FastAPI validates every request body against its route's model and writes ``/openapi.json`` from these models. The
limits are a server's (:class:`ServeLimits`), the models every server's: a body is checked against the limits of the
server answering it (:data:`SERVER_LIMITS`, set for each request by :class:`~xlsent.serve.app.AdmissionAndMetrics`),
and :func:`with_limits` writes them into that server's ``/openapi.json`` (one copy: the limits it describes are the
ones it enforces). A body that does not fit is one :class:`~fastapi.exceptions.RequestValidationError`, which
:func:`refusal` turns into the service's one error shape (:class:`~xlsent.serve.limits.LimitError`): the field and,
for text that is not Unicode, the input's index. What needs the model or the queue — a blank text, more inputs or
characters than the limits (413), a width above the model's, a language without a stored mean — is checked by the
routes (:mod:`xlsent.serve.routes`), with the status each limit has always had.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Annotated, Any, Literal, Union

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, RootModel, StrictBool, StrictInt, StrictStr,
                      WithJsonSchema, model_validator)
from pydantic_core import PydanticCustomError

from xlsent.serve.limits import LimitError, ServeLimits
from xlsent.utils.text import FIX as NOT_UNICODE_FIX
from xlsent.utils.text import describe, find_unencodable, shown

#: ``encoding_format`` of ``/v1/embeddings``: OpenAI's two, and infinity's int8 and ubinary (docs/guides/serving.md)
ENCODING_FORMATS = ("float", "base64", "int8", "ubinary")

#: the limits of the server whose request is being validated (set for each request by the app's middleware); a body
#: validated outside a request is checked against the defaults
SERVER_LIMITS: ContextVar[ServeLimits] = ContextVar("xlsent_serve_limits", default=ServeLimits())


# ---- this server's limits in the request bodies' JSON schema --------------------------------------------------------

def limit_schemas(limits: ServeLimits) -> dict[str, dict[str, dict[str, Any]]]:
    """What the request bodies' JSON schemas say of ``limits``: model → field → the schema keys that say it."""
    item = {"type": "string", "minLength": 1, "maxLength": limits.max_chars}
    texts = {"anyOf": [item, {"type": "array", "items": item, "minItems": 1, "maxItems": limits.max_inputs}],
             "description": f"one text or a list of 1 to {limits.max_inputs} texts (more → 413), each non-blank, at "
                            f"most {limits.max_chars} characters (more → 413) and valid Unicode (a lone surrogate "
                            "such as \\ud800 → 422)"}
    return {"EmbeddingsRequest": {"input": texts}, "EmbedRequest": {"inputs": texts},
            "SearchRequest": {"query": {**item, "description": "the query text (more characters → 413)"},
                              "k": {"maximum": limits.max_k, "description": f"results, 1 to {limits.max_k}"}}}


def with_limits(spec: dict[str, Any], limits: ServeLimits) -> dict[str, Any]:
    """``spec`` (the OpenAPI document FastAPI writes from these models, which say the default limits) saying this
    server's ``limits`` instead — changed in place and returned."""
    schemas = spec["components"]["schemas"]
    for model, fields in limit_schemas(limits).items():
        for field, keys in fields.items():
            schemas[model]["properties"][field].update(keys)
    return spec


DEFAULT = limit_schemas(ServeLimits())


def _at_most_max_k(k: int) -> int:
    max_k = SERVER_LIMITS.get().max_k
    if k > max_k:
        raise PydanticCustomError("less_than_equal", "Input should be less than or equal to {le}", {"le": max_k})
    return k


# ---- the request bodies ---------------------------------------------------------------------------------------------

Texts = Annotated[Union[StrictStr, list[StrictStr]], WithJsonSchema(DEFAULT["EmbeddingsRequest"]["input"])]
Language = Annotated[StrictStr | None, Field(description="center the vectors with this language's stored mean (see "
                                                         "/info)")]
PromptName = Annotated[StrictStr | None, Field(description="sentence-transformers' prompt_name: one of the model's "
                   "named prompts prefixed to every text (e5: query | passage; /info: prompts), else 422 naming "
                   "'prompt_name'; default: the model's default prompt (/info: default_prompt_name)")]
Width = Annotated[Annotated[StrictInt, Field(ge=1)] | None, Field(
    description="the first N coordinates of each vector, renormalised to unit length (v[:N] / ‖v[:N]‖ of the full "
                "vector; after any centering): a whole number from 1 to the model's width (/info: dimensions.full; "
                "else 422 naming 'dimensions'); default: the server's --dimensions, else the full width")]


class Open(BaseModel):
    """A request body: a JSON object whose every string is Unicode; other fields are allowed and ignored."""

    model_config = ConfigDict(extra="allow")

    @model_validator(mode="before")
    @classmethod
    def unicode(cls, data: Any) -> Any:
        found = find_unencodable(data) if isinstance(data, dict) else None
        if found is not None:
            where, i, char = found
            field, _, rest = where.partition("[")
            index = rest.split("]")[0]
            raise PydanticCustomError("unicode", "not Unicode", {
                "field": field.split(".")[0], "index": int(index) if index.isdigit() else None,
                "where": describe("", i, char)})
        return data


class EmbeddingsRequest(Open):
    """OpenAI-compatible ``POST /v1/embeddings``."""

    input: Texts
    model: StrictStr | None = Field(None, description="the served model's name (another name → 422); may be left out")
    encoding_format: Literal[ENCODING_FORMATS] = Field(  # type: ignore[valid-type]
        "float", description="float: a list of floats | base64: each vector's little-endian float32 bytes | int8: a "
        "list of integers −127…127, q = round(127·x/max|x|), with the row's 'scale' (max|x|/127; the vector ≈ q × "
        "scale) | ubinary: a list of integers 0…255, the sign bits x > 0 packed 8 to a byte, the first coordinate in "
        "the high bit (numpy.packbits; ⌈d/8⌉ bytes). int8 and ubinary quantise the vector after the cut to "
        "'dimensions'")
    dimensions: Width = None
    language: Language = None
    prompt_name: PromptName = None


class EmbedRequest(Open):
    """TEI-style ``POST /embed``."""

    inputs: Texts
    normalize: StrictBool = Field(True, description="unit-length vectors")
    truncate: StrictBool | None = Field(None, description="cut a text over the token limit (true) or refuse it with "
                                        "413 (false); default: the server's --overlong policy")
    dimensions: Width = None
    language: Language = None
    prompt_name: PromptName = None


class SearchRequest(Open):
    """``POST /search``: the nearest entries of the server's ``--index`` corpus."""

    query: Annotated[StrictStr, WithJsonSchema(DEFAULT["SearchRequest"]["query"])]
    k: Annotated[StrictInt, Field(ge=1, json_schema_extra=DEFAULT["SearchRequest"]["k"]),
                 AfterValidator(_at_most_max_k)] = 10
    language: StrictStr | None = Field(None, description="the query's language (needed by a centered index)")
    prompt_name: PromptName = None


# ---- the responses --------------------------------------------------------------------------------------------------

#: a float JSON can hold: a vector or score that is NaN or infinite fails its response's validation (a 500, as
#: ``json.dumps(allow_nan=False)`` made it), never a silent null
Finite = Annotated[float, Field(allow_inf_nan=False)]


class Embedding(BaseModel):
    object: Literal["embedding"]
    embedding: list[Finite] | list[int] | str = Field(description="floats (float), base64 of float32 bytes (base64), "
                                                     "integers −127…127 (int8) or packed sign bits as integers 0…255 "
                                                     "(ubinary)")
    index: int
    scale: Finite | None = Field(None, description="int8 only: the row's scale (the vector ≈ embedding × scale)")


class Usage(BaseModel):
    prompt_tokens: int
    total_tokens: int
    truncated_inputs: int = Field(description="texts cut to the token limit")


class EmbeddingsResponse(BaseModel):
    object: Literal["list"]
    data: list[Embedding]
    model: str
    usage: Usage


class Vectors(RootModel[list[list[Finite]]]):
    """``POST /embed``'s answer: one vector per input, in order."""


class Match(BaseModel):
    score: Finite
    cosine: Finite
    text: str
    lang: str
    parallel: str | None = None
    pair: Any = None


class SearchResponse(BaseModel):
    query: str
    index: str
    query_centered: bool
    index_centered: bool
    scoring: str
    matches: list[Match]


class Health(BaseModel):
    status: Literal["ok", "loading", "failed", "draining"]
    error: str | None = None
    in_flight: int | None = None


class Info(BaseModel):
    model_config = ConfigDict(extra="allow")
    model: str
    source: str
    ready: bool
    dimension: int | None
    dimensions: dict[str, Any] | None = Field(description="widths: full, default (the server's --dimensions), "
                                              "matryoshka (the widths the model folder records it was trained to be "
                                              "cut to; [] when none) — any width from 1 to full is served")
    encoding_formats: list[str] = Field(description="the encoding_format values /v1/embeddings takes")
    prompts: dict[str, str] | None = Field(description="the model's named prompts, for 'prompt_name' ({} for an "
                                           "exported folder, which keeps only its default prompt)")
    default_prompt_name: str | None = Field(description="the prompt used when a request names none")
    backend: str
    device: str = Field(description="where the model runs (the server's --device, auto resolved: cpu, cuda:0, mps)")
    dtype: str | None = Field(description="the precision a torch model encodes in (fp32 | fp16 | bf16; on a CPU bf16 "
                              "is autocast) — once loaded; before, the server's --dtype; null for ONNX")
    api_keys: bool
    draining: bool
    limits: dict[str, Any]
    index: dict[str, Any] | None
    centering: dict[str, Any] | None


class ErrorDetail(BaseModel):
    message: str = Field(description="what to fix; a value from the request is shown escaped and cut")
    type: str = Field(description="authentication_error | payload_too_large | invalid_request_error | "
                      "rate_limit_exceeded | service_unavailable")
    limit: str = Field(description="the limit or field refused (max_inputs, max_chars, input type, unicode …)")
    value: Any = Field(description="the limit's value, or where the request broke it")


class Error(BaseModel):
    """The one error shape of every refusal."""

    error: ErrorDetail


# ---- a validation error as the one error shape ---------------------------------------------------------------------

#: which field's error is said when a body breaks several (the order the routes checked them in by hand)
ORDER = ("model", "encoding_format", "dimensions", "input", "inputs", "query", "normalize", "truncate", "k",
         "language")


def not_unicode(field: str, index: int | None, where: str) -> LimitError:
    """422 for text that is not Unicode, naming the field and (in a list) the input's index."""
    at = f"input {index} of '{field}'" if index is not None else f"'{field}'"
    return LimitError(422, "unicode", {"field": field, "index": index},
                      f"{at} is not Unicode text ({where}) — {NOT_UNICODE_FIX}")


def refusal(errors: list[dict], limits: ServeLimits, name: str, width: int | None, default_width: int | None
            ) -> LimitError:
    """The one error of a body FastAPI could not validate: the first broken field (:data:`ORDER`), worded as the
    service words it (``name``: the served model's; ``width``: its full width, None while loading)."""
    def rank(e: dict) -> tuple:
        field = e["loc"][1] if len(e["loc"]) > 1 and isinstance(e["loc"][1], str) else ""
        return (e["type"] != "unicode", e["type"] != "json_invalid", bool(field), e["type"] != "missing",
                ORDER.index(field) if field in ORDER else len(ORDER))

    e = min(errors, key=rank)
    loc, kind, value = e["loc"], e["type"], e.get("input")
    field = loc[1] if len(loc) > 1 and isinstance(loc[1], str) else None
    if kind == "unicode":
        ctx = e.get("ctx") or {}
        return not_unicode(ctx.get("field", ""), ctx.get("index"), ctx.get("where", ""))
    if kind == "json_invalid":
        return LimitError(422, "json", None, "the body is not valid JSON")
    if field is None:
        return LimitError(422, "json", None, "the body must be a JSON object")
    if kind == "missing":
        return LimitError(422, field, None, f"missing '{field}'")
    if field in ("input", "inputs"):
        return LimitError(422, "input type", "string or list of strings",
                          f"'{field}' must be a string or a list of strings")
    if field == "query":
        return LimitError(422, "input type", "string", "'query' must be a string")
    if field == "model":
        return LimitError(422, "model", name, f"model {shown(value)} is not served here; this server serves "
                          f"{shown(name)}")
    if field == "encoding_format":
        return LimitError(422, "encoding_format", " | ".join(ENCODING_FORMATS),
                          f"encoding_format {shown(value)} is not supported: use {', '.join(ENCODING_FORMATS)}")
    if field == "dimensions":
        return width_error(value, width, default_width)
    if field in ("normalize", "truncate"):
        return LimitError(422, "json", None, "'normalize' and 'truncate' must be true or false")
    if field == "k":
        return LimitError(422, "k", limits.max_k, f"'k' must be a whole number from 1 to {limits.max_k}")
    if field == "language":
        return LimitError(422, "language", None, "'language' must be a language code such as 'nya'")
    return LimitError(422, field, None, f"'{field}': {e.get('msg', 'not valid')}")


def width_error(value: Any, full: int | None, default: int | None) -> LimitError:
    """422 naming ``dimensions``: a whole number from 1 to the model's width."""
    upto = f"{full} (this model's width)" if full else "the model's width"
    return LimitError(422, "dimensions", full, f"'dimensions' must be a whole number from 1 to {upto}, not "
                      f"{shown(value)}; leave it out for {default or full or 'the full width'}")


# ---- the description's pieces ---------------------------------------------------------------------------------------

ERRORS = {
    401: "no, a malformed or a wrong API key (when the server has keys); WWW-Authenticate: Bearer",
    413: "the body, the number of inputs, a text's characters or (--overlong reject) its tokens over the limit",
    422: "not JSON, a missing or wrongly typed field, a blank text, text that is not Unicode, another model name, "
         "an unknown encoding_format, a 'dimensions' that is not 1 to the model's width",
    429: "the queue is full; Retry-After says when to retry",
    503: "the model is still loading (Retry-After), failed to load, or the server is draining",
}
