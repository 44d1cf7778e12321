"""Token tagger (NER or POS) fine-tuned over any encoder — the token-level task of paper 004 §3.1.

Manafi (2025, §3.1.3) fine-tunes mBERT and XLM-R with a token-classification head on the L1 or L2
training file (the *transfer* and *native* conditions) and reports entity F1 on the L2 test file;
Chen et al. (2023, §4) fine-tune on English and test zero-shot (lr 2e-5, batch 16–32, 3–5 epochs,
length 128). ``--preset paper`` follows them: every layer trained, lr 2e-5, batch 32, 3 epochs,
128 pieces. The default is the measured CPU setting below, which on silver en→ny NER also transfers
better (docs/results.md). Decisions where the papers are silent:

* **First sub-token labelling** (the BERT convention; neither paper says): a word's label is
  learned and read on its first sub-token (:mod:`xlsent.models.tagger`).
* **Label set** = the training file's: ``B-X``/``I-X`` for every entity type X it holds (plus
  ``O``), or its POS tags. A test label the training file lacks is scored (it can only be missed).
* **No prompt.** e5's ``query:``/``passage:`` prefixes are for sentence vectors; the tagger sees
  the words alone.
* **CPU default**: the lower ``L - tagger.train_layers`` layers and the token table
  are frozen, their output is computed once in eval mode (no dropout there) and cached in float16, and
  each step trains only the top layers and the head. ``tagger.train_layers: 0`` trains everything
  (optionally with ``models.freeze_word_embeddings``). docs/results.md measures what the preset costs.
* **Held-out data is reported, never used to choose**: no early stopping, the last epoch is saved.

The run folder holds ``model/`` (a Hugging Face token-classification folder that
``SentenceTransformer(path)`` also loads as an encoder), ``config.yaml``, ``metrics.json``
(schema ``xlsent.metrics/2``, its ``tagging`` part) and ``train_log.jsonl``; an interrupted run resumes from its last
checkpoint (:mod:`xlsent.training.run_folder`).
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Callable

from xlsent.data.formats.conll import TaggedCorpus
from xlsent.data.formats.conll import SCHEMES
from xlsent.data.formats.tagging import for_task, load_tagged
from xlsent.recipes.config_types import EvalConfig, TrainConfig
from xlsent.recipes.registry import RunResult
from xlsent.training.loop import finish_stage, run_loop, total_steps
from xlsent.training.processes import main_first, world_size
from xlsent.training.run_folder import StageFolder, config_hash, learning_optim
from xlsent.training.stage import adamw_linear
from xlsent.training.settings import NonNegInt, Section

#: what the trained model gives: a token-classification folder, not sentence embeddings (the CLI and the model card read it)
OUTPUT = "tagger"

#: the allowed words of this recipe's own keys (``--set`` values are checked against them before anything loads)
CHOICES = {"tagger.task": ("ner", "pos"), "train.scheme": ("auto", *SCHEMES)}


class TaggerSettings(Section):
    train_layers: NonNegInt = 4  # the top layers trained (0: every layer)


class TaggerTrain(TrainConfig):
    sample_seed: NonNegInt = 0


class TaggerEval(EvalConfig):
    bootstrap: NonNegInt = 1000


#: this recipe's own sections, typed with their ranges (xlsent.recipes.config_schema)
SECTIONS = {"tagger": TaggerSettings, "train": TaggerTrain, "eval": TaggerEval}

Note = Callable[[str], None] | None


def scheme_of(cfg) -> str:
    s = cfg.train.scheme
    return s if s != "auto" else ("iob2" if cfg.tagger.task == "ner" else "plain")


def read_training(cfg) -> tuple[TaggedCorpus, list[str]]:
    """The (sampled) training corpus and notes — read before any model loads, so a bad file fails first."""
    data = for_task(cfg.train.data, cfg.tagger.task)
    corpus = load_tagged(data, scheme_of(cfg), strict=cfg.train.strict, task=cfg.tagger.task)
    notes = list(corpus.notes)
    if str(data) != str(cfg.train.data):
        notes.insert(0, f"tagger.task={cfg.tagger.task}: training on {data} (the {cfg.tagger.task.upper()} tags of "
                        f"{cfg.train.data}'s sentences)")
    n = cfg.train.sample
    if n and n < len(corpus):
        total = len(corpus)
        idx = sorted(random.Random(cfg.train.sample_seed).sample(range(len(corpus)), n))
        corpus = corpus.subset(idx)
        corpus.path = str(cfg.train.data)
        notes.append(f"training on a sample of {n} of the file's {total} sentences "
                     f"(train.sample_seed={cfg.train.sample_seed}; the same sample for every optim.seed)")
    if cfg.tagger.task == "ner" and not corpus.labels():
        from xlsent.utils.errors import XlsentError

        raise XlsentError(f"{cfg.train.data}: no entity in the training file — a NER tagger cannot learn from it")
    return corpus, notes


def label_list(corpus: TaggedCorpus, task: str) -> list[str]:
    if task == "ner":
        return ["O"] + [f"{p}-{lab}" for lab in corpus.labels() for p in ("B", "I")]
    return corpus.tag_set()


def build_model(base: str, labels: list[str], seed: int):
    import torch
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from xlsent.models.handle import transformer_subfolder
    from xlsent.models.registry import resolve_model_path

    root = resolve_model_path(base)
    folder = root / transformer_subfolder(root)
    torch.manual_seed(seed)
    model = AutoModelForTokenClassification.from_pretrained(
        str(folder), num_labels=len(labels), id2label=dict(enumerate(labels)),
        label2id={lab: k for k, lab in enumerate(labels)})
    return model, AutoTokenizer.from_pretrained(str(folder))


def freeze(model, train_layers: int, freeze_word_embeddings: bool) -> int:
    """Freeze what is not trained; returns the index of the first trained layer (0 = none frozen)."""
    from xlsent.models.tagger import backbone

    enc = backbone(model)
    n = len(enc.encoder.layer)
    start = 0 if train_layers in (0, None) or train_layers >= n else n - train_layers
    if start > 0:
        for p in enc.embeddings.parameters():
            p.requires_grad = False
        for layer in enc.encoder.layer[:start]:
            for p in layer.parameters():
                p.requires_grad = False
    elif freeze_word_embeddings:
        enc.embeddings.word_embeddings.weight.requires_grad = False
    if getattr(enc, "pooler", None) is not None:
        for p in enc.pooler.parameters():
            p.requires_grad = False
    return start


def train_tagger(cfg, output: Path, on_note: Note = None, progress: bool = True,
                 training: tuple[TaggedCorpus, list[str]] | None = None) -> RunResult:
    """Train (or resume) the tagger of ``cfg`` into ``output``. ``training``: what :func:`read_training` returned
    for this cfg, when the caller already read it (the CLI does, to fail before any model loads)."""
    from xlsent.models.tagger import encode_words, lower_states, save_tagger
    from xlsent.utils.device import current_device

    from xlsent.utils.device import use_device

    use_device(cfg.models.get("device", "auto"), "models.device")  # before any model loads
    t0 = time.monotonic()
    corpus, notes = training if training is not None else read_training(cfg)
    notes = list(notes)
    labels = label_list(corpus, cfg.tagger.task)
    folder = StageFolder(output, config_hash(cfg.models.to_dict(), cfg.train.to_dict(), cfg.tagger.to_dict(),
                                             learning_optim(cfg.optim.to_dict())), "tagger", on_note)
    if (rec := folder.record()) is not None:
        folder.note("tagger: finished earlier with this config — skipping")
        return RunResult(Path(output), folder.model_dir, notes=rec["notes"], details={
            "labels": rec["labels"], "examples": rec["train_sentences"], "seconds": rec["seconds"]})
    with main_first():  # under several processes the main one prepares the folder
        folder.begin()
    model, tok = build_model(cfg.models.base, labels, cfg.optim.seed)
    start = freeze(model, cfg.tagger.train_layers, cfg.models.freeze_word_embeddings)
    model.to(current_device())  # the lower layers' states are cached where the model runs
    enc = encode_words(tok, corpus.tokens, corpus.tags, model.config.label2id, cfg.models.max_seq_length)
    if enc.truncated_words:
        notes.append(f"{enc.truncated_words} training word(s) past {cfg.models.max_seq_length} pieces are not learned")
    pad = tok.pad_token_id or 0
    cache = None
    if start > 0:
        with _bar(progress) as b:
            task = b.add_task(f"caching layer {start} states", total=len(enc.input_ids)) if b else None
            cache = lower_states(model, enc, start, pad_id=pad,
                                 progress=(lambda k: b.advance(task, k)) if b else None)
        notes.append(f"layers 1–{start} and the token table frozen; their output cached; training layers "
                     f"{start + 1}–{len(model.base_model.encoder.layer)} + head")
    _, total = total_steps(len(enc.input_ids), cfg.optim, world_size())
    opt, sched = adamw_linear((p for p in model.parameters() if p.requires_grad), cfg.optim, total)
    step_module = _make_step_class()(model, enc, cache, start, pad)
    result = run_loop(folder, cfg.optim, step_module, opt, sched, len(enc.input_ids),
                      lambda sel, module, acc: module(sel), name="tagger", progress=progress)
    seconds = time.monotonic() - t0
    record = {"labels": labels, "train_sentences": len(corpus), "seconds": seconds, "notes": notes}
    finish_stage(folder, result, lambda tmp: save_tagger(model, tok, tmp, cfg.models.max_seq_length), record)
    return RunResult(Path(output), folder.model_dir, notes=notes,
                     details={"labels": labels, "examples": len(corpus), "seconds": seconds})


def _make_step_class():
    import torch

    from xlsent.models.tagger import full_forward, top_forward

    class TaggerStep(torch.nn.Module):
        """One training step's loss as a module's forward (so that under several processes DDP sees it): the
        token-classification cross-entropy of the sentences ``sel``, from the cached lower states when the lower
        layers are frozen."""

        def __init__(self, model, enc, cache, start: int, pad: int):
            super().__init__()
            self.model, self.enc, self.cache, self.start, self.pad = model, enc, cache, start, pad

        def forward(self, sel: list[int]) -> dict:
            if self.cache is not None:
                logits, _ = top_forward(self.model, [self.cache[i] for i in sel], self.start)
            else:
                logits, _ = full_forward(self.model, [self.enc.input_ids[i] for i in sel], self.pad)
            n = logits.shape[1]
            y = torch.tensor([r + [-100] * (n - len(r)) for r in (self.enc.labels[i] for i in sel)],
                             device=logits.device)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), y.reshape(-1),
                                                     ignore_index=-100)
            return {"loss": loss}

    return TaggerStep


def _bar(progress: bool):
    from contextlib import nullcontext

    if not progress:
        return nullcontext(None)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                    TimeElapsedColumn(), TimeRemainingColumn(), transient=True)


def train(cfg, output: Path, on_note: Note = None, progress: bool = True) -> RunResult:
    """``xlsent train tagger``: a bundled NER set asked for with ``tagger.task=pos`` becomes its POS twin (said),
    the training file is read before any model loads, then :func:`train_tagger`."""
    from xlsent.recipes._common import say
    from xlsent.recipes.config import dump_config
    from xlsent.utils.io import write_text_atomic

    for section, key in ((cfg.train, "data"), (cfg.eval, "test")):
        value = getattr(section, key)
        if value and str(for_task(value, cfg.tagger.task)) != str(value):
            setattr(section, key, str(for_task(value, cfg.tagger.task)))
            say(on_note, [f"tagger.task={cfg.tagger.task}: {value} → {getattr(section, key)}"])
    training = read_training(cfg)  # a malformed training or test file fails here, before any model loads
    if cfg.eval.test:
        load_tagged(cfg.eval.test, scheme_of(cfg), strict=cfg.train.strict, task=cfg.tagger.task)
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    result = train_tagger(cfg, output, on_note, progress, training)
    say(on_note, result.notes + [f"tagger: {len(result.labels)} labels, {result.examples} training sentences, "
                                 f"{result.seconds / 60:.1f} min"])
    return result


def evaluate_after(cfg, result: RunResult, output: Path, on_note: Note = None, no_eval: bool = False):
    """Evaluation hook: entity F1 (NER) or accuracy (POS) of the trained tagger on ``eval.test``, with bootstrap CIs;
    whether the test labels are gold, silver or the user's is said with the figure."""
    from xlsent.data.formats.tagging import data_kind
    from xlsent.evaluation.suite import HeldOut, ModelMetrics
    from xlsent.evaluation.tagging import evaluate_tagger, sample_corpus
    from xlsent.models.tagger import load_tagger
    from xlsent.recipes.registry import Report

    usage = ("a token classifier: load it with transformers' AutoModelForTokenClassification "
             "(`xlsent eval ner|pos -m DIR` scores it)")
    if no_eval or not cfg.eval.test:
        return Report(result.model_path, None, title="", usage=usage)
    test = sample_corpus(load_tagged(cfg.eval.test, scheme_of(cfg), strict=cfg.train.strict, task=cfg.tagger.task),
                         cfg.eval.sample, cfg.optim.seed)
    model, tok = load_tagger(result.model_path)
    s = evaluate_tagger(model, tok, test, cfg.tagger.task, cfg.eval.bootstrap, cfg.optim.seed, cfg.models.max_seq_length)
    kind = data_kind(cfg.eval.test)
    held = HeldOut({"test": str(cfg.eval.test), "labels": kind, "n": s.sentences, "sample_seed": cfg.optim.seed},
                   {"trained": ModelMetrics(tagging=s.to_dict())}, "tagger",
                   {"task": cfg.tagger.task, "train": str(cfg.train.data), "train_labels": data_kind(cfg.train.data),
                    "train_sentences": result.examples, "train_seconds": result.seconds, "notes": result.notes})
    return Report(result.model_path, held, title=f"{cfg.tagger.task.upper()} on {cfg.eval.test} ({kind} labels)",
                  usage=usage)
