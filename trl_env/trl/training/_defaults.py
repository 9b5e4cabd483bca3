"""The defaults of a ``trl-env train`` run, by model kind (the built-in tiny model or a real
one) and machine (a CUDA GPU or a CPU): what :meth:`TrainConfig.resolved
<trl_env.trl.training.TrainConfig.resolved>` fills in for the fields left at ``None``."""

from __future__ import annotations

from typing import Any

from trl_env._configs import MAX_NEW_TOKENS_PER_TURN
from trl_env._demos import DEFAULT_SYSTEM_PROMPT

__all__ = ["run_defaults"]

_TINY_DEFAULTS: dict[str, Any] = {
    "learning_rate": 1e-3,
    "per_device_train_batch_size": 64,
    "max_completion_length": 16,
    "max_new_tokens_per_turn": 8,
    "warm_start_steps": 600,
    "max_steps": 400,
    # A 2-layer model reads a prompt as little more than a bag of tokens: a long fixed system
    # message only dilutes the few tokens that matter (and slows every step).
    "system_prompt": None,
}
"""Settings of the built-in tiny model (no ``--model``), tuned on TextLargestNumber-v0 on a
2-core CPU (see ``docs/learning.md``)."""

_MODEL_DEFAULTS: dict[str, Any] = {
    "learning_rate": 1e-6,
    "per_device_train_batch_size": 8,
    "max_completion_length": 1024,
    "max_new_tokens_per_turn": MAX_NEW_TOKENS_PER_TURN,
    "warm_start_steps": 0,
    "max_steps": 500,
    "system_prompt": DEFAULT_SYSTEM_PROMPT,
}
"""Settings of a real model (``--model``): TRL's GRPO learning rate, room for reasoning."""

_CPU_MODEL_DEFAULTS: dict[str, Any] = {
    "max_completion_length": 256,
    "max_new_tokens_per_turn": 32,
    "max_steps": 100,
}
"""A real model without a GPU: a run that ends in about an hour (``benchmarks/grpo_step_profile.py``;
at 256 tokens per turn, 1024 per episode, 500 steps SmolLM2-135M took ~17 hours on 2 cores).
Short replies, the format every catalogue env asks for, fit in 32 tokens."""

_LORA_LEARNING_RATE = 1e-5
_CPU_LORA_LEARNING_RATE = 2e-4
"""LoRA on a CPU: the learning rate of the recipe that learned (docs/real_models.md); with few
steps, 1e-5 barely moves the adapters."""


def _has_gpu() -> bool:
    """Whether training will run on a CUDA GPU (the CPU defaults apply otherwise)."""
    import torch

    return bool(torch.cuda.is_available())


def run_defaults(*, tiny_model: bool, lora: bool) -> dict[str, Any]:
    """The value of each defaulted ``TrainConfig`` field for this model kind and machine.

    Example:
        >>> run_defaults(tiny_model=True, lora=False)["learning_rate"]
        0.001
    """
    if tiny_model:
        # Tuned in float32 (the tiny model's speed is overhead, not matmuls).
        return {**_TINY_DEFAULTS, "bf16": False}
    from trl_env.trl.models._bf16 import default_bf16

    on_cpu = not _has_gpu()
    # bf16: a GPU's TRL default where it supports bf16; on a CPU with AMX it is what lets LoRA
    # SmolLM2's step run 2.66x faster (benchmarks/grpo_step_profile.py; docs/real_models.md).
    defaults = {**_MODEL_DEFAULTS, "bf16": default_bf16()}
    if on_cpu:
        defaults.update(_CPU_MODEL_DEFAULTS)
    if lora:
        defaults["learning_rate"] = _CPU_LORA_LEARNING_RATE if on_cpu else _LORA_LEARNING_RATE
    return defaults
