"""The token tagger on a tiny random BERT with a WordPiece tokenizer built in the test."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from xlsent.data.conll import write_conll

NAMES = ["yesu", "petro", "davide", "maria", "yohane", "simoni"]
PLACES = ["yerusalemu", "galileya", "betelehemu", "egupto"]
CONTEXT = ["anapita", "ku", "ndi", "anaona", "madzi", "nyumba", "mulungu", "mwana", "wa", "ake"]


def build_wordpiece_model(path: Path, layers: int = 3, hidden: int = 32) -> Path:
    """A random BERT saved as a Hugging Face folder with a WordPiece tokenizer that splits every name in two."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    torch.manual_seed(0)
    pieces = set(CONTEXT)
    for w in NAMES + PLACES:  # "yesu" → "ye", "##su": every entity word is two sub-tokens
        pieces |= {w[:2], "##" + w[2:]}
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {w: i for i, w in enumerate(specials + sorted(pieces) + list(".,"))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    hf_tok = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                     sep_token="[SEP]", mask_token="[MASK]", model_max_length=64)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                     intermediate_size=2 * hidden, max_position_embeddings=64)
    BertModel(cfg, add_pooling_layer=False).save_pretrained(path)
    hf_tok.save_pretrained(path)
    return path


def toy_corpus(n: int, seed: int) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    toks, tags = [], []
    for _ in range(n):
        t, y = [], []
        for _ in range(rng.randint(3, 8)):
            r = rng.random()
            if r < 0.2:
                t.append(rng.choice(NAMES).capitalize())
                y.append("B-PER")
            elif r < 0.35:
                t.append(rng.choice(PLACES).capitalize())
                y.append("B-LOC")
            else:
                t.append(rng.choice(CONTEXT))
                y.append("O")
        toks.append(t)
        tags.append(y)
    return toks, tags


@pytest.fixture(scope="module")
def wp_model(tmp_path_factory) -> Path:
    return build_wordpiece_model(tmp_path_factory.mktemp("tagger") / "wp")


@pytest.fixture(scope="module")
def toy_files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("toy")
    write_conll(d / "train.conll", *toy_corpus(160, 0))
    write_conll(d / "test.conll", *toy_corpus(40, 1))
    return d


def _cfg(model: Path, files: Path, *extra: str):
    from xlsent.recipes.config import load_config

    return load_config("tagger", None, [f"models.base={model}", f"train.data={files / 'train.conll'}",
                                        f"eval.test={files / 'test.conll'}", "optim.lr=5e-3", "optim.epochs=20",
                                        "optim.batch_size=16", "optim.warmup_ratio=0.0", *extra])


def test_first_sub_token_labelling(wp_model):
    from transformers import AutoTokenizer

    from xlsent.models.tagger import encode_words

    tok = AutoTokenizer.from_pretrained(str(wp_model))
    enc = encode_words(tok, [["Yesu", "anapita", "ku", "Galileya"]], [["B-PER", "O", "_", "B-LOC"]],
                       {"O": 0, "B-PER": 1, "B-LOC": 2}, 64)
    assert tok.convert_ids_to_tokens(enc.input_ids[0]) == ["[CLS]", "ye", "##su", "anapita", "ku", "ga", "##lileya",
                                                           "[SEP]"]
    assert enc.labels[0] == [-100, 1, -100, 0, -100, 2, -100, -100]  # "_" (unlabelled) is ignored too
    assert enc.first_piece_word[0] == [-1, 0, -1, 1, 2, 3, -1, -1]
    cut = encode_words(tok, [["Yesu"] * 40], None, {"O": 0}, 16)
    assert cut.truncated_words == 40 - 7  # 16 pieces: [CLS] + 7 two-piece words + [SEP]


def test_cached_top_layers_equal_the_full_forward(wp_model):
    from transformers import AutoTokenizer

    from xlsent.models.tagger import encode_words, full_forward, lower_states, top_forward
    from xlsent.recipes.tagger import build_model

    model, tok = build_model(str(wp_model), ["O", "B-PER", "B-LOC"], 0)
    model.eval()
    toks, tags = toy_corpus(6, 3)
    enc = encode_words(AutoTokenizer.from_pretrained(str(wp_model)), toks, tags, model.config.label2id, 64)
    states = lower_states(model, enc, 2, batch_size=4)
    top, mask = top_forward(model, states, 2)
    full, _ = full_forward(model, enc.input_ids, tok.pad_token_id)
    assert torch.allclose(top * mask[..., None], full * mask[..., None], atol=2e-3)


