"""How many CPU threads torch uses: by default the cores this process may run on, shared among
the processes of one launch (``accelerate launch`` sets ``LOCAL_WORLD_SIZE``).

torch's own default is every core of the machine for every process: two processes on two cores
then spend their time fighting over them (a two-minute run took 37 minutes).
"""

from __future__ import annotations

import os
import sys

__all__ = ["default_threads", "set_torch_threads"]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def _processes() -> int:
    for name in ("LOCAL_WORLD_SIZE", "WORLD_SIZE"):
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    return 1


def default_threads() -> tuple[int, str]:
    """The default thread count and why (``"2 cores / 1 process"``).

    Example:
        >>> threads, why = default_threads()
        >>> threads >= 1 and "core" in why
        True
    """
    cores, processes = _cores(), _processes()
    plural = "es" if processes != 1 else ""
    return max(1, cores // processes), f"{cores} cores / {processes} process{plural}"


def set_torch_threads(requested: int | None, *, announce: bool = True) -> int:
    """Set torch's thread count (``requested``, else the default); say so on stderr if
    ``announce``.

    Raises:
        ValueError: If ``requested`` is not a positive number.
    """
    if requested is not None and requested < 1:
        raise ValueError(f"--threads must be a positive integer, got {requested}")
    import torch  # here, not above: the command line imports this module to describe --threads

    threads, why = (requested, "--threads") if requested else default_threads()
    torch.set_num_threads(threads)
    if not announce:
        return threads
    print(
        f"trl-env: using {threads} torch thread{'s' if threads != 1 else ''} ({why}; "
        "--threads N to change)",
        file=sys.stderr,
        flush=True,
    )
    return threads
