from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import build_tiny_model
from xlsent.recipes.siamese import evaluate_run, train_siamese
from xlsent.recipes.config import load_config
from xlsent.utils.errors import XlsentError


@pytest.fixture(scope="module")
def prompted_model(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("m") / "tiny-prompt", layers=3, prompt="passage: ")


def _cfg(model, pairs, **over):
    sets = [f"{k}={v}" for k, v in over.items()]
    cfg = load_config("siamese", overrides=["features.layer=2", "optim.epochs=3", "optim.lr=1e-3", "train.sample=0",
                                            "train.min_words=0", "eval.sample=0", "eval.udhr=false", *sets])
    cfg["models"]["base"] = str(model)
    cfg["train"]["pairs"] = str(pairs)
    cfg["eval"]["pairs"] = str(pairs)
    return cfg


def test_saved_model_reloads_in_fresh_process_with_same_embeddings(prompted_model, pairs_tsv, tmp_path):
    out = tmp_path / "run"
    result = train_siamese(_cfg(prompted_model, pairs_tsv), out, progress=False)
    texts = ["god is good and the river is wide", "mulungu ndi wabwino madzi", "he said unto them"]
    ours = result.trained.encode(texts)
    code = (
        "import json,sys; from sentence_transformers import SentenceTransformer; "
        f"m = SentenceTransformer({str(out / 'model')!r}, device='cpu'); "
        f"print(json.dumps(m.encode({texts!r}).tolist()))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    theirs = np.array(json.loads(proc.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(theirs, ours, atol=1e-5)
    again = train_siamese(_cfg(prompted_model, pairs_tsv), out, progress=False)  # finished: reused, not retrained
    np.testing.assert_allclose(again.trained.encode(texts), theirs, atol=1e-5)  # the saved model's head, not a checkpoint's
    types = [m["type"] for m in json.loads((out / "model" / "modules.json").read_text())]
    assert all(t.startswith("sentence_transformers.") for t in types) and "Dense" in types[-2]
    for f in ("config.yaml", "train_log.jsonl", "stage.json", "checkpoints/state.pt"):
        assert (out / f).exists()
    # the head moved away from the identity and the loss is finite
    assert result.log and result.log[-1]["epoch"] == 3 and all(np.isfinite(e["loss"]) for e in result.log)
    # xlsent's own evaluation numbers are what the saved model gives
    metrics = evaluate_run(result.trained)
    from xlsent.data.readers import read_tsv
    from xlsent.evaluation.retrieval import evaluate_retrieval
    from sentence_transformers import SentenceTransformer

    ds, _ = read_tsv(pairs_tsv)
    st = SentenceTransformer(str(out / "model"), device="cpu")
    direct = evaluate_retrieval(ds["src"], ds["tgt"], lambda t: st.encode(t), similarity="cosine")
    trained = metrics.models["trained"].retrieval
    assert direct.src2tgt["p@1"] == trained["src2tgt"]["p@1"]
    assert direct.tgt2src["p@5"] == trained["tgt2src"]["p@5"]


def test_interrupted_training_resumes_to_the_same_head(tiny_model, pairs_tsv, tmp_path):
    # dropout on: the random state is restored; a small batch: several steps an epoch, the kill lands mid-epoch
    cfg = _cfg(tiny_model, pairs_tsv, **{"optim.epochs": 4, "head.dropout": 0.2, "optim.batch_size": 4,
                                         "optim.checkpoint_every": 3, "optim.logging_steps": 1})
    straight = train_siamese(cfg, tmp_path / "a", progress=False)
    per_epoch = len(straight.log) // 4
    assert per_epoch >= 3

    def crash(step):
        if step == per_epoch + 4:  # in epoch 2, after the checkpoint at a multiple of 3 and worst negatives mined
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_siamese(cfg, tmp_path / "b", progress=False, on_step=crash)
    resumed = train_siamese(cfg, tmp_path / "b", progress=False)
    assert [e["step"] for e in resumed.log] == [e["step"] for e in straight.log]
    record = json.loads((tmp_path / "b" / "stage.json").read_text())
    assert record["resumed_from_step"] == (per_epoch + 4) // 3 * 3
    assert straight.log[-1]["loss"] < straight.log[0]["loss"]  # it trained
    for p, q in zip(straight.trained.head.parameters(), resumed.trained.head.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), atol=1e-6)


def _built(folder) -> list[tuple[str, dict]]:
    """The saved model's modules: each one's class name and its own config.json (``{}`` where it has none)."""
    out = []
    for m in json.loads((folder / "modules.json").read_text()):
        conf = folder / m["path"] / "config.json"
        out.append((m["type"].rsplit(".", 1)[-1], json.loads(conf.read_text()) if m["path"] and conf.exists() else {}))
    return out


