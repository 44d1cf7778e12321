"""Every UDHR language measured (issue 51 §1): per-language retrieval with the script and the tokenizer's pieces,
the summary by script / pieces per word / unknown-piece rate, and the plot — on a small copy of ``udhr-all``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import xlsent
from test_cli import xlsent as run_cli
from xlsent.data.scripts import detect_script
from xlsent.data.stats import piece_stats
from xlsent.evaluation.languages import pieces_bin, summarize, unk_bin

LANGS = ("chr", "amh", "rus", "nya")  # Cherokee, Ethiopic, Cyrillic, Latin


@pytest.fixture
def small_udhr_all(tmp_path, monkeypatch) -> Path:
    """The bundled ``udhr-all`` cut to four test languages (12 units each) and one dev language, as
    ``$XLSENT_DATA_DIR``."""
    src = Path(xlsent.__file__).parent / "bundled_data" / "udhr" / "udhr-all.jsonl.gz"
    kept: dict[str, list[str]] = {}
    with gzip.open(src, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            lang = r["tgt_lang"]
            if (lang in LANGS or lang == "heb") and len(kept.setdefault(lang, [])) < 12:
                kept[lang].append(line)
    assert set(kept) == {*LANGS, "heb"}
    out = tmp_path / "data" / "udhr"
    out.mkdir(parents=True)
    with gzip.open(out / "udhr-all.jsonl.gz", "wt", encoding="utf-8") as f:
        f.writelines(line for lines in kept.values() for line in lines)
    monkeypatch.setenv("XLSENT_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.mark.parametrize("text, script", [
    ("All human beings are born free and equal in dignity and rights.", "Latn"),
    ("Все люди рождаются свободными и равными в своем достоинстве и правах.", "Cyrl"),
    ("ᏂᎦᏗᏳ ᏴᏫ ᏕᎨᏅᎯ ᎠᏂᏍᎦᏯ ᎾᎿ ᎠᎵᏍᎨᏗᏱ", "Cher"),
    ("የሰው ልጅ ሁሉ ሲወለድ ነጻና በክብርና በመብትም እኩልነት ያለው ነው።", "Ethi"),
    ("すべての人間は、生まれながらにして自由であり", "Jpan"),
    ("12, 34 — «!»", "Zyyy"),
    ("Article 1 : ᏂᎦᏗᏳ ᏴᏫ ᏕᎨᏅᎯ ᎠᏂᏍᎦᏯ", "Cher"),  # the majority of the letters
])
def test_script_detection_on_known_strings(text, script):
    assert detect_script(text) == script


def test_pieces_per_word_and_unk_rate():
    # 3 words ("a b", "c"), 4 pieces, 2 of them the unknown piece (id 1)
    assert piece_stats([[1, 5, 1], [2]], 1, ["a b", "c"]) == {"unk_rate": 0.5, "pieces_per_word": 4 / 3}
    assert piece_stats([[1, 5]], None, ["a b"])["unk_rate"] == 0.0


def test_the_models_own_tokenizer_counts_pieces_and_unknowns(tiny_model):
    from xlsent.encoding.encoder import Encoder

    enc = Encoder.load(str(tiny_model))
    # the tiny model's word-level vocabulary knows "god", "is", "good", not "xyzzy": 4 pieces, 1 unknown, 4 words
    assert enc.piece_stats(["god is good", "xyzzy"]) == {"unk_rate": 0.25, "pieces_per_word": 1.0}


def test_the_onnx_backend_counts_the_same_pieces(tiny_model):
    from xlsent.encoding.encoder import Encoder
    from xlsent.exporter.load import load_encoder

    texts = ["god is good", "xyzzy water , light"]
    onnx = load_encoder(str(tiny_model), backend="onnx", threads=1)
    assert onnx.piece_stats(texts) == Encoder.load(str(tiny_model)).piece_stats(texts)
    assert onnx.piece_stats(texts)["unk_rate"] == pytest.approx(1 / 7)


def test_bins():
    assert [pieces_bin(x) for x in (1.0, 1.49, 1.5, 2.0, 2.99, 3.0, 9.0)] == [
        "<1.5", "<1.5", "1.5–2", "2–3", "2–3", "≥3", "≥3"]
    assert [unk_bin(x) for x in (0.0, 0.005, 0.01, 0.09, 0.1, 0.9)] == ["0", "<1%", "1–10%", "1–10%", "≥10%", "≥10%"]


def test_summary_groups_languages():
    def entry(lang, script, ppw, unk, p):
        return {"tgt_lang": lang, "script": script, "pieces_per_word": ppw, "unk_rate": unk,
                "src2tgt": {"p@1": p}, "tgt2src": {"p@1": p / 2}}

    s = summarize([entry("a", "Latn", 1.2, 0.0, 0.8), entry("b", "Latn", 2.5, 0.0, 0.6),
                   entry("c", "Cher", 1.1, 0.5, 0.1)])
    assert s["languages"] == 3 and s["mean"]["src2tgt"] == pytest.approx(0.5)
    assert [(g["script"], g["languages"]) for g in s["by_script"]] == [("Latn", 2), ("Cher", 1)]
    assert s["by_script"][0]["p@1"] == {"src2tgt": pytest.approx(0.7), "tgt2src": pytest.approx(0.35)}
    assert [(g["bin"], g["languages"]) for g in s["by_pieces_per_word"]] == [("<1.5", 2), ("2–3", 1)]
    assert [(g["bin"], g["languages"]) for g in s["by_unk_rate"]] == [("0", 2), ("≥10%", 1)]


def test_eval_retrieval_over_udhr_all_test_one_entry_a_language_a_summary_and_the_plot(
        tiny_model, small_udhr_all, tmp_path):
    out, png = tmp_path / "r.json", tmp_path / "tail.png"
    r = run_cli("eval", "retrieval", "-m", str(tiny_model), "--dataset", "udhr-all:test", "-o", str(out),
                "--plot", str(png), "--resamples", "50", "--device", "cpu")
    assert r.returncode == 0, r.stderr
    d = json.loads(out.read_text())
    assert set(d) == {"dataset", "model", "languages", "mean", "summary"}
    langs = {e["tgt_lang"]: e for e in d["languages"]}
    assert set(langs) == set(LANGS)  # the dev language is not there
    assert {k: langs[k]["script"] for k in LANGS} == {"chr": "Cher", "amh": "Ethi", "rus": "Cyrl", "nya": "Latn"}
    for e in d["languages"]:
        assert e["n"] == 12 and e["pieces_per_word"] > 0 and 0 <= e["unk_rate"] <= 1 and "center+csls" in e["beside"]
    assert langs["chr"]["unk_rate"] > 0.8  # only its punctuation is in the tiny model's vocabulary
    s = d["summary"]
    assert s["languages"] == 4 and {"mean", "by_script", "by_pieces_per_word", "by_unk_rate"} <= set(s)
    assert sum(g["languages"] for g in s["by_script"]) == 4
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Cher" in r.stdout and "unk" in r.stdout
    # the same through the Python API
    ev = xlsent.evaluate(str(tiny_model), "retrieval", dataset="udhr-all:test", resamples=50, device="cpu")
    assert json.loads(json.dumps(ev.details)) == d and ev.details["summary"] == d["summary"]
    one = xlsent.evaluate(str(tiny_model), "retrieval", dataset="udhr-all:test:chr", resamples=50, beside=False,
                          device="cpu").details
    assert one["tgt_lang"] == "chr" and one["script"] == "Cher" and "summary" not in one


def test_plot_needs_several_languages(tiny_model, small_udhr_all, tmp_path):
    r = run_cli("eval", "retrieval", "-m", str(tiny_model), "--dataset", "udhr-all:test:chr", "--plot",
                str(tmp_path / "p.png"), "--resamples", "50", "--no-beside", "--device", "cpu")
    assert r.returncode != 0 and "--plot draws one point a language" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "p.png").exists()  # before any model loads


def test_a_runs_held_out_evaluation_over_udhr_all_and_its_report_section(tiny_model, small_udhr_all, pairs_tsv):
    """eval.udhr_pool=udhr-all:test: the UDHR entry of metrics.json carries each language's script and pieces and
    the summary; the run report's section draws the plot (base and trained)."""
    from xlsent.encoding.encoder import Encoder
    from xlsent.evaluation.suite import evaluate_held_out
    from xlsent.api.training import recipe_config
    from xlsent.report.html import language_tail_section

    assert recipe_config("adapt", settings=["eval.udhr_pool=udhr-all:test"]).eval["udhr_pool"] == "udhr-all:test"
    e = {"pairs": str(pairs_tsv), "sample": 0, "similarity": "cosine", "udhr": True, "udhr_pool": "udhr-all:test"}
    held = evaluate_held_out({"base": Encoder.load(str(tiny_model), memo=True)}, e)
    udhr = held.models["base"].udhr
    assert {x["tgt_lang"] for x in udhr["languages"]} == set(LANGS)
    assert all("script" in x and "unk_rate" in x for x in udhr["languages"])
    assert udhr["summary"]["languages"] == 4
    html = language_tail_section("udhr-all:test", {"base": udhr, "trained": udhr})
    assert html.count("data:image/png;base64,") == 2 and "<td>Cher</td>" in html
