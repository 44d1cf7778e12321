"""How much a test file shares with a training file (Manafi 2025, Tables 3.3 and 3.4).

* :func:`entity_overlap` (Table 3.3): of the test file's entity tokens (tags other than ``O``), the
  share whose word occurs in the training file with the same entity label ("identical words with
  identical labels — excluding those tagged O"). The paper divides by "the total number of words in
  the L2 test set"; its published figures (the paper's Table 3.3: up to 47.7% on entity-dense
  WikiANN) fit entity words, so that is the main figure, and the share of all test tokens is given
  beside it. Whole-entity overlap (what P3 replaces) is reported too.
* :func:`word_overlap` (Table 3.4): the test texts' first ``max_pieces`` sub-tokens under a given
  tokenizer (special tokens left out); the share of those tokens whose piece also occurs among the
  training texts' pieces (cut the same way), by occurrence and by distinct piece.
"""

from __future__ import annotations

from xlsent.data.formats.conll import TaggedCorpus
from xlsent.perturbations.entities import entities


def _label(tag: str) -> str:
    return tag[2:] if tag[:2] in ("B-", "I-") else tag


def entity_overlap(train: TaggedCorpus, test: TaggedCorpus) -> dict:
    seen = {(t, _label(y)) for toks, tags in zip(train.tokens, train.tags) for t, y in zip(toks, tags) if y != "O"}
    ent_tokens = shared = all_tokens = 0
    for toks, tags in zip(test.tokens, test.tags):
        all_tokens += len(toks)
        for t, y in zip(toks, tags):
            if y == "O":
                continue
            ent_tokens += 1
            shared += (t, _label(y)) in seen
    train_ents = {(e[3], e[4]) for e in entities(train)}
    test_ents = entities(test)
    distinct = {(e[3], e[4]) for e in test_ents}
    return {
        "entity_token_overlap": shared / ent_tokens if ent_tokens else 0.0,
        "of_all_test_tokens": shared / all_tokens if all_tokens else 0.0,
        "entity_tokens": ent_tokens,
        "entities_shared": sum((e[3], e[4]) in train_ents for e in test_ents) / len(test_ents) if test_ents else 0.0,
        "distinct_entities_shared": len(distinct & train_ents) / len(distinct) if distinct else 0.0,
    }


def _pieces(tokenizer, texts: list[str], max_pieces: int) -> list[list[str]]:
    out = []
    for t in texts:
        ids = tokenizer(t, add_special_tokens=False, truncation=True, max_length=max_pieces)["input_ids"]
        out.append(tokenizer.convert_ids_to_tokens(ids))
    return out


def word_overlap(tokenizer, train_texts: list[str], test_texts: list[str], max_pieces: int = 128) -> dict:
    train_p = {p for seq in _pieces(tokenizer, train_texts, max_pieces) for p in seq}
    test_seqs = _pieces(tokenizer, test_texts, max_pieces)
    occ = [p for seq in test_seqs for p in seq]
    distinct = set(occ)
    return {"piece_overlap": sum(p in train_p for p in occ) / len(occ) if occ else 0.0,
            "distinct_piece_overlap": len(distinct & train_p) / len(distinct) if distinct else 0.0,
            "test_pieces": len(occ), "max_pieces": max_pieces}
