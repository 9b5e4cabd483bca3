"""Activation checkpointing settings for LoRA on a CPU: reentrant, which keeps far less memory.

transformers 5 checkpoints without reentrance by default, and TRL keeps that. With peft's LoRA
layers that kept most activations anyway: one training forward of SmolLM2-135M with LoRA on
8 x 1024 tokens peaked at 6.59 GB of RSS non-reentrant and 2.99 GB reentrant (2.40 GB for the
model without LoRA; ``benchmarks/checkpointing_memory.py``, AMD EPYC, float32). The gradients are the
same (``tests/trl/test_train_recipe.py``). Off a CPU the libraries' default stays.

Example:
    >>> lora_checkpointing_kwargs(lora=True, on_cpu=True)
    {'use_reentrant': True}
    >>> lora_checkpointing_kwargs(lora=True, on_cpu=False) is None
    True
"""

from __future__ import annotations

__all__ = ["lora_checkpointing_kwargs"]


def lora_checkpointing_kwargs(lora: bool, on_cpu: bool) -> dict[str, bool] | None:
    """``gradient_checkpointing_kwargs`` for a run (``None``: the libraries' default)."""
    return {"use_reentrant": True} if lora and on_cpu else None
