"""Sentence alignment of translated documents (Vecalign)."""

#: how a run of sentences is embedded (``xlsent align --runs``): its joined text, or its sentences' normalised mean
RUNS = ("concat", "mean")
