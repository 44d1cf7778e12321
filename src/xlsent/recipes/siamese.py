"""Siamese fine-tuning over a frozen multilingual encoder ("mBERT-SF").

Huang, Liang, Wu, Zhu & Yu (2023). *Cross-lingual Sentence Embedding for
Low-resource Chinese-Vietnamese Based on Contrastive Learning.* ACM TALLIP
22(6), Article 176. doi:10.1145/3589341

Method (paper §3, §4.2): a sentence vector is the mean of one hidden layer of a
frozen multilingual encoder (the 7th for mBERT); a shared, dimension-preserving
head (FC + dropout 0.2) maps both languages; the head is trained with the
contrastive loss of Eq. (2) (margin 1.0 on Euclidean distance, label 0 =
parallel, 1 = non-parallel) on parallel pairs plus as many non-parallel pairs
built from the same data; Adam, lr 5e-6, batch 64, 70 epochs; outputs are
normalised unit → center → unit. Defaults in ``configs/siamese.yaml``.

Ablation switches (paper tables): ``head.type`` (Table 6), ``loss.distance``
(Table 7), ``features.layer`` / ``features.pooling`` (Table 8),
``negatives.use_negatives`` (Table 9), ``negatives.strategy`` (Table 13).

Decisions where the paper is silent or ambiguous:

* **Frozen encoder.** Only the head trains (the text says the fine-tuning layer
  is "reverse optimized"; nothing updates the encoder). Features are therefore
  computed once and cached on disk, keyed by model, feature spec and text.
* **Which layer** (``features.layer: auto``, xlsent's default): the paper reads mBERT, a raw
  masked-language model, at its 7th layer. A sentence encoder such as multilingual-e5-small was
  trained to give sentence vectors at its output, and its 7th layer makes the default model worse
  (held-out NT en→ny P@1 falls; ``docs/experiments/siamese-and-recipe-defaults.md``); so ``auto``
  reads a sentence-transformers folder with a pooling module at its last layer and anything else at
  layer 7. ``--preset paper`` is layer 7.
* **"7th hidden layer"** = ``hidden_states[7]``, the output of the 7th
  transformer layer (index 0 is the embedding output). The encoder is cut to the
  deepest layer needed. "Mean of all layers" averages layers 1..L.
* **Mean pooling** includes the special tokens, as sentence-transformers' mean
  pooling does; the model's default prompt ("passage: " for e5) is kept.
* **Head**: FC with bias, **initialised to the identity**, so training starts
  from the encoder's own geometry (a random init would discard it).
* **Input normalisation** (``features.normalize_input``, default on): encoder
  features are unit-normalised before the head, so the margin 1.0 is on the
  scale of the distances (0..2); raw mean-pooled hidden states have norms that
  vary by layer and model.
* **Negatives**: ``random`` draws another pair's target once, as the paper's
  Table 3 does; ``worst`` is the most similar non-parallel target under the
  *current* head, re-mined over the whole training pool each epoch;
  ``average`` averages the negative term over ``average_k`` random targets.
  A target with the same text as the gold is never a negative.
* **Center** = mean of the unit-normalised head outputs on the training
  sentences (both sides), estimated after training and stored in the model.
* **No checkpoint selection on test data**: the last epoch is the model.
* **The one loop** (:mod:`xlsent.training.loop`): the head trains on the process's device over the
  cached features (computed once, on whichever device, then moved there); each epoch's examples are
  the ``n`` parallel pairs and this epoch's negatives, shuffled together by the loop. ``worst``
  negatives are mined when an epoch starts, by the current head over the whole training set (on
  every process under DDP: each holds every feature), and kept in the checkpoint, so a run resumed
  mid-epoch trains on the same negatives. Checkpoints follow ``optim.checkpoint_every`` /
  ``checkpoint_minutes`` as in every recipe; a finished run is reused, not retrained. The contrastive
  loss is per pair, so under DDP with the global batch the trained head is the one-process head.

Output folder: ``model/`` — a sentence-transformers model built only from
sentence-transformers' own modules (Transformer cut to the needed layers →
Pooling → Normalize → Dense head → Dropout → Normalize → Dense centering →
Normalize; see :func:`save_siamese_model`), so ``SentenceTransformer(path)``
loads it without ``trust_remote_code``;
``config.yaml``, ``metrics.json``, ``train_log.jsonl``, ``stage.json`` (done marker),
``checkpoints/state.pt`` (the head's last state, kept so a rerun can report without training).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Callable, Literal

import numpy as np
import torch

from xlsent.data.derived.negatives import build_negatives
from xlsent.data.derived.negatives import STRATEGIES as NEGATIVE_STRATEGIES
from xlsent.data.sets.pairs import load_train_pairs
from xlsent.encoding.encoder import Encoder, FunctionBackend
from xlsent.encoding.layer_features import LayerFeatures, parse_spec
from xlsent.losses.distances import DISTANCES
from xlsent.losses.siamese_contrastive_loss import contrastive_loss
from xlsent.models.handle import is_sentence_encoder, load_model, load_transformer_module
from xlsent.modules import CenterNormalize, SiameseHead
from xlsent.modules.hidden_layer_pooling import POOLINGS
from xlsent.modules.siamese_head import HEAD_TYPES
from xlsent.recipes._common import say
from xlsent.recipes.config import dump_config
from xlsent.recipes.config_schema import config_error
from xlsent.recipes.config_types import RecipeConfig
from xlsent.recipes.registry import RunResult
from xlsent.training.loop import finish_stage, run_loop, total_steps
from xlsent.training.processes import is_main_process, main_first, world_size
from xlsent.training.run_folder import StageFolder, config_hash, learning_optim
from xlsent.training.settings import Count, FractionFloat, NonNegFloat, PosInt, Section
from xlsent.utils.device import EXPORT_DEVICE, current_device
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_text_atomic

#: the allowed words of this recipe's own keys (``--set`` values are checked against them before anything loads)
CHOICES = {"features.pooling": POOLINGS,
           "head.type": HEAD_TYPES, "loss.distance": DISTANCES, "negatives.strategy": NEGATIVE_STRATEGIES}


class SiameseFeaturesConfig(Section):
    """``features:`` — which hidden state of the frozen encoder is cached: a layer's index (0 = the token
    table), ``last``, ``all`` (their mean) or ``auto`` (what suits the model)."""

    layer: Annotated[int, Count] | Literal["auto", "last", "all"] = "auto"
    batch_size: PosInt = 32


class SiameseHeadConfig(Section):
    dropout: FractionFloat = 0.2


class SiameseLossConfig(Section):
    margin: NonNegFloat = 1.0


class SiameseNegativesConfig(Section):
    per_positive: PosInt = 1
    average_k: PosInt = 8


#: this recipe's own sections, typed with their ranges (xlsent.recipes.config_schema)
SECTIONS = {"features": SiameseFeaturesConfig, "head": SiameseHeadConfig, "loss": SiameseLossConfig,
            "negatives": SiameseNegativesConfig}


def validate(cfg: RecipeConfig) -> None:
    """The check of a list the schema cannot type: ``output_norm`` is the paper's or unit length only."""
    if list(cfg.get("output_norm", [])) not in (["unit", "center", "unit"], ["unit"]):
        raise config_error("output_norm", cfg["output_norm"], "not an allowed normalisation",
                           "use [unit, center, unit] (the paper) or [unit]")


