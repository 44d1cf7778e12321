"""A token tagger over any encoder xlsent can load: Hugging Face ``AutoModelForTokenClassification``.

* **First sub-token labelling**: each word's label sits on its first sub-token; the other sub-tokens
  (and special tokens, and words labelled ``_``) get -100 and are ignored by the loss. A prediction
  reads each word's label off its first sub-token. Words past ``max_seq_length`` pieces get ``O``
  (NER) or no label (POS) and are counted.
* **Frozen lower layers, cached**: with the token table and the lower ``L - train_layers``
  transformer layers frozen, their output does not change during training, so it is computed once
  (:func:`lower_states`, stored in float16) and each step runs only the trained top layers
  (:func:`top_forward`). This is exact: the trained model is the whole network, and
  :func:`predict` runs it end to end.
* The saved folder is a Hugging Face token-classification folder (``config.json`` carries
  ``id2label``) that is also a sentence-transformers folder (``modules.json`` + mean pooling), so
  ``SentenceTransformer(path)`` loads its encoder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from xlsent.data.formats.conll import UNLABELLED
from xlsent.utils.errors import XlsentError


@dataclass
class Encoded:
    """Sentences as sub-token ids, with the word each sub-token starts (-1 elsewhere) and the label ids."""

    input_ids: list[list[int]]
    first_piece_word: list[list[int]]  # per sub-token: the word index it starts, or -1
    labels: list[list[int]]  # per sub-token: label id on a word's first piece, -100 elsewhere
    truncated_words: int = 0


def backbone(model):
    """The encoder inside a ``*ForTokenClassification`` model (``model.bert``, ``model.roberta`` …), or the model
    itself when it is the bare encoder (``BertModel``)."""
    return getattr(model, model.base_model_prefix, model)


def encode_words(tokenizer, sentences: list[list[str]], tags: list[list[str]] | None, label2id: dict[str, int],
                 max_length: int) -> Encoded:
    if not getattr(tokenizer, "is_fast", False):
        raise XlsentError("the tagger needs a fast (Rust) tokenizer to map sub-tokens to words; "
                          "this model folder has only a slow one")
    enc = tokenizer(sentences, is_split_into_words=True, truncation=True, max_length=max_length)
    out = Encoded([], [], [])
    for i, ids in enumerate(enc["input_ids"]):
        wids = enc.word_ids(i)
        first, labels, prev = [], [], None
        for w in wids:
            if w is None or w == prev:
                first.append(-1)
                labels.append(-100)
            else:
                first.append(w)
                tag = tags[i][w] if tags is not None else UNLABELLED
                if tag == UNLABELLED:
                    labels.append(-100)
                else:
                    if tag not in label2id:
                        raise XlsentError(f"tag {tag!r} of sentence {i + 1} is not among the tagger's labels "
                                          f"({', '.join(label2id)})")
                    labels.append(label2id[tag])
            prev = w if w is not None else prev
        seen = {w for w in wids if w is not None}
        out.truncated_words += len(sentences[i]) - len(seen)
        out.input_ids.append(list(ids))
        out.first_piece_word.append(first)
        out.labels.append(labels)
    return out


def _pad(rows: list[list[int]], value: int) -> torch.Tensor:
    n = max(len(r) for r in rows)
    return torch.tensor([r + [value] * (n - len(r)) for r in rows], dtype=torch.long)


def _device(model) -> torch.device:
    return next(model.parameters()).device


def extended_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """[B, T] 0/1 → [B, 1, 1, T] additive mask (0 where attended, a large negative elsewhere)."""
    return (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


def run_layers(model, hidden: torch.Tensor, mask: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    ext = extended_mask(mask, hidden.dtype)
    for layer in backbone(model).encoder.layer[start:stop]:
        out = layer(hidden, attention_mask=ext)
        hidden = out[0] if isinstance(out, tuple) else out
    return hidden


@torch.no_grad()
def lower_states(model, enc: Encoded, upto: int, batch_size: int = 32, pad_id: int = 0,
                 progress=None) -> list[torch.Tensor]:
    """Hidden states after layer ``upto`` (0 = the embedding output), one float16 [T, H] tensor per sentence."""
    model.eval()
    order = np.argsort([len(x) for x in enc.input_ids])
    out: list[torch.Tensor | None] = [None] * len(enc.input_ids)
    for s in range(0, len(order), batch_size):
        idx = order[s : s + batch_size]
        dev = _device(model)
        ids = _pad([enc.input_ids[i] for i in idx], pad_id).to(dev)
        mask = (_pad([[1] * len(enc.input_ids[i]) for i in idx], 0)).to(dev)
        h = backbone(model).embeddings(input_ids=ids)
        h = run_layers(model, h, mask, 0, upto)
        for k, i in enumerate(idx):  # kept on the CPU in float16: the cache of a whole training set
            out[i] = h[k, : len(enc.input_ids[i])].to("cpu", torch.float16).clone()
        if progress is not None:
            progress(len(idx))
    return out  # type: ignore[return-value]


def top_forward(model, states: list[torch.Tensor], start: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits [B, T, C] from cached states after layer ``start`` (runs layers start..L, dropout, classifier)."""
    n = max(len(s) for s in states)
    h = torch.zeros(len(states), n, states[0].shape[-1])
    mask = torch.zeros(len(states), n, dtype=torch.long)
    for k, s in enumerate(states):
        h[k, : len(s)] = s.float()
        mask[k, : len(s)] = 1
    h, mask = h.to(_device(model)), mask.to(_device(model))
    h = run_layers(model, h, mask, start, len(backbone(model).encoder.layer))
    return model.classifier(model.dropout(h)), mask


