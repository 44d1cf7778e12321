"""The lightweight dual transformer of Mao et al. (2021) as a standard sentence-transformers model.

Mao, Gupta, Wang, Chu, Jaggi & Kurohashi (2021). *Lightweight Cross-Lingual Sentence
Representation Learning.* ACL. §3.1, Table 1.

Two pieces, both built from the training pairs alone:

* :func:`train_tokenizer` — a joint subword vocabulary for both languages with Hugging Face
  ``tokenizers`` (SentencePiece-style: NFKC, lower-cased, ``▁`` word-boundary marker; BPE as in
  the paper, or unigram), special pieces ``<pad>`` = 0, ``<unk>`` = 1, ``<mask>`` = 2 and no
  CLS/BOS/EOS, wrapped as a ``PreTrainedTokenizerFast``;
* :func:`build_encoder` — one encoder shared by both languages, expressed as a ``BertModel``
  (2 layers, hidden 512, 8 heads, FFN 1,024, swish = SiLU, dropout 0.1, learned positions) under
  sentence-transformers' mean ``Pooling`` over non-pad tokens. The folder it saves loads with
  ``SentenceTransformer(DIR)`` in a fresh process, with no xlsent code and no ``trust_remote_code``.

Differences from the paper's encoder (its published code), all forced by using a standard
architecture and none of them adding capacity that matters:

* BERT adds a LayerNorm (and dropout) after summing the token and position embeddings;
* BERT's learned positions start at 0 for the first token (the paper's code: 1, with 0 for pad);
  pad positions are masked out of attention and pooling either way;
* BERT adds one token-type embedding (a single type: a learned constant added to every token);
* ``BertModel`` keeps its pooler (hidden × hidden + bias, 0.26M parameters at 512), which neither
  training nor sentence-transformers' mean pooling uses; it is saved so that loading is silent;
* masked attention uses the dtype's most negative value, not −1e6 (the same softmax).
"""

from __future__ import annotations

from pathlib import Path


PAD, UNK, MASK = "<pad>", "<unk>", "<mask>"
SPECIAL = (PAD, UNK, MASK)  # ids 0, 1, 2, as in the paper's code
TOKENIZER_MODELS = ("bpe", "unigram")


def train_tokenizer(texts, vocab_size: int = 8000, model: str = "bpe", max_length: int = 200):
    """A lower-cased joint subword tokenizer learned from ``texts`` (both languages' sentences)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    if model not in TOKENIZER_MODELS:
        raise ValueError(f"tokenizer model must be one of {', '.join(TOKENIZER_MODELS)}, not {model!r}")
    if model == "bpe":
        tok = Tokenizer(models.BPE(unk_token=UNK))
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL), show_progress=False)
    else:
        tok = Tokenizer(models.Unigram())
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL), unk_token=UNK,
                                          show_progress=False)
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(texts, trainer=trainer)
    assert [tok.token_to_id(s) for s in SPECIAL] == [0, 1, 2], "special pieces must be ids 0, 1, 2"
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, unk_token=UNK, mask_token=MASK,
                                   model_max_length=max_length)


def maskable_ids(tokenizer) -> list[bool]:
    """Per vocabulary id: may this piece be masked? (it holds a letter or digit: not punctuation, not special)"""
    vocab = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    return [i >= len(SPECIAL) and any(ch.isalnum() for ch in piece) for i, piece in enumerate(vocab)]


def build_encoder(tokenizer, layers: int = 2, hidden: int = 512, heads: int = 8, ffn: int = 1024,
                  dropout: float = 0.1, max_length: int = 200, seed: int = 0):
    """A freshly initialised sentence-transformers model: ``BertModel`` + mean pooling over non-pad tokens."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=ffn, hidden_act="silu",
                        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
                        max_position_embeddings=max_length, type_vocab_size=1, pad_token_id=0)
    transformer = _wrap(BertModel(config), tokenizer, max_length)
    pooling = Pooling(hidden, pooling_mode="mean")
    from xlsent.utils.device import EXPORT_DEVICE

    return SentenceTransformer(modules=[transformer, pooling], device=EXPORT_DEVICE)  # the loop places it


def _wrap(bert, tokenizer, max_length: int):
    """A sentence-transformers ``Transformer`` module around an in-memory model and tokenizer (saved, then loaded
    back, so the module is exactly what ``SentenceTransformer(DIR)`` will build)."""
    import tempfile

    from sentence_transformers.base.modules import Transformer

    from safetensors.torch import save_file

    with tempfile.TemporaryDirectory() as tmp:
        # written by hand: save_pretrained writes on rank 0 only once a process group exists (torchrun), and
        # every process builds its own copy here
        bert.config.to_json_file(str(Path(tmp) / "config.json"))
        save_file({k: v.contiguous() for k, v in bert.state_dict().items()}, str(Path(tmp) / "model.safetensors"))
        tokenizer.save_pretrained(tmp)
        module = Transformer(tmp, max_seq_length=max_length)
    module.auto_model.load_state_dict(bert.state_dict())
    return module


def parameter_count(model) -> dict:
    """Parameters of a sentence-transformers model: embedding table, the rest, total."""
    total = sum(p.numel() for p in model.parameters())
    emb = model[0].auto_model.get_input_embeddings().weight.numel()
    return {"embedding": emb, "encoder": total - emb, "total": total}

