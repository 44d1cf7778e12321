"""Noise filters for mined and aligned pairs (each on hand-made pairs), language codes and detection, and the
filters on the CLI (filter-pairs, mine)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xlsent.data.langid import detect, detect_side, language_code, pair_languages, script
from xlsent.data.noise_filters import apply_noise_filters, normalise, numbers
from xlsent.utils.errors import XlsentError

EN = ["And he went up into the mountain to pray with his disciples.",
      "Blessed are the poor in spirit, for theirs is the kingdom of heaven.",
      "The light shines in the darkness, and the darkness has not overcome it.",
      "Then the king said to his servants, bind him hand and foot.",
      "For God so loved the world that he gave his only son."]
NY = ["Ndipo anakwera m'phiri kukapemphera pamodzi ndi ophunzira ake.",
      "Odala ali osauka mumzimu, chifukwa uli wawo Ufumu wa Kumwamba.",
      "Ndipo kuunika kuwala mumdima, ndipo mdima sunachigonjetsa.",
      "Pamenepo mfumu inati kwa atumiki ake, mumange iye manja ndi mapazi.",
      "Pakuti Mulungu anakonda dziko lapansi kotero kuti anapatsa Mwana wake wobadwa yekha."]


def _removed(report, name):
    return next(f for f in report.filters if f.name == name)


def test_language_codes_detection_and_script():
    assert language_code("nya") == "ny" and language_code("en-GB") == "en" and language_code("ny") == "ny"
    with pytest.raises(XlsentError, match="--tgt-lang xx: not a known language code"):
        language_code("xx", "--tgt-lang")
    assert detect(EN[1]).lang == "en" and detect(EN[1]).reliable
    assert detect(NY[4]).lang == "ny"
    assert script("Привет, как дела?") == "CYRILLIC" and script("12, 34") is None
    side = detect_side(EN * 10)
    assert side.lang == "en" and side.share == 1.0
    (src, tgt), notes = pair_languages(NY * 10, EN * 10)
    assert (src, tgt) == ("ny", "en") and "source: detected ny" in notes[0]
    (src, tgt), notes = pair_languages(["1 2 3", "4 5 6"] * 5, EN * 2, ("", "eng"))
    assert src is None and tgt == "en" and "not detected" in notes[0] and "--src-lang" in notes[0]


def test_each_filter_on_hand_made_pairs():
    src = EN + [EN[0], EN[1], EN[2], "He fed 5000 men with 5 loaves.",
                "The king spoke to the servants and they bound him hand and foot.", "Hello there"]
    tgt = NY + [EN[0],  # English on the target side: language
                EN[1].upper().replace(",", ""),  # a copy of the source after normalisation: copy (language first: en)
                NY[2].lower() + "!",  # near-duplicate of pair 2
                "Anadyetsa amuna 4000 ndi mikate 5.",  # numbers differ
                NY[3][:12],  # cut: length ratio
                "Привет всем, как дела сегодня?"]  # Cyrillic on a Latin side: language (script)
    src, tgt = src + EN * 6, tgt + NY * 6  # enough pairs for the length ratio (the repeats are near-duplicates)
    keep, report = apply_noise_filters(src, tgt, ("en", "ny"), min_rows_for_ratio=5)
    assert keep[:5].all()
    lang = _removed(report, "language")
    assert lang.removed == 3 and (EN[0], EN[0]) in lang.examples  # English, the upper-case copy, Cyrillic
    assert not keep[[5, 6, 11]].any()
    assert _removed(report, "near-duplicate").removed == 1 + 30 and not keep[7]
    assert _removed(report, "numbers").removed == 1 and not keep[8]
    assert _removed(report, "length-ratio").removed == 1 and not keep[9]
    assert report.rows_in == len(src) and report.rows_out == int(keep.sum()) == 5
    # the copy filter on its own (the language filter off)
    keep, report = apply_noise_filters(src[:7], tgt[:7], filters=("copy",))
    assert _removed(report, "copy").removed == 2 and not keep[5] and not keep[6]
    d = report.to_dict()
    assert d["filters"][0]["examples"][0] == {"src": EN[0], "tgt": EN[0]}


def test_language_filter_keeps_lines_in_the_sides_own_words_and_says_what_it_cannot_confirm():
    # CLD2 takes a Chichewa list of names for another language; its words are the side's own, so it stays
    names = "ndi Hafaraimu, ndi Siyoni, ndi Anaharati ndi Mulungu ndi mfumu"
    src, tgt = EN * 4 + ["And Haphraim, and Shihon, and Anaharath,"], NY * 4 + [names]
    keep, report = apply_noise_filters(src, tgt, ("en", "ny"), filters=("language",))
    assert keep.all(), report.to_dict()
    # an undetectable declared language: only confident other languages go, and the note says so
    keep, report = apply_noise_filters(src + [EN[0]], tgt + [EN[1]], ("en", "tum"), filters=("language",))
    assert not keep[-1] and keep[:-1].all()
    assert any("(tum) is known to neither CLD2 nor the n-gram identifier" in n for n in report.notes)


def test_normalisation_and_numbers():
    assert normalise("Hello, World! 42") == "hello world"
    assert numbers("1,000 men and 5 loaves") == ["1000", "5"] == numbers("1000 amuna ndi 5")


def test_filter_pairs_cli_filters_auto_threshold_and_summary(tiny_model, tmp_path):
    from test_cli import xlsent

    pairs = tmp_path / "p.tsv"
    src = EN * 8 + ["Completely different words here now", EN[0]]
    tgt = [f"{t} {i}" if False else t for i, t in enumerate(NY * 8)] + ["Ndipo anati kwa iwo, tiyeni tipite", EN[0]]
    # make every pair distinct so that near-duplicates do not dominate: number the repeats in words
    words = "one two three four five six seven eight".split()
    src = [f"{s} {words[i // 5]}" if i < 40 else s for i, s in enumerate(src)]
    tgt = [f"{t} {words[i // 5]}" if i < 40 else t for i, t in enumerate(tgt)]
    pairs.write_text("".join(f"{a}\t{b}\n" for a, b in zip(src, tgt)), encoding="utf-8")
    out = tmp_path / "o.tsv"
    r = xlsent("data", "filter-pairs", str(pairs), "-o", str(out), "--top", "0", "--rank-by", "margin",
               "-m", str(tiny_model), "--threshold", "auto", "--min-words", "0")
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "o.tsv.json").read_text())
    assert summary["languages"] == {"src": "en", "tgt": "ny"}  # no codes in the file: detected, and said
    assert "source: detected en" in r.stdout
    lang = next(f for f in summary["noise_filters"]["filters"] if f["filter"] == "language")
    assert lang["removed"] == 1 and lang["examples"] == [{"src": EN[0], "tgt": EN[0]}]
    assert summary["threshold"] is not None and summary["kept"] == len(out.read_text().splitlines())
    r = xlsent("data", "filter-pairs", str(pairs), "-o", str(out), "--top", "0", "--rank-by", "cosine",
               "-m", str(tiny_model), "--filters", "none", "--min-words", "0")
    assert r.returncode == 0 and len(out.read_text().splitlines()) == len(src)
    for args, message in ((["--filters", "lang"], "unknown --filters 'lang'"), (["--tgt-lang", "xx"], "--tgt-lang xx"),
                          (["--threshold", "high"], "--threshold 'high': not a number")):
        r = xlsent("data", "filter-pairs", str(pairs), "-o", str(out), "-m", str(tmp_path / "none"), *args)
        assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


BN = ["আমি ভাত খাই এবং জল পান করি প্রতিদিন সকালে।", "আকাশ আজ খুব নীল এবং সুন্দর দেখাচ্ছে।",
      "শিশুরা মাঠে খেলছে আর পাখিরা গান গাইছে।", "নদীর ধারে একটি ছোট গ্রাম আছে।",
      "তিনি বইটি পড়ে খুব আনন্দ পেয়েছিলেন।"]


def test_a_file_without_codes_has_its_sides_detected_and_directions_labelled_right(tmp_path):
    """A Bengali<TAB>English file: the English side is the target, said in the notes; the report's xx→en column
    is bn→en (src→tgt), not the reverse; with undetectable sides the columns say src→tgt and tgt→src."""
    from xlsent.cli.common import summary_rows
    from xlsent.data.pairs import english_side, load_pairs, side_langs

    path = tmp_path / "bn-en.tsv"
    path.write_text("".join(f"{b}\t{e}\n" for b, e in zip(BN * 4, EN * 4)), encoding="utf-8")
    loaded = load_pairs(str(path), dedupe=False)
    assert side_langs(loaded.dataset) == ("bn", "en") and english_side(loaded.dataset) == ("src", "tgt")
    assert any("detected bn" in n for n in loaded.notes()) and any("detected en" in n for n in loaded.notes())
    metrics = {"models": {"m": {"retrieval": {"src_lang": "bn", "tgt_lang": "en", "src2tgt": {"p@1": 0.9},
                                              "tgt2src": {"p@1": 0.7}},
                                "triplets": {"accuracy": {"cosine": {"accuracy": 1.0}}}}}}
    row = summary_rows(metrics)[0]
    assert row["x2en"] == 0.9 and row["en2x"] == 0.7
    del metrics["models"]["m"]["retrieval"]["src_lang"], metrics["models"]["m"]["retrieval"]["tgt_lang"]
    row = summary_rows(metrics)[0]
    assert row["s2t"] == 0.9 and row["t2s"] == 0.7 and "x2en" not in row
    from xlsent.serve.index import read_entries  # a served index labels both sides with the detected codes

    assert {e.lang for e in read_entries(str(path))} == {"bn", "en"}
    codes = tmp_path / "codes.tsv"
    codes.write_text("xq1 zz2 9\tqq7 ww3 1\n" * 12, encoding="utf-8")
    loaded = load_pairs(str(codes), dedupe=False)
    assert side_langs(loaded.dataset) == ("", "") and any("not detected" in n for n in loaded.notes())


def test_a_language_no_identifier_knows_is_checked_against_its_own_vocabulary():
    """Tiv, to an identifier that knows neither it nor Southeast Ijo, with a paragraph of Ijo (same script) mixed
    in: the stranger goes, every Tiv paragraph stays; a side written without repeated words is not judged."""
    from xlsent.data.bundled import load_bundled
    from xlsent.data.identify import NgramIdentifier

    udhr = load_bundled("udhr-all:dev:tiv"), load_bundled("udhr-all:dev:ijs")
    (tiv_en, tiv), (_, ijs) = [(list(p["src"]), list(p["tgt"])) for p in udhr]
    stranger = max(ijs, key=len)
    src, tgt = tiv_en + [tiv_en[5]], tiv + [stranger]
    english = NgramIdentifier.learn({"eng": tiv_en})
    keep, report = apply_noise_filters(src, tgt, ("en", "tiv"), filters=("language",), identifier=english)
    assert not keep[-1] and keep[:-1].all(), report.to_dict()
    assert any("(tiv) is known to neither" in n for n in report.notes)
    assert any("share almost none of its own words are removed (1)" in n for n in report.notes)
    # words that never repeat (one token per line): the median share is low, so nothing is judged
    tgt = [f"w{i}a w{i}b w{i}c w{i}d w{i}e w{i}f" for i in range(len(src))]
    keep, _ = apply_noise_filters(src, tgt, ("en", "tiv"), filters=("language",), identifier=english)
    assert keep.all()


def test_a_language_cld2_does_not_know_is_judged_by_the_ngram_identifier(tmp_path):
    """Tiv (unknown to CLD2, known to the bundled n-gram identifier) with Ijo and English targets mixed in: both go,
    every Tiv paragraph stays, and the notes say which identifier judged each side. A language relearned from the
    user's own text (Tiv from its first 20 paragraphs) is judged the same way."""
    from xlsent.data.bundled import load_bundled
    from xlsent.data.identify import identifier_with

    udhr = load_bundled("udhr-all:dev:tiv"), load_bundled("udhr-all:dev:ijs")
    (tiv_en, tiv), (_, ijs) = [(list(p["src"]), list(p["tgt"])) for p in udhr]
    src, tgt = tiv_en + tiv_en[5:7], tiv + [max(ijs, key=len), tiv_en[6]]
    keep, report = apply_noise_filters(src, tgt, ("en", "tiv"), filters=("language",))
    assert not keep[-2:].any() and keep[:-2].all(), report.to_dict()
    assert any("target's language (tiv) judged by the n-gram identifier" in n for n in report.notes)
    assert any("source's language (en) judged by CLD2" in n for n in report.notes)
    assert report.removed_by[-2:] == ["language", "language"] and report.removed_by[0] is None
    mono = tmp_path / "mine.txt"
    mono.write_text("\n".join(tiv[:20]), encoding="utf-8")
    taught = identifier_with({"tiv": mono})
    assert taught.totals[taught.languages.index("tiv")] < identifier_with().totals[taught.languages.index("tiv")]
    keep, report = apply_noise_filters(src, tgt, ("en", "tiv"), filters=("language",), identifier=taught)
    assert not keep[-2:].any() and keep[:-2].all(), report.to_dict()
    assert any("(tiv) judged by the n-gram identifier" in n for n in report.notes)


