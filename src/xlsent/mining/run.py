"""What :func:`xlsent.mine` runs once its arguments are checked: the sides read, the model loaded, the job run.

The order is the user's: every input is read (and reported, line by line) before the model loads, so a bad file
costs no model; the work folder is ``workdir``, else ``OUTPUT.work``, else a temporary folder removed afterwards
(nothing to resume from); faiss searches on the chosen CUDA device where its build can.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Callable

from xlsent.encoding.readable import check_readable
from xlsent.mining.engine import EncoderSettings
from xlsent.mining.job import MineConfig, open_input
from xlsent.mining.mine import MineResult, input_summary, is_document_source, mine, read_mining_input, save

#: how :func:`run_mine` names a side given in Python in the summary
GIVEN_IN_PYTHON = "(sentences given in Python)"


def run_mine(src: list[str] | Path, tgt: list[str] | Path, cfg: MineConfig, *, make_encoder: Callable[[], Any],
             label: str, settings: EncoderSettings, output: Path | None, workdir: str | Path | None,
             src_lang: str = "", tgt_lang: str = "", documents: bool = False, splitter: str = "auto",
             overwrite: bool = False, engine: Any = None, noise_filters: tuple[str, ...] = (), identifier: Any = None,
             known_pairs: tuple[list[str], list[str]] | None = None, on_note: Callable[[str], None] | None = None,
             console: Any = None, show_progress: bool | None = None) -> MineResult:
    """Mine ``src`` against ``tgt`` (each a list of checked one-line sentences, or a file) as ``cfg`` says.

    ``make_encoder()`` loads the model once the inputs are read (``label`` names it in messages; ``settings`` is
    how an engine's workers load it again); ``output``: also write the pairs and ``OUTPUT.json``. Returns the
    job's result (its summary's ``workdir`` ``None`` where a temporary folder was removed)."""
    from xlsent.mining.index import faiss_gpus
    from xlsent.utils.device import current_device

    chosen = current_device()  # here: faiss searches on the chosen GPU where it can use one (a Ray worker: its own)
    gpu = int(chosen.partition(":")[2] or 0) if chosen.startswith("cuda") and engine is None else None
    gpu_note = None
    if gpu is not None and not faiss_gpus():
        gpu_note = (f"search: on the CPU — this faiss cannot use {chosen} (a CPU build); install a GPU build "
                    "(e.g. pip uninstall faiss-cpu && pip install faiss-gpu-cu12) to search there too")
    scratch = None
    if workdir is None and output is None:
        scratch = tempfile.TemporaryDirectory(prefix="xlsent-mine-")
    work = Path(workdir) if workdir is not None else Path(scratch.name) if scratch else \
        Path(str(output) + ".work")
    note = on_note or (lambda line: None)
    if gpu_note:
        note(gpu_note)
    try:
        inputs, sides = {}, []
        for name, given, lang in (("src", src, src_lang), ("tgt", tgt, tgt_lang)):
            if isinstance(given, list):  # sentences given in Python, checked by the caller
                inputs[name] = {"file": GIVEN_IN_PYTHON, "sentences": len(given), "skipped": {}}
                sides.append(given)
                continue
            path = Path(given)
            if documents or path.suffix == ".gz" or is_document_source(path):  # split or unpacked here
                texts, report = read_mining_input(path, lang, documents, splitter)
            else:  # a plain file: de-duplicated by blocks on the engine, never read whole into this process
                opened = open_input(work, name, path, cfg, engine)
                texts, report = opened, opened.report()  # type: ignore[assignment]
            for line in report.lines():
                note(line)
            inputs[name] = input_summary(report)
            sides.append(texts)
        encoder = make_encoder()
        check_readable(encoder, [(name, _head(texts), lang) for name, texts, lang in
                                 zip(("src", "tgt"), sides, (src_lang, tgt_lang))], label)
        result = mine(sides[0], sides[1], settings.model, work, cfg, encoder=encoder, overwrite=overwrite,
                      console=console, show_progress=show_progress, inputs=inputs, src_lang=src_lang,
                      tgt_lang=tgt_lang, engine=engine, encoder_settings=settings, noise_filters=noise_filters,
                      search_gpu=gpu, identifier=identifier, known_pairs=known_pairs)
    finally:
        if scratch is not None:
            scratch.cleanup()
    if scratch is not None:
        result.summary["workdir"] = None  # removed: nothing to resume from
    if output is not None:
        save(result, output)
    return result


def _head(side) -> list[str]:
    """A side's first texts (a list, or an input the job reads by position), for the readability check."""
    from xlsent.encoding.readable import SAMPLE

    if isinstance(side, list):
        return side[:SAMPLE]
    import numpy as np

    return side.texts(np.arange(min(SAMPLE, len(side))))
