"""Sentence alignment: the DP on hand-made costs, coarse-to-fine against the full search, the scorer against
hand-computed figures, both file formats, the bundled gold, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from xlsent.aligner.dp import Band, align_band, band_around, step_types
from xlsent.aligner.vecalign import AlignConfig, align_vectors, overlaps
from xlsent.data.alignment import Alignment, format_alignment, read_alignment, write_alignment
from xlsent.evaluation.alignment import score_alignments
from xlsent.utils.errors import XlsentError


def _table_cost(table: dict, default: float = 5.0):
    """A step cost read from ``{(a, b, x, y): cost}`` (x, y: the runs' last sentences), ``default`` elsewhere."""
    def cost(a, b, x, ys):
        out = np.array([table.get((a, b, x, int(y)), default) for y in ys], dtype=float)
        out[ys < b - 1] = np.inf
        return out
    return cost


def _blocks(blocks):
    return [(list(s), list(t)) for s, t in blocks]


def test_step_types():
    assert step_types(3) == [(1, 1), (1, 2), (2, 1), (1, 3), (2, 2), (3, 1), (1, 0), (0, 1)]
    assert step_types(1) == [(1, 1), (1, 0), (0, 1)]


def test_dp_finds_a_one_to_two_a_two_to_one_and_deletions_on_hand_made_costs():
    # 4 source, 5 target sentences; best: [0]-[0], [1]-[1, 2], [2]-[], [3]-[3], []-[4]
    table = {(1, 1, 0, 0): 0.1, (1, 2, 1, 2): 0.2, (1, 1, 3, 3): 0.1}
    types = step_types(2)[:-2]
    blocks, costs = align_band(4, 5, types, _table_cost(table), 0.5, Band.full(4, 5))
    assert _blocks(blocks) == [([0], [0]), ([1], [1, 2]), ([2], []), ([3], [3]), ([], [4])]
    np.testing.assert_allclose(costs, [0.1, 0.2, 0.5, 0.1, 0.5])
    # the same costs but cheaper to join source 1 and 2 to target 1: a 2-1 wins over a 1-1 and a deletion
    table2 = {(1, 1, 0, 0): 0.1, (2, 1, 2, 1): 0.3, (1, 1, 3, 3): 0.1, (1, 1, 4, 4): 0.1}
    blocks, _ = align_band(5, 5, types, _table_cost(table2), 0.5, Band.full(5, 5))
    assert _blocks(blocks)[:2] == [([0], [0]), ([1, 2], [1])]
    assert ([], [2]) in _blocks(blocks) and ([3], [3]) in _blocks(blocks)
    # deletions only when every step is dearer than two deletions
    blocks, costs = align_band(2, 2, types, _table_cost({}, 3.5), 1.0, Band.full(2, 2))
    assert sorted(len(s) + len(t) for s, t in blocks) == [1, 1, 1, 1] and costs.sum() == pytest.approx(4.0)


def test_band_keeps_the_coarse_path_and_its_neighbourhood():
    band = band_around([(range(0, 1), range(0, 1)), (range(1, 2), range(1, 2))], 5, 4, width=1)
    assert band.lo[0] == 0 and band.hi[-1] == 5
    for x in range(6):  # the diagonal is inside
        assert band.lo[x] <= min(x, 4) < band.hi[x]
    assert band.cells < 6 * 5


def _synthetic(rng, n, d=48, merge=0.06, delete=0.05):
    """Source vectors; a target made of noisy copies, some source pairs merged (2-1) and some deleted (1-0);
    both as overlap layers (sums of consecutive vectors, unit length)."""
    src = rng.normal(size=(n, d))
    tgt, gold = [], []
    i = 0
    while i < n:
        r = rng.random()
        if r < merge and i + 1 < n:
            tgt.append(src[i] + src[i + 1])
            gold.append(([i, i + 1], [len(tgt) - 1]))
            i += 2
        elif r < merge + delete:
            gold.append(([i], []))
            i += 1
        else:
            tgt.append(src[i] + 0.3 * rng.normal(size=d))
            gold.append(([i], [len(tgt) - 1]))
            i += 1
    def layers(v, k=3):
        v = np.asarray(v)
        out = np.zeros((k, len(v), v.shape[1]), np.float32)
        for j in range(k):
            for p in range(j, len(v)):
                out[j, p] = v[p - j:p + 1].sum(0)
        return out / np.maximum(np.linalg.norm(out, axis=-1, keepdims=True), 1e-12)
    return layers(src), layers(tgt), gold


def test_coarse_to_fine_search_equals_the_full_search_on_small_inputs():
    rng = np.random.default_rng(0)
    for n in (40, 120, 333):
        src, tgt, gold = _synthetic(rng, n)
        full = align_vectors(src, tgt, AlignConfig(full_dp_cells=10**9))
        coarse = align_vectors(src, tgt, AlignConfig(full_dp_cells=64))  # several levels of halving
        assert full.blocks() == coarse.blocks()
        assert full.score == pytest.approx(coarse.score, rel=1e-5, abs=1e-6)
        hits = len(set(full.blocks()) & {(tuple(s), tuple(t)) for s, t in gold})
        assert hits >= 0.8 * len(gold)  # a sanity floor: random vectors, 6% merges, 5% deletions


def test_coarse_to_fine_search_equals_the_full_search_with_the_length_cost():
    rng = np.random.default_rng(1)
    src, tgt, _ = _synthetic(rng, 333)
    lengths = (rng.integers(10, 200, src.shape[1]), rng.integers(10, 200, tgt.shape[1]))
    full = align_vectors(src, tgt, AlignConfig(full_dp_cells=10**9, length_weight=0.1), lengths)
    coarse = align_vectors(src, tgt, AlignConfig(full_dp_cells=64, length_weight=0.1), lengths)
    assert full.blocks() == coarse.blocks()


def test_the_length_cost_finds_a_short_second_sentence_that_cosine_misses():
    """A source sentence translated as a long and a short target sentence, the short one's vector mostly noise:
    by vectors alone the short one looks deleted (or is glued to the wrong neighbour); the lengths say that the
    two together match the source's length. Lengths are ±20% noisy: an uncentred length cost merged neighbours
    into 2-2 blocks here (154 of 200 right). The score stays the vectors' cost alone."""
    rng = np.random.default_rng(0)
    n, d = 200, 32
    src = rng.normal(size=(n, d))
    src_len = rng.integers(40, 120, n).astype(float)
    tgt, tgt_len, gold = [], [], []
    for i in range(n):
        if i % 10 == 5:
            tgt += [src[i] + 0.3 * rng.normal(size=d), 0.3 * src[i] + rng.normal(size=d)]
            tgt_len += [0.7 * src_len[i], 0.3 * src_len[i]]
            gold.append(((i,), (len(tgt) - 2, len(tgt) - 1)))
        else:
            tgt.append(src[i] + 0.3 * rng.normal(size=d))
            tgt_len.append(src_len[i] * rng.uniform(0.8, 1.2))  # a length cost on every block
            gold.append(((i,), (len(tgt) - 1,)))
    def layers(v, k=3):
        out = np.zeros((k, len(v), d), np.float32)
        for j in range(k):
            for p in range(j, len(v)):
                out[j, p] = np.sum(v[p - j:p + 1], 0)
        return out / np.linalg.norm(out, axis=-1, keepdims=True).clip(1e-12)
    hits = {}
    for w in (0.0, 0.1):
        a = align_vectors(layers(src), layers(tgt), AlignConfig(length_weight=w), (src_len, tgt_len))
        hits[w] = len(set(a.blocks()) & set(gold))
        if w:
            cos = AlignConfig(length_weight=0.0)
            plain = align_vectors(layers(src), layers(tgt), cos, (src_len, tgt_len))
            same = [(b, s) for b, s in zip(a.blocks(), a.score) if b in dict(zip(plain.blocks(), plain.score))]
            assert len(same) > 150
            assert all(s == pytest.approx(dict(zip(plain.blocks(), plain.score))[b]) for b, s in same)
    assert hits[0.1] >= 194 and hits[0.0] <= 190, hits


def test_overlaps_are_runs_ending_at_each_sentence():
    from xlsent.aligner.vecalign import embed_overlaps

    assert overlaps(["a", "b", "c"], 2) == [["a", "b", "c"], [None, "a b", "b c"]]
    rng, seen = np.random.default_rng(0), {}
    def embed(texts):
        return np.stack([seen.setdefault(t, rng.normal(size=8)) for t in texts])
    unit = lambda v: v / np.linalg.norm(v)  # noqa: E731
    concat = embed_overlaps(["a", "b", "c"], 2, embed, 8)
    np.testing.assert_allclose(concat[1, 2], unit(seen["b c"]), atol=1e-6)
    mean = embed_overlaps(["a", "b", "c"], 2, embed, 8, runs="mean")  # no run text embedded: sentences summed
    np.testing.assert_allclose(mean[1, 2], unit(unit(seen["b"]) + unit(seen["c"])), atol=1e-6)
    assert not mean[1, 0].any() and not concat[1, 0].any()


def test_scorer_against_hand_computed_strict_and_lax_figures():
    gold = Alignment([[0], [1, 2], [3], [], [4]], [[0], [1], [2], [3], []])
    pred = Alignment([[0], [1], [2], [3], [4]], [[0], [1], [], [2, 3], [4]])
    s = score_alignments([gold], [pred])
    # precision over 5 predicted blocks: strict matches [0]-[0] only; lax adds [1]-[1] (gold [1,2]-[1]) and
    # [3]-[2,3] (gold [3]-[2] shares target 2); [2]-[] and [4]-[4] match nothing (deletions match only strictly)
    assert s.strict_precision == pytest.approx(1 / 5) and s.lax_precision == pytest.approx(3 / 5)
    # recall over the 3 gold blocks with both sides: strict [0]-[0]; lax also [1,2]-[1] and [3]-[2]
    assert s.strict_recall == pytest.approx(1 / 3) and s.lax_recall == pytest.approx(3 / 3)
    assert s.strict_f1 == pytest.approx(2 * (1 / 5) * (1 / 3) / (1 / 5 + 1 / 3))
    assert score_alignments([gold], [gold]).strict_f1 == 1.0


def test_both_formats_read_back(tmp_path):
    a = Alignment([[0, 1], [2], []], [[0], [], [1]], [0.25, 0.0, 0.0])
    for fmt in ("tsv", "vecalign"):
        path = tmp_path / f"a.{fmt}"
        write_alignment(path, a, ["s0", "s1", "s2"], ["t0", "t1"], fmt)
        back = read_alignment(path)
        assert back.blocks() == a.blocks() and back.score == pytest.approx(a.score)
    assert format_alignment(a, fmt="vecalign").splitlines()[0] == "[0, 1]:[0]:0.250000"
    assert format_alignment(a, ["s0", "s1", "s2"], ["t0", "t1"]).splitlines()[0] == "0,1\t0\t0.250000\ts0 s1\tt0"
    bad = tmp_path / "bad.tsv"
    bad.write_text("0\t1\t0.1\n0;1\t2\n")
    with pytest.raises(XlsentError, match=r"bad.tsv:2: sentence ids '0;1'"):
        read_alignment(bad)


def test_bundled_gold_has_split_verse_blocks_and_deletions():
    from xlsent.data.alignment import bible_align

    docs = bible_align("bible-align:dev")
    types = {}
    for d in docs:
        for k, v in d.gold.types().items():
            types[k] = types.get(k, 0) + v
        assert sorted(i for s in d.gold.src for i in s) == list(range(len(d.src)))
        assert sorted(j for t in d.gold.tgt for j in t) == list(range(len(d.tgt)))
    assert types["1-1"] > 1500 and types["1-2"] and types["2-1"] and "1-0" not in types
    dele = bible_align("bible-align:dev-deletions")
    counts = {}
    for d in dele:
        for k, v in d.gold.types().items():
            counts[k] = counts.get(k, 0) + v
    assert counts["1-0"] > 20 and counts["0-1"] > 20


def _doc(path, sentences):
    path.write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
    return path


SRC = [f"Sentence number {i} talks about the {w}." for i, w in enumerate(
    "river house child rain market school road tree dog song fire bread".split())]
TGT = [f"Chiganizo {i} chikunena za {w}." for i, w in enumerate(
    "mtsinje nyumba mwana mvula msika sukulu msewu mtengo galu nyimbo moto".split())]


def test_cli_align_writes_both_formats_a_summary_and_batches(tmp_path, tiny_model):
    import json

    from test_cli import xlsent

    src, tgt = _doc(tmp_path / "a.en", SRC), _doc(tmp_path / "a.ny", TGT)
    r = xlsent("align", str(src), str(tgt), "-o", str(tmp_path / "out.tsv"), "-m", str(tiny_model))
    assert r.returncode == 0, r.stderr
    a = read_alignment(tmp_path / "out.tsv")
    assert sorted(i for s in a.src for i in s) == list(range(len(SRC)))
    assert sorted(j for t in a.tgt for j in t) == list(range(len(TGT)))
    summary = json.loads((tmp_path / "out.tsv.summary.json").read_text())
    assert summary["documents"] == 1 and summary["alignments"] == len(a.src)
    assert sum(summary["by_type"].values()) == len(a.src) and "aligned 1 document pair" in r.stdout
    r = xlsent("align", str(src), str(tgt), "-o", str(tmp_path / "out.vec"), "--format", "vecalign",
               "-m", str(tiny_model), "--plain")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.vec").read_text().startswith("[")
    assert set(json.loads((tmp_path / "out.vec.summary.json").read_text())["by_type"]) <= {"1-1", "1-0", "0-1"}
    # scored against itself and against the other: eval align on files
    r = xlsent("eval", "align", "--gold", str(tmp_path / "out.tsv"), "--pred", str(tmp_path / "out.tsv"))
    assert r.returncode == 0 and "strict F1 1.000" in r.stdout, r.stderr
    (tmp_path / "list.tsv").write_text("a.en\ta.ny\n# a comment\na.ny\ta.en\n")
    # raw text split first, and the blocks written as a pairs file that the pairs readers take
    (tmp_path / "raw.en").write_text(" ".join(SRC[:6]) + "\n" + " ".join(SRC[6:]) + "\n", encoding="utf-8")
    (tmp_path / "raw.ny").write_text(" ".join(TGT) + "\n", encoding="utf-8")
    r = xlsent("align", str(tmp_path / "raw.en"), str(tmp_path / "raw.ny"), "--split", "en,ny", "-o",
               str(tmp_path / "raw.tsv"), "--pairs", str(tmp_path / "pairs.tsv"), "-m", str(tiny_model))
    assert r.returncode == 0, r.stderr
    from xlsent.data.readers import read_pairs

    ds, _ = read_pairs(tmp_path / "pairs.tsv")
    a = read_alignment(tmp_path / "raw.tsv")
    assert len(ds) == sum(1 for s, t in zip(a.src, a.tgt) if s and t) and ds["src_lang"][0] == "en"
    assert sorted(i for s in a.src for i in s) == list(range(len(SRC)))  # the splitter found every sentence
    r = xlsent("align", "--batch", str(tmp_path / "list.tsv"), "-o", str(tmp_path / "many"), "-m", str(tiny_model))
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "many").iterdir()) == ["00000-a.tsv", "00001-a.tsv", "summary.json"]
    assert json.loads((tmp_path / "many" / "summary.json").read_text())["documents"] == 2


