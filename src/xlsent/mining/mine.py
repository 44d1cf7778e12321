"""``xlsent mine``: two monolingual files → scored sentence pairs (TSV) and a JSON summary."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from xlsent.data.formats.documents import Document, clean, load_documents
from xlsent.data.formats.readers import ReadReport, read_sentences, unique_sentences
from xlsent.data.text.splitting import split_sentences
from xlsent.mining.inputs import SideInput
from xlsent.mining.job import MineConfig, MiningJob, peak_rss_gib
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import atomic_path, write_json_atomic


@dataclass
class MineResult:
    """Mined pairs, best first, and the job's summary (what ``OUTPUT.json`` holds)."""

    pairs: list[tuple[float, str, str]]  # (score, src, tgt)
    summary: dict

    def __len__(self) -> int:
        return len(self.pairs)

    def to_pandas(self):
        """The pairs as a ``pandas.DataFrame`` with columns ``score``, ``src``, ``tgt``."""
        import pandas as pd

        return pd.DataFrame(self.pairs, columns=["score", "src", "tgt"])

    def to_dict(self) -> dict:
        """The summary (what ``OUTPUT.json`` holds) and the pairs, as ``{"score", "src", "tgt"}`` objects."""
        return {**self.summary, "pairs": [{"score": float(s), "src": a, "tgt": b} for s, a, b in self.pairs]}

    def save(self, output: str | Path) -> Path:
        """Write ``output`` (TSV: score, src, tgt) and ``output.json`` (the summary); returns the summary's path."""
        return save(self, output)


def is_document_source(path: str | Path) -> bool:
    """A document JSONL file (``*.jsonl``) or a bundled document set (``bible:nya``, ``udhr:zul`` …)."""
    name = str(path)
    return name.endswith(".jsonl") or (":" in name and not Path(name).exists())


def read_mining_input(path: str | Path, lang: str = "", documents: bool = False,
                      splitter: str = "auto") -> tuple[list[str], ReadReport]:
    """Unique sentences of a file: one sentence per line, or (``documents``) one document or paragraph per
    line, split into sentences for ``lang``. With ``documents``, ``path`` may also be a document JSONL
    (:mod:`xlsent.data.formats.documents`; every section's text is split, ``lang`` defaults to the documents'
    own) or a bundled document set such as ``bible:nya``. Blank lines and repeats are skipped and counted."""
    if not documents:
        if is_document_source(path):
            raise XlsentError(f"{path}: a document JSONL or bundled document set is read with --documents "
                              "(its sections are split into sentences); without it, give a text file, one "
                              "sentence per line")
        return read_sentences(path)
    if not is_document_source(path):
        return read_sentences(path, split=lambda line: split_sentences(line, lang or "und", splitter))
    return document_sentences(load_documents(str(path)), lang, splitter, str(path))


def document_sentences(docs: list[Document], lang: str = "", splitter: str = "auto",
                       source: str = "documents") -> tuple[list[str], ReadReport]:
    """Unique sentences of every section of ``docs`` (cleaned, split for ``lang`` or each document's own
    language); empty sections and repeats are counted in the report."""
    texts = [(lang or d.lang, clean(s.text)) for d in docs for s in d.sections]

    def split(item: tuple[str, str]) -> list[str]:
        return split_sentences(item[1], item[0], splitter) if item[1] else []

    return unique_sentences(texts, ReadReport(source), split, source, blank="empty section")


def write_pairs_tsv(path: str | Path, pairs: list[tuple[float, str, str]], what: str = "the pairs") -> None:
    with atomic_path(path, what) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            for score, s, t in pairs:
                f.write(f"{score:.6f}\t{s}\t{t}\n")


