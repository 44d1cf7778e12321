"""Structural contrastive pretraining with CL-MoCo (Chen et al. 2023): ``xlsent train scp``.

Chen, Shou, Song, Gong, Pei, Chang, Jiang & Li (2023). *Structural Contrastive Pretraining for
Cross-Lingual Comprehension.* Findings of ACL.

Each aligned structural span (subject, verb, object, entity; ``xlsent data structural-words``) of a
parallel pair is a positive pair: its span vectors (mean of the first and last sub-token's last-layer
state, Eq. 4) in the two languages are pulled together against the other spans of the batch and a
queue of momentum-encoder vectors per language (CL-MoCo, Eq. 9–11; :mod:`xlsent.losses.structural_contrastive_loss`),
while an MLM loss over 15% of the other sub-tokens keeps the language model (``L = L_scp + L_mlm``,
Eq. 12). Only the fast encoder is kept: the output is the base model's sentence-transformers folder with
the trained encoder (same prompt, pooling and normalisation), for token-level fine-tuning
(``xlsent train tagger --set models.base=RUN/model``) or as a sentence encoder.

Paper setting (``--preset paper``): XLM-R base, L_scp + L_mlm, Adam lr 1e-6 with 1.5k warm-up steps, batch 128,
4 epochs, 128 pieces, τ 0.05, queues of 20k, λ 0.99, 8 V100s for a day. The default is the 2-core CPU setting
(≈ 9 minutes of training on 6,000 pairs of the bundled Old Testament): e5-small with its token table and lower
8 layers frozen (their output shared by the fast and the slow encoder), 64 pieces, batch 16 pairs (≈ 38
spans), a queue of 4,096 — the queue is what gives a small batch its negatives —, lr 2e-5 for 372 steps,
and **no MLM**: e5-small ships no MLM head, and with a fresh one the MLM term pulled the sentence encoder
down (NT en→ny below the base model and well below the same run without MLM; OT development books the
same) while taking nearly half the training time (``docs/experiments/scp.md``). ``--set mlm.enabled=true`` or the paper
preset turns it on. Ablation switches: ``scp.variant`` (``cl-moco`` | ``moco`` | ``in-batch``: Fig. 3, Table 4),
``mlm.enabled`` (Table 4), ``scp.queue_size`` (Fig. 4), ``scp.tau`` (Fig. 5), ``train.types`` (Table 10),
``scp.negatives`` and ``scp.momentum_convention`` (the two readings of the paper below).

Decisions where the paper is silent or ambiguous:

* **Momentum convention**: Eq. 5 as printed gives λ = 0.99 to the *fast* encoder; MoCo's convention
  (``slow ← 0.99·slow + 0.01·fast``) is the default, the printed one ``scp.momentum_convention: printed``.
* **Queue of the negatives**: Eq. 9 draws source→target negatives from the source queue as printed
  (``scp.negatives: printed``); the default takes them from the key language's queue (xMoCo's reading).
* **Slow vectors**: the positive and in-batch vectors of the MoCo variants come from the slow encoder (MoCo's
  keys); the slow encoder reads the same (masked) batch — structural words are never masked, so their
  spans are intact in both.
* **MLM head**: e5-small has none; a BERT head tied to the token table is built (:func:`~xlsent.models.span_encoder.mlm_head`).
  Masking follows BERT (80% mask, 10% random, 10% kept) over sub-tokens that are not structural, not special
  and not the prompt, with sentence-transformers' and transformers' collator.
* **Prompt**: sentences are encoded with the model's document prompt (e5: ``passage: ``), as its sentence
  embeddings are (``scp.prompt: false`` for none); span offsets are counted after it.
* **Order**: the pairs are shuffled per epoch by the one loop (:mod:`xlsent.training.loop`); a pair's spans stay
  in one batch. Under DDP each process takes its share of the pairs, the in-batch keys of every process are
  its negatives and every key enters the queues (the one-process queues); the MLM term is each process's mean
  over its masked sub-tokens.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from xlsent.recipes._common import say
from xlsent.recipes.config import dump_config
from xlsent.recipes.config_schema import config_error
from xlsent.recipes.config_types import EvalConfig, RecipeConfig, TrainConfig
from xlsent.training.settings import FractionFloat, NonNegFloat, NonNegInt, PosFloat, PosInt, Section, UnitFloat
from xlsent.training.loop import finish_stage, run_loop, total_steps
from xlsent.training.processes import main_first, process_seed, world_size
from xlsent.training.run_folder import StageFolder, config_hash, learning_optim
from xlsent.training.stage import adamw_linear
from xlsent.utils.device import EXPORT_DEVICE, current_device
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_text_atomic
from xlsent.losses.structural_contrastive_loss import NEGATIVES, VARIANTS
from xlsent.models.span_encoder import CONVENTIONS
from xlsent.recipes.registry import RunResult

#: the allowed words of this recipe's own keys (``--set`` values are checked against them before anything loads)
CHOICES = {"scp.variant": VARIANTS, "scp.negatives": NEGATIVES, "scp.momentum_convention": CONVENTIONS}


class ScpSettings(Section):
    """``scp:`` — the contrastive objective: temperature, queue, momentum and the layers trained."""

    tau: PosFloat = 0.05
    queue_size: NonNegInt = 4096
    momentum: UnitFloat = 0.99
    train_layers: NonNegInt = 4


class ScpMlm(Section):
    probability: FractionFloat = 0.15
    weight: NonNegFloat = 1.0


class ScpTrain(TrainConfig):
    sample_seed: NonNegInt = 0


class ScpEval(EvalConfig):
    span_sample: NonNegInt = 1000
    span_max_length: PosInt = 128


#: this recipe's own sections and fields, typed with their ranges (xlsent.recipes.config_schema)
SECTIONS = {"scp": ScpSettings, "mlm": ScpMlm, "train": ScpTrain, "eval": ScpEval}


def validate(cfg: RecipeConfig) -> None:
    """The checks of this recipe's own data keys: known structural types, span files that exist."""
    from xlsent.data.derived.structural import BUNDLED_SPANS, TYPES

    bad = [t for t in cfg.train["types"] if t not in TYPES]
    if bad or not cfg.train["types"]:
        raise config_error("train.types", cfg.train["types"], "unknown or no structural type",
                           f"give some of {', '.join(TYPES)}, e.g. --set 'train.types=[subject,verb,object]'")
    for key, value in (("train.spans", cfg.train["spans"]), ("eval.spans", cfg.eval.get("spans"))):
        if value and value not in BUNDLED_SPANS and not Path(value).expanduser().is_file():
            raise config_error(key, value, "no such file and not a bundled structural-words set",
                               f"make one with `xlsent data structural-words PAIRS -o FILE` or use {', '.join(BUNDLED_SPANS)}")


