# The commands of docs/guides/your-language.md, run as written, in runs/your-language/. Run from the repository root:
#   sh docs/your-language.sh
set -x
mkdir -p runs/your-language && cd runs/your-language
X=../../.venv/bin/xlsent
PY=../../.venv/bin/python
# stand-ins for your documents: three books of the bundled Old Testament, raw text, one chapter a line
$PY -c "
from xlsent.data.sets.bundled import load_bundled
ds = load_bundled('bible-en-ny:train')
books = {'Judges': 'judges', 'Esther': 'esther', 'Song of Solomon': 'song'}
for book, name in books.items():
    rows = [r for r in ds if r['book'] == book]
    for side, lang in (('src', 'en'), ('tgt', 'ny')):
        chapters = {}
        for r in rows:
            chapters.setdefault(r['chapter'], []).append(r[side])
        open(f'{name}.{lang}.txt', 'w').write(''.join(' '.join(v) + '\n' for v in chapters.values()))
open('documents.tsv', 'w').write(''.join(f'{n}.en.txt\t{n}.ny.txt\n' for n in books.values()))
"
time $X align --batch documents.tsv --split en,ny -o aligned --pairs aligned-pairs.tsv
time $X data filter-pairs aligned-pairs.tsv -o my-pairs.tsv
cut -f2 my-pairs.tsv > en.txt
cut -f3 my-pairs.tsv > ny.txt
time $X data stats my-pairs.tsv --model e5-small
time $X train adapt my-pairs.tsv -o my-model
time $X train curve my-pairs.tsv -o my-curve
time $X train curve my-pairs.tsv --held-out bible-en-ny:test -o my-curve-nt
time $X eval retrieval -m e5-small --dataset bible-en-ny:test --sample 1000 -o base-nt.json
time $X eval retrieval -m my-model/model --dataset bible-en-ny:test --sample 1000 -o adapted-nt.json
time $X models calibrate my-model/model --lang en=en.txt --lang ny=ny.txt
time $X export my-model/model -o my-model-onnx
$X serve my-model/model --index my-pairs.tsv --port 8091 > serve.log 2>&1 &
SERVER=$!
for i in $(seq 1 300); do curl -sf localhost:8091/health > /dev/null && break; sleep 2; done
curl -s localhost:8091/info | $PY -c "import json, sys; d = json.load(sys.stdin); print(json.dumps({k: d[k] for k in ('index', 'centering')}, indent=1))"
$PY -c "import json; print(json.dumps({'query': open('ny.txt').readline().strip(), 'k': 3, 'language': 'ny'}))" > query.json
curl -s localhost:8091/search -H 'Content-Type: application/json' -d @query.json | $PY -m json.tool
kill $SERVER
# §3, a script the model cannot read: your side written by sound in Deseret (a substitute), romanised, adapted
$PY -c "
from xlsent.data.sets.pairs import load_pairs
from xlsent.data.text.transliterate import by_sound
rows = [line.rstrip('\n').split('\t') for line in open('my-pairs.tsv', encoding='utf-8')]
open('my-pairs-dsrt.tsv', 'w', encoding='utf-8').write(''.join(f'{s}\t{en}\t{by_sound(ny, \"Dsrt\")}\n' for s, en, ny in rows))
open('ny-dsrt.txt', 'w', encoding='utf-8').write(''.join(by_sound(ny, 'Dsrt') + '\n' for _, _, ny in rows))
nt = load_pairs('bible-en-ny:test', sample=1000, seed=0, dedupe=False).dataset  # the verses of step 5's --sample 1000
open('nt-dsrt.tsv', 'w', encoding='utf-8').write('en\tny\n' + ''.join(f'{r[\"src\"]}\t{by_sound(r[\"tgt\"], \"Dsrt\")}\n' for r in nt))
"
time $X eval retrieval -m e5-small --pairs nt-dsrt.tsv
time $X models romanize e5-small --texts ny-dsrt.txt -o e5-romanized
time $X train adapt my-pairs-dsrt.tsv -o my-model-dsrt --set models.student=e5-romanized --no-eval
time $X eval retrieval -m my-model-dsrt/model --pairs nt-dsrt.tsv
$PY -c "
from sentence_transformers import SentenceTransformer
model = SentenceTransformer('my-model-dsrt/model')  # a fresh process, nothing of xlsent imported
ny = open('ny-dsrt.txt', encoding='utf-8').readline().strip()
print(ny[:60], '->', model.tokenizer.tokenize(ny)[:12])
"
