"""One bfloat16 cast of an input read by several layers: :class:`SharedInputCast`, used by the
fast paths ``lora_addmm`` (training) and ``onednn_prepack`` (generation).

Under bfloat16 autocast every ``nn.Linear`` casts its float32 input itself, so the query, key and
value projections (with their LoRA adapters: six readers) and the MLP's gate and up projections
cast the same normalised activation several times. The layers of these fast paths ask this
object instead, which casts once per input (the same values: ``x.to(torch.bfloat16)``, as
autocast's cast).
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from trl_env.trl.fast._checks import bf16_autocast_active

__all__ = ["SharedInputCast"]


class _CastAlias(torch.autograd.Function):
    """``cast`` (``x`` cast to bfloat16) as one reader's input: its gradient reaches ``x`` in
    float32, as through autocast's own cast."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, cast: torch.Tensor) -> torch.Tensor:
        ctx.dtype = x.dtype
        return cast.view_as(cast)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad.to(ctx.dtype), None


class SharedInputCast:
    """The bfloat16 cast of the last float32 input under bfloat16 autocast, for every layer that
    reads it (compared by identity and in-place version; the input is held weakly).

    Outside bfloat16 autocast, or for an input that is not float32, the input itself. Under
    autograd each reader gets its own edge (:class:`_CastAlias`) that converts its gradient to
    float32, as autocast's own cast does; under ``no_grad`` the cast itself.

    Example:
        >>> cast = SharedInputCast()
        >>> x = torch.randn(2, 3)
        >>> with torch.autocast("cpu", dtype=torch.bfloat16):
        ...     first, second = cast(x), cast(x)
        >>> first.dtype, first is second, cast(x) is x  # outside autocast: the input
        (torch.bfloat16, True, True)
    """

    def __init__(self) -> None:
        self._input: weakref.ref[torch.Tensor] | None = None
        self._version = -1
        self._cast: torch.Tensor | None = None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float32 or not bf16_autocast_active(x.device.type):
            return x
        version = -1 if x.is_inference() else x._version
        if self._input is None or self._input() is not x or self._version != version:
            with torch.autocast(x.device.type, enabled=False):
                cast = x.detach().to(torch.bfloat16)
            self._input, self._version, self._cast = weakref.ref(x), version, cast
        assert self._cast is not None
        if torch.is_grad_enabled() and x.requires_grad:
            return _CastAlias.apply(x, self._cast)
        return self._cast

    def clear(self) -> None:
        """Forget the last input and its cast (the cast's memory)."""
        self._input = self._cast = None
        self._version = -1
