"""ONNX export, int8, vocabulary trimming and the onnx backend, on tiny models built in the tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import WORDS, build_tiny_model

from xlsent.utils.errors import XlsentError


def _int8_dot_product_is_exact() -> bool:
    """False on an x86 CPU without VNNI (AVX2 only): there onnxruntime's u8s8 int8 MatMul adds pairs of products
    in saturating 16-bit arithmetic, so with outlier activations its result is not the exact int8 product
    the tests below compare against (onnxruntime documents reduce_range for such CPUs)."""
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return True
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return True
    return "avx512_vnni" in flags or "avx_vnni" in flags


exact_int8 = pytest.mark.skipif(not _int8_dot_product_is_exact(), reason="this CPU has no VNNI: onnxruntime's int8 "
                                "MatMul saturates 16-bit pair sums, so it is not the exact int8 product compared here")

TEXTS = ["god is good", "the river is wide and water", "mulungu ndi wabwino", "madzi", "unknownword xyz",
         " ".join(WORDS * 3)]  # the last one is cut at the model's 64 pieces


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def st_encode(path, texts=TEXTS) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu").encode(texts, convert_to_numpy=True)


def onnx_encode(folder, texts=TEXTS, batch_size: int = 4) -> np.ndarray:
    from xlsent.encoding.onnx_backend import OnnxBackend

    return OnnxBackend(folder, threads=1).embed(list(texts), batch_size=batch_size)


@pytest.fixture(scope="module")
def prompted_model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("m") / "prompted", prompt="passage : ")


def build_full_pipeline(path: Path) -> Path:
    """Every module our recipes write (the siamese recipe's export, the longest): the transformer cut to 2 of
    its 4 layers with hidden states, WeightedLayerPooling, Pooling, Normalize, a Dense head with an
    activation, Dropout, Normalize, a Dense centering (identity weight, bias −center), Normalize."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Dense, Normalize
    from sentence_transformers.sentence_transformer.modules import Dropout, Pooling, WeightedLayerPooling

    from xlsent.models.handle import load_transformer_module

    build_tiny_model(path.parent / (path.name + "-base"), layers=4, seed=3)
    tr = load_transformer_module(path.parent / (path.name + "-base-hf"), 2, hidden_states=True)
    torch.manual_seed(5)
    head = Dense(32, 16, activation_function=torch.nn.Tanh())
    center = Dense(16, 16, bias=True, activation_function=torch.nn.Identity())
    with torch.no_grad():
        center.linear.weight.copy_(torch.eye(16))
        center.linear.bias.copy_(-torch.randn(16) * 0.1)
    st = SentenceTransformer(modules=[tr, WeightedLayerPooling(32, num_hidden_layers=2, layer_start=1),
                                      Pooling(32, pooling_mode="mean"), Normalize(), head, Dropout(0.1), Normalize(),
                                      center, Normalize()], device="cpu")
    st.save(str(path))
    return path


def test_fp32_export_reproduces_the_model_with_its_prompt(prompted_model, tmp_path):
    from xlsent.encoding.onnx_folder import read_manifest
    from xlsent.exporter.folder import export_model

    out = tmp_path / "onnx"
    m = export_model(str(prompted_model), out, texts=TEXTS, log=lambda _: None)
    assert (out / "model.onnx").exists() and (out / "tokenizer.json").exists()
    assert read_manifest(out).prompt == "passage : " and m.normalizes
    assert cosines(onnx_encode(out), st_encode(prompted_model)).min() >= 0.99999
    assert m.checks["min_cosine_to_source"] >= 0.99999


def test_export_of_every_module_our_recipes_write(tmp_path):
    from xlsent.exporter.folder import export_model

    model = build_full_pipeline(tmp_path / "full")
    out = tmp_path / "onnx"
    export_model(str(model), out, texts=TEXTS, log=lambda _: None)
    ref = st_encode(model)
    got = onnx_encode(out)
    assert ref.shape == got.shape == (len(TEXTS), 16)
    assert cosines(got, ref).min() >= 0.99999
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)  # the final Normalize is in the graph


