"""The ``documents`` task type: retrieval over whole documents, each embedded as the mean of its chunks."""

from __future__ import annotations

from dataclasses import dataclass

from xlsent.evaluation.tasks.options import _chunk_words
from xlsent.evaluation.tasks.retrieval import RetrievalTask


@dataclass
class DocumentsTask(RetrievalTask):
    """Document matching: retrieval over whole documents, each embedded as the mean of ≤ ``chunk_words``-word
    chunks (Huang et al. 2023, Table 12)."""

    type = "documents"
    mteb_main_score = "p@1"
    measures = "P@1 over documents (chunked pooling), mean of both directions"
    kind = "documents"
    user_files = "SRC.jsonl,TGT.jsonl (documents paired by id) or PAIRS whose lines are documents"
    mteb_type = ""  # MTEB embeds a document whole: not this protocol
    one_language = True

    chunk_words: int = _chunk_words(20)

    def load(self) -> None:
        from xlsent.data.sets.registry import find
        from xlsent.evaluation.documents import document_units

        dataset = self.declaration.dataset
        if find(dataset, "documents") is None and not all(p.endswith(".jsonl") for p in dataset.split(",")):
            return super().load()  # a pairs file whose lines are documents
        from xlsent.evaluation.retrieval import Pool

        self.pools = {dataset: Pool(*document_units(dataset))}
        self.profile = self.summary = False
