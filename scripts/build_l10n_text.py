#!/usr/bin/env python3
"""Monolingual sentences in many languages from the translated message catalogues of Debian packages.

    python scripts/build_l10n_text.py -o runs/l10n.txt                 # the UDHR languages xlsent evaluates
    python scripts/build_l10n_text.py -o runs/l10n.txt --all-languages
    xlsent train multistage --preset compress --set train.monolingual=runs/l10n.txt -o runs/compress-l10n

Why: the multi-stage student's stages 2–3 only imitate the assistant, so monolingual text in a
language is enough to keep it through compression (``train.monolingual``). No corpus in the
UDHR's low-resource languages can be had offline here, but Debian's GNOME, GTK, glibc and
LibreOffice packages ship gettext catalogues (``*.mo``) translated into about 130 languages —
the source of OPUS's GNOME corpus. Each ``msgstr`` whose English ``msgid`` is a plain sentence
(≥ 5 words, no format specifiers, markup, paths or mnemonics) becomes one line; the translation
must have ≥ 4 words (characters in scripts without spaces). Texts are NFC-normalised and
de-duplicated per language, at most ``--max-per-language`` per language (seeded sample), and the
build prints, per language, what it kept and what each filter removed.

Coverage (Debian 12 packages below, measured): 1,000–2,000 sentences each for vie, ben, uig, khm, nep;
100–1,000 for xho, mya, khk, plt, zul, ckb, kmr, hau, ibo, sin, pbu, kir, yor; under 50 for amh, tgl,
mri; none for ceb, smo, jav, sun, som, swh, quz, gug, fij, lao, hat, nya (39,009 sentences in 34
languages with the default cap of 2,000). Licences: the packages' own (mostly GPL-2+/LGPL-2.1+); the output is
for local training and is not shipped with xlsent.
"""

from __future__ import annotations

import argparse
import gettext
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from xlsent.data.filters.cleaning import count_words, normalize_text  # noqa: E402

PACKAGES = (
    "libgtk-3-common gnome-control-center-data libglib2.0-data gnome-shell-common nautilus-data "
    "evolution-data-server-common gnome-desktop3-data gnome-settings-daemon-common network-manager locales "
    "util-linux-locales libreoffice-l10n-zu libreoffice-l10n-xh libreoffice-l10n-am"
).split()

# gettext locale (ISO 639-1 or -3, before any _REGION/@script) → the ISO 639-3 code of xlsent's UDHR set
UDHR_LANGS = {
    "es": "spa", "fr": "fra", "de": "deu", "pt": "por", "ru": "rus", "ar": "arb", "fa": "pes", "hi": "hin",
    "bn": "ben", "ur": "urd", "tr": "tur", "id": "ind", "vi": "vie", "zh": "cmn", "ja": "jpn", "ko": "kor",
    "sw": "swh", "yo": "yor", "ha": "hau", "ig": "ibo", "zu": "zul", "xh": "xho", "am": "amh", "so": "som",
    "ny": "nya", "tl": "tgl", "fil": "tgl", "ceb": "ceb", "jv": "jav", "su": "sun", "mg": "plt", "ckb": "ckb",
    "ku": "kmr", "kmr": "kmr", "ps": "pbu", "ne": "nep", "si": "sin", "km": "khm", "lo": "lao", "my": "mya",
    "mn": "khk", "ky": "kir", "ug": "uig", "qu": "quz", "gn": "gug", "ht": "hat", "fj": "fij", "mi": "mri",
    "sm": "smo",
}
MSGID_NOISE = re.compile(r"[%{}<>_&\\|@#$=/\[\]]|\.\.\.|…|\w\.\w")
LOCALE_DIR = re.compile(r"/(?:locale|resource)/([^/]+)/LC_MESSAGES/[^/]+\.mo$")


def fetch(tmp: Path, packages: list[str]) -> Path:
    subprocess.run(["apt-get", "download", *packages], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
    root = tmp / "x"
    for deb in sorted(tmp.glob("*.deb")):
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    return root


def catalogue_sentences(root: Path, keep: dict[str, str] | None) -> tuple[dict[str, list[str]], Counter]:
    """Per language: translations of plain English sentences; ``removed`` counts each filter's drops."""
    texts: dict[str, list[str]] = defaultdict(list)
    removed: Counter = Counter()
    for mo in sorted(root.rglob("*.mo")):
        m = LOCALE_DIR.search(mo.as_posix())
        if not m:
            continue
        base = re.split(r"[_@.]", m.group(1))[0]
        lang = keep.get(base) if keep is not None else base
        if lang is None:
            continue
        try:
            with mo.open("rb") as fh:
                catalogue = gettext.GNUTranslations(fh)._catalog
        except Exception as exc:  # a malformed header (e.g. Plural-Forms) makes the stdlib parser raise anything
            removed[f"catalogue unreadable by Python's gettext ({type(exc).__name__})"] += 1
            continue
        for msgid, msgstr in catalogue.items():
            if isinstance(msgid, tuple):  # plural forms: keep the singular only
                if msgid[1] != 0:
                    continue
                msgid = msgid[0]
            if not msgid or not isinstance(msgstr, str) or not msgstr.strip():
                continue  # the header entry, or an untranslated message
            if len(msgid.split()) < 5:
                removed["English message under 5 words"] += 1
            elif MSGID_NOISE.search(msgid) or MSGID_NOISE.search(msgstr):
                removed["format specifier, markup, path or mnemonic"] += 1
            elif msgstr.strip() == msgid.strip():
                removed["left in English"] += 1
            elif count_words(msgstr) < 4:
                removed["translation under 4 words"] += 1
            else:
                texts[lang].append(normalize_text(msgstr))
    return texts, removed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", type=Path, required=True, help="text file, one sentence per line")
    ap.add_argument("--all-languages", action="store_true", help="every catalogue language, not only UDHR's")
    ap.add_argument("--max-per-language", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--packages", nargs="+", default=PACKAGES)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        texts, removed = catalogue_sentences(fetch(Path(tmp), args.packages), None if args.all_languages else UDHR_LANGS)
    rng = random.Random(args.seed)
    lines: list[str] = []
    print(f"{'language':>8} {'kept':>6} {'repeats':>8} {'over cap':>8}")
    for lang in sorted(texts, key=lambda k: -len(texts[k])):
        unique = list(dict.fromkeys(texts[lang]))
        kept = unique if len(unique) <= args.max_per_language else rng.sample(unique, args.max_per_language)
        print(f"{lang:>8} {len(kept):>6} {len(texts[lang]) - len(unique):>8} {len(unique) - len(kept):>8}")
        lines += kept
    for why, n in removed.most_common():
        print(f"removed {n} message(s): {why}")
    rng.shuffle(lines)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = args.output.with_name(args.output.name + ".tmp")
    tmp_out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp_out.replace(args.output)
    print(f"wrote {args.output}: {len(lines)} sentences in {len(texts)} languages")


if __name__ == "__main__":
    main()
