"""The character n-gram language identifier (issue 61): learned from text, judged among candidates, saved, extended."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.data.identify import NgramIdentifier

TEXTS = {
    "eng": ["All human beings are born free and equal in dignity and rights.",
            "Everyone has the right to life, liberty and security of person.",
            "No one shall be held in slavery or servitude."],
    "nya": ["Anthu onse amabadwa aufulu ndiponso ofanana mu ulemu ndi ufulu wawo.",
            "Munthu aliyense ali ndi ufulu wokhala ndi moyo, ufulu ndi chitetezo.",
            "Palibe munthu amene adzasungidwa mu ukapolo."],
    "fra": ["Tous les êtres humains naissent libres et égaux en dignité et en droits.",
            "Tout individu a droit à la vie, à la liberté et à la sûreté de sa personne.",
            "Nul ne sera tenu en esclavage ni en servitude."],
}


def test_each_language_is_told_from_the_others_on_unseen_sentences():
    m = NgramIdentifier.learn(TEXTS)
    got = m.identify(["the right to liberty of everyone", "ufulu wa munthu aliyense",
                      "la liberté de tout individu", "1234 —"])
    assert [x.lang for x in got] == ["eng", "nya", "fra", None]
    assert all(0.5 < x.score <= 1.0 for x in got[:3]) and got[3].score == 0.0


def test_the_scores_are_naive_bayes_over_the_stored_counts():
    """One language's log-likelihood per n-gram, computed by hand from its counts, equals the model's."""
    m = NgramIdentifier.learn(TEXTS)
    text = "dignity and liberté"
    names, s = m.scores([text])
    grams = m._analyze(text)
    counts = m.language_counts()
    v = len(m.vocabulary)
    for lang in ("eng", "fra"):
        n = sum(counts[lang].values())
        by_hand = np.mean([np.log((counts[lang].get(g, 0) + m.alpha) / (n + m.alpha * v)) for g in grams])
        assert s[0, names.index(lang)] == pytest.approx(by_hand, rel=1e-5)


def test_candidates_restrict_the_answer_and_its_share():
    m = NgramIdentifier.learn(TEXTS)
    english = "Everyone has the right to dignity."
    assert m.identify([english])[0].lang == "eng"
    only = m.identify([english], languages=["nya", "fra", "xyz"])[0]  # an unknown candidate is ignored
    assert only.lang in {"nya", "fra"}
    with pytest.raises(ValueError, match="none of the candidate languages"):
        m.identify([english], languages=["xyz"])


def test_a_saved_model_reads_back_and_a_users_language_is_added(tmp_path):
    m = NgramIdentifier.learn(TEXTS)
    path = m.save(tmp_path / "lid.npz")
    back = NgramIdentifier.load(path)
    assert back.languages == m.languages and back.vocabulary == m.vocabulary
    a, b = m.scores(["ufulu ndi liberté"])[1], back.scores(["ufulu ndi liberté"])[1]
    assert np.allclose(a, b)
    swahili = ["Watu wote wamezaliwa huru, hadhi na haki zao ni sawa.",
               "Kila mtu ana haki ya kuishi, haki ya uhuru na usalama wa nafsi yake."]
    grown = back.extend({"swh": swahili})
    assert grown.languages == ["eng", "nya", "fra", "swh"]
    assert grown.identify(["kila mtu ana haki ya uhuru"])[0].lang == "swh"
    assert grown.language_counts()["eng"] == m.language_counts()["eng"]  # the others' counts kept exactly
    with pytest.raises(ValueError, match="no text to learn from for xx"):
        back.extend({"xx": ["", "   "]})


def test_min_count_prunes_rare_ngrams_but_keeps_each_languages_total():
    m = NgramIdentifier.learn(TEXTS)
    pruned = NgramIdentifier.learn(TEXTS, min_count=2)
    assert len(pruned.vocabulary) < len(m.vocabulary)
    assert pruned.totals.tolist() == m.totals.tolist()
    assert [x.lang for x in pruned.identify(["the right to liberty", "ufulu wa munthu"])] == ["eng", "nya"]


def test_the_bundled_identifier_knows_every_udhr_language_and_tells_held_out_articles_apart():
    """The shipped model learned from the UDHR's training articles only: on the development articles of a few
    languages of different scripts and families it names the language. It knows every udhr-all language but the
    one declaration that is another's text word for word (ckb, the kmr text)."""
    import xlsent
    from xlsent.data.bundled import load_bundled
    from xlsent.data.identify import NOT_LEARNED, bundled_identifier, udhr_texts

    model = bundled_identifier()
    dev = udhr_texts("dev")
    every = set(load_bundled("udhr-all")["tgt_lang"]) | {"eng"}
    assert set(model.languages) == every - set(NOT_LEARNED) and len(model.languages) == 445
    assert set(dev) == set(model.languages)  # every language it knows has development articles held out
    for lang in ("nya", "swh", "rus", "hin", "ell", "tam", "yor", "kat"):
        got = xlsent.identify(dev[lang][:3])
        assert sum(x.lang == lang for x in got) >= 2, (lang, got)
    hrv = xlsent.identify(["Svi ljudi se rađaju slobodni i jednaki u dostojanstvu i pravima."],
                          languages=["hr", "srp", "bos"])[0]
    assert hrv.lang in {"hrv", "srp", "bos"} and hrv.macrolanguage == "hbs" and 0 < hrv.score <= 1


