"""Model cards: the ``README.md`` of every model xlsent trains, filled in from its run folder.

sentence-transformers writes a generic card ("Unknown" base model, data and language). After a run,
:func:`write_model_card` replaces it with what the run knows: the recipe and its paper, the base
model(s) with their sources and licences, the training data with counts and languages (from the
done marker, ``stage.json``), the held-out metrics with their 95% bootstrap CIs (``metrics.json``,
schema ``xlsent.metrics/2``), the licences and the command that reproduces the run. Hugging Face
metadata (``base_model``, ``language``, ``license``, ``tags``) goes in the YAML front matter.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from xlsent.utils.io import write_text_atomic

#: the ``models:`` entries every recipe config may name, in card order, with their role
ROLES = {"base": "base (frozen encoder)", "student": "student (initialisation)",
         "assistant": "teaching assistant (initialisation)", "teacher": "teacher (frozen)"}


def _get(cfg: dict, dotted: str):
    for part in dotted.split("."):
        cfg = cfg.get(part, {}) if isinstance(cfg, dict) else {}
    return cfg or None


def _model_row(name: str) -> tuple[str, str]:
    from xlsent.models.registry import REGISTRY

    if name in REGISTRY:
        r = REGISTRY[name]
        return f"`{name}` — {r.description}", r.source
    return f"`{name}` (local folder)", "see that model's own card"


def _ci(x: dict) -> str:
    ci = x.get("ci95", {}).get("p@1")
    return f"{x['p@1']:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _metrics_section(metrics: dict, chose: dict | None = None) -> list[str]:
    """``chose``: the run's step selection, when this pool also chose the step (adapt's held-out pairs)."""
    pool = metrics["eval_pool"]
    if "test" in pool:  # a tagger or a title selector: scored on its task
        lines = ["## Held-out evaluation", "", f"Test: `{pool['test']}` ({pool.get('labels', 'user file')} labels), "
                 f"{pool['n']} examples; reported only, never used to choose a checkpoint. 95% bootstrap CIs.", "",
                 "| model | score [95% CI] |", "|---|---|"]
        for name, m in metrics["models"].items():
            for key, part in (("micro_f1", m.get("tagging")), ("accuracy", m.get("tagging")), ("accuracy", m.get("choice"))):
                got = (part or {}).get(key)
                if got is not None:
                    value, ci = (got["value"], got["ci95"]) if isinstance(got, dict) else (got, part.get("ci95"))
                    lines.append(f"| {name} | {key.replace('_', ' ')} {value:.3f}"
                                 + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "") + " |")
        return lines + [""]
    use = (f"the same held-out pairs chose the step ({chose['chosen_step']}), so its figures are not independent "
           "of that choice" if chose else "reported only, never used to choose a checkpoint")
    lines = ["## Held-out evaluation", "",
             f"Pool: `{pool['pairs']}`, {pool['n']} pairs (sample seed {pool['sample_seed']}); {use}. "
             "P@1 with 95% bootstrap CIs (tie-aware).", "",
             "| model | src→tgt P@1 [95% CI] | tgt→src P@1 [95% CI] | triplet acc (cos) | UDHR mean xx→en | UDHR mean en→xx |",
             "|---|---|---|---|---|---|"]
    for name, m in metrics["models"].items():
        r = m["retrieval"]
        trip = m.get("triplets", {}).get("accuracy", {}).get("cosine", {}).get("accuracy")
        u = m.get("udhr", {}).get("mean")
        lines.append(f"| {name} | {_ci(r['src2tgt'])} | {_ci(r['tgt2src'])} | "
                     f"{'—' if trip is None else f'{trip:.3f}'} | {'—' if not u else _ci(u['tgt2src'])} | "
                     f"{'—' if not u else _ci(u['src2tgt'])} |")
    return lines + [""]


def _data_licence(spec: str) -> str:
    """The licence of the training pairs: a bundled source's, or each bundled source's of several
    (``NAME: licence · …``, a user's file as "your file's"); "" for a user's file alone."""
    from xlsent.data.sets.bundled import licence_of
    from xlsent.data.sets.pairs import split_sources
    from xlsent.utils.errors import XlsentError

    try:
        parts = split_sources(spec)
    except XlsentError:  # an empty source between commas: no licence line rather than no card
        parts = [spec]
    if len(parts) == 1:
        return licence_of(parts[0])
    lics = [(p, licence_of(p)) for p in parts]
    if not any(lic for _, lic in lics):
        return ""
    return " · ".join(f"{p}: {lic or 'the licence of your file'}" for p, lic in lics)


def render_model_card(recipe, cfg: dict, record: dict | None, metrics: dict | None, run_dir: Path) -> str:
    """The card's Markdown for a run of ``recipe`` (:class:`~xlsent.recipes.registry.Recipe`)."""
    models = cfg.get("models", {})
    bases = [(key, models[key]) for key in ROLES if isinstance(models.get(key), str)]
    bases = [(k, str(v)) for k, v in bases if v]
    data = (record or {}).get("train_data") or {}
    langs = data.get("languages") or []
    eval_pairs = _get(cfg, "eval.pairs")
    task_head = {"tagger": ("token-classification", "AutoModelForTokenClassification"),
                 "choice": ("multiple-choice", "AutoModelForMultipleChoice")}.get(recipe.output)
    meta = {"library_name": "transformers" if task_head else "sentence-transformers",
            "pipeline_tag": task_head[0] if task_head else "sentence-similarity",
            "tags": ["sentence-transformers", "xlsent", recipe.name, "cross-lingual"],
            "base_model": bases[0][1] if bases else None, "language": langs or None,
            "license": "mit" if bases and all(b in ("e5-small", "minilm-en") for _, b in bases) else "other"}
    meta = {k: v for k, v in meta.items() if v is not None}
    out = ["---", yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip(), "---", "",
           f"# {recipe.name} model trained with xlsent", "",
           f"{recipe.help} Paper: {recipe.paper}.", "",
           "```python", "from sentence_transformers import SentenceTransformer", "",
           f"model = SentenceTransformer({str(Path(run_dir) / 'model')!r})",
           "embeddings = model.encode([\"Mulungu ndi wabwino.\", \"God is good.\"])", "```", ""]
    if task_head:  # a task head over an encoder: loaded with transformers' class for the task
        out[-7:] = ["```python", f"from transformers import {task_head[1]}, AutoTokenizer", "",
                    f"model = {task_head[1]}.from_pretrained({str(Path(run_dir) / 'model')!r})", "```", ""]
    if recipe.declared("CARD_NOTE"):  # what a user must know to use the model (the recipe's module says)
        out += [recipe.declared("CARD_NOTE"), ""]
    out += ["## Base models", ""]
    if bases:
        out += ["| role | model | source and licence |", "|---|---|---|"]
        for key, name in bases:
            desc, src = _model_row(name)
            out.append(f"| {ROLES.get(key, key)} | {desc} | {src} |")
    else:
        out.append("None: trained from scratch (tokenizer and weights learned from the training data below).")
    out += ["", "## Training data", ""]
    lic = _data_licence(str(data.get("pairs", ""))) if data else ""
    if data:
        out += [f"- source: `{data.get('pairs')}`" + (f" ({lic})" if lic else ""),
                f"- training examples: {data.get('examples')}",
                f"- languages: {' ↔ '.join(langs) if langs else 'not recorded in the data'}"]
        out += [f"- {n}" for n in data.get("notes", [])]
    else:
        out.append("- not recorded (the run has no done marker)")
    out.append("")
    if record:
        keep = {k: record[k] for k in ("steps", "epochs", "examples", "seconds", "final_loss") if k in record}
        out += ["Training: " + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in keep.items())
                + ".", ""]
    if metrics:
        sel = (record or {}).get("selection")
        chose = sel if sel and str(metrics["eval_pool"].get("pairs", "")).endswith("holdout.jsonl") else None
        out += _metrics_section(metrics, chose)
    else:
        out += ["## Held-out evaluation", "", "Not run (`--no-eval`); run `xlsent eval retrieval -m MODEL` "
                f"on held-out pairs{f' such as `{eval_pairs}`' if eval_pairs else ''}.", ""]
    out += ["## Licences", "",
            "- weights: derived from the base models above (their licences apply)",
            f"- training data: {lic or 'the licence of the data you trained on'}",
            "- xlsent (the code that trained it): MIT", "",
            "## Reproduce", "", "The run's full config is saved next to the model:", "",
            "```bash", f"xlsent train {recipe.name} -c {Path(run_dir) / 'config.yaml'} -o NEW_FOLDER", "```", ""]
    return "\n".join(out)


