"""Atomic writes: a file or folder appears whole or not at all."""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


@contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; move it into place on success.

    Works for files and folders. On error the temporary is removed and ``target``
    is left untouched.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    work = tmp / target.name
    try:
        yield work
        if work.is_dir():
            # a folder cannot replace a non-empty one: move the old one aside first. Another process may put its
            # own in place in between (two processes filling one cache): then again — the last writer wins, as
            # with a file
            for attempt in range(8):
                if target.is_dir() and not target.is_symlink():
                    try:
                        os.replace(target, tmp / f"old-{attempt}")
                    except FileNotFoundError:  # another process moved it aside first
                        pass
                try:
                    os.replace(work, target)
                    break
                except OSError as e:
                    if e.errno not in (errno.ENOTEMPTY, errno.EEXIST) or attempt == 7:
                        raise
        else:
            os.replace(work, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_text_atomic(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_json_atomic(path: str | Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def cache_dir() -> Path:
    """Root of xlsent's caches: ``$XLSENT_CACHE_DIR`` or ``~/.cache/xlsent``."""
    env = os.environ.get("XLSENT_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "xlsent"
