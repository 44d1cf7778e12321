"""The service's OpenAPI description: request and response bodies of every route, with the server's own limits.

The routes read and check their JSON by hand (:mod:`xlsent.serve.app`: one error shape, the limit named), so the
pydantic models here describe bodies and never validate a request. They are built when the app is created, from
its :class:`~xlsent.serve.limits.ServeLimits`: ``/openapi.json`` states the limits this server enforces (inputs per
request, characters per text, ``k``), not the defaults.
"""

from __future__ import annotations

from typing import Any, Literal, Union

from xlsent.serve.limits import ServeLimits

REF = "#/components/schemas/{model}"


def _models(limits: ServeLimits) -> list:
    from pydantic import BaseModel, ConfigDict, Field, RootModel

    Text = Union[str, list[str]]  # its limits are written into the schema by components()
    centering = Field(None, description="center the vectors with this language's stored mean (see /info)")
    width = Field(None, ge=1, description="the first N coordinates of each vector, renormalised to unit length "
                  "(v[:N] / ‖v[:N]‖ of the full vector; after any centering): a whole number from 1 to the model's "
                  "width (/info: dimensions.full; else 422 naming 'dimensions'); default: the server's --dimensions, "
                  "else the full width")

    class Open(BaseModel):  # a request may carry other fields: they are ignored
        model_config = ConfigDict(extra="allow")

    class EmbeddingsRequest(Open):
        """OpenAI-compatible ``POST /v1/embeddings``."""

        input: Text = Field(description="one text or a list of texts")
        model: str | None = Field(None, description="the served model's name (another name → 422); may be left out")
        encoding_format: Literal["float", "base64", "int8", "ubinary"] = Field(
            "float", description="float: a list of floats | base64: each vector's little-endian float32 bytes | "
            "int8: a list of integers −127…127, q = round(127·x/max|x|), with the row's 'scale' (max|x|/127; the "
            "vector ≈ q × scale) | ubinary: a list of integers 0…255, the sign bits x > 0 packed 8 to a byte, the "
            "first coordinate in the high bit (numpy.packbits; ⌈d/8⌉ bytes). int8 and ubinary quantise the vector "
            "after the cut to 'dimensions'")
        dimensions: int | None = width
        language: str | None = centering

    class EmbedRequest(Open):
        """TEI-style ``POST /embed``."""

        inputs: Text = Field(description="one text or a list of texts")
        normalize: bool = Field(True, description="unit-length vectors")
        truncate: bool | None = Field(None, description="cut a text over the token limit (true) or refuse it with "
                                      "413 (false); default: the server's --overlong policy")
        dimensions: int | None = width
        language: str | None = centering

    class SearchRequest(Open):
        """``POST /search``: the nearest entries of the server's ``--index`` corpus."""

        query: str = Field(min_length=1, max_length=limits.max_chars, description="the query text")
        k: int = Field(10, ge=1, le=limits.max_k, description=f"results, 1 to {limits.max_k}")
        language: str | None = Field(None, description="the query's language (needed by a centered index)")

    class Embedding(BaseModel):
        object: Literal["embedding"]
        embedding: list[float] | list[int] | str = Field(description="floats (float), base64 of float32 bytes "
                                                         "(base64), integers −127…127 (int8) or packed sign bits as "
                                                         "integers 0…255 (ubinary)")
        index: int
        scale: float | None = Field(None, description="int8 only: the row's scale (the vector ≈ embedding × scale)")

    class Usage(BaseModel):
        prompt_tokens: int
        total_tokens: int
        truncated_inputs: int = Field(description="texts cut to the token limit")

    class EmbeddingsResponse(BaseModel):
        object: Literal["list"]
        data: list[Embedding]
        model: str
        usage: Usage

    class Match(BaseModel):
        score: float
        cosine: float
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
                                                  "matryoshka (the widths the model folder records it was trained "
                                                  "to be cut to; [] when none) — any width from 1 to full is served")
        encoding_formats: list[str] = Field(description="the encoding_format values /v1/embeddings takes")
        backend: str
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

    class Vectors(RootModel[list[list[float]]]):
        """``POST /embed``'s answer: one vector per input, in order."""

    return [EmbeddingsRequest, EmbedRequest, SearchRequest, EmbeddingsResponse, Vectors, SearchResponse, Health, Info,
            Error]


def components(limits: ServeLimits) -> dict[str, dict]:
    """``components.schemas`` of the description: every model, references as ``#/components/schemas/NAME``."""
    from pydantic.json_schema import models_json_schema

    _, top = models_json_schema([(m, "validation") for m in _models(limits)], ref_template=REF)
    out = dict(top.get("$defs", {}))
    text_item = {"type": "string", "minLength": 1, "maxLength": limits.max_chars}
    text_list = {"type": "array", "items": text_item, "minItems": 1, "maxItems": limits.max_inputs}
    for name, field in (("EmbeddingsRequest", "input"), ("EmbedRequest", "inputs")):
        prop = out[name]["properties"][field]
        prop.pop("anyOf", None)
        prop["anyOf"] = [dict(text_item), dict(text_list)]
        prop["description"] = (f"one text or a list of 1 to {limits.max_inputs} texts (more → 413), each non-blank, "
                               f"at most {limits.max_chars} characters (more → 413) and valid Unicode (a lone "
                               "surrogate such as \\ud800 → 422)")
    return out


def ref(name: str) -> dict:
    return {"$ref": REF.format(model=name)}


def json_body(name: str, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": ref(name)}}}


ERRORS = {
    401: "no, a malformed or a wrong API key (when the server has keys); WWW-Authenticate: Bearer",
    413: "the body, the number of inputs, a text's characters or (--overlong reject) its tokens over the limit",
    422: "not JSON, a missing or wrongly typed field, a blank text, text that is not Unicode, another model name, "
         "an unknown encoding_format, a 'dimensions' that is not 1 to the model's width",
    429: "the queue is full; Retry-After says when to retry",
    503: "the model is still loading (Retry-After), failed to load, or the server is draining",
}


def responses(ok: str, ok_description: str, codes=(401, 413, 422, 429, 503)) -> dict:
    """The ``responses`` of a route: 200 with ``ok`` (a component's name) and each refusal with the error shape."""
    out: dict[Any, dict] = {200: json_body(ok, ok_description)} if ok else {}
    for code in codes:
        out[code] = json_body("Error", ERRORS[code])
    return out


def request_body(name: str) -> dict:
    """``openapi_extra`` of a POST route whose JSON body is component ``name``."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref(name)}}}}