@pytest.mark.parametrize(
    "over",
    [
        {"negatives.strategy": "random"},
        {"negatives.strategy": "average", "negatives.average_k": 3},
        {"negatives.use_negatives": "false"},
        {"head.type": "tanh2", "loss.distance": "manhattan"},
        {"features.pooling": "cls", "features.layer": "all", "output_norm": "[unit]"},
    ],
)
def test_ablation_switches_train_and_save(tiny_model, pairs_tsv, tmp_path, over, monkeypatch):
    """Each switch does what it names, seen in what the run drew, computed and saved — the negatives' strategy and
    how many targets each averages, the loss's distance, the head's layers, the pooling, the layers read, the output
    normalisation — and the saved model's vectors are not the default run's: a switch that is ignored fails."""
    import xlsent.recipes.siamese as siamese
    from sentence_transformers import SentenceTransformer

    seen: dict = {}
    real_build, real_loss = siamese.build_negatives, siamese.contrastive_loss

    def build(strategy, *args, **kwargs):  # the negatives the run drew: by which strategy, targets each
        got = real_build(strategy, *args, **kwargs)
        seen.setdefault("negatives", []).append((strategy, tuple(np.asarray(got[1]).shape)))
        return got

    def loss(*args, **kwargs):  # the distance the loss was computed with
        seen.setdefault("distances", set()).add(args[4] if len(args) > 4 else kwargs["distance"])
        return real_loss(*args, **kwargs)

    monkeypatch.setattr(siamese, "build_negatives", build)
    monkeypatch.setattr(siamese, "contrastive_loss", loss)
    default = train_siamese(_cfg(tiny_model, pairs_tsv, **{"optim.epochs": 1}), tmp_path / "default", progress=False)
    n = json.loads((tmp_path / "default" / "stage.json").read_text())["pairs"]
    assert seen == {"negatives": [("worst", (n, 1))], "distances": {"euclidean"}}, seen
    assert [t for t, _ in _built(tmp_path / "default" / "model")] == [
        "Transformer", "Pooling", "Normalize", "Dense", "Dropout", "Normalize", "Dense", "Normalize"]
    seen.clear()
    result = train_siamese(_cfg(tiny_model, pairs_tsv, **{"optim.epochs": 1, **over}), tmp_path / "r", progress=False)
    built = _built(tmp_path / "r" / "model")
    kinds = [t for t, _ in built]
    stage = json.loads((tmp_path / "r" / "stage.json").read_text())
    if over.get("negatives.strategy") == "random":
        assert seen["negatives"] == [("random", (n, 1))], seen
    elif over.get("negatives.strategy") == "average":
        assert seen["negatives"] == [("average", (n, 3))], seen  # each negative averages 3 random targets
    elif over.get("negatives.use_negatives") == "false":
        assert "negatives" not in seen and stage["negatives"] == 0, (seen, stage)
    elif over.get("head.type") == "tanh2":
        assert seen["distances"] == {"manhattan"}, seen
        dense = [c for t, c in built if t == "Dense"]
        assert len(result.trained.head.fcs) == 2 and kinds.count("Dense") == 3, kinds  # two layers, then the center
        assert [c["activation_function"].rsplit(".", 1)[-1] for c in dense[:2]] == ["Tanh", "Tanh"], dense
    else:
        pooling = next(c for t, c in built if t == "Pooling")
        assert pooling["pooling_mode"] == "cls", pooling
        assert kinds == ["Transformer", "WeightedLayerPooling", "Pooling", "Normalize", "Dense", "Dropout",
                         "Normalize"], kinds  # every layer read; unit length only, no center
        assert result.trained.center is None
    texts = ["god is good", "mulungu ndi wabwino", "the river is wide"]
    st = SentenceTransformer(str(tmp_path / "r" / "model"), device="cpu")
    np.testing.assert_allclose(st.encode(texts), result.trained.encode(texts), atol=1e-5)
    assert np.abs(st.encode(texts) - default.trained.encode(texts)).max() > 1e-3, over


def test_too_few_pairs_is_a_clear_error(tiny_model, tmp_path):
    p = tmp_path / "one.tsv"
    p.write_text("god is good\tmulungu ndi wabwino\n", encoding="utf-8")
    with pytest.raises(XlsentError, match="only 1 pair"):
        train_siamese(_cfg(tiny_model, p), tmp_path / "r", progress=False)


def test_config_rejects_unknown_keys_and_reads_files(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("optim:\n  epochs: 9\n  lr: 3e-5\nhead:\n  type: tanh\n", encoding="utf-8")
    cfg = load_config("siamese", f, ["loss.margin=0.5"])
    assert cfg["optim"]["epochs"] == 9 and cfg["head"]["type"] == "tanh" and cfg["loss"]["margin"] == 0.5
    assert cfg["optim"]["lr"] == 3e-5  # "3e-5" is a number (PyYAML alone reads it as a string)
    assert load_config("siamese", None, ["optim.lr=2e-4"])["optim"]["lr"] == 2e-4
    # YAML 1.2 booleans: "off" stays a word (mcl.variant=off), "false" is a boolean
    ms = load_config("multistage", None, ["mcl.variant=off", "stages.stage1=false"])
    assert ms["mcl"]["variant"] == "off" and ms["stages"]["stage1"] is False
    assert load_config("siamese")["optim"]["lr"] == 5e-6 and cfg["features"]["layer"] == "auto"
    assert load_config("siamese", preset="paper")["features"]["layer"] == 7  # the paper's mBERT layer
    with pytest.raises(XlsentError, match="did you mean optim.epochs"):
        load_config("siamese", None, ["optim.epoch=3"])
    with pytest.raises(XlsentError, match="expected key=value"):
        load_config("siamese", None, ["optim.epochs"])
