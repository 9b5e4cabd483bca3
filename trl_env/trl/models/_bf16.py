"""bfloat16 on CPUs: whether it pays here, and frozen weights held in it while generating.

:func:`default_bf16` says whether bfloat16 autocast pays on this machine (the default of
``trl-env train`` and ``trl-env sft`` for a real model).

:class:`FrozenBF16Weights`: under ``torch.autocast("cpu", dtype=torch.bfloat16)`` every
``nn.Linear`` casts its float32 weight to bfloat16 on every call. Autocast caches that cast only
for weights that require a gradient, so the frozen base weights of a LoRA model (and a tied
``lm_head``: 28M of SmolLM2's 135M parameters) are cast again at every decode step, once per
generated token. :class:`FrozenBF16Weights` keeps one bfloat16 copy of each frozen float32 linear
weight and swaps it in for the duration of a ``generate`` call. The numbers are unchanged: autocast
would have rounded the same float32 weight to the same bfloat16 values (round to nearest even in
both cases), and the activations it meets are cast as before. Only the repeated cast goes.

A tied ``lm_head`` gets a bfloat16 parameter of its own while inside, so the input embedding (the
same float32 tensor) still feeds the residual stream in float32, as under plain autocast.

Copies are rebuilt when a weight is replaced or edited in place through the tensor (its version
counter moves); an edit through ``.data`` is not seen (call ``clear``). Weights that require a
gradient (LoRA adapters, or every weight in full fine-tuning) are never copied, and a model with
DoRA layers or sharded weights is left alone.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

__all__ = ["FrozenBF16Weights", "bf16_autocast_active", "default_bf16"]


def default_bf16() -> bool:
    """Whether bfloat16 autocast pays here: a CUDA GPU with bf16, or a CPU with bf16 matmul units.

    On CPUs with ``amx_bf16`` (or ``avx512_bf16``) oneDNN runs bf16 matmuls in hardware (the
    training part of a LoRA GRPO step of SmolLM2 took 1.54x less time on an AMX CPU,
    ``benchmarks/grpo_step_profile.py``); elsewhere bf16 on a CPU is emulated and slower.
    """
    if torch.cuda.is_available():
        return bool(torch.cuda.is_bf16_supported())
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def bf16_autocast_active(device_type: str = "cpu") -> bool:
    """Whether bfloat16 autocast is on for ``device_type`` here.

    Example:
        >>> with torch.autocast("cpu", dtype=torch.bfloat16):
        ...     bf16_autocast_active()
        True
        >>> bf16_autocast_active()
        False
    """
    return torch.is_autocast_enabled(device_type) and (
        torch.get_autocast_dtype(device_type) == torch.bfloat16
    )


def _sharded(weight: torch.Tensor) -> bool:
    return hasattr(weight, "ds_id") or type(weight.data) is not torch.Tensor


def _uses_dora(model: torch.nn.Module) -> bool:
    """Whether a peft DoRA layer is in ``model`` (it reads its base weight's norm itself, from the
    weight as it finds it: a bfloat16 copy would change its numbers)."""
    return any(
        isinstance(getattr(module, "use_dora", None), dict) and any(module.use_dora.values())
        for module in model.modules()
    )


class FrozenBF16Weights:
    """bfloat16 copies of a model's frozen float32 linear weights, swapped in on request.

    A copy is made again when its weight is replaced or edited in place through the tensor (its
    version counter moves). Edits through ``.data`` (peft's ``merge_adapter`` does them) do not
    move the counter: call :meth:`clear` after them (``TransformersGenerator.clear_cache`` does).

    Example:
        >>> layer = torch.nn.Linear(4, 4).requires_grad_(False)
        >>> weights = FrozenBF16Weights()
        >>> x = torch.randn(2, 4)
        >>> with torch.autocast("cpu", dtype=torch.bfloat16):
        ...     expected = layer(x)
        ...     with weights.swapped_in(layer):
        ...         swapped = layer(x)
        ...         inside = layer.weight.dtype
        >>> inside, layer.weight.dtype, torch.equal(expected, swapped)
        (torch.bfloat16, torch.float32, True)
    """

    def __init__(self) -> None:
        # id(module) -> (the float32 weight, its version then, the bfloat16 copy); the weight is
        # held weakly and compared by identity, so a reused id() or storage never matches.
        self._copies: dict[int, tuple[weakref.ref[Any], int, torch.nn.Parameter]] = {}

    def _frozen_linears(self, model: torch.nn.Module) -> list[torch.nn.Linear]:
        linears = [module for module in model.modules() if isinstance(module, torch.nn.Linear)]
        if _uses_dora(model) or any(_sharded(module.weight) for module in linears):
            # DeepSpeed ZeRO-3, FSDP's DTensor: their storage is not ours to swap.
            return []
        return [
            module
            for module in linears
            # A registered Parameter (not a parametrization, not an FSDP view) that is frozen.
            if isinstance(module._parameters.get("weight"), torch.nn.Parameter)
            and module._parameters["weight"] is module.weight
            and module.weight.dtype == torch.float32
            and not module.weight.requires_grad
            and module.weight.device.type == "cpu"
        ]

    def _copy_for(self, module: torch.nn.Linear) -> torch.nn.Parameter:
        weight = module.weight
        cached = self._copies.get(id(module))
        if cached is None or cached[0]() is not weight or cached[1] != weight._version:
            copy = torch.nn.Parameter(weight.detach().to(torch.bfloat16), requires_grad=False)
            cached = (weakref.ref(weight), weight._version, copy)
            self._copies[id(module)] = cached
        return cached[2]

    @contextlib.contextmanager
    def swapped_in(self, model: torch.nn.Module) -> Iterator[None]:
        """Inside: every frozen float32 ``nn.Linear`` weight of ``model`` is its bfloat16 copy.

        Only for code that runs under bfloat16 autocast: outside autocast, a float32 input meets
        a bfloat16 weight and ``F.linear`` raises.
        """
        modules = self._frozen_linears(model)
        originals: list[tuple[torch.nn.Linear, torch.nn.Parameter]] = []
        try:
            for module in modules:
                copy = self._copy_for(module)
                originals.append((module, module._parameters["weight"]))
                module._parameters["weight"] = copy
            yield
        finally:
            # Plain dict writes: they cannot fail, so every original goes back.
            for module, weight in reversed(originals):
                module._parameters["weight"] = weight
        live = {id(module) for module in modules}
        for stale in set(self._copies) - live:
            del self._copies[stale]

    def clear(self) -> None:
        """Drop every copy (the memory of the frozen weights in bfloat16)."""
        self._copies.clear()
