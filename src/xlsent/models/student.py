"""Small multilingual students (Ding et al. 2022, §3.1.3): embedding bottleneck + parameter recurrence.

The student is stored as a Hugging Face **ALBERT** model, the one built-in architecture with
both ingredients, so the saved folder loads with ``SentenceTransformer(path)`` in any process
(no custom code, no ``trust_remote_code``):

* **Embedding bottleneck** — ALBERT's factorised embedding: a ``vocab × B`` lookup (plus
  position and token-type embeddings and a LayerNorm, all of size ``B``) followed by the
  ``B → H`` projection ``embedding_hidden_mapping_in``. The paper's projection has no bias:
  xlsent sets ALBERT's bias to zero and freezes it (:func:`freeze_projection_bias`), so the
  map is exactly bias-free. Where the paper's position embeddings and LayerNorm sit after the
  projection (size ``H``), ALBERT's sit before it (size ``B``); both are freshly initialised
  in the published code, so nothing pretrained is lost by the difference.
  Without a bottleneck (``b = False``) the lookup keeps the assistant's full ``vocab × H``
  table and the projection is the identity (frozen).
* **Parameter recurrence** — ALBERT with one layer group of ``M`` inner layers run
  ``repeats`` times gives exactly the order 1..M, 1..M, …; the M layers are copied from the
  assistant's first M (a BERT/XLM-R layer and an ALBERT layer compute the same function:
  with ``B = H``, an identity projection and all 12 layers, the ALBERT copy reproduces the
  assistant bit for bit — see the tests).

Stage 2 trains the embedding part alone: the same model with ``num_hidden_layers = 0``
(the layer group exists but is not run), mean-pooled, against the assistant's zero-layer
output. Stage 3 switches the recurrence on (:func:`set_repeats`).

Decision where the paper is silent: the ``vocab × B`` lookup is initialised by projecting
the assistant's word embeddings onto their top-``B`` principal directions (``init="svd"``,
ALBERT-style factorisation), and the projection with the transpose; the published code
initialises it at random (``init="random"``). The SVD start gives every token of the
250k-piece vocabulary a sensible vector, including scripts the training corpus never shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from xlsent.utils.device import EXPORT_DEVICE
from xlsent.utils.errors import XlsentError

INITS = ("svd", "svd-corpus", "random")


def _bert_parts(hf_model):
    """Embeddings module and layer list of a BERT-like encoder (BERT, XLM-R, RoBERTa, e5)."""
    emb = getattr(hf_model, "embeddings", None)
    layers = getattr(getattr(hf_model, "encoder", None), "layer", None)
    if emb is None or layers is None or not hasattr(layers[0], "attention") or not hasattr(layers[0].attention, "self"):
        raise XlsentError(
            f"the assistant is a {type(hf_model).__name__}; the multi-stage student copies BERT-style layers "
            "(BERT, XLM-R, RoBERTa, multilingual-e5) — use such a model as the assistant"
        )
    return emb, layers


def copy_bert_layer(albert_layer, bert_layer) -> None:
    """Copy one BERT encoder layer into an ALBERT layer (same computation, other parameter names)."""
    a, b = albert_layer, bert_layer
    a.attention.query.load_state_dict(b.attention.self.query.state_dict())
    a.attention.key.load_state_dict(b.attention.self.key.state_dict())
    a.attention.value.load_state_dict(b.attention.self.value.state_dict())
    a.attention.dense.load_state_dict(b.attention.output.dense.state_dict())
    a.attention.LayerNorm.load_state_dict(b.attention.output.LayerNorm.state_dict())
    a.ffn.load_state_dict(b.intermediate.dense.state_dict())
    a.ffn_output.load_state_dict(b.output.dense.state_dict())
    a.full_layer_layer_norm.load_state_dict(b.output.LayerNorm.state_dict())


def principal_directions(weight: torch.Tensor, k: int, row_weights: torch.Tensor | None = None) -> torch.Tensor:
    """Top-``k`` principal directions (``H × k``) of an embedding table ``V × H``.

    ``row_weights`` (one per token, e.g. corpus counts) weight each row's reconstruction
    error: the directions minimise ``Σ_v w_v ‖E_v − E_v P Pᵀ‖²``.
    """
    w = weight.detach().double()
    cov = w.T @ w if row_weights is None else (w * row_weights.double()[:, None]).T @ w
    vals, vecs = torch.linalg.eigh(cov)
    return vecs[:, torch.argsort(vals, descending=True)[:k]].float()


@torch.no_grad()
def albert_from_bert(
    bert,
    ru_layers: int,
    repeats: int,
    bottleneck: int | None = 128,
    init: str = "svd",
    positions: str = "fresh",
    seed: int = 0,
    token_counts: torch.Tensor | None = None,
):
    """An ``AlbertModel`` student built from a BERT-like assistant.

    Args:
        bert: the assistant's Hugging Face model (``BertModel``, ``XLMRobertaModel``…).
        ru_layers: ``M``, the assistant's first M layers form the recurring unit.
        repeats: how many times the unit runs (0 = embedding part only, for stage 2).
        bottleneck: ``B``; ``None`` keeps the assistant's full ``vocab × H`` table (b = False).
        init: ``svd``, ``svd-corpus`` or ``random`` initialisation of the ``vocab × B`` lookup
            and projection (``svd-corpus`` weights each token by ``token_counts + 1``).
        positions: ``fresh`` (the published code) or ``copy`` (projected from the assistant)
            position and token-type embeddings.
    """
    from transformers import AlbertConfig, AlbertModel

    if init not in INITS:
        raise XlsentError(f"bottleneck init '{init}': choose {', '.join(INITS)}")
    if init == "svd-corpus" and token_counts is None:
        raise XlsentError("bottleneck init 'svd-corpus' needs token counts of the training corpus")
    if positions not in ("fresh", "copy"):
        raise XlsentError(f"positions '{positions}': choose fresh or copy")
    emb, layers = _bert_parts(bert)
    c = bert.config
    if not 1 <= ru_layers <= len(layers):
        raise XlsentError(f"|RU| = {ru_layers}: the assistant has {len(layers)} layers — choose 1..{len(layers)}")
    if repeats < 0:
        raise XlsentError(f"repeats = {repeats}: must be ≥ 0")
    hidden = int(c.hidden_size)
    size = hidden if bottleneck in (None, 0) else int(bottleneck)
    if size > hidden:
        raise XlsentError(f"bottleneck size {size} is larger than the hidden size {hidden} — choose B ≤ {hidden}")
    act = c.hidden_act if isinstance(c.hidden_act, str) else "gelu"
    torch.manual_seed(seed)
    cfg = AlbertConfig(
        vocab_size=c.vocab_size, embedding_size=size, hidden_size=hidden, num_hidden_layers=repeats,
        num_hidden_groups=1, inner_group_num=ru_layers, num_attention_heads=c.num_attention_heads,
        intermediate_size=c.intermediate_size, hidden_act=act, hidden_dropout_prob=c.hidden_dropout_prob,
        attention_probs_dropout_prob=c.attention_probs_dropout_prob, max_position_embeddings=c.max_position_embeddings,
        type_vocab_size=c.type_vocab_size, layer_norm_eps=c.layer_norm_eps, pad_token_id=c.pad_token_id,
        classifier_dropout_prob=0.1, initializer_range=getattr(c, "initializer_range", 0.02),
    )
    student = AlbertModel(cfg, add_pooling_layer=False)
    e = student.embeddings
    proj = student.encoder.embedding_hidden_mapping_in
    # position offset: RoBERTa-style models start positions after the padding index
    offset = int(c.pad_token_id) + 1 if getattr(c, "model_type", "") in ("roberta", "xlm-roberta") else 0
    src_pos = emb.position_embeddings.weight[offset : offset + cfg.max_position_embeddings]
    if size == hidden:  # b = False: the assistant's table, identity projection
        e.word_embeddings.weight.copy_(emb.word_embeddings.weight)
        proj.weight.copy_(torch.eye(hidden))
        proj.weight.requires_grad_(False)
        if positions == "copy":
            e.position_embeddings.weight[: len(src_pos)].copy_(src_pos)
            e.token_type_embeddings.weight.copy_(emb.token_type_embeddings.weight)
            e.LayerNorm.load_state_dict(emb.LayerNorm.state_dict())
    elif init in ("svd", "svd-corpus"):
        weights = None if init == "svd" else token_counts.double() + 1.0
        p = principal_directions(emb.word_embeddings.weight, size, weights)  # H × B
        e.word_embeddings.weight.copy_(emb.word_embeddings.weight @ p)
        proj.weight.copy_(p)  # Linear(B → H).weight has shape H × B
        if positions == "copy":
            e.position_embeddings.weight[: len(src_pos)].copy_(src_pos @ p)
            e.token_type_embeddings.weight.copy_(emb.token_type_embeddings.weight @ p)
    proj.bias.zero_()
    for albert_layer, bert_layer in zip(student.encoder.albert_layer_groups[0].albert_layers, layers):
        copy_bert_layer(albert_layer, bert_layer)
    freeze_projection_bias(student)
    return student


def count_tokens(tokenizer, texts: list[str], vocab_size: int, batch: int = 2048) -> torch.Tensor:
    """How often each vocabulary id occurs in ``texts`` (special tokens included), for ``svd-corpus``."""
    counts = torch.zeros(vocab_size, dtype=torch.float64)
    for i in range(0, len(texts), batch):
        for ids in tokenizer(texts[i : i + batch], add_special_tokens=True, verbose=False)["input_ids"]:
            counts += torch.bincount(torch.tensor(ids, dtype=torch.long), minlength=vocab_size).double()
    return counts


def freeze_projection_bias(albert) -> None:
    """Keep ALBERT's ``B → H`` projection bias at zero and out of training (the paper's map is bias-free)."""
    proj = albert.encoder.embedding_hidden_mapping_in
    with torch.no_grad():
        proj.bias.zero_()
    proj.bias.requires_grad_(False)
    if albert.config.embedding_size == albert.config.hidden_size and torch.equal(
        proj.weight.detach(), torch.eye(albert.config.hidden_size)
    ):
        proj.weight.requires_grad_(False)  # b = False: identity projection stays the identity


def set_repeats(albert, repeats: int) -> None:
    """Run the recurring unit ``repeats`` times (stage 3 on; 0 = embeddings only)."""
    albert.config.num_hidden_layers = int(repeats)


@dataclass
class SizeReport:
    """Parameter counts in the style of Ding et al. Tables 1–2."""

    embedding: int
    encoder: int
    layer_passes: int
    unique_layers: int

    @property
    def total(self) -> int:
        return self.embedding + self.encoder

    def to_dict(self) -> dict:
        return {"embedding_params": self.embedding, "encoder_params": self.encoder, "total_params": self.total,
                "unique_layers": self.unique_layers, "layer_passes": self.layer_passes}


def size_report(hf_model) -> SizeReport:
    """Embedding vs encoder parameters and layer passes of a BERT-like or ALBERT model.

    Embedding = token, position and type tables, their LayerNorm and (ALBERT) the bottleneck
    projection; encoder = the transformer layers, each shared layer counted once.
    """
    emb = enc = 0
    for name, p in hf_model.named_parameters():
        if name.startswith("embeddings.") or "embedding_hidden_mapping_in" in name:
            emb += p.numel()
        elif name.startswith("encoder."):
            enc += p.numel()
    c = hf_model.config
    if getattr(c, "model_type", "") == "albert":
        unique = int(c.num_hidden_groups) * int(c.inner_group_num)
        passes = int(c.num_hidden_layers) * int(c.inner_group_num)
        if passes == 0:  # stage 2: the layer group is stored but not run
            enc = 0
            unique = 0
    else:
        unique = passes = int(c.num_hidden_layers)
    return SizeReport(emb, enc, passes, unique)


def build_student_st(assistant_st, ru_layers: int, repeats: int, bottleneck: int | None, init: str = "svd",
                     positions: str = "fresh", seed: int = 0, normalize: bool = True, max_seq_length: int | None = None,
                     token_counts: torch.Tensor | None = None):
    """A SentenceTransformer student (ALBERT → mean Pooling → [Normalize]) sharing the assistant's tokenizer and prompts.

    ``token_counts`` (:func:`count_tokens` of the training texts) is needed by ``init="svd-corpus"``.
    """
    import tempfile

    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling

    tr = assistant_st[0]
    albert = albert_from_bert(tr.auto_model, ru_layers, repeats, bottleneck, init, positions, seed, token_counts)
    with tempfile.TemporaryDirectory() as tmp:
        albert.save_pretrained(tmp)
        tr.tokenizer.save_pretrained(tmp)
        new = Transformer(tmp, max_seq_length=max_seq_length or tr.max_seq_length)
    freeze_projection_bias(new.auto_model)
    mods = [new, Pooling(int(albert.config.hidden_size), pooling_mode="mean")]
    if normalize:
        mods.append(Normalize())
    return SentenceTransformer(modules=mods, prompts=dict(assistant_st.prompts),
                               default_prompt_name=assistant_st.default_prompt_name, device=EXPORT_DEVICE)


def load_student(path: str | Path, repeats: int | None = None, normalize: bool | None = None):
    """Load a saved student; optionally change its repeats or add/remove the final Normalize."""
    from sentence_transformers.base.modules import Normalize

    from xlsent.models.handle import load_model

    config_kwargs = {"num_hidden_layers": int(repeats)} if repeats is not None else None
    st = load_model(path, config_kwargs=config_kwargs).model
    freeze_projection_bias(st[0].auto_model)
    has_norm = isinstance(st[-1], Normalize)
    if normalize is True and not has_norm:
        st.append(Normalize())
    elif normalize is False and has_norm:
        del st[len(st) - 1]
    return st


class _EmbeddingAligner(torch.nn.Module):
    """The student's embedding layer and projection (what trains) against the assistant's embedding layer (a
    frozen target kept outside the module, so that data parallelism sees only what trains)."""

    def __init__(self, albert, bert, offset: int, sparse: bool) -> None:
        super().__init__()
        self.embeddings = albert.embeddings
        self.proj = albert.encoder.embedding_hidden_mapping_in
        self.target = [bert.embeddings]  # a list: not a submodule
        self.offset, self.sparse = offset, sparse

    def forward(self, ids: torch.Tensor, pos: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        e, t = self.embeddings, self.target[0]
        with torch.no_grad():
            td = t.word_embeddings.weight.device
            target = t.LayerNorm(t.word_embeddings(ids.to(td)) + t.position_embeddings(pos.to(td) + self.offset)
                                 + t.token_type_embeddings.weight[0]).to(ids.device)
        words = torch.nn.functional.embedding(ids, e.word_embeddings.weight, sparse=self.sparse)
        return self.proj(e.LayerNorm(words + e.position_embeddings(pos) + e.token_type_embeddings.weight[0])), target


def align_bottleneck_tokens(albert, bert, steps: int = 1000, batch_size: int = 4096, lr: float = 3e-3,
                            max_position: int = 128, seed: int = 0, folder=None, progress: bool = False,
                            token_counts: torch.Tensor | None = None) -> list[float]:
    """Fit the bottleneck to the assistant's embedding layer token by token, over the whole vocabulary.

    For random (token, position) pairs — every token of the vocabulary is equally likely, so
    scripts the training corpus never shows are fitted too; with ``token_counts`` half of the
    pairs are drawn by corpus frequency instead — the student's embedding output
    ``W · LN_B(E_B[v] + P_B[p] + T_B[0])`` is fitted by MSE to the assistant's
    ``LN_H(E_H[v] + P_H[p] + T_H[0])``. No text is needed. xlsent's option
    (``stage2.objective: token`` or ``both``); the paper aligns mean-pooled sentences only.

    The ``steps × batch_size`` pairs are drawn once (seeded) and trained on through the one loop
    (:func:`xlsent.training.loop.run_loop`: the process's device, its shares under several processes, checkpoints
    in ``folder`` — a begun :class:`~xlsent.training.run_folder.StageFolder`, ``None`` for a scratch one).
    In one process the token table takes sparse updates (SparseAdam: a step touches only the rows it drew,
    not all V × B); under several, dense ones (DDP all-reduces dense gradients). Constant learning rate,
    no clipping. Returns the loss relative to the targets' mean square (over the first pairs): before
    training, then the mean of every 50 steps.
    """
    from xlsent.training.loop import run_loop, scratch_folder
    from xlsent.training.processes import world_size
    from xlsent.training.settings import OptimConfig

    if folder is None:
        with scratch_folder("token-alignment") as scratch:
            return align_bottleneck_tokens(albert, bert, steps, batch_size, lr, max_position, seed, scratch,
                                           progress, token_counts)
    e = albert.embeddings
    proj = albert.encoder.embedding_hidden_mapping_in
    sparse = world_size() == 1
    aligner = _EmbeddingAligner(albert, bert, 0, sparse)
    table = e.word_embeddings.weight
    bias_trains = proj.bias is not None and proj.bias.requires_grad
    if bias_trains:
        proj.bias.requires_grad_(False)  # the projection has no bias to learn (it stays zero)
    dense = [p for p in list(e.parameters()) + [proj.weight] if p.requires_grad and (p is not table or not sparse)]
    opts = [torch.optim.Adam(dense, lr=lr)]
    if table.requires_grad and sparse:
        opts.append(torch.optim.SparseAdam([table], lr=lr))
    schedule = torch.optim.lr_scheduler.LambdaLR(opts[0], lambda _: 1.0)
    g = torch.Generator().manual_seed(seed)
    n = int(steps) * int(batch_size)
    vocab = int(bert.embeddings.word_embeddings.weight.shape[0])
    aligner.offset = int(bert.config.pad_token_id) + 1 if getattr(bert.config, "model_type", "") in (
        "roberta", "xlm-roberta") else 0
    max_position = min(max_position, int(e.position_embeddings.weight.shape[0]))
    ids = torch.randint(0, vocab, (n,), generator=g, dtype=torch.int32)
    if token_counts is not None:
        ids[: n // 2] = torch.multinomial(token_counts.double(), n // 2, replacement=True, generator=g).int()
    pos = torch.randint(0, max_position, (n,), generator=g, dtype=torch.int32)
    # checkpoints by time only (every 10 minutes): on two CPU cores the default 1,000 steps take about 40 s, and a
    # checkpoint (the table and its two Adam moments, 3 × V × B floats) about a second
    optim = OptimConfig(batch_size=int(batch_size), max_steps=int(steps), seed=int(seed), max_grad_norm=0.0,
                        precision="fp32", logging_steps=50, checkpoint_every=int(steps), checkpoint_minutes=10.0)

    def step(indices: list[int], module, accelerator) -> dict:
        at = torch.from_numpy(np.asarray(indices, dtype=np.int64))  # a fifth of torch.tensor(list)'s time
        out, target = module(ids[at].long().to(accelerator.device), pos[at].long().to(accelerator.device))
        return {"loss": torch.nn.functional.mse_loss(out, target)}

    with torch.no_grad():  # where it starts, and the targets' mean square (the curve's unit), on the first pairs
        probe = torch.arange(min(n, 4 * int(batch_size)))
        out, target = aligner(ids[probe].long().to(table.device), pos[probe].long().to(table.device))
        unit = float(target.pow(2).mean())
        start = float(torch.nn.functional.mse_loss(out, target)) / unit
    try:
        result = run_loop(folder, optim, aligner, opts, schedule, n, step, name="token alignment", progress=progress)
    finally:
        if bias_trains:
            proj.bias.requires_grad_(True)
        albert.eval()
    return [start] + [e["loss"] / unit for e in result.log]
