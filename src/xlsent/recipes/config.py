"""Recipe configs are data: YAML defaults, a user YAML file, then ``--set key=value`` overrides.

Keys are dotted paths (``train.sample=2016``); values are parsed as YAML
scalars (``true``, ``5e-6``, ``[7, 8]``). An unknown key is an error that lists
the valid ones. The merged config is saved next to every run's outputs.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from xlsent.recipes.config_types import RecipeConfig
from xlsent.utils.errors import XlsentError


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 scalars: ``2e-4`` is a number, and only ``true``/``false``
    are booleans (YAML 1.1 also reads ``off``, ``no``, ``on``, ``yes`` as booleans, which would turn
    ``mcl.variant=off`` into ``False``)."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
                              list("tTfF"))

_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^[-+]?(?:[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                   |[0-9][0-9_]*[eE][-+]?[0-9]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."),
)


def _yaml(text: str):
    return yaml.load(text, Loader=_Loader)  # noqa: S506 — a SafeLoader subclass


def read_yaml(path: str | Path) -> dict:
    """A YAML file as written by :func:`dump_config` (numbers such as 3e-5 read as numbers)."""
    return _yaml(Path(path).read_text(encoding="utf-8")) or {}


def _flatten(d: dict, prefix: str = "") -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _moved(dotted: str, valid: set[str]) -> str | None:
    """The ``models.*`` key that an old top-level model key (``model``, ``teacher``, ``student.bottleneck``,
    ``model.max_seq_length``…) became when every recipe's config gained the same ``models:`` section."""
    head, _, rest = dotted.partition(".")
    if head == "model":
        rest = {"": "base", "name": "student"}.get(rest, rest)
        candidates = [f"models.{rest}"] + (["models.student"] if rest == "base" else [])
    elif head in ("teacher", "student", "assistant"):
        candidates = [f"models.{dotted}"]
    else:
        return None
    return next((c for c in candidates if c in valid), None)


#: config keys renamed: the old name is still accepted (with a note), until the next release
RENAMED = {"loss.mini_batch_size": "loss.sorted_chunk"}


def _set(d: dict, dotted: str, value: Any, valid: set[str], source: str) -> None:
    if dotted not in valid and RENAMED.get(dotted) in valid:
        import warnings

        warnings.warn(f"{source}: config key {dotted} is now {RENAMED[dotted]} ({dotted} is accepted until the "
                      "next release)", FutureWarning, stacklevel=2)
        dotted = RENAMED[dotted]
    if dotted not in valid:
        import difflib

        moved = _moved(dotted, valid)
        if moved:
            raise XlsentError(f"{source}: config key '{dotted}' is now '{moved}' (model settings live under "
                              f"models:) — write {moved}=… instead")
        close = difflib.get_close_matches(dotted, sorted(valid), n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise XlsentError(f"{source}: unknown config key '{dotted}'{hint} — valid keys: {', '.join(sorted(valid))}")
    node = d
    parts = dotted.split(".")
    for p in parts[:-1]:
        node = node[p]
    node[parts[-1]] = value


def default_config(recipe: str) -> dict:
    """A recipe's shipped defaults (``configs/<recipe>.yaml`` without its ``recipe:`` registry entry)."""
    text = resources.files("xlsent").joinpath("configs", f"{recipe}.yaml").read_text(encoding="utf-8")
    cfg = _yaml(text)
    cfg.pop("recipe", None)
    return cfg


def presets(recipe: str) -> list[str]:
    """Preset names shipped for ``recipe`` (files ``configs/<recipe>.<preset>.yaml``)."""
    folder = resources.files("xlsent").joinpath("configs")
    return sorted(p.name[len(recipe) + 1 : -5] for p in folder.iterdir()
                  if p.name.startswith(recipe + ".") and p.name.endswith(".yaml") and p.name != f"{recipe}.yaml")


def preset_summary(recipe: str, preset: str) -> str:
    """The first sentence of a preset file's leading comment (what ``--help`` says of it)."""
    text = resources.files("xlsent").joinpath("configs", f"{recipe}.{preset}.yaml").read_text(encoding="utf-8")
    comment = " ".join(line.lstrip("# ").strip() for line in text.splitlines()[:3] if line.startswith("#"))
    first = re.split(r"(?<!\bal)(?<!e\.g)(?<!Eq)\.\s", comment)[0].strip().rstrip(".")
    return first if len(first) <= 100 else first[:99].rsplit(" ", 1)[0] + " …"


def _merge(cfg: dict, user: dict, valid: set[str], source: str) -> None:
    for key, value in _flatten(user).items():
        _set(cfg, key, value, valid, source)


def load_config(recipe: str, config_file: str | Path | None = None, overrides: list[str] | None = None,
                preset: str | None = None) -> RecipeConfig:
    """Defaults, then a shipped preset (``--preset``), then a user file (``--config``), then ``--set``;
    every value checked, as a typed :class:`~xlsent.recipes.config_types.RecipeConfig`."""
    cfg = default_config(recipe)
    valid = set(_flatten(cfg))
    if preset:
        names = presets(recipe)
        if preset not in names:
            raise XlsentError(f"unknown preset '{preset}' for {recipe} — available: {', '.join(names) or 'none'}")
        text = resources.files("xlsent").joinpath("configs", f"{recipe}.{preset}.yaml").read_text(encoding="utf-8")
        _merge(cfg, _yaml(text) or {}, valid, f"preset {preset}")
    if config_file:
        path = Path(config_file)
        if not path.exists():
            raise XlsentError(f"{path}: no such config file — check the path")
        try:
            user = _yaml(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise XlsentError(f"{path}: not valid YAML ({' '.join(str(exc).split())}) — fix the file") from None
        if not isinstance(user, dict):
            raise XlsentError(f"{path}: expected a mapping of config keys")
        _merge(cfg, user, valid, str(path))
    for item in overrides or []:
        if "=" not in item:
            raise XlsentError(f"--set {item!r}: expected key=value, e.g. --set train.epochs=10")
        key, raw = item.split("=", 1)
        try:
            value = _yaml(raw)
        except yaml.YAMLError:
            value = raw
        _set(cfg, key.strip(), value, valid, "--set")
    from xlsent.recipes.config_schema import validate_config

    return validate_config(recipe, cfg, default_config(recipe))


def _plain(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return [_plain(v) for v in x] if isinstance(x, (list, tuple)) else x


def dump_config(cfg: dict) -> str:
    """The config as YAML (typed sections written as the plain mappings they are)."""
    return yaml.safe_dump(_plain(cfg), sort_keys=False, allow_unicode=True)
