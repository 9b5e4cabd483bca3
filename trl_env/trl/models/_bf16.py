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

LoRA adapters are folded in as well (``merge_lora=True``, the default): a peft LoRA layer's copy
is ``bfloat16(W + scaling * B @ A)`` (the sum taken in float32, as peft's own ``merge`` does) and
the layer runs as its base layer while inside. That removes the two small adapter matmuls of every
adapted linear at every decode step (420 of a SmolLM2 decode step's 631 matmul calls). It is not
bitwise the unmerged computation: the adapter's contribution is rounded into the weight instead of
being added to the output in bfloat16, a difference of the size of bfloat16's own rounding
(``tests/trl/test_bf16.py`` bounds it). Layers whose forward merging would change (DoRA, a LoRA
bias, active dropout, several layers deep, already merged or disabled) run unmerged.

Where PyTorch's oneDNN ops run and match ``F.linear`` bit for bit (checked once per process),
each copy of a plain ``nn.Linear`` (not a subclass with its own forward, no trainable bias) is also
packed once into oneDNN's blocked layout and the layer runs on it while inside (``prepack=True``,
the default; see :mod:`~trl_env.trl.models._onednn_linear`): ``F.linear`` re-packs the weight at
every call, a good part of a decode step's matmuls. The same numbers bit for bit on the shapes
checked (``tests/trl/test_bf16.py``: a whole model's logits).

Copies are rebuilt when a weight is replaced or edited in place through the tensor (its version
counter moves); an edit through ``.data`` is not seen (call ``clear``). A merged copy is rebuilt
too when its adapters change: it keeps a copy of the adapter weights it was made from and compares
them in full, since fused optimizers (``adamw_torch_fused``) update in place without moving the
version counter. Weights that require a
gradient (LoRA adapters, or every weight in full fine-tuning) are never copied, and a model with
DoRA layers or sharded weights is left alone.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

import torch

from trl_env.trl.models._onednn_linear import (
    PackedLinearForward,
    onednn_packing_available,
    shared_casts,
)

__all__ = [
    "FrozenBF16Weights",
    "bf16_autocast_active",
    "default_bf16",
    "skip_redundant_lora_input_casts",
]


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


def skip_redundant_lora_input_casts(model: torch.nn.Module) -> int:
    """Stop peft casting LoRA inputs to float32 where bfloat16 autocast casts them straight back.

    peft casts the input of each LoRA adapter to the adapter's dtype (float32); under bf16
    autocast the adapter's matmul casts it back to bfloat16. A bfloat16 input (the attention
    output entering ``o_proj``, the MLP's entering ``down_proj``) was copied twice for nothing, in
    the forward pass, again when gradient checkpointing recomputes it, and in the backward pass.
    Skipping the cast is exact (a bfloat16 -> float32 -> bfloat16 round trip changes no value:
    same logits and gradients bitwise, ``tests/trl/test_bf16.py``). Only layers whose base weight
    and adapters are all float32 (without autocast their inputs are float32 already) and that
    have no LoRA dropout (it would scale a bfloat16 input by a bfloat16-rounded factor) change.

    Returns:
        The number of layers changed.

    Example:
        >>> skip_redundant_lora_input_casts(torch.nn.Linear(2, 2))  # no LoRA layer: nothing to do
        0
    """
    try:
        from peft.tuners.lora.layer import LoraLayer
    except ImportError:  # peft is optional
        return 0
    changed = 0
    for module in model.modules():
        if not isinstance(module, LoraLayer):
            continue
        weights = [module.get_base_layer().weight, *module.lora_A.parameters()]
        weights += list(module.lora_B.parameters())
        # A dropout on a bfloat16 input scales by 1/(1-p) rounded to bfloat16: not the same.
        no_dropout = all(
            isinstance(dropout, torch.nn.Identity) or dropout.p == 0
            for dropout in module.lora_dropout.values()
        )
        if no_dropout and all(w.dtype == torch.float32 for w in weights):
            module.cast_input_dtype_enabled = False
            changed += 1
    return changed


def _sharded(weight: torch.Tensor) -> bool:
    return hasattr(weight, "ds_id") or type(weight.data) is not torch.Tensor


def _uses_dora(model: torch.nn.Module) -> bool:
    """Whether a peft DoRA layer is in ``model`` (it reads its base weight's norm itself, from the
    weight as it finds it: a bfloat16 copy would change its numbers)."""
    return any(
        isinstance(getattr(module, "use_dora", None), dict) and any(module.use_dora.values())
        for module in model.modules()
    )


def _active_lora_adapters(lora: Any) -> list[str]:
    """The adapters a peft LoRA layer's forward adds (active ones it holds weights for)."""
    return [name for name in lora.active_adapters if name in lora.lora_A]


def _mergeable(lora: Any) -> bool:
    """Whether folding this peft LoRA layer's adapters into its base weight keeps its forward."""
    if (
        lora.merged
        or lora.disable_adapters
        or getattr(lora, "fan_in_fan_out", False)
        or type(lora.base_layer) is not torch.nn.Linear  # nested wrappers, quantized layers
    ):
        return False
    for name in _active_lora_adapters(lora):
        dropout = lora.lora_dropout[name]
        if (
            name in getattr(lora, "lora_variant", {})  # DoRA and other variants
            or getattr(lora.lora_B[name], "bias", None) is not None
            or (lora.training and not isinstance(dropout, torch.nn.Identity) and dropout.p > 0)
        ):
            return False
    return True


def _mergeable_loras(model: torch.nn.Module) -> dict[int, Any]:
    """``id(base linear) -> its peft LoRA layer`` for the layers :func:`_mergeable` accepts."""
    try:
        from peft.tuners.lora.layer import Linear as LoraLinear
    except ImportError:  # peft is optional
        return {}
    return {
        id(module.base_layer): module
        for module in model.modules()
        if isinstance(module, LoraLinear) and _mergeable(module)
    }


def _adapter_state(lora: Any) -> tuple[Any, ...]:
    """What a merged copy was made from: the active adapters, their scaling, and a copy of their
    weights (compared in full: fused optimizers update in place without moving the version
    counter, and a few sampled values can miss a step). LoRA weights are small: ``r * (in + out)``
    values per layer."""
    return tuple(
        (
            name,
            float(lora.scaling[name]),
            lora.lora_A[name].weight.detach().clone(),
            lora.lora_B[name].weight.detach().clone(),
        )
        for name in _active_lora_adapters(lora)
    )


def _same_adapters(made_from: tuple[Any, ...], lora: Any) -> bool:
    names = _active_lora_adapters(lora)
    return len(made_from) == len(names) and all(
        name == made_name
        and float(lora.scaling[name]) == scaling
        and torch.equal(lora.lora_A[name].weight, a)
        and torch.equal(lora.lora_B[name].weight, b)
        for name, (made_name, scaling, a, b) in zip(names, made_from, strict=True)
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

    def __init__(self, *, merge_lora: bool = True, prepack: bool = True) -> None:
        self.merge_lora = merge_lora
        self.prepack = prepack
        self._casts = shared_casts()  # one bf16 cast of an input read by several layers
        # id(module) -> (the float32 weight, its version then, the adapters' state then, the
        # bfloat16 copy, its packed forward or None); the weight is held weakly and compared by
        # identity, so a reused id() or storage never matches.
        self._copies: dict[
            int,
            tuple[
                weakref.ref[Any],
                int,
                tuple[Any, ...],
                torch.nn.Parameter,
                PackedLinearForward | None,
            ],
        ] = {}

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

    def _copy_for(
        self, module: torch.nn.Linear, lora: Any = None
    ) -> tuple[torch.nn.Parameter, PackedLinearForward | None]:
        weight = module.weight
        cached = self._copies.get(id(module))
        if (
            cached is None
            or cached[0]() is not weight
            or cached[1] != weight._version
            or (cached[2] != () if lora is None else not _same_adapters(cached[2], lora))
        ):
            adapters = _adapter_state(lora) if lora is not None else ()
            with torch.no_grad(), torch.autocast(weight.device.type, enabled=False):
                merged = weight.detach()
                if lora is not None:
                    merged = merged.clone()
                    for name in _active_lora_adapters(lora):
                        merged += lora.get_delta_weight(name).to(merged.dtype)
                copy = torch.nn.Parameter(merged.to(torch.bfloat16), requires_grad=False)
                packed = None
                # Only nn.Linear's own forward (subclasses add logic) with a bias that cannot
                # change under the copy (the packed layer keeps a bf16 copy of it).
                plain = type(module).forward is torch.nn.Linear.forward
                bias = module.bias
                if (
                    self.prepack
                    and plain
                    and (bias is None or not bias.requires_grad)
                    and onednn_packing_available()
                ):
                    packed = PackedLinearForward(copy, bias, self._casts)
            cached = (weakref.ref(weight), weight._version, adapters, copy, packed)
            self._copies[id(module)] = cached
        return cached[3], cached[4]

    @contextlib.contextmanager
    def swapped_in(self, model: torch.nn.Module) -> Iterator[None]:
        """Inside: every frozen float32 ``nn.Linear`` weight of ``model`` is its bfloat16 copy.

        Only for code that runs under bfloat16 autocast: outside autocast, a float32 input meets
        a bfloat16 weight and ``F.linear`` raises.
        """
        modules = self._frozen_linears(model)
        loras = _mergeable_loras(model) if self.merge_lora and modules else {}
        originals: list[tuple[torch.nn.Linear, torch.nn.Parameter]] = []
        packed_modules: list[torch.nn.Linear] = []
        merged: list[Any] = []
        try:
            for module in modules:
                lora = loras.get(id(module))
                copy, packed = self._copy_for(module, lora)
                originals.append((module, module._parameters["weight"]))
                module._parameters["weight"] = copy
                # A forward set on the instance (accelerate's hooks) is not ours to replace.
                if packed is not None and "forward" not in module.__dict__:
                    module.forward = packed  # type: ignore[method-assign]
                    packed_modules.append(module)
                if lora is not None:
                    # The adapters are in the copy: the layer runs as its base layer (peft's
                    # forward takes this branch for disabled adapters).
                    merged.append(lora)
                    lora._disable_adapters = True
            yield
        finally:
            # Plain attribute and dict writes: they cannot fail, so every original goes back.
            for lora in merged:
                lora._disable_adapters = False
            for module in packed_modules:
                del module.forward
            self._casts.clear()
            for module, weight in reversed(originals):
                module._parameters["weight"] = weight
        live = {id(module) for module in modules}
        for stale in set(self._copies) - live:
            del self._copies[stale]

    def clear(self) -> None:
        """Drop every copy (the memory of the frozen weights in bfloat16)."""
        self._copies.clear()
