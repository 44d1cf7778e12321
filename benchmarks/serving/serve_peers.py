#!/usr/bin/env python3
"""``xlsent serve`` against the server users would pick instead: infinity (``infinity-emb``), serving the same
model on the same cores, on 127.0.0.1 only.

    python benchmarks/serving/serve_peers.py [--model e5-small] [--threads 2] [--clients 1,8,32] [--seconds 10]
                                     [--rounds 3] [--servers xlsent-torch,xlsent-onnx,infinity,infinity-bf16]
                                     [--infinity-version 0.0.78] [--infinity-venv DIR] [--json OUT.json]

**infinity's own environment.** infinity-emb 0.0.78 pins sentence-transformers < 4 and numpy < 2, which xlsent's
environment cannot hold. On first use this script builds it a virtual environment of its own
(``--infinity-venv``, default ``~/.cache/xlsent/bench/infinity-VERSION``) from the package registry:
``pip install "infinity-emb[server,torch]==VERSION" torch==<this environment's torch>`` (the same torch build
as xlsent's, so both run the same kernels). It says so when it does; later runs reuse it.

**The same model, in a folder infinity can read.** sentence-transformers 3.x cannot load a folder written by
5.x/6.x (module classes moved to ``sentence_transformers.base…``, the pooling config was renamed, transformers 5
writes ``tokenizer_class: TokenizersBackend``). The script writes a copy beside infinity's environment whose
weights and ``tokenizer.json`` are links to the model's own files, with the configuration in the 3.x spelling
(same pooling, same maximum length). No version of infinity loads the 6.x folder as it is: the newest, 0.0.78,
is the one with sentence-transformers 3.x.

**Prompts.** infinity does not apply a model's default prompt (e5's ``"passage: "``): served as is, its vectors
are those of the text without the prefix (cosine about 0.98 to ``SentenceTransformer(MODEL).encode``). The client
therefore sends infinity the text with the prefix already on — what a user of infinity does — so every server
embeds the same pieces and returns the same vector; the table reports the vectors' cosine both ways.

Each server runs in its own process with ``--threads`` threads (``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` for
infinity's torch; ``--threads`` for xlsent, whose onnx backend sets onnxruntime's too); every server stays up
(an idle one takes no CPU) and they take turns, ``--rounds`` times per client count, in a rotating order — a
drift in the shared machine's speed falls on all of them. ``C`` closed-loop clients each send one verse a
request (``/v1/embeddings`` for xlsent, ``/embeddings`` for infinity, OpenAI-style bodies). Reported per server
and client count: requests/s (pooled over rounds, each round in brackets), p50/p99 latency, and xlsent's ratio
to infinity; per server, the cosine of its vectors to ``SentenceTransformer(MODEL).encode`` on 200 verses.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_load import closed_loop, free_port, merge_rounds, wait_healthy  # noqa: E402

QUIET = {"INFINITY_ANONYMOUS_USAGE_STATS": "0", "DO_NOT_TRACK": "1", "HF_HUB_OFFLINE": "1",
         "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def infinity_env(version: str, venv: Path) -> Path:
    """infinity's own virtual environment (built once); the path of its ``infinity_emb`` command."""
    exe = venv / "bin" / "infinity_emb"
    if exe.exists():
        return exe
    import torch

    torch_pin = torch.__version__.split("+")[0]
    print(f"building infinity-emb=={version}'s own virtual environment in {venv} from the package registry "
          f"(first use; it pins sentence-transformers < 4 and numpy < 2; torch=={torch_pin} as here)", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"infinity-emb[server,torch]=={version}",
                    f"torch=={torch_pin}"], check=True)
    return exe


