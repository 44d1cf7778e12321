"""Writing outputs so that nothing fails silently.

* **Atomic.** :func:`atomic_path` writes a file or folder under a temporary name beside it and renames it into place
  when complete: an output appears whole or not at all.
* **A failed write is one line.** A write that fails (a full disk above all) raises :class:`WriteFailed`: the file,
  what was being written, the space free and how much the job needs — never a library's traceback, and nothing
  left under the final name. :func:`check_space` refuses a job whose output size is known before it starts.
* **One run per output.** :func:`claim` locks an output (a file or a folder) for one process: a second run into it is
  refused in one line naming the other process; a lock left by a killed run is taken over, said in one line.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from xlsent.utils.errors import XlsentError

_FULL = (errno.ENOSPC, errno.EDQUOT)
_replace = os.replace  # the atomic step (a test's simulated full disk replaces it where it cannot mount one)
#: below this much free space a write that failed without an errno is taken for a full disk (libraries that lose
#: it: numpy's ``tofile`` "N requested and M written", torch's ``torch.save`` "file write failed", "iostream
#: error", "unexpected pos")
NEARLY_FULL = 1 << 20
_WRITE_WORDS = ("written", "write failed", "writing", "PytorchStreamWriter", "iostream error", "unexpected pos")


class WriteFailed(XlsentError):
    """A write that failed (a full disk, a read-only folder), said in one line: the file, what was being written, the
    space free and how much the job needs."""

    def __init__(self, path: str | Path, what: str, reason: str, *, full: bool, need: int | None = None,
                 written: int = 0, free: int | None = None, resumes: bool = False) -> None:
        self.path, self.what, self.reason, self.full = str(path), what, reason, full
        self.need, self.written, self.free, self.resumes = need, written, free, resumes
        super().__init__(self.render())

    def render(self) -> str:
        again = ("run the same command again: it goes on from what was finished" if self.resumes
                 else "run the same command again")
        if not self.full:
            return f"{self.path}: writing {self.what} failed — {self.reason}; make the folder writable, then {again}"
        free = "free space unknown" if self.free is None or self.free < 0 else f"{human_bytes(self.free)} free"
        needs = (f"it needs about {human_bytes(self.need)}" if self.need else
                 f"it needs more than the {human_bytes(self.written)} written before it failed" if self.written else
                 "it needs more than that")
        return (f"{self.path}: {self.reason} while writing {self.what} — {free}, {needs}; free some space or write "
                f"elsewhere, then {again}")

    def retold(self, **changes: Any) -> "WriteFailed":
        """The same failure told with other details: an outer writer's target, what and need."""
        fields = {k: getattr(self, k) for k in ("what", "need", "written", "free", "resumes")}
        fields.update({k: v for k, v in changes.items() if k != "path"})
        return WriteFailed(changes.get("path", self.path), reason=self.reason, full=self.full, **fields)

    def __str__(self) -> str:  # retold after it was raised (a folder's inner file, an outer job's need)
        return self.render()


class NotEnoughSpace(XlsentError):
    """A job refused before it starts: what it will write does not fit in the free space."""


class OutputInUse(XlsentError):
    """Another process is writing the same output."""


class Replacing(UserWarning):
    """A finished output file that a user named is being replaced by this run's."""


class TakenOver(UserWarning):
    """An output's lock was left by a run that stopped without finishing; this run took it over."""


