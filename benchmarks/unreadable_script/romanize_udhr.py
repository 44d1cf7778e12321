#!/usr/bin/env python3
"""Real scripts the model cannot read, zero-shot (issue 62 §2): every ``udhr-all`` language whose text is mostly
pieces e5-small's tokenizer does not know, retrieved against English with and without romanisation.

    python benchmarks/unreadable_script/romanize_udhr.py [--model e5-small] [--threshold 0.2] [--json FILE]

For each language of ``udhr-all`` (every declaration, both of its splits: nothing here is chosen, so no split is
held back) the unknown-piece rate of its paragraphs under the model's tokenizer
(:func:`xlsent.data.sets.stats.tokenizer_stats`); those above ``--threshold`` (the readability warning's
:data:`xlsent.encoding.readable.UNREADABLE`) are scored twice, on the same pool of the language's paragraphs and
their English:

* **base** — the model as it is;
* **romanised** — the model with its tokenizer romanised for that language's text
  (:func:`xlsent.models.vocab.romanize.romanize_tokenizer`, what ``xlsent models romanize MODEL --texts FILE`` writes
  into a folder; here applied in this process, not saved), no training.

P@1 both ways (:func:`xlsent.evaluation.retrieval.evaluate_retrieval`: tie-aware cosine, the pool's paragraphs as
candidates), per language and per script (ISO 15924, :func:`xlsent.data.scripts.detect_script`), and the mean over
languages with the lift in points. ``xx→en``: a paragraph in the language finds its English.

Two checks of why the lift is what it is:

* ``--uroman`` — the other romaniser (uroman, Apache-2.0: ``pip install uroman``, not a dependency of xlsent)
  against anyascii, both applied to the text before the model (not inside the tokenizer), so the romaniser is the
  only difference;
* ``--latin-reference N`` — the same zero-shot P@1 for N ``udhr-all`` languages already written in Latin letters
  (drawn at random, seed 0), as quantiles: where a romanised text lands among languages the model reads in the script it knows.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="e5-small")
    ap.add_argument("--threshold", type=float, default=None, help="unknown-piece rate above which a language is "
                    "scored (default: the readability warning's)")
    ap.add_argument("--json", default="", help="also write every figure here")
    ap.add_argument("--uroman", action="store_true", help="also score uroman and anyascii on the text (pip install "
                    "uroman)")
    ap.add_argument("--latin-reference", type=int, default=0, metavar="N", help="also score N Latin-script languages "
                    "drawn at random (seed 0; 0: none, a number above their count: all), zero-shot")
    a = ap.parse_args()

    from xlsent.api._common import encoder_for
    from xlsent.data.scripts import detect_script
    from xlsent.data.sets.bundled import load_bundled, split_by_language
    from xlsent.data.sets.stats import tokenizer_stats
    from xlsent.encoding.readable import UNREADABLE
    from xlsent.evaluation.retrieval import evaluate_retrieval
    from xlsent.models.handle import load_model
    from xlsent.models.registry import resolve_model_path
    from xlsent.models.vocab.romanize import romanize_tokenizer
    from xlsent.utils.errors import XlsentError

    if a.latin_reference < 0:
        raise SystemExit("--latin-reference: a number of languages, 0 or more")
    if a.uroman:
        try:
            import uroman
        except ImportError:
            raise SystemExit("--uroman: pip install uroman (Apache-2.0; a comparison only, xlsent does not use it)")
        from anyascii import anyascii

        uro = uroman.Uroman()
        on_text = {"anyascii": lambda t, lang: anyascii(t), "uroman": lambda t, lang: uro.romanize_string(t, lcode=lang)}
    threshold = UNREADABLE if a.threshold is None else a.threshold
    st = load_model(resolve_model_path(a.model), device="cpu").model
    base_tok = st[0].processor
    rows = []
    pools = split_by_language(load_bundled("udhr-all"))
    for lang, part in sorted(pools.items()):
        src, tgt = list(part["src"]), list(part["tgt"])
        keep = [i for i, (s, t) in enumerate(zip(src, tgt)) if s.strip() and t.strip() and len(t.strip()) > 3]
        src, tgt = [src[i] for i in keep], [tgt[i] for i in keep]
        unk = tokenizer_stats(base_tok, tgt)["unk_rate"]
        if unk <= threshold:
            continue
        script = detect_script(" ".join(tgt[:50]))
        figures = {"lang": lang, "script": script, "pairs": len(tgt), "unk_rate": round(unk, 4)}
        for name in ("base", "romanised"):
            st[0].processor = base_tok
            if name == "romanised":
                try:
                    rom = romanize_tokenizer(st, tgt)
                except XlsentError as exc:  # no character of it has a romanisation
                    figures["romanised"] = {"xx→en": figures["base"]["xx→en"], "en→xx": figures["base"]["en→xx"]}
                    figures.update(romanised_characters=0, left_characters=None, unk_rate_romanised=unk,
                                   note=str(exc))
                    continue
                figures.update(romanised_characters=rom.romanized, left_characters=rom.left,
                               unk_rate_romanised=rom.unk_rate_after)
            r = evaluate_retrieval(src, tgt, encoder_for(st), a.model, n_resamples=200, seed=0)
            figures[name] = {"xx→en": r.tgt2src["p@1"], "en→xx": r.src2tgt["p@1"]}
        st[0].processor = base_tok
        if a.uroman:
            for name, fn in on_text.items():
                r = evaluate_retrieval(src, [fn(t, lang) for t in tgt], encoder_for(st), a.model, n_resamples=0, seed=0)
                figures[f"{name} on the text"] = {"xx→en": r.tgt2src["p@1"], "en→xx": r.src2tgt["p@1"]}
        rows.append(figures)
        print(f"{lang:5} {script:5} {len(tgt):3} pairs  unk {unk:5.1%} → {figures['unk_rate_romanised']:5.1%}  "
              f"xx→en {figures['base']['xx→en']:.3f} → {figures['romanised']['xx→en']:.3f}  "
              f"en→xx {figures['base']['en→xx']:.3f} → {figures['romanised']['en→xx']:.3f}", flush=True)
        if a.uroman:
            print("      on the text: " + ", ".join(f"{n} {figures[n + ' on the text']['xx→en']:.3f} / "
                                                    f"{figures[n + ' on the text']['en→xx']:.3f}" for n in on_text))
    if not rows:
        raise SystemExit(f"no udhr-all language is above an unknown-piece rate of {threshold:.0%} for {a.model}")

    def mean(xs: list[dict], name: str, d: str) -> float:
        return float(np.mean([x[name][d] for x in xs]))

    by_script: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_script[r["script"]].append(r)
    print(f"\n{len(rows)} languages above {threshold:.0%} unknown pieces ({a.model}); P@1 base → romanised, zero-shot:")
    summary = {}
    for script, rs in sorted(by_script.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        summary[script] = {"languages": [r["lang"] for r in rs],
                           **{f"{n} {d}": mean(rs, n, d) for n in ("base", "romanised") for d in ("xx→en", "en→xx")}}
        print(f"  {script:5} {len(rs):2} ({', '.join(r['lang'] for r in rs)}): xx→en {mean(rs, 'base', 'xx→en'):.3f} "
              f"→ {mean(rs, 'romanised', 'xx→en'):.3f}, en→xx {mean(rs, 'base', 'en→xx'):.3f} → "
              f"{mean(rs, 'romanised', 'en→xx'):.3f}")
    overall = {f"{n} {d}": mean(rows, n, d) for n in ("base", "romanised") for d in ("xx→en", "en→xx")}
    lift = {d: 100 * (overall[f"romanised {d}"] - overall[f"base {d}"]) for d in ("xx→en", "en→xx")}
    print(f"  mean over the {len(rows)} languages: xx→en {overall['base xx→en']:.3f} → {overall['romanised xx→en']:.3f} "
          f"({lift['xx→en']:+.1f} points), en→xx {overall['base en→xx']:.3f} → {overall['romanised en→xx']:.3f} "
          f"({lift['en→xx']:+.1f} points)")
    extra = {}
    if a.uroman:
        extra["on_the_text"] = {n: {d: mean(rows, f"{n} on the text", d) for d in ("xx→en", "en→xx")} for n in on_text}
        print("  romanised on the text, mean: " + ", ".join(
            f"{n} {v['xx→en']:.3f} / {v['en→xx']:.3f}" for n, v in extra["on_the_text"].items()))
    if a.latin_reference:
        latin = []
        langs = [lang for lang, part in sorted(pools.items())
                 if lang != "eng" and detect_script(" ".join(list(part["tgt"])[:50])) == "Latn"]
        drawn = np.random.default_rng(0).permutation(len(langs))[:a.latin_reference]
        for lang in sorted(langs[i] for i in drawn):
            src, tgt = list(pools[lang]["src"]), list(pools[lang]["tgt"])
            keep = [i for i, (s, t) in enumerate(zip(src, tgt)) if s.strip() and t.strip() and len(t.strip()) > 3]
            src, tgt = [src[i] for i in keep], [tgt[i] for i in keep]
            r = evaluate_retrieval(src, tgt, encoder_for(st), a.model, n_resamples=0, seed=0)
            latin.append({"lang": lang, "pairs": len(tgt), "xx→en": r.tgt2src["p@1"], "en→xx": r.src2tgt["p@1"]})
        q = (0.1, 0.25, 0.5)
        extra["latin_reference"] = {"languages": latin, **{d: {f"q{int(100 * x)}": float(np.quantile(
            [r[d] for r in latin], x)) for x in q} for d in ("xx→en", "en→xx")}}
        for d in ("xx→en", "en→xx"):
            v = [r[d] for r in latin]
            extra["latin_reference"][d]["at or below romanised mean"] = float(np.mean(
                [x <= overall[f"romanised {d}"] for x in v]))
            print(f"  {len(latin)} of {len(langs)} Latin-script languages, zero-shot {d}: " + ", ".join(
                f"{k} {v:.3f}" for k, v in extra["latin_reference"][d].items()))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"model": a.model, "threshold": threshold, "languages": rows, "by_script": summary,
                       "mean": overall, "lift_points": lift, **extra}, f, ensure_ascii=False, indent=1)
        print(f"wrote {a.json}")


if __name__ == "__main__":
    main()