@pytest.mark.parametrize("layers", [0, 2])
def test_trains_saves_and_scores(wp_model, toy_files, tmp_path, layers):
    from xlsent.data.conll import read_conll
    from xlsent.evaluation.tagging import evaluate_tagger
    from xlsent.models.tagger import load_tagger
    from xlsent.recipes.tagger import train_tagger

    cfg = _cfg(wp_model, toy_files, f"tagger.train_layers={layers}", "models.freeze_word_embeddings=true")
    res = train_tagger(cfg, tmp_path / "run", progress=False)
    assert res.labels == ["O", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    model, tok = load_tagger(tmp_path / "run")
    s = evaluate_tagger(model, tok, read_conll(toy_files / "test.conll"), "ner", bootstrap=50)
    assert s.metrics["micro_f1"]["value"] > 0.85, s.metrics  # names and places are learnable from their pieces
    if layers:
        base, _ = __import__("xlsent.recipes.tagger", fromlist=["build_model"]).build_model(str(wp_model), res.labels, 0)
        assert torch.equal(base.bert.encoder.layer[0].attention.self.query.weight,
                           model.bert.encoder.layer[0].attention.self.query.weight)  # frozen layer unchanged
        assert not torch.equal(base.bert.encoder.layer[2].output.dense.weight, model.bert.encoder.layer[2].output.dense.weight)
    assert json.loads((tmp_path / "run" / "stage.json").read_text())["labels"] == res.labels
    again = train_tagger(cfg, tmp_path / "run", progress=False)  # finished: skipped
    assert again.seconds == res.seconds


def test_saved_tagger_loads_in_a_fresh_process(wp_model, toy_files, tmp_path):
    from xlsent.recipes.tagger import train_tagger

    train_tagger(_cfg(wp_model, toy_files, "optim.epochs=1"), tmp_path / "run", progress=False)
    code = ("import sys; from sentence_transformers import SentenceTransformer; "
            "from transformers import AutoModelForTokenClassification as A; "
            "m = A.from_pretrained(sys.argv[1]); print(m.config.id2label[1]); "
            "print(SentenceTransformer(sys.argv[1], device='cpu').encode(['Yesu anapita']).shape)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "run" / "model")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["B-LOC", "(1,", "32)"]


def test_resume_from_a_checkpoint_gives_the_same_model(wp_model, toy_files, tmp_path):
    from xlsent.training.run_folder import StageFolder
    from xlsent.recipes.tagger import train_tagger

    cfg = _cfg(wp_model, toy_files, "optim.epochs=2", "optim.checkpoint_every=5", "tagger.train_layers=2")
    full = train_tagger(cfg, tmp_path / "a", progress=False)

    saved = {}
    orig = StageFolder.save_state

    def stop_after_first(self, state):
        orig(self, state)
        saved["step"] = state["step"]
        raise KeyboardInterrupt

    StageFolder.save_state = stop_after_first
    try:
        with pytest.raises(KeyboardInterrupt):
            train_tagger(cfg, tmp_path / "b", progress=False)
    finally:
        StageFolder.save_state = orig
    assert saved["step"] == 5
    resumed = train_tagger(cfg, tmp_path / "b", progress=False)
    from safetensors.torch import load_file

    a = load_file(str(full.model_path / "model.safetensors"))
    b = load_file(str(resumed.model_path / "model.safetensors"))
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)


def test_cli_train_eval_and_bad_input(wp_model, toy_files, tmp_path):
    from typer.testing import CliRunner

    from xlsent.cli.main import app

    runner = CliRunner()
    r = runner.invoke(app, ["train", "tagger", "-o", str(tmp_path / "run"), "--set", f"models.base={wp_model}",
                            "--set", f"train.data={toy_files / 'train.conll'}", "--set",
                            f"eval.test={toy_files / 'test.conll'}", "--set", "optim.epochs=1"])
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "run" / "metrics.json").read_text())
    # the one metrics schema: a tagger is scored on its task, and the test labels' kind is said
    assert m["schema"] == "xlsent.metrics/2" and m["recipe"] == "tagger" and m["eval_pool"]["labels"] == "user file"
    assert "micro_f1" in m["models"]["trained"]["tagging"] and "retrieval" not in m["models"]["trained"]
    assert (tmp_path / "run" / "model" / "README.md").exists()  # the model card, as every recipe writes
    r = runner.invoke(app, ["eval", "ner", "-m", str(tmp_path / "run"), "-m", str(tmp_path / "run"), "--test",
                            str(toy_files / "test.conll"), "-o", str(tmp_path / "e.json"), "--resamples", "20"])
    assert r.exit_code == 0, r.output
    e = json.loads((tmp_path / "e.json").read_text())
    assert e["sd"] == 0.0 and e["labels"] == "user file"
    r = runner.invoke(app, ["eval", "ner", "-m", str(tmp_path / "run"), "--compare", str(tmp_path / "run"), "--test",
                            str(toy_files / "test.conll"), "-o", str(tmp_path / "c.json"), "--resamples", "20"])
    assert r.exit_code == 0, r.output
    c = json.loads((tmp_path / "c.json").read_text())["paired"]
    assert c["delta"] == 0.0 and c["per_seed"] == [0.0] and c["p"] == 1.0  # a tagger against itself
    r = runner.invoke(app, ["eval", "ner", "-m", str(tmp_path / "run"), "-m", str(tmp_path / "run"), "--compare",
                            str(tmp_path / "run"), "--test", str(toy_files / "test.conll")])
    assert r.exit_code != 0 and "one tagger per --model" in str(r.exception)
    bad = tmp_path / "bad.conll"
    bad.write_text("Yesu B-PER\nanapita\n", encoding="utf-8")
    r = runner.invoke(app, ["train", "tagger", "-o", str(tmp_path / "r2"), "--set", f"train.data={bad}",
                            "--set", f"models.base={wp_model}"])
    assert r.exit_code != 0 and "bad.conll:2: no tag on this line" in str(r.exception)
    r = runner.invoke(app, ["train", "tagger", "-o", str(tmp_path / "r3"), "--set", "tagger.task=chunk"])
    assert r.exit_code != 0 and "tagger.task" in str(r.exception)
    r = runner.invoke(app, ["eval", "ner", "-m", str(wp_model), "--test", str(toy_files / "test.conll")])
    assert r.exit_code != 0 and "not a token classifier" in str(r.exception)


