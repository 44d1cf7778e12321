"""xlsent: cross-lingual sentence embeddings for low-resource languages.

The public API (:mod:`xlsent.api`, whose ``__all__`` lists every name) is importable from here — ``xlsent.load``,
``xlsent.embed``, ``xlsent.train``, ``xlsent.mine`` … — and is imported on first use, so ``import xlsent`` stays
fast and loads no torch. ``xlsent.__all__`` is ``xlsent.api.__all__`` and ``__version__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # for type checkers and editors: the names of xlsent.api.__all__; at run time, __getattr__
    from xlsent.api import *  # noqa: F403


def __getattr__(name: str) -> Any:
    """``xlsent.NAME`` for each name of :mod:`xlsent.api` (and ``xlsent.__all__``), imported on first use."""
    if name == "__all__" or not (name.startswith("_") or _is_submodule(name)):
        import xlsent.api as api

        if name == "__all__":
            value: Any = [*api.__all__, "__version__"]
        elif name in api.__all__:
            value = getattr(api, name)
        else:
            raise AttributeError(f"module 'xlsent' has no attribute {name!r}")
        globals()[name] = value
        return value
    raise AttributeError(f"module 'xlsent' has no attribute {name!r}")


def _is_submodule(name: str) -> bool:
    """A subpackage not imported yet (``from xlsent import data``, ``mock.patch("xlsent.data…")``): the import system
    asks for the attribute first; it is not the API's, and the answer needs no import of :mod:`xlsent.api`."""
    from importlib.util import find_spec

    return find_spec(f"{__name__}.{name}") is not None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__getattr__("__all__")))
