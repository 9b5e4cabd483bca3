"""bfloat16 on CPUs: whether it pays here (:func:`default_bf16`, the default of ``trl-env train``
and ``trl-env sft`` for a real model).

The bfloat16 fast paths of generation and training (frozen bfloat16 weight copies, LoRA
additions fused into one addmm) live in :mod:`trl_env.trl.fast`.
"""

from __future__ import annotations

import torch

__all__ = ["default_bf16"]


def default_bf16() -> bool:
    """Whether bfloat16 autocast pays here: a CUDA GPU with bf16, or a CPU with bf16 matmul units.

    On CPUs with ``amx_bf16`` (or ``avx512_bf16``) oneDNN runs bf16 matmuls in hardware (the
    training part of a LoRA GRPO step of SmolLM2 took 1.54x less time on an AMX CPU,
    ``benchmarks/grpo_step_profile.py``); elsewhere bf16 on a CPU is emulated and slower.
    """
    if torch.cuda.is_available():
        return bool(torch.cuda.is_bf16_supported())
    from trl_env._machine import cpu_has_bf16_units

    return cpu_has_bf16_units()