def test_eval_adversarial_end_to_end(wp_model, toy_files, tmp_path):
    """Two seeds × native/transfer on toy files: taggers, perturbed files, table, JSON and plot."""
    from typer.testing import CliRunner

    from xlsent.cli.main import app

    write_conll(tmp_path / "l1.conll", *toy_corpus(120, 5))
    stop = tmp_path / "stop.txt"
    stop.write_text("ku\nndi\nwa\n", encoding="utf-8")
    pair = f"xx-yy={tmp_path / 'l1.conll'},{toy_files / 'train.conll'},{toy_files / 'test.conll'}"
    args = ["eval", "adversarial", "-o", str(tmp_path / "adv"), "--pair", pair, "--seeds", "2", "--preset", "",
            "--stopwords", str(stop), "--resamples", "50", "--perturbations", "P1,P2,P3,P4,P5,P4-random",
            "--set", f"models.base={wp_model}", "--set", "optim.epochs=3", "--set", "optim.lr=5e-3"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, (r.output, r.exception)
    rep = json.loads((tmp_path / "adv" / "adversarial.json").read_text())
    assert {(e["condition"], e["perturbation"]) for e in rep["effects"]} == {
        (c, p) for c in ("native", "transfer") for p in ("P1", "P2", "P3", "P4", "P5", "P4-random")}
    assert all(e["units"] == 2 and len(e["boot_ci"]) == 2 for e in rep["effects"])
    assert len(rep["runs"]) == 4 and (tmp_path / "adv" / "adversarial.png").stat().st_size > 1000
    for cond in ("native", "transfer"):
        log = json.loads((tmp_path / "adv" / "xx-yy" / cond / "perturbed" / "P3.conll.json").read_text())
        assert log["train"].endswith("train.conll" if cond == "native" else "l1.conll")
    assert "Table 3.6" in r.output
    r = CliRunner().invoke(app, ["eval", "adversarial", "-o", str(tmp_path / "a2"), "--pair", "nonsense"])
    assert r.exit_code != 0 and "expected L1-L2=" in str(r.exception)


def test_pos_tagger_and_adversarial_p4(wp_model, tmp_path):
    """POS: plain tags with '_' unlabelled tokens; adversarial runs P4 over every word (no O tags in POS)."""
    from typer.testing import CliRunner

    from xlsent.cli.main import app

    def pos_file(path, n, seed):
        toks, tags = toy_corpus(n, seed)
        upos = [["PROPN" if t != "O" else ("ADP" if w in ("ku", "wa") else "NOUN") for w, t in zip(ws, ts)]
                for ws, ts in zip(toks, tags)]
        upos[0][0] = "_"
        write_conll(path, toks, upos)
        return path

    tr, te, l1 = pos_file(tmp_path / "tr.conll", 120, 0), pos_file(tmp_path / "te.conll", 40, 1), \
        pos_file(tmp_path / "l1.conll", 80, 2)
    stop = tmp_path / "stop.txt"
    stop.write_text("ku\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["eval", "adversarial", "-o", str(tmp_path / "adv"), "--pair", f"xx-yy={l1},{tr},{te}",
                                 "--seeds", "1", "--preset", "", "--stopwords", str(stop), "--resamples", "20",
                                 "--set", "tagger.task=pos", "--set", f"models.base={wp_model}",
                                 "--set", "optim.epochs=2"])
    assert r.exit_code == 0, (r.output, r.exception)
    rep = json.loads((tmp_path / "adv" / "adversarial.json").read_text())
    assert rep["perturbations"] == ["P4", "P4-random"] and rep["overlap"] == {}
    log = json.loads((tmp_path / "adv" / "xx-yy" / "native" / "perturbed" / "P4.conll.json").read_text())
    assert log["counts"]["common with training"] > 0  # POS words are candidates although none is tagged O
    r = CliRunner().invoke(app, ["eval", "adversarial", "-o", str(tmp_path / "a2"), "--set", "tagger.task=pos",
                                 "--perturbations", "P3"])
    assert r.exit_code != 0 and "P4,P4-random" in str(r.exception)