def full_forward(model, ids: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    input_ids = _pad(ids, pad_id).to(_device(model))
    mask = _pad([[1] * len(x) for x in ids], 0).to(input_ids.device)
    return model(input_ids=input_ids, attention_mask=mask).logits, mask


@torch.no_grad()
def predict(model, tokenizer, sentences: list[list[str]], batch_size: int = 32, max_length: int = 128,
            default: str = "O") -> tuple[list[list[str]], int]:
    """Each word's predicted label (its first sub-token's argmax); words cut off by ``max_length`` get ``default``.

    Returns the predictions and the number of words cut off."""
    model.eval()
    id2label = {int(k): v for k, v in model.config.id2label.items()}
    label2id = {v: k for k, v in id2label.items()}
    enc = encode_words(tokenizer, sentences, None, label2id, max_length)
    pad = tokenizer.pad_token_id or 0
    order = np.argsort([len(x) for x in enc.input_ids])
    preds: list[list[str]] = [[] for _ in sentences]
    for s in range(0, len(order), batch_size):
        idx = order[s : s + batch_size]
        logits, _ = full_forward(model, [enc.input_ids[i] for i in idx], pad)
        best = logits.argmax(-1).tolist()
        for k, i in enumerate(idx):
            words = [default] * len(sentences[i])
            for pos, w in enumerate(enc.first_piece_word[i]):
                if w >= 0:
                    words[w] = id2label[best[k][pos]]
            preds[i] = words
    return preds, enc.truncated_words


def load_tagger(path: str | Path):
    """(model, tokenizer) of a token-classification folder; a clear error for any other folder."""
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    p = Path(path).expanduser()
    if (p / "model" / "config.json").exists() and not (p / "config.json").exists():
        p = p / "model"  # a run folder of `xlsent train tagger`
    cfg = p / "config.json"
    if not cfg.exists():
        raise XlsentError(f"{p}: not a tagger folder (no config.json) — give the output of `xlsent train tagger`")
    conf = json.loads(cfg.read_text(encoding="utf-8"))
    if not any(a.endswith("ForTokenClassification") for a in conf.get("architectures") or []):
        raise XlsentError(f"{p}: a {', '.join(conf.get('architectures') or ['model'])} folder, not a token "
                          "classifier — train one with `xlsent train tagger`")
    from xlsent.utils.device import current_device

    model = AutoModelForTokenClassification.from_pretrained(str(p)).to(current_device())  # the process's device
    tok = AutoTokenizer.from_pretrained(str(p))
    return model, tok


def save_tagger(model, tokenizer, folder: Path, max_seq_length: int) -> None:
    """Hugging Face token-classification folder + the files that make it a sentence-transformers folder."""
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}], indent=2))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": max_seq_length,
                                                                   "do_lower_case": False}))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": model.config.hidden_size, "pooling_mode_mean_tokens": True}))