@dataclass
class SpanBatchData:
    """Tokenised pairs and their span offsets, ready for batching."""

    src_ids: list[list[int]]
    tgt_ids: list[list[int]]
    src_spans: list[list[tuple[int, int]]]  # per pair: (first, last) sub-token of each span
    tgt_spans: list[list[tuple[int, int]]]
    keep_src: list[list[int]]  # per pair: positions MLM must not mask (structural words, prompt)
    keep_tgt: list[list[int]]
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.src_ids)

    @property
    def spans(self) -> int:
        return sum(len(s) for s in self.src_spans)


def read_spans_for(cfg: RecipeConfig) -> tuple[list[dict], dict, list[str]]:
    """The training records (types filtered, sampled) — read before any model loads, so a bad file fails first."""
    from xlsent.data.derived.structural import TYPES, read_spans

    d = cfg.train
    types = [str(t) for t in d.types]
    for t in types:
        if t not in TYPES:
            raise XlsentError(f"config train.types: unknown type {t!r} — use some of {', '.join(TYPES)}")
    records, meta = read_spans(d.spans)
    notes, kept, dropped_spans = [], [], 0
    for r in records:
        spans = [s for s in r["spans"] if set(s["types"]) & set(types)]
        dropped_spans += len(r["spans"]) - len(spans)
        if spans:
            kept.append({**r, "spans": spans})
    if dropped_spans:
        notes.append(f"{d.spans}: {dropped_spans} span(s) of types outside train.types={types} left out; "
                     f"{len(records) - len(kept)} pair(s) left with none dropped")
    if len(kept) < 2:
        raise XlsentError(f"{d.spans}: only {len(kept)} pair(s) with spans of types {types} — need at least 2")
    n = int(d.sample)
    if n and n < len(kept):
        idx = sorted(random.Random(int(d.sample_seed)).sample(range(len(kept)), n))
        notes.append(f"{d.spans}: training on a seeded sample of {n} of {len(kept)} pairs (train.sample_seed={d.sample_seed})")
        kept = [kept[i] for i in idx]
    return kept, meta, notes


