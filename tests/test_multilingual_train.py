"""Several languages at once (issue 51 §2): several training sources, temperature sampling over languages, a
held-out part drawn per language, and adapt trained on two sources."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from conftest import WORDS

TRAIN = {"on_bad_lines": "error", "min_words": 0, "max_words": 0, "special_pattern": "", "sample": 0}


def _pairs_file(path, header: str, n: int, seed: int, english_first: bool = True):
    """``n`` toy pairs (distinct texts) in TSV under a language header such as ``en\\tzu``."""
    rng = random.Random(seed)
    en, xx = WORDS[:12], WORDS[22:]
    rows, seen = [], set()
    while len(rows) < n:
        a, b = " ".join(rng.choice(en) for _ in range(6)), " ".join(rng.choice(xx) for _ in range(6))
        if a in seen:
            continue
        seen.add(a)
        rows.append(f"{a}\t{b}" if english_first else f"{b}\t{a}")
    path.write_text(header + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_several_sources_load_with_their_languages_and_per_source_notes(pairs_tsv, tmp_path):
    from xlsent.data.pairs import load_train_pairs

    zu = _pairs_file(tmp_path / "zu.tsv", "zu\ten", 20, 1, english_first=False)  # English on the other side
    spec = f"bible-en-ny:dev,{pairs_tsv}, {zu}"
    whole = load_train_pairs({**TRAIN, "pairs": spec, "sample": 30}, 0)  # train.sample: the bundled set only
    assert len(whole.english) == 30 + 40 + 20
    p = load_train_pairs({**TRAIN, "pairs": spec, "sample": 30, "sample_files": 30}, 0)  # and 30 of each file
    assert len(p.english) == len(p.other) == len(p.languages) == 30 + 30 + 20
    assert p.languages[:30] == ["nya"] * 30 and p.languages[30:60] == ["ny"] * 30 and p.languages[60:] == ["zu"] * 20
    assert [s["pairs"] for s in p.sources] == ["bible-en-ny:dev", str(pairs_tsv), str(zu)]
    assert p.sources[2]["examples"] == 20 and "zu" in p.sources[2]["languages"]
    # every source turned so that English is the same column: its English words are on the English side
    assert all(set(x.split()) <= set(WORDS[:12]) for x in p.english[60:])
    assert list(p.dataset["src_lang"][60:61]) == ["en"] and list(p.dataset["tgt_lang"][60:61]) == ["zu"]
    # cleaning, sampling and counts: each source's own lines, named by it
    assert "bible-en-ny:dev: sampled 30 of" in " ".join(p.notes)
    assert any(n.startswith(f"{pairs_tsv}: filter duplicates removed 0") for n in p.notes)
    assert any(n.startswith(f"{pairs_tsv}: sampled 30 of 40") for n in p.notes)
    assert f"{zu}: 20 pairs (zu/en)" in p.notes
    assert set(p.summary()["languages"]) >= {"eng", "nya", "ny", "zu"} and len(p.summary()["sources"]) == 3


def test_one_source_keeps_todays_pairs_and_summary(pairs_tsv):
    from xlsent.data.pairs import load_train_pairs

    p = load_train_pairs({**TRAIN, "pairs": str(pairs_tsv)}, 0)
    assert p.sources == [] and set(p.languages) == {"ny"} and len(p.english) == 40
    assert p.summary() == {"pairs": str(pairs_tsv), "examples": 40, "languages": ["en", "ny"], "notes": p.notes}


def test_a_moses_pair_stays_one_source_and_may_be_one_of_several(pairs_tsv, tmp_path):
    from xlsent.data.pairs import load_pairs, split_sources

    a, b = tmp_path / "c.en", tmp_path / "c.ny"
    a.write_text("god is good\nthe river is wide\n", encoding="utf-8")
    b.write_text("mulungu ndi wabwino\nmtsinje\n", encoding="utf-8")
    assert split_sources(f"{a},{b}") == [f"{a},{b}"]
    assert split_sources(f"{a},{b},{pairs_tsv},bible-en-ny:dev") == [f"{a},{b}", str(pairs_tsv), "bible-en-ny:dev"]
    assert len(load_pairs(f"{a},{b},{pairs_tsv}").dataset) == 42


@pytest.mark.parametrize("bad", ["/no/such.tsv", "bible-en-ny:nope"])
def test_a_bad_source_is_one_line_naming_it_before_any_model(pairs_tsv, bad):
    from xlsent.data.pairs import load_train_pairs
    from xlsent.recipes.config import load_config
    from xlsent.utils.errors import XlsentError

    spec = f"bible-en-ny:dev,{bad},{pairs_tsv}"
    with pytest.raises(XlsentError) as e:
        load_train_pairs({**TRAIN, "pairs": spec}, 0)
    assert "\n" not in str(e.value) and f"'{bad}'" in str(e.value)
    with pytest.raises(XlsentError) as e:  # the config check, before anything loads
        load_config("adapt", None, [f"train.pairs={spec}"])
    assert "\n" not in str(e.value) and "config train.pairs=" in str(e.value) and f"'{bad}' is no such" in str(e.value)


def test_the_config_takes_a_comma_list_and_a_temperature(pairs_tsv):
    from xlsent.recipes.config import load_config
    from xlsent.utils.errors import XlsentError

    cfg = load_config("adapt", None, [f"train.pairs=bible-en-ny:dev,{pairs_tsv}", "train.language_temperature=5"])
    assert cfg.train.pairs == f"bible-en-ny:dev,{pairs_tsv}" and cfg.train.language_temperature == 5.0
    assert load_config("adapt", None, []).train.language_temperature == 1.0
    with pytest.raises(XlsentError, match="language_temperature=0.*must be > 0"):
        load_config("adapt", None, ["train.language_temperature=0"])


def test_temperature_sampling_gives_the_stated_shares():
    from xlsent.data.mixing import epoch_counts, language_shares, temperature_rows

    langs = ["a"] * 800 + ["b"] * 200
    shares = language_shares({"a": 800, "b": 200}, 2.0)  # ∝ (0.8)^(1/2), (0.2)^(1/2): 2/3, 1/3
    assert shares == pytest.approx({"a": 2 / 3, "b": 1 / 3})
    assert language_shares({"a": 800, "b": 200}, 1.0) == pytest.approx({"a": 0.8, "b": 0.2})
    assert language_shares({"a": 800, "b": 200}, 1e6) == pytest.approx({"a": 0.5, "b": 0.5}, abs=1e-5)
    assert epoch_counts(langs, 2.0) == {"a": 667, "b": 333}
    rows = temperature_rows(langs, 2.0, seed=7)
    assert len(rows) == 1000 and np.all(np.diff(rows) >= 0)
    drawn = np.asarray(langs, dtype=object)[rows]
    assert (drawn == "a").sum() == 667 and (drawn == "b").sum() == 333
    assert len(set(rows[rows < 800].tolist())) == 667  # a: a sample without repeats
    b = np.bincount(rows[rows >= 800] - 800, minlength=200)
    assert b.min() == 1 and b.max() == 2  # b: every row once before any twice
    assert np.array_equal(rows, temperature_rows(langs, 2.0, seed=7))  # seeded
    assert not np.array_equal(rows, temperature_rows(langs, 2.0, seed=8))
    n = 10_000  # over many seeds' worth of rows, the shares hold for three languages too
    three = ["x"] * 6000 + ["y"] * 3000 + ["z"] * 1000
    got = np.bincount(np.searchsorted([6000, 9000], temperature_rows(three, 3.0, 0), side="right"), minlength=3) / n
    want = np.array([0.6, 0.3, 0.1]) ** (1 / 3)
    assert got == pytest.approx(want / want.sum(), abs=1e-4)


def test_one_language_or_temperature_one_keeps_todays_rows():
    from xlsent.data.mixing import temperature_rows
    from xlsent.recipes.adapt import split_holdout, split_holdout_by_language

    assert np.array_equal(temperature_rows(["ny"] * 50, 5.0, 3), np.arange(50))
    assert np.array_equal(temperature_rows(["a"] * 30 + ["b"] * 20, 1.0, 3), np.arange(50))
    for got, want in zip(split_holdout_by_language(["ny"] * 50, 10, 4), split_holdout(50, 10, 4)):
        assert np.array_equal(got, want)


def test_the_held_out_part_is_drawn_per_language():
    from xlsent.data.mixing import stratified_split

    langs = ["a"] * 80 + ["b"] * 15 + ["c"] * 4 + ["d"]
    train, held = stratified_split(langs, 10, seed=0)
    held_langs = [langs[i] for i in held]
    assert {k: held_langs.count(k) for k in "abcd"} == {"a": 8, "b": 2, "c": 0, "d": 0}  # shares 8, 1.5, .4, .1
    assert sorted(train.tolist() + held.tolist()) == list(range(100))
    assert np.array_equal(held, stratified_split(langs, 10, seed=0)[1])
    train, held = stratified_split(["a"] * 6 + ["b"] * 2, 6, seed=1)  # never more than half of a language
    assert len(held) == 4 and sum(i >= 6 for i in held) == 1


def test_held_out_scores_of_several_languages_take_any_translation_of_the_english(tiny_model):
    from sentence_transformers import SentenceTransformer

    from xlsent.recipes.adapt import _retrieval_scores, holdout_scores

    anchors = ["ny one", "zu one", "ny two"]  # the English of the first two pairs is the same text
    positives = ["english one", "english one", "english two"]
    sim = np.array([[0.9, 0.9, 0.1],    # xx query i (row) against English candidate j (column)
                    [0.8, 0.8, 0.1],
                    [0.1, 0.1, 0.9]])
    sim[1, 1] = 0.7  # English query 1 (column 1) is closest to "ny one", another language's translation of it
    one = _retrieval_scores(sim, anchors, positives)
    several = _retrieval_scores(sim, anchors, positives, several=True)
    assert one["xx2en"] == several["xx2en"] == 1.0
    assert one["en2xx"] == pytest.approx(2 / 3) and several["en2xx"] == 1.0
    st = SentenceTransformer(str(tiny_model), device="cpu")
    texts = ["mulungu ndi", "madzi kuwala", "dziko kumwamba", "chala nyumba"]
    english = ["god is good", "water light", "the river is wide", "the river"]
    assert holdout_scores(st, texts, english, ["ny"] * 4) == holdout_scores(st, texts, english)  # one language


def test_adapt_trains_on_two_sources_with_a_temperature(tiny_model, pairs_tsv, tmp_path):
    import xlsent

    zu = _pairs_file(tmp_path / "zu.tsv", "en\tzu", 16, 2)
    notes: list[str] = []
    settings = {"models.student": str(tiny_model), "optim.max_steps": 2, "optim.batch_size": 8,
                "train.holdout": 0.2, "train.holdout_min": 4, "train.sample": 0, "train.language_temperature": 3,
                "eval.udhr": False}
    run = xlsent.train("adapt", f"{pairs_tsv},{zu}", output=tmp_path / "run", settings=settings, device="cpu",
                       on_note=notes.append)
    assert run.model_path.exists() and run.metrics["recipe"] == "adapt"
    rec = json.loads((tmp_path / "run" / "stage.json").read_text())
    assert rec["steps"] == 2 and rec["language_temperature"] == 3.0 and rec["selection"]["history"]
    assert [s["pairs"] for s in rec["train_data"]["sources"]] == [str(pairs_tsv), str(zu)]
    held = [json.loads(x) for x in (tmp_path / "run" / "holdout.jsonl").read_text().splitlines()]
    # 40 : 16 pairs, 12 held out: shares 8.57 : 3.43 → 9 : 3
    assert [sum(h["tgt_lang"] == k for h in held) for k in ("ny", "zu")] == [9, 3]
    assert any(n.startswith("train.language_temperature=3: ") for n in notes)
    assert any(f"{zu}: 16 pairs (en/zu)" == n for n in notes)


def test_the_default_temperature_keeps_earlier_run_folders():
    from xlsent.training.run_folder import config_hash

    train = {"pairs": "bible-en-ny:train", "sample": 1000}
    assert config_hash({**train, "language_temperature": 1.0}) == config_hash(train)
    assert config_hash({**train, "language_temperature": 2.0}) != config_hash(train)