@dataclass
class TrainedHead:
    """A trained siamese head plus what is needed to encode with it from cached features (``RunResult.trained``)."""

    config: dict
    output: Path
    base_path: Path  # the frozen encoder's folder
    features: LayerFeatures
    spec: str
    head: SiameseHead
    center: CenterNormalize | None
    normalize_input: bool
    log: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @torch.no_grad()
    def transform(self, feats: np.ndarray) -> np.ndarray:
        x = torch.from_numpy(np.asarray(feats, dtype=np.float32))
        if self.normalize_input:
            x = torch.nn.functional.normalize(x, dim=-1)
        self.head.eval()
        y = self.head.transform(x)
        y = self.center.apply(y) if self.center is not None else torch.nn.functional.normalize(y, dim=-1)
        return y.numpy()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Embeddings of the trained model, computed from the feature cache (equal to the saved model's)."""
        return self.transform(self.features.get(texts, [self.spec])[self.spec])

    def encoder(self, **kwargs) -> Encoder:
        """The trained model as an :class:`~xlsent.encoding.encoder.Encoder` over the feature cache."""
        name = kwargs.pop("name", str(self.output / "model"))
        backend = FunctionBackend(lambda texts: self.encode(texts), name, int(self.head.dimension), normalizes=True)
        return Encoder(backend, name=name, **kwargs)


def resolve_layer(layer, handle) -> int | str:
    """``auto`` → ``last`` for a sentence encoder (a sentence-transformers folder with a pooling module:
    trained to give sentence vectors at its output), else the paper's 7 (a raw masked-language model
    such as mBERT); any other value is returned as it is."""
    if layer != "auto":
        return layer
    return "last" if is_sentence_encoder(handle.path) else 7


def feature_spec(cfg: RecipeConfig) -> str:
    return f"{cfg.features.pooling}:{cfg.features.layer}"


def base_encoder(features: LayerFeatures, **kwargs) -> Encoder:
    """The unchanged base model as an encoder; from cached features when its pipeline is mean pooling."""
    from sentence_transformers.base.modules import Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    mods = list(features.model)
    mean_pool = (
        len(mods) in (2, 3)
        and isinstance(mods[0], Transformer)
        and isinstance(mods[1], Pooling)
        and mods[1].pooling_mode == "mean"
        and (len(mods) == 2 or isinstance(mods[2], Normalize))
    )
    if mean_pool:
        def from_cache(texts: list[str]) -> np.ndarray:
            x = features.get(texts, ["mean:last"])["mean:last"]
            return x / np.linalg.norm(x, axis=1, keepdims=True) if len(mods) == 3 else x

        backend = FunctionBackend(from_cache, features.handle.name, features.handle.dimension, len(mods) == 3)
        return Encoder(backend, **kwargs)
    return Encoder.load(features.handle, **kwargs)


def _config_hash(cfg: RecipeConfig) -> str:
    return config_hash({k: (learning_optim(v) if k == "optim" else v) for k, v in cfg.items() if k != "eval"})


def _build_head(cfg: RecipeConfig, dim: int) -> SiameseHead:
    h = cfg.head
    return SiameseHead(dim, head_type=h["type"], dropout=h["dropout"], identity_init=h["identity_init"])


class _Transform(torch.nn.Module):
    """The head as the loop trains it: features in, transformed vectors out."""

    def __init__(self, head: SiameseHead) -> None:
        super().__init__()
        self.head = head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head.transform(x)


def _read_log(folder: StageFolder) -> list[dict]:
    import json

    path = folder.path / "train_log.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def train_siamese(
    cfg: RecipeConfig,
    output: str | Path,
    on_note: Callable[[str], None] | None = None,
    progress: bool = True,
    on_step: Callable[[int], None] | None = None,
) -> RunResult:
    """Train the siamese head as configured; write the model folder and run files into ``output``.

    ``on_note(text)`` receives what the run reports (data notes, resume); ``on_step(step)`` is called after
    every finished step (a test hook).
    """
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    cfg = copy.deepcopy(cfg)

    # 1. Frozen encoder and its cached features; features.layer auto → what suits the model
    handle = load_model(cfg.models.base)
    cfg.features.layer = resolve_layer(cfg.features.layer, handle)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    model_path, base = handle.path, handle.model
    lf = LayerFeatures(handle, batch_size=cfg.features.batch_size)
    spec = feature_spec(cfg)
    _, layers = parse_spec(spec, lf.num_layers)

    # 2. Training pairs, cleaned with counts, sampled
    t = cfg.train
    seed = int(cfg.optim.seed)
    pairs = load_train_pairs(t, seed)
    say(on_note, pairs.notes)
    src_texts, tgt_texts = list(pairs.dataset["src"]), list(pairs.dataset["tgt"])

    # 3. Features (computed once, cached on disk)
    with main_first():  # under several processes the main one computes and caches them, the others read the cache
        feats = lf.get(src_texts + tgt_texts, [spec], show_progress=progress)[spec]
    x_all = torch.from_numpy(feats)
    if cfg.features.normalize_input:
        x_all = torch.nn.functional.normalize(x_all, dim=-1)
    xs, xt = x_all[: len(src_texts)], x_all[len(src_texts) :]
    dim = xs.shape[1]

    # 4. Head, optimiser; the one loop (xlsent.training.loop) trains the head over the cached features
    torch.manual_seed(seed)
    head = _build_head(cfg, dim)
    folder = StageFolder(output, _config_hash(cfg), "siamese", on_note)
    n = len(src_texts)
    neg_cfg = cfg.negatives
    margin, distance = float(cfg.loss.margin), cfg.loss.distance
    n_neg = n * int(neg_cfg["per_positive"]) if neg_cfg["use_negatives"] else 0
    log: list[dict] = []
    done = folder.record() is not None and folder.load_state() is not None
    if done:  # finished earlier with this config: its head is in the kept state
        wrapped = _Transform(head)
        wrapped.load_state_dict({**wrapped.state_dict(), **folder.load_state()["trained"]})
        log = _read_log(folder)
        say(on_note, ["siamese: finished earlier with this config — reusing its head"])
    else:
        with main_first():
            folder.begin()  # another config's checkpoints or finished run are discarded, never resumed
        device = current_device()
        head.to(device)
        fs, ft = xs.to(device), xt.to(device)
        opt = torch.optim.Adam(head.parameters(), lr=float(cfg.optim.lr))
        schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda _: 1.0)  # the paper's constant rate
        negs: dict = {"epoch": -1, "src": torch.zeros(0, dtype=torch.long), "tgt": torch.zeros((0, 1), dtype=torch.long)}
        per_epoch, _ = total_steps(n + n_neg, cfg.optim, world_size())
        fixed_random = None

        def negatives_of(epoch: int) -> None:
            """This epoch's negatives, mined when it starts and held in the state (a resume mid-epoch keeps them)."""
            nonlocal fixed_random
            if negs["epoch"] == epoch or not n_neg:
                return
            if neg_cfg["strategy"] == "worst":  # the current head over the whole training set, on every process
                head.eval()
                with torch.no_grad():
                    vs, vt = head.transform(fs).float().cpu().numpy(), head.transform(ft).float().cpu().numpy()
                head.train()
                built = build_negatives("worst", tgt_texts, np.random.default_rng([seed, epoch]),
                                        neg_cfg["per_positive"], src_vecs=vs, tgt_vecs=vt)
            else:
                if fixed_random is None:  # drawn once, as the paper's fixed training set
                    fixed_random = build_negatives(neg_cfg["strategy"], tgt_texts, np.random.default_rng(seed),
                                                   neg_cfg["per_positive"], neg_cfg["average_k"])
                built = fixed_random
            negs.update(epoch=epoch, src=torch.as_tensor(built[0], dtype=torch.long),
                        tgt=torch.as_tensor(built[1], dtype=torch.long))

        def step(sel: list[int], module, accelerator) -> dict:
            """Items 0..n-1 are the parallel pairs (label 0), n.. this epoch's negatives (label 1), shuffled together."""
            neg_src, neg_tgt = negs["src"], negs["tgt"]
            sel_t = torch.as_tensor(sel)
            pos, neg = sel_t[sel_t < n], sel_t[sel_t >= n] - n
            loss = fs.new_zeros(())
            if len(pos):
                a, b = module(fs[pos]), module(ft[pos])
                loss = loss + contrastive_loss(a, b, torch.zeros(len(a), device=a.device), margin, distance, "sum")
            if len(neg):
                k = neg_tgt.shape[1]
                a = module(fs[neg_src[neg]])
                b = module(ft[neg_tgt[neg].reshape(-1)]).reshape(len(neg), k, -1)
                b = b[:, 0] if k == 1 else b
                loss = loss + contrastive_loss(a, b, torch.ones(len(neg), device=a.device), margin, distance, "sum")
            return {"loss": loss / len(sel)}

        def restore(state: dict) -> None:
            negs.update(epoch=int(state["neg_epoch"]), src=state["neg_src"], tgt=state["neg_tgt"])

        result = run_loop(folder, cfg.optim, _Transform(head), opt, schedule, n + n_neg, step, name="siamese",
                          progress=progress, on_step=on_step, on_epoch=negatives_of, load_state_fn=restore,
                          saved=[base],  # the model saved is the head over the base: the disk it needs
                          state_fn=lambda: {"neg_epoch": negs["epoch"], "neg_src": negs["src"], "neg_tgt": negs["tgt"]})
        log = result.log
        head.cpu()
        if is_main_process():  # the finished head, kept so that a rerun reports on it without training
            folder.save_state({"trained": {n: p.detach().clone() for n, p in _Transform(head).named_parameters()}})
        if log:
            say(on_note, [f"siamese: {result.steps} steps ({result.steps / per_epoch:.0f} epochs) in "
                          f"{result.seconds:.1f} s; final loss {log[-1]['loss']:.4f}"])

    # 5. Output normalisation: unit → center → unit, center from the training sentences
    head.eval()
    center = None
    if list(cfg.output_norm) == ["unit", "center", "unit"]:
        with torch.no_grad():
            center = CenterNormalize(dim).fit(head.transform(x_all))
    elif list(cfg.output_norm) != ["unit"]:
        raise XlsentError(f"output_norm must be [unit, center, unit] or [unit], not {cfg.output_norm}")

    out = TrainedHead(cfg, output, model_path, lf, spec, head, center, bool(cfg.features.normalize_input), log, pairs.notes)
    if not done:  # model, log, then the done marker; the head's state stays for reruns
        finish_stage(folder, result, lambda tmp: save_siamese_model(out, base, tmp, layers),
                     {"pairs": n, "negatives": n_neg, "final_loss": log[-1]["loss"] if log else None,
                      "data_notes": pairs.notes, "train_data": pairs.summary()}, keep_checkpoints=True)
    return RunResult(output, output / "model", notes=list(pairs.notes), details={"log": log, "trained": out})