def prepare(records: list[dict], meta: dict, tok, prompt: str, max_len: int) -> SpanBatchData:
    """Token ids and span offsets (the stored ones when they belong to this tokenizer and prompt); spans past
    ``max_len`` pieces and pairs left without a span are dropped and counted."""
    from xlsent.data.derived.structural import add_piece_offsets, tokenizer_fingerprint

    notes = []
    if meta.get("tokenizer") != tokenizer_fingerprint(tok) or meta.get("prompt") != prompt:
        records = copy.deepcopy(records)
        add_piece_offsets(records, tok, prompt)
        notes.append(f"span offsets recomputed for this model's tokenizer and prompt {prompt!r} (the file's are for "
                     f"{meta.get('model', 'another model')!r}); the alignment is the file's")
    n_prompt = len(tok(prompt, add_special_tokens=False)["input_ids"]) if prompt else 0
    enc_s = tok([prompt + r["src"] for r in records], truncation=True, max_length=max_len)["input_ids"]
    enc_t = tok([prompt + r["tgt"] for r in records], truncation=True, max_length=max_len)["input_ids"]
    out = SpanBatchData([], [], [], [], [], [], notes)
    cut = none = 0
    for r, ids_s, ids_t in zip(records, enc_s, enc_t):
        ss, ts = [], []
        for s in r["spans"]:
            a, b = s.get("src_pieces"), s.get("tgt_pieces")
            if a is None or b is None:
                none += 1
            elif a[1] >= len(ids_s) - 1 or b[1] >= len(ids_t) - 1:
                cut += 1
            else:
                ss.append((a[0], a[1]))
                ts.append((b[0], b[1]))
        if not ss:
            continue
        out.src_ids.append(ids_s)
        out.tgt_ids.append(ids_t)
        out.src_spans.append(ss)
        out.tgt_spans.append(ts)
        prompt_pos = list(range(1, 1 + n_prompt))
        out.keep_src.append(prompt_pos + [i for a, b in ss for i in range(a, b + 1)])
        out.keep_tgt.append(prompt_pos + [i for a, b in ts for i in range(a, b + 1)])
    if cut or none:
        notes.append(f"{cut} span(s) past {max_len} pieces and {none} that no sub-token covers left out; "
                     f"{len(records) - len(out)} pair(s) left with none dropped")
    if len(out) < 2:
        raise XlsentError(f"only {len(out)} pair(s) keep a span within {max_len} pieces — raise models.max_seq_length")
    return out


def _pad(rows: list[list[int]], value: int):
    import torch

    n = max(len(r) for r in rows)
    return torch.tensor([r + [value] * (n - len(r)) for r in rows], dtype=torch.long)


def _special_mask(rows: list[list[int]], keep: list[list[int]], tok):
    """1 where MLM must not mask: special tokens, padding, the prompt and structural sub-tokens."""
    import torch

    n = max(len(r) for r in rows)
    m = torch.ones(len(rows), n, dtype=torch.long)
    for k, (r, kp) in enumerate(zip(rows, keep)):
        m[k, : len(r)] = torch.tensor(tok.get_special_tokens_mask(r, already_has_special_tokens=True))
        m[k, kp] = 1
    return m


def masked_batch(collator, rows: list[list[int]], keep: list[list[int]], tok, pad: int):
    """(input ids, MLM labels) of a batch: the collator's BERT masking over every sub-token that is not special,
    padding, prompt or structural (labels -100 elsewhere); without a collator, the ids and None."""
    x = _pad(rows, pad)
    if collator is None:
        return x, None
    return collator.torch_mask_tokens(x.clone(), _special_mask(rows, keep, tok))


