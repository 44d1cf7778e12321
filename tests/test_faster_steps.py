"""Issue 60 §2: batches grouped by length, the trained-block count, dropout off, and the run priced before its
first step (xlsent.training.batching, xlsent.training.estimate, xlsent.recipes._common.prepare_trained)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from datasets import Dataset

from xlsent.training.batching import LengthGroupedBatchSampler, padded_tokens, row_lengths
from xlsent.training.estimate import Estimate, estimate_line


def _data(n: int = 400, seed: int = 0):
    """Rows of very different lengths where one English text is shared by many rows (as UDHR paragraphs are)."""
    rng = np.random.default_rng(seed)
    anchors, positives = [], []
    for i in range(n):
        k = int(rng.integers(1, 60))
        anchors.append(" ".join(f"w{i}x{j}" for j in range(k)))
        positives.append(f"shared {i % 7}" if i % 3 == 0 else " ".join(f"e{i}y{j}" for j in range(k)))
    ds = Dataset.from_dict({"anchor": anchors, "positive": positives, "label": [[0.0]] * n})
    return ds, row_lengths(ds, lambda texts: [len(t.split()) for t in texts])


def test_grouped_batches_use_every_row_once_never_repeat_a_text_and_pad_less():
    ds, lengths = _data()
    grouped = LengthGroupedBatchSampler(ds, 16, False, seed=0, lengths=lengths)
    plain = LengthGroupedBatchSampler(ds, 16, False, seed=0, lengths=lengths, group=False)
    for sampler in (grouped, plain):
        batches = list(sampler)
        assert len(batches) == len(sampler)
        rows = [i for b in batches for i in b]
        assert sorted(rows) == list(range(len(ds)))  # every row once
        for b in batches:  # no text twice in a batch: the no-duplicates rule of in-batch negatives
            texts = [t for i in b for t in (ds[i]["anchor"], ds[i]["positive"])]
            assert len(texts) == len(set(texts)), b
    cost_g, cost_p = padded_tokens(list(grouped), lengths), padded_tokens(list(plain), lengths)
    assert cost_g.sum() < 0.8 * cost_p.sum(), (cost_g.sum(), cost_p.sum())
    assert cost_g[0] == cost_g.max()  # the longest batch first: the run's peak memory at its first step
    assert list(grouped) == list(LengthGroupedBatchSampler(ds, 16, False, seed=0, lengths=lengths))  # seeded
    grouped.set_epoch(1)
    assert list(grouped) != grouped.plan(0)


def test_the_estimate_says_how_to_cut_a_long_cpu_run():
    short = estimate_line("adapt", "900 pairs trained on, 100 held out, ", Estimate(29, 95.0, 3_100_000_000, 4.0),
                          32, "cpu")
    assert short == ("adapt: 900 pairs trained on, 100 held out, 29 steps of 32 on cpu: about 1 min 35 s (timed on 2 "
                     "of its batches), peak memory about 3.1 GB")
    long = estimate_line("adapt", "", Estimate(700, 5000.0, None, 4.0), 32, "cpu")
    assert "about 1 h 23 min" in long and "--set train.sample_files=N" in long and "--device cuda" in long
    assert "torchrun" in long
    assert "to cut it" not in estimate_line("adapt", "", Estimate(700, 5000.0, None, 4.0), 32, "cuda")


def test_only_the_top_blocks_train_and_dropout_can_be_off(tiny_model, tmp_path):
    import json

    from sentence_transformers import SentenceTransformer

    from xlsent.recipes._common import prepare_trained
    from xlsent.recipes.config_types import ModelsConfig

    st = SentenceTransformer(str(tiny_model), device="cpu")  # 3 blocks
    prepare_trained(st, ModelsConfig({"train_layers": 1, "dropout": False, "freeze_word_embeddings": True}))
    auto = st[0].auto_model
    trained = {n.split(".")[2] if n.startswith("encoder.layer.") else n.split(".")[0]
               for n, p in auto.named_parameters() if p.requires_grad}
    assert trained == {"2"}, trained  # the top block only: embeddings and blocks 0–1 frozen
    assert all(m.p == 0.0 for m in st.modules() if type(m).__name__ == "Dropout")
    st.save(str(tmp_path / "saved"))  # the saved model keeps its own dropout rates
    assert json.loads((tmp_path / "saved" / "config.json").read_text())["hidden_dropout_prob"] == 0.1
    with pytest.raises(Exception, match="models.train_layers"):
        from xlsent.recipes.config import load_config

        load_config("adapt", None, ["models.train_layers=-1"])


def test_progress_bars_follow_the_process_setting_and_show_an_eta(tiny_model, tmp_path):
    """``xlsent embed``'s own bar, as a terminal gets it (``FORCE_COLOR``: rich draws as on a terminal): a time
    remaining while it runs, the one its own rate of progress gives, and an end near the one it had (the median
    within a factor of 4: a shared machine's speed varies); a bar with no total, or an ETA column that showed another
    time, fails. One thread: the bar's pace less at the mercy of the cores other work holds."""
    import random
    import re

    from conftest import WORDS
    from test_cli import xlsent as run_cli

    from xlsent.utils.progress import progress_shown, show_progress_bars

    try:
        show_progress_bars(False)
        assert not progress_shown(None) and progress_shown(True)
        show_progress_bars(True)
        assert progress_shown(None) and not progress_shown(False)
        rng = random.Random(0)  # texts of 2 to 40 words: the longest are embedded first
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(2, 40))) for _ in range(2400)]
        (tmp_path / "t.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
        r = run_cli("embed", "-m", str(tiny_model), "-i", str(tmp_path / "t.txt"), "-o", str(tmp_path / "v.npy"),
                    "--batch-size", "4", "--threads", "1", env={"FORCE_COLOR": "1"})
    finally:
        show_progress_bars(False)
    assert r.returncode == 0, r.stderr
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", r.stderr)
    seconds = lambda hms: sum(int(x) * 60 ** i for i, x in enumerate(reversed(hms.split(":"))))  # noqa: E731
    bar = r"embedding \(2,400 texts\) \S+\s+(\d+)% (\d+:\d\d:\d\d) ETA (\d+:\d\d:\d\d|-:--:--)"
    frames = [(int(p), seconds(e), None if eta[0] == "-" else seconds(eta)) for p, e, eta in re.findall(bar, plain)]
    assert frames and frames[-1][0] == 100 and frames[-1][2] == 0, plain[-500:]
    running = [f for f in frames if f[0] < 100]
    timed = [f for f in running if f[2] is not None]
    assert len(timed) >= 2 and len(timed) >= len(running) // 2, frames  # a time remaining once the bar moves
    end = frames[-1][1]  # the bar's elapsed time at 100%
    moved = [f for f in timed if f[0] >= 10]
    assert len(moved) >= 2, frames
    for p, e, eta in moved:  # the time remaining at the rate the bar has moved: whole seconds and percents shown,
        # and rich's rate leaves out the first batch (the longest texts), so within 30% and a second
        lo, hi = e * (99.5 - p) / (p + 0.5) / 1.3 - 1, (e + 1) * (100.5 - p) / (p - 0.5) * 1.3 + 1
        assert lo <= eta <= hi, (p, e, eta, frames)
    # and the end it foretells against the end it had: the median, as the speed of a shared machine's work varies
    ends = sorted(e + eta for _, e, eta in moved)
    assert end / 4 - 2 <= ends[len(ends) // 2] <= 4 * end + 2, (end, frames)


def test_the_power_law_fit_recovers_a_known_curve_and_its_interval_covers_it():
    from xlsent.evaluation.curve import fit_curve

    rng = np.random.default_rng(0)
    pairs = [250, 500, 1000, 2000]
    truth = lambda n: 1 - 3.0 * n ** -0.5  # noqa: E731
    hits = [(rng.random(4000) < truth(n)).astype(float) for n in pairs]
    fit = fit_curve(pairs, hits, resamples=300)
    assert abs(fit.b - 0.5) < 0.1
    lo, hi = fit.interval([4000])
    assert lo[0] <= truth(4000) <= hi[0] and hi[0] - lo[0] < 0.05
    # P@1 that fell with more pairs (a UDHR-sized language: 0.967 at 15 pairs, 0.950 at 30) is forecast flat, never
    # lower: the law keeps b ≥ 0
    falling = fit_curve([15, 30], [np.r_[np.ones(58), np.zeros(2)], np.r_[np.ones(57), np.zeros(3)]], resamples=50)
    assert falling.b == 0.0 and abs(falling.p_at_1([60])[0] - (1 - np.sqrt(2 / 60 * 3 / 60))) < 1e-9


def test_the_curve_trains_nested_shares_and_forecasts_twice_the_pairs(tiny_model, tmp_path):
    import json

    import xlsent
    from conftest import WORDS

    rng = np.random.default_rng(0)
    rows = sorted({" ".join(rng.choice(WORDS[:12], 5)) + "\t" + " ".join(rng.choice(WORDS[13:22], 5))
                   for _ in range(700)})
    (tmp_path / "p.tsv").write_text("en\tny\n" + "\n".join(rows) + "\n", encoding="utf-8")
    notes: list[str] = []
    res = xlsent.learning_curve(tmp_path / "p.tsv", tmp_path / "curve", model=str(tiny_model), shares=3,
                                device="cpu", settings={"optim.batch_size": 16, "eval.udhr": False},
                                on_note=notes.append)
    sizes = [p["pairs"] for p in res.points]
    assert sizes == sorted(sizes) and sizes[-1] == 2 * sizes[-2] and len(sizes) == 3
    assert res.line.startswith(f"With twice these pairs ({2 * sizes[-1]:,}) held-out P@1 would likely be ")
    saved = json.loads(res.json_file.read_text())
    assert saved["points"] == res.points and len(saved["hits"]["base"]) == 2 * saved["held_out"]
    assert res.plot.read_bytes()[:4] == b"\x89PNG" and res.to_dict()["line"] == res.line
    assert any(n.startswith("curve: ") and "nested shares" in n for n in notes)
    assert (tmp_path / "curve" / f"share-{sizes[-1]:06d}" / "model").is_dir()  # the largest share's model kept
    assert not (tmp_path / "curve" / f"share-{sizes[0]:06d}" / "model").exists()
    again = xlsent.learning_curve(tmp_path / "p.tsv", tmp_path / "curve", model=str(tiny_model), shares=3,
                                  device="cpu", settings={"optim.batch_size": 16, "eval.udhr": False})
    assert again.points == res.points  # a rerun reuses the scored shares


def test_the_curve_scores_pairs_from_elsewhere_and_trains_on_all_of_yours(tiny_model, tmp_path):
    """``held_out=``: every share scored on another file's pairs (``eval.sample`` of them); none of the user's pairs
    held out, so the largest share is all of them; the cautions no longer say "same file"."""
    import json

    import xlsent
    from conftest import WORDS

    rng = np.random.default_rng(2)

    def rows(n: int) -> list[str]:
        return sorted({" ".join(rng.choice(WORDS[:12], 5)) + "\t" + " ".join(rng.choice(WORDS[13:22], 5))
                       for _ in range(n)})

    mine, other = rows(200), rows(400)
    (tmp_path / "p.tsv").write_text("en\tny\n" + "\n".join(mine) + "\n", encoding="utf-8")
    (tmp_path / "o.tsv").write_text("en\tny\n" + "\n".join(other) + "\n", encoding="utf-8")
    notes: list[str] = []
    res = xlsent.learning_curve(tmp_path / "p.tsv", tmp_path / "curve", model=str(tiny_model), shares=2,
                                device="cpu", held_out=tmp_path / "o.tsv", on_note=notes.append,
                                settings={"optim.batch_size": 16, "eval.udhr": False, "eval.sample": 150})
    assert res.points[-1]["pairs"] == len(mine)  # all of the user's pairs train
    saved = json.loads(res.json_file.read_text())
    assert saved["held_out"] == 150 and len(saved["hits"]["base"]) == 300
    assert saved["held_out_pairs"] == str(tmp_path / "o.tsv")
    held = [json.loads(x) for x in (tmp_path / "curve" / "holdout.jsonl").read_text().splitlines()]
    assert len(held) == 150 and all(f"{h['src']}\t{h['tgt']}" in other for h in held)
    assert not any("same file" in c for c in res.cautions)
    assert any(f"150 pairs of {tmp_path / 'o.tsv'}" in n for n in notes)
    mixed = xlsent.learning_curve(tmp_path / "p.tsv", tmp_path / "curve", model=str(tiny_model), shares=2,
                                  device="cpu", settings={"optim.batch_size": 16, "eval.udhr": False})
    assert mixed.points[-1]["pairs"] < len(mine)  # its own held-out part again: nothing of the other curve reused
    assert any("same file" in c for c in mixed.cautions)


def test_a_tiny_file_trains_at_least_min_steps_not_one_step_at_learning_rate_0(tiny_model, tmp_path):
    """A UDHR-sized file (under a batch of pairs) is one step an epoch, and the warm-up's first step has a learning
    rate of 0: adapt trained nothing. ``optim.min_steps`` (adapt: 20) raises the epochs, and says so."""
    import json

    import xlsent
    from conftest import WORDS

    rng = np.random.default_rng(1)
    rows = sorted({" ".join(rng.choice(WORDS[:12], 5)) + "\t" + " ".join(rng.choice(WORDS[13:22], 5))
                   for _ in range(24)})
    (tmp_path / "p.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    notes: list[str] = []
    settings = {"optim.batch_size": 16, "optim.min_steps": 6, "optim.logging_steps": 1, "train.holdout": 0, "eval.udhr": False,
                "eval.pairs": str(tmp_path / "p.tsv")}
    xlsent.adapt(tmp_path / "p.tsv", tmp_path / "run", model=str(tiny_model), device="cpu", settings=settings,
                 evaluate=False, on_note=notes.append)
    stage = json.loads((tmp_path / "run" / "stage.json").read_text())
    assert stage["steps"] == 6 and stage["estimate"]["steps"] == 6, stage
    assert any("make 2 step(s) an epoch — trained for 3 epochs (optim.min_steps=6)" in n for n in notes), notes
    rates = [e["learning_rate"] for e in json.loads("[" + ",".join(
        (tmp_path / "run" / "train_log.jsonl").read_text().split("\n")[:-1]) + "]") if "learning_rate" in e]
    assert max(rates) > 0, rates  # it trained
    xlsent.adapt(tmp_path / "p.tsv", tmp_path / "off", model=str(tiny_model), device="cpu",
                 settings={**settings, "optim.min_steps": 0}, evaluate=False)
    assert json.loads((tmp_path / "off" / "stage.json").read_text())["steps"] == 2  # off: one epoch, as before


def test_sorted_chunks_give_the_loss_and_gradients_of_one_padded_pass_with_less_padding(tiny_model):
    """loss.mini_batch_size: the batch's texts sorted by length and run in chunks, each cut to its own longest —
    the same embeddings, loss and gradients as sentence-transformers' one pass a column (dropout off)."""
    import torch
    from sentence_transformers import SentenceTransformer

    from tests.conftest import WORDS
    from xlsent.losses import RankingDistillLoss

    model = SentenceTransformer(str(tiny_model), device="cpu")
    model.eval()  # no dropout: the two paths must agree exactly
    rng = __import__("random").Random(1)
    anchors = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30))) for _ in range(8)]
    positives = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30))) for _ in range(8)]
    labels = torch.nn.functional.normalize(torch.randn(8, 32, generator=torch.Generator().manual_seed(0)), dim=-1)
    seen_widths: list[int] = []
    model[0].register_forward_pre_hook(lambda mod, args: seen_widths.append(args[0]["input_ids"].shape[1]))

    def run(rows: int):
        seen_widths.clear()
        loss = RankingDistillLoss(model, kd_weight=1.0, mini_batch_size=rows)
        feats = [model.preprocess(anchors), model.preprocess(positives)]
        value = loss(feats, labels)
        value.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        model.zero_grad(set_to_none=True)
        return value.detach(), grads, list(seen_widths)

    whole, g_whole, widths_whole = run(0)
    chunked, g_chunked, widths = run(3)
    assert len(widths_whole) == 2 and len(widths) == 6  # 16 texts: one pass a column, or chunks of 3 (the last 1)
    assert widths == sorted(widths) and widths[0] < widths[-1] == max(widths_whole)  # short chunks cut short
    assert torch.allclose(whole, chunked, atol=1e-5)
    assert g_whole.keys() == g_chunked.keys()
    for name in g_whole:
        assert torch.allclose(g_whole[name], g_chunked[name], atol=1e-5, rtol=1e-4), name