def human_bytes(n: float) -> str:
    """``1536`` → ``1.5 KiB``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def free_space(path: str | Path) -> int:
    """Bytes free to this user on the filesystem that holds ``path`` (or its nearest existing parent)."""
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return -1


def size_of(path: str | Path) -> int:
    """Bytes in a file or folder (0 when it is not there)."""
    p = Path(path)
    try:
        if p.is_file():
            return p.stat().st_size
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    except OSError:
        return 0


def _errno(exc: BaseException) -> int | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno:
            return seen.errno
        seen = seen.__cause__ or seen.__context__
    return None


def _filename(exc: BaseException) -> str | None:
    return exc.filename if isinstance(exc, OSError) and exc.filename else None


def write_failure(target: str | Path, what: str, exc: BaseException, *, need: int | None = None,
                  written: int = 0, free_when_failed: int | None = None, resumes: bool = False,
                  inside: str | Path | None = None) -> WriteFailed | None:
    """The one-line error for a write of ``what`` to ``target`` that raised ``exc``, or ``None`` when ``exc`` is not
    a failed write (then it propagates as it is): a full disk (``ENOSPC``, ``EDQUOT``; or a library's write error
    that lost the errno while under :data:`NEARLY_FULL` was free), a file too large for the filesystem, or another
    ``OSError`` on a file under ``inside`` (default: ``target``'s folder) — an error on some other file (an input
    that is not there) is not a write's. ``need``: the bytes the job needs, when known; ``written``: the bytes written
    before it failed; ``free_when_failed``: the space free when it failed, before its temporary files were removed
    (default: now); ``resumes``: run again to go on from the finished part."""
    if isinstance(exc, XlsentError):
        return None
    code = _errno(exc)
    free = free_space(target)
    then = free if free_when_failed is None else free_when_failed
    text = str(exc)
    kw = dict(need=need, written=written, free=free, resumes=resumes)
    if code in _FULL or "No space left" in text:
        return WriteFailed(target, what, "no space left on the device", full=True, **kw)
    if code is None and isinstance(exc, (OSError, RuntimeError)) and 0 <= then < NEARLY_FULL \
            and any(w in text for w in _WRITE_WORDS):
        return WriteFailed(target, what, "no space left on the device", full=True, **kw)
    if code == errno.EFBIG:
        return WriteFailed(target, what, "the file is larger than this filesystem allows", full=False, **kw)
    if not isinstance(exc, OSError):
        return None
    name = _filename(exc)
    where = Path(inside if inside is not None else Path(target).parent).absolute()
    if name is not None and not Path(name).absolute().is_relative_to(where):
        return None  # another file's error (reading an input): not this write's
    reason = getattr(exc, "strerror", None) or (text.splitlines() or [type(exc).__name__])[0]
    return WriteFailed(target, what, reason, full=False, **kw)


@contextmanager
def writing(target: str | Path, what: str = "the output", *, need: int | None = None, resumes: bool = False,
            inside: str | Path | None = None) -> Iterator[None]:
    """Turn a failed write inside the block into :class:`WriteFailed` (for writers that are not :func:`atomic_path`'s:
    a library's own checkpoints): an ``OSError`` on a file under ``inside`` (default: ``target``), a full disk
    anywhere. A :class:`WriteFailed` from an inner writer is told with this one's ``need`` where it had none."""
    try:
        yield
    except WriteFailed as exc:
        raise (exc.retold(need=need) if need and not exc.need else exc) from exc.__cause__
    except BaseException as exc:
        failure = write_failure(target, what, exc, need=need, resumes=resumes,
                                inside=target if inside is None else inside)
        if failure is None:
            raise
        raise failure from exc


def check_space(target: str | Path, need: int, what: str = "the output") -> None:
    """Refuse a job whose output (``need`` bytes) does not fit in the free space where it goes."""
    free = free_space(target)
    if 0 <= free < need:
        raise NotEnoughSpace(f"{target}: not enough space for {what} — it needs about {human_bytes(need)}, "
                             f"{human_bytes(free)} is free there; free some space or write elsewhere")


@contextmanager
def atomic_path(target: str | Path, what: str = "", *, need: int | None = None,
                resumes: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; move it into place on success.

    Works for files and folders. On error the temporary is removed and ``target`` is left untouched; a failed write
    (a full disk) is raised as :class:`WriteFailed`, naming ``what`` was written (default: the file's name).
    """
    target = Path(target)
    with writing(target, what or target.name, need=need, resumes=resumes, inside="/"):
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    work = tmp / target.name
    try:
        try:
            yield work
            if work.is_dir():
                # a folder cannot replace a non-empty one: move the old one aside first. Another process may put
                # its own in place in between (two processes filling one cache): then again — the last writer wins,
                # as with a file
                for attempt in range(8):
                    if target.is_dir() and not target.is_symlink():
                        try:
                            os.replace(target, tmp / f"old-{attempt}")
                        except FileNotFoundError:  # another process moved it aside first
                            pass
                    try:
                        _replace(work, target)
                        break
                    except OSError as e:
                        if e.errno not in (errno.ENOTEMPTY, errno.EEXIST) or attempt == 7:
                            raise
            else:
                if str(target.absolute()) in _announce and target.exists():
                    _announce.discard(str(target.absolute()))
                    warnings.warn(f"{target}: exists — replaced by this run's", Replacing, stacklevel=3)
                _replace(work, target)
        except BaseException as exc:
            written, then = size_of(work), free_space(tmp)
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, WriteFailed):  # an inner writer's: told as this output's when it wrote inside it
                if Path(exc.path).absolute().is_relative_to(tmp.absolute()):
                    raise exc.retold(path=target, what=what or target.name, need=need or exc.need,
                                     written=max(written, exc.written), free=free_space(target),
                                     resumes=resumes) from exc.__cause__
                raise
            failure = write_failure(target, what or target.name, exc, need=need, written=written,
                                    free_when_failed=then, resumes=resumes, inside=tmp)
            if failure is None:
                raise
            raise failure from exc
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


# --- one run per output ------------------------------------------------------------------------------------------

_held: dict[tuple[str, int], int] = {}  # outputs this process holds: (path, thread) → depth
_held_lock = threading.Lock()
_announce: set[str] = set()  # held outputs that were finished files: their replacement is said
warnings.filterwarnings("always", category=Replacing)  # said every time, not once a place in the code
warnings.filterwarnings("always", category=TakenOver)


def _lock_files(output: Path) -> tuple[Path, Path]:
    """Beside the output; inside it where only the output's own folder can be written."""
    home = output.parent
    if not os.access(home, os.W_OK) and output.is_dir() and os.access(output, os.W_OK):
        home = output
    return home / f".{output.name}.lock", home / f".{output.name}.owner"


def _owner(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _who(owner: dict) -> str:
    if not owner:
        return "another process"
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(owner.get("started", 0)))
    host = f" on {owner['host']}" if owner.get("host") and owner["host"] != socket.gethostname() else ""
    return f"process {owner.get('pid', '?')}{host} ({owner.get('command', '?')}, since {started})"


def _other_rank() -> bool:
    """A process of several (torchrun, accelerate launch) that is not the main one: the main one holds the output."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1") or 1) > 1 and int(os.environ.get("RANK", "0") or 0) != 0
    except ValueError:
        return False


def _missing_parents(path: Path) -> list[Path]:
    out = []
    for parent in (path, *path.parents):
        if parent.exists():
            break
        out.append(parent)
    return out


@contextmanager
def claim(output: str | Path, what: str = "", announce: bool = False) -> Iterator[Path]:
    """Hold ``output`` (a file or a folder) for this process while the block runs.

    A second process (or thread) that claims it is refused with :class:`OutputInUse`, naming the first. A lock left
    by a run that was killed is free again (the operating system releases it with the process): the next run takes
    it over and says so with a :class:`TakenOver` warning. Claims nest within one thread; under torchrun the main
    process holds the output for all of them. The lock (``.NAME.lock``) and its owner record (``.NAME.owner``) sit
    beside the output (inside it, where only it can be written); the record is removed when the block ends, and
    the lock and the folders made for it too when nothing was written. ``announce``: a file already there is
    replaced with a :class:`Replacing` warning, when the new one is moved into place.
    """
    from filelock import FileLock, Timeout

    output = Path(output).absolute()
    key = (str(output), threading.get_ident())
    with _held_lock:
        nested = key in _held or _other_rank()
        if nested:
            _held[key] = _held.get(key, 0) + 1
    if nested:
        try:
            yield output
        finally:
            with _held_lock:
                _held[key] -= 1
                if not _held[key]:
                    del _held[key]
        return
    made = _missing_parents(output.parent)
    lock_path, owner_path = _lock_files(output)
    with writing(lock_path, "the output's lock", inside="/"):
        output.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lock_path), timeout=0, thread_local=False)
    try:
        lock.acquire()
    except Timeout:  # (an OSError itself, in some versions of filelock)
        raise OutputInUse(f"{output}: {what or 'this output'} is being written by {_who(_owner(owner_path))} — wait "
                          "for it to finish, or write elsewhere") from None
    except OSError as exc:  # a folder that cannot be written
        raise write_failure(lock_path, "the output's lock", exc, inside="/") or exc from exc
    try:
        left = _owner(owner_path)
        if left and left.get("pid") != os.getpid():  # its process let the lock go without removing its record
            warnings.warn(f"{output}: taking over from {_who(left)}, which stopped without finishing",
                          TakenOver, stacklevel=3)
        try:  # who holds it, for the message of a second run; the lock itself is what holds the output
            write_json_atomic(owner_path, {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time(),
                                           "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])[:200]})
        except WriteFailed:  # a full disk: the run itself then says so, where it writes
            pass
        with _held_lock:
            _held[key] = 1
        if announce and output.is_file():
            _announce.add(str(output))
        try:
            yield output
        finally:
            with _held_lock:
                del _held[key]
            _announce.discard(str(output))
            owner_path.unlink(missing_ok=True)
    finally:
        lock.release()
        if not output.exists():  # refused, or failed before writing: leave no trace
            lock_path.unlink(missing_ok=True)
            for folder in made:
                try:
                    folder.rmdir()
                except OSError:
                    break
