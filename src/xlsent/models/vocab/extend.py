"""Vocabulary extension: new pieces for a script the model's tokenizer cannot read, and rows for them.

A multilingual tokenizer maps every character it never saw to ``<unk>`` (multilingual-e5-small: Deseret,
many Brahmic and African scripts' rarer letters …): a text in such a script reaches the model as a row of
``<unk>`` pieces, and no amount of training on pairs can tell two of its sentences apart. ``xlsent models
extend-vocab`` (:func:`xlsent.extend_vocab`) adds pieces for it:

1. **Pieces are learnt from the user's text** with a Unigram model like the base tokenizer's — the
   ``tokenizers`` library's ``UnigramTrainer``, run with the base tokenizer's own normaliser and pre-tokeniser
   (so its pieces carry the same word-start mark ``▁``).
2. **Only pieces the base tokenizer cannot represent are kept**: a learnt piece is kept when one of its
   characters is one the base tokenizer maps to ``<unk>``. Every such character of the text is added as a
   single-character piece first (the most frequent first), so no character of the text stays ``<unk>``; then
   the longer pieces by the learnt score, up to ``pieces`` in all. A piece made of characters the base
   tokenizer knows is never added, so **text in the scripts the model already reads is segmented exactly as
   before** and gets the same vectors.
3. **They are appended to the Unigram model** with their learnt log-probabilities as scores, so the tokenizer
   uses them when it segments (the ids after the last old piece; a token table longer than the tokenizer, as
   e5-small's padded 250,037 rows for 250,002 pieces, loses only its unreachable padding rows).
4. **New rows are initialised from known rows where there are any** — in the spirit of FOCUS (Dobler & de Melo
   2023) and of Fast Vocabulary Transfer (Gee et al. 2022), which build a new piece's row from the rows of
   pieces the model knows: a new piece is split by the *base* tokenizer, and its row is the mean of the rows of
   the known pieces in that split (the bare word-start mark ``▁`` and ``<unk>`` left out), each weighted by the
   number of characters it covers. FOCUS's auxiliary fastText similarities are not used (no such model is
   offline). **A piece with no known part** — every piece of a wholly new script — gets the **default**: the
   token table's per-dimension mean plus Gaussian noise with the table's per-dimension standard deviation
   (a diagonal version of Hugging Face's ``mean_resizing``), seeded; the noise is as large as the spread of
   real rows so that the new pieces start distinct, which training needs to tell them apart.
5. The folder is a normal sentence-transformers model (``SentenceTransformer(path)`` loads it) with the
   record of what was added in ``xlsent_added_pieces.json`` (each piece, its id, score and how its row was
   initialised) and the added id range in the transformer's ``config.json`` (``xlsent_added_rows``: first id,
   count), which travels with every model trained from it.

**Training the new rows.** With ``models.freeze_word_embeddings`` (``xlsent train adapt``'s default) the
token table is frozen; for a model with added rows only the *old* rows are: the table is replaced while it
trains by :class:`AddedRowsEmbedding` (the old rows a frozen tensor, the added rows a trainable one), which
saves and loads as the one ordinary ``weight`` — so checkpoints, the chosen step and the saved model are a
plain table, and a step costs the added rows' gradient only, not the 96M-entry table's.

**The added rows learn 300 times faster** (``ADDED_ROWS_LR_SCALE``): they start random while the rest of the model
starts trained, and at adapt's learning rate (13 steps at 8e-5) they barely moved against the table's spread —
untrained. The table holds them divided by 300 and multiplies them back in its forward pass: under Adam
the same as a 300 times larger learning rate for them alone, with no parameter group of their own in the trainer.
Chosen on development data only (``bible-en-ny:dev-train`` → ``bible-en-ny:dev``, Chichewa in Deseret letters, 500
pairs): of 1×, 30× and 300×, only 300× retrieved better than adapt without the added pieces in both directions;
300 is the largest multiple tried (figures in ``docs/experiments/extend-vocab.md``).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from xlsent.models.vocab.tokenizer import WORD_START, tokenizer_with
from xlsent.utils.errors import XlsentError, named

ADDED_FILE = "xlsent_added_pieces.json"
CONFIG_KEY = "xlsent_added_rows"  # in the transformer's config.json: {"first": id, "count": n}
DEFAULT_PIECES = 2000
ADDED_ROWS_LR_SCALE = 300.0  # the added rows' learning rate, as a multiple of the model's (module docstring)
MIN_LINES = 2
#: the source :func:`check_texts` names for texts given in Python as a list (not a file)
INIT_METHOD = ("sub-pieces: the mean of the rows of the known base pieces the base tokenizer splits the new piece "
               "into (no bare '▁', no <unk>), weighted by characters covered; default (no known part): the token "
               "table's per-dimension mean + Gaussian noise with its per-dimension standard deviation, seeded")


@dataclass
class VocabExtension:
    """What :func:`xlsent.extend_vocab` added, and where the extended model is."""

    output: Path  # the extended model's folder
    added: int  # pieces added (= new token-table rows)
    first_id: int  # id of the first added piece
    new_characters: int  # characters of the text the base tokenizer mapped to <unk>, each now a piece
    unk_rate_before: float  # share of the text's pieces that were <unk> with the base tokenizer
    unk_rate_after: float  # …and with the extended one
    pieces_per_word_before: float
    pieces_per_word_after: float
    from_subpieces: int  # rows initialised from known sub-pieces
    default_init: int  # rows initialised by the default (mean + noise)
    texts: int  # lines of text the pieces were learnt from
    pieces: list = field(default_factory=list, repr=False)  # [piece, id, score, init] for each added piece

    @property
    def path(self) -> Path:
        """Deprecated: :attr:`output` (the old name, until xlsent 0.3)."""
        import warnings

        warnings.warn("VocabExtension.path is renamed .output (the old name goes in xlsent 0.3)", DeprecationWarning,
                      stacklevel=2)
        return self.output

    def to_dict(self) -> dict:
        d = asdict(self)
        d["output"] = str(self.output)
        return d


def check_pieces(pieces: int) -> int:
    """One line for a ``pieces`` that adds nothing."""
    if int(pieces) < 1:
        raise XlsentError(f"{named('pieces', pieces)}: must be ≥ 1 — the most new pieces to add "
                          f"(e.g. pieces={DEFAULT_PIECES}, extend-vocab's default)")
    return int(pieces)


def check_texts(lines: list[str], source: str | None = None) -> list[str]:
    """The non-blank lines read from the file ``source`` (None: texts given in Python); one line for too little
    text."""
    texts = [t.strip() for t in lines if t.strip()]
    given = "texts" if source is None else named("texts", source)
    if not texts:
        raise XlsentError(f"{given}: no text — give text in the script to add, one sentence a line "
                          "(a few thousand lines)")
    if len(texts) < MIN_LINES:
        raise XlsentError(f"{given}: only {len(texts)} line of text — new pieces are learnt from your "
                          f"text: give at least {MIN_LINES} lines, one sentence a line (a few thousand is better)")
    return texts


def unigram_json(tokenizer_json: dict, where: str) -> dict:
    """``tokenizer_json`` if its model is a Unigram (sentencepiece) one; else one line."""
    kind = (tokenizer_json.get("model") or {}).get("type")
    if kind != "Unigram":
        raise XlsentError(f"{where}: the tokenizer is a {kind} model — extend-vocab adds pieces to a Unigram "
                          "(sentencepiece) tokenizer, as e5-small's, XLM-R's or LaBSE's")
    if tokenizer_json["model"].get("unk_id") is None:
        raise XlsentError(f"{where}: the Unigram tokenizer has no <unk> piece — nothing is unknown to it")
    pieces = len(tokenizer_json["model"]["vocab"])
    beyond = sorted(int(t["id"]) for t in tokenizer_json.get("added_tokens", []) if int(t["id"]) >= pieces)
    if beyond:
        raise XlsentError(f"{where}: added tokens with ids {beyond} past the tokenizer's {pieces} pieces — "
                          "new pieces would take their ids; cannot extend this tokenizer")
    return tokenizer_json


def folder_tokenizer_json(model_path: str | Path) -> dict:
    """The ``tokenizer.json`` of a model folder (its Transformer module's), checked, without loading the model."""
    from xlsent.models.handle import transformer_subfolder

    path = Path(model_path) / transformer_subfolder(model_path) / "tokenizer.json"
    if not path.is_file():
        raise XlsentError(f"{model_path}: no tokenizer.json — extend-vocab needs a fast Unigram (sentencepiece) "
                          "tokenizer, as e5-small's")
    return unigram_json(json.loads(path.read_text(encoding="utf-8")), str(model_path))


def _tokenizer(tokenizer_json: dict):
    from tokenizers import Tokenizer

    return Tokenizer.from_str(json.dumps(tokenizer_json, ensure_ascii=False))


def unknown_characters(tokenizer_json: dict, texts: list[str]) -> Counter:
    """Characters of ``texts`` (as the tokenizer normalises them) that its model maps to ``<unk>``, with counts."""
    base = _tokenizer(tokenizer_json)
    model = tokenizer_json.get("model") or {}
    unk = model.get("unk_id")  # a Unigram model's; a WordPiece or BPE model names its unknown token
    if unk is None and model.get("unk_token"):
        unk = base.token_to_id(model["unk_token"])
    if unk is None:
        return Counter()
    unk = int(unk)
    counts: Counter = Counter()
    for t in texts:
        counts.update(base.normalizer.normalize_str(t) if base.normalizer is not None else t)
    return Counter({c: n for c, n in counts.items() if not c.isspace() and c != WORD_START
                    and any(tok.id == unk for tok in base.model.tokenize(c))})


def learn_pieces(tokenizer_json: dict, texts: list[str], limit: int) -> tuple[list[tuple[str, float]], Counter]:
    """New pieces ``[(piece, score)]`` (at most ``limit``, single characters first) and the unknown characters."""
    from tokenizers import Tokenizer, models, trainers

    unknown = unknown_characters(tokenizer_json, texts)
    if not unknown:
        raise XlsentError("the model's tokenizer already reads every character of the text given as texts= "
                          "(no <unk>) — "
                          "extend-vocab is for a script it cannot read; train with xlsent train adapt instead")
    base = _tokenizer(tokenizer_json)
    learner = Tokenizer(models.Unigram())
    learner.normalizer = base.normalizer
    learner.pre_tokenizer = base.pre_tokenizer
    alphabet = len({c for t in texts for c in t})
    trainer = trainers.UnigramTrainer(vocab_size=max(2 * limit + alphabet, 8) + 1, special_tokens=["<unk>"],
                                      unk_token="<unk>", max_piece_length=16, show_progress=False)
    saved = os.environ.get("TOKENIZERS_PARALLELISM")
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # one thread (its hash order still varies the last decimals)
    try:
        learner.train_from_iterator(texts, trainer=trainer)
    finally:
        if saved is None:
            os.environ.pop("TOKENIZERS_PARALLELISM", None)
        else:
            os.environ["TOKENIZERS_PARALLELISM"] = saved
    learnt = [(p, float(s)) for p, s in json.loads(learner.to_str())["model"]["vocab"] if p != "<unk>"]
    old = {p for p, _ in tokenizer_json["model"]["vocab"]}
    floor = min((s for _, s in learnt), default=-10.0) - 1.0
    score = dict(learnt)
    singles = [(c, score.get(c, floor)) for c, _ in unknown.most_common() if c not in old]
    longer = sorted(((p, s) for p, s in learnt if len(p) > 1 and p not in old and any(c in unknown for c in p)),
                    key=lambda x: (-round(x[1], 2), x[0]))  # the trainer's scores vary in the 4th decimal
    return (singles + longer)[:limit], unknown


def extended_tokenizer_json(tokenizer_json: dict, new: list[tuple[str, float]]) -> dict:
    """``tokenizer_json`` with ``new`` pieces appended to its Unigram vocabulary (ids after the last piece)."""
    out = json.loads(json.dumps(tokenizer_json))
    out["model"]["vocab"] = list(out["model"]["vocab"]) + [[p, float(s)] for p, s in new]
    return out


def initial_rows(weight, tokenizer_json: dict, new: list[tuple[str, float]], seed: int = 0):
    """Rows for ``new`` pieces (the module docstring's method) and, per piece, ``subpieces`` or ``default``."""
    base = _tokenizer(tokenizer_json)
    unk = int(tokenizer_json["model"]["unk_id"])
    old = weight.detach().float()
    mean, std = old.mean(0), old.std(0)
    gen = torch.Generator().manual_seed(int(seed))
    rows, kinds = [], []
    for piece, _ in new:
        parts = [(t.id, len(t.value.replace(WORD_START, ""))) for t in base.model.tokenize(piece)
                 if t.id != unk and t.value.replace(WORD_START, "")]
        if parts:
            w = torch.tensor([n for _, n in parts], dtype=torch.float32)
            rows.append((old[[i for i, _ in parts]] * w[:, None]).sum(0) / w.sum())
            kinds.append("subpieces")
        else:
            rows.append(mean + std * torch.randn(old.shape[1], generator=gen))
            kinds.append("default")
    out = torch.stack(rows) if rows else old.new_zeros((0, old.shape[1]))
    return out.to(weight.dtype), kinds


def extend_vocabulary(model, texts: list[str], pieces: int = DEFAULT_PIECES, seed: int = 0) -> VocabExtension:
    """Add pieces for ``texts`` to ``model`` (a loaded SentenceTransformer) in place: tokenizer, token table and
    config (the module docstring). Returns what was added (``path`` is left empty for the caller)."""
    from xlsent.data.sets.stats import tokenizer_stats

    module = model[0]
    tok = module.tokenizer
    if tok is None or not getattr(tok, "is_fast", False):
        raise XlsentError("extend-vocab needs a fast tokenizer (tokenizer.json)")
    full = unigram_json(json.loads(tok.backend_tokenizer.to_str()), "the model")
    new, unknown = learn_pieces(full, texts, check_pieces(pieces))
    auto = module.auto_model
    emb = auto.get_input_embeddings()
    rows, first = int(emb.weight.shape[0]), len(full["model"]["vocab"])
    if rows < first:
        raise XlsentError(f"the token table has {rows} rows but the tokenizer {first} pieces — cannot extend a "
                          "model whose table and tokenizer disagree")
    sample = texts[:5000]
    before = tokenizer_stats(tok, sample)
    init, kinds = initial_rows(emb.weight[:first], full, new, seed)
    table = torch.nn.Embedding(first + len(new), emb.weight.shape[1], padding_idx=emb.padding_idx,
                               device=emb.weight.device, dtype=emb.weight.dtype)
    with torch.no_grad():
        table.weight[:first].copy_(emb.weight[:first])
        table.weight[first:].copy_(init.to(emb.weight.device))
    auto.set_input_embeddings(table)
    auto.config.vocab_size = first + len(new)
    previous = getattr(auto.config, CONFIG_KEY, None) or {}
    start = int(previous["first"]) if previous else first  # a second extension: every added row stays new
    setattr(auto.config, CONFIG_KEY, {"first": start, "count": first + len(new) - start})
    module.processor = tokenizer_with(tok, extended_tokenizer_json(full, new))
    after = tokenizer_stats(module.tokenizer, sample)
    return VocabExtension(
        output=Path(), added=len(new), first_id=first, new_characters=len(unknown),
        unk_rate_before=round(before["unk_rate"], 6), unk_rate_after=round(after["unk_rate"], 6),
        pieces_per_word_before=round(before["pieces_per_word"], 4),
        pieces_per_word_after=round(after["pieces_per_word"], 4),
        from_subpieces=kinds.count("subpieces"), default_init=kinds.count("default"), texts=len(texts),
        pieces=[[p, first + i, round(s, 6), k] for i, ((p, s), k) in enumerate(zip(new, kinds))])


def write_record(folder: Path, ext: VocabExtension, base: str, source: str | None, seed: int) -> None:
    """The extension's record in the folder; ``source``: the texts' file (None: texts given in Python)."""
    from xlsent.utils.io import write_text_atomic

    record = {"base_model": base, "texts": "texts given in Python" if source is None else source, "seed": int(seed), "init_method": INIT_METHOD,
              **{k: v for k, v in ext.to_dict().items() if k != "output"}}
    write_text_atomic(folder / ADDED_FILE, json.dumps(record, ensure_ascii=False, indent=1) + "\n")


# ---- training the added rows only ---------------------------------------------------------------------------


def added_rows(config) -> tuple[int, int] | None:
    """``(first id, count)`` of the rows extend-vocab added to a model (its config's record), or None."""
    rec = getattr(config, CONFIG_KEY, None)
    if not rec:
        return None
    return int(rec["first"]), int(rec["count"])


class AddedRowsEmbedding(torch.nn.Module):
    """A token table whose rows before ``first`` are frozen and whose rows from ``first`` on train.

    It looks up ids below ``first`` in a frozen tensor and the others in a trainable one, so a step computes
    the added rows' gradient only. It saves as, and loads from, the one ``weight`` of an ordinary
    ``nn.Embedding`` (the trainable rows also load from their own key, ``added``): a checkpoint or saved folder
    holds a plain table."""

    def __init__(self, weight, first: int, padding_idx: int | None = None, lr_scale: float = 1.0):
        super().__init__()
        self.first = int(first)
        self.padding_idx = padding_idx
        self.embedding_dim = int(weight.shape[1])
        self.num_embeddings = int(weight.shape[0])
        self.lr_scale = float(lr_scale)
        self.frozen = torch.nn.Parameter(weight[: self.first].detach().clone(), requires_grad=False)
        self.added = torch.nn.Parameter(weight[self.first :].detach() / self.lr_scale, requires_grad=True)

    def _added_rows(self):
        return self.added * self.lr_scale if self.lr_scale != 1.0 else self.added

    @property
    def weight(self):
        return torch.cat([self.frozen, self._added_rows()])

    def forward(self, ids):
        import torch.nn.functional as F

        new = ids >= self.first
        old = F.embedding(ids.clamp(max=self.first - 1), self.frozen, self.padding_idx)
        if not bool(new.any()):
            return old
        added = F.embedding((ids - self.first).clamp(min=0), self._added_rows())
        return torch.where(new.unsqueeze(-1), added, old)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        w = self.weight
        destination[prefix + "weight"] = w if keep_vars else w.detach()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        found = False
        with torch.no_grad():
            if prefix + "weight" in state_dict:
                w = state_dict[prefix + "weight"]
                self.frozen.copy_(w[: self.first])
                self.added.copy_(w[self.first :] / self.lr_scale)
                found = True
            if prefix + "added" in state_dict:  # the parameter itself (adapt's chosen step), already scaled
                self.added.copy_(state_dict[prefix + "added"])
                found = True
            if prefix + "frozen" in state_dict:
                self.frozen.copy_(state_dict[prefix + "frozen"])
        if not found and strict:
            missing_keys.append(prefix + "weight")

    def extra_repr(self) -> str:
        return (f"{self.num_embeddings}, {self.embedding_dim}, trainable from row {self.first}"
                + (f" at {self.lr_scale:g}× the learning rate" if self.lr_scale != 1.0 else ""))


def freeze_old_rows(auto_model) -> int | None:
    """Freeze the rows of a model's token table that extend-vocab did not add and keep the added ones trainable
    (:class:`AddedRowsEmbedding`); returns the frozen count, or None for a model without added rows."""
    span = added_rows(auto_model.config)
    if span is None:
        return None
    emb = auto_model.get_input_embeddings()
    if isinstance(emb, AddedRowsEmbedding):
        return emb.frozen.numel()
    first = span[0]
    if not 0 < first < emb.weight.shape[0]:
        return None
    table = AddedRowsEmbedding(emb.weight, first, getattr(emb, "padding_idx", None), ADDED_ROWS_LR_SCALE)
    auto_model.set_input_embeddings(table)
    return table.frozen.numel()