@pytest.mark.parametrize("case, message", [
    ("lengths", "differ by more than 4×"),
    ("empty", "the document is empty"),
    ("blank", "a.ny:2: blank line"),
    ("batch", "list.tsv:2: .*missing.ny: no such file"),
    ("split", "--split 'English,ny': give two language codes"),
    ("format", "--format"),
    ("overlap", "--max-overlap 0: must be between 1 and 8"),
])
def test_cli_align_bad_input_is_one_line_before_any_model_loads(tmp_path, case, message):
    from test_cli import xlsent

    src, tgt = _doc(tmp_path / "a.en", SRC), _doc(tmp_path / "a.ny", TGT)
    args = [str(src), str(tgt)]
    extra: list[str] = []
    if case == "lengths":
        _doc(tgt, TGT[:2])
    elif case == "empty":
        tgt.write_text("\n")
    elif case == "blank":
        tgt.write_text("one\n\nthree\n")
    elif case == "batch":
        (tmp_path / "list.tsv").write_text("a.en\ta.ny\na.en\tmissing.ny\n")
        args = ["--batch", str(tmp_path / "list.tsv")]
    elif case == "split":
        extra = ["--split", "English,ny"]
    elif case == "format":
        extra = ["--format", "xml"]
    elif case == "overlap":
        extra = ["--max-overlap", "0"]
    r = xlsent("align", *args, "-o", str(tmp_path / "o.tsv"), "-m", str(tmp_path / "no-such-model"), *extra)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    import re
    assert re.search(message, r.stderr), r.stderr