def test_paired_bootstrap_over_seeds_sees_a_better_tagger():
    from xlsent.evaluation.tagging import paired_bootstrap_seeds

    gold = [["B-PER", "O", "B-LOC"], ["O", "B-ORG"], ["B-PER", "I-PER", "O"]] * 20
    worse = [["B-PER", "O", "O"], ["O", "O"], ["B-PER", "I-PER", "O"]] * 20
    better = [["B-PER", "O", "B-LOC"], ["O", "B-ORG"], ["B-PER", "O", "O"]] * 20
    res = paired_bootstrap_seeds("ner", gold, [worse, worse], [better, gold], bootstrap=200, seed=0)
    assert res.delta > 0 and res.ci95[0] > 0 and res.p < 0.05
    assert res.per_seed[1] > res.per_seed[0]
    assert res.to_dict()["per_seed"] == list(res.per_seed)
    import pytest

    with pytest.raises(ValueError):
        paired_bootstrap_seeds("ner", gold, [worse], [better, gold])


def test_a_pos_tagger_reads_the_pos_twin_of_a_bundled_ner_set():
    """The default data is silver NER; with tagger.task=pos the same sentences' POS tags are read, not BIO tags."""
    import pytest

    from xlsent.data.tagging import for_task
    from xlsent.utils.errors import XlsentError

    assert for_task("silver-ner:en:train", "pos") == "silver-pos:en:train"
    assert for_task("silver-pos:ny:test", "ner") == "silver-ner:ny:test"
    assert for_task("my.conll", "pos") == "my.conll"
    with pytest.raises(XlsentError, match="POS"):
        for_task("gold-ner:ja", "pos")


def test_perturbation_effects_on_known_predictions():
    """effects() on hand-made predictions whose answer is known: P3 makes every tagger miss the entity of half
    the sentences (micro F1 1.0 → 2/3: −33.3 points, interval below 0, p small); P4-random changes nothing (Δ 0,
    p 1); two seeds a condition, two conditions."""
    from xlsent.evaluation.adversarial import RunScores, effects

    gold = [["B-PER", "O", "O"], ["O", "B-LOC", "O"]] * 20
    miss = [["O", "O", "O"] if i % 2 else g for i, g in enumerate(gold)]  # every second sentence's entity lost
    runs = [RunScores("xx-yy", cond, seed, {"base": gold, "P3": gold, "P4-random": gold},
                      {"base": gold, "P3": miss, "P4-random": gold})
            for cond in ("native", "transfer") for seed in (0, 1)]
    got = {(e.condition, e.perturbation): e for e in effects(runs, "ner", bootstrap=500, seed=0)}
    assert set(got) == {(c, p) for c in ("native", "transfer") for p in ("P3", "P4-random")}
    for cond in ("native", "transfer"):
        p3, rnd = got[(cond, "P3")], got[(cond, "P4-random")]
        assert p3.units == 2 and p3.base_mean == pytest.approx(100.0)
        assert p3.delta == pytest.approx(100 * (2 / 3 - 1), abs=1e-9)  # P = 1, R = 1/2 → F1 = 2/3
        assert p3.boot_ci[1] < 0 and p3.boot_p < 0.01
        assert rnd.delta == 0.0 and rnd.boot_ci == [0.0, 0.0] and rnd.boot_p == 1.0
