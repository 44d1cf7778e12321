"""docs/contributing.md cannot drift from the code: every Python example on it parses, every name it imports exists,
every block is the real code of the module named on its first line (abridged only with ``...``), the fields and
class attributes it shows have the values it shows, its recipe entry is the shipped one, the config error it quotes
is the one the schema gives — and what it teaches is built for real: a new evaluation task type, inserted into
``TASK_TYPES`` and nothing else, runs through ``xlsent.evaluate``, ``xlsent.evaluate_tasks`` and ``xlsent eval run``;
a new bundled pairs set, declared in a temporary copy of the bundled data, is listed, named as tasks and evaluated."""

from __future__ import annotations

import ast
import dataclasses
import gzip
import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import xlsent
from xlsent.evaluation.tasks import (ON_BAD_LINES, TASK_TYPES, RetrievalTask, Scorer, TaskRun, TaskType, _data,
                                     _lang_tag, names, option)

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "contributing.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = [(m[1], m[2]) for m in re.finditer(r"^```(\w*)\n(.*?)^```", TEXT, re.M | re.S)]
PYTHON = [code for lang, code in BLOCKS if lang == "python"]
#: a block's first line names the module it is taken from: ``# src/xlsent/recipes/xkd.py`` (or ``# recipes/xkd.py``)
_HEADER = re.compile(r"#\s*(?:src/xlsent/)?((?:[\w]+/)*\w+\.py)\s*$")


def _ids(blocks) -> list[str]:
    return [f"{i}:{code.splitlines()[0][:60]}" for i, code in enumerate(blocks)]


def _module_of(code: str) -> tuple[str, Path]:
    """The module a block shows (its import name and source file), from the block's first line."""
    m = _HEADER.fullmatch(code.splitlines()[0].strip())
    assert m, f"a Python block on the page must start with the module it shows (# src/xlsent/…py): {code[:80]!r}"
    path = ROOT / "src" / "xlsent" / m[1]
    assert path.is_file(), f"{m[1]}: no such module"
    return "xlsent." + m[1].removesuffix(".py").replace("/", "."), path


# ---- an AST match where `...` stands for what the page leaves out ---------------------------------------------------


def _is_ellipsis(node: Any) -> bool:
    if isinstance(node, ast.Expr):
        node = node.value
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _is_docstring(node: Any) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


_SKIP_FIELDS = {"ctx", "type_comment", "kind"}


def _same(doc: Any, real: Any) -> bool:
    """``doc`` (the page's node) is ``real`` (the module's), where a ``...`` of the page stands for any node or, in
    a list (statements, arguments, elements), for any run of them; a docstring may be left out. Formatting and
    comments do not count."""
    if isinstance(doc, ast.expr) and _is_ellipsis(doc):
        return True
    if type(doc) is not type(real):
        return False
    if isinstance(doc, list):
        return _same_list(doc, real)
    if not isinstance(doc, ast.AST):
        return doc == real
    for name in doc._fields:
        if name in _SKIP_FIELDS:
            continue
        d, r = getattr(doc, name, None), getattr(real, name, None)
        if isinstance(doc, ast.Call) and name == "keywords" and any(_is_ellipsis(a) for a in doc.args):
            if not all(any(_same(k, rk) for rk in r) for k in d):  # f(a, ..., key=v): the keywords shown are there
                return False
            continue
        if not _same(d, r):
            return False
    return True


def _same_list(doc: list, real: list) -> bool:
    if doc and real and isinstance(real[0], ast.stmt) and _is_docstring(real[0]) and not _is_docstring(doc[0]):
        real = real[1:]
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(doc):
                memo[i, j] = j == len(real)
            elif _is_ellipsis(doc[i]):
                memo[i, j] = any(match(i + 1, k) for k in range(j, len(real) + 1))
            else:
                memo[i, j] = j < len(real) and _same(doc[i], real[j]) and match(i + 1, j + 1)
        return memo[i, j]

    return match(0, 0)


