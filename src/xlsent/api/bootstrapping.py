"""From a few pairs and plain text to a model: :func:`bootstrap`, what ``xlsent train bootstrap`` runs (the loop:
:mod:`xlsent.recipes.bootstrap`)."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from xlsent.api._common import Note, check_options, output_folder, parse_filters, parse_threshold
from xlsent.api.mining import MINE
from xlsent.recipes.bootstrap import STARTS
from xlsent.utils.errors import XlsentError, named
from xlsent.utils.options import Option, at_least, one_of

if TYPE_CHECKING:
    from xlsent.recipes.bootstrap import BootstrapResult

#: what a bootstrap passes on to :func:`xlsent.mine` each round (``mining=`` keys, ``xlsent train bootstrap``'s
#: mining options)
MINING_OPTIONS = ("k", "mode", "margin", "index", "nprobe", "nlist", "precision", "batch_size", "memory_gib",
                  "shard_size", "splitter", "center", "rescore", "index_groups")
SAMPLE_LINES = 2000  # lines read from the start of each text for the checks made before any model loads

#: :func:`bootstrap`'s options, each declared once: checked here, ``xlsent train bootstrap``'s options built from
#: them (their help is the command's)
BOOTSTRAP: dict[str, Option] = {
    "seed_pairs": Option(..., help="your translated pairs (TSV src<TAB>tgt with an optional header of language codes, "
                                   "JSONL, Moses A,B), at least 20; the first column is the language of --src-texts"),
    "rounds": at_least(0, 3, "mining rounds after round 0, at most (a round that does not beat the best so far on "
                       "the held-out pairs stops the loop)"),
    "start": one_of(STARTS, "last", "last: each round continues from the last round's model | base: from the base "
                    "model"),
    "src_texts": Option(..., help="plain text in the seed's first language, one sentence a line (--documents: one "
                              "document a line, or a document JSONL)"),
    "tgt_texts": Option(..., help="plain text in the seed's second language, the same"),
    "output": Option(..., help="folder: model/ (the best round's), bootstrap.json, rounds.png, round-N/ (its adapt "
                           "run, pairs.tsv: the pairs it mined, with scores)"),
    "config": Option(None, help="a YAML file overriding adapt's defaults, every round"),
    "preset": Option(None, help="one of adapt's shipped presets, every round"),
    "src_lang": Option("", help="the seed's first language (ISO 639-1 or 639-3; default: the file's header, else "
                                "detected)"),
    "tgt_lang": Option("", help="the seed's second language, the same"),
    "documents": Option(False, help="the texts are translated documents (one a line, paired by order; or JSONL, "
                                    "paired by id): sentence-aligned (xlsent align) instead of mined"),
    "threshold": Option("auto", help="the mining cut: auto | none | a number (as xlsent mine)"),
    "anchor": Option(True, help="--threshold auto anchored on the held-out seed pairs, scored among the plain lines "
                                "(xlsent mine --known) | mine's unanchored cut"),
    "filters": Option("default", help="noise filters on the mined pairs (as xlsent mine)"),
    "holdout": Option(0.2, help="share of the seed pairs held out for the stop rule (at least 20 pairs, at most "
                                "half)"),
    # xlsent mine's, with their help here
    "margin": replace(MINE["margin"], help="as xlsent mine"),
    "index": replace(MINE["index"], help="the faiss index searched (as xlsent mine)"),
    "precision": replace(MINE["precision"], help="how the embeddings are stored (as xlsent mine)"),
    "memory_gib": replace(MINE["memory_gib"], help="memory budget of encoding and search (as xlsent mine)"),
    "keep_rounds": Option(False, help="keep each round's own model folder (round-N/run/model) after the run; by "
                                      "default only OUTPUT/model, the best round's copy, stays"),
}


def bootstrap(seed_pairs: str | Path, src_texts: str | Path, tgt_texts: str | Path, output: str | Path, *,
              model: str = "e5-small", rounds: int = 3, start: str = "last",
              settings: dict[str, Any] | list[str] | None = None, src_lang: str | None = None,
              tgt_lang: str | None = None, documents: bool = False, threshold: str | float | None = "auto",
              filters: str | Sequence[str] = "default", learn: Mapping[str, str | Path] | None = None,
              mining: Mapping[str, Any] | None = None, holdout: float = 0.2, config: str | Path | None = None,
              preset: str | None = None, engine: Any = None, device: str = "auto", anchor: bool = True,
              keep_rounds: bool = False,
              on_note: Note = None, console: Any = None) -> "BootstrapResult":
    """Grow a model from a few translated pairs and plain text in both languages: adapt on the seed, then rounds of
    mining the texts with the round's model, cleaning the pairs and adapting again on the seed plus what was mined;
    the round that retrieves the held-out seed pairs best among every plain line is the model (LASER3's and
    NLLB's loop; the steps and the decisions: :mod:`xlsent.recipes.bootstrap`).

    Args:
        seed_pairs: your translated pairs (TSV ``src<TAB>tgt`` with an optional header of language codes, JSONL, or
            Moses ``A,B``); the first column is the language of ``src_texts``. At least 20 after cleaning.
        src_texts: plain text in the first column's language, one sentence a line (with ``documents``: one
            document a line, or a document JSONL).
        tgt_texts: the same in the second column's language.
        output: the folder: ``model/`` (the output), ``bootstrap.json``, ``rounds.png``, ``holdout.jsonl``, and a
            ``round-N/`` folder a round (its adapt run, ``pairs.tsv``: the pairs it mined with their scores, the
            mining summary). A rerun resumes; a second run into a folder in use is refused.
        model: the base model: a registered name or a local folder (a romanised or extended one too).
        rounds: mining rounds after round 0, at most (the stop rule usually ends earlier).
        start: ``last`` (each round continues from the last round's model) | ``base`` (from the base model).
        settings: adapt's config overrides, dotted keys (``{"optim.lr": 4e-5}``) or ``--set`` strings
            (``models.student=DIR`` is the same as ``model=DIR``).
        config, preset: adapt's config file and shipped preset, for every round (as :func:`xlsent.train`).
        src_lang, tgt_lang: the sides' languages (ISO 639-1 or 639-3; default: the seed file's header, else
            detected) — for the language filter, splitting documents, and the checks.
        documents: the texts are translated documents, paired by order (or by ``id`` in JSONL): each pair is
            sentence-aligned (:func:`xlsent.align`) instead of mined.
        threshold: the mining cut: ``"auto"`` | a number | ``None`` (every one-to-one candidate).
        anchor: ``threshold="auto"`` anchored on the held-out seed pairs the round's model retrieves, scored in
            the same pool as the plain lines (``xlsent.mine(known_pairs=…)``; 10 at least, else the cut is not
            anchored and the round says so); ``False``: mine's unanchored automatic cut.
        filters: the noise filters on the mined pairs (as :func:`xlsent.mine`).
        learn: teach the language filter's n-gram identifier languages of your own (as :func:`xlsent.mine`).
        mining: more of :func:`xlsent.mine`'s options (``k``, ``margin``, ``mode``, ``index``, ``precision``,
            ``batch_size``, ``memory_gib``, ``shard_size``, ``splitter`` …).
        holdout: share of the seed pairs held out for the stop rule (at least 20 pairs, at most half).
        engine: where mining runs: ``None`` (here), a :class:`xlsent.mining.engine.RayEngine`, or a function that
            makes one (called once every input is checked).
        device: where the model trains and encodes.
        keep_rounds: keep each round's own model folder (``round-N/run/model``, a whole model each) after the
            run; by default they are removed once the loop ends — ``output/model`` is the best round's copy.
        on_note: called with each line the run reports.
        console: a ``rich`` console for the mining progress bars.

    Returns:
        A :class:`xlsent.recipes.bootstrap.BootstrapResult`: ``model_path`` (loads with ``SentenceTransformer``),
        ``rounds`` (each round's counts and held-out score), ``best_round``, ``plot``, ``model_card``.
    """
    from xlsent.api.training import recipe_config, settings_to_overrides
    from xlsent.recipes.bootstrap import MIN_SEED, BootstrapSettings, run_bootstrap
    from xlsent.utils.io import claim

    check_options(BOOTSTRAP, locals(), ("rounds", "start"))
    if not 0 < holdout <= 0.5:
        raise XlsentError(f"{named('holdout', holdout)}: give a share of the seed pairs above 0 and at most 0.5")
    cut = parse_threshold(threshold)
    kinds = parse_filters(filters)
    extra = dict(mining or {})
    unknown = sorted(set(extra) - set(MINING_OPTIONS))
    if unknown:
        raise XlsentError(f"mining: unknown option(s) {', '.join(unknown)} — use {', '.join(MINING_OPTIONS)}")
    sets = list(settings) if isinstance(settings, list) else settings_to_overrides(settings)
    student = [x for x in sets if x.split("=", 1)[0].strip() == "models.student"]
    if student:  # --set models.student=DIR is the base model: every round starts from it (or the last round's)
        model = student[-1].split("=", 1)[1].strip()
        sets = [x for x in sets if x not in student]
    # every input checked before any model loads: the seed, the texts, their languages, adapt's overrides
    seed, langs = _read_seed(seed_pairs, src_lang, tgt_lang)
    if len(seed) < MIN_SEED:
        raise XlsentError(f"{seed_pairs}: {len(seed)} pair(s) after cleaning — a bootstrap needs at least {MIN_SEED} "
                          "(some to train on, some held out to tell whether a round helped)")
    lines = {}
    for side, path in (("src", src_texts), ("tgt", tgt_texts)):
        lines[side] = _check_text(path, side, documents)
    _check_languages(seed, langs, src_texts, tgt_texts, documents)
    _check_readable(model, seed, langs, src_texts, tgt_texts, documents)
    adapt_cfg = recipe_config("adapt", seed_pairs, settings=[f"models.student={model}", *sets], config=config,
                              preset=preset, device=None if device == "auto" else device)
    output = output_folder(output)
    output.mkdir(parents=True, exist_ok=True)
    with claim(output, "a bootstrap"):  # one run per folder
        if callable(engine):
            engine = engine()
        mine_opts = {**extra, "threshold": cut, "filters": list(kinds) or "none", "learn": learn,
                     "anchor": bool(anchor)}
        steps = _steps(src_texts, tgt_texts, langs, documents, mine_opts, engine, device, lines, on_note, console,
                       config, preset)
        run_settings = BootstrapSettings(model=str(model), rounds=int(rounds), start=start, holdout=float(holdout),
                                         documents=documents, src_lang=langs[0], tgt_lang=langs[1],
                                         adapt=sets, adapt_config=str(Path(config).resolve()) if config else "",
                                         adapt_preset=preset or "",
                                         mining={k: (str(v) if isinstance(v, Path) else v)
                                                 for k, v in mine_opts.items() if k != "learn"} |
                                         {"learn": {k: str(v) for k, v in (learn or {}).items()}})
        identity = {name: _identity(path) for name, path in (("seed", seed_pairs), ("src", src_texts),
                                                              ("tgt", tgt_texts))}
        result = run_bootstrap(run_settings, seed, langs, output, steps, adapt_cfg, identity, on_note,
                               keep_rounds=keep_rounds)
        _report(result, identity)
        return result


def _read_seed(path, src_lang, tgt_lang) -> tuple[list[tuple[str, str]], tuple[str, str]]:
    """The seed's cleaned pairs in file order (src, tgt) and the two languages (declared, the file's, detected)."""
    from xlsent.data.langid import language_code
    from xlsent.data.sets.pairs import detected_languages, load_pairs

    loaded = load_pairs(str(path))
    ds: Any = loaded.dataset
    found = detected_languages(ds)[:2] if len(ds) else ("", "")
    codes = []
    for code, option, default in ((src_lang, "src_lang", found[0]), (tgt_lang, "tgt_lang", found[1])):
        codes.append(language_code(code, option) if code else (default or ""))
    return list(zip(ds["src"], ds["tgt"])), (codes[0], codes[1])


def _check_text(path, side: str, documents: bool) -> int:
    """A plain text checked before any model loads (it exists, is UTF-8 text, holds a line); its line count."""
    from xlsent.mining.mine import is_document_source

    p = Path(path)
    if documents and is_document_source(p) and not p.exists():
        from xlsent.data.formats.documents import load_documents

        return len(load_documents(str(p)))  # a bundled document set: its errors are one line already
    option = "--src-texts" if side == "src" else "--tgt-texts"
    if not p.is_file():
        raise XlsentError(f"{named(option, str(path))}: no such file — give a UTF-8 text file, one sentence a line")
    count, blank = 0, 0
    with open(p, "rb") as f:
        head = f.read(1 << 16)
        if b"\0" in head:
            raise XlsentError(f"{path}: a binary file (NUL bytes in its first 64 KiB) — {option} takes UTF-8 text, "
                              "one sentence a line")
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as e:
            if e.start < len(head) - 4:  # not just a character cut at the end of the block
                raise XlsentError(f"{path}: not UTF-8 text (byte {e.start}) — convert it, e.g. iconv -t UTF-8") from None
        f.seek(0)
        for line in f:
            count += 1
            blank += not line.strip()
    if count == blank:
        raise XlsentError(f"{path}: empty — {option} needs plain text, one sentence a line")
    return count


def _sample_lines(path, documents: bool) -> list[str]:
    p = Path(path)
    if not p.is_file():
        return []
    out = []
    with open(p, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.strip():
                out.append(line.strip()[:1000])
            if len(out) >= SAMPLE_LINES:
                break
    if documents and p.suffix == ".jsonl":
        return []  # documents' JSON lines: their language is checked as the documents are split
    return out


def _check_languages(seed, langs, src_texts, tgt_texts, documents: bool) -> None:
    """Each text in its seed column's language: a text read (CLD2, a clear majority of its sampled lines) as a
    language other than its column's — declared or read the same way from the seed — is one line, swapped texts
    said as such. A language CLD2 cannot read is not judged here."""
    from xlsent.data.langid import detect_side, macro

    def same(a: str | None, b: str | None) -> bool:
        return bool(a and b and (a == b or macro(a) == macro(b)))

    seed_langs = []
    for i, code in enumerate(langs):
        seed_langs.append(code or detect_side([p[i] for p in seed]).lang)
    read = [detect_side(_sample_lines(path, documents)).lang for path in (src_texts, tgt_texts)]
    for i, (path, option) in enumerate(((src_texts, "--src-texts"), (tgt_texts, "--tgt-texts"))):
        want, got = seed_langs[i], read[i]
        if not (want and got) or same(want, got):
            continue
        if same(got, seed_langs[1 - i]) and same(read[1 - i], want):
            raise XlsentError(f"{option} {path} reads as {got}, the seed's {'second' if i == 0 else 'first'} column's "
                              "language: the texts are swapped — --src-texts is in the seed file's first column's "
                              "language, --tgt-texts in its second's")
        raise XlsentError(f"{option} {path} reads as {got}, but the seed's {'first' if i == 0 else 'second'} column is "
                          f"{want} — give plain text in the seed's languages (or declare them: --src-lang / --tgt-lang)")


def _check_readable(model, seed, langs, src_texts, tgt_texts, documents: bool) -> None:
    """The readability warning (pieces the model's tokenizer does not know, pointing at ``xlsent models romanize``)
    for each side of the seed and the texts, from the tokenizer alone, before any model loads."""
    from xlsent.encoding.readable import check_readable, model_tokenizer

    tokenizer = model_tokenizer(model)
    if tokenizer is None:
        return  # not a folder with a tokenizer here: the model's own load says what is wrong
    sides = [(f"{src_texts}", _sample_lines(src_texts, documents)[:200] or [p[0] for p in seed], langs[0] or None),
             (f"{tgt_texts}", _sample_lines(tgt_texts, documents)[:200] or [p[1] for p in seed], langs[1] or None)]
    check_readable(tokenizer, sides, str(model))


def _identity(path) -> dict:
    p = Path(path)
    if not p.exists():
        return {"path": str(path)}
    st = p.stat()
    return {"path": str(p.resolve()), "bytes": st.st_size, "mtime": int(st.st_mtime)}


def _steps(src_texts, tgt_texts, langs, documents, mine_opts, engine, device, lines, on_note, console, config,
           preset):
    """The steps a round calls (:class:`xlsent.recipes.bootstrap.Steps`), bound to this run's options."""
    from xlsent.api._common import encoder_for, place
    from xlsent.api.training import train
    from xlsent.recipes.bootstrap import Steps

    place(device, "auto")

    def encode(model: str, texts: list[str], side: str):
        return encoder_for(model, normalize=True).encode(texts, langs[side == "tgt"] or None)

    def train_step(pairs_file: Path, run: Path, sets: list[str]) -> Path:
        return train("adapt", pairs_file, output=run, settings=sets, config=config, preset=preset, device=device,
                     evaluate=False, on_note=on_note).model_path

    harvest = _aligning(src_texts, tgt_texts, langs, mine_opts, encode) if documents else \
        _mining(src_texts, tgt_texts, langs, mine_opts, engine, console)
    return Steps(harvest=harvest, encode=encode, train=train_step, lines=lines,
                 sample=_sample_lines(src_texts, documents)[:256])


def _mining(src_texts, tgt_texts, langs, opts, engine, console):
    """A round's harvest by margin mining (:func:`xlsent.mine`); its stored vectors are the stop rule's pools."""
    from xlsent.api.mining import mine
    from xlsent.mining.store import EmbeddingStore
    from xlsent.recipes.bootstrap import Harvest
    from xlsent.utils.io import write_json_atomic

    anchored = opts.get("anchor", True) and parse_threshold(opts.get("threshold", "auto")) == "auto"
    opts = {k: v for k, v in opts.items() if k != "anchor"}

    def harvest(model: str, folder: Path, known: list[tuple[str, str]]) -> Harvest:
        work = folder / "mine.work"
        notes: list[str] = []
        res = mine(src_texts, tgt_texts, model=model, workdir=work, src_lang=langs[0] or None,
                   tgt_lang=langs[1] or None, engine=engine, on_note=notes.append, console=console,
                   show_progress_bar=console is not None,
                   known_pairs=known if anchored else None, **opts)
        s = res.summary
        write_json_atomic(folder / "mine.json", {**s, "pairs_kept": len(res.pairs)})
        sel, nf = s["selection"], s.get("noise_filters") or {}
        counts = {"src_lines": s["sentences"]["src"], "tgt_lines": s["sentences"]["tgt"],
                  "candidates": sel["candidates"] - sel.get("removed_sentence_already_paired", 0),
                  "after_cut": sel["pairs"], "filters": [{k: f[k] for k in ("filter", "removed", "why")}
                                                         for f in nf.get("filters", [])],
                  "after_filters": len(res.pairs)}
        auto = sel.get("auto_threshold")
        if auto:
            counts["cut"] = auto.get("threshold")
            kp = sel.get("known_pairs") or {}
            if auto.get("method", "").startswith("auto (anchored"):
                how = f"anchored on the {kp.get('retrieved')} of {kp.get('pairs')} held-out pairs the model retrieves"
            elif kp:  # held-out pairs given but not used: say why (the estimate's note ends with the reason)
                why = auto.get("note", "").rpartition("; ")[2]
                how = "not anchored" + (f" ({why})" if "anchored" in why else "")
            else:
                how = ""
            notes.append(f"the automatic cut{', ' + how if how else ''}: {auto['threshold']:.4f}"
                         if auto.get("threshold") is not None
                         else f"the automatic cut kept every candidate ({auto.get('note', '')})")
        def shards(side: str):  # one stored shard at a time, as float32
            store = EmbeddingStore.open(work / side)
            return (store.shard(i) for i in range(store.n_shards))

        return Harvest(res.pairs, counts, shards("src"), shards("tgt"), notes,
                       cleanup=lambda: shutil.rmtree(work, ignore_errors=True))

    return harvest


def _aligning(src_texts, tgt_texts, langs, opts, encode):
    """A round's harvest by aligning translated documents (:func:`xlsent.align`), paired by order (by ``id`` where
    both sides are document JSONL with the same ids); the noise filters on the aligned pairs. The pools: every
    sentence of the documents."""
    import numpy as np

    import xlsent.api.alignment as alignment
    from xlsent.data.filters.noise_filters import apply_noise_filters
    from xlsent.data.langid import pair_languages
    from xlsent.recipes.bootstrap import Harvest

    docs = _document_pairs(src_texts, tgt_texts, langs, opts.get("splitter", "auto"))
    kinds = [] if opts.get("filters") == "none" else list(opts.get("filters") or [])

    def harvest(model: str, folder: Path, known: list[tuple[str, str]]) -> Harvest:  # noqa: ARG001 (aligned: no cut)
        pairs, skipped = [], []
        for name, s, t in docs:
            try:
                blocks = alignment.align(s, t, model=model, src_lang=langs[0] or None, tgt_lang=langs[1] or None)
            except XlsentError as e:
                skipped.append(f"{name}: {e}")
                continue
            pairs += [(b.score, " ".join(s[i] for i in b.src_ids), " ".join(t[j] for j in b.tgt_ids))
                      for b in blocks if b.src_ids and b.tgt_ids]
        aligned = len(pairs)
        counts: dict = {"src_lines": sum(len(d[1]) for d in docs), "tgt_lines": sum(len(d[2]) for d in docs),
                        "candidates": aligned, "documents": len(docs) - len(skipped)}
        notes = [f"{len(docs) - len(skipped)} document pair(s) aligned into {aligned:,} blocks"] + skipped
        if kinds and pairs:
            found, lang_notes = pair_languages([p[1] for p in pairs], [p[2] for p in pairs],
                                               (langs[0] or None, langs[1] or None))
            keep, report = apply_noise_filters([p[1] for p in pairs], [p[2] for p in pairs], found, kinds)
            pairs = [p for p, k in zip(pairs, keep) if k]
            counts["filters"] = [{"filter": f.name, "removed": f.removed, "why": f.why} for f in report.filters]
            notes += lang_notes
        counts["after_filters"] = len(pairs)
        pairs.sort(key=lambda p: -p[0])
        src_all = [x for d in docs for x in d[1]]
        tgt_all = [x for d in docs for x in d[2]]
        return Harvest(pairs, counts, [np.asarray(encode(model, src_all, "src"))],
                       [np.asarray(encode(model, tgt_all, "tgt"))], notes)

    return harvest


def _document_pairs(src_texts, tgt_texts, langs, splitter: str) -> list[tuple[str, list[str], list[str]]]:
    """(name, source sentences, target sentences) of each document pair, split for the sides' languages."""
    from xlsent.data.formats.documents import Document, Section, load_documents
    from xlsent.data.text.splitting import split_sentences

    def read(path, lang: str) -> list[Document]:
        p = Path(path)
        if p.suffix == ".jsonl" or (not p.exists() and ":" in str(path)):
            return load_documents(str(path))
        lines = p.read_text(encoding="utf-8").splitlines()
        return [Document(str(i + 1), lang, "", [Section("", line)]) for i, line in enumerate(lines) if line.strip()]

    s_docs, t_docs = read(src_texts, langs[0]), read(tgt_texts, langs[1])
    by_id = {d.id: d for d in t_docs}
    if all(d.id in by_id for d in s_docs) and len(by_id) == len(t_docs):
        matched = [(d, by_id[d.id]) for d in s_docs]
    elif len(s_docs) == len(t_docs):
        matched = list(zip(s_docs, t_docs))
    else:
        raise XlsentError(f"--documents: {src_texts} holds {len(s_docs)} documents and {tgt_texts} {len(t_docs)} — "
                          "give translated documents in the same order (one a line), or JSONL with the same ids")

    def sentences(doc: Document, lang: str) -> list[str]:
        return [x for sec in doc.sections if sec.text.strip()
                for x in split_sentences(sec.text, lang or doc.lang or "und", splitter) if x.strip()]

    return [(f"document {s.id}", sentences(s, langs[0]), sentences(t, langs[1])) for s, t in matched]


def _report(result, identity: dict) -> None:
    """The rounds' plot (``rounds.png``) and the output model's card."""
    from xlsent.report.model_card import write_bootstrap_card
    from xlsent.report.plots import bootstrap_rounds_png
    from xlsent.utils.io import write_bytes_atomic

    png = result.output / "rounds.png"
    write_bytes_atomic(png, bootstrap_rounds_png(result.rounds, result.best_round,
                                                 f"{Path(identity['seed']['path']).name}: held-out P@1 by round"))
    result.plot = png
    result.model_card = write_bootstrap_card(result.output, result, identity)
