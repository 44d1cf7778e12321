"""Word-gloss SBERT ("Finetuned-SBERT", Manafi 2025, §3.2.2).

Manafi, S. (2025). *Challenges of Cross-Lingual Transfer from High- to Low-Resource
Languages* (dissertation), §3.2.2 "Fine-tuned SBERT model".

1. **Word mapping layer**: every low-resource word is replaced by its dictionary translation
   (:mod:`xlsent.data.formats.dictionary`: a TSV, a Debian FreeDict dictionary, or a dictionary
   induced from the training pairs with eflomal);
2. **sentence transformer**: an English SBERT (default all-MiniLM-L6-v2) is fine-tuned with the
   soft-margin triplet loss of Eq. 3.1 on (gloss(anchor), positive, negative) triplets.

Output: ``model/`` is the fine-tuned English sentence-transformer (``SentenceTransformer(path)``
loads it); the dictionary is saved inside it as ``gloss_dictionary.tsv`` with
``xlsent_gloss.json``. Low-resource text must be glossed before encoding — xlsent does this
everywhere it encodes: :class:`xlsent.encoding.encoder.Encoder` finds the dictionary in the model
folder (:mod:`xlsent.models.gloss`) and glosses every non-English text, so ``embed``, ``eval``,
``mine`` and the evaluation after training agree; ``xlsent gloss -m MODEL`` writes a glossed file;
Python code uses ``Encoder.load(MODEL).encode(texts, lang)``. The gloss cannot live inside the
tokenizer: a shared tokenizer would also "translate" English words that happen to be
low-resource headwords (Chichewa "a", "ndi"…).

**Default: triplet loss + KD to the SBERT's frozen self.** The paper's loss for this model is
Eq. 3.1 alone (5 epochs over every pair, batch 16, max length 128) — ``--preset paper``. At the
CPU budget (190 steps of 16 triplets, ``--preset small`` with lr 5e-5) that loss *lowers* held-out
New-Testament ny→en P@1 on glossed input (``docs/experiments/siamese-and-recipe-defaults.md``): the
English SBERT drifts. The default adds Eq. 3.2 against the frozen original with λ = 0.9 (triplet-kd's
value; the teacher is the SBERT itself, so no second model is needed) and lr 2e-5, and raises NT P@1 in
both directions (``docs/results.md``, "Every recipe's default"). UDHR is not reported by default: the
dictionary is induced for one language (``eval.udhr``).

Decisions where the paper is silent: unknown words are kept; the triplet margin α = 1.0 as in
triplet KD; the KD default above.

``loss.matryoshka_dims`` (e.g. ``384,256,128,64``; off by default, not measured for this recipe — issue 50 measured
adapt): sentence-transformers' ``MatryoshkaLoss`` around the loss, every term at every width, the frozen model's
targets cut and renormalised like the student's vectors (:mod:`xlsent.losses.matryoshka`); the model folder records
the widths (``xlsent models info``).
"""

from __future__ import annotations

import copy
from pathlib import Path

from xlsent.data.derived.triplets import STRATEGIES as NEGATIVE_STRATEGIES
from xlsent.data.formats.dictionary import BilingualDictionary
from xlsent.data.formats.dictionary import SYMMETRIZE, UNKNOWN
from xlsent.losses.distances import DISTANCES
from xlsent.losses.matryoshka import matryoshka_widths
from xlsent.models.gloss import save_gloss
from xlsent.models.handle import load_model
from xlsent.recipes._common import say, teacher_targets
from xlsent.recipes.config import dump_config
from xlsent.recipes.config_types import RecipeConfig
from xlsent.recipes.registry import RunResult
from xlsent.recipes.triplet_kd import TripletLoss, TripletNegatives
from xlsent.training.run_folder import StageFolder, config_hash, learning_optim
from xlsent.training.settings import NonNegInt, Section, UnitFloat
from xlsent.training.trainer import train_stage
from xlsent.utils.errors import XlsentError
from xlsent.utils.io import write_json_atomic, write_text_atomic

#: the allowed words of this recipe's own keys (``--set`` values are checked against them before anything loads)
CHOICES = {"loss.distance": DISTANCES, "negatives.strategy": NEGATIVE_STRATEGIES,
           "dictionary.symmetrize": SYMMETRIZE, "dictionary.unknown": UNKNOWN}
FILES = ("dictionary.tsv", "dictionary.freedict")


class GlossDictionary(Section):
    """``dictionary:`` — how the word alignments become a dictionary: a translation seen at least ``min_count``
    times and taking at least ``min_share`` of its word's alignments."""

    min_count: NonNegInt = 2
    min_share: UnitFloat = 0.1


#: this recipe's own sections, typed with their ranges (its loss and negatives are triplet-kd's)
SECTIONS = {"loss": TripletLoss, "negatives": TripletNegatives, "dictionary": GlossDictionary}
#: the model card's note on how to use the model (xlsent.report.model_card)
CARD_NOTE = ("Low-resource text must be glossed word by word first: xlsent's encoder does it from the dictionary in "
             "this folder (`gloss_dictionary.tsv`); elsewhere run `xlsent gloss -m MODEL`.")  # this recipe's keys that name files (checked before anything loads)