def _explain(stmt: ast.stmt, real: ast.Module) -> str:
    """Which line of a class or function shown is not in the real one."""
    name = getattr(stmt, "name", None)
    found = [n for n in ast.walk(real) if type(n) is type(stmt) and getattr(n, "name", None) == name]
    if not name or not found:
        return ast.unparse(stmt)[:300]
    target = found[0]
    missing = [ast.unparse(s)[:200] for s in stmt.body
               if not _is_ellipsis(s) and not any(_same(s, r) for r in ast.walk(target) if isinstance(r, ast.stmt))]
    if missing:
        return f"{name}: not in the code: {missing}"
    if not _same_list(stmt.body, target.body):
        return f"{name}: its lines are real but not in this order, or lines are left out without a `...`"
    return f"{name}: its signature, decorators or bases differ: {ast.unparse(stmt).splitlines()[0][:200]}"


def _unmatched(doc: ast.Module, real: ast.Module) -> list[str]:
    """The page's top-level statements not found, in order, among the module's (an expression shown alone, such as
    one entry of a table, may be found anywhere in the module)."""
    out, j = [], 0
    for stmt in doc.body:
        if _is_ellipsis(stmt):
            continue
        k = next((k for k in range(j, len(real.body)) if _same(stmt, real.body[k])), None)
        if k is not None:
            j = k + 1
        elif not (isinstance(stmt, ast.Expr)
                  and any(_same(stmt.value, n) for n in ast.walk(real) if isinstance(n, ast.expr))):
            out.append(_explain(stmt, real))
    return out


# ---- the Python blocks --------------------------------------------------------------------------------------------


def test_the_page_has_its_examples():
    shown = "\n".join(PYTHON)
    for name in ("def train_xkd", "class TripletLoss", "class MseTask", "TASK_TYPES", "app.add_typer",
                 "def stats", "DatasetEntry(", "def _evaluate"):
        assert name in shown, name
    assert "## Add a service route" in TEXT
    assert "compares" not in TEXT and "from_declaration" not in TEXT and "OPTIONS" not in TEXT  # gone from the code


@pytest.mark.parametrize("code", PYTHON, ids=_ids(PYTHON))
def test_every_python_block_parses_and_imports_real_names(code):
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "xlsent":
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name) or importlib.util.find_spec(f"{node.module}.{alias.name}"), \
                    f"from {node.module} import {alias.name}: no such name"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "xlsent":
                    importlib.import_module(alias.name)


@pytest.mark.parametrize("code", PYTHON, ids=_ids(PYTHON))
def test_every_python_block_is_the_code_of_its_module(code):
    """Every line shown is in the module the block names, in its order; ``...`` marks what is left out."""
    _, path = _module_of(code)
    missing = _unmatched(ast.parse(code), ast.parse(path.read_text(encoding="utf-8")))
    assert not missing, f"{path.relative_to(ROOT)}: the page shows what the code does not have: {missing}"


def _default(cls: type, name: str) -> Any:
    """A field's default as the class holds it: a dataclass field, a config ``Section``'s, or the attribute."""
    if dataclasses.is_dataclass(cls):
        return {f.name: f for f in dataclasses.fields(cls)}[name]
    if "_field_defaults" in dir(cls):
        return cls._field_defaults[name]
    return getattr(cls, name)


def _same_default(shown: Any, real: Any) -> bool:
    if isinstance(shown, dataclasses.Field) and isinstance(real, dataclasses.Field):  # option(…) / _data()
        return (shown.default, shown.init, dict(shown.metadata)) == (real.default, real.init, dict(real.metadata))
    if isinstance(real, dataclasses.Field):  # a plain default
        real = real.default
    return type(shown) is type(real) and shown == real


