"""Distillation recipes end to end on tiny models: X-KD, triplet KD, multi-stage (resume), CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from conftest import build_tiny_model
from xlsent.recipes.config import load_config

TEXTS = ["god is good and the river is wide", "mulungu ndi wabwino madzi", "he said unto them"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("distill")
    return {"teacher": build_tiny_model(root / "teacher", layers=2, seed=1),
            "assistant": build_tiny_model(root / "assistant", layers=4, seed=2, prompt="passage: ")}


def _fresh_process_embeddings(path) -> np.ndarray:
    code = (
        "import json; from sentence_transformers import SentenceTransformer; "
        f"m = SentenceTransformer({str(path)!r}, device='cpu'); print(json.dumps(m.encode({TEXTS!r}).tolist()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return np.array(json.loads(out.stdout.strip().splitlines()[-1]))


def _common(models, pairs_tsv) -> list[str]:
    return [f"models.teacher={models['teacher']}", f"train.pairs={pairs_tsv}", "optim.batch_size=8", "optim.epochs=2",
            "optim.lr=1e-3", f"eval.pairs={pairs_tsv}", "eval.udhr=false", "eval.sample=0"]


def test_xkd_trains_reduces_mse_and_reloads(models, pairs_tsv, tmp_path):
    from sentence_transformers import SentenceTransformer

    from xlsent.recipes.xkd import train_xkd

    cfg = load_config("xkd", overrides=[*_common(models, pairs_tsv), f"models.student={models['assistant']}", "optim.epochs=4"])
    path = train_xkd(cfg, tmp_path / "run", progress=False).model_path
    log = [json.loads(x) for x in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    losses = [e["loss"] for e in log if "loss" in e]
    assert losses[-1] < losses[0]
    st = SentenceTransformer(str(path), device="cpu")
    np.testing.assert_allclose(_fresh_process_embeddings(path), st.encode(TEXTS), atol=1e-6)
    assert (tmp_path / "run" / "config.yaml").exists() and (tmp_path / "run" / "stage.json").exists()


def test_triplet_kd_from_triplet_file(models, tmp_path):
    from sentence_transformers import SentenceTransformer

    from xlsent.recipes.triplet_kd import train_triplet_kd

    trip = tmp_path / "triplets.tsv"
    rows = [("mulungu ndi wabwino", "god is good", "the river is wide"), ("mtsinje madzi", "the river water", "god is good"),
            ("kuwala dziko", "light earth", "he said unto them"), ("chala nyumba", "a house", "light earth")] * 4
    trip.write_text("anchor\tpositive\tnegative\n" + "".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    cfg = load_config("triplet-kd", overrides=[f"models.teacher={models['teacher']}", f"models.student={models['assistant']}",
                                               f"train.triplets={trip}", "optim.batch_size=4", "optim.epochs=3",
                                               "optim.lr=1e-3"])
    path = train_triplet_kd(cfg, tmp_path / "run", progress=False).model_path
    st = SentenceTransformer(str(path), device="cpu")
    np.testing.assert_allclose(_fresh_process_embeddings(path), st.encode(TEXTS), atol=1e-6)


class _Interrupt(Exception):
    pass


def _multistage_cfg(models, pairs_tsv, *extra):
    return load_config("multistage", overrides=[
        *_common(models, pairs_tsv), f"models.assistant={models['assistant']}", "models.student.bottleneck=8", "models.student.ru_layers=2",
        "models.student.repeats=2", "stage1.epochs=1", "stage2.epochs=1", "stage3.epochs=2", "stage4.epochs=1",
        "optim.checkpoint_every=1", *extra])


def test_multistage_interrupted_stage_resumes_and_finished_stages_are_skipped(models, pairs_tsv, tmp_path):
    from transformers import TrainerCallback

    from xlsent.models.student import size_report
    from xlsent.recipes.multistage import STAGES, train_multistage

    class StopInStage3(TrainerCallback):
        def on_save(self, args, state, control, **kw):
            if "stage3" in args.output_dir and state.global_step == 2:
                raise _Interrupt()

    out = tmp_path / "run"
    cfg = _multistage_cfg(models, pairs_tsv)
    with pytest.raises(_Interrupt):
        train_multistage(cfg, out, progress=False, callbacks=[StopInStage3()])
    assert (out / STAGES[1] / "stage.json").exists() and not (out / STAGES[2] / "stage.json").exists()
    assert (out / STAGES[2] / "checkpoints" / "checkpoint-2").exists()
    done = {s: (out / s / "stage.json").stat().st_mtime_ns for s in STAGES[:2]}

    notes: list[str] = []
    result = train_multistage(cfg, out, on_note=notes.append, progress=False)
    text = "\n".join(notes)
    assert "stage1-assistant: finished earlier with this config — skipping" in text
    assert "stage2-embedding: finished earlier with this config — skipping" in text
    assert "resuming from" in text and "checkpoint-2" in text
    assert {s: (out / s / "stage.json").stat().st_mtime_ns for s in STAGES[:2]} == done
    rec3 = json.loads((out / STAGES[2] / "stage.json").read_text())
    assert rec3["steps"] == 10  # 40 pairs / batch 8 × 2 epochs, counted across the interruption
    # the final student: smaller, every stage saved, loads in a fresh process with the same embeddings
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(result.model_path), device="cpu")
    np.testing.assert_allclose(_fresh_process_embeddings(result.model_path), st.encode(TEXTS), atol=1e-6)
    assert size_report(st[0].auto_model).layer_passes == 4
    assert result.sizes["student_share_of_assistant"] < 1
    for s in STAGES:
        assert (out / s / "model" / "modules.json").exists()
    # a changed stage-4 setting reruns stage 4 only
    notes: list[str] = []
    train_multistage(_multistage_cfg(models, pairs_tsv, "mcl.variant=bool"), out, on_note=notes.append, progress=False)
    text = "\n".join(notes)
    assert "stage3-recurrence: finished earlier" in text and "stage 4 — MCL (bool)" in text


def test_single_stage_baselines_run(models, pairs_tsv, tmp_path):
    from xlsent.recipes.multistage import STAGES, train_multistage

    r = train_multistage(_multistage_cfg(models, pairs_tsv, "stages.mode=single-random"), tmp_path / "r", progress=False)
    assert set(r.stages) == {STAGES[3]}  # no stage-1 assistant trained: the one given is used
    r = train_multistage(_multistage_cfg(models, pairs_tsv, "stages.mode=single-predistill"), tmp_path / "p", progress=False)
    assert STAGES[0] not in r.stages and STAGES[2] in r.stages


def test_multistage_xlsent_options_run_end_to_end(models, pairs_tsv, tmp_path):
    """svd-corpus init + token-level stage 2 + contrastive stage 3 + stage-4 InfoNCE (the compress preset's options)."""
    from sentence_transformers import SentenceTransformer

    from xlsent.recipes.multistage import STAGES, train_multistage

    cfg = _multistage_cfg(models, pairs_tsv, "stages.stage1=false", "models.student.init=svd-corpus", "stage2.objective=token",
                          "stage2.token_steps=60", "stage3.loss=contrastive", "mcl.infonce_weight=1.0")
    r = train_multistage(cfg, tmp_path / "o", progress=False)
    rec2 = json.loads((tmp_path / "o" / STAGES[1] / "stage.json").read_text())
    curve = rec2["token_alignment_relative_mse"]
    assert rec2["steps"] == 60 and curve[-1] < curve[0]  # the corpus-weighted alignment fits
    assert STAGES[0] not in r.stages and STAGES[2] in r.stages
    st = SentenceTransformer(str(r.model_path), device="cpu")
    assert np.isfinite(st.encode(TEXTS)).all() and st.get_embedding_dimension() == 32
    with pytest.raises(Exception, match="stage3.loss='huber': not an allowed value — use one of mse, contrastive"):
        _multistage_cfg(models, pairs_tsv, "stages.stage1=false", "stage3.loss=huber")  # refused before training


def test_multistage_monolingual_text_joins_stages_2_and_3(models, pairs_tsv, tmp_path):
    """train.monolingual: read with blank lines and repeats counted, two sentences to a stage-3 row; bad paths named."""
    from xlsent.recipes.multistage import STAGES, train_multistage
    from xlsent.utils.errors import XlsentError

    mono = tmp_path / "mono.txt"
    mono.write_text("Ngeyomntu onelungelo.\n\nKonke abantu bazalwa bekhululekile.\nNgeyomntu onelungelo.\n"
                    "Sonke siyalingana.\nUmthetho uyasivikela.\nAkekho oyisigqila.\nImfundo ingeyethu sonke.\n"
                    "Umndeni uyisisekelo.\n", encoding="utf-8")
    base = ["stages.stage1=false", "models.student.init=svd-corpus", "stage2.objective=token", "stage2.token_steps=20",
            "stage3.loss=contrastive", "optim.epochs=1"]
    notes: list[str] = []
    train_multistage(_multistage_cfg(models, pairs_tsv, *base, f"train.monolingual={mono}"), tmp_path / "o",
                     on_note=notes.append, progress=False)
    text = "\n".join(notes)
    assert "skipped 1 line(s): blank line" in text and "skipped 1 line(s): exact repeat" in text
    assert "7 monolingual sentences for stages 2–3" in text
    rec3 = json.loads((tmp_path / "o" / STAGES[2] / "stage.json").read_text())
    assert rec3["examples"] == 40 + 4  # 40 pairs + 7 sentences two to a row (the last paired with the first)
    # another text reruns stages 2–3; a sample of it is seeded and reported
    notes: list[str] = []
    train_multistage(_multistage_cfg(models, pairs_tsv, *base, f"train.monolingual={mono}", "train.monolingual_sample=4"),
                     tmp_path / "o", on_note=notes.append, progress=False)
    text = "\n".join(notes)
    assert "sampled 4 of 7 sentences (seed 0)" in text and "stage2-embedding: finished earlier" not in text
    assert json.loads((tmp_path / "o" / STAGES[2] / "stage.json").read_text())["examples"] == 40 + 2
    with pytest.raises(XlsentError, match="nope.txt': no such file"):  # refused when the config is read
        _multistage_cfg(models, pairs_tsv, *base, f"train.monolingual={tmp_path / 'nope.txt'}")


def _cli(*args):
    from test_cli import xlsent

    return xlsent(*args)


def test_cli_presets_and_errors():
    p = _cli("train", "multistage", "-o", "x", "--preset", "small", "--show-config")
    assert p.returncode == 0 and "sample: 20000" in p.stdout
    p = _cli("train", "xkd", "-o", "x", "--preset", "huge")
    assert p.returncode == 2 and "unknown preset 'huge' for xkd — available: paper, small" in p.stderr
    p = _cli("train", "triplet-kd", "-o", "x", "--set", "loss.margn=2")
    assert p.returncode == 2 and "did you mean loss.margin" in p.stderr


def test_cli_eval_sts_triplet_mse(tiny_model, tmp_path, pairs_tsv):
    sts = tmp_path / "sts.tsv"
    sts.write_text("god is good\tmulungu ndi wabwino\t4.5\nthe river\tmtsinje\t4\nhe said\tchala\t0.5\nwater\tmadzi\t4.8\n",
                   encoding="utf-8")
    p = _cli("eval", "sts", "-m", str(tiny_model), "-d", str(sts), "-o", str(tmp_path / "sts.json"), "--resamples", "100")
    assert p.returncode == 0, p.stderr
    res = json.loads((tmp_path / "sts.json").read_text())
    assert set(res) >= {"cosine", "euclidean", "manhattan", "dot"} and res["n"] == 4
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\t7\n", encoding="utf-8")
    p = _cli("eval", "sts", "-m", str(tiny_model), "-d", str(bad))
    assert p.returncode == 2 and "bad.tsv:1: score 7 outside 0–5" in p.stderr and "Traceback" not in p.stderr
    trip = tmp_path / "t.tsv"
    trip.write_text("mulungu ndi wabwino\tgod is good\tthe river\nmtsinje madzi\tthe river water\tgod is good\n", encoding="utf-8")
    p = _cli("eval", "triplet", "-m", str(tiny_model), "--triplets", str(trip), "--plot", str(tmp_path / "len.png"),
             "-o", str(tmp_path / "t.json"), "--chunk-words", "2", "--resamples", "100")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "len.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "t.json").read_text())["accuracy"]["max"]["of"] in ("cosine", "manhattan", "euclidean")
    p = _cli("eval", "mse", "-m", str(tiny_model), "-t", str(tiny_model), "--pairs", str(pairs_tsv), "-o", str(tmp_path / "m.json"))
    assert p.returncode == 0, p.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    from sentence_transformers import SentenceTransformer

    from xlsent.data.readers import read_tsv

    ds, _ = read_tsv(pairs_tsv)  # the student is the teacher: its English is the teacher's; the other side, by hand
    st = SentenceTransformer(str(tiny_model), device="cpu")
    src, tgt = st.encode(ds["src"]).astype(np.float64), st.encode(ds["tgt"]).astype(np.float64)
    assert m["n"] == 40 and m["mse_src"] == pytest.approx(0.0, abs=1e-12)
    assert m["mse_tgt"] == pytest.approx(((tgt - src) ** 2).mean(), rel=1e-4) and m["mse_tgt"] > 1e-4
    assert m["mse_tgt_x100"] == pytest.approx(100 * m["mse_tgt"])


def test_cli_data_triplets_writes_a_readable_file(tmp_path):
    from xlsent.data.triplets import read_triplets

    p = _cli("data", "triplets", "bible-en-ny:test", "-o", str(tmp_path / "t.tsv"))
    assert p.returncode == 0, p.stderr
    ds, _ = read_triplets(tmp_path / "t.tsv")
    assert len(ds) == 7957 and ds[0]["positive"].startswith("The book of the generation")


def test_evaluate_models_matches_direct_evaluation(models, pairs_tsv):
    from sentence_transformers import SentenceTransformer

    from xlsent.data.readers import read_tsv
    from xlsent.evaluation.retrieval import evaluate_retrieval
    from xlsent.evaluation.triplet import evaluate_triplets
    from xlsent.cli.common import summary_table
    from xlsent.evaluation.suite import HeldOut, evaluate_held_out

    st = SentenceTransformer(str(models["assistant"]), device="cpu")
    e = {"pairs": str(pairs_tsv), "sample": 0, "similarity": "cosine", "udhr": False}
    from xlsent.encoding.encoder import Encoder

    held = evaluate_held_out({"a": Encoder.load(models["assistant"], memo=True)}, e,
                             Encoder.load(models["teacher"]), seed=0)
    assert HeldOut.from_dict(json.loads(json.dumps(held.to_dict()))).to_dict() == held.to_dict()  # the JSON schema
    m = held.to_dict()["models"]["a"]
    ds, _ = read_tsv(pairs_tsv)
    direct = evaluate_retrieval(ds["src"], ds["tgt"], lambda t: st.encode(t), similarity="cosine")
    assert m["retrieval"]["tgt2src"]["p@1"] == direct.tgt2src["p@1"]
    assert m["retrieval"]["src2tgt"]["p@5"] == direct.src2tgt["p@5"]
    from xlsent.data.triplets import build_triplets

    trip, _ = build_triplets(ds, "random", 0)
    t = evaluate_triplets(trip["anchor"], trip["positive"], trip["negative"], lambda x: st.encode(x), n_resamples=100)
    assert m["triplets"]["accuracy"]["cosine"]["accuracy"] == pytest.approx(t.accuracy["cosine"].accuracy)
    teacher = SentenceTransformer(str(models["teacher"]), device="cpu")  # MSE(S(t), T(s)), by hand
    by_hand = ((st.encode(ds["tgt"]).astype(np.float64) - teacher.encode(ds["src"]).astype(np.float64)) ** 2).mean()
    assert m["mse"]["mse_tgt"] == pytest.approx(by_hand, rel=1e-4) and by_hand > 1e-4
    assert summary_table({"models": {"a": m}}, "t").row_count == 1


def test_the_udhr_pool_of_the_held_out_evaluation_can_be_the_development_languages(models, pairs_tsv):
    """eval.udhr_pool=udhr-dev scores the 24 development declarations (for choosing a setting), never the 47."""
    from xlsent.data.bundled import load_bundled, split_by_language
    from xlsent.encoding.encoder import Encoder
    from xlsent.evaluation.suite import evaluate_held_out

    e = {"pairs": str(pairs_tsv), "sample": 0, "similarity": "cosine", "udhr": True, "udhr_pool": "udhr-dev"}
    held = evaluate_held_out({"a": Encoder.load(models["assistant"], memo=True)}, e)
    got = {r["tgt_lang"] for r in held.to_dict()["models"]["a"]["udhr"]["languages"]}
    dev = {p["tgt_lang"][0] for p in split_by_language(load_bundled("udhr-dev")).values()}
    test = {p["tgt_lang"][0] for p in split_by_language(load_bundled("udhr")).values()}
    assert got == dev and len(got) == 24 and not got & test


def test_stage2_token_objective(models, pairs_tsv, tmp_path):
    from xlsent.recipes.multistage import STAGES, train_multistage

    r = train_multistage(_multistage_cfg(models, pairs_tsv, "stages.stage1=false", "stage2.objective=token",
                                         "stage2.token_steps=20"), tmp_path / "t", progress=False)
    rec = json.loads((tmp_path / "t" / STAGES[1] / "stage.json").read_text())
    assert len(rec["token_alignment_relative_mse"]) >= 1 and (r.model_path / "modules.json").exists()
