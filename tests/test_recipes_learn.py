"""Every recipe learns: on a tiny task its objective falls and its model moves away from where it started.

These would fail if a recipe skipped training (a reloadable model of the right shape is not enough).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from test_resume import TEXTS, _overrides, setup  # noqa: F401 — the same tiny models and 200 pairs

CASES = {
    "siamese": (None, ["optim.epochs=8", "optim.lr=1e-3"], ""),
    "xkd": ("small", ["optim.epochs=3", "optim.lr=1e-3"], ""),
    "adapt": (None, ["optim.epochs=4", "optim.lr=1e-3", "optim.batch_size=16"], ""),
    "triplet-kd": ("small", ["optim.epochs=3", "optim.lr=1e-3"], ""),
    "gloss": ("small", ["optim.max_steps=150", "optim.lr=1e-2"], ""),
    "multistage": ("small", ["optim.lr=1e-3", "stage4.epochs=3"], "stage4-mcl"),
}


def _first_last_loss(folder) -> tuple[float, float]:
    log = [json.loads(x) for x in (folder / "train_log.jsonl").read_text().splitlines()]
    losses = [e["loss"] for e in log if "loss" in e]
    assert len(losses) >= 5, log
    k = max(2, len(losses) // 5)  # the first and the last fifth of the logged steps, averaged
    return float(np.mean(losses[:k])), float(np.mean(losses[-k:]))


def _word_mapped_pairs(path):
    import random

    from conftest import WORDS

    en, ny = WORDS[:12], WORDS[13:25]
    mapping = dict(zip(en, ny))
    rng = random.Random(3)
    rows = {}
    while len(rows) < 200:
        words = [rng.choice(en) for _ in range(6)]
        rows[" ".join(words)] = " ".join(mapping[w] for w in words)
    path.write_text("".join(json.dumps({"src": a, "tgt": b, "src_lang": "en", "tgt_lang": "ny", "doc": f"d{i % 4}",
                                        "section": str(i // 4 % 10)}) + "\n" for i, (a, b) in enumerate(rows.items())),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("recipe", list(CASES))
def test_training_lowers_the_objective_and_changes_the_model(setup, tmp_path, recipe):  # noqa: F811
    from sentence_transformers import SentenceTransformer

    from xlsent.recipes.config import load_config
    from xlsent.recipes.registry import REGISTRY

    preset, extra, stage = CASES[recipe]
    if recipe == "gloss":  # a learnable toy for a dictionary: Chichewa words that translate English ones
        extra = [*extra, f"train.pairs={_word_mapped_pairs(tmp_path / 'mapped.jsonl')}"]
    cfg = load_config(recipe, None, [*_overrides(recipe, setup), *extra, "optim.logging_steps=1"],
                      preset)
    REGISTRY[recipe].train_fn()(cfg, tmp_path, None, False)
    first, last = _first_last_loss(tmp_path / stage)
    assert last < 0.95 * first, (first, last)
    trained = SentenceTransformer(str(tmp_path / "model"), device="cpu").encode(TEXTS)
    start = {"siamese": setup["student"], "xkd": setup["student"], "adapt": setup["student"], "triplet-kd": setup["student"],
             "gloss": setup["teacher"], "multistage": tmp_path / "stage3-recurrence" / "model"}[recipe]
    before = SentenceTransformer(str(start), device="cpu").encode(TEXTS)
    assert before.shape == trained.shape
    assert np.abs(trained - before).max() > 1e-3  # the weights moved


@pytest.mark.parametrize("extra", [["negatives.hard=1", "negatives.relative_margin=0"], ["loss.kd_weight=0"]],
                         ids=["hard-negatives", "no-distillation"])
def test_adapt_variants_train(setup, tmp_path, extra):  # noqa: F811
    """adapt's switches run end to end: hard negatives mined by the base model (a third column in every batch),
    and no distillation (no frozen copy loaded, no labels)."""
    from sentence_transformers import SentenceTransformer

    from xlsent.recipes.adapt import train_adapt
    from xlsent.recipes.config import load_config

    cfg = load_config("adapt", None, [*_overrides("adapt", setup), "optim.max_steps=4", "optim.lr=1e-3",
                                      "optim.logging_steps=1", *extra])
    train_adapt(cfg, tmp_path, None, False)
    rec = json.loads((tmp_path / "stage.json").read_text())
    assert rec["steps"] == 4 and rec["selection"]["history"]
    if "negatives.hard=1" in extra:
        assert any("hard negatives: 1 a pair" in n for n in rec["data_notes"])
    trained = SentenceTransformer(str(tmp_path / "model"), device="cpu").encode(TEXTS)
    before = SentenceTransformer(str(setup["student"]), device="cpu").encode(TEXTS)
    assert np.abs(trained - before).max() > 1e-3


def test_adapt_says_when_hard_negative_mining_keeps_nothing(setup, tmp_path):  # noqa: F811
    """A tiny random model scores every candidate alike: with a 5% margin no negative qualifies — one clear line."""
    from xlsent.recipes.adapt import train_adapt
    from xlsent.recipes.config import load_config
    from xlsent.utils.errors import XlsentError

    cfg = load_config("adapt", None, [*_overrides("adapt", setup), "negatives.hard=1", "negatives.relative_margin=0.5"])
    with pytest.raises(XlsentError, match="lower negatives.relative_margin or set negatives.hard=0"):
        train_adapt(cfg, tmp_path, None, False)