def train_scp(cfg: RecipeConfig, output: str | Path, on_note: Callable[[str], None] | None = None,
              progress: bool = True, on_step: Callable[[int], None] | None = None) -> RunResult:
    """Train as configured; returns the model folder ``<output>/model`` (``on_step(step)``: a test hook)."""
    import torch
    from transformers import DataCollatorForLanguageModeling

    from xlsent.losses.structural_contrastive_loss import StructuralContrastiveLoss
    from xlsent.models.handle import load_model
    from xlsent.models.span_encoder import freeze_lower, layer_count, mlm_head, momentum_update, slow_copy

    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    cfg = copy.deepcopy(cfg)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    records, meta, notes = read_spans_for(cfg)
    folder = StageFolder(output, config_hash(cfg.models, cfg.train, cfg.scp, cfg.mlm, learning_optim(cfg.optim)),
                         "scp", on_note)
    if folder.skip_if_done():
        return RunResult(output, folder.model_dir)
    say(on_note, notes)
    with main_first():
        folder.begin()
    o, s, seed = cfg.optim, cfg.scp, int(cfg.optim.seed)
    torch.manual_seed(seed)
    handle = load_model(cfg.models.base, max_seq_length=int(cfg.models.max_seq_length))
    st = handle.model
    encoder, tok = st[0].auto_model, st.tokenizer
    prompt = handle.prompt if s.prompt else ""
    data = prepare(records, meta, tok, prompt, int(cfg.models.max_seq_length))
    say(on_note, data.notes)
    start = freeze_lower(encoder, int(s.train_layers), bool(cfg.models.freeze_word_embeddings))
    n_layers = layer_count(encoder)
    loss_fn = StructuralContrastiveLoss(encoder.config.hidden_size, s.variant, float(s.tau), int(s.queue_size),
                                        s.negatives)
    slow = slow_copy(encoder) if loss_fn.needs_slow else None
    m = cfg.mlm
    head = mlm_head(encoder) if m.enabled else None
    collator = DataCollatorForLanguageModeling(tok, mlm_probability=float(m.probability)) if m.enabled else None
    mask_gen = torch.Generator().manual_seed(process_seed(seed))  # each process its own masks
    if collator is not None:
        collator.generator = mask_gen
    params = [p for p in encoder.parameters() if p.requires_grad]
    if head is not None:
        params += [p for p in head.parameters() if p.requires_grad and p is not encoder.get_input_embeddings().weight]
    n_pairs = len(data)
    per_epoch, total = total_steps(n_pairs, o, world_size())
    opt, sched = adamw_linear(params, o, total)
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    model = _ScpModel(encoder, head, slow, loss_fn, start, s.variant)
    device = current_device()
    if slow is not None:
        slow.to(device)
    loss_fn.to(device)
    say(on_note, [f"scp: {s.variant}, {n_pairs} pairs with {data.spans} spans, {per_epoch} steps an epoch, "
                  f"{total} steps; layers {start + 1}–{n_layers} trained"
                  + (", token table frozen" if not encoder.get_input_embeddings().weight.requires_grad else "")
                  + (f"; MLM {m.probability:.0%} of non-structural sub-tokens" if head is not None else "; no MLM")])

    def step(sel: list[int], module, accelerator) -> dict:
        sides = {}
        for side, ids_all, spans_all, keep_all in (("s", data.src_ids, data.src_spans, data.keep_src),
                                                    ("t", data.tgt_ids, data.tgt_spans, data.keep_tgt)):
            rows = [ids_all[i] for i in sel]
            x, labels = masked_batch(collator, rows, [keep_all[i] for i in sel], tok, pad)
            where = [(b, a, z) for b, i in enumerate(sel) for a, z in spans_all[i]]
            sides[side] = [t.to(accelerator.device) if t is not None else None for t in (
                x, _pad([[1] * len(r) for r in rows], 0), labels, *torch.tensor(where, dtype=torch.long).T)]
        out = module(sides)
        out["loss"] = out["scp"] + float(m.weight) * out["mlm"] if head is not None else out["scp"]
        return out

    def update() -> None:  # after each optimiser update: the slow encoder follows the fast one
        if slow is not None:
            momentum_update(encoder, slow, float(s.momentum), s.momentum_convention)

    def state() -> dict:
        return {"slow": {n: p.detach().cpu().clone() for n, p in slow.named_parameters()
                         if dict(encoder.named_parameters())[n].requires_grad} if slow is not None else {},
                "loss": {k: v.cpu() for k, v in loss_fn.state_dict().items()}, "mask_rng": mask_gen.get_state()}

    def restore(st: dict) -> None:
        if slow is not None:
            slow.load_state_dict({**slow.state_dict(), **st["slow"]})
        loss_fn.load_state_dict(st["loss"])
        mask_gen.set_state(st["mask_rng"])

    result = run_loop(folder, o, model, opt, sched, n_pairs, step, name="scp", progress=progress, on_step=on_step,
                      on_update=update, state_fn=state, load_state_fn=restore)
    log = result.log
    if log:
        say(on_note, [f"scp: {result.steps} steps in {result.seconds / 60:.1f} min; final loss {log[-1]['loss']:.4f} "
                      f"(scp {log[-1]['scp']:.4f}, mlm {log[-1]['mlm']:.4f})"])

    def save(tmp: Path) -> None:
        encoder.eval()
        st.to(EXPORT_DEVICE)
        st.save(str(tmp))

    finish_stage(folder, result, save, {"pairs": n_pairs, "spans": data.spans, "train_layers_from": start + 1,
                                        "data_notes": notes + data.notes, "spans_file": str(cfg.train.spans)})
    return RunResult(output, folder.model_dir)


