"""Sentence alignment of two translated documents (Thompson & Koehn 2019, Vecalign, on any model): what
``xlsent align`` runs for each document pair."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from xlsent.api._common import check_backend, check_unicode, encoder_for, output_file, place, writes
from xlsent.utils.errors import XlsentError, named
from xlsent.utils.options import Option

#: :func:`align_files`'s options, each declared once (``xlsent align``'s built from them)
ALIGN: dict[str, Option] = {
    "batch": Option(None, help="a list of document pairs, 'SRC<TAB>TGT' a line: every pair aligned with the model "
                               "loaded once, one file each in the --output folder"),
    "pairs_out": Option(None, help="also write the aligned blocks (deletions left out) as a pairs file, src<TAB>tgt, "
                                   "with a language header when --split names the languages: ready for xlsent data "
                                   "filter-pairs and xlsent train"),
    "split": Option("", help="SRC_LANG,TGT_LANG: the documents are raw text, split into sentences first with "
                             "xlsent's splitter"),
    "fmt": Option("tsv", help="tsv: src_ids, tgt_ids, score, src_text, tgt_text; vecalign: [0, 1]:[2]:0.231"),
    "max_overlap": Option(3, help="the most sentences on one side of a block: steps a-b with a + b ≤ this + 1 (3: "
                                  "1-1, 1-2, 2-1, 1-3, 2-2, 3-1)"),
    "deletion_quantile": Option(0.02, help="a deleted sentence costs this quantile of random sentence pairs' costs "
                                           "(higher: fewer deletions; measured: "
                                           "docs/experiments/alignment-and-filters.md, 'Deletion penalty')"),
    "length_weight": Option(0.1, help="weight of Gale–Church's length cost added to each block's (0: Vecalign's "
                                      "cosine cost alone; measured effect: "
                                      "docs/experiments/alignment-and-filters.md, 'Length cost')"),
    "search_buffer": Option(5, help="coarse-to-fine search: nodes on each side of the coarse path"),
    "plain": Option(False, help="the baseline: 1-1 steps and deletions, cost 1 − cosine (no overlaps, no "
                                "normalisation)"),
    "runs": Option("mean", help="mean: only the sentences embedded, a run's vector their normalised sum "
                                "(--max-overlap times fewer texts); concat: each run embedded as its joined text "
                                "(Vecalign); measured: docs/experiments/alignment-and-filters.md, 'Run vectors'"),
    "max_length_ratio": Option(4.0, help="refuse a document pair whose sentence counts differ by more than this "
                                         "factor (it is probably not a translation of the same text)"),
}


@dataclass(frozen=True)
class AlignedBlock:
    """One block of an alignment: the sentences of each side it joins (0-based ids, in order; empty on one side
    for a deletion) and its ``cost`` (Vecalign's normalised cost: 0 identical … about 1 as unlike as random
    sentences; 0 for a deletion). Its ``score`` is higher-is-better, as every score of xlsent: a similarity,
    ``1 − cost`` for a block that joins both sides, 0 for a deletion."""

    src_ids: tuple[int, ...]
    tgt_ids: tuple[int, ...]
    cost: float

    @property
    def score(self) -> float:
        return 1.0 - self.cost if self.src_ids and self.tgt_ids else 0.0

    @property
    def kind(self) -> str:
        """``1-1``, ``2-1``, ``1-0`` (a deletion) …"""
        return f"{len(self.src_ids)}-{len(self.tgt_ids)}"

    def to_dict(self) -> dict:
        return {"src_ids": list(self.src_ids), "tgt_ids": list(self.tgt_ids), "score": self.score, "cost": self.cost}


class Blocks(list):
    """The blocks of an alignment, in document order (a list of :class:`AlignedBlock`); ``.alignment`` is the
    same alignment in the form the file writers take (Vecalign's costs)."""

    alignment: Any = None

    def to_dict(self) -> dict:
        return {"blocks": [b.to_dict() for b in self]}


def align_config(max_overlap: int = 3, deletion_quantile: float = 0.02, search_buffer: int = 5, plain: bool = False,
                 runs: str = "mean", length_weight: float = 0.1):
    """The aligner's settings, checked (one line for a bad value)."""
    from xlsent.aligner.vecalign import AlignConfig

    return AlignConfig.of(max_overlap, deletion_quantile, search_buffer, plain, runs, length_weight)


def check_lengths(name: str, n_src: int, n_tgt: int, ratio: float) -> None:
    """Refuse a document pair whose sentence counts differ by more than ``ratio``×."""
    if max(n_src, n_tgt) > ratio * max(1, min(n_src, n_tgt)):
        raise XlsentError(f"{name}: {n_src} source and {n_tgt} target sentences differ by more than "
                          f"{ratio:g}× — are these translations of the same document? (a larger "
                          "max_length_ratio= allows it)")


def align(src_sentences: Sequence[str], tgt_sentences: Sequence[str], *, model: Any = "e5-small",
          max_overlap: int = 3, deletion_quantile: float = 0.02, length_weight: float = 0.1, search_buffer: int = 5,
          runs: str = "mean", plain: bool = False, max_length_ratio: float = 4.0, src_lang: str | None = None,
          tgt_lang: str | None = None, backend: str = "auto", threads: int = 0, device: str = "auto",
          dtype: str = "auto") -> Blocks:
    """Align the sentences of two translated documents: 1-1, 1-N, N-1 and N-M blocks and deletions, in time and
    memory linear in the documents' length.

    Args:
        src_sentences: the source document, one sentence an item, in order.
        tgt_sentences: the target document, the same.
        model: a registered name, a model folder, a ``SentenceTransformer`` or a loaded encoder.
        max_overlap: the most sentences on one side of a block (steps a-b with a + b ≤ this + 1).
        deletion_quantile: a deleted sentence costs this quantile of random sentence pairs' costs (higher: fewer
            deletions).
        length_weight: weight of Gale–Church's length cost added to each block's (0: Vecalign's cosine cost alone).
        search_buffer: coarse-to-fine search: nodes on each side of the coarse path.
        runs: ``mean`` (a run of sentences gets the normalised sum of its sentences' vectors) | ``concat`` (its
            joined text embedded, as Vecalign).
        plain: the baseline: 1-1 steps and deletions, cost 1 − cosine.
        max_length_ratio: refuse documents whose sentence counts differ by more than this factor.
        src_lang, tgt_lang: the sides' languages (a word-gloss model glosses non-English text).
        backend, threads, device, dtype: where and how the model runs (as :func:`xlsent.embed`).

    Returns:
        The blocks in document order, each with ``src_ids``, ``tgt_ids`` (0-based), ``score`` (a similarity,
        higher is better) and ``cost``.

    Example:
        >>> import xlsent
        >>> en = ["In the beginning God created the heaven and the earth.", "And the earth was without form."]
        >>> ny = ["Pachiyambi Mulungu adalenga kumwamba ndi dziko lapansi.", "Dziko lapansi lidali lopanda maonekedwe."]
        >>> [(b.src_ids, b.tgt_ids) for b in xlsent.align(en, ny)]
        [((0,), (0,)), ((1,), (1,))]
    """
    from xlsent.aligner.vecalign import EMBED_BATCH, align_documents

    cfg = align_config(max_overlap, deletion_quantile, search_buffer, plain, runs, length_weight)
    check_backend(backend, threads)
    src, tgt = [str(s) for s in src_sentences], [str(t) for t in tgt_sentences]
    for side, texts in (("src_sentences", src), ("tgt_sentences", tgt)):
        if not texts:
            raise XlsentError(f"{side}: no sentences — give each document as a list of its sentences")
        check_unicode(texts, side)
    check_lengths("the documents", len(src), len(tgt), max_length_ratio)
    place(device, dtype)
    encoder = encoder_for(model, backend=backend, threads=threads, normalize=True, batch_size=EMBED_BATCH)
    if not encoder.normalize:
        encoder = encoder.replace(normalize=True)
    a = align_documents(src, tgt, encoder.encode, encoder.dimension, cfg, (src_lang, tgt_lang))
    scores = a.score or [0.0] * len(a.src)
    out = Blocks(AlignedBlock(tuple(s), tuple(t), float(c)) for s, t, c in zip(a.src, a.tgt, scores))
    out.alignment = a
    return out


@writes("output", "pairs_out")
def align_files(src: str | Path | None, tgt: str | Path | None, output: str | Path, *, batch: str | Path | None = None,
                pairs_out: str | Path | None = None, split: str = "", fmt: str = "tsv", model: Any = "e5-small",
                max_overlap: int = 3, deletion_quantile: float = 0.02, length_weight: float = 0.1,
                search_buffer: int = 5, plain: bool = False, runs: str = "mean", max_length_ratio: float = 4.0,
                backend: str = "auto", threads: int = 0, device: str = "auto", dtype: str = "auto") -> dict:
    """``xlsent align``: align two document files (``src``, ``tgt``: one sentence a line, or raw text split first
    with ``split="SRC_LANG,TGT_LANG"``) into ``output``, or every pair of a ``batch`` list (``SRC<TAB>TGT`` a line)
    into the ``output`` folder with the model loaded once; with ``pairs_out``, the aligned blocks (deletions left
    out) also as a pairs file. Every document is read and checked before the model loads. Writes a summary JSON
    beside the output (``summary.json`` in a batch folder) and returns it (``summary_path`` added)."""
    from xlsent.aligner.vecalign import EMBED_BATCH
    from xlsent.data.formats.alignment import read_batch, read_document, read_raw_document, write_alignment
    from xlsent.data.formats.readers import LANG_CODE
    from xlsent.utils.io import write_json_atomic, write_text_atomic

    cfg = align_config(max_overlap, deletion_quantile, search_buffer, plain, runs, length_weight)
    output = Path(output)
    if batch is not None:
        if src is not None or tgt is not None:
            raise XlsentError("give either SRC TGT or batch=LIST, not both")
        pairs = read_batch(batch)
        if output.exists() and not output.is_dir():
            raise XlsentError(f"{named('output', str(output))}: exists and is a file — with batch= the output is a "
                              "folder of alignments")
    elif src is None or tgt is None:
        raise XlsentError("give two documents (SRC TGT) or batch=LIST")
    else:
        pairs = [(Path(src), Path(tgt))]
        output_file(output)
    langs = split.split(",") if split else []
    if split and (len(langs) != 2 or not all(LANG_CODE.match(x) for x in langs)):
        raise XlsentError(f"{named('split', split)}: give two language codes, SRC_LANG,TGT_LANG (e.g. en,ny or "
                          "eng,nya)")
    docs = []  # every document read and checked before the model loads
    for s, t in pairs:
        s_sents = read_raw_document(s, langs[0]) if langs else read_document(s)
        t_sents = read_raw_document(t, langs[1]) if langs else read_document(t)
        check_lengths(f"{s} / {t}", len(s_sents), len(t_sents), max_length_ratio)
        docs.append((s, t, s_sents, t_sents))
    if pairs_out is not None:
        output_file(pairs_out, "pairs")
    t0 = time.perf_counter()
    place(device, dtype)
    encoder = encoder_for(model, backend=backend, threads=threads, normalize=True, batch_size=EMBED_BATCH)
    alignments, written = [], []
    if batch is not None:
        output.mkdir(parents=True, exist_ok=True)
    for n, (s, t, s_sents, t_sents) in enumerate(docs):  # each pair is align()'s, with the model loaded once
        a = align(s_sents, t_sents, model=encoder, max_overlap=max_overlap, deletion_quantile=deletion_quantile,
                  length_weight=length_weight, search_buffer=search_buffer, runs=runs, plain=plain,
                  max_length_ratio=max_length_ratio, src_lang=langs[0] if langs else None, tgt_lang=langs[1] if langs else None,
                  backend=backend, threads=threads, device=device, dtype=dtype).alignment
        path = output / f"{n:05d}-{Path(s).stem}.{fmt}" if batch is not None else output
        write_alignment(path, a, s_sents, t_sents, fmt)
        alignments.append(a)
        written.append((str(path), len(s_sents), len(t_sents)))
    if pairs_out is not None:
        rows = [(" ".join(d[2][i] for i in s_ids).replace("\t", " "), " ".join(d[3][j] for j in t_ids).replace("\t", " "))
                for d, a in zip(docs, alignments) for s_ids, t_ids in zip(a.src, a.tgt) if s_ids and t_ids]
        header = f"{langs[0]}\t{langs[1]}\n" if langs else ""
        write_text_atomic(pairs_out, header + "".join(f"{x}\t{y}\n" for x, y in rows))
    report = _summary(written, alignments, time.perf_counter() - t0)
    report.update(model=str(model), config=vars(cfg))
    summary_path = output / "summary.json" if batch is not None else output.with_name(output.name + ".summary.json")
    write_json_atomic(summary_path, report)
    return {**report, "summary_path": str(summary_path)}


def _summary(docs: list[tuple[str, int, int]], alignments: list, seconds: float) -> dict:
    from collections import Counter

    types: Counter = Counter()
    scores = []
    for a in alignments:
        types.update(a.types())
        scores += [c for s, t, c in zip(a.src, a.tgt, a.score) if s and t]
    return {"documents": len(docs), "src_sentences": sum(d[1] for d in docs),
            "tgt_sentences": sum(d[2] for d in docs), "alignments": sum(types.values()),
            "by_type": dict(types.most_common()),
            "mean_score": round(sum(scores) / len(scores), 6) if scores else None,
            "score": "normalised cost of a block (0 identical, about 1 as unlike as random sentences); deletions 0",
            "seconds": round(seconds, 2), "files": [d[0] for d in docs]}
