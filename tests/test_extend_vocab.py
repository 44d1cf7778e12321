"""``xlsent models extend-vocab`` / ``xlsent.extend_vocab``: pieces for a script the tokenizer cannot read, on a
tiny model with a Unigram (sentencepiece-style) tokenizer built here; the substitute script (Deseret)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlsent
from xlsent.data.transliterate import FROM_DESERET, TO_DESERET, from_deseret, to_deseret

LATIN = ["mulungu ndi wabwino", "madzi a mtsinje", "kuwala kwa dziko", "god is good", "the river is wide",
         "water and light", "heaven and earth", "nyumba ya mulungu", "chala cha dziko", "he said unto the lord"]
NEW = [to_deseret(t) for t in LATIN * 3]  # the substitute script: every letter unknown to the tiny tokenizer
WORD_START = "▁"


def build_unigram_model(path: Path, hidden: int = 32, seed: int = 0) -> Path:
    """A random BERT with a small Unigram tokenizer (Latin letters, a few words; Metaspace, as e5-small's),
    saved as Transformer → mean Pooling → Normalize. The table has 3 padding rows past the pieces, as e5's."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    torch.manual_seed(seed)
    specials = [("<s>", 0.0), ("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)]
    chars = [(c, -4.0) for c in "abcdefghijklmnopqrstuvwxyz.,?!"] + [(WORD_START + c, -4.5) for c in "abcdefghijklmnopqrstuvwxyz"]
    words = sorted({w for t in LATIN for w in t.split()})
    vocab = specials + [(WORD_START, -3.0)] + chars + [(WORD_START + w, -2.0) for w in words] + [("<mask>", 0.0)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC()])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=WORD_START, prepend_scheme="always")
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
                                     eos_token="</s>", cls_token="<s>", sep_token="</s>", mask_token="<mask>",
                                     model_max_length=64)
    cfg = BertConfig(vocab_size=len(vocab) + 3, hidden_size=hidden, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=2 * hidden, max_position_embeddings=64, pad_token_id=1)
    hf_dir = path.parent / (path.name + "-hf")
    BertModel(cfg, add_pooling_layer=False).save_pretrained(hf_dir)
    hf_tok.save_pretrained(hf_dir)
    st = SentenceTransformer(modules=[Transformer(str(hf_dir), max_seq_length=64), Pooling(hidden, pooling_mode="mean"),
                                      Normalize()], device="cpu")
    st.save(str(path))
    return path