def build_dictionary(cfg: RecipeConfig, lrl: list[str], english: list[str]) -> BilingualDictionary:
    d = cfg.dictionary
    if d["tsv"]:
        return BilingualDictionary.from_tsv(d["tsv"])
    if d["freedict"]:
        return BilingualDictionary.from_freedict(d["freedict"])
    return BilingualDictionary.induce(lrl, english, int(d["min_count"]), float(d["min_share"]), str(d["symmetrize"]))


def _run_dictionary(folder: StageFolder, cfg: RecipeConfig, lrl: list[str], english: list[str]) -> BilingualDictionary:
    """The run's dictionary, written into its checkpoint folder before training starts, so that a resumed
    run glosses with the dictionary its checkpoints were trained on (eflomal cannot be seeded: inducing
    again would give a slightly different one)."""
    import json

    folder.begin()  # discards another config's checkpoints (and their dictionary)
    saved = folder.checkpoints / "dictionary.json"
    if saved.exists():
        rec = json.loads(saved.read_text(encoding="utf-8"))
        return BilingualDictionary(rec["entries"], rec["source"],
                                   rec["notes"] + [f"dictionary reused from {saved} (resuming this run)"])
    dictionary = build_dictionary(cfg, lrl, english)
    write_json_atomic(saved, {"entries": dictionary.entries, "source": dictionary.source, "notes": dictionary.notes})
    return dictionary


def evaluate_after(cfg: RecipeConfig, result: RunResult, output: Path, on_note=None, no_eval: bool = False):
    """Evaluation hook: the base SBERT and the fine-tuned one, both on glossed low-resource input."""
    from xlsent.models.gloss import load_gloss
    from xlsent.recipes._common import evaluate_named
    from xlsent.recipes.registry import Report

    model = result.model_path
    base = f"base {cfg.models.student} (glossed input)"
    metrics = None if no_eval else evaluate_named(cfg, {base: cfg.models.student, "gloss": model},
                                                  gloss=load_gloss(model), on_note=on_note)
    return Report(model, metrics, title="word-gloss SBERT, held-out (low-resource side glossed)",
                  usage=f"low-resource text is glossed by xlsent's encoder; elsewhere gloss it first: xlsent gloss -m {model}")


def train_gloss(cfg: RecipeConfig, output: str | Path, on_note=None, progress: bool = True) -> RunResult:
    from datasets import Dataset

    from xlsent.data.derived.triplets import build_triplets
    from xlsent.data.sets.pairs import load_train_pairs
    from xlsent.losses import SoftMarginTripletDistillLoss

    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    cfg = copy.deepcopy(cfg)
    write_text_atomic(output / "config.yaml", dump_config(cfg))
    folder = StageFolder(output, config_hash(cfg.models, cfg.train, cfg.dictionary, cfg.negatives, cfg.loss,
                                             learning_optim(cfg.optim)), on_note=on_note)
    if folder.skip_if_done():
        return RunResult(output, folder.model_dir)
    t, seed = cfg.train, int(cfg.optim.seed)
    pairs = load_train_pairs(t, seed)
    ds = pairs.dataset
    dictionary = _run_dictionary(folder, cfg, pairs.other, pairs.english)
    cov = dictionary.coverage(pairs.other)
    notes = pairs.notes + dictionary.notes + [f"dictionary covers {cov:.1%} of the training words"]
    if len(dictionary) == 0:
        raise XlsentError("the bilingual dictionary is empty — give dictionary.tsv or more parallel pairs")
    sbert_handle = load_model(cfg.models.student, max_seq_length=cfg.models.max_seq_length)
    sbert = sbert_handle.model
    triplets, rep = build_triplets(ds, cfg.negatives.strategy, seed, teacher=sbert,
                                   relative_margin=float(cfg.negatives.relative_margin))
    notes += rep.lines()
    say(on_note, notes)
    unknown = cfg.dictionary.unknown
    cols = {"anchor": [dictionary.gloss(a, unknown) for a in triplets["anchor"]],
            "positive": list(triplets["positive"]), "negative": list(triplets["negative"])}
    lam = float(cfg.loss.kd_weight)
    if lam:
        import numpy as np

        tp = teacher_targets(sbert_handle, cols["positive"] + cols["negative"], progress)
        n = len(cols["positive"])
        cols["label"] = np.stack([tp[:n], tp[n:]], axis=1).tolist()
    loss = SoftMarginTripletDistillLoss(sbert, float(cfg.loss.margin), lam, cfg.loss.distance)
    # the dictionary goes inside the model folder before it is moved into place and marked done
    train_stage(sbert, Dataset.from_dict(cols), loss, cfg.optim, folder, progress, "word-gloss SBERT",
                loss_wrapper=matryoshka_widths(cfg.loss), extra_record={"data_notes": notes, "train_data": pairs.summary()}, finalize=lambda tmp: save_gloss(tmp, dictionary, unknown))
    return RunResult(output, folder.model_dir)
