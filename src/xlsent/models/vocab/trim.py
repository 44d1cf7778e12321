"""Vocabulary trimming: keep the pieces chosen without the test sets, remap the ids, rebuild the tokenizer.

A multilingual model's token table is most of its parameters (e5-small: 250,002 pieces × 384 = 96M of
118M). Trimming it keeps every layer. The kept set is the union of:

* the **special and added tokens** (``<s>``, ``<pad>``, ``</s>``, ``<unk>``, ``<mask>`` …);
* every **single-character piece** (with or without the word-start mark ``▁``), so that no character the
  full tokenizer knows becomes ``<unk>``: a word whose longer pieces were removed is re-segmented into
  shorter pieces that still carry its characters;
* the ``top`` **highest-scoring pieces** of the Unigram model (its log-probabilities, learnt by the
  tokenizer on its own training text across ~100 languages — language-agnostic and independent of any
  test set);
* every piece the full tokenizer uses on the ``texts`` (bundled *training* text by default, or a user's
  corpus): the target languages keep their own segmentation.

Default ``top`` = 80,000: with the 15,397 single characters and the 10,471 pieces the bundled training
verses use, e5-small keeps 92,244 pieces and just under half of its parameters — the largest round figure
under issue 3's 50% budget (``docs/experiments/export-and-int8.md``). It is fixed by that budget, not tuned on
any test.

With ``tail_pq`` > 0 (``--tail-pq``) or ``tail_rank`` > 0 (``--tail-rank``) nothing is removed: the pieces above
keep full rows and every other piece is stored as that many product-quantisation codes, or at that rank
(:mod:`xlsent.models.vocab.tail_embedding`), so no word is re-segmented — the
way to keep languages the kept text does not cover under the same parameter budget (single characters
then need no full row: none is ever reached through re-segmentation).

Kept pieces keep their relative order, so the special tokens keep their ids (a pad id that moves is
written to the model's config). The Unigram model re-segments with what is left: it finds the most
probable segmentation among the kept pieces, with their original scores. Only Unigram tokenizers
(sentencepiece: XLM-R, e5, LaBSE-style) are trimmed; others get a clear error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from xlsent.models.vocab.tokenizer import WORD_START, tokenizer_with
from xlsent.utils.errors import XlsentError, named

@dataclass
class VocabSettings:
    """What to keep (see the module docstring)."""

    top: int = 80000
    texts: str | None = "bible-en-ny:train"
    max_texts: int = 0  # 0 = every text of ``texts``
    tail_rank: int = 0  # > 0: the other pieces stay, at this rank (tail_embedding.py); 0: they are removed
    tail_pq: int = 0  # > 0: the other pieces stay, product-quantised to this many uint8 codes a row

    @property
    def keeps_tail(self) -> bool:
        return bool(self.tail_rank or self.tail_pq)

    def __post_init__(self) -> None:
        if int(self.tail_pq) < 0:
            raise XlsentError(f"{named('tail_pq', self.tail_pq)}: must be ≥ 0 (0 = remove the pieces keep_vocab= "
                              "does not keep)")
        if self.tail_rank and self.tail_pq:
            raise XlsentError("tail_rank= and tail_pq= are two ways to store the same pieces — give one")
        if int(self.top) < 0:
            raise XlsentError(f"{named('keep_vocab', self.top)}: must be ≥ 0 (the number of top-scoring pieces to "
                              "keep)")
        if int(self.tail_rank) < 0:
            raise XlsentError(f"{named('tail_rank', self.tail_rank)}: must be ≥ 0 (0 = remove the pieces keep_vocab= "
                              "does not keep)")


def read_texts(spec: str, limit: int = 0, sample: bool = False) -> list[str]:
    """Texts of a bundled pair set (both sides) or of a text file (one text a line), at most ``limit`` (0 = all).

    ``sample``: a bundled set gives a seeded sample of ``limit / 2`` pairs (both sides) instead of its first
    texts — calibration wants the whole set's spread, not its first book."""
    from xlsent.data.sets.bundled import is_bundled

    if is_bundled(spec):
        from xlsent.data.sets.pairs import load_pairs

        if sample and limit:
            ds = load_pairs(spec, sample=max(1, (limit + 1) // 2), seed=0).dataset
        else:
            ds = load_pairs(spec, dedupe=False).dataset
        texts = list(ds["src"]) + list(ds["tgt"])
    else:
        from xlsent.data.formats.readers import read_lines

        texts = [t for t in read_lines(Path(spec)) if t.strip()]
        if not texts:
            raise XlsentError(f"{spec}: no text in the file — give a file with one text a line")
    return texts[:limit] if limit else texts


def used_pieces(tokenizer, texts: list[str]) -> set[int]:
    """Ids of every piece the tokenizer uses on ``texts``."""
    used: set[int] = set()
    for start in range(0, len(texts), 1024):
        for ids in tokenizer(texts[start : start + 1024], add_special_tokens=False)["input_ids"]:
            used.update(ids)
    return used


def choose_pieces(tokenizer_json: dict, settings: VocabSettings, used_ids: set[int]) -> tuple[list[int], dict]:
    """Old ids to keep, sorted, and counts of why each group was kept."""
    model = tokenizer_json["model"]
    if model.get("type") != "Unigram":
        raise XlsentError(f"vocabulary trimming needs a Unigram (sentencepiece) tokenizer, not {model.get('type')}")
    vocab = model["vocab"]
    special = {int(t["id"]) for t in tokenizer_json.get("added_tokens", [])}
    if model.get("unk_id") is not None:
        special.add(int(model["unk_id"]))
    # with a low-rank tail nothing is removed, so no character needs a full row to stay reachable
    single = set() if settings.keeps_tail else {i for i, (piece, _) in enumerate(vocab)
                                               if len(piece.replace(WORD_START, "")) <= 1}
    by_score = sorted((i for i in range(len(vocab)) if i not in special), key=lambda i: -vocab[i][1])
    top = set(by_score[: int(settings.top)])
    keep = sorted(special | single | top | set(used_ids))
    counts = {"special": len(special), "single_character": len(single), "top_scoring": len(top),
              "used_by_texts": len(used_ids), "kept": len(keep), "original": len(vocab)}
    return keep, counts


def trimmed_tokenizer_json(tokenizer_json: dict, keep: list[int]) -> dict:
    """``tokenizer_json`` with only the ``keep`` pieces, ids remapped."""
    new_id = {old: new for new, old in enumerate(keep)}
    out = json.loads(json.dumps(tokenizer_json))
    out["model"]["vocab"] = [tokenizer_json["model"]["vocab"][i] for i in keep]
    if out["model"].get("unk_id") is not None:
        out["model"]["unk_id"] = new_id[int(out["model"]["unk_id"])]
    for tok in out.get("added_tokens", []):
        tok["id"] = new_id[int(tok["id"])]
    post = out.get("post_processor") or {}
    processors = post.get("processors", [post]) if post.get("type") == "Sequence" else [post]
    for proc in processors:
        for spec in (proc.get("special_tokens") or {}).values():
            spec["ids"] = [new_id[int(i)] for i in spec["ids"]]
        for key in ("sep", "cls"):  # RobertaProcessing / BertProcessing: [token, id]
            if isinstance(proc.get(key), list) and len(proc[key]) == 2:
                proc[key][1] = new_id[int(proc[key][1])]
    return out


def trim_vocabulary(model, settings: VocabSettings, log=print) -> dict:
    """Trim ``model`` (a loaded SentenceTransformer) in place: token table, config and tokenizer."""
    import torch

    module = model[0]
    tok = module.tokenizer
    if tok is None or not getattr(tok, "is_fast", False):
        raise XlsentError("vocabulary trimming needs a fast tokenizer (tokenizer.json)")
    full = json.loads(tok.backend_tokenizer.to_str())
    used: set[int] = set()
    n_texts = 0
    if settings.texts:
        texts = read_texts(settings.texts, settings.max_texts)
        n_texts = len(texts)
        used = used_pieces(tok, texts)
    keep, counts = choose_pieces(full, settings, used)
    emb = module.auto_model.get_input_embeddings()
    rows, pieces = int(emb.weight.shape[0]), len(full["model"]["vocab"])
    # A table longer than the tokenizer is common (multilingual-e5 / XLM-R: 250,037 rows, 250,002 pieces, the
    # rows padded for speed): rows past the last piece cannot be reached by any text, and trimming drops them.
    # A shorter table, or an added token past the pieces, means ids this code cannot map: refuse.
    beyond = sorted(int(t["id"]) for t in full.get("added_tokens", []) if int(t["id"]) >= pieces)
    if rows < pieces or beyond:
        raise XlsentError(f"the token table has {rows} rows but the tokenizer {pieces} pieces"
                          + (f" and added tokens with ids {beyond} past them" if beyond else "")
                          + " — cannot trim a model whose table and tokenizer disagree")
    index = torch.tensor(keep, dtype=torch.long)
    tail: list[int] = []
    if settings.keeps_tail:
        from xlsent.models.vocab.tail_embedding import TailFactorisedEmbedding, TailProductQuantisedEmbedding

        kept = set(keep)
        tail = [i for i in range(pieces) if i not in kept]
        tail_ids = torch.tensor(tail, dtype=torch.long)
        if settings.tail_pq:
            new_emb = TailProductQuantisedEmbedding.fit(emb.weight, index, tail_ids, int(settings.tail_pq))
        else:
            new_emb = TailFactorisedEmbedding.fit(emb.weight, index, tail_ids, int(settings.tail_rank))
        keep = keep + tail  # the order of the new ids: head first, then the tail
    else:
        new_emb = torch.nn.Embedding(len(keep), emb.weight.shape[1])
        with torch.no_grad():
            new_emb.weight.copy_(emb.weight[index])
    module.auto_model.set_input_embeddings(new_emb)
    config = module.auto_model.config
    config.vocab_size = len(keep)
    new_id = {old: new for new, old in enumerate(keep)}
    for attr in ("pad_token_id", "bos_token_id", "eos_token_id"):
        if getattr(config, attr, None) is not None:
            setattr(config, attr, new_id[int(getattr(config, attr))])
    emb_module = getattr(module.auto_model, "embeddings", None)
    if emb_module is not None and getattr(emb_module, "padding_idx", None) is not None:
        emb_module.padding_idx = config.pad_token_id
    module.processor = tokenizer_with(tok, trimmed_tokenizer_json(full, keep))
    params_before = int(rows * emb.weight.shape[1])
    params_after = int(sum(p.numel() for p in new_emb.parameters()))
    counts.update({"kept": len(keep), "full_rows": len(keep) - len(tail), "low_rank_rows": len(tail)})
    info = {**counts, "table_rows_unreachable": rows - pieces, "top": int(settings.top), "texts": settings.texts,
            "texts_read": n_texts, "tail_rank": int(settings.tail_rank), "tail_pq": int(settings.tail_pq),
            "token_table_parameters": {"before": params_before, "after": params_after},
            "model_parameters_after": int(sum(p.numel() for p in model.parameters()))}
    stored = (f"as {settings.tail_pq} uint8 codes a row" if settings.tail_pq else f"at rank {settings.tail_rank}")
    tail_note = f"; the other {len(tail):,} pieces kept {stored} (none re-segmented)" if settings.keeps_tail else ""
    log(f"vocabulary: {'full rows for' if tail else 'kept'} {len(keep) - len(tail):,} of {len(full['model']['vocab']):,} "
        f"pieces ({counts['top_scoring']:,} top-scoring, {counts['single_character']:,} single characters, "
        f"{len(used):,} used by {n_texts:,} texts of {settings.texts}, {counts['special']} special){tail_note}"
        + (f"; {rows - pieces} token-table rows past the tokenizer's pieces dropped (no text reaches them)"
           if rows > pieces else ""))
    return info
