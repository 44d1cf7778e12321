"""Bitext mining: margin-scored nearest neighbours over sharded, memory-mapped embeddings.

* :mod:`~xlsent.mining.margin` — margin scores and retrieval modes (LASER);
* :mod:`~xlsent.mining.store` — embeddings on disk in shards;
* :mod:`~xlsent.mining.index` — exact / IVF / IVF-PQ faiss search;
* :mod:`~xlsent.mining.tasks` — the units of work (encode a shard, search a shard);
* :mod:`~xlsent.mining.job` — a resumable job in a work folder, run locally;
* :mod:`~xlsent.mining.mine` — files in, scored pairs out (``xlsent mine``).
"""
