"""Paragraph and document matching (Huang et al. 2023, Table 12): P@1 and P@5 over long texts.

Units are whole paragraphs or documents, each matched against every unit of the other
language (:func:`xlsent.evaluation.retrieval.evaluate_retrieval`, both directions, bootstrap
CIs). Long texts are embedded with chunked pooling (``chunk_words``, default 20 words per chunk,
averaged: Manafi 2025), since encoders truncate at their maximum length. Sources of units:

* ``bible-chapters`` — the 260 held-out New-Testament chapters, English ↔ Chichewa (verses joined);
* ``udhr-articles:CODE`` — the UDHR's preamble and 30 articles, English ↔ CODE;
* two document JSONL files (:mod:`xlsent.data.documents`): documents with the same id, all
  sections joined, form a pair;
* any pairs file whose lines are paragraphs.
"""

from __future__ import annotations

from xlsent.utils.errors import XlsentError


def document_units(spec: str) -> tuple[list[str], list[str], str, str]:
    """(src texts, tgt texts, src lang, tgt lang) of a bundled name or ``SRC.jsonl,TGT.jsonl``."""
    from xlsent.data.documents import bundled_documents, read_documents

    if spec == "bible-chapters":
        from xlsent.data.bundled import load_bundled

        chapters: dict[tuple[str, int], tuple[list[str], list[str]]] = {}
        for r in load_bundled("bible-en-ny:test"):
            en, ny = chapters.setdefault((r["book"], int(r["chapter"])), ([], []))
            en.append(r["src"])
            ny.append(r["tgt"])
        return [" ".join(e) for e, _ in chapters.values()], [" ".join(n) for _, n in chapters.values()], "eng", "nya"
    if spec.startswith("udhr-articles:"):
        code = spec.split(":", 1)[1]
        en, xx = bundled_documents("udhr:eng")[0], bundled_documents(f"udhr:{code}")[0]
        titles = [s.title for s in xx.sections]
        en_by_title = {s.title: s.text for s in en.sections}
        return [en_by_title[t] for t in titles], [s.text for s in xx.sections], "eng", code
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