def test_batching_and_order_do_not_change_rows(prompted_model, tmp_path):
    from xlsent.exporter.folder import export_model

    out = tmp_path / "onnx"
    export_model(str(prompted_model), out, texts=TEXTS, log=lambda _: None)
    one = np.stack([onnx_encode(out, [t])[0] for t in TEXTS])
    assert np.allclose(one, onnx_encode(out, batch_size=3), atol=1e-5)


def test_a_token_budget_splits_a_batch_of_long_texts_and_keeps_every_row(prompted_model, tmp_path):
    from xlsent.encoding.onnx_backend import OnnxBackend
    from xlsent.exporter.folder import export_model

    out = tmp_path / "onnx"
    export_model(str(prompted_model), out, texts=TEXTS, log=lambda _: None)
    whole, capped = OnnxBackend(out, threads=1, batch_tokens=0), OnnxBackend(out, threads=1, batch_tokens=70)
    shapes = []
    run = capped.session.run
    capped.session.run = lambda names, feed: shapes.append(feed["input_ids"].shape) or run(names, feed)
    assert np.allclose(capped.embed(TEXTS, batch_size=6), whole.embed(TEXTS, batch_size=6), atol=1e-5)
    assert len(shapes) > 1 and all(b * w <= 70 or b == 1 for b, w in shapes)  # the 64-piece text runs alone
    assert shapes[0] == (1, 64) and sum(b for b, _ in shapes) == len(TEXTS)


def test_weight_only_int8_keeps_attention_matmuls_fp32(tiny_model, tmp_path):
    import onnx

    from xlsent.exporter.folder import export_model
    from xlsent.exporter.quantize import Int8Settings, select_nodes

    out = tmp_path / "q"
    m = export_model(str(tiny_model), out, texts=TEXTS, int8=Int8Settings(), keep_fp32=True, log=lambda _: None)
    proto = onnx.load(str(out / "model.fp32.onnx"))
    nodes, kept = select_nodes(proto, Int8Settings())
    assert len(nodes) == 3 * 6 and kept["attention_matmul"] == 3 * 2  # 6 linear layers and 2 attention products a layer
    q = onnx.load(str(out / "model.onnx"))
    ops = [n.op_type for n in q.graph.node]
    assert ops.count("MatMulInteger") == 18 and ops.count("MatMul") == 6
    assert m.int8["quantized_nodes"] == 18
    nodes, kept = select_nodes(proto, Int8Settings(fp32_parts=["ffn_out"], fp32_layers=[0]))
    assert len(nodes) == 2 * 5 and kept["fp32_part"] == 3 and kept["fp32_layer"] == 5  # a part is counted first
    nodes, kept = select_nodes(proto, Int8Settings(fp32_parts=["ffn_out@1", "query@2"]))
    assert len(nodes) == 16 and kept["fp32_part"] == 2
    assert not any(n.endswith("layer.1/output/dense/MatMul") or "layer.2/attention/self/query" in n for n in nodes)
    for bad in (["ffn_out@x"], ["ffn@1"]):
        with pytest.raises(XlsentError, match="PART@LAYER"):
            Int8Settings(fp32_parts=bad)
    # measured 0.9999987 (min 0.9999982) on this model; another random model scores −0.11: a broken graph cannot pass
    assert cosines(onnx_encode(out), st_encode(tiny_model)).min() > 0.999


