"""Loading a model, and storing per-language mean vectors in its folder."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from xlsent.api._common import check_backend, check_options, check_unicode, encoder_for, old_names, place, writes
from xlsent.utils.errors import InputFormatError, XlsentError, named
from xlsent.utils.io import atomic_path
from xlsent.utils.options import Option, at_least

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from xlsent.models.vocab.extend import VocabExtension
    from xlsent.models.vocab.romanize import Romanization
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
    handle.model._xlsent_path = str(handle.path)  # type: ignore[assignment]  # so that xlsent's caches key it by its folder's fingerprint
    return handle.model


#: :func:`calibrate`'s options with a range (``xlsent models calibrate``'s built from them)
CALIBRATE: dict[str, Option] = {"sample": at_least(0, 0, "use at most N lines of each file (seeded; 0 = all)")}


def calibrate(model: str | Path, texts: dict[str, Sequence[str] | str | Path], *, sample: int = 0,
              backend: str = "auto", threads: int = 0, device: str = "auto", dtype: str = "auto",
              show_progress_bar: bool | None = None, **old: Any) -> "LanguageMeans":
    """Store per-language mean vectors in a model folder, for centering single texts (``embed(center=True)``,
    ``xlsent serve``).

    Args:
        model: a registered name or a local model folder; the means are written into it
            (``xlsent_language_means.npz``, outside its fingerprint: it still loads with ``SentenceTransformer``).
        texts: language code → text of that language: a list of texts or a file with one text a line
            (a few hundred lines are plenty). Blank lines and repeats are left out.
        sample: use at most this many texts of each language (seeded; 0 = all).
        backend, threads, device, dtype, show_progress_bar: where and how the model runs (as :func:`xlsent.embed`;
            ``show_progress``, the old name, still works with a ``DeprecationWarning``).

    Returns:
        Every language mean now stored in the folder (those stored before included).

    Example:
        >>> import shutil, tempfile, xlsent
        >>> folder = shutil.copytree(xlsent.load("e5-small")._xlsent_path, tempfile.mkdtemp() + "/e5")
        >>> means = xlsent.calibrate(folder, {"nya": ["Moni, muli bwanji?", "Zikomo kwambiri."]})
        >>> means.languages
        ['nya']
    """
    from xlsent.data.formats.readers import read_lines
    from xlsent.encoding.encoder import source_folder
    from xlsent.models.language_means import calibrate as calibrate_means
    from xlsent.models.language_means import language_code, read_language_means

    check_backend(backend, threads)
    check_options(CALIBRATE, {"sample": sample})
    sources: dict[str, str] = {}
    by_lang: dict[str, list[str]] = {}
    for code, given in texts.items():
        if not str(code).strip():
            raise XlsentError(f"the texts {given}: give their language's code (e.g. nya for chichewa.txt)")
        code = language_code(code)
        if isinstance(given, (str, Path)):
            if isinstance(given, (str, Path)) and not Path(given).is_file():
                raise XlsentError(f"the texts of {code} ({given}): no such file")
            sources[code], lines = str(given), read_lines(Path(given))
        else:
            sources[code], lines = "texts given in Python", list(given)
            check_unicode(lines, f"texts[{code!r}]")
        lines = list(dict.fromkeys(x.strip() for x in lines if x.strip()))
        if sample and sample < len(lines):
            lines = random.Random(0).sample(lines, sample)
        if not lines:
            raise XlsentError(f"the texts of {code} ({sources[code]}): no text")
        by_lang[code] = lines
    place(device, dtype)
    folder = source_folder(str(model))  # the folder named (never a cached export): serve and embed --center read it
    encoder = encoder_for(str(model), backend=backend, threads=threads, normalize=True,
                          show_progress=old_names("calibrate", old, show_progress_bar=show_progress_bar)[0])
    means = calibrate_means(encoder.encode, by_lang, sources, read_language_means(folder))
    means.save(folder)
    return means


# :func:`extend_vocab`'s and :func:`romanize`'s options, each declared once (``xlsent models extend-vocab`` /
# ``romanize``'s built from them)
EXTEND: dict[str, Option] = {
    "texts": Option(..., help="text in the script to add, one sentence a line (a few thousand lines)"),
    "output": Option(..., help="new folder for the extended model"),
    "pieces": Option(2000, help="the most pieces to add (fewer when the text holds fewer)"),
    "seed": Option(0, help="seed of the default initialisation's noise"),
}
ROMANIZE: dict[str, Option] = {
    "texts": Option(..., help="text in the script, one sentence a line"),
    "output": Option(..., help="new folder for the romanised model"),
    "extend": Option(False, help="also add pieces for the characters no romanisation covers (extend-vocab's method)"),
    "pieces": Option(None, help="with --extend: the most pieces to add (default: one a character left; longer pieces "
                                "learnt from the romanised text come after those)"),
    "seed": Option(0, help="with --extend: seed of the new rows' noise"),
}


@writes("output")
def extend_vocab(model: str | Path, texts: str | Path | Sequence[str], output: str | Path, *,
                 pieces: int = 2000, seed: int = 0) -> "VocabExtension":
    """Add tokenizer pieces and token-table rows for a script the model cannot read (its characters are
    ``<unk>`` to the base tokenizer), learnt from your text.

    New pieces are learnt from ``texts`` with a Unigram model like the base tokenizer's; only pieces with a
    character the base tokenizer maps to ``<unk>`` are added (each such character first), so text in the scripts
    the model already reads is segmented and embedded exactly as before. A new row is the mean of the rows of
    the known pieces the base tokenizer splits the new piece into (weighted by characters covered), or, for a
    piece with no known part, the table's mean plus noise of the table's spread (seeded) — the method is in
    :mod:`xlsent.models.vocab.extend`. Train the new rows with :func:`xlsent.adapt` (or ``xlsent train adapt``)
    from the folder: with ``models.freeze_word_embeddings`` the old rows stay frozen and the added rows train, at 300
    times the learning rate (they start random).

    Args:
        model: a registered name or a local model folder with a Unigram (sentencepiece) tokenizer, as e5-small's.
        texts: text in the script to add — a file with one text a line, or a list of texts (at least 2 lines;
            a few thousand are better).
        output: a new (or empty) folder for the extended model; ``SentenceTransformer(output)`` loads it, and
            ``xlsent_added_pieces.json`` in it records each added piece, its id, score and initialisation.
        pieces: the most pieces to add (every unknown character of the text first, then the longer pieces by
            their learnt score); fewer when the text holds fewer.
        seed: seed of the noise of the default initialisation.

    Returns:
        What was added: the folder, the number of pieces, the share of the text's pieces that were ``<unk>``
        before and after, and how many rows were initialised from known sub-pieces or by the default.

    Example:
        >>> import tempfile, xlsent
        >>> from xlsent.data.text.transliterate import to_deseret  # a substitute: Chichewa in Deseret letters
        >>> folder = tempfile.mkdtemp()
        >>> lines = [to_deseret(t) for t in ("Moni, muli bwanji?", "Zikomo kwambiri.", "Mulungu ndi wabwino.")]
        >>> _ = open(f"{folder}/dsrt.txt", "w", encoding="utf-8").write("\\n".join(lines))
        >>> ext = xlsent.extend_vocab("e5-small", f"{folder}/dsrt.txt", f"{folder}/e5-dsrt", pieces=100)
        >>> ext.unk_rate_before > 0.3, ext.unk_rate_after
        (True, 0.0)
    """
    from xlsent.models.vocab.extend import check_pieces, extend_vocabulary, folder_tokenizer_json, write_record
    from xlsent.models.handle import load_model
    from xlsent.models.registry import resolve_model_path

    check_pieces(pieces)
    lines, source = _script_texts(texts, "add")
    out = _new_folder(output, "extended")
    path = resolve_model_path(str(model))
    folder_tokenizer_json(path)  # a model whose tokenizer cannot be extended: one line, before it loads
    st = load_model(path, device="cpu").model
    ext = extend_vocabulary(st, lines, pieces, seed)
    ext.output = out
    with atomic_path(out, "the extended model") as tmp:
        st.save(str(tmp))
        write_record(tmp, ext, str(model), source, seed)
    return ext


def _script_texts(texts: str | Path | Sequence[str], verb: str) -> tuple[list[str], str | None]:
    """The non-blank lines of a file (or a list) of text in a script, checked; and the file's name (None: texts
    given in Python)."""
    from xlsent.data.formats.readers import read_lines
    from xlsent.models.vocab.extend import check_texts

    source: str | None = None  # texts given in Python
    if isinstance(texts, (str, Path)):
        source = str(texts)
        if not Path(texts).is_file():
            raise XlsentError(f"{named('texts', str(texts))}: no such file — give a file of text in the script to "
                              f"{verb}, one sentence a line")
        try:
            lines = read_lines(Path(texts))
        except InputFormatError as exc:
            if exc.problem != "the file is empty":
                raise
            lines = []  # said below, with the option's name
    else:
        lines = list(texts)
        check_unicode(lines, "texts")
    return check_texts(lines, source), source


def _new_folder(output: str | Path, what: str) -> Path:
    from xlsent.api._common import output_folder

    out = output_folder(output, "output")
    if out.exists() and any(out.iterdir()):
        raise XlsentError(f"{named('output', str(out))}: the folder is not empty — give a new folder for the "
                          f"{what} model")
    return out


@writes("output")
def romanize(model: str | Path, texts: str | Path | Sequence[str], output: str | Path, *, extend: bool = False,
             pieces: int | None = None, seed: int = 0) -> "Romanization":
    """A model that reads a script its tokenizer cannot, by romanising it: the script's characters are written in
    Latin letters (anyascii's table) inside the tokenizer, before it tokenises.

    The characters are those of ``texts`` the model's tokenizer maps to ``<unk>``; their romanisation goes into the
    folder's ``tokenizer.json`` as its normaliser's last rules, so ``SentenceTransformer(output)`` loads the folder
    and romanises its own input, with nothing of xlsent installed, and text in the scripts the model reads is
    tokenised as before (the method: :mod:`xlsent.models.vocab.romanize`). Train it with :func:`xlsent.adapt` (or
    ``xlsent train adapt``) like any folder.

    Args:
        model: a registered name or a local model folder with a fast tokenizer (``tokenizer.json``), as e5-small's.
        texts: text in the script — a file with one text a line, or a list of texts (at least 2 lines).
        output: a new (or empty) folder for the romanised model; ``xlsent_romanization.json`` in it records the
            table and the text's unknown-piece rate before and after.
        extend: also add pieces and rows for the characters anyascii cannot romanise
            (:func:`xlsent.extend_vocab`'s method, learnt from the romanised text).
        pieces: with ``extend``, the most pieces to add: the characters left come first, then longer pieces learnt
            from the romanised text. None (the default): one piece a character left — longer pieces would take
            romanised letters into new rows, and did worse on the development split (the lab notebook,
            ``docs/experiments/romanize.md``).
        seed: with ``extend``, the seed of the new rows' noise.

    Returns:
        What was done: the folder, how many characters were romanised and how many left, the unknown-piece rate
        and pieces per word before and after, the table.

    Example:
        >>> import tempfile, xlsent
        >>> folder = tempfile.mkdtemp()
        >>> lines = ["ᎠᏂᏴᏫ ᏂᎦᏗᏳ ᏂᎨᏒᎾ ᏚᎾᏕᏅ.", "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ."]  # Cherokee: e5-small reads none of it
        >>> rom = xlsent.romanize("e5-small", lines, f"{folder}/e5-chr")
        >>> rom.unk_rate_before > 0.3, rom.unk_rate_after
        (True, 0.0)
    """
    from xlsent.models.vocab.extend import (check_pieces, extend_vocabulary, folder_tokenizer_json,
                                            write_record as write_extension)
    from xlsent.models.vocab.romanize import romanize_tokenizer, write_record
    from xlsent.models.handle import load_model
    from xlsent.models.registry import resolve_model_path

    if extend and pieces is not None:
        check_pieces(pieces)
    lines, source = _script_texts(texts, "romanise")
    out = _new_folder(output, "romanised")
    path = resolve_model_path(str(model))
    if extend:
        folder_tokenizer_json(path)  # extend needs a Unigram tokenizer: one line, before the model loads
    st = load_model(path, device="cpu").model
    rom = romanize_tokenizer(st, lines)
    if extend and rom.left:
        ext = extend_vocabulary(st, lines, rom.left if pieces is None else pieces, seed)
        rom.extended, rom.unk_rate_after = ext.added, ext.unk_rate_after
        rom.pieces_per_word_after = ext.pieces_per_word_after
    rom.output = out
    asked = {"extend": extend, "pieces": "one a character left" if pieces is None else pieces, "seed": seed}
    with atomic_path(out, "the romanised model") as tmp:
        st.save(str(tmp))
        write_record(tmp, rom, str(model), source, asked if extend else {"extend": False})
        if extend and rom.extended:
            ext.output = out
            write_extension(tmp, ext, str(model), source, seed)
    return rom


@writes("output")
def gloss_file(input: str | Path, output: str | Path, *, model: str | Path | None = None,
               dictionary: str | Path | None = None, unknown: str = "keep") -> tuple[int, int]:
    """Gloss a text file word by word (``xlsent gloss``; paper 004's word mapping layer): every word found in the
    dictionary of a gloss model (``model``, trained by ``xlsent train gloss``) or of a word<TAB>translation TSV
    (``dictionary``) replaced by its translation, a missing one as ``unknown`` says; one line out a line in.
    Returns the lines written and the dictionary's entries."""
    from xlsent.api._common import output_file
    from xlsent.data.formats.dictionary import BilingualDictionary
    from xlsent.data.formats.readers import read_lines
    from xlsent.models.gloss import load_gloss
    from xlsent.utils.io import write_text_atomic

    output_file(output)
    if bool(model) == bool(dictionary):
        raise XlsentError("give exactly one of model=GLOSS_MODEL or dictionary=FILE.tsv")
    d: BilingualDictionary | None
    if dictionary:
        d = BilingualDictionary.from_tsv(dictionary)
    else:
        g = load_gloss(Path(str(model)))
        d = g.dictionary if g is not None else None
    if d is None:
        raise XlsentError(f"{model}: not a gloss model (no xlsent_gloss.json) — train one with 'xlsent train gloss'")
    lines = read_lines(Path(input))
    write_text_atomic(Path(output), "".join(d.gloss(t, unknown) + "\n" for t in lines))
    return len(lines), len(d)