def mine(src: list[str] | SideInput, tgt: list[str] | SideInput, model_name: str, workdir: str | Path,
         cfg: MineConfig, encoder=None, overwrite: bool = False, console=None, show_progress: bool = True,
         inputs: dict | None = None, src_lang: str = "", tgt_lang: str = "", engine=None,
         encoder_settings=None, noise_filters: tuple[str, ...] = (), search_gpu: int | None = None,
         identifier=None, known_pairs: tuple[list[str], list[str]] | None = None) -> MineResult:
    """Run (or resume) a mining job and select pairs. ``src``/``tgt``: sentences, or an input file de-duplicated
    by :func:`xlsent.mining.job.open_input`; ``encoder`` default: the model by name; ``engine``: where the tasks
    run, :mod:`xlsent.mining.engine`, default here; ``noise_filters``: applied to the selected pairs
    (:mod:`xlsent.data.filters.noise_filters`; the language filter checks ``src_lang``/``tgt_lang``, else each side's
    language detected from the pairs; ``identifier``: its n-gram identifier, default the bundled one);
    ``search_gpu``: without an engine, the GPU faiss searches on here (None: the CPU;
    :func:`xlsent.mining.index.gpu_search`); ``known_pairs``: (sources, targets) known to translate each other,
    encoded here and scored in the job's pool (:meth:`MiningJob.known_margins`) — an ``"auto"`` cut is anchored
    on those the model retrieves (:func:`xlsent.mining.threshold.anchored_threshold`; ``median_score``: theirs)."""
    t0 = time.perf_counter()
    job = MiningJob(workdir, src, tgt, model_name, cfg, encoder=encoder, overwrite=overwrite, src_lang=src_lang,
                    tgt_lang=tgt_lang)
    if engine is None and search_gpu is not None:
        from xlsent.mining.engine import LocalEngine

        engine = LocalEngine(job.encoder, search_gpu=search_gpu)
    timings = job.run(console, show_progress, engine, encoder_settings)
    t = time.perf_counter()
    counts: dict = {}
    known = None
    if known_pairs is not None and len(known_pairs[0]) and cfg.threshold == "auto":
        enc = job.encoder.replace(normalize=True, batch_size=cfg.batch_size, show_progress=False, memo=False)
        scores, found = job.known_margins(enc.encode(list(known_pairs[0]), src_lang or None),
                                          enc.encode(list(known_pairs[1]), tgt_lang or None))
        # only the known pairs the model retrieves stand for what a mined translation scores: one whose partner
        # another line outranks cannot be mined as such, and its low margin would pull the cut down
        known = scores[found]
        finite = known[np.isfinite(known)]
        counts["known_pairs"] = {"pairs": len(scores), "retrieved": int(found.sum()),
                                 "median_score": float(np.median(finite)) if len(finite) else None}
    mined = job.select(counts, known=known, known_given=None if known is None else len(scores))
    timings["select_s"] = time.perf_counter() - t
    pairs = list(zip(mined.score.astype(float).tolist(), job.texts("src", mined.src), job.texts("tgt", mined.tgt)))
    filtered = None
    if noise_filters and pairs:
        from xlsent.data.filters.noise_filters import apply_noise_filters
        from xlsent.data.langid import pair_languages

        src_texts, tgt_texts = [p[1] for p in pairs], [p[2] for p in pairs]
        langs, notes = pair_languages(src_texts, tgt_texts, (src_lang or None, tgt_lang or None))
        keep, report = apply_noise_filters(src_texts, tgt_texts, langs, noise_filters, identifier=identifier)
        pairs = [p for p, k in zip(pairs, keep) if k]
        filtered = {**report.to_dict(), "languages": {"src": langs[0], "tgt": langs[1]},
                    "notes": notes + report.notes}
    timings["total_s"] = time.perf_counter() - t0
    inputs = inputs or {name: input_summary(side.report()) for name, side in (("src", src), ("tgt", tgt))
                        if isinstance(side, SideInput)}
    summary = {
        "model": model_name, "workdir": str(workdir), "inputs": inputs,
        "sentences": {name: len(side) for name, side in job.inputs.items()},
        "shards": {"src": job.src.n_shards, "tgt": job.tgt.n_shards, "shard_size": job.src.spec.shard_size},
        "index": job.kinds, "config": asdict(cfg), "pairs": len(pairs), "selection": counts,
        "engine": getattr(engine, "name", "local"),
        "score": {"max": pairs[0][0], "min": pairs[-1][0]} if pairs else {},
        "noise_filters": filtered,
        "timings_s": {k: round(v, 3) for k, v in timings.items()}, "peak_rss_gib": round(peak_rss_gib(), 3),
    }
    return MineResult(pairs, summary)


def input_summary(report: ReadReport) -> dict:
    return {"file": report.source, "sentences": report.rows, "skipped": dict(report.skipped)}


def save(result: MineResult, output: str | Path) -> Path:
    """``output`` (TSV: score, src, tgt; best first) and ``output`` + ``.json`` (the summary)."""
    output = Path(output)
    write_pairs_tsv(output, result.pairs)
    summary_path = output.with_name(output.name + ".json")
    write_json_atomic(summary_path, result.summary)
    return summary_path