def calibrated_graph(tiny_model: Path, tmp_path: Path):
    """The tiny model's fp32 export, its graph with one weight per MatMul, the int8 pass's weight MatMuls and their
    inputs' calibrated max |x| on TEXTS — what smoothing and the outlier split start from."""
    import onnx

    from xlsent.exporter.folder import export_model
    from xlsent.exporter.quantize import Int8Settings, untie_weights, tokenizer_fn, activation_maxima, select_nodes
    from xlsent.models.handle import load_model

    out = tmp_path / "fp32"
    export_model(str(tiny_model), out, texts=TEXTS, log=lambda _: None)
    model = load_model(str(tiny_model)).model
    proto = onnx.load(str(out / "model.onnx"))
    nodes, _ = select_nodes(proto, Int8Settings())
    untie_weights(proto)
    weight_nodes = [n for n in proto.graph.node if n.name in set(nodes)]
    maxima = activation_maxima(out / "model.onnx", sorted({n.input[0] for n in weight_nodes}), TEXTS,
                               tokenizer_fn(model))
    return out, model, proto, [n.name for n in weight_nodes], maxima


def test_smoothing_is_exact_before_quantisation(tiny_model, tmp_path):
    """SmoothQuant moves scale from activations into weights: the fp32 graph must compute the same thing."""
    import onnxruntime as ort

    from xlsent.exporter.quantize import tokenizer_fn, smooth_graph

    out, model, proto, names, maxima = calibrated_graph(tiny_model, tmp_path)
    assert smooth_graph(proto, names, maxima, 0.5) == 18
    ids, mask = tokenizer_fn(model)(TEXTS)
    run = lambda p: ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(  # noqa: E731
        None, {"input_ids": ids, "attention_mask": mask})[0]
    assert np.allclose(run(proto.SerializeToString()), run(str(out / "model.onnx")), atol=1e-5)
    # query, key and value read one LayerNorm output: they share one Mul (4 a layer, not 6)
    smooths = [n for n in proto.graph.node if n.op_type == "Mul" and n.name.endswith("/Smooth")]
    assert len(smooths) == 12
    readers = {n.name for n in proto.graph.node if smooths[0].output[0] in n.input}
    assert len(readers) in (1, 3) and sum(len([n for n in proto.graph.node if m.output[0] in n.input])
                                          for m in smooths) == 18


def test_smoothed_int8_export_runs(tiny_model, tmp_path):
    from xlsent.exporter.folder import export_model
    from xlsent.exporter.quantize import Int8Settings

    m = export_model(str(tiny_model), tmp_path / "q", texts=TEXTS, int8=Int8Settings(smooth=0.5, calibration_texts=8),
                     log=lambda _: None)
    assert m.int8["smoothed_nodes"] == 18 and m.int8["calibration_texts_used"] == 8
    assert not (tmp_path / "q" / "model.fp32.onnx").exists()
    assert m.checks["min_cosine_to_source"] > 0.999  # measured 0.999995 (mean 0.999996)


