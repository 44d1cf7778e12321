"""Title selection: a 4-way multiple-choice classifier over any encoder (Manafi 2025 §3.1, the paper's second task).

A section's text and each candidate title are read together (``[CLS] text [SEP] title [SEP]``, the text
cut to its first ``models.max_seq_length`` pieces as the paper cuts sections to 128 tokens) and
Hugging Face's ``AutoModelForMultipleChoice`` head scores each pair; softmax over the candidates,
cross-entropy on the gold one. Paper settings: lr 2e-5, 3 epochs, batch 32. Decisions:

* The candidates' order is shuffled per example (seeded), in training and in evaluation, so the
  gold title's column in the file teaches nothing.
* ``titles.train_layers`` trains only the top N layers (the lower ones and the token table frozen), for CPU runs.
* P4 (:mod:`xlsent.perturbations.context`) changes the section text only; the base text goes
  through the same word tokenisation and re-joining, so only the substitutions differ.

No offline package here carries section titles (the Bible texts have no headings), so this task
ships without bundled data: it runs on the user's files, and the tests run it on files they make.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xlsent.data.formats.multiple_choice import ChoiceSet, read_choices
from xlsent.recipes.registry import RunResult
from xlsent.training.loop import finish_stage, run_loop, total_steps
from xlsent.training.processes import main_first, world_size
from xlsent.training.run_folder import StageFolder, config_hash, learning_optim
from xlsent.training.settings import NonNegInt, Section
from xlsent.utils.errors import XlsentError


class TitlesSettings(Section):
    train_layers: NonNegInt = 0  # the top layers trained (0: every layer)


#: this recipe's own section, typed with its range (xlsent.recipes.config_schema)
SECTIONS = {"titles": TitlesSettings}

#: what the trained model gives: a multiple-choice folder, not sentence embeddings (the CLI and the model card read it)
OUTPUT = "choice"


def shuffled(data: ChoiceSet, seed: int) -> tuple[list[list[str]], list[int]]:
    """Each example's candidates in a seeded random order, and where the gold one landed."""
    rng = np.random.default_rng(seed)
    cands, gold = [], []
    for c in data.candidates:
        order = rng.permutation(len(c))
        cands.append([c[k] for k in order])
        gold.append(int(np.where(order == 0)[0][0]))
    return cands, gold


def encode(tok, texts: list[str], cands: list[list[str]], max_length: int, title_pieces: int = 24):
    import torch

    n = len(cands[0])
    flat_t = [t for t in texts for _ in range(n)]
    flat_c = [c for cs in cands for c in cs]
    enc = tok(flat_t, flat_c, truncation="only_first", max_length=max_length + title_pieces, padding=True,
              return_tensors="pt")
    return {k: v.view(len(texts), n, -1) for k, v in enc.items() if isinstance(v, torch.Tensor)}


def build(base: str, seed: int, train_layers: int):
    import torch
    from transformers import AutoModelForMultipleChoice, AutoTokenizer

    from xlsent.models.handle import transformer_subfolder
    from xlsent.models.registry import resolve_model_path
    from xlsent.recipes.tagger import freeze

    root = resolve_model_path(base)
    folder = root / transformer_subfolder(root)
    torch.manual_seed(seed)
    model = AutoModelForMultipleChoice.from_pretrained(str(folder))
    tok = AutoTokenizer.from_pretrained(str(folder))
    if train_layers:
        freeze(model, train_layers, True)
        enc = getattr(model, model.base_model_prefix)
        if getattr(enc, "pooler", None) is not None:  # the choice head reads the pooler: keep it trainable
            for p in enc.pooler.parameters():
                p.requires_grad = True
    return model, tok


