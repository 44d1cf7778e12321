"""The processes of one run: under torchrun or ``accelerate launch`` several processes train together
(``WORLD_SIZE``); these helpers tell a process whether it is the main one, run setup on the main
process first, and join the process group (Accelerate's :class:`~accelerate.PartialState`)."""

from __future__ import annotations

import contextlib


def world_size() -> int:
    """Processes training together (torchrun / accelerate launch set ``WORLD_SIZE``); 1 otherwise."""
    import os

    return max(1, int(os.environ.get("WORLD_SIZE", "1") or 1))


def process_index() -> int:
    """This process's rank among those training together (0 alone)."""
    import os

    return int(os.environ.get("RANK", "0") or 0)


def process_seed(seed: int) -> int:
    """A seed of this process's own random draws (masking): ``seed`` alone and on the main process, another one on
    each other process, so that the processes do not draw the same masks for their different rows."""
    return int(seed) + 1_000_033 * process_index()


def process_state():
    """Accelerate's process state (joins the process group under torchrun / accelerate launch) for the process's
    device: on the CPU it must be created with ``cpu=True``, or several processes each think they are alone."""
    from accelerate import PartialState

    from xlsent.utils.device import current_device, device_kind

    state = PartialState(cpu=device_kind(current_device()) == "cpu")
    if world_size() > 1 and not _LEAVE_AT_EXIT:
        import atexit

        atexit.register(_leave_process_group)
        _LEAVE_AT_EXIT.append(True)
    return state


#: whether this process leaves its process group at exit (registered once, when it joins one)
_LEAVE_AT_EXIT: list[bool] = []


def _leave_process_group() -> None:
    """The process group destroyed while the interpreter is still whole: left to the interpreter's own teardown,
    gloo's worker threads can abort a process that finished its work ("terminate called without an active
    exception", SIGABRT; pytorch/pytorch#190489)."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def main_first():
    """A context in which the main process runs first and the others after it (a run folder's setup: its
    checkpoint folder, a learned tokenizer, caches), under several processes; nothing otherwise."""
    if world_size() == 1:
        return contextlib.nullcontext()
    return process_state().main_process_first()


def is_main_process() -> bool:
    """True in a single process, and in the main one of several."""
    return world_size() == 1 or process_state().is_main_process


def wait_for_everyone() -> None:
    """A barrier under several processes; nothing in one."""
    if world_size() > 1:
        process_state().wait_for_everyone()
