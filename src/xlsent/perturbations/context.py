"""Context-word perturbation P4 and its random control (Manafi 2025, §3.1.2 "Context Replacement").

* Candidate words: the test file's and the training file's words tagged ``O`` (every word, for
  untagged text such as title selection, and for POS files), lower-cased, leaving out stop words, single characters and
  words that are not all letters (punctuation, digits).
* **Common words** = candidates of both files; **unique words** = test candidates the training file
  lacks.
* Each word is embedded alone by the model under test — ``[CLS] word [SEP]`` (``<s> word </s>``), the
  last layer's state at position 0 (Nath et al. 2022) — and each common word is replaced by the
  unique word of highest cosine similarity (faiss inner product over unit vectors). The **random
  control** replaces it by a unique word drawn at random (seeded), one fixed draw per word.
* Every ``O`` occurrence of a common word in the test file is replaced (entities are left alone);
  capitalisation is copied: an all-capital original gives an all-capital substitute, a capitalised
  one a capitalised substitute.

**P5** = P3 then P4 (:func:`xlsent.perturbations.suite.perturb`): the common words are those of
the original test file, and P3's replacement entities are not touched by P4.
"""

from __future__ import annotations

import random
from typing import Callable, Sequence

import numpy as np

from xlsent.data.formats.conll import TaggedCorpus
from xlsent.perturbations.entities import Perturbed


def eligible(word: str, stopwords: frozenset[str]) -> bool:
    w = word.lower()
    return len(w) > 1 and w.isalpha() and w not in stopwords


def candidate_words(corpus: TaggedCorpus, stopwords: frozenset[str], only_o: bool = True) -> set[str]:
    out = set()
    for toks, tags in zip(corpus.tokens, corpus.tags):
        for t, y in zip(toks, tags):
            if (not only_o or y == "O") and eligible(t, stopwords):
                out.add(t.lower())
    return out


def copy_case(original: str, new: str) -> str:
    if original.isupper() and len(original) > 1:
        return new.upper()
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def word_vectors(model_path: str, words: Sequence[str], batch_size: int = 256) -> np.ndarray:
    """Unit vectors of words embedded alone: last-layer state at position 0 of ``[CLS] word [SEP]``."""
    return WordEmbedder(model_path, batch_size)(list(words))


Embed = Callable[[Sequence[str]], np.ndarray]


class WordEmbedder:
    """Word vectors (:func:`word_vectors`) memoised per word, the model loaded once on first use: P4 and P5,
    and the title task's P4, embed the same words. Call it with a list of words; one unit row per word."""

    def __init__(self, model_path: str, batch_size: int = 256) -> None:
        self.model_path, self.batch_size = model_path, batch_size
        self._vectors: dict[str, np.ndarray] = {}
        self._encoder = None

    def _embed(self, words: list[str]) -> np.ndarray:
        import torch

        if self._encoder is None:
            from xlsent.models.handle import load_model

            transformer = load_model(self.model_path).model[0]  # the encoder itself: no prompt, no pooling
            self._encoder = (transformer.tokenizer, transformer.auto_model.eval())
        tok, model = self._encoder
        out = []
        with torch.no_grad():
            for s in range(0, len(words), self.batch_size):
                enc = tok(words[s : s + self.batch_size], padding=True, truncation=True, max_length=32,
                          return_tensors="pt").to(model.device)
                h = model(**enc).last_hidden_state[:, 0]
                out.append(torch.nn.functional.normalize(h.float(), dim=-1).cpu().numpy())
        return np.concatenate(out)

    def __call__(self, words: Sequence[str]) -> np.ndarray:
        todo = list(dict.fromkeys(w for w in words if w not in self._vectors))
        if todo:
            for w, v in zip(todo, self._embed(todo)):
                self._vectors[w] = v
        if not words:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._vectors[w] for w in words])


def substitutes(common: list[str], unique: list[str], embed: Embed | None, seed: int, random_control: bool) -> dict:
    """common word → (substitute, cosine or None) — the most similar unique word, or a random one."""
    if not common or not unique:
        return {}
    if random_control:
        rng = random.Random(seed)
        return {w: (rng.choice(unique), None) for w in common}
    import faiss

    vc = np.ascontiguousarray(embed(common), dtype=np.float32)
    vu = np.ascontiguousarray(embed(unique), dtype=np.float32)
    index = faiss.IndexFlatIP(vu.shape[1])
    index.add(vu)
    sims, ids = index.search(vc, 1)
    return {w: (unique[int(ids[k, 0])], float(sims[k, 0])) for k, w in enumerate(common)}


def p4_context(test: TaggedCorpus, train: TaggedCorpus, stopwords: frozenset[str], embed: Embed | None,
               seed: int = 0, random_control: bool = False, only_o: bool = True,
               base: TaggedCorpus | None = None, name: str | None = None) -> Perturbed:
    """P4 (or its random control) on ``test``; ``base`` is the file the word sets come from (P5: the original)."""
    src = base if base is not None else test
    test_words = candidate_words(src, stopwords, only_o)
    train_words = candidate_words(train, stopwords, only_o)
    common = sorted(test_words & train_words)
    unique = sorted(test_words - train_words)
    subs = substitutes(common, unique, embed, seed, random_control)
    tokens, tags, log = [], [], []
    for i, (toks, tg) in enumerate(zip(test.tokens, test.tags)):
        new = list(toks)
        for k, (t, y) in enumerate(zip(toks, tg)):
            if (only_o and y != "O") or t.lower() not in subs:
                continue
            s, cos = subs[t.lower()]
            new[k] = copy_case(t, s)
            log.append({"sentence": i, "start": k, "original": [t], "replacement": [new[k]], "tags": [y],
                        **({"cosine": round(cos, 4)} if cos is not None else {})})
        tokens.append(new)
        tags.append(list(tg))
    label = name or ("P4-random" if random_control else "P4")
    out = Perturbed(label, tokens, tags, log)
    out.mapping = {w: s for w, (s, _) in subs.items()}
    out.counts = {"test words (distinct, eligible)": len(test_words), "common with training": len(common),
                  "test-only (substitute pool)": len(unique), "occurrences replaced": len(log)}
    if not unique and common:
        out.notes.append(f"{label}: no test-only word to substitute — nothing replaced")
    return out
