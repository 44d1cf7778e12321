# The commands of docs/your-language.md, run as written, in runs/your-language/. Run from the repository root:
#   sh docs/your-language.sh
set -x
mkdir -p runs/your-language && cd runs/your-language
X=../../.venv/bin/xlsent
PY=../../.venv/bin/python
$PY -c "from xlsent.data.pairs import load_pairs; ds = load_pairs('bible-en-ny:train', sample=1000, seed=0).dataset; open('my-pairs.tsv', 'w').write('eng\tnya\n' + ''.join(f'{a}\t{b}\n' for a, b in zip(ds['src'], ds['tgt'])))"
tail -n +2 my-pairs.tsv | cut -f1 > en.txt
tail -n +2 my-pairs.tsv | cut -f2 > ny.txt
time $X data stats my-pairs.tsv --model e5-small
time $X train adapt -o my-model --set train.pairs=my-pairs.tsv --set train.sample=0
time $X eval retrieval -m e5-small --dataset bible-en-ny:test --sample 1000 -o base-nt.json
time $X eval retrieval -m my-model/model --dataset bible-en-ny:test --sample 1000 -o adapted-nt.json
time $X models calibrate my-model/model --lang eng=en.txt --lang nya=ny.txt
time $X export my-model/model -o my-model-onnx
$X serve my-model/model --index my-pairs.tsv --port 8091 > serve.log 2>&1 &
SERVER=$!
for i in $(seq 1 300); do curl -sf localhost:8091/health > /dev/null && break; sleep 2; done
curl -s localhost:8091/info | $PY -c "import json, sys; d = json.load(sys.stdin); print(json.dumps({k: d[k] for k in ('index', 'centering')}, indent=1))"
$PY -c "import json; print(json.dumps({'query': open('ny.txt').readline().strip(), 'k': 3, 'language': 'nya'}))" > query.json
curl -s localhost:8091/search -H 'Content-Type: application/json' -d @query.json | $PY -m json.tool
kill $SERVER
