"""Fast path ``onednn_prepack``: frozen bfloat16 linear layers with their weights pre-packed for
oneDNN (CPUs, inside ``frozen_bf16``).

**Replaces**: ``F.linear`` on the frozen bfloat16 copies of ``frozen_bf16`` while generating.
**Gain**: a ``576 -> 1536`` SmolLM2 decode matmul 170 to 113 us, the LM head 2.0 to 1.2 ms, a
whole decode step at 500 columns 64 to 55 ms (*ad hoc*, ``docs/real_models.md``). The rollout's
generation on equal work: 1.1-4.2 s longer without it in every round of two turn shapes (AMD
EPYC Zen 4, bf16, ``benchmarks/results/generation_fast_paths_zen4/``).
**Depends on**: ``frozen_bf16`` (it packs that layer's copies; nothing to pack without it);
torch's private oneDNN ops ``torch.ops.mkldnn._reorder_linear_weight`` and
``_linear_pointwise`` (tested torch versions: :mod:`trl_env.trl.fast._versions`), and a CPU whose
oneDNN has bfloat16 kernels; :func:`onednn_packing_available` checks once per process that they
give ``F.linear``'s numbers bit for bit, and the layer stays off where they do not.

On a CPU, ``F.linear`` in bfloat16 hands the weight to oneDNN in PyTorch's row-major layout, and
oneDNN re-packs it into its blocked layout on every call. At a decode step (a few rows) that
re-packing is a good part of the matmul: a ``576 -> 1536`` SmolLM2 projection took about 170 us
with ``F.linear`` and 113 us with a weight packed once, bitwise the same output; the 49,152-row
LM head 2.0 ms and 1.2 ms. ``torch.ops.mkldnn._linear_pointwise`` with a weight from
``torch.ops.mkldnn._reorder_linear_weight`` is what ``torch.compile`` (Inductor, weight freezing)
runs for frozen linear layers on CPUs.

:class:`PackedLinearForward` is a ``forward`` for an ``nn.Linear`` whose weight is frozen: it does
what ``F.linear`` does under bfloat16 autocast (the input cast to bfloat16, a bfloat16 output) with
the packed weight. :func:`onednn_packing_available` checks once that this PyTorch build has the
ops and that they give ``F.linear``'s numbers bit for bit.
"""

from __future__ import annotations

import functools

import torch

from trl_env.trl.fast._input_cast import SharedInputCast

__all__ = ["PackedLinearForward", "onednn_packing_available"]


@functools.cache
def onednn_packing_available() -> bool:
    """Whether packed oneDNN bfloat16 linear layers run here and match ``F.linear`` exactly.

    Example:
        >>> isinstance(onednn_packing_available(), bool)
        True
    """
    try:
        if not (
            torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
        ):
            return False
        generator = torch.Generator().manual_seed(0)
        weight = torch.randn(24, 16, generator=generator).to(torch.bfloat16)
        bias = torch.randn(24, generator=generator).to(torch.bfloat16)
        x = torch.randn(3, 2, 16, generator=generator).to(torch.bfloat16)
        packed = PackedLinearForward(weight, bias)
        return torch.equal(packed(x), torch.nn.functional.linear(x, weight, bias))
    except (AttributeError, RuntimeError, NotImplementedError):
        return False


class PackedLinearForward:
    """``F.linear(x, weight, bias)`` as bfloat16 autocast runs it, with ``weight`` packed once.

    Args:
        weight: The frozen bfloat16 weight (``[out, in]``).
        bias: Its bfloat16 bias, or None.
        casts: Shared by layers that may read the same float32 input (a
            :class:`~trl_env.trl.fast._input_cast.SharedInputCast`); None: each call casts its own.

    Example:
        >>> weight = torch.randn(4, 3).to(torch.bfloat16)
        >>> x = torch.randn(2, 3)
        >>> if onednn_packing_available():
        ...     with torch.autocast("cpu", dtype=torch.bfloat16):
        ...         assert torch.equal(PackedLinearForward(weight, None)(x), torch.nn.functional.linear(x, weight))
    """

    def __init__(
        self, weight: torch.Tensor, bias: torch.Tensor | None, casts: SharedInputCast | None = None
    ) -> None:
        self.packed = torch.ops.mkldnn._reorder_linear_weight(weight.detach())
        self.bias = None if bias is None else bias.detach().to(torch.bfloat16)
        self.casts = casts

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.bfloat16:  # what autocast does to a linear layer's input
            x = self.casts(x) if self.casts is not None else x
            if x.dtype != torch.bfloat16:  # no autocast around the call, or not float32
                x = x.to(torch.bfloat16)
        return torch.ops.mkldnn._linear_pointwise(
            x.contiguous(), self.packed, self.bias, "none", [], ""
        )
