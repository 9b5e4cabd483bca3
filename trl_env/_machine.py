"""The machine a run or a figure comes from: the CPU's model and the flags that decide its speed,
whether it has bfloat16 units, and the peak memory of this process.

A figure means little without its machine: on a 2-core CPU with AMX a LoRA GRPO step of
SmolLM2-135M took 24 s, while on an AMD EPYC with AVX2 only (bfloat16 emulated, a bf16 matmul
about 5x slower than float32) a float32 step of the same size took 5-6 minutes. So every results
file and the last line of a run name the CPU (:func:`cpu_summary`), and defaults that depend on
the machine (bf16) are read from it (:func:`cpu_has_bf16_units`), never from a recipe.

A CPU's flags are not the whole story: ``ONEDNN_MAX_CPU_ISA`` (oneDNN's own switch, which torch's
bf16 matmuls go through) can cap the instructions oneDNN uses below the CPU's. Capped under
``AVX512_CORE_BF16``, bf16 is no longer done in hardware: at ``AVX512_CORE`` oneDNN emulates it,
and under that torch does not hand bf16 to oneDNN at all and falls back to a reference loop. On
an AMD EPYC with ``avx512_bf16`` (family 25 model 17), a 512x576 by 576x1536 bf16 matmul took
2.1-2.3 ms uncapped, 12.0-12.6 ms capped at ``AVX512_CORE`` and 373-382 ms capped at ``AVX2``
(float32: 4.8-6.5 ms; two runs of ``benchmarks/bf16_matmul.py``). So a cap below bf16 counts as "no bf16 units",
and the summary line names it.

Nothing here imports torch.

Example:
    >>> summary = cpu_summary(threads=2)
    >>> "torch threads" in summary
    True
"""

from __future__ import annotations

import os
import platform
import sys
from functools import cache
from pathlib import Path

__all__ = [
    "BF16_EMULATED_COST",
    "ONEDNN_ISAS_EMULATING_BF16",
    "ONEDNN_ISAS_WITHOUT_BF16",
    "SPEED_FLAGS",
    "bf16_emulated_cost",
    "cpu_flags",
    "cpu_has_bf16_units",
    "cpu_model",
    "cpu_summary",
    "machine_record",
    "onednn_isa_cap",
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


ONEDNN_ISAS_WITHOUT_BF16 = frozenset(
    {"SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX2_VNNI_2", "AVX512_CORE", "AVX512_CORE_VNNI"}
)
"""``ONEDNN_MAX_CPU_ISA`` values under which a CPU with ``avx512_bf16`` or AMX does bf16 matmuls
without its bf16 units (``AVX2_VNNI_2``'s bf16 needs ``avx_ne_convert``, which those CPUs lack)."""

ONEDNN_ISAS_EMULATING_BF16 = frozenset({"AVX512_CORE", "AVX512_CORE_VNNI"})
"""The caps of :data:`ONEDNN_ISAS_WITHOUT_BF16` where oneDNN still takes bf16, emulated; under
the others torch loops."""


@cache
def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return ""


def cpu_model() -> str:
    """The CPU's model name, with its family and model numbers where ``/proc/cpuinfo`` has them
    (a VM's name can be as bare as "AMD EPYC", which covers CPUs with and without bf16 units);
    the platform's processor string elsewhere."""
    fields: dict[str, str] = {}
    for line in _cpuinfo().splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip().lower(), value.strip())
    if name := fields.get("model name"):
        family, model = fields.get("cpu family"), fields.get("model")
        return f"{name} (family {family} model {model})" if family and model else name
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_flags() -> frozenset[str]:
    """Every flag ``/proc/cpuinfo`` lists for the first CPU (empty elsewhere)."""
    for line in _cpuinfo().splitlines():
        if line.lower().startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def onednn_isa_cap() -> str | None:
    """The instruction set oneDNN is capped at (``ONEDNN_MAX_CPU_ISA``, upper-cased), or ``None``.

    ``DNNL_MAX_CPU_ISA``, the variable's older name, is read when the new one is not set;
    ``ALL`` or ``DEFAULT`` is no cap. ``ONEDNN_MAX_CPU_ISA=avx2`` gives ``"AVX2"``.
    """
    for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):
        value = os.environ.get(name, "").strip().upper()
        if value:
            return None if value in ("ALL", "DEFAULT") else value
    return None


def cpu_has_bf16_units() -> bool:
    """Whether the CPU runs bfloat16 matmuls in hardware (AMX or AVX-512 bf16).

    ``False`` also where ``ONEDNN_MAX_CPU_ISA`` caps oneDNN below its bf16 kernels (see the
    module's docstring), and on Apple silicon (no ``/proc/cpuinfo``): bf16 autocast is not what
    makes a run there faster.
    """
    flags = cpu_flags()
    if onednn_isa_cap() in ONEDNN_ISAS_WITHOUT_BF16:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def _capped_bf16(cap: str) -> str:
    """What bf16 matmuls become under a oneDNN cap, in words."""
    if cap in ONEDNN_ISAS_EMULATING_BF16:
        return "bf16 emulated"
    return "bf16 in a loop, no oneDNN" if cap in ONEDNN_ISAS_WITHOUT_BF16 else "bf16 as the CPU has"


def bf16_emulated_cost() -> str:
    """What ``--bf16`` costs here, on a CPU where :func:`cpu_has_bf16_units` is ``False``: the
    measured cost of the cap that disabled the units, or :data:`BF16_EMULATED_COST`."""
    cap = onednn_isa_cap()
    if cap in ONEDNN_ISAS_WITHOUT_BF16 and {"amx_bf16", "avx512_bf16"} & cpu_flags():
        return (
            f"ONEDNN_MAX_CPU_ISA={cap} keeps oneDNN from this CPU's bfloat16 units, so bfloat16 is "
            f"emulated ({_capped_bf16(cap)}): on an AMD EPYC with avx512_bf16, a bf16 matmul of "
            "SmolLM2's MLP shape took 2.0-2.3x float32's time capped at AVX512_CORE and 76-80x "
            "capped at AVX2, in two runs (benchmarks/bf16_matmul.py)"
        )
    return BF16_EMULATED_COST


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
        if cap := onednn_isa_cap():
            parts.append(f"oneDNN capped at {cap} by ONEDNN_MAX_CPU_ISA ({_capped_bf16(cap)})")
    else:  # no /proc/cpuinfo (macOS, Windows): the flags are unknown, not absent
        parts = [cpu_model(), "flags unknown"]
    if threads is not None:
        parts.append(f"{threads} torch threads")
    return ", ".join(parts)


def machine_record(threads: int | None = None) -> dict[str, object]:
    """The machine as a results file records it: CPU model, speed flags, bf16 units, threads
    (and ``onednn_max_cpu_isa`` where that cap is set)."""
    flags = cpu_flags()
    record: dict[str, object] = {
        "cpu": cpu_model(),
        "cpu_flags": [flag for flag in SPEED_FLAGS if flag in flags],
        "bf16_units": cpu_has_bf16_units(),
        "torch_threads": threads,
        "summary": cpu_summary(threads),
    }
    if cap := onednn_isa_cap():  # only when set, so uncapped records stay as they were
        record["onednn_max_cpu_isa"] = cap
    return record


def peak_rss_gb() -> float:
    """The peak resident memory of this process so far, in GB (10^9 bytes; 0.0 on Windows)."""
    try:
        import resource  # POSIX only
    except ImportError:
        return 0.0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / 1e9 if sys.platform == "darwin" else peak * 1024 / 1e9