def test_the_price_of_a_batch_in_sorted_chunks_is_each_chunk_padded_to_its_own_longest():
    import numpy as np

    from xlsent.training.batching import padded_tokens

    lengths = np.array([5, 100, 7, 6, 50, 8])
    batches = [[0, 1, 2, 3], [4, 5]]
    assert padded_tokens(batches, lengths).tolist() == [4 * 100, 2 * 50]  # one pass: every row at the longest
    # sorted 5, 6, 7, 100 in chunks of 2: 2 × 6 + 2 × 100; the second batch: 8, 50 one a chunk
    assert padded_tokens(batches, lengths, chunk=2).tolist() == [2 * 6 + 2 * 100, 2 * 50]
    assert padded_tokens(batches, lengths, chunk=1).tolist() == [5 + 6 + 7 + 100, 8 + 50]


@pytest.mark.parametrize("bf16", [False, True])
def test_the_price_is_timed_in_the_runs_precision(bf16):
    """The trainer autocasts only once ``train()`` has wrapped its model, so the probe autocasts itself: a bf16 run's
    batches are timed in bf16 (they were timed in fp32, and a bf16 run on a CPU priced at 1.7–2.5× its time)."""
    import types

    import torch

    from xlsent.training.estimate import probe

    seen: list = []
    layer = torch.nn.Linear(4, 4)

    class Trainer:
        model = layer
        args = types.SimpleNamespace(bf16=bf16, fp16=False)

        def _prepare_inputs(self, x):
            return x

        def data_collator(self, rows):
            return torch.ones(len(rows), 4)

        def compute_loss(self, model, inputs):
            seen.append(torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16)
            return model(inputs).float().sum()

        def autocast_smart_context_manager(self):
            import contextlib

            return contextlib.nullcontext()

    est = probe(Trainer(), list(range(8)), [[0, 1, 2, 3], [4, 5], [6, 7]], np.ones(8, int), 10, 1, 4, "cpu")
    assert seen == [bf16, bf16] and est.steps == 10 and est.seconds > 0