@pytest.mark.parametrize("code", PYTHON, ids=_ids(PYTHON))
def test_the_classes_and_functions_shown_are_the_modules(code):
    """Each class shown is the module's, with every field it shows declared and its default the same, every class
    attribute the same value, every method there; each function and name shown is the module's."""
    module_name, _ = _module_of(code)
    module = importlib.import_module(module_name)
    namespace = vars(module)
    for node in ast.parse(code).body:
        if isinstance(node, ast.ClassDef):
            cls = getattr(module, node.name)
            annotations: dict = {}
            for klass in reversed(cls.__mro__):
                annotations.update(getattr(klass, "__annotations__", {}))
            for s in node.body:
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                    name = s.target.id
                    assert name in annotations, f"{node.name}.{name}: not a field of the real class"
                    if s.value is not None:
                        shown = eval(compile(ast.Expression(s.value), "<page>", "eval"), namespace)  # noqa: S307
                        assert _same_default(shown, _default(cls, name)), f"{node.name}.{name}: another default"
                elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
                    value = ast.literal_eval(s.value)
                    assert getattr(cls, s.targets[0].id) == value, f"{node.name}.{s.targets[0].id} is not {value!r}"
                elif isinstance(s, ast.FunctionDef):
                    assert callable(getattr(cls, s.name, None)), f"{node.name}.{s.name}: no such method"
        elif isinstance(node, ast.FunctionDef):
            assert callable(getattr(module, node.name, None)), f"{module_name}.{node.name}: no such function"
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                assert hasattr(module, target.id), f"{module_name}.{target.id}: no such name"


def test_errors_name_python_parameters_and_the_cli_maps_them_to_its_options():
    """The page's two examples of ``option_words``: ``sample=-1`` is ``--sample -1`` and ``truncate_dim=5`` is
    ``--dimensions 5`` on a command that has those options."""
    import typer

    from xlsent.cli.common import option_words
    from xlsent.cli.main import app

    for python, cli in (("sample=-1", "--sample -1"), ("truncate_dim=5", "--dimensions 5")):
        assert f"`{python}` becomes `{cli}`" in " ".join(TEXT.split())
    retrieval = typer.main.get_command(app).commands["eval"].commands["retrieval"]
    assert option_words("sample=-1: must be ≥ 0; truncate_dim=5: too wide", retrieval.params) == \
        "--sample -1: must be ≥ 0; --dimensions 5: too wide"


# ---- the recipe ---------------------------------------------------------------------------------------------------


def test_the_recipe_entry_shown_is_the_shipped_one():
    """The page's ``recipe:`` block loads as YAML and is xkd's: the registry entry's keys and values, and the other
    keys it shows with their shipped values. No shipped config has the removed ``compares:``."""
    from importlib import resources

    entries = [yaml.safe_load(code) for lang, code in BLOCKS if lang == "yaml" and code.startswith("recipe:")]
    assert len(entries) == 1
    shown = entries[0]
    real = yaml.safe_load((ROOT / "src" / "xlsent" / "configs" / "xkd.yaml").read_text(encoding="utf-8"))
    assert shown["recipe"] == real["recipe"]
    for section, values in shown.items():
        assert set(values) <= set(real[section]), (section, set(values) - set(real[section]))
        assert all(real[section][k] == v for k, v in values.items()), section
    used = set()
    for f in resources.files("xlsent").joinpath("configs").iterdir():
        if f.name.endswith(".yaml"):
            used |= set((yaml.safe_load(f.read_text(encoding="utf-8")) or {}).get("recipe") or {})
    assert set(shown["recipe"]) <= used and "compares" not in used
    from xlsent.recipes.registry import REGISTRY

    assert REGISTRY["xkd"].train == shown["recipe"]["train"] and REGISTRY["xkd"].evaluate == shown["recipe"]["evaluate"]


def test_the_config_error_the_page_quotes_is_the_schemas():
    from xlsent.recipes.config import load_config

    (setting, message), = re.findall(r"`--set (\S+)` is then `(config [^`]+)`", TEXT)
    with pytest.raises(xlsent.XlsentError) as e:
        load_config("triplet-kd", overrides=[setting])
    assert str(e.value) == message


# ---- paths and tests the page names ------------------------------------------------------------------------------


