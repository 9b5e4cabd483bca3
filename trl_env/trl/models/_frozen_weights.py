"""Frozen weights cast once per ``generate`` call, not once per decode step, under autocast.

Autocast keeps a cast copy only of weights that require gradients (its cache is for leaf tensors
with ``requires_grad``). The frozen base weights of a LoRA model do not, so under bfloat16 autocast
every ``nn.Linear`` call re-casts its float32 weight: once per layer per decode step. On a CPU,
where a turn of 32 tokens is mostly decode steps, that made sampling under autocast slower than
sampling in float32 (``benchmarks/grpo_step_profile.py``).

:func:`frozen_weights_cast_for_autocast` casts those weights once, for the duration of a block,
and puts the float32 originals back after it. Only ``nn.Linear`` weights and biases that do not
require gradients are cast, and only to the dtype autocast would use, so every matmul sees the very
values it saw before (autocast's cast is the same rounding): the outputs are unchanged. A weight
an ``nn.Embedding`` also holds (tied input and output embeddings) is left alone, because the
embedding lookup does not autocast.

Example:
    >>> import torch
    >>> layer = torch.nn.Linear(4, 4).requires_grad_(False)
    >>> with torch.autocast("cpu", dtype=torch.bfloat16):
    ...     with frozen_weights_cast_for_autocast(layer):
    ...         inside = layer.weight.dtype
    >>> inside, layer.weight.dtype
    (torch.bfloat16, torch.float32)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["frozen_weights_cast_for_autocast"]


@contextlib.contextmanager
def frozen_weights_cast_for_autocast(model: torch.nn.Module) -> Iterator[int]:
    """Within an autocast region, hold ``model``'s frozen float32 linear weights in its dtype.

    Does nothing outside autocast, for a model whose weights are not float32, or for a model with
    sharded parameters (DeepSpeed ZeRO-3, FSDP's ``DTensor``), whose storage must not be replaced.

    Args:
        model: The model about to run (generation: no gradients flow through the cast copies).

    Yields:
        How many parameters were cast (0 when nothing was done).
    """
    device_type = _device_type(model)
    if device_type is None or not torch.is_autocast_enabled(device_type):
        yield 0
        return
    dtype = torch.get_autocast_dtype(device_type)
    originals: list[tuple[torch.nn.Parameter, torch.Tensor]] = []
    try:
        for parameter in _frozen_linear_parameters(model):
            if parameter.dtype == torch.float32:
                originals.append((parameter, parameter.data))
                parameter.data = parameter.data.to(dtype)
        yield len(originals)
    finally:
        for parameter, original in originals:
            parameter.data = original


def _device_type(model: torch.nn.Module) -> str | None:
    parameter = next(model.parameters(), None)
    return None if parameter is None else parameter.device.type


def _frozen_linear_parameters(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """Weights and biases of ``nn.Linear`` layers that need no gradient and no other module holds."""
    embedded = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    found: dict[int, torch.nn.Parameter] = {}
    for module in model.modules():
        if not isinstance(module, torch.nn.Linear):
            continue
        for parameter in (module.weight, module.bias):
            if parameter is None or parameter.requires_grad or id(parameter) in embedded:
                continue
            if hasattr(parameter, "ds_id") or type(parameter.data) is not torch.Tensor:
                return []  # sharded (ZeRO-3 or DTensor): leave the whole model alone
            found[id(parameter)] = parameter
    return list(found.values())