def save_siamese_model(result: TrainedHead, base, path: Path, layers: list[int]) -> Path:
    """Write a sentence-transformers folder equivalent to :meth:`TrainedHead.encode`.

    Only sentence-transformers' own modules are used, so ``SentenceTransformer(path)``
    loads it in any process (sentence-transformers ≥ 6 refuses other module
    classes without ``trust_remote_code=True``):

    * layer k → the Transformer cut to k layers (its last hidden state is
      ``hidden_states[k]``) + ``Pooling``; all layers → ``WeightedLayerPooling``
      (uniform weights over layers 1..L) + ``Pooling``;
    * :class:`SiameseHead` → ``Dense`` layer(s) with its activation + ``Dropout``;
    * :class:`CenterNormalize` → ``Normalize`` → ``Dense`` (identity weight,
      bias −center, no activation) → ``Normalize``.
    """
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Dense, Normalize
    from sentence_transformers.sentence_transformer.modules import Dropout, Pooling, WeightedLayerPooling

    mode = result.config["features"]["pooling"]
    all_layers = len(layers) > 1
    transformer = load_transformer_module(result.base_path, max(layers), hidden_states=all_layers)
    dim = int(transformer.auto_model.config.hidden_size)
    modules: list = [transformer]
    if all_layers:
        if layers != list(range(1, max(layers) + 1)):
            raise XlsentError(f"layers {layers}: only a single layer or all layers 1..L can be exported")
        modules.append(WeightedLayerPooling(dim, num_hidden_layers=max(layers), layer_start=1))
    modules.append(Pooling(dim, pooling_mode=mode))
    if result.normalize_input:
        modules.append(Normalize())
    act = {"linear": torch.nn.Identity(), "tanh": torch.nn.Tanh(), "relu": torch.nn.ReLU(), "tanh2": torch.nn.Tanh()}
    for fc in result.head.fcs:
        modules.append(Dense(dim, dim, bias=True, activation_function=act[result.head.head_type],
                             init_weight=fc.weight.detach().clone(), init_bias=fc.bias.detach().clone()))
    modules.append(Dropout(result.head.dropout))
    modules.append(Normalize())
    if result.center is not None:
        modules.append(Dense(dim, dim, bias=True, activation_function=torch.nn.Identity(),
                             init_weight=torch.eye(dim), init_bias=-result.center.center.detach().clone()))
        modules.append(Normalize())
    st = SentenceTransformer(
        modules=modules, prompts=dict(base.prompts), default_prompt_name=base.default_prompt_name, device=EXPORT_DEVICE
    )
    st.save(str(path))  # the caller writes it atomically (StageFolder.finish)
    return path


def evaluate_after(cfg: RecipeConfig, result: RunResult, output: Path, on_note=None, no_eval: bool = False):
    """Evaluation hook: base vs trained on the held-out pool (and UDHR with ``eval.udhr``), from the feature cache."""
    from xlsent.recipes.registry import Report

    return Report(Path(output) / "model", None if no_eval else evaluate_run(result.trained, on_note),
                  title=f"held-out ({cfg.eval.pairs})")


def evaluate_run(result: TrainedHead, on_note=None):
    """Base vs trained on the held-out ``eval`` pool (reported, never used for selection): an
    :class:`~xlsent.evaluation.suite.HeldOut`, the same suite and schema as every recipe."""
    from xlsent.evaluation.suite import evaluate_held_out

    cfg = result.config
    encoders = {f"base {cfg.models.base}": base_encoder(result.features, memo=True, name=str(cfg.models.base)),
                "trained": result.encoder(memo=True)}
    held = evaluate_held_out(encoders, cfg.eval, None, int(cfg.optim.seed), on_note)
    held.recipe = "siamese"
    held.run = {"train_log": result.log, "data_notes": result.notes}
    return held
