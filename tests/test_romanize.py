"""``xlsent models romanize`` / ``xlsent.romanize``: a script the tokenizer cannot read, written in Latin letters by the
folder's own tokenizer — on a tiny random model with a Unigram tokenizer built here (test_extend_vocab's)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from test_extend_vocab import LATIN, build_unigram_model, deseret_pairs

import xlsent
from xlsent.data.transliterate import to_deseret

NEW = [to_deseret(t) for t in LATIN * 3]  # lower-case Deseret letters: anyascii writes each as Latin letters
PRIVATE = "\ue000\ue001"  # private-use characters: no romanisation exists


@pytest.fixture(scope="module")
def unigram_model(tmp_path_factory):
    return build_unigram_model(tmp_path_factory.mktemp("unigram") / "model")


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    p = tmp_path_factory.mktemp("texts") / "dsrt.txt"
    p.write_text("\n".join(NEW) + "\n", encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def romanized(unigram_model, texts, tmp_path_factory):
    return xlsent.romanize(str(unigram_model), texts, tmp_path_factory.mktemp("rom") / "model")


def test_the_table_is_anyascii_for_every_unknown_character_and_nothing_is_unknown_after(romanized):
    from anyascii import anyascii

    letters = {c for t in NEW for c in t if not c.isspace()}
    assert set(romanized.table) == letters and all(romanized.table[c] == anyascii(c) for c in letters)
    assert romanized.unk_rate_before >= 0.5 and romanized.unk_rate_after == 0.0 and romanized.left == 0
    record = json.loads((romanized.output / "xlsent_romanization.json").read_text(encoding="utf-8"))
    assert record["romanizer"] == "anyascii 0.3.3" and record["table"] == romanized.table


def test_a_fresh_process_loads_the_folder_with_plain_sentence_transformers_and_it_romanises_its_input(
        unigram_model, romanized):
    """The script and anyascii's romanisation of it give the same pieces and the same vector; a Latin text the base
    model read gives the base model's vector (the table touches only characters that were unknown)."""
    from anyascii import anyascii

    script, latin = NEW[0], LATIN[1]
    code = f"""
import json, sys
from sentence_transformers import SentenceTransformer
base, rom = SentenceTransformer({str(unigram_model)!r}), SentenceTransformer({str(romanized.output)!r})
texts = {[script, anyascii(script), latin]!r}
a, b, c = rom.encode(texts)
(base_c,) = base.encode([texts[2]])
print(json.dumps({{"pieces": [rom.tokenizer.tokenize(t) for t in texts[:2]], "same": float(abs(a - b).max()),
                  "latin": float(abs(c - base_c).max()), "unk": rom.tokenizer.unk_token in rom.tokenizer.tokenize(texts[0])}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["pieces"][0] == got["pieces"][1] and not got["unk"]
    assert got["same"] < 1e-6 and got["latin"] < 1e-6


def test_characters_no_romanisation_covers_are_left_or_given_pieces_with_extend(unigram_model, tmp_path):
    f = tmp_path / "mixed.txt"
    f.write_text("\n".join(f"{t} {PRIVATE}" for t in NEW) + "\n", encoding="utf-8")
    rom = xlsent.romanize(str(unigram_model), f, tmp_path / "a")
    assert rom.left == 2 and set(rom.left_characters) == set(PRIVATE) and 0 < rom.unk_rate_after < 0.2
    both = xlsent.romanize(str(unigram_model), f, tmp_path / "b", extend=True)
    assert both.extended == 2 and both.unk_rate_after == 0.0  # by default, one piece a character left
    assert (tmp_path / "b" / "xlsent_added_pieces.json").is_file()
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tmp_path / "b"), local_files_only=True)
    assert tok.unk_token not in tok.tokenize(f"{NEW[0]} {PRIVATE}")


def test_bad_input_is_one_line(unigram_model, texts, tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_text("\n".join(LATIN), encoding="utf-8")
    with pytest.raises(xlsent.XlsentError, match="already reads every character"):
        xlsent.romanize(str(unigram_model), latin, tmp_path / "a")
    only_private = tmp_path / "private.txt"
    only_private.write_text(f"{PRIVATE}\n{PRIVATE}\n", encoding="utf-8")
    with pytest.raises(xlsent.XlsentError, match="anyascii has no readable romanisation.*extend-vocab"):
        xlsent.romanize(str(unigram_model), only_private, tmp_path / "b")
    with pytest.raises(xlsent.XlsentError, match="texts=.*no such file"):
        xlsent.romanize(str(unigram_model), tmp_path / "missing.txt", tmp_path / "c")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(xlsent.XlsentError, match="not empty"):
        xlsent.romanize(str(unigram_model), texts, tmp_path / "full")


def test_the_command_line(unigram_model, texts, tmp_path):
    from test_cli import xlsent as run_cli

    r = run_cli("models", "romanize", str(unigram_model), "--texts", str(texts), "-o", str(tmp_path / "rom"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["unk_rate_after"] == 0.0 and out["romanized"] > 10
    mixed = tmp_path / "mixed.txt"  # the combination: what no romanisation covers gets pieces
    mixed.write_text("\n".join(f"{t} {PRIVATE}" for t in NEW) + "\n", encoding="utf-8")
    r = run_cli("models", "romanize", str(unigram_model), "--texts", str(mixed), "-o", str(tmp_path / "both"),
                "--extend", "--pieces", "10", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["left"] == 2 and out["extended"] >= 2 and out["unk_rate_after"] == 0.0
    r = run_cli("models", "romanize", str(unigram_model), "--texts", str(mixed), "-o", str(tmp_path / "both1"),
                "--extend", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["extended"] == 2  # by default, one piece a character left
    r = run_cli("models", "romanize", str(unigram_model), "--texts", str(tmp_path / "missing.txt"), "-o",
                str(tmp_path / "rom2"))
    assert r.returncode == 2 and "--texts" in r.stderr and "Traceback" not in r.stderr


def test_adapt_trains_from_a_romanised_folder(romanized, tmp_path):
    """A romanised folder is an ordinary model folder: adapt trains from it and the trained model still romanises."""
    from anyascii import anyascii
    from transformers import AutoTokenizer

    pairs = deseret_pairs(tmp_path / "pairs.tsv")
    run = xlsent.adapt(pairs, tmp_path / "run", model=str(romanized.output), evaluate=False, device="cpu",
                       settings={"train.holdout": 0.25, "train.holdout_min": 5, "train.sample": 0,
                                 "optim.batch_size": 8, "optim.epochs": 1, "eval.udhr": False})
    tok = AutoTokenizer.from_pretrained(str(run.model_path), local_files_only=True)
    assert tok.tokenize(NEW[0]) == tok.tokenize(anyascii(NEW[0])) and tok.unk_token not in tok.tokenize(NEW[0])


def test_embed_eval_mine_and_adapt_say_when_a_side_is_mostly_unknown_pieces(unigram_model, romanized, tmp_path):
    """Before the work: one warning naming the side, its script and rate, and the two remedies; none for text the
    model reads, nor for the same text through the romanised model."""
    import warnings

    from xlsent.encoding.readable import UnreadableTextWarning

    with pytest.warns(UnreadableTextWarning, match=r"texts \[Dsrt\]: \d+% of its pieces unknown.*xlsent models "
                                                   r"romanize .* --texts FILE -o DIR.*extend-vocab"):
        xlsent.embed(NEW[:4], model=str(unigram_model))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadableTextWarning)
        xlsent.embed(LATIN[:4], model=str(unigram_model))
        xlsent.embed(NEW[:4], model=str(romanized.output))
    pairs = deseret_pairs(tmp_path / "pairs.tsv")
    latin = [line.split("\t")[1] for line in pairs.read_text(encoding="utf-8").splitlines()[1:]]
    with pytest.warns(UnreadableTextWarning, match="of its pieces unknown"):
        xlsent.evaluate(str(unigram_model), "retrieval", pairs=pairs)
    with pytest.warns(UnreadableTextWarning, match=r"src \[Dsrt\]"):
        xlsent.mine([to_deseret(x) for x in latin], latin, model=str(unigram_model), output=tmp_path / "mined.tsv",
                    filters="none")
    with pytest.warns(UnreadableTextWarning, match="the non-English side"):
        xlsent.adapt(pairs, tmp_path / "run", model=str(unigram_model), evaluate=False, device="cpu",
                     settings={"train.holdout": 0.25, "train.holdout_min": 5, "train.sample": 0,
                               "optim.batch_size": 8, "optim.max_steps": 1, "eval.udhr": False})


def test_the_by_sound_substitutes_write_chichewa_as_its_sounds_and_romanise_back_approximately():
    """Deseret and Shavian by sound (issue 62's substitutes): no Latin letter is left in a Bible verse, and anyascii
    gives back an approximate spelling — Deseret merges i into e, Shavian doubles the long vowels."""
    from anyascii import anyascii

    from xlsent.data.bundled import load_bundled
    from xlsent.data.transliterate import by_sound

    assert anyascii(by_sound("Mulungu ndi wabwino.", "Dsrt")) == "Mulungu nde wabweno."
    assert anyascii(by_sound("Mulungu ndi wabwino.", "Shaw")) == "muuluunguu ndii waabwiinoo."
    assert anyascii(by_sound("ng'ombe, nyani, phiri, dzina, tsiku, chikondi", "Dsrt")) == \
        "ngombe, nyane, phere, dzena, tseku, chekonde"
    verses = list(load_bundled("bible-en-ny:dev")["tgt"][:300])
    for script in ("Dsrt", "Shaw"):
        written = [by_sound(v, script) for v in verses]
        assert not any(c.isascii() and c.isalpha() for w in written for c in w)
        assert all(len(w.split()) == len(v.split()) for w, v in zip(written, verses))  # words stay words
    with pytest.raises(ValueError, match="Dsrt, Shaw"):
        by_sound("moni", "Latn")


@pytest.mark.slow
def test_a_wordpiece_tokenizer_that_rebuilds_its_normaliser_keeps_the_rules(tmp_path):
    """BERT's tokenizer class (minilm-en's, LaBSE's) rebuilds its normaliser from its settings when it loads: the
    folder is saved as a plain fast tokenizer over the same tokenizer.json, so the rules stay, English is
    tokenised and embedded as before, and the folder loads in a fresh process."""
    cherokee = ["ᎠᏂᏴᏫ ᏂᎦᏗᏳ ᏂᎨᏒᎾ ᏚᎾᏕᏅ.", "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ."]
    rom = xlsent.romanize("minilm-en", cherokee, tmp_path / "m")
    assert rom.unk_rate_before > 0.5 and rom.unk_rate_after == 0.0
    code = f"""
import json
from sentence_transformers import SentenceTransformer
from xlsent.models.registry import resolve_model_path
rom, base = SentenceTransformer({str(tmp_path / "m")!r}), SentenceTransformer(str(resolve_model_path("minilm-en")))
english = "All human beings are born free and equal in dignity and rights."
print(json.dumps({{"unk": rom.tokenizer.unk_token in rom.tokenizer.tokenize({cherokee[1]!r}),
                  "same": rom.tokenizer.tokenize(english) == base.tokenizer.tokenize(english),
                  "diff": float(abs(rom.encode([english]) - base.encode([english])).max())}}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert not got["unk"] and got["same"] and got["diff"] < 1e-5


def test_symbols_are_left_alone_and_case_follows_the_text(unigram_model, tmp_path):
    """An emoji the tokenizer lacks is not written as ":grinning:" (every text would change); a script written in
    one case romanises in lower case (Cherokee's capitals), one written in two keeps its capitals (Deseret)."""
    from xlsent.models.vocab.romanize import _cased

    f = tmp_path / "emoji.txt"
    f.write_text("\n".join(f"{t} 😀" for t in NEW) + "\n", encoding="utf-8")
    rom = xlsent.romanize(str(unigram_model), f, tmp_path / "a")
    assert "😀" not in rom.table and "😀" in rom.left_characters
    assert _cased("Ꮳ", "Tsa", {"Ꮳ"}) == "tsa"  # Cherokee capitals only
    assert _cased("\U00010400", "E", {"\U00010400", "\U00010428"}) == "E"  # Deseret, both cases in the text
    assert _cased("\U00010428", "e", {"\U00010428"}) == "e"


def test_the_warning_covers_a_script_the_script_table_does_not_list(unigram_model):
    import warnings

    from xlsent.encoding.readable import UnreadableTextWarning

    lisu = ["ꓞꓳ ꓘꓹ ꓠꓯꓹ ꓟ ꓙꓵ", "ꓡꓲ ꓢꓴ ꓐꓬ ꓟꓲ"] * 3  # Lisu: letters, but not of a listed script
    with pytest.warns(UnreadableTextWarning, match="texts: \\d+% of its pieces unknown"):
        xlsent.embed(lisu, model=str(unigram_model))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnreadableTextWarning)
        xlsent.embed(["1234 5678", "— … —"], model=str(unigram_model))  # no letters: no script to read


def test_a_script_newer_than_pythons_unicode_database_is_romanised_and_warned_about(unigram_model, tmp_path):
    """Kirat Rai (Unicode 16) reads as unassigned (``Cn``) to this Python, but anyascii knows its letters: they are
    romanised, and a text in it is warned about; a newer emoji (anyascii ``:name:``) still is not romanised."""
    import unicodedata

    from xlsent.encoding.readable import UnreadableTextWarning
    from xlsent.models.vocab.romanize import _script_character

    kirat = "".join(chr(0x16D43 + i) for i in range(6))  # KIRAT RAI LETTERs, Unicode 16
    if unicodedata.category(kirat[0]) != "Cn":
        pytest.skip("this Python's Unicode database already knows Kirat Rai")
    lines = [f"{kirat[:3]} {kirat[3:]} {kirat[1:4]}", f"{kirat[2:]} {kirat[:2]}"] * 3
    with pytest.warns(UnreadableTextWarning):
        xlsent.embed(lines, model=str(unigram_model))
    rom = xlsent.romanize(str(unigram_model), lines, tmp_path / "kirat")
    assert set(kirat) <= set(rom.table) and rom.unk_rate_after < rom.unk_rate_before
    assert not _script_character("\U0001FAE8")  # SHAKING FACE (Unicode 15): an emoji, left alone


def test_the_warning_quotes_the_shares_the_results_page_states():
    """The shares the warning names are the lowest and highest of each path's row in the results page's table (the
    benchmark's test read), and the message states them."""
    import re
    from pathlib import Path

    from xlsent.encoding.readable import REMEDIES, advice

    page = (Path(__file__).resolve().parents[1] / "docs" / "results.md").read_text(encoding="utf-8")
    section = page[page.index("{#unreadable-script}"):]
    rows = {"romanise + adapt": "`xlsent models romanize` + adapt", "extend-vocab + adapt":
            "`xlsent models extend-vocab` + adapt", "adapt alone": "| adapt alone |"}
    message = advice("e5-small")
    for name, (lo, hi) in REMEDIES:
        row = next(line for line in section.splitlines() if line.startswith("|") and rows[name] in line)
        shares = [int(x) / 100 for x in re.findall(r"(\d+)%", row)]
        assert shares and (min(shares), max(shares)) == (lo, hi), (name, row)
        assert f"{name} {lo:.0%}" in message and f"{hi:.0%}" in message


def test_a_romanised_folder_that_still_cannot_read_a_text_is_told_to_build_it_again(unigram_model, tmp_path):
    """A model that romanises already (a folder romanize wrote, or a model trained from one: the rules are in its
    tokenizer, the record may be gone), given text it still cannot read, is told to build it again from this text,
    --extend for what no romaniser knows — not to romanise the romanised folder, nor that training helps little."""
    import shutil
    import warnings

    from xlsent.encoding.readable import UnreadableTextWarning, advice, romanised_base, warn_unreadable

    f = tmp_path / "mixed.txt"
    f.write_text("\n".join(f"{t} {PRIVATE}" for t in NEW) + "\n", encoding="utf-8")
    xlsent.romanize(str(unigram_model), f, tmp_path / "a")
    assert romanised_base(str(tmp_path / "a")) == str(unigram_model) and romanised_base(str(unigram_model)) is None
    told = advice(str(tmp_path / "a"))
    assert "romanises already" in told and f"xlsent models romanize {unigram_model} --texts FILE -o DIR" in told
    assert "--extend" in told and "Romanise the script inside the model first" not in told
    trained = tmp_path / "run" / "model"  # a run folder whose model kept the tokenizer, not the record
    shutil.copytree(tmp_path / "a", trained)
    (trained / "xlsent_romanization.json").unlink()
    assert romanised_base(str(tmp_path / "run")) == "BASE" and "romanize BASE --texts" in advice(str(trained))
    with pytest.warns(UnreadableTextWarning) as got:
        warnings.simplefilter("always")
        warn_unreadable(lambda texts, lang: 0.5, [("texts", [PRIVATE * 3] * 3, None)], str(tmp_path / "a"))
    assert "helps little" not in str(got[0].message) and "romanises already" in str(got[0].message)
    assert "Romanise the script inside the model first" in advice(str(unigram_model))