def test_the_files_and_tests_the_page_names_exist():
    bases = [ROOT, ROOT / "src" / "xlsent", ROOT / "src" / "xlsent" / "configs", ROOT / "docs"]
    missing = [p for p in sorted(set(re.findall(r"`([\w.-]+(?:/[\w.-]+)*\.(?:py|yaml|md))`", TEXT)))
               if not any((b / p).exists() for b in bases)]
    assert not missing, missing
    tests = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").glob("*.py"))
    unknown = [t for t in sorted(set(re.findall(r"`(test_\w+)`", TEXT))) if f"def {t}(" not in tests]
    assert not unknown, unknown


# ---- a new evaluation task type, built as the page teaches ---------------------------------------------------------


@dataclass
class PairCosineResult:
    """The evaluator's typed result: its ``to_dict()`` is the JSON the task's result carries."""

    model: str
    dataset: str
    n: int
    mean_cosine: float

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def evaluate_pair_cosine(src: list[str], tgt: list[str], encoder, src_lang=None, tgt_lang=None, model_name="",
                         dataset="") -> PairCosineResult:
    """The evaluator: a pure function of an encoder and the data (it loads no model and prints nothing)."""
    a = np.asarray(encoder.encode(list(src), src_lang), dtype=np.float64)
    b = np.asarray(encoder.encode(list(tgt), tgt_lang), dtype=np.float64)
    cos = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
    return PairCosineResult(model_name, dataset, len(cos), float(cos.mean()))


@dataclass
class PairCosineTask(TaskType):
    type = "paircos"
    main_score = "mean_cosine"
    measures = "mean cosine of each pair's two sides"
    kind = "pairs"
    user_files = "PAIRS (TSV, JSONL or Moses A,B)"

    sample: int = option(0, low=0)
    seed: int = option(0)
    on_bad_lines: str = option("error", choices=ON_BAD_LINES)
    src: list[str] = _data()
    tgt: list[str] = _data()
    langs: tuple = _data()

    lists_languages = False

    @classmethod
    def has_files(cls, dataset: str) -> bool:
        return RetrievalTask.has_files(dataset)

    def load(self) -> None:
        from xlsent.data.pairs import load_pairs, side_langs

        loaded = load_pairs(self.declaration.dataset, on_bad_lines=self.on_bad_lines, dedupe=False,
                            sample=self.sample, seed=self.seed)
        self.notes += loaded.notes()
        self.src, self.tgt = list(loaded.dataset["src"]), list(loaded.dataset["tgt"])
        self.langs = side_langs(loaded.dataset)

    def run(self, scorer: Scorer) -> TaskRun:
        sl, tl = self.langs
        r = evaluate_pair_cosine(self.src, self.tgt, scorer.encoder(), sl or None, tl or None, scorer.model,
                                 self.declaration.dataset)
        tags = [_lang_tag(sl, self.src), _lang_tag(tl, self.tgt)]
        return self.finish(scorer, [self.mteb_row("default", tags, {"mean_cosine": r.mean_cosine}, r.to_dict())],
                           [r], r.to_dict())


