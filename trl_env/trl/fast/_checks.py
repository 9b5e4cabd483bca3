"""What the fast paths check before they install, and the one warning a refusal gives.

Every fast path knows the models, devices and dtypes it computes exactly for. Where it is
installed it checks them; a layer that does not apply (bfloat16 autocast off, no LoRA layer)
stays off silently, a layer that would apply but cannot serve this model exactly (a sliding
window, a forward without ``position_ids``, DoRA, a LoRA dropout, float64 on MPS) refuses with
one :class:`~trl_env.error.FastPathWarning` per model, layer and reason, and the stock path runs.
"""

from __future__ import annotations

import inspect
import warnings
import weakref
from typing import Any

import torch

from trl_env.error import FastPathWarning

__all__ = [
    "accepts_position_ids",
    "bf16_autocast_active",
    "full_attention_only",
    "model_device_type",
    "refuse",
]

_SAID: weakref.WeakKeyDictionary[Any, set[tuple[str, str]]] = weakref.WeakKeyDictionary()
"""Per model, the refusals already said (a rollout builds a generator per batch)."""


def refuse(model: Any, layer: str, reason: str) -> None:
    """Warn, once per ``model``, ``layer`` and ``reason``, that ``layer`` stays off."""
    try:
        said = _SAID.setdefault(model, set())
    except TypeError:  # not weakly referenceable: say it every time
        said = set()
    if (layer, reason) in said:
        return
    said.add((layer, reason))
    warnings.warn(
        f"fast path {layer!r} is off for this model: {reason}. The stock path runs instead "
        f"(as with fast_paths='auto,-{layer}'); nothing else changes",
        FastPathWarning,
        stacklevel=3,
    )


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


def model_device_type(model: Any) -> str:
    """``"cpu"``, ``"cuda"``, ``"mps"``, ...: where ``model``'s first parameter lives (``"cpu"``
    for a model without parameters). What ``fast_paths="auto"`` decides from.

    Example:
        >>> model_device_type(torch.nn.Linear(2, 2))
        'cpu'
    """
    parameter = next(iter(model.parameters()), None) if hasattr(model, "parameters") else None
    return parameter.device.type if parameter is not None else "cpu"


def _base_model(model: Any) -> Any:
    model = getattr(model, "module", model)  # DDP / accelerate wrappers
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def accepts_position_ids(model: Any) -> bool:
    """Whether ``model``'s forward (under DDP and PEFT wrappers) takes ``position_ids``."""
    try:
        return "position_ids" in inspect.signature(_base_model(model).forward).parameters
    except (TypeError, ValueError, AttributeError):
        return False


def full_attention_only(config: Any) -> bool:
    """Whether every layer of a model with this config attends to its whole past (no sliding
    window, chunked, linear or shared layers: their caches are not plain columns of states, and
    a sliding mask counts columns, which the fast paths move).

    Example:
        >>> from transformers import Qwen3Config
        >>> full_attention_only(Qwen3Config()), full_attention_only(
        ...     Qwen3Config(use_sliding_window=True, sliding_window=64, max_window_layers=0)
        ... )
        (True, False)
    """
    if config is None:
        return False
    text = config.get_text_config(decoder=True) if hasattr(config, "get_text_config") else config
    try:
        from transformers.cache_utils import get_layer_types_and_kwargs

        layer_types = list(get_layer_types_and_kwargs(text)[0])
    except (ImportError, AttributeError, TypeError):  # older transformers, unusual configs
        layer_types = list(getattr(text, "layer_types", None) or [])
        if not layer_types:
            windowed = ("sliding_window", "attention_chunk_size")
            return all(getattr(text, name, None) is None for name in windowed)
    return all(layer_type == "full_attention" for layer_type in layer_types)


def model_config(model: Any) -> Any:
    """``model.config`` under DDP and PEFT wrappers, or None."""
    return getattr(getattr(model, "module", model), "config", None)
