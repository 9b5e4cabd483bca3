"""The machine a run or a figure comes from: the CPU's model and the flags that decide its speed,
whether it has bfloat16 units, and the peak memory of this process.

A figure means little without its machine: on a 2-core CPU with AMX a LoRA GRPO step of
SmolLM2-135M took 24 s, while on an AMD EPYC with AVX2 only (bfloat16 emulated, a bf16 matmul
about 5x slower than float32) a float32 step of the same size took 5-6 minutes. So every results
file and the last line of a run name the CPU (:func:`cpu_summary`), and defaults that depend on
the machine (bf16) are read from it (:func:`cpu_has_bf16_units`), never from a recipe.

Nothing here imports torch.

Example:
    >>> summary = cpu_summary(threads=2)
    >>> "torch threads" in summary
    True
"""

from __future__ import annotations

import platform
import sys
from functools import cache
from pathlib import Path

__all__ = [
    "BF16_EMULATED_COST",
    "SPEED_FLAGS",
    "cpu_flags",
    "cpu_has_bf16_units",
    "cpu_model",
    "cpu_summary",
    "machine_record",
    "peak_rss_gb",
]

SPEED_FLAGS = ("amx_bf16", "avx512_bf16", "avx512f", "avx2")
"""The CPU flags that decide how fast a model trains here (bf16 units, vector width)."""

BF16_EMULATED_COST = (
    "this CPU has no bfloat16 units (no amx_bf16 or avx512_bf16), so bfloat16 is emulated: a bf16 "
    "matmul measured about 5x slower than float32 on an AMD EPYC with AVX2 only, and a forced-bf16 "
    "LoRA GRPO step of SmolLM2-135M had not finished after 10 minutes there (float32: 5-6 minutes)"
)
"""What ``--bf16`` costs on a CPU without bf16 units (measured, see docs/real_models.md)."""


@cache
def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return ""


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; the platform's processor string elsewhere)."""
    for line in _cpuinfo().splitlines():
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_flags() -> frozenset[str]:
    """Every flag ``/proc/cpuinfo`` lists for the first CPU (empty elsewhere)."""
    for line in _cpuinfo().splitlines():
        if line.lower().startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def cpu_has_bf16_units() -> bool:
    """Whether the CPU runs bfloat16 matmuls in hardware (AMX or AVX-512 bf16).

    On Apple silicon (no ``/proc/cpuinfo``) the answer is ``False``: bf16 autocast is not what
    makes a run there faster.
    """
    flags = cpu_flags()
    return "amx_bf16" in flags or "avx512_bf16" in flags


def cpu_summary(threads: int | None = None) -> str:
    """One line that names the CPU, the flags of :data:`SPEED_FLAGS` it has, and the threads.

    Args:
        threads: Torch threads of the run (left out of the line if ``None``).
    """
    flags = cpu_flags()
    have = [flag for flag in SPEED_FLAGS if flag in flags]
    lacks = [flag for flag in ("amx_bf16", "avx512_bf16") if flag not in flags]
    if flags:
        parts = [cpu_model(), f"flags: {' '.join(have) or 'none of ' + ' '.join(SPEED_FLAGS)}"]
        if lacks:
            parts.append(f"no {'/'.join(lacks)}")
    else:  # no /proc/cpuinfo (macOS, Windows): the flags are unknown, not absent
        parts = [cpu_model(), "flags unknown"]
    if threads is not None:
        parts.append(f"{threads} torch threads")
    return ", ".join(parts)


def machine_record(threads: int | None = None) -> dict[str, object]:
    """The machine as a results file records it: CPU model, speed flags, bf16 units, threads."""
    flags = cpu_flags()
    return {
        "cpu": cpu_model(),
        "cpu_flags": [flag for flag in SPEED_FLAGS if flag in flags],
        "bf16_units": cpu_has_bf16_units(),
        "torch_threads": threads,
        "summary": cpu_summary(threads),
    }


def peak_rss_gb() -> float:
    """The peak resident memory of this process so far, in GB (10^9 bytes; 0.0 on Windows)."""
    try:
        import resource  # POSIX only
    except ImportError:
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / 1e9 if sys.platform == "darwin" else peak * 1024 / 1e9
