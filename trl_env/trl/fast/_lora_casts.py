"""Fast path ``lora_input_casts``: LoRA layers skip peft's input cast where bfloat16 autocast casts
straight back (training under ``bf16``).

**Replaces**: peft's cast of each LoRA adapter's input to the adapter's dtype (float32), through
peft's own public switch, :func:`peft.helpers.disable_input_dtype_casting`, entered when
``train()`` starts and left when it ends.
**Gain**: with model-token scoring, the training part of a SmolLM2 LoRA step took 21.3 s before
the two and 14.1 s after them, between two runs (``docs/real_models.md``; not measured alone).
**Depends on**: ``bf16`` (off otherwise: without autocast nothing casts back); every LoRA layer
with float32 base and adapter weights and no LoRA dropout (else it refuses for the whole model:
peft's switch turns every layer's cast off, and such a layer needs its cast); peft's
``cast_input_dtype_enabled`` at the tested peft versions (:mod:`trl_env.trl.fast._versions`).

Under bfloat16 autocast the adapter's matmul casts its input back to bfloat16, so a bfloat16
input (the attention output entering ``o_proj``, the MLP's entering ``down_proj``) was copied
twice for nothing, in the forward pass, again when gradient checkpointing recomputes it, and in
the backward pass. Skipping the cast is exact: a bfloat16 -> float32 -> bfloat16 round trip
changes no value (same logits and gradients bitwise, ``tests/trl/test_bf16.py``). A layer whose
weights are not all float32 meets inputs of other dtypes without autocast, and a dropout would
scale a bfloat16 input by a bfloat16-rounded factor: either needs peft's cast.
"""

from __future__ import annotations

import contextlib

import torch

__all__ = ["lora_input_casts_refusal", "skipped_lora_input_casts"]


def _tuner_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    try:
        from peft.tuners.tuners_utils import BaseTunerLayer
    except ImportError:  # peft is optional
        return []
    return [module for module in model.modules() if isinstance(module, BaseTunerLayer)]


def lora_input_casts_refusal(model: torch.nn.Module) -> str | None:
    """Why skipping the casts would change ``model``'s numbers (a layer that needs its cast), or
    None.

    Example:
        >>> lora_input_casts_refusal(torch.nn.Linear(2, 2)) is None  # no LoRA layer
        True
    """
    from peft.tuners.lora.layer import LoraLayer

    needing: list[str] = []
    for module in _tuner_layers(model):
        if not isinstance(module, LoraLayer):
            needing.append(f"a {type(module).__name__} layer (not LoRA)")
            continue
        weights = [module.get_base_layer().weight, *module.lora_A.parameters()]
        weights += list(module.lora_B.parameters())
        if any(weight.dtype != torch.float32 for weight in weights):
            needing.append("a LoRA layer whose weights are not all float32")
        elif not all(
            isinstance(dropout, torch.nn.Identity) or dropout.p == 0
            for dropout in module.lora_dropout.values()
        ):
            needing.append("a LoRA dropout (it would scale a bfloat16 input)")
    if needing:
        return f"it has {sorted(set(needing))[0]}, which needs peft's cast"
    return None


def skipped_lora_input_casts(model: torch.nn.Module) -> contextlib.AbstractContextManager[None]:
    """Inside: no LoRA layer of ``model`` casts its input (peft's
    ``disable_input_dtype_casting``); outside, each layer's setting as it was.

    Check :func:`lora_input_casts_refusal` first: this turns every layer's cast off.

    Example:
        >>> with skipped_lora_input_casts(torch.nn.Linear(2, 2)):  # no LoRA layer: nothing to do
        ...     pass
    """
    if not _tuner_layers(model):
        return contextlib.nullcontext()
    from peft.helpers import disable_input_dtype_casting

    return disable_input_dtype_casting(model)
