"""Structural contrastive pretraining (Chen et al. 2023): extraction, the CL-MoCo loss and queues, the momentum
update, MLM masking, span offsets and the recipe on a tiny random BERT built in the test."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch



# ---------------------------------------------------------------- the loss (Eq. 6, 9–11) and the queue


def _unit(*rows):
    t = torch.tensor(rows, dtype=torch.float32)
    return t / t.norm(dim=-1, keepdim=True)


def _eq9(anchor, keys, queue, i, tau):
    """−log e^{Ψ(a_i,k_i)/τ} / (Σ_j e^{Ψ(a_i,k_j)/τ} + Σ_q e^{Ψ(a_i,q)/τ}), written out with math."""
    def cos(u, v):
        return float(u @ v) / (float(u.norm()) * float(v.norm()))
    num = math.exp(cos(anchor[i], keys[i]) / tau)
    den = sum(math.exp(cos(anchor[i], k) / tau) for k in keys) + sum(math.exp(cos(anchor[i], q) / tau) for q in queue)
    return -math.log(num / den)


RS = _unit([1.0, 0.2, 0.0], [0.1, 1.0, 0.3])
RT = _unit([0.9, 0.1, 0.2], [0.0, 0.8, 0.5])
KS = _unit([1.0, 0.0, 0.1], [0.2, 0.9, 0.1])
KT = _unit([0.8, 0.3, 0.0], [0.1, 1.0, 0.4])
QS = _unit([0.0, 0.0, 1.0], [0.5, 0.5, 0.0])
QT = _unit([0.3, 0.0, 0.9])


def _loaded_loss(variant, negatives="key", tau=0.5):
    from xlsent.losses.structural_contrastive_loss import StructuralContrastiveLoss

    loss = StructuralContrastiveLoss(3, variant, tau, queue_size=8, negatives=negatives)
    if variant == "cl-moco":
        loss.queue_s.push(QS)
    loss.queue_t.push(QT)
    return loss


@pytest.mark.parametrize("negatives", ["key", "printed"])
def test_cl_moco_loss_is_eq_9_to_11_with_the_queue(negatives):
    tau = 0.5
    loss = _loaded_loss("cl-moco", negatives, tau)
    got = float(loss(RS, RT, KS, KT, enqueue=False))
    q_st, q_ts = (QT, QS) if negatives == "key" else (QS, QT)  # Eq. 9 as printed: the source queue for s→t
    want = sum((_eq9(RS, KT, q_st, i, tau) + _eq9(RT, KS, q_ts, i, tau)) / 2 for i in range(2)) / 2  # mean over spans
    assert got == pytest.approx(want, rel=1e-5)


def test_moco_and_in_batch_losses():
    tau = 0.5
    moco = _loaded_loss("moco", tau=tau)
    assert float(moco(RS, RT, None, KT, enqueue=False)) == pytest.approx(
        sum(_eq9(RS, KT, QT, i, tau) for i in range(2)) / 2, rel=1e-5)
    assert len(moco.queue_s) == 0  # MoCo's slow encoder sees the target only: one queue
    inb = _loaded_loss("in-batch", tau=tau)
    assert float(inb(RS, RT)) == pytest.approx(
        sum((_eq9(RS, RT, [], i, tau) + _eq9(RT, RS, [], i, tau)) / 2 for i in range(2)) / 2, rel=1e-5)
    with pytest.raises(ValueError):
        moco(RS, RT)  # MoCo without slow vectors


def test_the_loss_pushes_the_slow_vectors_after_using_the_queue():
    loss = _loaded_loss("cl-moco")
    before = float(loss(RS, RT, KS, KT))  # computed with the old queues, then the keys are pushed
    assert len(loss.queue_s) == 4 and len(loss.queue_t) == 3
    assert torch.allclose(loss.queue_t.contents()[-2:], KT)
    assert float(loss(RS, RT, KS, KT, enqueue=False)) > before  # more negatives, higher loss
    fast = RS.clone().requires_grad_(True)
    loss(fast, RT, KS, KT).backward()
    assert fast.grad is not None and fast.grad.abs().sum() > 0


def test_queue_is_fifo_with_a_fixed_size():
    from xlsent.losses.structural_contrastive_loss import SpanQueue

    q = SpanQueue(5, 1)
    q.push(torch.tensor([[1.0], [2.0], [3.0]]))
    assert q.contents().flatten().tolist() == [1, 2, 3] and len(q) == 3
    q.push(torch.tensor([[4.0], [5.0], [6.0], [7.0]]))
    assert q.contents().flatten().tolist() == [3, 4, 5, 6, 7] and len(q) == 5  # the oldest two left first
    q.push(torch.arange(10, 17, dtype=torch.float32)[:, None])  # more than the queue holds: the newest 5
    assert q.contents().flatten().tolist() == [12, 13, 14, 15, 16]
    state = q.state_dict()
    r = SpanQueue(5, 1)
    r.load_state_dict(state)
    r.push(torch.tensor([[20.0]]))
    assert r.contents().flatten().tolist() == [13, 14, 15, 16, 20]


# ---------------------------------------------------------------- the momentum update


def test_momentum_update_in_both_conventions():
    from xlsent.models.span_encoder import momentum_update, slow_copy

    fast = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    fast[0].weight.requires_grad_(False)  # frozen: never moved (equal in both encoders)
    slow = slow_copy(fast)
    assert not any(p.requires_grad for p in slow.parameters())
    with torch.no_grad():
        for p in fast.parameters():
            p.add_(1.0)
    s_before = [p.clone() for p in slow.parameters()]
    f_now = [p.clone() for p in fast.parameters()]
    momentum_update(fast, slow, 0.99, "moco")
    after = list(slow.parameters())
    assert torch.equal(after[0], s_before[0])  # the frozen weight
    for k in (1, 2, 3):
        assert torch.allclose(after[k], 0.99 * s_before[k] + 0.01 * f_now[k])
    slow2 = slow_copy(fast)
    with torch.no_grad():
        for p in slow2.parameters():
            p.zero_()
    momentum_update(fast, slow2, 0.99, "printed")  # Eq. 5 as printed: λ on the fast encoder
    assert torch.allclose(list(slow2.parameters())[1], 0.99 * f_now[1])
    with pytest.raises(ValueError):
        momentum_update(fast, slow, 0.99, "other")


# ---------------------------------------------------------------- extraction on hand-made parses


def _parse(text, deps, heads, pos, ents=()):
    from xlsent.data.structural import Parse

    words = text.split()
    starts, at = [], 0
    for w in words:
        at = text.index(w, at)
        starts.append(at)
        at += len(w)
    return Parse(words, starts, deps, heads, pos, list(ents))


def test_extraction_filters_on_hand_made_parses():
    from xlsent.data.structural import extract

    stop = frozenset({"he", "the", "is", "was", "a", "of"})
    parses = [
        # Moses took the rod : subject Moses (also PERSON), verb took, object rod
        _parse("Moses took the rod", ["nsubj", "ROOT", "det", "dobj"], [1, 1, 3, 1], ["PROPN", "VERB", "DET", "NOUN"],
               [(0, 1, "PERSON")]),
        # he is : a stop-word subject and a stop-word verb → nothing left → pair dropped
        _parse("he is", ["nsubj", "ROOT"], [1, 1], ["PRON", "AUX"]),
        # seven-word entity, a numeric entity, a subject with punctuation
        _parse("A B C D E F G came in 3 days , - .", ["compound"] * 6 + ["nsubj", "ROOT", "prep", "nummod", "pobj",
                                                                        "punct", "nsubj", "punct"],
               [6] * 6 + [7, 7, 7, 10, 8, 7, 7, 7], ["PROPN"] * 7 + ["VERB", "ADP", "NUM", "NOUN", "PUNCT", "PUNCT",
                                                                     "PUNCT"],
               [(0, 7, "ORG"), (9, 11, "DATE")]),
    ]
    other = ["Mose anatenga ndodo", "iye ali", "X anabwera m'masiku atatu"]
    links = [
        {(0, 0), (1, 1), (3, 2)},
        set(),
        {(6, 0), (7, 1)},  # "G" → X; came → anabwera
    ]
    records, stats = extract(["Moses took the rod", "he is", "A B C D E F G came in 3 days , - ."], other, parses,
                             stop, links=links)
    assert stats.dropped["stop words only"] == 2
    assert stats.dropped["entity too long"] == 1
    assert stats.dropped["numeric entity"] == 1
    assert stats.dropped["punctuation"] == 1
    assert stats.pairs_without_spans == 1
    assert [r["id"] for r in records] == [0, 2]
    first = records[0]["spans"]
    assert {tuple(s["src"]): s["types"] for s in first} == {(0, 1): ["subject", "entity"], (1, 2): ["verb"],
                                                            (3, 4): ["object"]}
    rod = next(s for s in first if s["types"] == ["object"])
    assert rod["tgt"] == [2, 3] and rod["tgt_text"] == "ndodo" and rod["src_text"] == "rod"
    assert {tuple(s["src"]) for s in records[2 - 1]["spans"]} == {(6, 7), (7, 8)}  # G (subject), came (verb)
    assert stats.kept["subject"] == 2 and stats.kept["entity"] == 1
    assert any("stop words only" in n for n in stats.notes())


def test_alignment_rules_min_max_unaligned_too_long():
    from xlsent.data.structural import target_span

    words = ["a", "b", ",", "c", "d", "e", "f", "g", "h"]
    assert target_span({(0, 0), (1, 3)}, 0, 2, words) == (0, 4)  # non-contiguous → min..max
    assert target_span({(0, 1), (0, 2)}, 0, 1, words) == (1, 2)  # punctuation trimmed at the edge
    assert target_span({(5, 1)}, 0, 1, words) == "unaligned"
    assert target_span({(0, 0), (0, 8)}, 0, 1, words) == "too long"  # 9 words for 1: a stray link


# ---------------------------------------------------------------- offsets and masking


@pytest.fixture(scope="module")
def prompt_model(tmp_path_factory, make_tiny_model):
    return make_tiny_model(tmp_path_factory.mktemp("scp-models") / "tiny-prompt", layers=3, prompt="said : ")


def test_span_offsets_count_the_prompt(prompt_model):
    from transformers import AutoTokenizer

    from xlsent.data.structural import piece_offsets

    tok = AutoTokenizer.from_pretrained(str(prompt_model))
    text = "god is good and the river is wide"
    spans = [[0, 3], [7, 11], [16, 25]]  # god; good; the river
    assert piece_offsets(tok, [text], [spans], "")[0] == [[1, 1], [3, 3], [5, 6]]
    # "said : " is two pieces after [CLS]: every offset moves by two
    assert piece_offsets(tok, [text], [spans], "said : ")[0] == [[3, 3], [5, 5], [7, 8]]


def test_mlm_never_masks_structural_prompt_or_special_pieces(prompt_model):
    from transformers import AutoTokenizer, DataCollatorForLanguageModeling

    from xlsent.recipes.scp import masked_batch

    tok = AutoTokenizer.from_pretrained(str(prompt_model))
    rows = [tok("said : god is good and the river is wide")["input_ids"], tok("said : mulungu ndi wabwino")["input_ids"]]
    keep = [[1, 2, 3, 5, 6], [1, 2, 3]]  # prompt + structural pieces
    coll = DataCollatorForLanguageModeling(tok, mlm_probability=1.0)  # mask everything allowed
    coll.generator = torch.Generator().manual_seed(0)
    for _ in range(20):
        x, labels = masked_batch(coll, rows, keep, tok, tok.pad_token_id)
        for k, (r, kp) in enumerate(zip(rows, keep)):
            for pos in kp + [0, len(r) - 1]:  # structural, prompt, [CLS], [SEP]
                assert int(x[k, pos]) == r[pos] and int(labels[k, pos]) == -100
            assert (labels[k, len(r):] == -100).all()  # padding
        assert (labels[0, [4, 7, 8, 9]] != -100).all()  # the rest is masked (labels set)


# ---------------------------------------------------------------- the recipe


def _spans_file(tmp_path: Path, model: Path) -> Path:
    """A structural-words file written the way the CLI writes it (hand-made spans, this model's offsets)."""
    from transformers import AutoTokenizer

    from xlsent.data.structural import add_piece_offsets, tokenizer_fingerprint, write_spans

    import random

    rng = random.Random(0)
    en_nouns = ["god", "water", "light", "earth", "heaven", "river", "lord"]
    ny_nouns = ["mulungu", "madzi", "kuwala", "dziko", "kumwamba", "mtsinje", "chala"]
    records = []
    for k in range(24):
        a, b = rng.sample(range(len(en_nouns)), 2)
        en = f"{en_nouns[a]} said unto {en_nouns[b]}"
        ny = f"{ny_nouns[a]} ndi {ny_nouns[b]}"
        sa, sb = len(en_nouns[a]), len(en) - len(en_nouns[b])
        ta, tb = len(ny_nouns[a]), len(ny) - len(ny_nouns[b])
        records.append({"id": k, "src": en, "tgt": ny, "spans": [
            {"types": ["subject"], "src": [0, 1], "tgt": [0, 1], "src_chars": [0, sa], "tgt_chars": [0, ta]},
            {"types": ["object"], "src": [3, 4], "tgt": [2, 3], "src_chars": [sb, len(en)], "tgt_chars": [tb, len(ny)]},
        ]})
    tok = AutoTokenizer.from_pretrained(str(model))
    add_piece_offsets(records, tok, "")
    path = tmp_path / "spans.jsonl"
    write_spans(path, records, {"model": str(model), "prompt": "", "tokenizer": tokenizer_fingerprint(tok)})
    return path


def _cfg(model: Path, spans: Path, *sets: str):
    from xlsent.recipes.config import load_config

    return load_config("scp", None, [f"models.base={model}", f"train.spans={spans}", "train.sample=0",
                                     "models.max_seq_length=32", "scp.queue_size=16", "scp.train_layers=2",
                                     "optim.batch_size=4", "optim.lr=1e-3", "optim.logging_steps=1",
                                     "eval.spans=", "eval.udhr=false", *sets])


def _alignment_gap(model: Path, records: list[dict]) -> float:
    """Mean cosine of aligned span pairs minus the mean over all source × target span pairs."""
    from sentence_transformers import SentenceTransformer

    from xlsent.evaluation.spans import _states_vectors

    st = SentenceTransformer(str(model), device="cpu")
    enc, tok = st[0].auto_model.eval(), st.tokenizer
    vec = {side: _states_vectors(enc, tok, [r[side] for r in records],
                                 [[x[f"{side}_pieces"] for x in r["spans"]] for r in records], "", 32, 8)[0]
           for side in ("src", "tgt")}
    sim = vec["src"] @ vec["tgt"].T
    return float(sim.diagonal().mean() - sim.mean())


@pytest.mark.parametrize("variant", ["cl-moco", "moco", "in-batch"])
def test_recipe_trains_and_saves_a_sentence_transformer(tiny_model, tmp_path, variant):
    from xlsent.data.structural import read_spans
    from xlsent.recipes.scp import train_scp

    spans = _spans_file(tmp_path, tiny_model)
    cfg = _cfg(tiny_model, spans, f"scp.variant={variant}", "optim.epochs=2", "mlm.enabled=true")
    notes = []
    out = train_scp(cfg, tmp_path / "run", notes.append, progress=False).model_path
    log = [json.loads(x) for x in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    assert len(log) == 12 and all(math.isfinite(e["loss"]) for e in log)
    assert log[-1]["queue_t"] == (0 if variant == "in-batch" else 16)
    assert log[-1]["queue_s"] == (16 if variant == "cl-moco" else 0)
    assert log[0]["mlm"] > 0
    records, _ = read_spans(spans)
    assert _alignment_gap(out, records) > _alignment_gap(tiny_model, records) + 0.01  # aligned spans pulled together
    assert any("layers 2–3 trained" in n for n in notes)
    code = (f"from sentence_transformers import SentenceTransformer; m = SentenceTransformer({str(out)!r}); "
            "print(m.encode(['god said unto water']).shape)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "(1, 32)" in res.stdout


def test_recipe_without_mlm_changes_only_the_top_layers(tiny_model, tmp_path):
    from safetensors.torch import load_file

    from xlsent.recipes.scp import train_scp

    spans = _spans_file(tmp_path, tiny_model)
    out = train_scp(_cfg(tiny_model, spans, "mlm.enabled=false", "optim.max_steps=3"), tmp_path / "run", progress=False).model_path
    log = [json.loads(x) for x in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    assert all(e["mlm"] == 0 for e in log)
    before, after = load_file(str(tiny_model / "model.safetensors")), load_file(str(out / "model.safetensors"))
    assert torch.equal(before["embeddings.word_embeddings.weight"], after["embeddings.word_embeddings.weight"])
    assert torch.equal(before["encoder.layer.0.attention.self.query.weight"],
                       after["encoder.layer.0.attention.self.query.weight"])
    assert not torch.equal(before["encoder.layer.2.attention.self.query.weight"],
                           after["encoder.layer.2.attention.self.query.weight"])


def test_resume_restores_queues_and_momentum_encoder(tiny_model, tmp_path):
    from xlsent.training.run_folder import StageFolder
    from xlsent.recipes.scp import train_scp

    spans = _spans_file(tmp_path, tiny_model)
    cfg = _cfg(tiny_model, spans, "optim.epochs=2", "optim.checkpoint_every=5", "mlm.enabled=true")
    full = train_scp(cfg, tmp_path / "a", progress=False)
    saved = {}
    orig = StageFolder.save_state

    def stop_after_first(self, state):
        orig(self, state)
        saved.update(state)
        raise KeyboardInterrupt

    StageFolder.save_state = stop_after_first
    try:
        with pytest.raises(KeyboardInterrupt):
            train_scp(cfg, tmp_path / "b", progress=False)
    finally:
        StageFolder.save_state = orig
    assert saved["step"] == 5
    own = saved["recipe"]  # the recipe's own state in the one loop's checkpoint
    assert int(own["loss"]["queue_t.count"]) == 16 and own["slow"]  # queues and the momentum encoder saved
    resumed = train_scp(cfg, tmp_path / "b", progress=False)
    from safetensors.torch import load_file

    a, b = load_file(str(full.model_path / "model.safetensors")), load_file(str(resumed.model_path / "model.safetensors"))
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)
    la = [json.loads(x) for x in (tmp_path / "a" / "train_log.jsonl").read_text().splitlines()]
    lb = [json.loads(x) for x in (tmp_path / "b" / "train_log.jsonl").read_text().splitlines()]
    assert [round(e["loss"], 4) for e in la] == [round(e["loss"], 4) for e in lb]  # same queues → same losses


def test_offsets_recomputed_for_another_tokenizer(tiny_model, prompt_model, tmp_path):
    from transformers import AutoTokenizer

    from xlsent.data.structural import read_spans
    from xlsent.recipes.scp import prepare

    records, meta = read_spans(_spans_file(tmp_path, tiny_model))
    tok = AutoTokenizer.from_pretrained(str(prompt_model))
    data = prepare(records, meta, tok, "said : ", 32)
    assert any("recomputed" in n for n in data.notes)
    assert data.src_spans[0][0] == (3, 3)  # the subject noun after [CLS] said :
    assert data.keep_src[0][:2] == [1, 2]  # the prompt is never masked


def test_span_retrieval_evaluator(tiny_model, tmp_path):
    from xlsent.data.structural import read_spans
    from xlsent.evaluation.spans import span_retrieval

    records, _ = read_spans(_spans_file(tmp_path, tiny_model))
    from xlsent.models.handle import load_model

    h = load_model(tiny_model)
    res = span_retrieval(h.model, h.prompt, records, bootstrap=50, name="tiny")
    assert res.spans == 48 and res.left_out == 0 and res.by_type["subject"].n > 0
    r = res.to_dict()  # the JSON shape metrics.json and `xlsent eval spans -o` keep
    assert len(r["src2tgt"]["ci95"]) == 2 and r["src2tgt"]["ci95"][0] <= r["src2tgt"]["p@1"] <= r["src2tgt"]["ci95"][1]
    assert set(r["by_type"]) == {"subject", "object"} and set(r["by_type"]["object"]) == {"n", "src2tgt", "tgt2src"}
    # cases whose answer is known: each English sentence as its own translation (24 different sentences), so every
    # span's vector is its aligned span's — P@1 is 1 both ways; with the two spans of the first 6 sentences aligned
    # crosswise (subject with object), those 12 spans find their own text, not the aligned one: P@1 is 36/48
    import copy
    import itertools

    nouns = ["god", "water", "light", "earth", "heaven", "river", "lord"]
    same = []
    for k, (a, b) in enumerate(itertools.islice(itertools.permutations(nouns, 2), 24)):
        en = f"{a} said unto {b}"
        kinds = ["subject", "entity"] if k < 12 else ["subject"]  # by type: 6 of the 12 entities are crossed
        subj = {"types": kinds, "src": [0, 1], "tgt": [0, 1], "src_chars": [0, len(a)], "tgt_chars": [0, len(a)]}
        obj = {"types": ["object"], "src": [3, 4], "tgt": [3, 4], "src_chars": [len(en) - len(b), len(en)],
               "tgt_chars": [len(en) - len(b), len(en)]}
        same.append({"id": k, "src": en, "tgt": en, "spans": [subj, obj]})
    crossed = copy.deepcopy(same)
    for rec in crossed[:6]:
        subj, obj = rec["spans"]
        subj["tgt"], obj["tgt"] = obj["tgt"], subj["tgt"]
        subj["tgt_chars"], obj["tgt_chars"] = obj["tgt_chars"], subj["tgt_chars"]
    for records, want, want_entity in ((same, 1.0, 1.0), (crossed, 36 / 48, 6 / 12)):
        got = span_retrieval(h.model, h.prompt, records, bootstrap=0, name="tiny")
        assert got.spans == 48 and got.left_out == 0
        assert got.src2tgt.p_at_1 == got.tgt2src.p_at_1 == pytest.approx(want), got
        assert got.by_type["subject"].n == 24 and got.by_type["subject"].src2tgt == pytest.approx(want), got
        assert got.by_type["entity"].n == 12 and got.by_type["entity"].tgt2src == pytest.approx(want_entity), got


def test_structural_words_cli_with_a_parse_given(tiny_model, tmp_path, pairs_tsv, monkeypatch):
    """The CLI end to end with spaCy's parse replaced by a hand-made one (spaCy is an optional extra)."""
    from typer.testing import CliRunner

    from xlsent.cli.main import app
    from xlsent.data import structural as sw

    def fake_parse(texts, batch_size=256, progress=None):
        out = []
        for t in texts:
            n = len(t.split())
            out.append(_parse(t, ["nsubj", "ROOT"] + ["dobj"] * (n - 2), [1, 1] + [1] * (n - 2),
                              ["NOUN", "VERB"] + ["NOUN"] * (n - 2)))
        return out

    monkeypatch.setattr(sw, "parse_english", fake_parse)
    out = tmp_path / "spans.jsonl"
    res = CliRunner().invoke(app, ["data", "structural-words", str(pairs_tsv), "-o", str(out), "-m", str(tiny_model)])
    assert res.exit_code == 0, res.output
    records, meta = sw.read_spans(out)
    assert meta["counts"]["pairs"] == 40 and meta["tokenizer"]
    assert all(s["src_pieces"] is not None for r in records for s in r["spans"])
    assert "filters dropped" in res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"src": "a"}\n')
    res = CliRunner().invoke(app, ["train", "scp", "-o", str(tmp_path / "r"), "--set", f"train.spans={bad}",
                                   "--set", f"models.base={tiny_model}"])
    assert res.exit_code != 0


def test_eval_spans_cli(tiny_model, tmp_path):
    from typer.testing import CliRunner

    from xlsent.cli.main import app

    spans = _spans_file(tmp_path, tiny_model)
    out = tmp_path / "spans.json"
    res = CliRunner().invoke(app, ["eval", "spans", "-m", str(tiny_model), "--spans", str(spans), "--resamples", "20",
                                   "-o", str(out)])
    assert res.exit_code == 0, res.output
    r = json.loads(out.read_text())["results"][0]
    assert r["spans"] == 48 and "subject" in r["by_type"]
    res = CliRunner().invoke(app, ["eval", "spans", "-m", str(tiny_model), "--spans", str(tmp_path / "none.jsonl")])
    assert res.exit_code != 0 and "no such file" in str(res.exception)  # main() prints it as one line
