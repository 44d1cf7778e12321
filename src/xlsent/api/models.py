"""Loading a model, and storing per-language mean vectors in its folder."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from xlsent.api._common import at_least, check_backend, check_unicode, encoder_for, place
from xlsent.utils.errors import XlsentError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from xlsent.models.language_means import LanguageMeans


def load(name_or_path: str | Path = "e5-small", device: str = "auto") -> "SentenceTransformer":
    """Load a model as a ``SentenceTransformer``, offline.

    Args:
        name_or_path: a registered name (``e5-small``, ``minilm-en``: prepared offline from their registry
            packages on first use, then cached) or any local sentence-transformers / Hugging Face model folder,
            such as the ``model/`` folder of an ``xlsent train`` run.
        device: ``auto`` (CUDA, then MPS, then the CPU) | ``cpu`` | ``cuda`` | ``cuda:N`` | ``mps``.

    Returns:
        The model, as ``SentenceTransformer(path)`` loads it; it can be passed as ``model=`` to
        :func:`xlsent.embed` and :func:`xlsent.evaluate`.

    Example:
        >>> import xlsent
        >>> model = xlsent.load("e5-small", device="cpu")
        >>> model.get_embedding_dimension()
        384
    """
    from xlsent.models.handle import load_model
    from xlsent.utils.device import resolve_device

    handle = load_model(name_or_path, device=resolve_device(device, "device"))
    handle.model._xlsent_path = str(handle.path)  # so that xlsent's caches key it by its folder's fingerprint
    return handle.model


def calibrate(model: str | Path, texts: dict[str, Sequence[str] | str | Path], *, sample: int = 0,
              backend: str = "auto", threads: int = 0, device: str = "auto", dtype: str = "auto",
              show_progress: bool = False) -> "LanguageMeans":
    """Store per-language mean vectors in a model folder, for centering single texts (``embed(center=True)``,
    ``xlsent serve``).

    Args:
        model: a registered name or a local model folder; the means are written into it
            (``xlsent_language_means.npz``, outside its fingerprint: it still loads with ``SentenceTransformer``).
        texts: language code → text of that language: a list of texts or a file with one text a line
            (a few hundred lines are plenty). Blank lines and repeats are left out.
        sample: use at most this many texts of each language (seeded; 0 = all).
        backend, threads, device, dtype, show_progress: where and how the model runs (as :func:`xlsent.embed`).

    Returns:
        Every language mean now stored in the folder (those stored before included).

    Example:
        >>> import shutil, tempfile, xlsent
        >>> folder = shutil.copytree(xlsent.load("e5-small")._xlsent_path, tempfile.mkdtemp() + "/e5")
        >>> means = xlsent.calibrate(folder, {"nya": ["Moni, muli bwanji?", "Zikomo kwambiri."]})
        >>> means.languages
        ['nya']
    """
    from xlsent.data.readers import read_lines
    from xlsent.encoding.encoder import source_folder
    from xlsent.models.language_means import calibrate as calibrate_means
    from xlsent.models.language_means import language_code, read_language_means

    check_backend(backend, threads)
    at_least(sample, 0, "--sample")
    sources: dict[str, str] = {}
    by_lang: dict[str, list[str]] = {}
    for code, given in texts.items():
        if not str(code).strip():
            raise XlsentError(f"--lang ={given}: give CODE=FILE, e.g. --lang nya=chichewa.txt")
        code = language_code(code)
        if isinstance(given, (str, Path)):
            if isinstance(given, (str, Path)) and not Path(given).is_file():
                raise XlsentError(f"--lang {code}={given}: no such file {given}")
            sources[code], lines = str(given), read_lines(Path(given))
        else:
            sources[code], lines = "texts given in Python", list(given)
            check_unicode(lines, f"texts[{code!r}]")
        lines = list(dict.fromkeys(x.strip() for x in lines if x.strip()))
        if sample and sample < len(lines):
            lines = random.Random(0).sample(lines, sample)
        if not lines:
            raise XlsentError(f"--lang {code}={sources[code]}: the file holds no text")
        by_lang[code] = lines
    place(device, dtype)
    folder = source_folder(str(model))  # the folder named (never a cached export): serve and embed --center read it
    encoder = encoder_for(str(model), backend=backend, threads=threads, normalize=True, show_progress=show_progress)
    means = calibrate_means(encoder.encode, by_lang, sources, read_language_means(folder))
    means.save(folder)
    return means