def test_softmax_nan_guards_are_removed_and_the_output_is_unchanged(tmp_path):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    from xlsent.exporter.graph import drop_softmax_nan_guards

    nodes = [helper.make_node("Softmax", ["x"], ["s"], axis=-1), helper.make_node("IsNaN", ["s"], ["nan"]),
             helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", TensorProto.FLOAT, [], [0.0])),
             helper.make_node("Where", ["nan", "zero", "s"], ["w"]), helper.make_node("Mul", ["w", "x"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.random.default_rng(0).normal(size=(2, 5)).astype(np.float32)
    run = lambda p: ort.InferenceSession(p.SerializeToString(), providers=["CPUExecutionProvider"]).run(  # noqa: E731
        None, {"x": x})[0]
    before = run(proto)
    assert drop_softmax_nan_guards(proto) == 1
    assert [n.op_type for n in proto.graph.node] == ["Softmax", "Constant", "Mul"]
    onnx.checker.check_model(proto)
    assert np.allclose(run(proto), before)


# --- vocabulary trimming ---------------------------------------------------------------------------

PIECES = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)] + [
    ("▁mulungu", -2.0), ("▁mu", -4.0), ("lungu", -5.0), ("▁madzi", -3.0), ("▁god", -2.5), ("▁is", -2.0),
    ("▁good", -2.5), ("▁", -6.0)] + [(c, -8.0) for c in "abcdefghijklmnopqrstuvwxyz"] + [
    ("▁" + c, -7.0) for c in "abcdefghijklmnopqrstuvwxyz"]


def build_unigram_model(path: Path) -> Path:
    """A random BERT with a sentencepiece-style Unigram tokenizer (what e5 / XLM-R use)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    torch.manual_seed(1)
    tok = Tokenizer(models.Unigram(PIECES, unk_id=3, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
                                     eos_token="</s>", cls_token="<s>", sep_token="</s>", model_max_length=64)
    cfg = BertConfig(vocab_size=len(PIECES), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64, pad_token_id=1)
    hf = path.parent / (path.name + "-hf")
    BertModel(cfg, add_pooling_layer=False).save_pretrained(hf)
    hf_tok.save_pretrained(hf)
    st = SentenceTransformer(modules=[Transformer(str(hf), max_seq_length=64), Pooling(32, pooling_mode="mean"),
                                      Normalize()], device="cpu")
    st.save(str(path))
    return path


def test_trimmed_tokenizer_resegments_a_word_whose_piece_was_removed(tmp_path):
    from xlsent.models.vocab.trim import VocabSettings, trim_vocabulary
    from xlsent.models.handle import load_model

    model = load_model(str(build_unigram_model(tmp_path / "u"))).model
    before = model.tokenizer.tokenize("mulungu is good")
    assert before == ["▁mulungu", "▁is", "▁good"]
    texts = tmp_path / "keep.txt"
    texts.write_text("god is good\nmadzi\n", encoding="utf-8")
    info = trim_vocabulary(model, VocabSettings(top=2, texts=str(texts)), log=lambda _: None)
    # kept: 4 special + 52 single characters + the 2 best (▁mulungu -2.0 and ▁is -2.0) + pieces of the texts
    assert info["kept"] < len(PIECES) and info["single_character"] == 53  # 52 letters and the bare ▁
    tok = model.tokenizer
    assert tok.tokenize("mulungu is good") == ["▁mulungu", "▁is", "▁good"]
    assert tok.tokenize("mu lungu") == ["▁m", "u", "▁l", "u", "n", "g", "u"]  # ▁mu, lungu were removed
    assert "<unk>" not in tok.tokenize("zebra")
    assert model[0].auto_model.get_input_embeddings().weight.shape[0] == info["kept"] == len(tok)


def test_trimmed_export_keeps_the_vectors_of_texts_whose_pieces_were_kept(tmp_path):
    from xlsent.encoding.onnx_folder import read_manifest
    from xlsent.exporter.folder import export_model
    from xlsent.models.vocab.trim import VocabSettings

    src = build_unigram_model(tmp_path / "u")
    keep = tmp_path / "keep.txt"
    keep.write_text("god is good\nmadzi\n", encoding="utf-8")
    out = tmp_path / "trim"
    export_model(str(src), out, texts=["god is good", "madzi", "mulungu"], log=lambda _: None,
                 keep_vocab=VocabSettings(top=0, texts=str(keep)))
    man = read_manifest(out)
    assert man.vocab["kept"] < len(PIECES)
    same = onnx_encode(out, ["god is good", "madzi"])
    assert cosines(same, st_encode(src, ["god is good", "madzi"])).min() >= 0.99999
    tok = json.loads((out / "tokenizer.json").read_text())
    assert len(tok["model"]["vocab"]) == man.vocab["kept"]


def test_trimming_drops_token_table_rows_past_the_tokenizer(tmp_path):
    """e5 / XLM-R pad the token table past the tokenizer (250,037 rows, 250,002 pieces): those rows are dropped."""
    from xlsent.models.vocab.trim import VocabSettings, trim_vocabulary
    from xlsent.models.handle import load_model

    model = load_model(str(build_unigram_model(tmp_path / "u"))).model
    expected = model.encode(["god is good"], convert_to_numpy=True)
    model[0].auto_model.resize_token_embeddings(len(PIECES) + 7)
    assert model[0].auto_model.get_input_embeddings().weight.shape[0] == len(PIECES) + 7
    logged = []
    info = trim_vocabulary(model, VocabSettings(top=len(PIECES), texts=None), log=logged.append)  # every piece
    assert info["table_rows_unreachable"] == 7 and "7 token-table rows" in logged[0]
    assert model[0].auto_model.get_input_embeddings().weight.shape[0] == info["kept"] == len(model.tokenizer)
    assert cosines(model.encode(["god is good"], convert_to_numpy=True), expected).min() >= 0.99999


def test_low_rank_tail_keeps_every_segmentation_and_is_exact_at_full_rank(tmp_path):
    """--tail-rank: no piece removed (segmentations unchanged), head rows exact, the tail a rank-r fit."""
    from xlsent.models.vocab.tail_embedding import TailFactorisedEmbedding
    from xlsent.models.vocab.trim import VocabSettings, trim_vocabulary
    from xlsent.models.handle import load_model

    src = build_unigram_model(tmp_path / "u")
    texts = ["mu lungu madzi", "god is good", "zebra"]
    full = load_model(str(src)).model
    expected, segmented = full.encode(texts, convert_to_numpy=True), [full.tokenizer.tokenize(t) for t in texts]
    keep = tmp_path / "keep.txt"
    keep.write_text("god is good\n", encoding="utf-8")
    for rank, exact in ((32, True), (2, False)):  # 32 = the hidden size: the SVD reproduces the tail exactly
        model = load_model(str(src)).model
        info = trim_vocabulary(model, VocabSettings(top=0, texts=str(keep), tail_rank=rank), log=lambda _: None)
        emb = model[0].auto_model.get_input_embeddings()
        assert isinstance(emb, TailFactorisedEmbedding) and info["kept"] == len(PIECES) == emb.num_embeddings
        assert info["full_rows"] == 4 + 3 and info["low_rank_rows"] == len(PIECES) - 7  # 4 special + ▁god ▁is ▁good
        assert [model.tokenizer.tokenize(t) for t in texts] == segmented  # nothing re-segmented
        got = model.encode(texts, convert_to_numpy=True)
        assert cosines(got[1:2], expected[1:2]).min() >= 0.99999  # every piece of "god is good" has its full row
        assert (cosines(got, expected).min() >= 0.99999) == exact
        if not exact:
            assert info["token_table_parameters"]["after"] < info["token_table_parameters"]["before"]


def test_low_rank_tail_exports_to_onnx_and_stays_fp32_under_int8(tmp_path):
    from xlsent.encoding.onnx_folder import read_manifest
    from xlsent.exporter.folder import export_model
    from xlsent.exporter.quantize import Int8Settings
    from xlsent.models.vocab.trim import VocabSettings

    src = build_unigram_model(tmp_path / "u")
    out = tmp_path / "tail"
    texts = ["mu lungu madzi", "god is good", "zebra"]
    export_model(str(src), out, texts=texts, log=lambda _: None,
                 keep_vocab=VocabSettings(top=2, texts=None, tail_rank=32))  # checks fp32 graph == torch model
    assert read_manifest(out).vocab["low_rank_rows"] > 0
    assert cosines(onnx_encode(out, texts), st_encode(src, texts)).min() >= 0.99999
    q = tmp_path / "tail8"
    man = export_model(str(src), q, texts=texts, log=lambda _: None, int8=Int8Settings(),
                       keep_vocab=VocabSettings(top=2, texts=None, tail_rank=8))
    assert man.int8["kept_fp32"]["embedding_gather"] == 3  # head Gather, tail Gather, tail MatMul


def test_product_quantised_tail_keeps_segmentations_fits_better_than_low_rank_and_exports(tmp_path):
    """--tail-pq: nothing re-segmented, head rows exact, the tail closer than rank-M at the same parameter count,
    and the ONNX graph (fp32 and int8) computes what the torch model does."""
    from xlsent.encoding.onnx_folder import read_manifest
    from xlsent.exporter.folder import export_model
    from xlsent.exporter.quantize import Int8Settings
    from xlsent.models.vocab.tail_embedding import TailProductQuantisedEmbedding
    from xlsent.models.vocab.trim import VocabSettings, trim_vocabulary
    from xlsent.models.handle import load_model

    src = build_unigram_model(tmp_path / "u")
    texts = ["mu lungu madzi", "god is good", "zebra"]
    full = load_model(str(src)).model
    table = full[0].auto_model.get_input_embeddings().weight.detach()[: len(PIECES)]
    segmented = [full.tokenizer.tokenize(t) for t in texts]
    keep = tmp_path / "keep.txt"
    keep.write_text("god is good\n", encoding="utf-8")
    errors = {}
    for how in ("tail_pq", "tail_rank"):
        model = load_model(str(src)).model
        info = trim_vocabulary(model, VocabSettings(top=0, texts=str(keep), **{how: 8}), log=lambda _: None)
        emb = model[0].auto_model.get_input_embeddings()
        assert [model.tokenizer.tokenize(t) for t in texts] == segmented and info["kept"] == len(PIECES)
        order = json.loads(model.tokenizer.backend_tokenizer.to_str())["model"]["vocab"]
        rows = torch_rows(emb.weight.detach(), [p for p, _ in order], table, [p for p, _ in PIECES])
        assert np.allclose(rows[0][: info["full_rows"]], rows[1][: info["full_rows"]])  # the head is exact
        errors[how] = float(((rows[0] - rows[1]) ** 2).sum())
        if how == "tail_pq":
            assert isinstance(emb, TailProductQuantisedEmbedding) and emb.codes.dtype.is_floating_point is False
    assert errors["tail_pq"] < errors["tail_rank"]
    out = tmp_path / "pq"
    export_model(str(src), out, texts=texts, log=lambda _: None,  # checks the graph against the torch model
                 keep_vocab=VocabSettings(top=2, texts=None, tail_pq=8))
    assert read_manifest(out).vocab["tail_pq"] == 8 and read_manifest(out).vocab["low_rank_rows"] > 0
    man = export_model(str(src), tmp_path / "pq8", texts=texts, log=lambda _: None, int8=Int8Settings(),
                       keep_vocab=VocabSettings(top=2, texts=None, tail_pq=8))
    assert man.int8["kept_fp32"]["embedding_gather"] >= 3  # the head, codes and codebook Gathers stay fp32
    # measured 0.99999994 (mean 1.0): int8 on top of the product-quantised tail keeps its vectors
    assert cosines(onnx_encode(tmp_path / "pq8", texts), onnx_encode(out, texts)).min() > 0.9999
    with pytest.raises(XlsentError, match="give one"):
        VocabSettings(tail_rank=8, tail_pq=8)


def torch_rows(new_table, new_pieces, old_table, old_pieces):
    """The new and the old table's rows in the new order (ids were reordered head-first)."""
    where = {p: i for i, p in enumerate(old_pieces)}
    return new_table.numpy(), old_table[[where[p] for p in new_pieces]].numpy()


def test_trimming_refuses_a_wordlevel_tokenizer(tiny_model, tmp_path):
    from xlsent.exporter.folder import export_model
    from xlsent.models.vocab.trim import VocabSettings
    from xlsent.utils.errors import XlsentError

    with pytest.raises(XlsentError, match="Unigram"):
        export_model(str(tiny_model), tmp_path / "x", keep_vocab=VocabSettings(top=5, texts=None), texts=TEXTS,
                     log=lambda _: None)


# --- the backend behind the encoder and the commands --------------------------------------------------

def test_encoder_picks_up_an_exported_folder_and_refuses_torch_on_it(prompted_model, tmp_path):
    from xlsent.encoding.encoder import Encoder
    from xlsent.encoding.onnx_backend import OnnxBackend
    from xlsent.exporter.folder import export_model
    from xlsent.utils.errors import XlsentError

    out = tmp_path / "onnx"
    export_model(str(prompted_model), out, texts=TEXTS, log=lambda _: None)
    enc = Encoder.load(str(out))
    assert isinstance(enc.backend, OnnxBackend) and enc.fingerprint.startswith("onnx:")
    torch_enc = Encoder.load(str(prompted_model), backend="torch", chunk_words=3)
    onnx_enc = Encoder.load(str(out), chunk_words=3)
    assert cosines(onnx_enc.encode(TEXTS), torch_enc.encode(TEXTS)).min() >= 0.99999  # chunked pooling outside
    with pytest.raises(XlsentError, match="no torch weights"):
        Encoder.load(str(out), backend="torch")
    with pytest.raises(XlsentError, match="unknown backend"):
        Encoder.load(str(out), backend="tensorrt")


def test_backend_onnx_on_a_torch_model_exports_once_into_the_cache(prompted_model):
    from xlsent.encoding.encoder import Encoder
    from xlsent.encoding.onnx_backend import OnnxBackend
    from xlsent.exporter.load import load_encoder

    with pytest.raises(XlsentError, match="not an exported folder"):  # the encoder never exports on its own
        Encoder.load(str(prompted_model), backend="onnx")
    enc = load_encoder(str(prompted_model), backend="onnx", threads=1)
    assert isinstance(enc.backend, OnnxBackend) and enc.name == str(prompted_model)
    again = load_encoder(str(prompted_model), backend="onnx")
    assert again.backend.folder == enc.backend.folder
    assert cosines(enc.encode(TEXTS), st_encode(prompted_model)).min() >= 0.99999


class Ran:
    """A command's exit code and everything it said (a user error is shown by ``xlsent``'s main as one line, exit 2)."""

    def __init__(self, result) -> None:
        from xlsent.utils.errors import XlsentError

        user_error = isinstance(result.exception, XlsentError)
        self.exit_code = 2 if user_error else result.exit_code
        self.output = result.output + (str(result.exception) if result.exception is not None else "")


def _run(*args) -> Ran:
    from typer.testing import CliRunner

    from xlsent.cli.main import app

    return Ran(CliRunner().invoke(app, list(args)))


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    from xlsent.exporter.folder import export_model

    model = build_tiny_model(tmp_path_factory.mktemp("m") / "tiny-export")
    out = tmp_path_factory.mktemp("e") / "onnx"
    export_model(str(model), out, texts=TEXTS, log=lambda _: None)
    return out


@pytest.mark.parametrize("command", [
    ["embed", "-i", "{txt}", "-o", "{tmp}/x.npy"],
    ["mine", "{txt}", "{txt}", "-o", "{tmp}/m.tsv"],
    ["eval", "retrieval", "--pairs", "{pairs}"],
    ["eval", "sts", "--data", "{sts}"],
    ["eval", "triplet", "--triplets", "{triplets}"],
    ["eval", "mse", "--pairs", "{pairs}", "--teacher", "{model}"],
    ["eval", "mining", "--dataset", "bible"],
    ["eval", "documents", "--pairs", "{pairs}"],
    ["eval", "classify", "--train", "{labelled}", "--test", "{labelled}"],
])
def test_the_backend_flag_reaches_every_command(command, exported, pairs_tsv, tmp_path):
    """``--backend torch`` on an exported folder must reach the encoder (which refuses it): proof that the flag
    is passed through, for every command that embeds sentences."""
    txt = tmp_path / "t.txt"
    txt.write_text("god is good\nmadzi\n", encoding="utf-8")
    sts = tmp_path / "sts.tsv"
    sts.write_text("god is good\tmadzi\t3.0\nthe river\tdziko\t1.0\n", encoding="utf-8")
    triplets = tmp_path / "tr.tsv"
    triplets.write_text("god\tmulungu\tmadzi\nwater\tmadzi\tdziko\n", encoding="utf-8")
    labelled = tmp_path / "l.tsv"
    labelled.write_text("a\tgod is good\nb\tmadzi\na\tthe lord\nb\tdziko\n", encoding="utf-8")
    fill = {"txt": txt, "tmp": tmp_path, "pairs": pairs_tsv, "sts": sts, "triplets": triplets, "labelled": labelled,
            "model": exported}
    args = [a.format(**fill) for a in command]
    r = _run(*args, "--model", str(exported), "--backend", "torch")
    assert r.exit_code == 2, r.output
    assert "no torch weights" in r.output


def test_embed_with_the_onnx_backend_equals_torch(tiny_model, tmp_path):
    txt = tmp_path / "t.txt"
    txt.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    assert _run("embed", "-i", str(txt), "-o", str(tmp_path / "a.npy"), "-m", str(tiny_model)).exit_code == 0
    r = _run("embed", "-i", str(txt), "-o", str(tmp_path / "b.npy"), "-m", str(tiny_model), "--backend", "onnx",
             "--threads", "1")
    assert r.exit_code == 0, r.output
    assert cosines(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")).min() >= 0.99999


def test_export_cli_errors_before_loading(tiny_model, tmp_path):
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "o"), "--smooth", "0.5")
    assert r.exit_code == 2 and "--int8" in r.output
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x.txt").write_text("x")
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "full"))
    assert r.exit_code == 2 and "not an export" in r.output
    r = _run("export", str(tmp_path / "nowhere"), "-o", str(tmp_path / "o"))
    assert r.exit_code == 2 and "nowhere" in r.output
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "o"), "--int8", "--fp32-parts", "mlp")
    assert r.exit_code == 2 and "unknown fp32 part" in r.output
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "o"), "--int8", "--per-token", "ffn_out")
    assert r.exit_code == 2 and "--per-token" in r.output  # an experiment now (benchmarks/export/experiments/)
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "o"), "--int8", "--smooth", "0.5",
             "--calibration", str(tmp_path / "none.txt"))
    assert r.exit_code == 2 and "none.txt" in r.output
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "o"), "--tail-rank", "8")
    assert r.exit_code == 2 and "--keep-vocab" in r.output
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "o"), "--tail-pq", "8")
    assert r.exit_code == 2 and "--keep-vocab" in r.output
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "o"), "--keep-vocab", "10", "--tail-pq", "7")
    assert r.exit_code == 2 and "must divide" in r.output
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "o"), "--keep-vocab", "10", "--tail-pq", "8",
             "--tail-rank", "8")
    assert r.exit_code == 2 and "give one" in r.output
    r = _run("export", str(tiny_model), "-o", str(tmp_path / "o"), "--keep-vocab", "10", "--tail-rank", "-1")
    assert r.exit_code == 2 and "--tail-rank" in r.output