def write_model_card(recipe, run_dir: str | Path, model_dir: str | Path | None = None,
                     metrics: dict | None = None) -> Path:
    """Write ``model/README.md`` of the run in ``run_dir`` from its ``config.yaml``, done marker and metrics."""
    from xlsent.recipes.config import read_yaml

    run_dir = Path(run_dir)
    model_dir = Path(model_dir) if model_dir else run_dir / "model"
    cfg = read_yaml(run_dir / "config.yaml") if (run_dir / "config.yaml").exists() else {}
    record = None
    for marker in (model_dir.parent / "stage.json", run_dir / "stage.json"):
        if marker.exists():
            record = json.loads(marker.read_text())
            break
    if metrics is None and (run_dir / "metrics.json").exists():
        metrics = json.loads((run_dir / "metrics.json").read_text())
    path = model_dir / "README.md"
    write_text_atomic(path, render_model_card(recipe, cfg, record, metrics, run_dir))
    return path


def write_bootstrap_card(output: str | Path, result, inputs: dict) -> Path:
    """``DIR/model/README.md`` of a bootstrap: the card of the round that trained the output model (adapt's), with a
    section listing the seed pairs, the plain texts and what each round mined, kept and scored."""
    from xlsent.recipes.config import read_yaml
    from xlsent.recipes.registry import REGISTRY

    output = Path(output)
    best_run = Path(result.rounds[[r["round"] for r in result.rounds].index(result.best_round)]["model"]).parent
    cfg = read_yaml(best_run / "config.yaml") if (best_run / "config.yaml").exists() else {}
    record = json.loads((best_run / "stage.json").read_text()) if (best_run / "stage.json").exists() else None
    models = cfg.get("models") or {}
    continued = bool(models.get("teacher")) and models.get("student") != models.get("teacher")
    if continued:  # --start last: the round began from the round before (a folder removed after the run); the
        cfg = {**cfg, "models": {**models, "student": models["teacher"]}}  # chain began at the base model
    card = render_model_card(REGISTRY["adapt"], cfg, record, None, output)
    card = card.replace("# adapt model trained with xlsent", "# bootstrap model trained with xlsent", 1)
    lines = ["## Training data: seed and mined pairs", "",
             "Trained by `xlsent train bootstrap`: adapt on a few seed pairs, then rounds of mining the plain texts with "
             "the round's model, cleaning the pairs and training again; the round whose model scored best on the "
             "held-out seed pairs, retrieved among every plain line, is this model.", "",
             f"- seed pairs: `{inputs['seed']['path']}` — {result.held_out:,} held out for the stop rule, the rest "
             "trained on in every round",
             f"- plain text: `{inputs['src']['path']}` and `{inputs['tgt']['path']}`",
             *([f"- base model: `{models['teacher']}`; each round continued from the round before (`--start last`)"]
               if continued else []), "",
             "| round | trained on (seed + mined) | mined pairs kept | held-out P@1 in the hard pool [95% CI] |",
             "|---|---|---|---|"]
    for r in result.rounds:
        h = r["held_out"]
        mark = " (this model)" if r["round"] == result.best_round else ""
        lines.append(f"| {r['round']}{mark} | {r['trained_on']['seed']:,} + {r['trained_on']['mined']:,} | "
                     f"{r['counts'].get('kept', 0):,} | {h['p_at_1']:.3f} [{h['ci95'][0]:.3f}, {h['ci95'][1]:.3f}] |")
    best_dir = output / f"round-{result.best_round}"
    lines += ["", f"The mined pairs this model trained on: `{best_dir.parent / f'round-{result.best_round - 1}' / 'pairs.tsv'}`"
              if result.best_round else "This model trained on the seed pairs alone: no round of mined pairs beat it.",
              f"Every round's pairs, with their margin scores: `{output}/round-N/pairs.tsv`.", ""]
    at = card.index("## Base models")
    card = card[:at] + "\n".join(lines) + "\n" + card[at:]
    path = output / "model" / "README.md"
    write_text_atomic(path, card)
    return path
