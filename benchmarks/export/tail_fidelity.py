#!/usr/bin/env python3
"""How well a compressed tail keeps the token table: low rank (``--tail-rank``) against product quantisation
(``--tail-pq``) at the same parameter count — variance of the tail rows kept, and (``--dev``) P@1 on development
data only (``udhr-dev``: 24 UDHR languages no reported figure tests; 500 pairs of the Old-Testament dev books).

    python benchmarks/export/tail_fidelity.py [--model e5-small] [--head 40000] [--sizes 48,64,96,128]
                                       [--dev svd:96,pq:96] [--out runs/tail_fidelity.json]

The head is ``xlsent export --keep-vocab HEAD``'s rule (special tokens, the HEAD top-scoring pieces, the pieces
of the bundled training verses); every other piece is the tail. ``--dev`` runs the torch model with the
compressed table (fp32, no int8), so it measures the table alone.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def tail_split(model, head: int) -> tuple[list[int], list[int]]:
    from xlsent.models.vocab.trim import VocabSettings, choose_pieces, read_texts, used_pieces

    tok = model[0].tokenizer
    full = json.loads(tok.backend_tokenizer.to_str())
    settings = VocabSettings(top=head, tail_pq=1)  # the export's rule with a kept tail: no single-character rows
    keep, _ = choose_pieces(full, settings, used_pieces(tok, read_texts(settings.texts, 0)))
    kept = set(keep)
    return keep, [i for i in range(len(full["model"]["vocab"])) if i not in kept]


def variance_kept(model, head: int, sizes: list[int]) -> dict:
    import torch

    from xlsent.models.vocab.tail_embedding import TailFactorisedEmbedding, TailProductQuantisedEmbedding

    keep, tail = tail_split(model, head)
    table = model[0].auto_model.get_input_embeddings().weight.detach().float()
    rows = table[tail]
    total = float(((rows - rows.mean(0)) ** 2).sum())
    out = {"head_rows": len(keep), "tail_rows": len(tail)}
    for size in sizes:
        for name, cls in (("svd", TailFactorisedEmbedding), ("pq", TailProductQuantisedEmbedding)):
            t = time.perf_counter()
            emb = cls.fit(table, torch.tensor(keep), torch.tensor(tail), size)
            err = float(((emb.weight.detach()[len(keep):] - rows) ** 2).sum())
            out[f"{name}:{size}"] = {"variance_kept": 1 - err / total, "parameters": sum(p.numel() for p in emb.parameters()),
                                     "seconds": round(time.perf_counter() - t, 1)}
            print(f"{name}:{size}: variance kept {1 - err / total:.3f}, token-table parameters "
                  f"{out[f'{name}:{size}']['parameters'] / 1e6:.1f}M", flush=True)
    return out


def dev_scores(model_name: str, head: int, config: str) -> dict:
    from xlsent.data.sets.bundled import split_by_language
    from xlsent.data.sets.pairs import load_pairs, side_langs
    from xlsent.encoding.encoder import Encoder
    from xlsent.evaluation.retrieval import evaluate_many, mean_row
    from xlsent.models.handle import load_model
    from xlsent.models.vocab.trim import VocabSettings, trim_vocabulary

    handle = load_model(model_name)
    if config != "full":
        how, size = config.split(":")
        trim_vocabulary(handle.model, VocabSettings(top=head, **{"tail_rank" if how == "svd" else "tail_pq": int(size)}),
                        log=print)
    enc = Encoder.load(handle, memo=True)
    ot = load_pairs("bible-en-ny:dev", sample=500, seed=0).dataset
    r = evaluate_many({"ot": (list(ot["src"]), list(ot["tgt"]), *side_langs(ot))}, enc, "", "cosine", 1, 0, 4,
                      "bible-en-ny:dev")[0]
    ud = load_pairs("udhr-dev", dedupe=False).dataset
    groups = {k: (list(p["src"]), list(p["tgt"]), *side_langs(p)) for k, p in split_by_language(ud).items()}
    m = mean_row(evaluate_many(groups, enc, "", "cosine", 1, 0, 4, "udhr-dev"))
    out = {"ot_dev": [r.src2tgt["p@1"], r.tgt2src["p@1"]], "udhr_dev_mean": [m["src2tgt"]["p@1"], m["tgt2src"]["p@1"]]}
    print(f"{config}: OT dev P@1 {100 * out['ot_dev'][0]:.1f} / {100 * out['ot_dev'][1]:.1f}, udhr-dev mean "
          f"{100 * out['udhr_dev_mean'][0]:.1f} / {100 * out['udhr_dev_mean'][1]:.1f}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--head", type=int, default=40000)
    ap.add_argument("--sizes", default="48,64,96,128", help="ranks / codes a row to compare ('' = skip)")
    ap.add_argument("--dev", default="", help="comma-separated svd:R, pq:M or full, each scored on dev data")
    ap.add_argument("--out", type=Path, default=Path("runs/tail_fidelity.json"))
    args = ap.parse_args()

    from xlsent.models.handle import load_model
    from xlsent.models.registry import quiet_libraries

    quiet_libraries()
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if sizes:
        results["variance"] = variance_kept(load_model(args.model).model, args.head, sizes)
    for config in [c for c in args.dev.split(",") if c.strip()]:
        results.setdefault("dev", {})[config] = dev_scores(args.model, args.head, config)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
