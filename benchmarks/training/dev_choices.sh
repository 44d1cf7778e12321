#!/usr/bin/env bash
# Recipe defaults re-chosen on development data (issue 35 §3; docs/experiments/siamese-and-recipe-defaults.md):
# each default and its alternative trained on bible-en-ny:dev-train, scored on bible-en-ny:dev and udhr-dev.
#   bash benchmarks/training/dev_choices.sh [OUT]      (default OUT: runs/dev-choices; a finished run is reused)
set -euo pipefail
O=${1:-runs/dev-choices}
mkdir -p "$O"
DEV="--set train.pairs=bible-en-ny:dev-train --set eval.pairs=bible-en-ny:dev --set eval.udhr_pool=udhr-dev"
# scp trains on spans: the bundled structural-en-ny:train without the verses of the dev books
python - "$O" <<'PY'
import gzip, json, shutil, sys
from pathlib import Path
from xlsent.data.sets.bundled import data_dir, load_bundled
from xlsent.data.derived.structural import BUNDLED_SPANS
out = Path(sys.argv[1]) / "spans.dev-train.jsonl.gz"
if not out.exists():
    dev = {(s, t) for s, t in zip(*(load_bundled("bible-en-ny:dev")[c] for c in ("src", "tgt")))}
    spans = data_dir() / BUNDLED_SPANS["structural-en-ny:train"]
    kept = dropped = 0
    with gzip.open(spans, "rt", encoding="utf-8") as f, gzip.open(out, "wt", encoding="utf-8") as g:
        for line in f:
            r = json.loads(line)
            if (r["src"], r["tgt"]) in dev:
                dropped += 1
            else:
                g.write(line)
                kept += 1
    shutil.copy(str(spans) + ".meta.json", str(out) + ".meta.json")
    print(f"{out}: {kept} pairs kept, {dropped} dev-book verses left out")
PY
run() { name=$1; shift; [ -f "$O/$name/metrics.json" ] && return; echo "== $name $(date +%T)"; xlsent train "$@" -o "$O/$name"; }
GLOSS="--set train.pairs=bible-en-ny:dev-train --set eval.pairs=bible-en-ny:dev"
run gloss-default gloss $GLOSS
run gloss-small gloss --preset small $GLOSS
SCP="--set train.spans=$O/spans.dev-train.jsonl.gz --set eval.spans= --set eval.pairs=bible-en-ny:dev --set eval.udhr_pool=udhr-dev"
run scp-default scp $SCP
run scp-mlm scp $SCP --set mlm.enabled=true
run xkd-default xkd $DEV
run xkd-small xkd --preset small $DEV --set eval.udhr=true
run triplet-kd-default triplet-kd $DEV
run triplet-kd-small triplet-kd --preset small $DEV --set eval.udhr=true