def test_export_cli_writes_a_folder_that_eval_runs(tiny_model, pairs_tsv, tmp_path):
    out = tmp_path / "o"
    r = _run("export", str(tiny_model), "-o", str(out), "--int8")
    assert r.exit_code == 0, r.output
    assert "cosine to" in r.output
    res = tmp_path / "r.json"
    r = _run("eval", "retrieval", "-m", str(out), "--pairs", str(pairs_tsv), "-o", str(res), "--resamples", "10")
    assert r.exit_code == 0, r.output
    assert json.loads(res.read_text())["n"] == 40


def test_a_folder_that_is_not_a_model_is_not_exportable(tmp_path):
    from xlsent.exporter.folder import export_model
    from xlsent.utils.errors import XlsentError

    (tmp_path / "empty").mkdir()
    with pytest.raises(XlsentError):
        export_model(str(tmp_path / "empty"), tmp_path / "o", texts=TEXTS, log=lambda _: None)


def test_smoothing_with_int8_attention_smooths_only_the_weight_matmuls(tiny_model, tmp_path):
    from xlsent.exporter.folder import export_model
    from xlsent.exporter.quantize import Int8Settings

    m = export_model(str(tiny_model), tmp_path / "q", texts=TEXTS, log=lambda _: None,
                     int8=Int8Settings(smooth=0.5, attention=True, calibration_texts=8))
    assert m.int8["quantized_nodes"] == 24 and m.int8["smoothed_nodes"] == 18
