"""Changes to a model's tokenizer and token table: what ``xlsent models extend-vocab``, ``xlsent models romanize``
and ``xlsent export --keep-vocab`` do to a loaded sentence-transformers model before it is saved, trained or exported.

* :mod:`xlsent.models.vocab.extend` — new pieces for a script the tokenizer cannot read, their rows, and the
  token table that trains only them (:class:`~xlsent.models.vocab.extend.AddedRowsEmbedding`, what ``train adapt``
  uses on such a model);
* :mod:`xlsent.models.vocab.romanize` — the script written in Latin letters by the tokenizer's own normaliser, and
  how to tell a folder that romanises (:func:`~xlsent.models.vocab.romanize.romanizes`, its record's file);
* :mod:`xlsent.models.vocab.trim` — vocabulary trimming: keep the pieces chosen texts use, remap ids, rebuild the
  tokenizer so that it re-segments with what is left (or keep the other pieces compressed);
* :mod:`xlsent.models.vocab.tail_embedding` — the token table whose rare pieces are stored compressed (low rank
  or product-quantised), what the trim builds with ``--tail-rank`` / ``--tail-pq``;
* :mod:`xlsent.models.vocab.tokenizer` — what they share: the word-start mark, a tokenizer rebuilt around an
  edited ``tokenizer.json``.

The old paths under :mod:`xlsent.exporter` (``extend_vocab``, ``romanize``, ``vocab``, ``tail_embedding``) are these
same modules.
"""
