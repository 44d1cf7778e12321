"""Paragraph and document matching (Huang et al. 2023, Table 12): P@1 and P@5 over long texts.

Units are whole paragraphs or documents, each matched against every unit of the other
language (:func:`xlsent.evaluation.retrieval.evaluate_retrieval`, both directions, bootstrap
CIs). Long texts are embedded with chunked pooling (``chunk_words``, default 20 words per chunk,
averaged: Manafi 2025), since encoders truncate at their maximum length. Sources of units:

* ``bible-chapters`` — the 260 held-out New-Testament chapters, English ↔ Chichewa (verses joined);
* ``udhr-articles:CODE`` — the UDHR's preamble and 30 articles, English ↔ CODE;
* two document JSONL files (:mod:`xlsent.data.formats.documents`): documents with the same id, all
  sections joined, form a pair;
* any pairs file whose lines are paragraphs.
"""

from __future__ import annotations

from xlsent.utils.errors import XlsentError


def document_units(spec: str) -> tuple[list[str], list[str], str, str]:
    """(src texts, tgt texts, src lang, tgt lang) of a bundled name or ``SRC.jsonl,TGT.jsonl``."""
    from xlsent.data.formats.documents import read_documents
    from xlsent.data.sets.registry import find

    bundled = find(spec, "documents")
    if bundled is not None:
        return bundled.load()
    if "," in spec:
        a, b = spec.split(",", 1)
        src_docs, tgt_docs = read_documents(a), read_documents(b)
        by_id = {d.id: d for d in tgt_docs}
        pairs = [(d, by_id[d.id]) for d in src_docs if d.id in by_id]
        if not pairs:
            raise XlsentError(f"{a} and {b} share no document id — documents pair up by their \"id\"")
        join = lambda d: " ".join(s.text for s in d.sections)  # noqa: E731
        return [join(s) for s, _ in pairs], [join(t) for _, t in pairs], src_docs[0].lang, tgt_docs[0].lang
    raise XlsentError(f"unknown documents '{spec}': use bible-chapters, udhr-articles:CODE or SRC.jsonl,TGT.jsonl")