def test_the_bundled_score_is_modest_for_a_word_and_near_one_for_a_paragraph():
    """The score is a softmax of whole-line log-likelihoods at the fitted temperature: a short word is weak evidence
    among 445 languages (a per-n-gram softmax gave "hello world" 0.99 for Nigerian Pidgin), a paragraph is not."""
    import xlsent
    from xlsent.data.identify import udhr_texts

    paragraph = max(udhr_texts("dev")["nya"], key=len)
    word, long = xlsent.identify([min(paragraph.split()[:10], key=len), paragraph])  # "ndi": and, with
    assert long.lang == "nya" and long.score > 0.99
    assert word.score < 0.9 and xlsent.identify(["hello world"])[0].score < 0.9


def test_identify_learns_a_users_language_and_refuses_bad_input_in_one_line(tmp_path):
    import xlsent
    from xlsent.utils.errors import XlsentError

    rng = np.random.default_rng(0)
    syllables = ["zqu", "vex", "qo", "xil", "jzu", "kvo"]  # a made-up language no bundled one resembles

    def sentence() -> str:
        return " ".join("".join(rng.choice(syllables, 2)) for _ in range(6))

    mine = tmp_path / "mine.txt"
    mine.write_text("\n".join(sentence() for _ in range(30)) + "\n", encoding="utf-8")
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("façade élan".encode("latin-1"))
    got = xlsent.identify([sentence(), "All human beings are born free"], learn={"qaa": mine})
    assert [x.lang for x in got] == ["qaa", "eng"]
    for kwargs, message in (({"languages": ["xx"]}, "not a language code"),
                            ({"languages": ["qab"]}, "qab is not a language the identifier knows"),
                            ({"learn": {"qaa": tmp_path / "nope.txt"}}, "no such file"),
                            ({"learn": {"1x": mine}}, "not a language code"),
                            ({"learn": {"qaa": latin1}}, "cannot be read as UTF-8 text"),
                            ({"learn": {"ny": mine, "nya": mine}}, "nya is taught twice")):
        with pytest.raises(XlsentError, match=message):
            xlsent.identify(["text"], **kwargs)
    assert xlsent.identify([sentence()], learn=[f"qaa:{mine}"])[0].lang == "qaa"  # the CLI's L:FILE form too
    pairs = tmp_path / "p.tsv"
    pairs.write_text("0.9\tThe cat sleeps.\tMphaka akugona.\n", encoding="utf-8")
    with pytest.raises(XlsentError, match="teaches the language filter, which is off"):
        xlsent.filter_pairs(pairs, rank_by="score", filters="none", learn={"qaa": mine})


def test_the_langid_command_prints_a_tsv_and_writes_a_file(tmp_path):
    from test_cli import xlsent as run_cli

    texts = tmp_path / "t.txt"
    texts.write_text("Anthu onse amabadwa aufulu ndiponso ofanana\n\nAll human beings are born free and equal\n",
                     encoding="utf-8")
    p = run_cli("data", "langid", str(texts))
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [r.split("\t") for r in p.stdout.splitlines()]
    assert [r[0] for r in rows] == ["nya", "", "eng"] and rows[1][2] == "0.000"
    out = tmp_path / "t.tsv"
    p = run_cli("data", "langid", str(texts), "--languages", "ny,en", "-o", str(out))
    assert p.returncode == 0 and "wrote" in p.stdout and out.read_text(encoding="utf-8").startswith("nya\t")
    bad = run_cli("data", "langid", str(texts), "--learn", "zz")
    assert bad.returncode == 2 and "give L:FILE" in bad.stderr and "Traceback" not in bad.stderr
    odd = tmp_path / "odd.txt"
    odd.write_text("Anthu onse\u2028amabadwa aufulu\r\nAll human beings\rare born free\n", encoding="utf-8")
    p = run_cli("data", "langid", str(odd))
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 2, p.stdout  # a row a line of the file
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Anthu onse\ncafé olé\n".encode("latin-1"))
    bad = run_cli("data", "langid", str(latin1))
    assert bad.returncode == 2 and f"{latin1}:2: invalid UTF-8" in bad.stderr and "Traceback" not in bad.stderr


