"""Fast path ``frozen_bf16``: frozen weights held in bfloat16 while generating (CPU).

**Replaces**: autocast's cast of every frozen float32 ``nn.Linear`` weight to bfloat16 at every
call. Under ``torch.autocast("cpu", dtype=torch.bfloat16)`` autocast caches that cast only for
weights that require a gradient, so the frozen base weights of a LoRA model (and a tied
``lm_head``: 28M of SmolLM2's 135M parameters) are cast again at every decode step, once per
generated token; and each adapted layer runs its adapter as two more small matmuls.
**Gain**: 6 turns of 16 SmolLM2 LoRA rows took 14.44 s with the per-token casts and 9.66 s with
the merged copies (13.90 s and 8.37 s in a second run; ``benchmarks/results/generation_autocast.txt``,
an idle 2-core AMX CPU): 420 of a decode step's 631 matmul calls (the adapters) and the casts go.
**Depends on**: CPU bfloat16 autocast (inactive otherwise: nothing happens); peft's LoRA layer
internals (``_disable_adapters``, ``get_delta_weight``, ``lora_variant``) for merging; the
tested torch and peft versions (:mod:`trl_env.trl.fast._versions`).

:class:`FrozenBF16Weights` keeps one bfloat16 copy of each frozen float32 linear weight and swaps
it in for the duration of a ``generate`` call. The numbers are unchanged: autocast would have
rounded the same float32 weight to the same bfloat16 values (round to nearest even in both
cases), and the activations it meets are cast as before. Only the repeated cast goes.

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
the default; fast path ``onednn_prepack``): ``F.linear`` re-packs the weight at
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

from trl_env.trl.fast._input_cast import SharedInputCast
from trl_env.trl.fast._onednn_linear import PackedLinearForward, onednn_packing_available

__all__ = ["FrozenBF16Weights"]


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

    dtype: torch.dtype = torch.bfloat16
    """The dtype of the copies."""
    only_adapted: bool = False
    """Copy only the layers with LoRA adapters to fold in (a copy of any other layer in the
    model's own dtype would change nothing)."""

    def __init__(self, *, merge_lora: bool = True, prepack: bool = True) -> None:
        self.merge_lora = merge_lora
        self.prepack = prepack
        self._casts = SharedInputCast()  # one bf16 cast of an input read by several layers
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
                copy = torch.nn.Parameter(merged.to(self.dtype), requires_grad=False)
                packed = None
                # Only nn.Linear's own forward (subclasses add logic) with a bias that cannot
                # change under the copy (the packed layer keeps a bf16 copy of it).
                plain = type(module).forward is torch.nn.Linear.forward
                bias = module.bias
                if (
                    self.prepack
                    and self.dtype == torch.bfloat16
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
        """Inside: every frozen float32 ``nn.Linear`` weight of ``model`` (with
        :attr:`only_adapted`, every one with LoRA adapters to fold in) is its copy in
        :attr:`dtype`.

        bfloat16 copies are only for code that runs under bfloat16 autocast: outside autocast, a
        float32 input meets a bfloat16 weight and ``F.linear`` raises.
        """
        modules = self._frozen_linears(model)
        loras = _mergeable_loras(model) if self.merge_lora and modules else {}
        if self.only_adapted:
            modules = [module for module in modules if id(module) in loras]
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
        """Drop every copy (the memory of the copied weights in :attr:`dtype`)."""
        self._copies.clear()
