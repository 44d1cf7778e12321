"""``xlsent train bootstrap`` / ``xlsent.bootstrap``: a few seed pairs and plain text → rounds of mining, cleaning and
retraining, stopped by held-out pairs retrieved in a hard pool. Tiny random models; one slow test on the default."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import WORDS

import xlsent
from xlsent.evaluation.pool import pool_retrieval
from xlsent.recipes.bootstrap import beats, split_seed, BootstrapSettings

FAST = {"optim.max_steps": 2, "optim.batch_size": 8}


def _copies(tmp: Path, seed_n: int = 30, hidden: int = 60, other: int = 40, seed: int = 0) -> dict:
    """A corpus where a "translation" is the same text: identical texts embed identically, so even a random model
    mines every hidden pair (and the seed's own sentences, put in the plain text too)."""
    rng = random.Random(seed)
    sents = list(dict.fromkeys(" ".join(rng.choice(WORDS) for _ in range(7)) for _ in range(20 * (seed_n + hidden + 2 * other))))
    s, h = sents[:seed_n], sents[seed_n:seed_n + hidden]
    a_only = sents[seed_n + hidden:seed_n + hidden + other]
    b_only = sents[seed_n + hidden + other:seed_n + hidden + 2 * other]
    src, tgt = h + a_only + s, h + b_only[:other // 2] + s  # sides of different sizes: each pool is its own side's
    rng.shuffle(src)
    rng.shuffle(tgt)
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "seed.tsv").write_text("".join(f"{x}\t{x}\n" for x in s), encoding="utf-8")
    (tmp / "src.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp / "tgt.txt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    return {"seed": s, "hidden": set(h), "folder": tmp}


def _run(data: dict, out: Path, model: Path, **kw):
    notes: list[str] = []
    kw.setdefault("settings", FAST)
    kw.setdefault("filters", "none")
    res = xlsent.bootstrap(data["folder"] / "seed.tsv", data["folder"] / "src.txt", data["folder"] / "tgt.txt", out,
                           model=str(model), on_note=notes.append, **kw)
    return res, notes


def _pairs(path: Path) -> list[tuple[float, str, str]]:
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [(float(a), b, c) for a, b, c in rows]


# ---------------------------------------------------------------------------------------------- the hard pool


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_the_hard_pool_finds_what_a_small_pool_hides():
    """Held-out pairs retrieved among themselves are all right; among plain lines closer to the queries than their
    golds, they are wrong — the difference the stop rule needs. A pool line of the gold's own text is no error."""
    rng = np.random.default_rng(0)
    src = _unit(rng.standard_normal((10, 16)))
    tgt = _unit(src + 0.1 * rng.standard_normal((10, 16)))
    texts = [f"s{i}" for i in range(10)]
    alone = pool_retrieval(src, tgt, texts, texts, [], [])
    assert alone.p_at_1 == 1.0
    closer = _unit(src[:5] + 0.01 * rng.standard_normal((5, 16)))  # near-copies of five queries, in the pool
    hard = pool_retrieval(src, tgt, texts, texts, [src], [closer, tgt[5:]])  # tgt[5:]: the golds' own texts again
    assert hard.fwd_hits[:5].sum() == 0 and hard.fwd_hits[5:].sum() == 5  # the copies of the golds are not errors
    assert hard.pool == {"src": 10, "tgt": 10}
    d = hard.to_dict()
    assert d["src2tgt"] == 0.5 and d["ci95"][0] < d["p_at_1"] < d["ci95"][1]


def test_the_stop_rule_needs_a_real_difference():
    assert beats([0.6, 0.1], [0.5, 0.3])
    assert not beats([0.5, 0.1], [0.6, 0.3])
    assert not beats([0.5, 0.3001], [0.5, 0.3])  # the same P@1, a gap wider by noise: no better
    assert beats([0.5, 0.31], [0.5, 0.3])


def test_the_seed_split_holds_out_a_fifth_at_least_20_at_most_half():
    for n, held in ((30, 15), (100, 20), (300, 60), (41, 20)):
        train, out = split_seed(n, BootstrapSettings())
        assert len(out) == held and len(train) == n - held and not set(train) & set(out)


# ---------------------------------------------------------------------------------------------- end to end


def test_bootstrap_end_to_end(tiny_model, tmp_path):
    """Round 0 trains on the seed less the held-out pairs; the rounds mine every hidden pair, drop the pairs that hold
    a held-out sentence, write them with their scores; the rounds' figures, the plot and the model card are written;
    the output loads with SentenceTransformer."""
    from sentence_transformers import SentenceTransformer

    data = _copies(tmp_path / "data")
    res, notes = _run(data, tmp_path / "out", tiny_model, rounds=2)
    out = tmp_path / "out"
    held = [json.loads(x) for x in (out / "holdout.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(held) == 15 and res.held_out == 15
    seed_train = [json.loads(x) for x in (out / "seed-train.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(seed_train) == 15
    held_texts = {h["src"] for h in held}
    pairs = _pairs(out / "round-0" / "pairs.tsv")
    texts = {s for _, s, t in pairs if s == t}
    assert data["hidden"] <= texts  # every hidden pair mined
    assert not held_texts & {s for _, s, _ in pairs} and not held_texts & {t for _, _, t in pairs}
    assert [p[0] for p in pairs] == sorted((p[0] for p in pairs), reverse=True)  # best first, with scores
    r0 = res.rounds[0]
    assert r0["counts"]["held_out_sentences"] == 15 and r0["counts"]["kept"] == len(pairs)
    assert r0["trained_on"] == {"seed": 15, "mined": 0}
    mined = json.loads((out / "round-0" / "mine.json").read_text(encoding="utf-8"))["selection"]
    assert mined["known_pairs"]["pairs"] == 15 and mined["known_pairs"]["retrieved"] == 15  # copies: all retrieved
    assert mined["auto_threshold"]["method"] == "auto (anchored, expected-F1 cut)"
    assert any("anchored on the 15 of 15 held-out pairs the model retrieves" in n for n in notes)
    # copies are found by any model: every round scores P@1 1.0, so round 1 does not beat round 0 and stops the loop
    assert r0["held_out"]["p_at_1"] == 1.0
    n_src, n_tgt = (len(set((data["folder"] / f).read_text(encoding="utf-8").splitlines())) for f in ("src.txt", "tgt.txt"))
    assert r0["held_out"]["pool"] == {"src": n_src, "tgt": n_tgt} and r0["counts"]["src_lines"] == n_src
    assert len(res.rounds) == 2 and res.best_round == 0 and "did not beat round 0" in res.stopped
    assert res.rounds[1]["trained_on"] == {"seed": 15, "mined": len(pairs)}
    cfg1 = (out / "round-1" / "run" / "config.yaml").read_text(encoding="utf-8")
    assert f"student: {out / 'round-0' / 'run' / 'model'}" in cfg1 and f"teacher: {tiny_model}" in cfg1  # --start last
    train1 = (out / "round-1" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(train1) == 15 + len(pairs)
    assert not (out / "round-0" / "run" / "model").exists() and not (out / "round-1" / "run" / "model").exists()
    assert any("each round's own model folder removed (2" in n for n in notes)  # the output is the best one's copy
    rec = json.loads((out / "bootstrap.json").read_text())
    assert rec["best_round"] == 0 and rec["estimate"]["line"].startswith("bootstrap: round 0 trained in")
    assert any(n.startswith("bootstrap: round 0 trained in") for n in notes)
    assert any("held-out P@1 in the hard pool 1.000" in n for n in notes)
    assert (out / "rounds.png").read_bytes()[:4] == b"\x89PNG"
    card = (out / "model" / "README.md").read_text(encoding="utf-8")
    assert "seed.tsv" in card and "src.txt" in card and "| 0 (this model) | 15 + 0 |" in card
    SentenceTransformer(str(res.model_path), device="cpu").encode(["god is good"])


def test_the_best_rounds_model_is_the_output(tiny_model, tmp_path, monkeypatch):
    """Held-out scores that rise then fall: the output is the best round's model, and the loop stopped after the
    round that fell."""
    import xlsent.evaluation.pool as pool

    real = pool.pool_retrieval
    marks = iter([0.5, 0.8, 0.6])

    def scripted(*a, **k):
        got = real(*a, **k)
        p = next(marks)
        got.fwd_hits = np.array([1.0] * int(p * 10) + [0.0] * (10 - int(p * 10)))
        got.bwd_hits = got.fwd_hits.copy()
        return got

    monkeypatch.setattr(pool, "pool_retrieval", scripted)
    data = _copies(tmp_path / "data")
    res, _ = _run(data, tmp_path / "out", tiny_model, rounds=3, keep_rounds=True)
    assert [round(r["held_out"]["p_at_1"], 1) for r in res.rounds] == [0.5, 0.8, 0.6]
    assert all((tmp_path / "out" / f"round-{r}" / "run" / "model").is_dir() for r in range(3))  # --keep-rounds
    assert res.best_round == 1 and "round 2 did not beat round 1" in res.stopped
    marker = (tmp_path / "out" / "model" / ".xlsent-bootstrap-round").read_text()
    assert marker.endswith("round-1/run/model")


def test_a_killed_run_resumes_after_its_last_round(tiny_model, tmp_path, monkeypatch):
    import xlsent.api.bootstrapping as api

    data = _copies(tmp_path / "data")
    real = api._mining
    calls = {"n": 0}

    def dies_in_round_1(*a, **k):
        harvest = real(*a, **k)

        def h(model, folder, known):
            calls["n"] += 1
            if calls["n"] == 2:
                raise KeyboardInterrupt  # killed during round 1's mining
            return harvest(model, folder, known)
        return h

    monkeypatch.setattr(api, "_mining", dies_in_round_1)
    with pytest.raises(KeyboardInterrupt):
        _run(data, tmp_path / "out", tiny_model, rounds=1)
    rec = json.loads((tmp_path / "out" / "bootstrap.json").read_text())
    assert [r["round"] for r in rec["rounds"]] == [0]
    monkeypatch.setattr(api, "_mining", real)
    res, notes = _run(data, tmp_path / "out", tiny_model, rounds=1)
    assert "bootstrap: resuming after round 0" in "\n".join(notes)
    assert not any(n.startswith("round 0: adapt") for n in notes)  # round 0 is not trained again
    assert [r["round"] for r in res.rounds] == [0, 1]
    again, notes = _run(data, tmp_path / "out", tiny_model, rounds=1)  # a finished run: nothing trains
    assert not any("adapt on" in n for n in notes) and again.best_round == res.best_round


def test_other_settings_into_the_same_folder_are_refused(tiny_model, tmp_path):
    data = _copies(tmp_path / "data")
    _run(data, tmp_path / "out", tiny_model, rounds=0)
    with pytest.raises(xlsent.XlsentError, match="holds a bootstrap of other inputs or settings"):
        _run(data, tmp_path / "out", tiny_model, rounds=0, start="base")


def test_a_second_run_into_a_folder_in_use_is_refused_in_one_line(tiny_model, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from xlsent.utils.io import claim
        with claim({str(out)!r}):
            print('held', flush=True); time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        data = _copies(tmp_path / "data")
        with pytest.raises(xlsent.XlsentError, match=f"a bootstrap is being written by process "
                                                     f"{holder.pid} "):
            _run(data, out, tiny_model)
    finally:
        holder.kill()
        holder.wait()
    with pytest.warns(UserWarning, match=f"taking over from process {holder.pid} .* which stopped without finishing"):
        _run(data, out, tiny_model, rounds=0)  # a lock left by a killed process is taken over


def test_documents_are_aligned_instead_of_mined(tiny_model, tmp_path, monkeypatch):
    """Each line a document: the document pairs are split into sentences and aligned (the aligner itself is tested in
    test_alignment.py; a random tiny model cannot align, so it aligns here by position, as it would identical
    documents), the aligned blocks are the round's pairs, and every sentence is in the pools."""
    import xlsent.api.alignment as alignment

    seen = []

    def by_position(src, tgt, **kw):
        seen.append((list(src), list(tgt)))
        return [alignment.AlignedBlock((i,), (i,), 0.1) for i in range(min(len(src), len(tgt)))]

    monkeypatch.setattr(alignment, "align", by_position)
    rng = random.Random(3)
    docs = [[" ".join(rng.choice(WORDS) for _ in range(6)) + "." for _ in range(5)] for _ in range(8)]
    seed = [" ".join(rng.choice(WORDS) for _ in range(7)) for _ in range(24)]
    (tmp_path / "seed.tsv").write_text("".join(f"{x}\t{x}\n" for x in seed), encoding="utf-8")
    (tmp_path / "src.txt").write_text("\n".join(" ".join(d) for d in docs) + "\n", encoding="utf-8")
    (tmp_path / "tgt.txt").write_text("\n".join(" ".join(d) for d in docs) + "\n", encoding="utf-8")
    res = xlsent.bootstrap(tmp_path / "seed.tsv", tmp_path / "src.txt", tmp_path / "tgt.txt", tmp_path / "out",
                           model=str(tiny_model), rounds=0, documents=True, filters="none", settings=FAST,
                           src_lang="en", tgt_lang="en")
    assert seen == [(d, d) for d in docs]  # paired by order, split into their five sentences each
    pairs = _pairs(tmp_path / "out" / "round-0" / "pairs.tsv")
    assert sorted(s for _, s, _ in pairs) == sorted(x for d in docs for x in d) and all(s == t for _, s, t in pairs)
    assert res.rounds[0]["counts"]["documents"] == 8 and res.rounds[0]["held_out"]["pool"]["tgt"] == 40


# ---------------------------------------------------------------------------------------------- bad input


@pytest.fixture
def bible(tmp_path):
    """24 real en–ny pairs and texts in each language, for the language checks (CLD2 reads both)."""
    from xlsent.data.pairs import load_pairs

    ds = load_pairs("bible-en-ny:dev").dataset
    pairs = list(zip(ds["src"], ds["tgt"]))[:80]
    (tmp_path / "seed.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in pairs[:24]), encoding="utf-8")
    (tmp_path / "en.txt").write_text("\n".join(a for a, _ in pairs[24:]) + "\n", encoding="utf-8")
    (tmp_path / "ny.txt").write_text("\n".join(b for _, b in pairs[24:]) + "\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("case,message", [
    ("few", "3 pair(s) after cleaning — a bootstrap needs at least 20"),
    ("empty", "empty — --tgt-texts needs plain text"),
    ("binary", "a binary file"),
    ("missing", "--src-texts {d}/nope.txt: no such file"),
    ("french", "reads as fr, but the seed's first column is en"),
    ("swapped", "the texts are swapped"),
])
def test_bad_input_is_one_line_before_any_model_loads(bible, case, message):
    d = bible
    seed, src, tgt = d / "seed.tsv", d / "en.txt", d / "ny.txt"
    if case == "few":
        (d / "few.tsv").write_text("".join(line + "\n" for line in seed.read_text().splitlines()[:3]))
        seed = d / "few.tsv"
    elif case == "empty":
        tgt = d / "empty.txt"
        tgt.write_text("\n\n")
    elif case == "binary":
        src = d / "bin.txt"
        src.write_bytes(b"\x00\x01PK\x03" * 100)
    elif case == "missing":
        src = d / "nope.txt"
    elif case == "french":
        from xlsent.data.bundled import load_bundled

        fr = [r["tgt"] for r in load_bundled("udhr-all") if r["tgt_lang"] == "fra"][:40]
        src = d / "fr.txt"
        src.write_text("\n".join(fr) + "\n", encoding="utf-8")
    elif case == "swapped":
        src, tgt = tgt, src
    with pytest.raises(xlsent.XlsentError) as e:  # a model that does not exist: the input is checked first
        xlsent.bootstrap(seed, src, tgt, d / "out", model=str(d / "no-model-here"))
    assert message.format(d=d) in str(e.value) and "\n" not in str(e.value)


def test_the_command_says_a_bad_seed_in_one_line(bible):
    d = bible
    (d / "few.tsv").write_text("a\tb\n")
    r = subprocess.run([sys.executable, "-m", "xlsent", "train", "bootstrap", str(d / "few.tsv"), "--src-texts",
                        str(d / "en.txt"), "--tgt-texts", str(d / "ny.txt"), "-o", str(d / "out")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "needs at least 20" in r.stderr and len([x for x in r.stderr.splitlines() if x.strip()]) <= 2


def test_an_unknown_adapt_setting_is_refused_before_training(bible):
    with pytest.raises(xlsent.XlsentError, match="optim.nope"):
        xlsent.bootstrap(bible / "seed.tsv", bible / "en.txt", bible / "ny.txt", bible / "out",
                         model=str(bible / "no-model-here"), settings={"optim.nope": 1})


def test_a_script_the_model_cannot_read_is_warned_before_training(bible):
    """Chichewa written in Deseret (a substitute for a script e5-small has no pieces for): the readability warning,
    pointing at ``models romanize``, from the tokenizer alone — before the config error stops the run."""
    from xlsent.data.transliterate import by_sound
    from xlsent.encoding.readable import UnreadableTextWarning

    d = bible
    ny = [by_sound(x, "Dsrt") for x in (d / "ny.txt").read_text(encoding="utf-8").splitlines()]
    (d / "dsrt.txt").write_text("\n".join(ny) + "\n", encoding="utf-8")
    with pytest.warns(UnreadableTextWarning, match="xlsent models romanize"):
        with pytest.raises(xlsent.XlsentError, match="optim.nope"):
            xlsent.bootstrap(d / "seed.tsv", d / "en.txt", d / "dsrt.txt", d / "out", settings={"optim.nope": 1})


# ---------------------------------------------------------------------------------------------- the real model


@pytest.mark.slow
def test_bootstrap_on_the_default_model_finds_true_pairs(tmp_path):
    """e5-small, 40 seed pairs, 300 hidden verse pairs among unrelated verses: round 0's mined pairs are mostly the
    hidden ones, and its held-out P@1 among every plain line is below a pool of the held-out pairs alone."""
    from xlsent.data.pairs import load_pairs

    ds = load_pairs("bible-en-ny:dev").dataset
    pairs = list(zip(ds["src"], ds["tgt"]))
    rng = random.Random(0)
    rng.shuffle(pairs)
    seed, hidden, rest = pairs[:40], pairs[40:340], pairs[340:740]
    en = [a for a, _ in hidden] + [a for a, _ in rest[:200]]
    ny = [b for _, b in hidden] + [b for _, b in rest[200:]]
    rng.shuffle(en)
    rng.shuffle(ny)
    (tmp_path / "seed.tsv").write_text("eng\tnya\n" + "".join(f"{a}\t{b}\n" for a, b in seed), encoding="utf-8")
    (tmp_path / "en.txt").write_text("\n".join(en) + "\n", encoding="utf-8")
    (tmp_path / "ny.txt").write_text("\n".join(ny) + "\n", encoding="utf-8")
    # round 0 alone: what is asserted is round 0's (the later rounds' logic is tested on the tiny model above)
    res = xlsent.bootstrap(tmp_path / "seed.tsv", tmp_path / "en.txt", tmp_path / "ny.txt", tmp_path / "out",
                           rounds=0)
    kept = _pairs(tmp_path / "out" / "round-0" / "pairs.tsv")
    right = sum((s, t) in set(hidden) for _, s, t in kept)
    assert len(kept) >= 150 and right / len(kept) >= 0.9
    assert 0 < res.rounds[0]["held_out"]["p_at_1"] <= 1


def test_models_student_in_settings_is_the_base_model(tiny_model, tmp_path):
    """``--set models.student=DIR`` (a romanised or extended model) is the base every round starts from and
    distils to, as ``-m DIR``."""
    data = _copies(tmp_path / "data")
    res, _ = _run(data, tmp_path / "out", Path("e5-small-never-loaded"), rounds=0,
                  settings={**FAST, "models.student": str(tiny_model)})
    cfg = (tmp_path / "out" / "round-0" / "run" / "config.yaml").read_text()
    assert f"student: {tiny_model}" in cfg and f"teacher: {tiny_model}" in cfg
    assert json.loads((tmp_path / "out" / "bootstrap.json").read_text())["settings"]["model"] == str(tiny_model)


def test_no_anchor_leaves_the_cut_unanchored(tiny_model, tmp_path):
    """``--no-anchor``: mine's automatic cut without the held-out pairs (the ablation of the anchored cut)."""
    data = _copies(tmp_path / "data")
    _run(data, tmp_path / "out", tiny_model, rounds=0, anchor=False)
    sel = json.loads((tmp_path / "out" / "round-0" / "mine.json").read_text(encoding="utf-8"))["selection"]
    assert "known_pairs" not in sel and sel["auto_threshold"]["method"] != "auto (anchored, expected-F1 cut)"
    rec = json.loads((tmp_path / "out" / "bootstrap.json").read_text(encoding="utf-8"))
    assert rec["settings"]["mining"]["anchor"] is False