def train_titles(cfg, output: Path, on_note=None, progress: bool = False) -> RunResult:
    import torch
    from transformers import get_linear_schedule_with_warmup

    if not cfg.train.data:
        raise XlsentError("title selection needs training data: --set train.data=FILE (text<TAB>gold<TAB>distractor…)")
    data = read_choices(cfg.train.data)
    from xlsent.utils.device import use_device

    use_device(cfg.models.get("device", "auto"), "models.device")  # before any model loads
    folder = StageFolder(output, config_hash(cfg.models.to_dict(), cfg.train.to_dict(), cfg.titles.to_dict(),
                                             learning_optim(cfg.optim.to_dict())), "titles", on_note)
    if folder.record() is not None:
        folder.note("titles: finished earlier with this config — skipping")
        return RunResult(output, folder.model_dir)
    with main_first():  # under several processes the main one prepares the folder
        folder.begin()
    t0 = time.monotonic()
    model, tok = build(cfg.models.base, cfg.optim.seed, cfg.titles.train_layers)
    cands, gold = shuffled(data, cfg.optim.seed)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay)
    _, total = total_steps(len(data), cfg.optim, world_size())
    sched = get_linear_schedule_with_warmup(opt, int(cfg.optim.warmup_ratio * total), total)

    def step(sel: list[int], module, accelerator) -> dict:
        batch = encode(tok, [data.texts[i] for i in sel], [cands[i] for i in sel], cfg.models.max_seq_length)
        batch = {k: v.to(accelerator.device) for k, v in batch.items()}
        labels = torch.tensor([gold[i] for i in sel], device=accelerator.device)
        return {"loss": module(**batch, labels=labels).loss}

    result = run_loop(folder, cfg.optim, model, opt, sched, len(data), step, name="titles", progress=progress)

    def save(tmp: Path) -> None:
        model.save_pretrained(str(tmp))
        tok.save_pretrained(str(tmp))

    finish_stage(folder, result, save, {"examples": len(data), "seconds": time.monotonic() - t0})
    return RunResult(output, folder.model_dir)


def accuracy(model_dir: Path, data: ChoiceSet, seed: int, max_length: int, batch_size: int = 16) -> np.ndarray:
    """Per-example correctness (1/0) of a trained title selector on ``data``, candidates shuffled by ``seed``."""
    import torch
    from transformers import AutoModelForMultipleChoice, AutoTokenizer

    p = Path(model_dir)
    if not (p / "config.json").exists() or "ForMultipleChoice" not in (p / "config.json").read_text():
        raise XlsentError(f"{p}: not a title-selection model — give the model/ folder of `xlsent train titles`")
    from xlsent.utils.device import current_device

    model = AutoModelForMultipleChoice.from_pretrained(str(p)).to(current_device()).eval()
    tok = AutoTokenizer.from_pretrained(str(p))
    cands, gold = shuffled(data, seed)
    right = []
    with torch.no_grad():
        for s in range(0, len(data), batch_size):
            batch = encode(tok, data.texts[s : s + batch_size], cands[s : s + batch_size], max_length)
            pred = model(**{k: v.to(model.device) for k, v in batch.items()}).logits.argmax(-1).tolist()
            right += [int(a == b) for a, b in zip(pred, gold[s : s + batch_size])]
    return np.array(right)


def p4_texts(test: ChoiceSet, train: ChoiceSet, stopwords: frozenset[str], embed, seed: int = 0,
             random_control: bool = False) -> tuple[ChoiceSet, ChoiceSet, dict]:
    """(base, perturbed, log): the section texts word-tokenised and re-joined, and their P4 (or random) copy."""
    from xlsent.data.derived.projection import tokenize_words
    from xlsent.data.formats.conll import TaggedCorpus
    from xlsent.perturbations.context import p4_context

    def as_corpus(d: ChoiceSet) -> TaggedCorpus:
        toks = [tokenize_words(t) or [t] for t in d.texts]
        return TaggedCorpus(toks, [["O"] * len(t) for t in toks], list(range(len(toks))), d.path)

    te = as_corpus(test)
    out = p4_context(te, as_corpus(train), stopwords, embed, seed, random_control, only_o=False)
    base = ChoiceSet([" ".join(t) for t in te.tokens], test.candidates, test.path, test.lines)
    pert = ChoiceSet([" ".join(t) for t in out.tokens], test.candidates, test.path, test.lines)
    return base, pert, {"counts": out.counts, "mapping": out.mapping, "replacements": out.replacements}


@dataclass(frozen=True)
class PerturbedAccuracy:
    """Accuracy on a perturbed copy of the test set, against the unperturbed one on the same examples."""

    value: float
    delta: float
    delta_ci95: list[float] | None
    p: float | None
    counts: dict

    def to_dict(self) -> dict:
        out = {"value": self.value, "delta": self.delta, "counts": self.counts}
        return out if self.delta_ci95 is None else {**out, "delta_ci95": self.delta_ci95, "p": self.p}