def deseret_pairs(path: Path, n: int = 40) -> Path:
    """A ``ny``/``en`` pair file of random four-word sentences of :data:`LATIN`'s words, the ``ny`` side in Deseret
    (seeded)."""
    import random

    rng, words = random.Random(0), " ".join(LATIN).split()
    latin = sorted({" ".join(rng.choice(words) for _ in range(4)) for _ in range(n)})
    path.write_text("ny\ten\n" + "".join(f"{to_deseret(x)}\t{x}\n" for x in latin), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def unigram_model(tmp_path_factory) -> Path:
    return build_unigram_model(tmp_path_factory.mktemp("unigram") / "model")


@pytest.fixture(scope="module")
def new_texts(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("texts") / "dsrt.txt"
    p.write_text("\n".join(NEW) + "\n", encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def extended(unigram_model, new_texts, tmp_path_factory):
    out = tmp_path_factory.mktemp("ext") / "model"
    return xlsent.extend_vocab(str(unigram_model), new_texts, out, pieces=40)


def _tokenizer(folder):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


# ---- the substitute script ----------------------------------------------------------------------------------


def test_the_substitute_map_is_one_to_one_onto_deseret_and_invertible():
    assert len(set(TO_DESERET.values())) == 52 == len(TO_DESERET)
    assert all(0x10400 <= ord(v) <= 0x1044F for v in TO_DESERET.values())
    assert FROM_DESERET[TO_DESERET["a"]] == "a" and to_deseret("a") == "\U00010428"
    text = "Pachiyambi Mulungu adalenga kumwamba ndi dziko lapansi, 1:1."
    assert from_deseret(to_deseret(text)) == text
    out = to_deseret(text)
    assert not any(c.isascii() and c.isalpha() for c in out) and out.count(" ") == text.count(" ")
    assert to_deseret("ŵ é") == TO_DESERET["w"] + " " + TO_DESERET["e"]  # marks dropped


# ---- extending ----------------------------------------------------------------------------------------------


def test_the_new_pieces_segment_text_that_was_unk_before(unigram_model, extended):
    before, after = _tokenizer(unigram_model), _tokenizer(extended.output)
    text = NEW[0]
    ids_before = before(text, add_special_tokens=False)["input_ids"]
    ids_after = after(text, add_special_tokens=False)["input_ids"]
    assert before.unk_token_id in ids_before
    assert after.unk_token_id not in ids_after
    assert any(i >= extended.first_id for i in ids_after)
    assert extended.unk_rate_before > 0.3 and extended.unk_rate_after == 0.0
    assert 0 < extended.added <= 40 and extended.new_characters == len({c for t in NEW for c in t if c != " "})
    # longer pieces than single characters were learnt, and each holds a character the base did not know
    pieces = [p for p, *_ in extended.pieces]
    assert any(len(p.replace(WORD_START, "")) > 1 for p in pieces)
    assert all(any(c in FROM_DESERET for c in p) for p in pieces)


def test_the_record_and_the_config_say_what_was_added(extended):
    rec = json.loads((extended.output / "xlsent_added_pieces.json").read_text(encoding="utf-8"))
    assert rec["added"] == extended.added == len(rec["pieces"])
    assert [p[1] for p in rec["pieces"]] == list(range(extended.first_id, extended.first_id + extended.added))
    assert "sub-pieces" in rec["init_method"] and "default" in rec["init_method"]
    cfg = json.loads((extended.output / "config.json").read_text(encoding="utf-8"))
    assert cfg["xlsent_added_rows"] == {"first": extended.first_id, "count": extended.added}
    assert cfg["vocab_size"] == extended.first_id + extended.added  # the 3 padding rows are gone


def test_the_folder_reloads_in_a_fresh_process_with_the_same_vectors_for_old_script_text(unigram_model, extended):
    from sentence_transformers import SentenceTransformer

    code = ("import sys, json; from sentence_transformers import SentenceTransformer as S; "
            "m = S(sys.argv[1], device='cpu'); print(json.dumps(m.encode(json.loads(sys.argv[2])).tolist()))")
    old_texts = LATIN[:4] + ["unknown words stay as they were"]
    r = subprocess.run([sys.executable, "-c", code, str(extended.output), json.dumps(old_texts + NEW[:2])],
                       capture_output=True, text=True, check=True)
    vecs = np.asarray(json.loads(r.stdout.strip().splitlines()[-1]))
    base = SentenceTransformer(str(unigram_model), device="cpu").encode(old_texts + NEW[:2])
    np.testing.assert_allclose(vecs[: len(old_texts)], base[: len(old_texts)], atol=1e-6)
    assert not np.allclose(vecs[len(old_texts):], base[len(old_texts):], atol=1e-3)  # the new script changed
    # old-script text keeps its ids exactly
    for t in old_texts:
        assert _tokenizer(unigram_model)(t)["input_ids"] == _tokenizer(extended.output)(t)["input_ids"]


def test_new_rows_are_initialised_as_stated(unigram_model, extended):
    import torch
    from safetensors.torch import load_file

    base = load_file(str(unigram_model / "model.safetensors"))
    ext = load_file(str(extended.output / "model.safetensors"))
    key = next(k for k in ext if k.endswith("word_embeddings.weight"))
    old, new = base[key].float(), ext[key].float()
    first = extended.first_id
    assert torch.equal(new[:first], old[:first])  # old rows untouched
    tok = json.loads((unigram_model / "tokenizer.json").read_text(encoding="utf-8"))
    piece_id = {p: i for i, (p, _) in enumerate(tok["model"]["vocab"])}
    kinds = {p: k for p, _, _, k in extended.pieces}
    # a wholly new piece: the default (mean + noise of the table's spread, seeded) — distinct rows near the mean
    default = [i for p, i, _, k in extended.pieces if k == "default"]
    assert len(default) == extended.added == extended.default_init  # the substitute script has no known part
    rows = new[default]
    assert torch.cdist(rows, rows).fill_diagonal_(1).min() > 0.01
    assert (rows.mean(0) - old[:first].mean(0)).abs().mean() < 3 * old[:first].std(0).mean()
    assert kinds
    # a piece with known parts: the character-weighted mean of their rows (unit check of the rule)
    from xlsent.models.vocab.extend import initial_rows

    rows, how = initial_rows(old[:first], tok, [(WORD_START + "ab" + TO_DESERET["a"], -5.0)])
    a, b = old[piece_id[WORD_START + "a"]], old[piece_id["b"]]
    assert how == ["subpieces"]
    torch.testing.assert_close(rows[0], (a + b) / 2)


def test_the_same_seed_gives_the_same_rows(unigram_model, new_texts, extended, tmp_path):
    again = xlsent.extend_vocab(str(unigram_model), new_texts, tmp_path / "again", pieces=40)
    assert [(p, i, k) for p, i, _, k in again.pieces] == [(p, i, k) for p, i, _, k in extended.pieces]
    np.testing.assert_allclose([s for _, _, s, _ in again.pieces], [s for _, _, s, _ in extended.pieces], atol=1e-3)
    from safetensors.torch import load_file

    a, b = load_file(str(tmp_path / "again" / "model.safetensors")), load_file(str(extended.output / "model.safetensors"))
    assert all(a[k].equal(b[k]) for k in a)


def test_adapt_trains_the_new_rows_while_the_old_rows_stay_frozen(extended, tmp_path):
    import torch
    from safetensors.torch import load_file

    pairs = deseret_pairs(tmp_path / "pairs.tsv")
    run = xlsent.adapt(pairs, tmp_path / "run", model=str(extended.output), evaluate=False, device="cpu",
                       settings={"train.holdout": 0.25, "train.holdout_min": 5, "train.sample": 0,
                                 "optim.batch_size": 8, "optim.epochs": 1, "optim.lr": 1e-2,
                                 "models.freeze_word_embeddings": True, "eval.udhr": False})
    before = load_file(str(extended.output / "model.safetensors"))
    after = load_file(str(Path(run.model_path) / "model.safetensors"))
    key = next(k for k in before if k.endswith("word_embeddings.weight"))
    first = extended.first_id
    assert torch.equal(after[key][:first], before[key][:first])  # old rows frozen
    assert not torch.allclose(after[key][first:], before[key][first:])  # new rows trained
    layer = next(k for k in before if "encoder.layer.0" in k and k.endswith("weight"))
    assert not torch.equal(after[layer], before[layer])  # the rest of the model trained as usual
    cfg = json.loads((Path(run.model_path) / "config.json").read_text(encoding="utf-8"))
    assert cfg["xlsent_added_rows"]["first"] == first  # a model trained from it keeps the record
    stage = json.loads((Path(run.model_path).parent / "stage.json").read_text(encoding="utf-8"))
    assert stage["selection"]["chosen_step"] >= 1  # the step was chosen on the held-out pairs and loaded back


def test_the_old_module_paths_under_exporter_are_the_moved_modules():
    """extend-vocab, romanize and the trim moved to ``xlsent.models.vocab`` (issue 78); an old import, or a setting
    changed through the old name, reaches the same module."""
    import importlib

    for old, new in (("extend_vocab", "extend"), ("romanize", "romanize"), ("vocab", "trim"),
                     ("tail_embedding", "tail_embedding")):
        assert importlib.import_module(f"xlsent.exporter.{old}") is importlib.import_module(
            f"xlsent.models.vocab.{new}")
    from xlsent.exporter.extend_vocab import AddedRowsEmbedding
    from xlsent.exporter.vocab import VocabSettings, tokenizer_with
    from xlsent.models.vocab import extend, tokenizer, trim

    assert (AddedRowsEmbedding, VocabSettings, tokenizer_with) == (extend.AddedRowsEmbedding, trim.VocabSettings,
                                                                    tokenizer.tokenizer_with)


def test_the_training_table_saves_and_loads_as_one_plain_weight():
    import torch

    from xlsent.models.vocab.extend import AddedRowsEmbedding

    w = torch.randn(10, 4)
    table = AddedRowsEmbedding(w, first=7, padding_idx=1)
    assert list(table.state_dict()) == ["weight"] and torch.equal(table.state_dict()["weight"], w)
    assert [n for n, p in table.named_parameters() if p.requires_grad] == ["added"]
    ids = torch.tensor([[0, 6, 7, 9]])
    torch.testing.assert_close(table(ids), torch.nn.functional.embedding(ids, w))
    table(ids).sum().backward()
    assert table.added.grad is not None and table.frozen.grad is None
    other = AddedRowsEmbedding(torch.zeros(10, 4), first=7)
    other.load_state_dict({"weight": w})  # a checkpoint / saved folder
    assert torch.equal(other.weight, w)
    other.load_state_dict({"weight": w, "added": torch.ones(3, 4)})  # adapt's chosen step: the trainable rows
    assert torch.equal(other.weight[7:], torch.ones(3, 4)) and torch.equal(other.weight[:7], w[:7])
    # a learning rate of their own for the added rows: the parameter is the rows / scale, the table the same
    fast = AddedRowsEmbedding(w, first=7, lr_scale=100.0)
    torch.testing.assert_close(fast.state_dict()["weight"], w)
    torch.testing.assert_close(fast(ids), torch.nn.functional.embedding(ids, w))
    torch.testing.assert_close(fast.added * 100, w[7:])
    fast.load_state_dict({"weight": 2 * w})
    torch.testing.assert_close(fast.weight, 2 * w)


# ---- bad input: one line each, before any model loads ---------------------------------------------------------


@pytest.fixture
def no_model_load(monkeypatch):
    import xlsent.models.handle as handle

    def refuse(*a, **k):
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(handle, "load_model", refuse)


@pytest.mark.parametrize("content, words", [("", "no text"), ("\n  \n", "no text"), ("one line only\n", "only 1 line")])
def test_too_little_text_is_one_line(unigram_model, tmp_path, content, words, no_model_load):
    f = tmp_path / "t.txt"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(xlsent.XlsentError, match=f"texts=.*{words}.*one sentence a line"):
        xlsent.extend_vocab(str(unigram_model), f, tmp_path / "out")


def test_a_missing_texts_file_zero_pieces_and_a_folder_that_is_not_a_model(unigram_model, new_texts, tmp_path,
                                                                           no_model_load):
    with pytest.raises(xlsent.XlsentError, match="texts=.*no such file"):
        xlsent.extend_vocab(str(unigram_model), tmp_path / "missing.txt", tmp_path / "out")
    with pytest.raises(xlsent.XlsentError, match="pieces=0: must be ≥ 1.*pieces=2000"):
        xlsent.extend_vocab(str(unigram_model), new_texts, tmp_path / "out", pieces=0)
    (tmp_path / "notamodel").mkdir()
    (tmp_path / "notamodel" / "readme.txt").write_text("hello")
    with pytest.raises(xlsent.XlsentError, match="notamodel.*neither a sentence-transformers model"):
        xlsent.extend_vocab(str(tmp_path / "notamodel"), new_texts, tmp_path / "out")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(xlsent.XlsentError, match="output=.*not empty"):
        xlsent.extend_vocab(str(unigram_model), new_texts, tmp_path / "full")


def test_a_wordlevel_tokenizer_and_text_with_nothing_unknown_are_one_line(tiny_model, unigram_model, tmp_path):
    f = tmp_path / "latin.txt"
    f.write_text("\n".join(LATIN), encoding="utf-8")
    with pytest.raises(xlsent.XlsentError, match="WordLevel model.*Unigram"):
        xlsent.extend_vocab(str(tiny_model), f, tmp_path / "a")
    with pytest.raises(xlsent.XlsentError, match="already reads every character"):
        xlsent.extend_vocab(str(unigram_model), f, tmp_path / "b")


def test_the_command_line(unigram_model, new_texts, tmp_path):
    from test_cli import xlsent as run_cli

    r = run_cli("models", "extend-vocab", str(unigram_model), "--texts", str(new_texts), "--pieces", "30",
                "-o", str(tmp_path / "ext"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["added"] == 30 and out["unk_rate_after"] == 0.0
    r = run_cli("models", "extend-vocab", str(unigram_model), "--texts", str(new_texts), "--pieces", "0",
                "-o", str(tmp_path / "ext2"))
    assert r.returncode == 2 and "--pieces 0: must be ≥ 1" in r.stderr
    assert len([x for x in r.stderr.strip().splitlines() if x.strip()]) <= 2 and "Traceback" not in r.stderr


@pytest.mark.slow
def test_deseret_is_mostly_unk_to_e5_small_before_and_not_after(tmp_path):
    from xlsent.data.pairs import load_pairs

    ds = load_pairs("bible-en-ny:train", sample=300, seed=0).dataset
    other = "tgt" if ds[0]["tgt_lang"] == "nya" else "src"
    f = tmp_path / "dsrt.txt"
    f.write_text("\n".join(to_deseret(t) for t in ds[other]), encoding="utf-8")
    ext = xlsent.extend_vocab("e5-small", f, tmp_path / "e5-dsrt", pieces=500)
    assert ext.unk_rate_before > 0.3 and ext.unk_rate_after == 0.0
    assert ext.added <= 500
