"""Fast path ``lora_addmm``: LoRA layers that add their adapter term inside one matmul (training
on CPUs, under bfloat16 autocast).

**Replaces**: peft's ``lora.Linear.forward`` (set on each layer instance for the duration of
``train()``, removed afterwards).
**Gain**: a forward and backward of the SmolLM2 LoRA model on 8 x 737 tokens took 11.2-11.7 s
with peft's forward and 10.5 s with the fused addition, then 10.6-10.8 s against 11.2-11.3 s with
the shared input cast below (*ad hoc*, ``docs/real_models.md``).
**Depends on**: CPU bfloat16 autocast (``bf16=True`` on a CPU; off otherwise), every LoRA layer
plain (float32 base and adapters, no DoRA or other variant, no LoRA bias, no dropout; else the
layer refuses for the whole model); peft's ``lora.Linear`` internals (``lora_A``, ``lora_B``,
``scaling``, ``active_adapters``) at the tested peft versions
(:mod:`trl_env.trl.fast._versions`).

peft's LoRA ``Linear`` computes ``result + lora_B(lora_A(x)) * scaling``: the rank-``r`` product is
written out at the layer's full output width, then multiplied by ``scaling`` and added to the base
output, each a pass over a ``rows x out`` activation. In the training pass of a multi-turn episode
those activations are large (8 rows of 737 tokens through SmolLM2's 1,536-wide MLP: 18 MB each in
bfloat16), and on a CPU such elementwise passes run at memory speed: the scaling, the addition and
the adapter's output matmul of the MLP's two LoRA layers took about as long as the MLP's own
matmuls (``torch.profiler`` on the step of ``benchmarks/grpo_step_profile.py``), in the forward
pass, again when gradient checkpointing recomputes it, and in the backward pass.

:func:`fuse_lora_additions` has each plain LoRA layer compute ``addmm(result, lora_A(x) * scaling,
lora_B.weight.T)`` instead: the scaling is applied at rank ``r`` (16 columns instead of 1,536) and
the addition is the matmul's own accumulation. The same sum, rounded differently: under bfloat16
autocast the rank-``r`` activation is rounded to bfloat16 (as in peft) and so is its scaled copy
(exact for a power-of-two scaling), and the adapter term is accumulated in float32 into the base
output and rounded once, where peft rounds the full-width product, the scaled product and the sum
each to bfloat16 (``tests/trl/test_lora_addmm.py`` bounds the difference).

Under bfloat16 autocast these layers also cast a float32 input once for all of them: autocast
casts the input of every linear layer separately, so the query, key and value projections and
their adapters cast the same normalised activation six times (the MLP's gate and up projections
four), in the forward pass and again when gradient checkpointing recomputes it. The shared cast
gives each reader its own autograd edge that converts its gradient to float32, as autocast's cast
does, so the gradients are summed in float32 as before: bitwise the same numbers.
"""

from __future__ import annotations

from typing import Any

import torch

from trl_env.trl.fast._input_cast import SharedInputCast

__all__ = ["fuse_lora_additions", "lora_addmm_refusal", "unfuse_lora_additions"]


def _plain(lora: Any) -> bool:
    """Whether ``lora``'s adapters are vanilla LoRA that :func:`_fused_forward` computes."""
    if getattr(lora, "fan_in_fan_out", False) or type(lora.base_layer) is not torch.nn.Linear:
        return False
    weights = [lora.base_layer.weight, *lora.lora_A.parameters(), *lora.lora_B.parameters()]
    if any(weight.dtype != torch.float32 for weight in weights):
        return False  # peft casts between dtypes there; this forward does not
    for name in lora.lora_A:
        dropout = lora.lora_dropout[name]
        if (
            name in getattr(lora, "lora_variant", {})  # DoRA and other variants
            or getattr(lora.lora_B[name], "bias", None) is not None
            or not isinstance(lora.lora_A[name], torch.nn.Linear)
            or not (isinstance(dropout, torch.nn.Identity) or dropout.p == 0)
        ):
            return False
    return True


def _fused_forward(lora: Any, shared_cast: SharedInputCast) -> Any:
    """``lora``'s forward with each adapter term added by one ``addmm`` (peft's otherwise)."""
    peft_forward = type(lora).forward

    def forward(x: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        if args or kwargs or lora.disable_adapters or lora.merged or not _plain(lora):
            return peft_forward(lora, x, *args, **kwargs)  # merged, disabled, mixed batches, ...
        # What autocast would give each matmul, cast once; one autograd edge per reader.
        result = lora.base_layer(shared_cast(x))
        for name in lora.active_adapters:
            if name not in lora.lora_A:
                continue
            down = lora.lora_A[name](shared_cast(x)) * lora.scaling[name]  # r columns: cheap
            up = lora.lora_B[name].weight
            flat = result.reshape(-1, result.shape[-1])
            flat = torch.addmm(flat, down.reshape(-1, down.shape[-1]), up.t())
            result = flat.view(result.shape)
        return result

    return forward


def fuse_lora_additions(model: torch.nn.Module) -> int:
    """Have every plain peft LoRA ``Linear`` of ``model`` add its adapter term inside one matmul
    (see the module docstring). Layers with DoRA or another variant, a LoRA bias, active dropout
    or a forward already replaced on the instance keep peft's.

    Returns:
        The number of layers changed.

    Example:
        >>> fuse_lora_additions(torch.nn.Linear(2, 2))  # no LoRA layer: nothing to do
        0
    """
    try:
        from peft.tuners.lora.layer import Linear as LoraLinear
    except ImportError:  # peft is optional
        return 0
    changed, shared_cast = 0, SharedInputCast()
    for module in model.modules():
        if type(module) is LoraLinear and "forward" not in module.__dict__ and _plain(module):
            module.forward = _fused_forward(module, shared_cast)
            module.forward.fused_lora_addition = True  # type: ignore[attr-defined]
            changed += 1
    return changed


def unfuse_lora_additions(model: torch.nn.Module) -> int:
    """Give every layer :func:`fuse_lora_additions` changed peft's forward back (the model then
    holds no closure of ours: ``copy.deepcopy`` and ``pickle`` see peft's layers).

    Returns:
        The number of layers restored.

    Example:
        >>> unfuse_lora_additions(torch.nn.Linear(2, 2))
        0
    """
    restored = 0
    for module in model.modules():
        forward = module.__dict__.get("forward")
        if getattr(forward, "fused_lora_addition", False):
            del module.forward
            restored += 1
    return restored


def lora_addmm_refusal(model: torch.nn.Module) -> str | None:
    """Why the fused addition cannot serve ``model`` exactly as planned (a LoRA layer it would
    leave to peft: DoRA or another variant, a LoRA bias, dropout, other dtypes, a forward already
    replaced), or None.

    Example:
        >>> lora_addmm_refusal(torch.nn.Linear(2, 2)) is None
        True
    """
    try:
        from peft.tuners.lora.layer import Linear as LoraLinear
        from peft.tuners.lora.layer import LoraLayer
    except ImportError:  # peft is optional
        return None
    layers = [module for module in model.modules() if isinstance(module, LoraLayer)]
    odd = [
        module
        for module in layers
        if type(module) is not LoraLinear or "forward" in module.__dict__ or not _plain(module)
    ]
    if odd:
        return (
            f"{len(odd)} of its {len(layers)} LoRA layers are not plain float32 LoRA linears "
            "(DoRA or another variant, a LoRA bias, dropout, other dtypes, or a forward already "
            "replaced)"
        )
    return None