@dataclass(frozen=True)
class TitlesResult:
    """What :func:`evaluate_titles` measured; ``to_dict()`` is the JSON ``xlsent eval titles -o`` writes."""

    model: str
    test: str
    n: int
    n_choices: int
    accuracy: float
    ci95: list[float] | None
    perturbed: dict[str, PerturbedAccuracy] = field(default_factory=dict)  # "P4", "P4-random"
    word_overlap: dict | None = None

    def to_dict(self) -> dict:
        out = {"schema": "xlsent.titles-eval/1", "model": self.model, "test": self.test, "n": self.n,
               "accuracy": {"value": self.accuracy, "ci95": self.ci95}}
        out.update({name: p.to_dict() for name, p in self.perturbed.items()})
        return out if self.word_overlap is None else {**out, "word_overlap": self.word_overlap}


def evaluate_titles(model_dir: Path, data: ChoiceSet, test: str, train: ChoiceSet | None = None,
                    stopwords: frozenset[str] = frozenset(), embed_model: str = "e5-small", seed: int = 0,
                    bootstrap: int = 1000, max_length: int = 128) -> TitlesResult:
    """Accuracy with a bootstrap CI; with ``train``, also under P4 (shared context words → the most similar
    test-only word, by ``embed_model``) and P4-random, on ``data`` (the test set, read from ``test``), each as a paired bootstrap against the unperturbed test,
    and the test/train word overlap under the model's tokenizer (Manafi 2025 Table 3.4)."""
    from xlsent.evaluation.bootstrap import mean_ci, paired_difference

    ci = lambda v: mean_ci(v, bootstrap, seed) if bootstrap else None  # noqa: E731
    if train is None:
        right = accuracy(model_dir, data, seed, max_length)
        return TitlesResult(str(model_dir), str(test), len(data), data.n_choices, float(right.mean()), ci(right))
    from transformers import AutoTokenizer

    from xlsent.perturbations.context import WordEmbedder
    from xlsent.perturbations.overlap import word_overlap

    base, pert, log = p4_texts(data, train, stopwords, WordEmbedder(embed_model), seed)
    _, rnd, log_r = p4_texts(data, train, stopwords, None, seed, random_control=True)
    rb = accuracy(model_dir, base, seed, max_length)
    perturbed = {}
    for name, d, lg in (("P4", pert, log), ("P4-random", rnd, log_r)):
        r = accuracy(model_dir, d, seed, max_length)
        paired = paired_difference(r, rb, bootstrap, seed)
        perturbed[name] = PerturbedAccuracy(float(r.mean()), paired["delta"], paired["ci95"], paired["p"], lg["counts"])
    overlap = word_overlap(AutoTokenizer.from_pretrained(str(model_dir)), train.texts, data.texts, max_length)
    return TitlesResult(str(model_dir), str(test), len(data), data.n_choices, float(rb.mean()), ci(rb), perturbed,
                        overlap)


def train(cfg, output: Path, on_note=None, progress: bool = True) -> RunResult:
    """``xlsent train titles``: the training (and test) file read before any model loads, then :func:`train_titles`."""
    from xlsent.recipes.config import dump_config
    from xlsent.utils.io import write_text_atomic

    if not cfg.train.data:
        raise XlsentError("give the training file: --set train.data=FILE (text<TAB>gold<TAB>distractor…)")
    read_choices(cfg.train.data)
    if cfg.eval.test:
        read_choices(cfg.eval.test)
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    return train_titles(cfg, output, on_note, progress)


def evaluate_after(cfg, result: RunResult, output: Path, on_note=None, no_eval: bool = False):
    """Evaluation hook: accuracy of the trained selector on ``eval.test`` (candidates shuffled by the seed), 95% CI."""
    from xlsent.evaluation.suite import HeldOut, ModelMetrics
    from xlsent.recipes.registry import Report

    model = result.model_path
    if no_eval or not cfg.eval.test:
        return Report(model, None, title="")
    right = accuracy(model, read_choices(cfg.eval.test), cfg.optim.seed, cfg.models.max_seq_length)
    from xlsent.evaluation.bootstrap import mean_ci

    choice = {"accuracy": float(right.mean()), "ci95": mean_ci(right, 1000, cfg.optim.seed), "n": len(right)}
    held = HeldOut({"test": str(cfg.eval.test), "labels": "user file", "n": len(right), "sample_seed": cfg.optim.seed},
                   {"trained": ModelMetrics(choice=choice)}, "titles", {"train": str(cfg.train.data)})
    return Report(model, held, title=f"title selection on {cfg.eval.test} (multiple choice)",
                  usage="load it with transformers' AutoModelForMultipleChoice (`xlsent eval titles -m DIR` scores it)")
