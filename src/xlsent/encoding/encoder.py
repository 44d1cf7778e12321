"""The one path from texts to vectors: :class:`Encoder` = backend + gloss + chunked pooling + normalisation.

Every command that embeds text — ``embed``, each ``eval`` command, ``mine``, the demo and the
evaluation after training — goes through an :class:`Encoder`, so a model gets the same vectors,
and the same scores, wherever it is used.

An encoder has a small explicit interface (:class:`TextEncoder`): ``name``, ``dimension`` and
``encode(texts, lang=None) -> float32 array``. What actually runs the model is a
:class:`Backend` (``embed(texts) -> array``, the model's own prompt included):

* :class:`SentenceTransformerBackend` — a loaded sentence-transformers model, batches sorted by
  token length (:func:`xlsent.encoding.embed.embed`);
* :class:`~xlsent.encoding.onnx_backend.OnnxBackend` — a folder written by ``xlsent export`` (fp32 or
  int8) run by onnxruntime (``--backend onnx``, or picked up from the folder itself);
* the siamese recipe's cached-feature backend (the same vectors as its saved model, from the
  feature cache; :mod:`xlsent.recipes.siamese`).

:meth:`Encoder.load` chooses: ``backend="auto"`` runs an exported folder with onnxruntime and anything
else with torch; ``"onnx"`` on a torch model exports it once (fp32) into the cache and runs that;
``"torch"`` on an exported folder is an error (the folder has no torch weights). ``threads`` sets the
thread count of whichever backend runs (``torch.set_num_threads`` or onnxruntime's intra-op pool).

The encoder adds, in this order:

1. **gloss** — a word-gloss model (:mod:`xlsent.models.gloss`) maps every word of non-English
   text through its dictionary first. ``lang`` says the texts' language: English (``en``,
   ``eng``) is never glossed; any other code, or ``None`` (unknown), is;
2. **chunked pooling** (``chunk_words > 0``) — long texts are embedded in ≤ N-word chunks and
   averaged (:mod:`xlsent.encoding.chunked`);
3. **normalisation** (``normalize``) — unit-length rows;
4. **width** (``dimensions``) — the first N coordinates of each row, renormalised
   (:func:`xlsent.encoding.width.cut`; ``None`` = the model's full width);
5. **memo** (``memo=True``) — a text is embedded once for the encoder's lifetime (evaluation
   pools, triplets and MSE share texts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from xlsent.data.sets.pairs import is_english
from xlsent.models.gloss import Gloss, load_gloss
from xlsent.models.handle import ModelHandle, load_model
from xlsent.utils.errors import XlsentError
from xlsent.utils.options import Option, at_least, one_of

BACKENDS = ("auto", "torch", "onnx")
#: how a model runs, declared once: the encoder checks them, the API's and the CLI's options are these
RUNNING: dict[str, Option] = {
    "backend": one_of(BACKENDS, "auto", "auto: an exported folder (xlsent export) runs on onnxruntime, any other model "
                      "on torch; onnx: a torch model is exported once (fp32) into the cache"),
    "threads": at_least(0, 0, "threads of the backend that runs the model, torch or onnxruntime (0 = its default)"),
}


def check_running(backend: str, threads: int) -> None:
    """``backend`` / ``threads`` against their declarations (:data:`RUNNING`): one line, before any model loads."""
    RUNNING["backend"].check(backend if backend is not None else "None", "backend")  # None is no backend
    RUNNING["threads"].check(threads, "threads")


@runtime_checkable
class TextEncoder(Protocol):
    """What evaluators, mining and the CLI need from an encoder."""

    name: str

    @property
    def dimension(self) -> int: ...

    def encode(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray: ...


class Backend(Protocol):
    """Runs a model: ``embed(texts)`` → one row per text, in input order (the model's prompt applied)."""

    name: str
    dimension: int
    normalizes: bool  # rows come out unit-length

    def embed(self, texts: list[str], batch_size: int = 64, show_progress: bool | None = None,
              prompt: str | None = None) -> np.ndarray: ...


class SentenceTransformerBackend:
    """A sentence-transformers model behind a :class:`~xlsent.models.handle.ModelHandle`."""

    def __init__(self, handle: ModelHandle, dtype: str = "fp32") -> None:
        from xlsent.encoding.chunked import model_normalizes

        self.handle = handle
        self.name = handle.name
        self.dimension = handle.dimension
        self.normalizes = model_normalizes(handle.model)
        self.dtype = dtype
        # on a CPU, bf16 is autocast (the weights stay fp32: matrix products in bf16, sums in fp32 — faster where timed so
        # and nearer fp32's vectors than bf16 weights); on a GPU the weights are cast
        self.autocast = dtype == "bf16" and handle.model.device.type == "cpu"
        if dtype != "fp32" and not self.autocast:
            from xlsent.utils.device import torch_dtype

            handle.model.to(torch_dtype(dtype))

    def embed(self, texts: list[str], batch_size: int = 64, show_progress: bool | None = None,
              prompt: str | None = None) -> np.ndarray:
        from xlsent.encoding.embed import embed
        from xlsent.utils.device import cpu_autocast

        with cpu_autocast(self.dtype if self.autocast else "fp32", "cpu"):
            return embed(self.handle.model, texts, batch_size=batch_size, show_progress=show_progress, prompt=prompt)

    def prompts(self) -> dict[str, str]:
        """The model's named prompts (sentence-transformers' ``prompts``: e5's ``query`` and ``passage``)."""
        return dict(self.handle.model.prompts)

    @property
    def max_tokens(self) -> int:
        return int(self.handle.model.max_seq_length)

    @property
    def _counter(self):
        """A copy of the tokenizer for counting: a Hugging Face tokenizer changes its truncation state on every
        call, so counting beside a running ``encode`` (the server does) must not share it."""
        if getattr(self, "_counting_tokenizer", None) is None:
            import copy

            self._counting_tokenizer = copy.deepcopy(self.handle.model.tokenizer)
        return self._counting_tokenizer

    @property
    def default_prompt(self) -> str:
        """The text prefixed when no prompt is named (e5: ``"passage: "``)."""
        return self.handle.prompt

    def token_counts(self, texts: list[str], prompt: str | None = None) -> list[int]:
        """Pieces each text becomes with the prompt (the model's own when None) and special tokens, before
        truncation."""
        tok = self._counter
        prompt = self.handle.prompt if prompt is None else prompt
        return [len(ids) for ids in tok([prompt + t for t in texts], add_special_tokens=True)["input_ids"]]

    def pieces(self, texts: list[str]) -> tuple[list[list[int]], int | None]:
        """Each text's piece ids without prompt or special tokens, and the tokenizer's unknown-piece id."""
        tok = self._counter
        return tok(list(texts), add_special_tokens=False)["input_ids"], tok.unk_token_id

    def truncate(self, text: str, max_tokens: int, prompt: str | None = None) -> str:
        """``text`` cut so that it fits ``max_tokens`` pieces with the prompt (the model's own when None) and special
        tokens."""
        tok = self._counter
        budget = max(1, max_tokens - (self.token_counts([""], prompt)[0]))
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = enc["offset_mapping"]
        return text if len(offsets) <= budget else text[: offsets[budget - 1][1]]


class FunctionBackend:
    """Any ``texts -> array`` function as a backend (tests, precomputed tables)."""

    def __init__(self, fn: Callable[[list[str]], np.ndarray], name: str = "function", dimension: int = 0,
                 normalizes: bool = False) -> None:
        self.fn, self.name, self.dimension, self.normalizes = fn, name, dimension, normalizes

    def embed(self, texts: list[str], batch_size: int = 64, show_progress: bool | None = None) -> np.ndarray:
        return np.asarray(self.fn(list(texts)), dtype=np.float32)


class Encoder:
    """Texts → float32 rows: gloss (non-English text of gloss models) → chunked pooling → normalisation.

    Args:
        backend: what runs the model (:class:`Backend`).
        gloss: the word gloss applied to non-English text (gloss models; found by :meth:`load`).
        chunk_words: chunked pooling over ≤ N-word chunks (0 = off).
        normalize: unit-length output rows.
        batch_size: texts per forward pass.
        show_progress: a progress bar while embedding (``None``: this process's setting, on in the CLI).
        memo: remember every text's vector for the encoder's lifetime.
        dimensions: the first N coordinates of each vector, renormalised (``None`` = the full width).
        prompt: the text prefixed to every input (``None``: the model's default prompt; ``""``: none).
        label: how messages name the model (``None``: ``name``; a model loaded in Python: ``MODEL``).

    Texts given with a label (``encode(texts, lang, source="texts")``, :meth:`check_readable`) are checked first: a
    side mostly made of pieces the tokenizer does not know is said once (:mod:`xlsent.encoding.readable`).
    """

    def __init__(self, backend: Backend, *, gloss: Gloss | None = None, chunk_words: int = 0,
                 normalize: bool = False, batch_size: int = 64, show_progress: bool | None = None,
                 memo: bool = False, name: str | None = None, dimensions: int | None = None,
                 prompt: str | None = None, label: str | None = None) -> None:
        from xlsent.encoding.width import valid_width

        self.backend = backend
        # checked again here, once the model is loaded (a width its folder did not say is known now)
        self.dimensions = valid_width(dimensions, int(getattr(backend, "dimension", 0) or 0) or None)
        self.gloss = gloss
        self.chunk_words = int(chunk_words or 0)
        self.normalize = bool(normalize)
        self.batch_size = int(batch_size)
        self.show_progress = show_progress
        self.prompt = prompt
        self.name = name or backend.name
        self.label = label
        self._memo: dict[str, np.ndarray] | None = {} if memo else None

    @classmethod
    def load(cls, name_or_path: str | Path | ModelHandle, backend: str = "auto", threads: int = 0,
             spin: bool = True, own: bool = False, **kwargs) -> "Encoder":
        """An encoder for a registered name, a model folder, an exported folder or a loaded handle; a gloss
        model's dictionary is picked up from its folder. ``backend``: ``auto`` | ``torch`` | ``onnx``.
        ``spin=False``: onnxruntime's threads do not busy-wait (for a process that also serves HTTP). ``own``: the
        handle was loaded for this encoder (:func:`~xlsent.models.handle.load_model` of a name or folder,
        :func:`xlsent.encoding.loading.open_encoder`): it runs in the process's encoding dtype, as a name does."""
        check_running(backend, threads)
        if not isinstance(name_or_path, ModelHandle):
            from xlsent.encoding.onnx_folder import is_export_folder

            folder = Path(str(name_or_path))
            exported = folder.is_dir() and is_export_folder(folder)
            if exported and backend == "torch":
                raise XlsentError(f"{folder}: an exported ONNX folder has no torch weights — use backend='onnx' "
                                  "(or 'auto'), or give the source model for torch")
            if backend == "onnx" and not exported:
                raise XlsentError(f"{name_or_path}: not an exported folder — export it (xlsent export), or load it "
                                  "with xlsent.exporter.load_encoder, which exports a torch model once into the cache")
            if exported:
                from xlsent.encoding.onnx_backend import OnnxBackend

                kwargs.setdefault("gloss", load_gloss(folder))
                kwargs.setdefault("name", str(name_or_path))
                return cls(OnnxBackend(folder, threads=threads, spin=spin), **kwargs)
        if threads:
            import torch

            torch.set_num_threads(int(threads))
        from xlsent.utils.device import encoding_dtype

        if isinstance(name_or_path, ModelHandle) and not own:  # the caller's model (perhaps one being trained): its
            handle = name_or_path  # weights are kept as they are (on a CPU, bf16 is autocast: nothing is cast)
            on_cpu = handle.model.device.type == "cpu"
            dtype = "bf16" if on_cpu and encoding_dtype(str(handle.model.device), handle.model) == "bf16" else "fp32"
        else:
            handle = name_or_path if isinstance(name_or_path, ModelHandle) else load_model(name_or_path)
            dtype = encoding_dtype(str(handle.model.device), handle.model)
        kwargs.setdefault("gloss", load_gloss(handle.path))
        return cls(SentenceTransformerBackend(handle, dtype), **kwargs)

    @property
    def dimension(self) -> int:
        """The width of the vectors :meth:`encode` gives (``dimensions`` when cut)."""
        return int(self.dimensions or self.backend.dimension)

    @property
    def fingerprint(self) -> str:
        """What makes this encoder's vectors what they are: the model folder's fingerprint (or the backend's
        name), the gloss and the chunking. Keys caches and mining work folders."""
        handle = getattr(self.backend, "handle", None)
        base = handle.fingerprint if handle is not None else getattr(self.backend, "fingerprint", self.backend.name)
        dtype = getattr(self.backend, "dtype", "fp32")  # half-precision vectors differ: their own caches
        return (f"{base}|gloss={len(self.gloss.dictionary) if self.gloss else 0}|chunk={self.chunk_words}"
                + (f"|dtype={dtype}" if dtype != "fp32" else "")
                + (f"|dimensions={self.dimensions}" if self.dimensions else "")
                + (f"|prompt={self.prompt!r}" if self.prompt is not None else ""))

    def replace(self, **kwargs) -> "Encoder":
        """A copy with some options changed (``normalize``, ``batch_size``, ``chunk_words``, ``dimensions``…); no
        memo is shared."""
        opts = {"gloss": self.gloss, "chunk_words": self.chunk_words, "normalize": self.normalize,
                "batch_size": self.batch_size, "show_progress": self.show_progress,
                "memo": self._memo is not None, "name": self.name, "dimensions": self.dimensions,
                "prompt": self.prompt, "label": self.label}
        opts.update(kwargs)
        return Encoder(self.backend, **opts)

    def prompt_named(self, name: str) -> str:
        """The text of the model's prompt ``name`` (e5: ``query``, ``passage``), or one line naming those there
        are."""
        return prompt_in(self.backend.prompts() if hasattr(self.backend, "prompts") else {}, name)

    @property
    def language_dependent(self) -> bool:
        """Whether a text's vector depends on its language (a gloss model's does); if not, callers may
        encode texts of many languages in one call, which batches them by length better."""
        return self.gloss is not None

    def preprocess(self, texts: Sequence[str], lang: str | None = None) -> list[str]:
        """The texts the model sees: glossed when this is a gloss model and ``lang`` is not English."""
        if self.gloss is None or is_english(lang):
            return list(texts)
        return [self.gloss(t) for t in texts]

    def _embed(self, texts: list[str]) -> np.ndarray:
        def run(batch: list[str]) -> np.ndarray:
            if self.prompt is None:  # the backend's own default (a plain function takes no prompt)
                return self.backend.embed(batch, self.batch_size, self.show_progress)
            return self.backend.embed(batch, self.batch_size, self.show_progress, prompt=self.prompt)

        if self.chunk_words > 0:
            from xlsent.encoding.chunked import chunked_encode

            vecs = chunked_encode(run, texts, self.chunk_words, renormalize=self.normalize or self.backend.normalizes)
        else:
            vecs = run(texts) if texts else np.zeros((0, self.backend.dimension), np.float32)
        vecs = np.asarray(vecs, dtype=np.float32)
        if self.normalize and len(vecs):
            vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        if self.dimensions is not None:
            from xlsent.encoding.width import cut

            vecs = cut(vecs, self.dimensions) if len(vecs) else np.zeros((0, self.dimensions), np.float32)
        return vecs

    def check_readable(self, *sides: tuple[str, Sequence[str], str | None], model: str | None = None) -> str | None:
        """The readability check of each side ``(label, texts, lang)`` through this encoder's tokenizer, as it sees
        the texts (:func:`xlsent.encoding.readable.check_readable`): one warning naming the sides it mostly cannot
        read, and the remedies; the message, or None. ``model``: how it names the model (default ``label``/``name``)."""
        from xlsent.encoding.readable import check_readable

        return check_readable(self, sides, model)

    def encode(self, texts: Sequence[str], lang: str | None = None, source: str | None = None) -> np.ndarray:
        """One float32 row per text, in input order. ``source``: how a message names the texts — given, they are
        checked first (:meth:`check_readable`)."""
        if source is not None:
            self.check_readable((source, texts, lang))
        seen = self.preprocess(texts, lang)
        if self._memo is None:
            return self._embed(seen)
        todo = list(dict.fromkeys(t for t in seen if t not in self._memo))
        if todo:
            for t, v in zip(todo, self._embed(todo)):
                self._memo[t] = v
        return np.stack([self._memo[t] for t in seen]) if seen else np.zeros((0, self.dimension), np.float32)

    __call__ = encode

    def piece_stats(self, texts: Sequence[str], lang: str | None = None) -> dict | None:
        """How the model's tokenizer splits ``texts`` (as the model sees them: glossed where it glosses):
        ``pieces_per_word`` and ``unk_rate`` (:func:`xlsent.data.sets.stats.piece_stats`); None for a backend whose
        tokenizer is not known (a plain function)."""
        pieces = getattr(self.backend, "pieces", None)
        if pieces is None:
            return None
        from xlsent.data.sets.stats import piece_stats

        seen = self.preprocess(texts, lang)
        ids, unk = pieces(seen)
        return piece_stats(ids, unk, seen)


def prompt_in(prompts: dict[str, str], name: str) -> str:
    """The text of the prompt ``name`` among a model's ``prompts``, or one line naming those there are."""
    if name not in prompts:
        known = ", ".join(prompts) or "none (an exported folder keeps only its default prompt: give prompt= its text)"
        raise XlsentError(f"prompt_name={name!r}: the model has no such prompt — its prompts: {known}")
    return prompts[name]


def folder_prompts(spec: str | Path) -> dict[str, str] | None:
    """A model's named prompts read from its folder without loading it (sentence-transformers'
    ``config_sentence_transformers.json``; an exported folder keeps none); ``None`` when the folder does not say."""
    import json

    from xlsent.encoding.onnx_folder import is_export_folder

    folder = source_folder(spec)
    if is_export_folder(folder):
        return {}
    config = folder / "config_sentence_transformers.json"
    try:
        prompts = json.loads(config.read_text(encoding="utf-8")).get("prompts")
    except (OSError, ValueError, AttributeError):
        return None
    return dict(prompts) if isinstance(prompts, dict) else None


def source_folder(spec: str | Path) -> Path:
    """The folder a model spec names: an export folder itself, else the resolved model folder (a registered
    name's prepared folder). Language means (``xlsent models calibrate``) live there, whichever backend runs."""
    from xlsent.encoding.onnx_folder import is_export_folder
    from xlsent.models.registry import resolve_model_path

    folder = Path(str(spec)).expanduser()
    return folder if folder.is_dir() and is_export_folder(folder) else resolve_model_path(str(spec))


def as_encoder(x) -> TextEncoder:
    """``x`` if it is an encoder, else a plain ``texts -> array`` function wrapped as one."""
    if isinstance(x, Encoder) or all(hasattr(x, a) for a in ("encode", "dimension", "name")):
        return x
    if callable(x) and not hasattr(x, "encode"):  # a SentenceTransformer is no encoder: wrap it with Encoder.load
        return Encoder(FunctionBackend(x))
    raise TypeError(f"not an encoder: {type(x).__name__}")
