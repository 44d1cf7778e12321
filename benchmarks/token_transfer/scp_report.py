"""Markdown tables for docs/results.md from `xlsent train scp` run folders (and `eval ner` JSON files).

    python benchmarks/token_transfer/scp_report.py runs/scp-default runs/scp-nomlm runs/scp-inbatch runs/scp-moco \
        [--ner-json runs/scp-ner/base-ny.json runs/scp-nomlm-ner/ny.json …]

For each run: the setting that differs from the default (variant, MLM, queue, types), training minutes,
the final SCP loss, NT sentence retrieval both ways (with the 95% CI), the UDHR means and structural-span
P@1 both ways and per type; the base model's row from the first run that evaluated it. For each
`eval ner` JSON: mean ± sd over its models and each model's micro F1 with its bootstrap CI.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml


def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.1f}"


def _ci(r) -> str:
    return f"{_pct(r['p@1'])} [{_pct(r['ci95']['p@1'][0])}, {_pct(r['ci95']['p@1'][1])}]"


def _row(name: str, m: dict, minutes: str, loss: str) -> str:
    ret, sp = m["retrieval"], m.get("spans")
    u = m.get("udhr", {}).get("mean")
    types = " / ".join(_pct(sp["by_type"][t]["src2tgt"]) if sp and t in sp["by_type"] else "—"
                       for t in ("subject", "verb", "object", "entity"))
    return (f"| {name} | {minutes} | {loss} | {_ci(ret['tgt2src'])} | {_ci(ret['src2tgt'])} | "
            f"{_pct(u['tgt2src']['p@1']) if u else '—'} | {_pct(u['src2tgt']['p@1']) if u else '—'} | "
            f"{_pct(sp['src2tgt']['p@1']) if sp else '—'} | {_pct(sp['tgt2src']['p@1']) if sp else '—'} | {types} |")


def runs(folders: list[Path]) -> None:
    print("| run | train min | final L_scp | NT ny→en [95% CI] | NT en→ny [95% CI] | UDHR xx→en | UDHR en→xx | "
          "span en→ny | span ny→en | span en→ny subj / verb / obj / ent |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    base_done = False
    for f in folders:
        metrics = json.loads((f / "metrics.json").read_text())
        cfg = yaml.safe_load((f / "config.yaml").read_text())
        stage = json.loads((f / "stage.json").read_text())
        log = [json.loads(x) for x in (f / "train_log.jsonl").read_text().splitlines()]
        for name, m in metrics["models"].items():
            if name.startswith("base"):
                if not base_done:
                    print(_row(name, m, "—", "—"))
                    base_done = True
                continue
            s = cfg["scp"]
            label = (f"{f.name}: {s['variant']}, queue {s['queue_size']}, MLM {'on' if cfg['mlm']['enabled'] else 'off'}"
                     f", negatives {s['negatives']}, types {'/'.join((cfg.get('train') or {}).get('types') or cfg['data']['types'])}")  # data: before the rename
            print(_row(label, m, f"{stage['seconds'] / 60:.1f}", f"{log[-1]['scp']:.2f}"))


def ner(files: list[Path]) -> None:
    for p in files:
        d = json.loads(p.read_text())
        models = d["models"]
        cells = ", ".join(f"{_pct(m['micro_f1']['value'])} [{_pct(m['micro_f1']['ci95'][0])}, "
                          f"{_pct(m['micro_f1']['ci95'][1])}]" for m in models.values())
        print(f"| {p} ({d['test']}, {d['sentences']} sentences) | {_pct(d['mean'])} ± {_pct(d['sd'])} | {cells} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="*", type=Path)
    ap.add_argument("--ner-json", nargs="*", type=Path, default=[])
    a = ap.parse_args()
    if a.folders:
        runs(a.folders)
    if a.ner_json:
        print("\n| tagger set | micro F1 ×100 mean ± sd | per model [95% CI] |\n|---|---|---|")
        ner(a.ner_json)
