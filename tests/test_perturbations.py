"""Paper 004's perturbations on hand-made BIO files, overlap measures and the statistics of Table 3.6."""

from __future__ import annotations

import json

import numpy as np
import pytest

from xlsent.data.conll import TaggedCorpus, read_conll, write_conll
from xlsent.perturbations.context import copy_case, p4_context
from xlsent.perturbations.entities import p1_given_names, p2_places, p3_shared_entities
from xlsent.perturbations.overlap import entity_overlap
from xlsent.perturbations.suite import PerturbInputs, perturb, write_perturbed


def corpus(rows: list[str]) -> TaggedCorpus:
    """'Yesu/B-PER anapita ku Yerusalemu/B-LOC' → tokens and tags (untagged words are O)."""
    toks, tags = [], []
    for r in rows:
        t, y = [], []
        for w in r.split():
            word, _, tag = w.partition("/")
            t.append(word)
            y.append(tag or "O")
        toks.append(t)
        tags.append(y)
    return TaggedCorpus(toks, tags, list(range(len(toks))), "hand")


TEST = corpus([
    "Yesu/B-PER Khristu/I-PER anapita ku Yerusalemu/B-LOC",
    "Petro/B-PER anaona Mulungu madzi ku Galileya/B-LOC",
    "Yerusalemu/B-LOC ndi Betelehemu/B-LOC Nyanja/I-LOC",
    "MADZI Anaona nyumba",
])
TRAIN = corpus([
    "Yerusalemu/B-LOC anaona madzi",
    "Petro/B-PER anaona nyumba ya Davide/B-PER",
])


def test_p1_replaces_given_names_and_keeps_the_rest_of_the_entity():
    out = p1_given_names(TEST, ["Maria Magdalena", "Yohane"], seed=0)
    for i in range(len(TEST.tokens)):
        if i in (0, 1):
            assert out.tokens[i][0] in ("Maria", "Yohane")
        else:
            assert out.tokens[i] == TEST.tokens[i] and out.tags[i] == TEST.tags[i]
    first = out.tokens[0]
    k = len(first) - len(TEST.tokens[0])  # a two-token name adds one token
    assert out.tokens[0][1 + k:] == ["Khristu", "anapita", "ku", "Yerusalemu"]
    assert out.tags[0][: 2 + k] == ["B-PER"] + ["I-PER"] * (1 + k)
    assert len(out.replacements) == 2 and out.counts == {"PER entities": 2}


def test_p2_replaces_whole_places_with_b_i_retagging():
    out = p2_places(TEST, [["Nyanja", "ya", "Mchere"]], seed=1)
    assert out.tokens[2] == ["Nyanja", "ya", "Mchere", "ndi", "Nyanja", "ya", "Mchere"]
    assert out.tags[2] == ["B-LOC", "I-LOC", "I-LOC", "O", "B-LOC", "I-LOC", "I-LOC"]
    assert out.tokens[3] == TEST.tokens[3]
    assert len(out.replacements) == 4


def test_p3_fixed_mapping_of_shared_entities_to_test_only_ones():
    out = p3_shared_entities(TEST, TRAIN, seed=0)
    # shared with training: LOC Yerusalemu, PER Petro; test-only: PER "Yesu Khristu"; LOC Galileya, "Betelehemu Nyanja"
    assert set(out.mapping) == {"LOC:Yerusalemu", "PER:Petro"}
    assert out.mapping["PER:Petro"] == "Yesu Khristu"
    new_loc = out.mapping["LOC:Yerusalemu"].split()
    assert out.tokens[0][-len(new_loc):] == new_loc and out.tokens[2][: len(new_loc)] == new_loc  # same both times
    assert out.tokens[1][:3] == ["Yesu", "Khristu", "anaona"] and out.tags[1][:3] == ["B-PER", "I-PER", "O"]
    assert out.counts["occurrences replaced"] == 3 and out.counts["left: no test-only entity of the label"] == 0
    assert TRAIN.tokens[0] == ["Yerusalemu", "anaona", "madzi"]  # the training side is never touched