class _ScpModel(torch.nn.Module):
    """What the loop trains: the fast encoder and the MLM head, both sides of a batch in one forward (what DDP
    synchronises). The slow encoder and the queues sit outside it — no gradient and no buffer broadcast: every
    process updates them identically (the queues take every process's keys, :mod:`xlsent.losses.gather`)."""

    def __init__(self, encoder, head, slow, loss_fn, start: int, variant: str) -> None:
        super().__init__()
        self.encoder, self.head = encoder, head
        self._outside = (slow, loss_fn)  # a tuple: not registered as submodules
        self.start, self.variant = start, variant

    def train(self, mode: bool = True):
        super().train(mode)
        if mode and self.start > 0:  # frozen lower part: no dropout there (its output is shared with the slow encoder)
            self.encoder.embeddings.eval()
            for layer in self.encoder.encoder.layer[: self.start]:
                layer.eval()
        return self

    def forward(self, sides: dict) -> dict:
        from xlsent.models.span_encoder import lower_states, span_vectors, upper_states

        slow, loss_fn = self._outside
        parts, mlm = {}, []
        for side, (x, mask, labels, rows, first, last) in sides.items():
            low = lower_states(self.encoder, x, mask, self.start, grad=self.start == 0)
            fast_h = upper_states(self.encoder, low, mask, self.start)
            slow_v = None
            if slow is not None and (self.variant == "cl-moco" or side == "t"):
                with torch.no_grad():  # the frozen lower part's output is shared; else the slow one's own
                    slow_low = low.detach() if self.start > 0 else lower_states(slow, x, mask, 0, grad=False)
                    slow_v = span_vectors(upper_states(slow, slow_low, mask, self.start), rows, first, last)
            parts[side] = (span_vectors(fast_h, rows, first, last), slow_v)
            if labels is not None and (labels != -100).any():
                where = labels != -100
                mlm.append(torch.nn.functional.cross_entropy(self.head(fast_h[where]), labels[where], reduction="sum")
                           / where.sum())
        scp = loss_fn(parts["s"][0], parts["t"][0], parts["s"][1], parts["t"][1])
        return {"scp": scp, "mlm": torch.stack(mlm).mean() if mlm else scp.new_zeros(()),
                "spans": scp.new_tensor(float(len(sides["s"][3]))),
                "queue_s": scp.new_tensor(float(len(loss_fn.queue_s))),
                "queue_t": scp.new_tensor(float(len(loss_fn.queue_t)))}


def evaluate_after(cfg: RecipeConfig, result: RunResult, output: Path, on_note=None, no_eval: bool = False):
    """Evaluation hook: base model vs SCP on held-out sentence retrieval (NT, UDHR) and structural-span retrieval."""
    from xlsent.data.derived.structural import read_spans
    from xlsent.evaluation.spans import sample_records, span_retrieval
    from xlsent.models.handle import load_model
    from xlsent.recipes._common import evaluate_named
    from xlsent.recipes.registry import Report

    model = result.model_path
    if no_eval:
        return Report(model, None, title="")
    base = cfg.models.base
    named = ({f"base {base}": base} if cfg.eval.base else {}) | {"scp": model}
    metrics = evaluate_named(cfg, named, on_note=on_note)
    if cfg.eval.spans:
        records, _ = read_spans(cfg.eval.spans)
        records = sample_records(records, int(cfg.eval.span_sample), int(cfg.optim.seed))
        for name, path in named.items():
            say(on_note, [f"structural-span retrieval: {name}…"])
            handle = load_model(path)
            metrics.models[name].spans = span_retrieval(handle.model, handle.prompt, records,
                                                        int(cfg.eval.span_max_length), name=str(path)).to_dict()
    return Report(model, metrics, title="held-out: base model vs SCP (sentence retrieval; span P@1 below)")
