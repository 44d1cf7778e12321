"""Entity perturbations of a BIO test file (Manafi 2025, §3.1.2): P1 given names, P2 places, P3 shared entities.

All three change the test file only, keep every sentence (so base and perturbed predictions pair
up sentence by sentence), re-tag a replacement of m tokens as ``B-X I-X…``, and log every change.

* **P1** — the first token of every ``PER`` entity (the given name) → a random given name from the
  list (drawn per occurrence).
* **P2** — every ``LOC`` entity, whole → a random place name from the list (drawn per occurrence).
* **P3** — every entity that also occurs in the training file (same tokens, same label) → an entity
  of the same label that occurs in the test file but not in the training file; one fixed mapping per
  entity (Manafi: "for each common entity, we randomly select an entity from the unique entities
  pool"), so every occurrence of *Yerusalemu* becomes the same replacement. An entity whose label
  has no test-only entity is left as it is and counted.

Decisions: entity identity is the exact token sequence with its label (the paper intersects
"complete entities"); the replacement is never the original; a name list defaults to the given
names / places of the target language's own training entities (first tokens of ``PER`` entities;
whole ``LOC`` entities), the paper's Wiktionary lists being unavailable offline.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from xlsent.data.derived.projection import entity_spans
from xlsent.data.formats.conll import TaggedCorpus


@dataclass
class Perturbed:
    """A perturbed copy of a test corpus and the log of every replacement."""

    name: str
    tokens: list[list[str]]
    tags: list[list[str]]
    replacements: list[dict] = field(default_factory=list)
    mapping: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def corpus(self, path: str = "") -> TaggedCorpus:
        return TaggedCorpus(self.tokens, self.tags, list(range(len(self.tokens))), path)


def entities(corpus: TaggedCorpus) -> list[tuple[int, int, int, str, tuple[str, ...]]]:
    """(sentence, start, end, label, tokens) of every entity."""
    out = []
    for i, (toks, tags) in enumerate(zip(corpus.tokens, corpus.tags)):
        for a, b, lab in entity_spans(tags):
            out.append((i, a, b, lab, tuple(toks[a:b])))
    return out


def _retag(label: str, n: int) -> list[str]:
    return ["B-" + label] + ["I-" + label] * (n - 1)


def replace_spans(corpus: TaggedCorpus, edits: dict[int, list[tuple[int, int, list[str], list[str]]]], name: str,
                  log: list[dict]) -> Perturbed:
    """Apply per-sentence edits ``(start, end, new_tokens, new_tags)`` (non-overlapping) and log them."""
    tokens, tags = [], []
    for i, (toks, tg) in enumerate(zip(corpus.tokens, corpus.tags)):
        ed = sorted(edits.get(i, []))
        if not ed:
            tokens.append(list(toks))
            tags.append(list(tg))
            continue
        nt, ny, pos = [], [], 0
        for a, b, new_t, new_y in ed:
            nt += toks[pos:a]
            ny += tg[pos:a]
            log.append({"sentence": i, "start": len(nt), "original": toks[a:b], "original_tags": tg[a:b],
                        "replacement": list(new_t), "tags": list(new_y)})
            nt += new_t
            ny += new_y
            pos = b
        tokens.append(nt + toks[pos:])
        tags.append(ny + tg[pos:])
    return Perturbed(name, tokens, tags, log)


def default_given_names(train_target: TaggedCorpus) -> list[str]:
    """First tokens of the ``PER`` entities of the target language's training file (distinct, sorted)."""
    return sorted({e[4][0] for e in entities(train_target) if e[3] == "PER"})


def default_places(train_target: TaggedCorpus) -> list[list[str]]:
    """Whole ``LOC`` entities of the target language's training file (distinct, sorted)."""
    return [list(x) for x in sorted({e[4] for e in entities(train_target) if e[3] == "LOC"})]


def _substitute_label(test: TaggedCorpus, label: str, pool: list[tuple[str, ...]], seed: int, name: str,
                      first_token_only: bool) -> Perturbed:
    """Every ``label`` entity of ``test`` → a random pick from ``pool`` (never the entity itself when the pool
    has another choice). ``first_token_only``: only the entity's first token is replaced (P1: the given name;
    the rest of the entity, I-PER, follows the new tokens unchanged)."""
    rng = random.Random(seed)
    edits: dict[int, list] = {}
    for i, a, b, lab, toks in entities(test):
        if lab != label:
            continue
        own = toks[:1] if first_token_only else toks
        new = list(rng.choice([p for p in pool if p != own] or pool))
        edits.setdefault(i, []).append((a, a + 1 if first_token_only else b, new, _retag(label, len(new))))
    out = replace_spans(test, edits, name, [])
    out.counts = {f"{label} entities": sum(len(v) for v in edits.values())}
    return out


def p1_given_names(test: TaggedCorpus, names: list[str], seed: int) -> Perturbed:
    """P1: the given name (first token) of every PER entity → a random name from ``names``."""
    if not names:
        raise ValueError("P1 needs a list of given names")
    return _substitute_label(test, "PER", [tuple(n.split()) for n in names], seed, "P1", first_token_only=True)


def p2_places(test: TaggedCorpus, places: list[list[str]], seed: int) -> Perturbed:
    """P2: every LOC entity → a random place from ``places``."""
    if not places:
        raise ValueError("P2 needs a list of place names")
    return _substitute_label(test, "LOC", [tuple(p) for p in places], seed, "P2", first_token_only=False)


def p3_shared_entities(test: TaggedCorpus, train: TaggedCorpus, seed: int) -> Perturbed:
    rng = random.Random(seed)
    test_ents = entities(test)
    train_set = {(e[3], e[4]) for e in entities(train)}
    test_set = sorted({(e[3], e[4]) for e in test_ents})
    common = [e for e in test_set if e in train_set]
    unique: dict[str, list[tuple[str, ...]]] = {}
    for lab, toks in test_set:
        if (lab, toks) not in train_set:
            unique.setdefault(lab, []).append(toks)
    mapping: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}
    unmapped = 0
    for lab, toks in common:
        pool = [u for u in unique.get(lab, []) if u != toks]
        if pool:
            mapping[(lab, toks)] = rng.choice(pool)
        else:
            unmapped += 1
    edits: dict[int, list] = {}
    for i, a, b, lab, toks in test_ents:
        new = mapping.get((lab, toks))
        if new is not None:
            edits.setdefault(i, []).append((a, b, list(new), _retag(lab, len(new))))
    out = replace_spans(test, edits, "P3", [])
    out.mapping = {f"{lab}:{' '.join(t)}": " ".join(new) for (lab, t), new in mapping.items()}
    out.counts = {"test entities (distinct)": len(test_set), "shared with training (distinct)": len(common),
                  "mapped": len(mapping), "left: no test-only entity of the label": unmapped,
                  "occurrences replaced": sum(len(v) for v in edits.values())}
    return out
