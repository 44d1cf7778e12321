"""Bitext mining (:func:`mine`, what ``xlsent mine`` runs) and cleaning candidate pairs (:func:`filter_pairs`,
what ``xlsent data filter-pairs`` runs)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from xlsent.api._common import (Note, check_backend, check_dimensions, check_options, check_unicode, encoder_for,
                               model_label, old_names, output_file, parse_filters, parse_threshold, place, writes)
from xlsent.data.filters.noise_filters import MAX_Z
from xlsent.data.filters.pair_filter import RANK_BY
from xlsent.data.text.splitting import SPLITTERS
from xlsent.mining.engine import ENGINES
from xlsent.mining.margin import MARGINS, MODES  # (re-exported: xlsent.api.mining.MODES / MARGINS)
from xlsent.mining.store import DTYPES
from xlsent.utils.errors import XlsentError, named
from xlsent.utils.options import Option, at_least as minimum, one_of

if TYPE_CHECKING:
    from xlsent.data.filters.pair_filter import FilteredPairs
    from xlsent.mining.mine import MineResult

INDEXES = ("auto", "exact", "ivf", "ivfpq")

#: :func:`mine`'s options, each declared once: checked here, ``xlsent mine``'s options built
#: from them (their help is the command's)
MINE: dict[str, Option] = {
    "mode": one_of(MODES, "max", "which pairs the margin keeps"),
    "margin": one_of(MARGINS, "ratio", "absolute: plain cosine"),
    "index": one_of(INDEXES, "auto", "the faiss index searched"),
    "precision": one_of(DTYPES, "float16", "how the embeddings are stored; int8: 1 byte + a scale per sentence; "
                        "ubinary: stored as int8, searched by sign bits (each coordinate against the searched side's "
                        "mean; d/8 bytes a sentence in the index), the candidates re-scored with the int8 vectors; "
                        "mining F1 of each: docs/results.md, 'Bitext mining'"),
    "splitter": one_of(SPLITTERS, "auto", "the sentence splitter of --documents"),
    "k": minimum(1, 4),
    "nprobe": minimum(1, 64, "IVF cells visited per query"),
    "nlist": minimum(0, 0, "IVF cells (0 = 4·√n)"),
    "shard_size": minimum(1, 50_000, "sentences per shard (the unit of resume)"),
    "batch_size": minimum(1, 64, "sentences per encoding batch"),
    "rescore": minimum(1, 10, "ubinary: k × this many candidates by Hamming distance are re-scored with the int8 "
                       "vectors"),
    "index_groups": minimum(1, 1, "IVF: split each side's sub-indexes into G search groups; a worker holds one "
                            "group at a time (about a side's index ÷ G in memory) and the groups' k nearest are "
                            "merged; exact search ignores it"),
    "memory_gib": minimum(0.01, 4.0, "memory budget of encoding and search: bounds the shard size and picks ivf vs "
                          "ivfpq (the final selection's memory comes on top: docs/experiments/bitext-mining.md, "
                          "'Selection memory')"),
    "workdir": Option(None, help="embeddings, indexes, search shards (default OUTPUT.work); a killed run resumes "
                                 "from it"),
    "threshold": Option("auto", help="auto: a cut estimated from the score distribution (printed and stored in "
                                     "OUTPUT.json) | none: every one-to-one candidate | a number: keep pairs scoring "
                                     "at least this"),
    "known_pairs": Option(None, help="pairs known to translate each other (TSV src<TAB>tgt or JSONL, at least 10 the "
                                     "model retrieves; e.g. seed pairs it did not train on): --threshold auto is "
                                     "anchored on where they score in this pool"),
    "dedupe": Option(True, help="forward/backward: each sentence in at most one pair"),
    "center": Option(False, help="per-language centering: subtract each side's mean vector before search and "
                                 "margins. Off by default: it lowered mining F1 on development data — a side's mean "
                                 "also holds its topics (measured effect: docs/results.md, 'Centering and CSLS')"),
    "search_dimensions": Option(None, help="ubinary: the index keeps the sign bits of the first N coordinates only "
                                           "(N/8 bytes a sentence; a multiple of 8); the candidates are re-scored "
                                           "with every coordinate — for a model trained with Matryoshka widths"),
    "documents": Option(False, help="split into sentences: each line of a text file, or each section of a document "
                                    "JSONL / bundled documents"),
    "src_lang": Option("", help="source language (ISO 639-1 or 639-3, e.g. ny, eng): for --documents splitting "
                                "(document JSONL: default its 'lang') and the language filter (default: detected "
                                "from the pairs)"),
    "tgt_lang": Option("", help="target language, the same"),
    "filters": Option("default", help="noise filters on the mined pairs, as xlsent data filter-pairs: language, "
                                      "copy, near-duplicate, length-ratio, numbers | default (all five) | none; each "
                                      "counted, with examples, in OUTPUT.json"),
    "overwrite": Option(False, help="discard a work folder left by another job"),
}
#: where a job's tasks run (``engine``: :class:`xlsent.mining.engine.RayEngine`'s settings; the CLI's --engine …)
ENGINE: dict[str, Option] = {
    "engine": one_of(ENGINES, "local", "local: every step in this process; ray: the steps on a Ray cluster (pip "
                     "install 'xlsent\\[ray]'), the same result"),
    "address": Option(None, help="--engine ray: the cluster (auto | HOST:PORT; default $RAY_ADDRESS; with neither, "
                      "a local cluster on this machine)"),
    "workers": minimum(1, 2, "--engine ray: actors in each pool (encoders, searchers)"),
    "cpus_per_worker": Option(1.0, help="--engine ray: CPUs an actor takes (its thread count, rounded; a fraction "
                              "lets more actors share a CPU)"),
    "gpus_per_worker": Option(0.0, help="--engine ray: GPUs an actor takes (an encoder encodes on its GPU; a search "
                              "worker searches there with a GPU build of faiss)"),
}

#: :func:`filter_pairs`'s options, each declared once (``xlsent data filter-pairs``'s built from them)
FILTER: dict[str, Option] = {
    "min_words": minimum(0, None, "drop pairs with a side of fewer words than this (default 0 = off; paper 5)"),
    "top": minimum(0, None, "keep the N best pairs (default 0 = all; paper 2,016)"),
    "rank_by": one_of(RANK_BY, "cosine", "score: a mined file's score"),
    "preset": Option(None, help="paper: Huang et al. 2023 §4.1's cleaning of web-mined candidates, exactly — sides "
                                "under 5 words and any special character ([ ] { } * …) removed, the top 2,016 kept; "
                                "meant for mined candidates, it removes real pairs of a translation (default: keep "
                                "every clean pair)"),
    "special_pattern": Option(None, help="drop pairs matching this regex (default: markup — an HTML/XML tag, a URL, "
                                         "wiki or table syntax, never punctuation; paper: its special characters)"),
    "center": Option(False, help="subtract each side's (language's) mean vector over the candidates before cosine / "
                                 "margin / csls. Off by default, as in xlsent mine, where it lowered mining F1 "
                                 "(docs/results.md, 'Centering and CSLS'); filtering itself was not measured"),
    "model": Option("e5-small", help="model for cosine / margin / csls ranking"),
    "filters": Option("default", help="noise filters, comma-separated: language (each side against its language: "
                                      "CLD2, and xlsent's n-gram identifier where CLD2 cannot judge), copy, "
                                      "near-duplicate, length-ratio, numbers | default (all five) | none"),
    "src_lang": Option("", help="the source side's language (ISO 639-1 or 639-3) for the language filter; default: "
                                "the file's codes, else detected"),
    "tgt_lang": Option("", help="the target side's language, the same"),
    "max_z": Option(MAX_Z, help="length-ratio filter: remove pairs whose log length ratio lies further than "
                                      "this many robust standard deviations from the file's median"),
    "threshold": Option("none", help="none | auto (xlsent mine's automatic cut on the --rank-by scores; meant for "
                                     "margin) | a number: keep pairs scoring at least this"),
}
WORDS, NUMBERS = ("mode", "margin", "index", "precision"), ("k", "nprobe", "nlist", "shard_size", "batch_size",
                                                            "rescore", "index_groups", "memory_gib")


@writes("output", "workdir")
def mine(src: Sequence[str] | str | Path, tgt: Sequence[str] | str | Path, *, model: str = "e5-small",
         threshold: str | float | None = "auto", output: str | Path | None = None, workdir: str | Path | None = None,
         k: int = 4, mode: str = "max", margin: str = "ratio", dedupe: bool = True, center: bool = False,
         index: str = "auto", nprobe: int = 64, nlist: int = 0, shard_size: int = 50_000,
         precision: str = "float16", memory_gib: float = 4.0, batch_size: int = 64, documents: bool = False,
         src_lang: str | None = None, tgt_lang: str | None = None, filters: str | Sequence[str] = "default",
         splitter: str = "auto", learn: Mapping[str, str | Path] | None = None,
         overwrite: bool = False, backend: str = "auto", threads: int = 0, device: str = "auto", dtype: str = "auto",
         truncate_dim: int | None = None, rescore: int = 10, search_dimensions: int | None = None,
         index_groups: int = 1, known_pairs: Sequence[tuple[str, str]] | str | Path | None = None, engine: Any = None,
         on_note: Note = None, console: Any = None, show_progress_bar: bool | None = None,
         **old: Any) -> "MineResult":
    """Mine parallel sentences from two monolingual collections: LASER margin scoring, faiss search, resumable.

    Args:
        src: the source side: a list of sentences, or a file (one sentence a line; with ``documents``, one
            document a line, a document JSONL, or a bundled document set such as ``bible:eng``, ``udhr:eng``).
            A plain text file is never read whole into memory (documents, ``.gz`` files and bundled sets are).
        tgt: the target side, the same.
        model: a registered name or a model folder.
        threshold: ``"auto"`` (a cut estimated without gold: each candidate against its runner-up, stored in the
            summary) | ``None``/``"none"`` (every one-to-one candidate) | a number (keep pairs scoring at least it).
        output: also write the pairs (TSV: score, src, tgt) and ``OUTPUT.json`` (the summary).
        workdir: embeddings, indexes, search shards; a killed job resumes from it (default: ``OUTPUT.work``, or a
            temporary folder removed afterwards when there is no output).
        k: neighbours per direction for the margin.
        mode: ``forward`` | ``backward`` | ``intersect`` | ``max``.
        margin: ``ratio`` | ``distance`` | ``absolute`` (plain cosine).
        dedupe: forward/backward: each sentence in at most one pair.
        center: per-language centering: each side's mean vector subtracted before search and margins.
        index: ``auto`` | ``exact`` | ``ivf`` | ``ivfpq``; ``nprobe``, ``nlist``: the IVF's cells visited and cells.
        shard_size: sentences per shard (the unit of resume).
        precision: how embeddings are stored: ``float16`` | ``float32`` | ``int8`` | ``ubinary`` (stored as int8,
            searched by sign bits — each coordinate above or below the searched side's mean — the k × ``rescore``
            nearest re-scored).
        memory_gib: memory budget of encoding and search (bounds the shard size, picks ivf or ivfpq).
        batch_size: sentences per encoding batch.
        documents: split each line (or each section of a document JSONL) into sentences.
        src_lang, tgt_lang: languages (ISO 639-1 or 639-3), for splitting and the language filter.
        filters: noise filters on the mined pairs (as :func:`filter_pairs`): ``"default"`` (all five) |
            ``"none"`` | a list of ``language``, ``copy``, ``near-duplicate``, ``length-ratio``, ``numbers``.
        splitter: ``auto`` | ``sentencex`` | ``punctuation``.
        learn: teach the language filter's n-gram identifier languages of your own: code → a UTF-8 file of that
            language's monolingual text, one text a line (``--learn L:FILE``; :func:`xlsent.identify`).
        overwrite: discard a work folder left by another job.
        backend, threads, device, dtype: where and how the model runs (as :func:`xlsent.embed`). On a CUDA device
            faiss searches there too where it is a GPU build (float IVF / IVF-PQ and exact search; a ``ubinary``
            IVF index stays on the CPU); a CPU build says so once (``on_note``) and searches on the CPU.
        truncate_dim: mine with the first N coordinates of each vector, renormalised (``None`` = the full width;
            as :func:`xlsent.embed`); stored and searched at that width, at ``precision``.
        rescore: ``ubinary``: k × this many candidates by Hamming distance are re-scored with the int8 vectors.
        search_dimensions: ``ubinary``: the search index keeps the sign bits of the first N coordinates only
            (N/8 bytes a sentence, a multiple of 8, at most the width) and the candidates are re-scored with every
            coordinate — a model trained with Matryoshka widths keeps its order in a short prefix (``None`` = the
            whole width).
        index_groups: an IVF index's sub-indexes split into this many search groups of consecutive parts (at most
            one a part): a search task (a Ray worker) holds one group at a time — about a side's index ÷
            ``index_groups`` in memory, the largest group's share. A query shard's cells are found once, each
            group's shortlist is kept, and the shortlists are merged and re-scored once: the whole index's
            neighbours (up to ties at the shortlist's edge). Exact search ignores it (it already holds one target
            shard at a time).
        engine: where the job's tasks run: ``None`` here, a :class:`xlsent.mining.engine.RayEngine`, or a function
            that makes one (called after every option is checked, so a bad option never starts a cluster).
        on_note: called with each line the job reports (inputs read, skipped lines).
        console: a ``rich`` console for the progress bars (``show_progress_bar``).
        **old: the names of the last release (``dimensions``, ``show_progress``), with a ``DeprecationWarning``.

    Returns:
        The pairs, best first, as ``(score, src, tgt)`` tuples (``.pairs``), the job's summary (``.summary``:
        the cut, what each filter removed, timings), ``.to_pandas()`` and ``.save(path)``.

    Example:
        >>> import xlsent
        >>> en = ["The cat sleeps.", "I like rice.", "Where is the school?"]
        >>> ny = ["Sukulu ili kuti?", "Mphaka akugona.", "Ndimakonda mpunga."]
        >>> found = xlsent.mine(en, ny, threshold=None, filters="none")
        >>> sorted((s, t) for _, s, t in found.pairs)[0]
        ('I like rice.', 'Ndimakonda mpunga.')
    """
    from xlsent.data.langid import language_code
    from xlsent.mining.engine import EncoderSettings
    from xlsent.mining.index import IndexConfig
    from xlsent.mining.job import MineConfig
    from xlsent.mining.run import run_mine

    given = dict(locals())
    dimensions, show_progress = old_names("mine", old, truncate_dim=truncate_dim, show_progress_bar=show_progress_bar)
    src_lang, tgt_lang = src_lang or "", tgt_lang or ""  # None and "": not said
    check_options(MINE, given, WORDS)
    if precision == "ubinary" and index == "ivfpq":
        raise XlsentError("precision='ubinary' is searched by sign bits, already d/8 bytes a sentence: use index='ivf' "
                          "(binary IVF), 'exact' or 'auto', not 'ivfpq'")
    check_options(MINE, given, ("splitter",))
    cut = parse_threshold(threshold)
    known = _known_pairs(known_pairs)
    if known is not None and cut != "auto":
        raise XlsentError(f"known_pairs (--known) anchor the automatic cut: with threshold={threshold!r} they would "
                          "do nothing — give threshold='auto' (--threshold auto), or leave known_pairs out")
    kinds = parse_filters(filters)
    for code, option in ((src_lang, "src_lang"), (tgt_lang, "tgt_lang")):
        if code:
            language_code(code, option)
    check_backend(backend, threads)
    output = output_file(output)
    check_options(MINE, given, NUMBERS)
    dimensions = check_dimensions(model, dimensions)
    if precision == "ubinary" and dimensions and dimensions % 8:
        raise XlsentError(f"precision='ubinary' packs 8 sign bits to a byte: truncate_dim={dimensions} must be a "
                          "multiple of 8")
    if search_dimensions is not None:
        if precision != "ubinary":
            raise XlsentError(f"search_dimensions={search_dimensions}: only a precision='ubinary' index keeps a "
                              "prefix of sign bits — add precision='ubinary', or leave search_dimensions= out")
        from xlsent.encoding.width import model_width

        width = dimensions or model_width(model)  # None where the folder does not say: the job checks it later
        if search_dimensions % 8 or search_dimensions < 8 or (width and search_dimensions > width):
            raise XlsentError(f"search_dimensions={search_dimensions}: give a multiple of 8 from 8 to the width "
                              f"searched{f' ({width})' if width else ''}")
    identifier = _taught_identifier(learn, kinds)
    place(device, dtype)
    sides = [_sentences(given, name) for name, given in (("src", src), ("tgt", tgt))]
    if callable(engine):
        engine = engine()
    cfg = MineConfig(k=k, mode=mode, margin=margin, threshold=cut, dedupe=dedupe,
                     index=IndexConfig(kind=index, nprobe=nprobe, nlist=nlist, rescore=rescore,
                                       bits=search_dimensions or 0, groups=index_groups), shard_size=shard_size,
                     dtype=precision, batch_size=batch_size, memory_gib=memory_gib, center=center)
    return run_mine(sides[0], sides[1], cfg, output=output, workdir=workdir,
                    make_encoder=lambda: encoder_for(model, backend=backend, threads=threads, dimensions=dimensions),
                    label=model_label(model),
                    settings=EncoderSettings(str(model), backend, threads, device, dtype, dimensions),
                    src_lang=src_lang, tgt_lang=tgt_lang, documents=documents, splitter=splitter, overwrite=overwrite,
                    engine=engine, noise_filters=kinds, identifier=identifier, known_pairs=known, on_note=on_note,
                    console=console, show_progress=show_progress)


def _sentences(given, name: str) -> list[str] | Path:
    """A side given in Python: its sentences, checked before the model loads (one line each, Unicode); a file: its
    path (read by the job)."""
    if isinstance(given, (str, Path)):
        return Path(given)
    texts = [str(x) for x in given]
    if not texts:
        raise XlsentError(f"{name}: no sentences — mining needs at least one sentence on each side")
    check_unicode(texts, name)
    bad = next((t for t in texts if "\n" in t or "\r" in t), None)
    if bad is not None:
        raise XlsentError(f"{name}: a sentence contains a line break ({ascii(bad[:40])}…) — give one "
                          "sentence an item (normalise whitespace first)")
    return texts


#: filter-pairs presets: ``None`` keeps every clean pair of a user's file; ``paper`` is Huang et al. 2023 §4.1's
#: cleaning of web-mined candidates, exactly: sentences under 5 words and any special character removed, the top
#: 2,016 by cosine kept
FILTER_PRESETS = {None: {"min_words": 0, "special_pattern": "markup", "top": 0},
                  "paper": {"min_words": 5, "special_pattern": "paper", "top": 2016}}
#: the share of a file the filters may remove before a warning says so
WARN_REMOVED_SHARE = 0.10


def _known_pairs(pairs) -> tuple[list[str], list[str]] | None:
    """``known_pairs`` checked (before the model loads): pairs of two non-empty one-line texts."""
    if pairs is None:
        return None
    if isinstance(pairs, (str, Path)):  # a pairs file, read as every xlsent pairs file is (TSV, JSONL, …)
        from xlsent.data.sets.pairs import load_pairs

        try:
            ds: Any = load_pairs(str(pairs)).dataset
        except XlsentError as e:
            raise XlsentError(f"--known: {e}") from None
        pairs = list(zip(ds["src"], ds["tgt"]))
    src, tgt = [], []
    for i, pair in enumerate(pairs, 1):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2 or not all(isinstance(x, str) and x.strip()
                                                                            for x in pair):
            raise XlsentError(f"known_pairs: item {i} is not a (source, target) pair of non-empty texts — give "
                              "[(src, tgt), …]")
        if any("\n" in x or "\r" in x for x in pair):
            raise XlsentError(f"known_pairs: item {i} holds a line break — give one sentence a side")
        src.append(pair[0].strip())
        tgt.append(pair[1].strip())
    return src, tgt


def _taught_identifier(learn, kinds):
    """The n-gram identifier taught ``learn`` (checked before any model loads), or None without ``learn``; ``learn``
    with the language filter off is a mistake said in one line."""
    if not learn:
        return None
    if "language" not in (kinds or ()):
        raise XlsentError("learn=: it teaches the language filter, which is off — add language to filters= "
                          "(--filters), or drop learn= (--learn)")
    from xlsent.data.langid.ngram import identifier_with

    return identifier_with(learn)


@writes("output")
def filter_pairs(source: str | Path, output: str | Path | None = None, *, model: str = "e5-small",
                 preset: str | None = None, min_words: int | None = None, special_pattern: str | None = None,
                 special: bool = True, top: int | None = None, rank_by: str = "cosine", center: bool = False,
                 filters: str | Sequence[str] = "default", src_lang: str | None = None, tgt_lang: str | None = None,
                 max_z: float = MAX_Z, threshold: str | float | None = None, on_bad_lines: str = "error", device: str = "auto",
                 dtype: str = "auto", learn: Mapping[str, str | Path] | None = None) -> "FilteredPairs":
    """Clean pairs: keep every clean pair of your file, ranked by similarity (``xlsent data filter-pairs``).

    By default: normalisation, empty sides, markup (an HTML/XML tag, a URL, wiki or table syntax — never ordinary
    punctuation), exact duplicates, then the five noise filters (each counted, with examples); nothing else is
    removed unless asked (``top``, ``threshold``). ``preset="paper"`` is paper 000's cleaning of web-mined
    candidates (Huang et al. 2023 §4.1) exactly: sentences under 5 words and any special character removed, the
    top 2,016 kept. When the filters remove more than 10% of the pairs, a warning says so.

    Args:
        source: candidate pairs: a pairs file (TSV, JSONL, Moses ``A,B``) or a mined TSV (score, src, tgt).
        output: also write the kept pairs (TSV: score, src, tgt, best first) and ``OUTPUT.json`` (every count).
        model: the model for ``cosine`` / ``margin`` / ``csls`` ranking.
        preset: ``None`` (keep every clean pair) | ``"paper"`` (Huang et al. 2023 §4.1); the options below
            override it.
        min_words: drop pairs with a side of fewer words than this (0 = off; default 0, paper 5).
        special_pattern: drop pairs matching this regex; ``"markup"`` (the default) and ``"paper"`` (the paper's
            special characters) name the shipped ones; ``special=False``: no pattern filter.
        top: keep the N best pairs (0 = all; default 0, paper 2,016).
        rank_by: ``cosine`` | ``margin`` | ``csls`` | ``score`` (a mined file's own score).
        center: subtract each side's mean vector over the candidates before scoring.
        filters: ``"default"`` (``language``, ``copy``, ``near-duplicate``, ``length-ratio``, ``numbers``) |
            ``"none"`` | a list of them.
        src_lang, tgt_lang: the sides' languages for the language filter (default: the file's codes, else
            detected).
        max_z: the length-ratio filter's robust z bound.
        threshold: ``None`` | ``"auto"`` (the mining cut on the ``rank_by`` scores) | a number.
        on_bad_lines: ``error`` | ``skip`` (skipped lines are counted).
        device, dtype: where and how the model runs.
        learn: teach the language filter's n-gram identifier languages of your own: code → a UTF-8 file of that
            language's monolingual text, one text a line (``--learn L:FILE``; :func:`xlsent.identify`).

    Returns:
        The kept pairs (``.pairs``: ``(score, src, tgt)``), the counts of every filter (``.report``) and notes;
        ``to_dict()`` is what ``OUTPUT.json`` holds.

    Example:
        >>> import pathlib, tempfile, xlsent
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "pairs.tsv"
        >>> _ = f.write_text("0.9\\tThe cat sleeps in the big house today.\\tMphaka akugona m'nyumba yayikulu lero "
        ...                  "lino.\\n0.8\\tHi\\tMoni\\n")
        >>> kept = xlsent.filter_pairs(f, rank_by="score", filters="none")
        >>> len(kept.rows), kept.report.rows_in
        (2, 2)
        >>> len(xlsent.filter_pairs(f, rank_by="score", filters="none", preset="paper").pairs)  # under 5 words
        1
    """
    import warnings

    from xlsent.data.filters.cleaning import SPECIAL_PATTERNS
    from xlsent.data.filters.pair_filter import filter_pairs as run_filters, read_candidates
    from xlsent.data.langid import pair_languages
    from xlsent.data.sets.pairs import file_languages
    from xlsent.mining.mine import write_pairs_tsv
    from xlsent.utils.io import write_json_atomic

    output = output_file(output)
    if preset not in FILTER_PRESETS:
        raise XlsentError(f"unknown {named('preset', preset)}: use 'paper' (Huang et al. 2023 §4.1), or None for the "
                          "default")
    chosen: dict[str, Any] = dict(FILTER_PRESETS[preset])
    min_words = int(chosen["min_words"] if min_words is None else min_words)
    top = int(chosen["top"] if top is None else top)
    check_options(FILTER, {"min_words": min_words, "top": top})
    pattern = special_pattern or chosen["special_pattern"]
    pattern = SPECIAL_PATTERNS.get(pattern, pattern) if special else None
    if pattern:
        import re

        try:
            re.compile(pattern)
        except re.error as exc:
            raise XlsentError(f"{named('special_pattern', pattern)}: not a regular expression ({exc})") from None
    check_options(FILTER, {"rank_by": rank_by})
    kinds = parse_filters(filters)
    cut_at = parse_threshold(threshold)
    ds, report = read_candidates(str(source), on_bad_lines)
    found = file_languages(ds)
    declared = (src_lang or found[0] or None, tgt_lang or found[1] or None)
    langs, lang_notes = pair_languages(ds["src"], ds["tgt"], declared) if "language" in kinds else ((None, None), [])
    identifier = _taught_identifier(learn, kinds)
    encode = None
    if rank_by != "score":
        from xlsent.data.sets.pairs import side_langs

        place(device, dtype)
        encoder = encoder_for(model, normalize=True)
        enc_langs = tuple(a or b or None for a, b in zip(langs, side_langs(ds)))  # a gloss model glosses non-English
        encode = lambda texts, side: encoder.encode(texts, enc_langs[side == "tgt"])  # noqa: E731
    cut: Callable[[Any], Any] | None = None
    if cut_at == "auto":
        from xlsent.mining.threshold import auto_threshold

        cut = lambda scores: auto_threshold(scores).threshold  # noqa: E731
    elif cut_at is not None:
        cut = lambda scores: cut_at  # noqa: E731
    res = run_filters(ds, min_words, pattern, top, rank_by, encode, center=center and rank_by != "score",
                      noise_filters=kinds, langs=langs, max_z=max_z, cut=cut, identifier=identifier)
    res.notes = lang_notes + res.notes
    res.about = {"source": str(source), "preset": preset or "default", "rank_by": rank_by,
                 "languages": {"src": langs[0], "tgt": langs[1]}, "read": report.lines()}
    if res.removed_share > WARN_REMOVED_SHARE:
        warnings.warn(f"{source}: the filters removed {res.removed_share:.0%} of the pairs (more than "
                      f"{WARN_REMOVED_SHARE:.0%}) — check what each removed "
                      f"({str(output) + '.json' if output is not None else 'the result.to_dict()'}) before training "
                      "on what is left", stacklevel=2)
    if output is not None:
        write_pairs_tsv(output, res.pairs, "the kept pairs")
        write_json_atomic(str(output) + ".json", res.to_dict())
    return res