def _embed(words):
    """Hand-made vectors: 'madzi' is closest to 'mvula', 'anaona' to 'anapenya', 'nyumba' to 'khomo'."""
    table = {"madzi": [1, 0, 0], "mvula": [0.9, 0.1, 0], "anaona": [0, 1, 0], "anapenya": [0.1, 0.9, 0],
             "nyumba": [0, 0, 1], "khomo": [0, 0.1, 0.9], "anapita": [0.5, 0.5, 0.5], "mulungu": [0.6, 0.6, 0.1]}
    v = np.array([table.get(w, [0.3, 0.3, 0.3]) for w in words], dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_p4_most_similar_test_only_word_with_capitalisation():
    test = corpus([*[" ".join(t + "/" + y for t, y in zip(a, b)) for a, b in zip(TEST.tokens, TEST.tags)],
                   "mvula anapenya khomo"])
    out = p4_context(test, TRAIN, frozenset({"ku", "ndi"}), _embed, seed=0)
    # common (O in both, not stop words, > 1 char, letters): anaona, madzi, nyumba
    assert out.mapping == {"anaona": "anapenya", "madzi": "mvula", "nyumba": "khomo"}
    assert out.tokens[3] == ["MVULA", "Anapenya", "khomo"]  # all-caps and capitalised copied
    assert out.tokens[0] == test.tokens[0]  # no common O word there; entities never touched
    assert out.tags == test.tags
    assert all("cosine" in r for r in out.replacements)
    assert copy_case("Madzi", "mvula") == "Mvula" and copy_case("m", "x") == "x"


def test_p4_random_control_is_seeded_and_draws_from_test_only_words():
    a = p4_context(TEST, TRAIN, frozenset(), None, seed=3, random_control=True)
    b = p4_context(TEST, TRAIN, frozenset(), None, seed=3, random_control=True)
    assert a.mapping == b.mapping and a.tokens == b.tokens
    test_only = {"anapita", "ku", "mulungu", "ndi"}
    assert set(a.mapping.values()) <= test_only


def test_p5_is_p3_then_p4_and_files_and_log(tmp_path):
    inp = PerturbInputs(TEST, TRAIN, None, stopwords=frozenset({"ku", "ndi"}), stopwords_note="hand")
    inp.embed = _embed  # type: ignore[method-assign]
    p3 = perturb("P3", inp, 0)
    p5 = perturb("P5", inp, 0)
    p4_on_p3 = p4_context(p3.corpus(), TRAIN, inp.stopwords, _embed, 0, base=TEST)
    assert p5.tokens == p4_on_p3.tokens and p5.tags == p3.tags
    assert {r["step"] for r in p5.replacements} == {"P3", "P4"}
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    write_perturbed(p5, tmp_path / "P5.conll", inp, 0)
    assert read_conll(tmp_path / "P5.conll").tokens == p5.tokens
    log = json.loads((tmp_path / "P5.conll.json").read_text())
    assert log["perturbation"] == "P5" and log["mapping"]["P3"] == p3.mapping and log["replacements"]
    assert set(tmp_path.iterdir()) - set(before) == {tmp_path / "P5.conll", tmp_path / "P5.conll.json"}


def test_entity_overlap_table_3_3_measure():
    ov = entity_overlap(TRAIN, TEST)
    # test entity tokens: Yesu Khristu Yerusalemu Petro Galileya Yerusalemu Betelehemu Nyanja = 8; shared (word,label):
    # Yerusalemu/LOC ×2, Petro/PER → 3
    assert ov["entity_tokens"] == 8 and ov["entity_token_overlap"] == pytest.approx(3 / 8)
    assert ov["distinct_entities_shared"] == pytest.approx(2 / 5)


def test_t_test_reproduces_table_3_6_from_table_3_5():
    """mBERT transfer, P3: the 13 L1→L2 rows of Table 3.5 give p = 0.0013 and mean ΔF1 −2.72 (Table 3.6)."""
    from scipy.stats import ttest_rel

    from xlsent.evaluation.adversarial import t_test

    base = [67.2, 45.0, 82.9, 81.2, 78.3, 62.5, 74.3, 83.9, 68.7, 63.7, 88.0, 90.4, 85.1]
    p3 = [67.2, 45.0, 78.4, 78.4, 71.0, 61.3, 73.3, 83.5, 64.8, 58.4, 85.4, 85.1, 84.0]
    p = t_test(base, p3)
    assert p == pytest.approx(ttest_rel(p3, base).pvalue) and round(p, 4) == 0.0013
    assert np.mean(np.subtract(p3, base)) == pytest.approx(-2.72, abs=0.005)


def test_effects_and_paired_bootstrap_on_hand_predictions():
    from xlsent.evaluation.adversarial import RunScores, effects
    from xlsent.evaluation.tagging import paired_bootstrap

    gold = [["B-PER", "O"], ["B-LOC", "O"], ["O", "B-PER"], ["B-ORG", "O"]] * 5
    good = [list(g) for g in gold]
    worse = [list(g) if i % 2 else ["O"] * 2 for i, g in enumerate(gold)]
    runs = [RunScores("x-y", "native", s, {"base": gold, "P3": gold}, {"base": good, "P3": worse}) for s in range(3)]
    (e,) = effects(runs, "ner", bootstrap=200)
    assert e.delta == pytest.approx(100 * (2 * 10 / 30 - 1))  # F1 1.0 → 2·10/(10+20)
    assert e.t_p == 0.0 and e.boot_ci[1] < 0 and e.boot_p == 0.0
    pb = paired_bootstrap("ner", gold, good, worse, bootstrap=200)
    assert pb.delta == pytest.approx(e.delta / 100) and pb.p == 0.0


def test_tagging_scores_equal_seqeval():
    from seqeval.metrics import f1_score

    from xlsent.evaluation.tagging import score

    rng = np.random.default_rng(0)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG"]
    gold = [list(rng.choice(tags, size=rng.integers(1, 9))) for _ in range(200)]
    pred = [[t if rng.random() < 0.7 else str(rng.choice(tags)) for t in g] for g in gold]
    s = score("ner", gold, pred, bootstrap=100)
    assert s.metrics["micro_f1"]["value"] == pytest.approx(f1_score(gold, pred))
    assert s.metrics["macro_f1"]["value"] == pytest.approx(f1_score(gold, pred, average="macro"))
    lo, hi = s.metrics["micro_f1"]["ci95"]
    assert lo < s.metrics["micro_f1"]["value"] < hi
    pos = score("pos", [["NOUN", "_", "VERB"]], [["NOUN", "NOUN", "NOUN"]], bootstrap=0)
    assert pos.metrics["accuracy"]["value"] == 0.5 and pos.per_label["VERB"]["accuracy"] == 0.0


def test_perturb_cli_writes_copy_and_log_and_never_touches_training(tmp_path):
    from typer.testing import CliRunner

    from xlsent.cli.main import app

    write_conll(tmp_path / "test.conll", TEST.tokens, TEST.tags)
    write_conll(tmp_path / "train.conll", TRAIN.tokens, TRAIN.tags)
    before = (tmp_path / "train.conll").read_bytes()
    r = CliRunner().invoke(app, ["perturb", "--test", str(tmp_path / "test.conll"), "--train",
                                 str(tmp_path / "train.conll"), "-p", "P3", "-o", str(tmp_path / "p3.conll"),
                                 "--lang", "ny"])  # P3 replaces entities: stop words do not apply
    assert r.exit_code != 0 and "apply to P4, P5 and P4-random" in str(r.exception or r.output)
    r = CliRunner().invoke(app, ["perturb", "--test", str(tmp_path / "test.conll"), "--train",
                                 str(tmp_path / "train.conll"), "-p", "P3", "-o", str(tmp_path / "p3.conll")])
    assert r.exit_code == 0, r.output  # no --lang asked for: the test file's name gives no language
    assert json.loads((tmp_path / "p3.conll.json").read_text())["counts"]["mapped"] == 2
    assert (tmp_path / "train.conll").read_bytes() == before
    r = CliRunner().invoke(app, ["perturb", "--test", str(tmp_path / "test.conll"), "--train",
                                 str(tmp_path / "train.conll"), "-p", "P9", "-o", str(tmp_path / "x.conll")])
    assert r.exit_code != 0 and "unknown --perturbation 'P9'" in str(r.exception or r.output)


def test_data_overlap_cli(tmp_path, tiny_model):
    from typer.testing import CliRunner

    from xlsent.cli.main import app

    write_conll(tmp_path / "test.conll", TEST.tokens, TEST.tags)
    write_conll(tmp_path / "train.conll", TRAIN.tokens, TRAIN.tags)
    r = CliRunner().invoke(app, ["data", "overlap", "--train", str(tmp_path / "train.conll"), "--test",
                                 str(tmp_path / "test.conll"), "-m", str(tiny_model), "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    out = json.loads(r.output)
    assert out["entity"]["entity_token_overlap"] == pytest.approx(3 / 8) and 0 < out["word"]["piece_overlap"] <= 1
