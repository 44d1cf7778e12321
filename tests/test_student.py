"""The ALBERT student: exact copy of the assistant, bias-free bottleneck, recurrence order, sizes, reload."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from xlsent.models.student import build_student_st, load_student, size_report


@pytest.fixture(scope="module")
def assistant(tmp_path_factory):
    from conftest import build_tiny_model
    from sentence_transformers import SentenceTransformer

    path = build_tiny_model(tmp_path_factory.mktemp("a") / "asst", layers=4, hidden=32, seed=3, prompt="passage: ")
    return SentenceTransformer(str(path), device="cpu")


TEXTS = ["god is good and the river is wide", "mulungu ndi wabwino madzi", "he said unto them"]


def test_full_copy_without_bottleneck_reproduces_the_assistant(assistant):
    student = build_student_st(assistant, ru_layers=4, repeats=1, bottleneck=None, positions="copy")
    np.testing.assert_allclose(student.encode(TEXTS), assistant.encode(TEXTS), atol=1e-5)
    assert student.prompts == assistant.prompts


def test_bottleneck_is_bias_free_with_expected_shapes(assistant):
    student = build_student_st(assistant, ru_layers=2, repeats=2, bottleneck=8)
    albert = student[0].auto_model
    vocab = assistant[0].auto_model.config.vocab_size
    assert tuple(albert.embeddings.word_embeddings.weight.shape) == (vocab, 8)
    proj = albert.encoder.embedding_hidden_mapping_in
    assert tuple(proj.weight.shape) == (32, 8)
    assert torch.count_nonzero(proj.bias) == 0 and not proj.bias.requires_grad
    # SVD init: the projection's columns are orthonormal principal directions
    np.testing.assert_allclose((proj.weight.T @ proj.weight).detach().numpy(), np.eye(8), atol=1e-5)
    # one optimiser step leaves the bias at zero
    opt = torch.optim.AdamW([p for p in student.parameters() if p.requires_grad], lr=1e-2)
    out = student(student.preprocess(TEXTS))["sentence_embedding"]
    out.sum().backward()
    opt.step()
    assert torch.count_nonzero(proj.bias) == 0


def test_recurrence_runs_layers_1_to_M_repeatedly(assistant):
    student = build_student_st(assistant, ru_layers=2, repeats=3, bottleneck=8)
    order = []
    layers = student[0].auto_model.encoder.albert_layer_groups[0].albert_layers
    hooks = [layer.register_forward_hook(lambda m, i, o, k=k: order.append(k)) for k, layer in enumerate(layers)]
    student.encode(TEXTS[:1])
    for h in hooks:
        h.remove()
    assert order == [0, 1, 0, 1, 0, 1]
    # the recurring unit is the assistant's first M layers
    a0 = assistant[0].auto_model.encoder.layer[1].attention.self.query.weight
    assert torch.equal(layers[1].attention.query.weight, a0)


def test_size_report_counts_embedding_and_shared_encoder_once(assistant):
    c = assistant[0].auto_model.config
    student = build_student_st(assistant, ru_layers=2, repeats=3, bottleneck=8)
    rep = size_report(student[0].auto_model)
    b, h = 8, c.hidden_size
    expected_emb = c.vocab_size * b + c.max_position_embeddings * b + c.type_vocab_size * b + 2 * b + h * b + h
    assert rep.embedding == expected_emb
    per_layer = sum(p.numel() for p in assistant[0].auto_model.encoder.layer[0].parameters())
    assert rep.encoder == 2 * per_layer and rep.unique_layers == 2 and rep.layer_passes == 6
    base = size_report(assistant[0].auto_model)
    assert base.encoder == 4 * per_layer and base.layer_passes == 4


def test_saved_student_loads_in_fresh_process_with_identical_embeddings(assistant, tmp_path):
    student = build_student_st(assistant, ru_layers=2, repeats=2, bottleneck=8)
    student.save(str(tmp_path / "s"))
    ours = student.encode(TEXTS)
    code = (
        "import json; from sentence_transformers import SentenceTransformer; "
        f"m = SentenceTransformer({str(tmp_path / 's')!r}, device='cpu'); print(json.dumps(m.encode({TEXTS!r}).tolist()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    np.testing.assert_allclose(np.array(json.loads(out.stdout.strip().splitlines()[-1])), ours, atol=1e-6)
    types = [m["type"] for m in json.loads((tmp_path / "s" / "modules.json").read_text())]
    assert all(t.startswith("sentence_transformers.") for t in types)
    # stage-2 view of the same weights: no layers, no normalisation
    s0 = load_student(tmp_path / "s", repeats=0, normalize=False)
    assert s0[0].auto_model.config.num_hidden_layers == 0 and len(s0) == 2


def test_token_level_alignment_fits_the_embedding_layer(assistant):
    from xlsent.models.student import align_bottleneck_tokens

    student = build_student_st(assistant, ru_layers=2, repeats=0, bottleneck=8, normalize=False)
    curve = align_bottleneck_tokens(student[0].auto_model, assistant[0].auto_model, steps=200, batch_size=256,
                                    lr=1e-2, max_position=16)
    assert curve[-1] < 0.5 * curve[0]
    proj = student[0].auto_model.encoder.embedding_hidden_mapping_in
    assert torch.count_nonzero(proj.bias) == 0


def test_corpus_weighted_svd_reconstructs_corpus_tokens_better(assistant):
    from xlsent.models.student import count_tokens, principal_directions

    tok = assistant[0].tokenizer
    vocab = assistant[0].auto_model.config.vocab_size
    counts = count_tokens(tok, TEXTS * 5, vocab)
    ids = tok(TEXTS, add_special_tokens=True)["input_ids"]
    assert counts.sum().item() == 5 * sum(len(x) for x in ids)
    assert counts[ids[0][1]].item() >= 5
    table = assistant[0].auto_model.embeddings.word_embeddings.weight.detach().double()
    seen = counts > 0

    def corpus_error(p):
        r = table - table @ p.double() @ p.double().T
        return ((r**2).sum(1) * counts).sum() / ((table**2).sum(1) * counts).sum()

    plain = principal_directions(table, 4)
    weighted = principal_directions(table, 4, counts + 1.0)
    assert seen.sum() > 4 and corpus_error(weighted) < corpus_error(plain)
    student = build_student_st(assistant, ru_layers=2, repeats=1, bottleneck=4, init="svd-corpus", token_counts=counts)
    proj = student[0].auto_model.encoder.embedding_hidden_mapping_in.weight.detach().double()
    np.testing.assert_allclose(np.abs(proj.numpy()), np.abs(weighted.double().numpy()), atol=1e-5)
    with pytest.raises(Exception, match="token counts"):
        build_student_st(assistant, ru_layers=2, repeats=1, bottleneck=4, init="svd-corpus")


def test_token_alignment_with_corpus_counts_touches_only_drawn_rows(assistant):
    from xlsent.models.student import align_bottleneck_tokens

    student = build_student_st(assistant, ru_layers=2, repeats=0, bottleneck=8, normalize=False)
    table = student[0].auto_model.embeddings.word_embeddings.weight
    before = table.detach().clone()
    vocab = table.shape[0]
    counts = torch.zeros(vocab, dtype=torch.float64)
    counts[5:10] = 1.0
    align_bottleneck_tokens(student[0].auto_model, assistant[0].auto_model, steps=3, batch_size=4,
                            max_position=8, token_counts=counts)
    changed = (table.detach() != before).any(1)
    # 3 steps × (2 corpus draws among rows 5..9 + 2 uniform draws): sparse updates leave the rest as they were
    assert changed[5:10].any() and changed.sum() <= 3 * 4


def test_training_uses_the_models_default_prompt(assistant):
    from xlsent.recipes._trainer import training_prompt

    assert training_prompt(assistant) == "passage: "
    student = build_student_st(assistant, ru_layers=2, repeats=1, bottleneck=8)
    assert training_prompt(student) == "passage: "  # the student inherits it, and trains with it
    student.default_prompt_name = None
    assert training_prompt(student) is None
