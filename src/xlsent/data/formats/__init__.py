"""File formats and their readers: parallel pairs (TSV, JSONL, Moses), texts by row range, CoNLL and tagged
corpora, STS, labelled texts, multiple choice, sentence alignments, titled documents, bilingual dictionaries and
comparable corpora (BUCC), each with the bundled sets of its kind."""