def test_filter_pairs_learns_a_users_language_and_says_who_judged_each_side(tmp_path):
    """``xlsent data filter-pairs --learn qaa:FILE --tgt-lang qaa``: a made-up language taught from monolingual text
    is judged by the n-gram identifier (the English line among its targets goes, and the summary says so); a bad
    --learn is one line before anything loads."""
    import json

    from test_cli import xlsent as run_cli

    rng = np.random.default_rng(1)
    syllables = ["zqu", "vex", "qo", "xil", "jzu", "kvo"]

    def sentence() -> str:
        return " ".join("".join(rng.choice(syllables, 2)) for _ in range(6)) + "."

    mono = tmp_path / "mono.txt"
    mono.write_text("\n".join(sentence() for _ in range(40)) + "\n", encoding="utf-8")
    english = [f"Everyone has the right number {w} to life, liberty and the security of person." for w in
               "one two three four five six seven eight nine ten eleven twelve".split()]
    targets = [sentence() for _ in english[:-1]] + ["All human beings are born free and equal in dignity and rights."]
    pairs = tmp_path / "p.tsv"
    pairs.write_text("".join(f"0.9\t{s}\t{t}\n" for s, t in zip(english, targets)), encoding="utf-8")
    out = tmp_path / "o.tsv"
    p = run_cli("data", "filter-pairs", str(pairs), "-o", str(out), "--rank-by", "score", "--filters", "language",
                "--src-lang", "en", "--tgt-lang", "qaa", "--learn", f"qaa:{mono}")
    assert p.returncode == 0, p.stderr[-2000:]
    summary = json.loads(out.with_name(out.name + ".json").read_text(encoding="utf-8"))
    assert len(out.read_text(encoding="utf-8").splitlines()) == len(english) - 1
    notes = " ".join(summary["notes"])
    assert "target's language (qaa) judged by the n-gram identifier" in notes and "(en) judged by CLD2" in notes
    bad = run_cli("data", "filter-pairs", str(pairs), "-o", str(out), "--rank-by", "score", "--learn", "qaa")
    assert bad.returncode == 2 and "give L:FILE" in bad.stderr and "Traceback" not in bad.stderr


def test_languages_only_cld2_knows_are_answered_as_cld2_reads_them():
    """No bundled text teaches the model Oriya, Sindhi, Bashkir…: a line CLD2 reliably reads as one of them gets
    CLD2's answer; the model's languages keep the model's (CLD2's Filipino is the model's Tagalog)."""
    import xlsent
    from xlsent.data.identify import bundled_identifier, cld2_only

    only = cld2_only(bundled_identifier())
    assert {"ori", "snd", "bak", "asm", "vol"} <= only and not only & set(bundled_identifier().languages)
    assert "fil" not in only and "tgl" in bundled_identifier().languages
    oriya = "ସମସ୍ତ ମନୁଷ୍ୟ ଜନ୍ମକାଳରୁ ସ୍ୱାଧୀନ। ସେମାନଙ୍କର ମର୍ଯ୍ୟାଦା ଓ ଅଧିକାର ସମାନ।"
    got = xlsent.identify([oriya, "Aliyense ali ndi ufulu wokhala ndi moyo"])
    assert [x.lang for x in got] == ["ori", "nya"] and 0 < got[0].score <= 1
    assert xlsent.identify([oriya], languages=["or", "ny"])[0].lang == "ori"
    assert xlsent.identify(["Aliyense ali ndi ufulu"], languages=["or", "ny"])[0].lang == "nya"
    assert xlsent.identify(["Aliyense ali ndi ufulu"], languages=["or"])[0].lang is None  # CLD2 read no candidate
    assert xlsent.identify(["Lahat ng tao ay isinilang na malaya"], languages=["fil"])[0].lang == "tgl"
    from xlsent.data.identify import identify_texts
    from xlsent.utils.errors import XlsentError

    assert identify_texts(bundled_identifier(), ["Aliyense ali ndi ufulu"], ["ny"])[0].lang == "nya"  # 639-1 too
    with pytest.raises(ValueError, match="none of the candidate languages"):
        identify_texts(bundled_identifier(), ["x"], ["xyz"])
    with pytest.raises(XlsentError, match="no candidate given"):
        xlsent.identify(["x"], languages=[])