def test_a_new_task_type_runs_from_every_path_with_no_other_edit(tiny_model, pairs_tsv, tmp_path, monkeypatch):
    """One class put in ``TASK_TYPES`` (and nothing else): ``TYPE:FILE`` and ``TYPE`` with ``pairs=`` through
    ``xlsent.evaluate``, ``xlsent.evaluate_tasks`` with a result file in MTEB's format, ``xlsent eval run`` with
    ``--option``; the bundled pairs sets are named tasks of it; its options are checked in one line."""
    from test_cli import xlsent as run_cli

    monkeypatch.setitem(TASK_TYPES, PairCosineTask.type, PairCosineTask)
    assert set(PairCosineTask.options()) == {"sample", "seed", "on_bad_lines"}
    model = str(tiny_model)

    run = xlsent.evaluate(model, f"paircos:{pairs_tsv}", sample=10)
    assert run.task == f"paircos:{pairs_tsv}" and run.main_score_name == "mean_cosine"
    assert run.details["n"] == 10 and run.main_score == pytest.approx(run.details["mean_cosine"])
    assert isinstance(run.results[0], PairCosineResult) and -1 <= run.main_score <= 1
    same = xlsent.evaluate(model, "paircos", pairs=str(pairs_tsv), sample=10)
    assert same.main_score == pytest.approx(run.main_score)

    out = tmp_path / "results"
    ran, = xlsent.evaluate_tasks(model, f"paircos:{pairs_tsv}", out, options={"sample": "10"})  # as --option gives
    assert ran.main_score == pytest.approx(run.main_score)
    written = json.loads((out / f"{ran.declaration.mteb_name}.json").read_text(encoding="utf-8"))
    row, = written["scores"]["test"]
    assert row["main_score"] == pytest.approx(run.main_score) and row["languages"][0].startswith("en-")

    assert "paircos:bible-en-ny:dev" in names()  # every bundled set of its kind is a named task

    for given, words in (({"sampel": 3}, "unknown task option sampel"), ({"sample": -1}, "sample=-1: must be ≥ 0"),
                         ({"on_bad_lines": "ignore"}, "unknown on_bad_lines='ignore': use one of error, skip")):
        with pytest.raises(xlsent.XlsentError) as e:
            xlsent.evaluate(model, f"paircos:{pairs_tsv}", **given)
        assert words in str(e.value) and "\n" not in str(e.value)

    cli = run_cli("eval", "run", "-m", model, "--tasks", f"paircos:{pairs_tsv}", "--option", "sample=10",
                  "-o", str(tmp_path / "cli"))
    assert cli.returncode == 0, cli.stderr
    assert f"{run.main_score:.4f}" in cli.stdout and len(list((tmp_path / "cli").glob("xlsent.paircos.*.json"))) == 1
    bad = run_cli("eval", "run", "-m", model, "--tasks", f"paircos:{pairs_tsv}", "--option", "sampel=10")
    assert bad.returncode == 2 and "unknown task option sampel" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


# ---- a new bundled dataset, in a temporary copy of the bundled data -------------------------------------------------


def test_a_new_bundled_pairs_set_declared_in_a_temporary_copy(tiny_model, pairs_tsv, tmp_path, monkeypatch):
    """A pairs set is its file under the bundled data and its line in ``BUNDLED``: the registry lists it, its files
    are declared (an undeclared one is caught), the task types of its kind name it, and it evaluates."""
    from xlsent.data import registry
    from xlsent.data.bundled import BUNDLED, BundledDataset

    data = tmp_path / "bundled_data"
    rows = [line.split("\t") for line in pairs_tsv.read_text(encoding="utf-8").splitlines()[1:]]
    (data / "toy").mkdir(parents=True)
    with gzip.open(data / "toy" / "pairs.jsonl.gz", "wt", encoding="utf-8") as fh:
        for i, (en, ny) in enumerate(rows):
            fh.write(json.dumps({"id": str(i), "src": en, "tgt": ny, "src_lang": "eng", "tgt_lang": "nya"}) + "\n")
    monkeypatch.setenv("XLSENT_DATA_DIR", str(data))
    monkeypatch.setitem(BUNDLED, "toy", BundledDataset("toy", "toy/pairs.jsonl.gz", "toy pairs", "CC0"))
    others = [e for e in registry.REGISTRY if e.kind != "pairs"]
    monkeypatch.setattr(registry, "REGISTRY", [*registry._pairs(), *others])  # the registry reads BUNDLED

    assert registry.find("toy", "pairs") is not None and any(r["name"] == "toy" for r in registry.rows("pairs"))
    assert registry.undeclared_files(data) == []
    (data / "toy" / "extra.jsonl.gz").write_bytes(b"")
    assert registry.undeclared_files(data) == ["toy/extra.jsonl.gz"]
    assert {"retrieval:toy", "triplet:toy"} <= set(names())
    run = xlsent.evaluate(str(tiny_model), "retrieval", dataset="toy", resamples=20)
    assert run.task == "retrieval:toy" and np.isfinite(run.main_score) and run.details["n"] == len(rows)
