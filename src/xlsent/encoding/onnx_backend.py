"""The ONNX backend: an exported folder (``xlsent export``) run by onnxruntime.

Produces what :class:`~xlsent.encoding.encoder.SentenceTransformerBackend` produces for the source model —
the prompt prefixed, the same truncation, the whole module pipeline inside the graph — without torch or
transformers at run time: the tokenizer is the ``tokenizers`` library reading the folder's
``tokenizer.json``. Texts are tokenised once, sorted by token count and batched, so a batch pads to a
similar length (as :func:`xlsent.encoding.embed.embed` does for torch); rows come back in input order.

Threads: ``threads`` sets onnxruntime's intra-op pool (``0`` = onnxruntime's default, one per physical
core); the inter-op pool is 1 and execution sequential, the torch backend's setting under ``--threads``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xlsent.encoding.onnx_folder import ExportManifest, read_manifest
from xlsent.models.handle import model_fingerprint


def session_options(threads: int = 0, spin: bool = True):
    """onnxruntime options: ``threads`` intra-op threads (0 = its default), one inter-op thread.

    ``spin=False`` stops the intra-op threads from busy-waiting between operators (onnxruntime's
    ``session.intra_op.allow_spinning``). Spinning suits a process that only embeds; a server's HTTP loop needs
    those cycles (``xlsent serve``: 22–24 ms of CPU a request instead of 23–29 ms under 32 clients, docs/results.md)."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = max(int(threads), 0)
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.log_severity_level = 3
    if not spin:
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return so


_SAID: set[str] = set()


def onnx_providers() -> list:
    """onnxruntime's execution providers for the process's device: CUDA (then the CPU) when the device is a CUDA
    GPU and ``onnxruntime-gpu`` is installed; otherwise the CPU — said once when the device is a CUDA GPU."""
    import warnings

    import onnxruntime as ort

    from xlsent.utils.device import current_device, device_kind

    device = current_device()
    if device_kind(device) == "cuda":
        if "CUDAExecutionProvider" in ort.get_available_providers():
            return [("CUDAExecutionProvider", {"device_id": int(device.split(":")[1])}), "CPUExecutionProvider"]
        if device not in _SAID:
            _SAID.add(device)
            warnings.warn(f"the ONNX backend runs on the CPU: onnxruntime has no CUDA provider here (install "
                          f"onnxruntime-gpu to run exported models on {device})", stacklevel=2)
    return ["CPUExecutionProvider"]


