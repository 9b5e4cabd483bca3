"""Giving freed memory back to the operating system between the phases of a run.

A training run on a CPU alternates phases whose tensors have other sizes every time: a rollout's
KV caches and bf16 weight copies, a training pass's activations, a held-out eval in float32.
glibc's allocator keeps what a phase frees in its heap for reuse, but a later block of another
size often fits none of the holes, so the heap, and the process's resident memory with it, grows
(likely the cause of the peak RSS creeping up over a 55-minute SmolLM2 Hangman run, from 6.2 GB
to 8.7 GB). :func:`release_freed_memory` returns the free pages of the heap (glibc's
``malloc_trim(0)``), so each phase starts from what is live. ``trl-env train`` calls it after
every rollout, every training step and every held-out eval (``TRL_ENV_MALLOC_TRIM=0`` in the
environment before the run starts turns it off, to measure it): over 12 steps of that run's
command, with a held-out eval at step 6, the peak fell from 7.85 to 6.72 GB, the median step rose
5.4% and the wall time 2.3% (one pair of runs: ``benchmarks/malloc_trim.py``; docs/multiturn.md).

Example:
    >>> release_freed_memory() in (True, False)
    True
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from collections.abc import Callable

__all__ = ["release_freed_memory"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``; ``None`` off Linux, with another C library, or when turned off."""
    if sys.platform != "linux" or os.environ.get("TRL_ENV_MALLOC_TRIM", "1") == "0":
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # musl, or no glibc: nothing to call
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def release_freed_memory() -> bool:
    """Give the allocator's free pages back to the operating system (glibc's ``malloc_trim(0)``).

    Returns:
        Whether any memory was returned (``False`` also where there is no glibc to ask).
    """
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