def st3_folder(model_dir: Path, out: Path) -> Path:
    """A copy of a sentence-transformers 5.x/6.x folder that 3.x reads: the same weights and tokenizer (links),
    the configuration in the 3.x spelling. Only Transformer → Pooling → (Normalize) models, as xlsent's are."""
    modules = json.loads((model_dir / "modules.json").read_text())
    kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling", "Normalize"], ["Transformer", "Pooling"]) or modules[0]["path"]:
        sys.exit(f"{model_dir}: modules {kinds}; this benchmark converts Transformer (at the top of the folder) → "
                 "Pooling → Normalize only")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for f in model_dir.iterdir():
        if f.is_file() and f.name not in ("modules.json", "sentence_bert_config.json", "tokenizer_config.json"):
            (out / f.name).symlink_to(f.resolve())
    (out / "modules.json").write_text(json.dumps(
        [{"idx": m["idx"], "name": m["name"], "path": m["path"], "type": f"sentence_transformers.models.{k}"}
         for m, k in zip(modules, kinds)], indent=1))
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model_dir), device="cpu")
    lower = json.loads((model_dir / "sentence_bert_config.json").read_text()).get("do_lower_case", False)
    (out / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": st.max_seq_length,
                                                               "do_lower_case": lower}))
    tok = json.loads((model_dir / "tokenizer_config.json").read_text())
    tok.pop("backend", None)
    tok["tokenizer_class"] = "PreTrainedTokenizerFast" if tok.get("tokenizer_class") == "TokenizersBackend" \
        else tok.get("tokenizer_class", "PreTrainedTokenizerFast")
    (out / "tokenizer_config.json").write_text(json.dumps(tok, indent=1))
    pool = json.loads((model_dir / modules[1]["path"] / "config.json").read_text())
    mode = pool.get("pooling_mode", "mean")
    if not isinstance(mode, str):
        sys.exit(f"{model_dir}: pooling modes {mode}; this benchmark converts a single pooling mode only")
    modes = {"cls": "cls_token", "mean": "mean_tokens", "max": "max_tokens", "mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
             "weightedmean": "weightedmean_tokens", "lasttoken": "lasttoken"}
    if mode not in modes:
        sys.exit(f"{model_dir}: pooling mode {mode!r} has no 3.x spelling here")
    cfg = {"word_embedding_dimension": pool.get("embedding_dimension", pool.get("word_embedding_dimension")),
           **{f"pooling_mode_{v}": v == modes[mode] for v in modes.values()},
           "include_prompt": pool.get("include_prompt", True)}
    (out / modules[1]["path"]).mkdir()
    (out / modules[1]["path"] / "config.json").write_text(json.dumps(cfg, indent=1))
    if len(modules) > 2:
        (out / modules[2]["path"]).symlink_to((model_dir / modules[2]["path"]).resolve())
    return out


def start(kind: str, args, port: int, model_dir: Path, compat: Path | None, log: Path) -> subprocess.Popen:
    env = {**os.environ, **QUIET}
    if kind.startswith("infinity"):
        env.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
        cmd = [str(args.infinity_exe), "v2", "--model-id", str(compat), "--served-model-name", "model",
               "--engine", "torch", "--device", "cpu", "--port", str(port), "--host", "127.0.0.1"]
        if kind == "infinity-bf16":  # its weights cast to bf16 (its default on a CPU, auto, is fp32)
            cmd += ["--dtype", "bfloat16"]
    else:
        backend = kind.split("-", 1)[1]
        cmd = [sys.executable, "-m", "xlsent.cli.main", "serve", str(model_dir), "--name", "model", "--port",
               str(port), "--backend", backend, "--threads", str(args.threads), "--max-queue", "4096"]
    proc = subprocess.Popen(cmd, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env)
    wait_healthy(port, proc, kind, log=log)
    return proc


def served_vectors(url: str, texts: list[str]):
    import httpx
    import numpy as np

    out = []
    for i in range(0, len(texts), 32):
        r = httpx.post(url, json={"input": texts[i:i + 32], "model": "model", "encoding_format": "float"}, timeout=120)
        r.raise_for_status()
        out += [d["embedding"] for d in sorted(r.json()["data"], key=lambda d: d["index"])]
    return np.asarray(out, dtype=np.float32)


