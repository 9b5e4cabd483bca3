"""The generation fast paths of one generator: :class:`GenerationFastPaths`.

:class:`~trl_env.trl.models.TransformersGenerator` takes one argument, ``fast_paths``, and asks
this object, inside each ``generate`` call, which layers are on for the model it runs (the
setting resolved on the model's device, minus the layers whose preconditions this model fails),
and for each piece: the weights to run with (``frozen_bf16``, ``onednn_prepack``,
``merged_lora``), the cache to build (``reserved_kv_cache``), the token selection
(``inverse_cdf_sampling``) and the prefill of a group's shared prompt (``shared_prefill``). Nothing is installed outside a ``generate`` call.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from trl_env.trl.fast._checks import (
    accepts_position_ids,
    bf16_autocast_active,
    full_attention_only,
    model_config,
    model_device_type,
    refuse,
)
from trl_env.trl.fast._frozen_bf16 import FrozenBF16Weights, _sharded, _uses_dora
from trl_env.trl.fast._inverse_cdf import SamplingPlan, sampling_plan
from trl_env.trl.fast._merged_lora import MergedLoRAWeights
from trl_env.trl.fast._switch import GENERATION_LAYERS, FastPaths
from trl_env.trl.fast._versions import check_versions

if TYPE_CHECKING:
    from transformers import GenerationConfig

    from trl_env.trl.models._prefix_cache import CacheFactory, PrefixCache

__all__ = ["GenerationFastPaths"]


def _refusal(layer: str, model: Any, device_type: str) -> str | None:
    """Why ``layer`` cannot serve ``model`` exactly, or None (see :mod:`trl_env.trl.fast`)."""
    # Each acts in one dtype only (frozen_bf16 under bf16 autocast, merged_lora without it): a
    # refusal is said only where the layer would act.
    if layer in ("frozen_bf16", "merged_lora") and (
        bf16_autocast_active("cpu") == (layer == "frozen_bf16")
    ):
        if _uses_dora(model):
            return "it has DoRA layers, which read their base weight's norm from the weight"
        if any(_sharded(p) for p in model.parameters()):
            return "its weights are sharded (DeepSpeed ZeRO-3 or FSDP): not ours to swap"
    if layer in ("reserved_kv_cache", "shared_prefill") and not full_attention_only(
        model_config(model)
    ):
        return "not every layer attends to its whole past (sliding window, chunked or linear)"
    if layer == "shared_prefill" and not accepts_position_ids(model):
        return "its forward takes no position_ids (positions would count the padding)"
    if layer == "inverse_cdf_sampling" and device_type == "mps":
        return "MPS has no float64, which the cumulative distribution is summed in"
    return None


class GenerationFastPaths:
    """The generation fast paths of one generator (see the module docstring).

    Args:
        setting: ``"auto"`` (every layer on a CPU, less
            :data:`~trl_env.trl.fast.NOT_ON_FLOAT32_CPUS` on one without bf16 units; none
            elsewhere), ``"on"``, ``"off"``, a setting with layer names, or a
            :class:`~trl_env.trl.fast.FastPaths`.

    Example:
        >>> from transformers import Qwen3Config, Qwen3ForCausalLM
        >>> model = Qwen3ForCausalLM(Qwen3Config(
        ...     vocab_size=16, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
        ...     num_attention_heads=2, num_key_value_heads=1, head_dim=4))
        >>> GenerationFastPaths("on").active(model).enabled  # every layer it can serve
        ('frozen_bf16', 'onednn_prepack', 'merged_lora', 'reserved_kv_cache', 'inverse_cdf_sampling', 'shared_prefill')
        >>> GenerationFastPaths("off").active(model).enabled
        ()
    """

    def __init__(self, setting: str | FastPaths | None = "auto") -> None:
        FastPaths.resolve(setting, "cpu")  # refuse a bad setting now, not at the first call
        self.setting = setting
        self.frozen_bf16 = FrozenBF16Weights()
        self.merged_lora = MergedLoRAWeights()

    def active(self, model: Any) -> FastPaths:
        """The generation layers on for ``model``: the setting on its device, less the layers
        whose preconditions it fails (each refusal said once per model).

        Raises:
            trl_env.error.FastPathVersionError: A layer that is on meets a library outside its
                tested versions.
        """
        device_type = model_device_type(model)
        wanted = FastPaths.resolve(self.setting, device_type)
        flags: dict[str, bool] = {}
        for layer in GENERATION_LAYERS:
            if getattr(wanted, layer):
                check_versions(layer)
                reason = _refusal(layer, model, device_type)
                if reason is not None:
                    refuse(model, layer, reason)
                flags[layer] = reason is None
        return dataclasses.replace(FastPaths.none(), **flags)

    def weights(self, model: Any, active: FastPaths) -> contextlib.AbstractContextManager[Any]:
        """The weights to generate with on a CPU: the frozen bfloat16 copies under bfloat16
        autocast (``frozen_bf16``, packed for oneDNN with ``onednn_prepack``), the float32 copies
        of the LoRA-adapted layers with their adapters folded in without autocast
        (``merged_lora``), else the model's own."""
        if model_device_type(model) != "cpu":
            return contextlib.nullcontext()
        if bf16_autocast_active("cpu"):
            if not active.frozen_bf16:
                return contextlib.nullcontext()
            self.frozen_bf16.prepack = active.onednn_prepack
            return self.frozen_bf16.swapped_in(model)
        if active.merged_lora and not torch.is_autocast_enabled("cpu"):
            return self.merged_lora.swapped_in(model)
        return contextlib.nullcontext()

    @staticmethod
    def cache_factory(active: FastPaths) -> CacheFactory:
        """How the call's key/value caches are built: with reserved room, or ``transformers``'
        own ``DynamicCache``."""
        from trl_env.trl.models._prefix_cache import dynamic_cache

        if not active.reserved_kv_cache:
            return dynamic_cache
        from trl_env.trl.fast._reserved_cache import reserved_cache

        return reserved_cache

    @staticmethod
    def sampling(config: GenerationConfig, model: Any, active: FastPaths) -> SamplingPlan:
        """How the call selects tokens: by inverse CDF (the config made greedy, the warpers
        handed to the rollout's sampler), or as ``generate`` does."""
        if active.inverse_cdf_sampling:
            return sampling_plan(config, model)
        return SamplingPlan(config, None)

    def share_prompt(
        self,
        store: PrefixCache,
        model: Any,
        inputs: Sequence[Sequence[int]],
        pad_token_id: int,
        active: FastPaths,
    ) -> None:
        """Prefill a group's repeated prompt once (``shared_prefill``), into ``store``."""
        if not active.shared_prefill:
            return
        from trl_env.trl.fast._shared_prefill import share_repeated_inputs

        share_repeated_inputs(
            store,
            model,
            inputs,
            pad_token_id,
            new_cache=self.cache_factory(active),
            weights=self.weights(model, active),
        )

    def clear(self) -> None:
        """Drop the weight copies (after weights changed through ``.data``)."""
        self.frozen_bf16.clear()
        self.merged_lora.clear()