def test_a_target_cut_off_in_mid_sentence_goes_and_a_short_true_verse_stays():
    from xlsent.data.bundled import load_bundled

    ds = load_bundled("bible-en-ny:dev").select(range(200))
    src, tgt = list(ds["src"]), list(ds["tgt"])
    i = next(k for k, (s, t) in enumerate(zip(src, tgt)) if s.endswith(".") and len(t.split()) > 12)
    words = tgt[i].split()
    tgt[i] = " ".join(words[: len(words) // 2]).rstrip(",;:")  # half a sentence: inside 4 robust SDs, cut off
    # a true short pair whose target is short but ends its sentence, and one ending in a comma (verse boundaries)
    src += ["Jesus wept.", "And Joshua said unto the people,"]
    tgt += ["Yesu analira.", "Ndipo Yoswa anati kwa anthu,"]
    keep, report = apply_noise_filters(src, tgt, ("en", "ny"), filters=("length-ratio",), max_z=100)
    assert not keep[i] and keep[-2:].all()
    assert _removed(report, "length-ratio").removed >= 1 and "cut off" in _removed(report, "length-ratio").why
    # a file whose targets carry no punctuation (a script or style without it): nothing is judged cut off
    bare = [t.rstrip(".,;:!?\"'") for t in tgt]
    keep, _ = apply_noise_filters(src, bare, ("en", "ny"), filters=("length-ratio",), max_z=100)
    assert keep.all()