class OnnxBackend:
    """An exported folder as a :class:`~xlsent.encoding.encoder.Backend`.

    Args:
        folder: a folder written by :func:`xlsent.exporter.folder.export_model`.
        threads: onnxruntime intra-op threads (0 = its default).
        spin: let those threads busy-wait between operators (see :func:`session_options`).
        batch_tokens: the most padded pieces (texts × longest text) one forward pass holds; a larger batch is run
            in parts (0 = no limit). The exported graph materialises each layer's attention scores, texts × heads ×
            length², where torch's fused attention does not: the cap is what keeps a batch of long texts from
            taking gigabytes. 4,096 measured best on 7,026 NT verses and UDHR paragraphs at batch 64, int8, 2
            threads: peak memory 3,506 → 1,731 MiB (torch: 1,680) and 51 → 42 s (``benchmarks/export/onnx_memory.py``,
            docs/results.md). A batch of 32 verses (≈ 50 pieces each) stays one pass.
    """

    def __init__(self, folder: str | Path, threads: int = 0, spin: bool = True, batch_tokens: int = 4096) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.folder = Path(folder)
        self.manifest: ExportManifest = read_manifest(self.folder)
        m = self.manifest
        self.name = m.name
        self.dimension = m.dimension
        self.normalizes = m.normalizes
        self.threads = int(threads)
        self.batch_tokens = max(int(batch_tokens), 0)
        self.tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(m.max_seq_length)
        self.counter = Tokenizer.from_file(str(self.folder / "tokenizer.json"))  # untruncated, for counting only
        self.counter.no_padding()
        self.counter.no_truncation()
        self.fingerprint = f"onnx:{model_fingerprint(self.folder)}"
        self.providers = onnx_providers()
        self.session = ort.InferenceSession(str(self.folder / m.model_file), session_options(threads, spin),
                                            providers=self.providers)

    def token_ids(self, texts: list[str], prompt: str | None = None) -> list[list[int]]:
        """The ids the graph sees for each text (``prompt`` prefixed, the model's own when None; lower-cased if
        the model does; truncated)."""
        m = self.manifest
        prompt = m.prompt if prompt is None else prompt
        prepared = [prompt + (t.lower() if m.lowercase else t) for t in texts]
        return [e.ids for e in self.tokenizer.encode_batch(prepared)]

    @property
    def max_tokens(self) -> int:
        return int(self.manifest.max_seq_length)

    @property
    def default_prompt(self) -> str:
        """The text prefixed when no prompt is given (the exported model's default prompt)."""
        return self.manifest.prompt

    def token_counts(self, texts: list[str], prompt: str | None = None) -> list[int]:
        """Pieces each text becomes with the prompt (the model's own when None) and special tokens, before
        truncation."""
        m = self.manifest
        prompt = m.prompt if prompt is None else prompt
        enc = self.counter.encode_batch([prompt + (t.lower() if m.lowercase else t) for t in texts])
        return [len(e.ids) for e in enc]

    def pieces(self, texts: list[str]) -> tuple[list[list[int]], int | None]:
        """Each text's piece ids without prompt or special tokens (lower-cased if the model does), and the
        tokenizer's unknown-piece id (None if it has none)."""
        m = self.manifest
        enc = self.counter.encode_batch([t.lower() if m.lowercase else t for t in texts], add_special_tokens=False)
        return [e.ids for e in enc], self.unk_id

    @property
    def unk_id(self) -> int | None:
        """The unknown piece's id, from ``tokenizer.json``'s model (``unk_id`` of a unigram model, ``unk_token``
        of a word-piece or BPE one)."""
        import json

        model = json.loads((self.folder / "tokenizer.json").read_text(encoding="utf-8")).get("model", {})
        if isinstance(model.get("unk_id"), int):
            return model["unk_id"]
        return self.counter.token_to_id(model["unk_token"]) if model.get("unk_token") else None

    def truncate(self, text: str, max_tokens: int, prompt: str | None = None) -> str:
        """``text`` cut so that it fits ``max_tokens`` pieces with the prompt (the model's own when None) and special
        tokens."""
        budget = max(1, max_tokens - self.token_counts([""], prompt)[0])
        enc = self.counter.encode(text, add_special_tokens=False)
        return text if len(enc.offsets) <= budget else text[: enc.offsets[budget - 1][1]]

    def run_ids(self, batch: list[list[int]]) -> np.ndarray:
        """One forward pass over already-tokenised texts (padded here to the longest), in parts of at most
        ``batch_tokens`` padded pieces."""
        width = max(len(ids) for ids in batch)
        step = max(1, self.batch_tokens // width) if self.batch_tokens else len(batch)
        if len(batch) > step:
            return np.concatenate([self.run_ids(batch[i : i + step]) for i in range(0, len(batch), step)])
        input_ids = np.full((len(batch), width), self.manifest.pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for i, ids in enumerate(batch):
            input_ids[i, : len(ids)] = ids
            mask[i, : len(ids)] = 1
        return self.session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]

    def embed(self, texts: list[str], batch_size: int = 64, show_progress: bool | None = None,
              prompt: str | None = None) -> np.ndarray:
        from xlsent.utils.progress import progress_bar

        texts = list(texts)
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts, prompt)
        lengths = np.fromiter((len(x) for x in ids), np.int64, len(ids))
        order = np.argsort(-lengths, kind="stable")
        with progress_bar(show_progress) as progress:
            task = progress.add_task(f"embedding (onnx, {len(texts):,} texts)", total=int(lengths.sum()))
            for start in range(0, len(texts), batch_size):
                idx = order[start : start + batch_size]
                out[idx] = self.run_ids([ids[i] for i in idx])
                progress.advance(task, int(lengths[idx].sum()))
        return out