def cosines(a, b) -> tuple[float, float]:
    import numpy as np

    c = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    return float(c.min()), float(c.mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--clients", default="1,8,32")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--servers", default="xlsent-torch,xlsent-onnx,infinity")
    ap.add_argument("--infinity-version", default="0.0.78")
    ap.add_argument("--infinity-venv", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.environ.update({k: v for k, v in QUIET.items() if k != "HF_HUB_OFFLINE"})
    from sentence_transformers import SentenceTransformer

    from xlsent.data.sets.pairs import load_pairs
    from xlsent.models.registry import resolve_model_path

    servers = args.servers.split(",")
    unknown = set(servers) - {"xlsent-torch", "xlsent-onnx", "infinity", "infinity-bf16"}
    if unknown:
        sys.exit(f"--servers: unknown {', '.join(sorted(unknown))}")
    model_dir = Path(resolve_model_path(args.model))
    home = Path(args.infinity_venv or Path.home() / ".cache" / "xlsent" / "bench" / f"infinity-{args.infinity_version}")
    compat = None
    if any(k.startswith("infinity") for k in servers):
        args.infinity_exe = infinity_env(args.infinity_version, home)
        compat = st3_folder(model_dir, home.parent / f"{home.name}-models" / model_dir.name)
    st = SentenceTransformer(str(model_dir), device="cpu")
    prefix = st.prompts.get(st.default_prompt_name, "") if st.default_prompt_name else ""
    ds = load_pairs("bible-en-ny:test", dedupe=False, sample=2000, seed=args.seed).dataset
    texts = list(ds["src"]) + list(ds["tgt"])
    random.Random(args.seed).shuffle(texts)
    check = texts[:200]
    reference = st.encode(check, convert_to_numpy=True)
    clients = [int(x) for x in args.clients.split(",")]
    logs = home.parent / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    print(f"model {args.model} ({model_dir}), {args.threads} threads per server, loopback only; "
          f"servers: {', '.join(servers)}" + (f"; infinity-emb {args.infinity_version} from {home}" if compat else ""))

    procs, urls, fidelity = {}, {}, {}
    try:
        for kind in servers:
            port = free_port()
            procs[kind] = start(kind, args, port, model_dir, compat, logs / f"{kind}.log")
            urls[kind] = f"http://127.0.0.1:{port}" + ("/embeddings" if kind.startswith("infinity") else "/v1/embeddings")
            if kind.startswith("infinity"):
                fidelity[kind] = {"as_served": cosines(served_vectors(urls[kind], check), reference),
                                  "with_prefix": cosines(served_vectors(urls[kind], [prefix + t for t in check]),
                                                         reference)}
            else:
                fidelity[kind] = {"as_served": cosines(served_vectors(urls[kind], check), reference)}
        sent = {k: ([prefix + t for t in texts] if k.startswith("infinity") else texts) for k in servers}
        for kind in servers:
            asyncio.run(closed_loop(urls[kind], sent[kind], 4, 3))  # warm-up
        rows: dict[str, list[dict]] = {k: [] for k in servers}
        for c in clients:
            runs: dict[str, list[dict]] = {k: [] for k in servers}
            for r in range(args.rounds):
                for kind in servers[r % len(servers):] + servers[:r % len(servers)]:
                    runs[kind].append(asyncio.run(closed_loop(urls[kind], sent[kind], c, args.seconds)))
            for kind in servers:
                rows[kind].append(merge_rounds(runs[kind]))
                bad = {code: n for run in runs[kind] for code, n in run["codes"].items() if code != 200}
                if bad:
                    print(f"  {kind} at {c} clients answered non-200: {bad}")
    finally:
        for proc in procs.values():
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()

    print(f"\nvectors against SentenceTransformer({args.model}).encode on {len(check)} verses (min / mean cosine):")
    for kind, f in fidelity.items():
        line = f"  {kind}: as served {f['as_served'][0]:.6f} / {f['as_served'][1]:.6f}"
        if "with_prefix" in f:
            line += (f"; with the model's prompt {prefix!r} sent by the client {f['with_prefix'][0]:.6f} / "
                     f"{f['with_prefix'][1]:.6f} (the throughput below is measured this way)")
        print(line)
    print(f"\nrequests/s: {args.rounds} rotating rounds of {args.seconds:.0f} s per server and client count "
          "(pooled; each round in brackets); latency p50 / p99 in ms")
    print("\n| clients | " + " | ".join(f"{k} req/s | {k} p50 / p99" for k in servers) + " |"
          + ("".join(f" {k} ÷ infinity |" for k in servers if k != "infinity") if "infinity" in servers else ""))
    print("|---|" + "---|---|" * len(servers) + ("---|" * (len(servers) - 1) if "infinity" in servers else ""))
    for i, c in enumerate(clients):
        cells = []
        for k in servers:
            row = rows[k][i]
            cells.append(f"{row['rps']:.1f} [{', '.join(f'{x:.1f}' for x in row['round_rps'])}] | "
                         f"{row['p50_ms']:.0f} / {row['p99_ms']:.0f}")
        ratios = [f"{rows[k][i]['rps'] / rows['infinity'][i]['rps']:.2f}×" for k in servers if k != "infinity"] \
            if "infinity" in servers else []
        print(f"| {c} | " + " | ".join(cells) + " |" + "".join(f" {x} |" for x in ratios))
    if args.json:
        Path(args.json).write_text(json.dumps({"model": args.model, "threads": args.threads, "fidelity": fidelity,
                                               "rows": rows, "infinity_version": args.infinity_version},
                                              indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
