"""Fast path ``inverse_cdf_sampling``: sample a turn's tokens by inverse CDF instead of
``torch.multinomial``.

**Replaces**: ``transformers``' sampling step in the rollout's ``generate`` calls (plain
temperature, top-k, top-p and min-p sampling; other settings keep ``transformers``' own).
**Gain**: on a CPU ``torch.multinomial`` draws one exponential random number per vocabulary
entry: for SmolLM2's 49,152 entries and 8 rows 6.6 ms a token, about a tenth of a decode step;
inverse-CDF sampling about 0.3 ms (*ad hoc*). With the reserved cache, 5 turns of 32 tokens for 8
rows went from 12.8 to 10.8 s (*ad hoc*, ``docs/real_models.md``). The rollout's generation on
equal work took longer without it in five rounds of six (one 0.3 s shorter), by a median gain
of 0.8 s on each of two turn shapes: about the run-to-run noise (AMD EPYC Zen 4, bf16,
``benchmarks/results/generation_fast_paths_zen4/``).
**Depends on**: a device with float64 (not MPS: the layer refuses there); ``transformers``'
``_prepare_generation_config`` and the order of its logits warpers
(``GenerationMixin._get_logits_processor``) at the tested versions
(:mod:`trl_env.trl.fast._versions`).

It samples the same distribution (``tests/trl/test_sampling.py``) from another stream of random
numbers than ``torch.multinomial``'s, so a seed gives other tokens than ``transformers``'
sampling does: with the layer off, a seed gives ``transformers``' tokens.

``transformers`` applies custom logits processors before its sampling warpers (temperature,
top-k, top-p, min-p), so the sampler cannot simply come last. :func:`sampling_plan` instead turns
a sampling config into a greedy one and hands the warpers to the rollout's
:class:`~trl_env.trl.models._sampling.TurnSampler`, which applies them in ``transformers``' order,
samples with :func:`sample_inverse_cdf`, and leaves only the sampled token selectable: greedy
decoding then picks it. Settings with other warpers (typical-p, epsilon, eta, top-h, watermarks,
renormalization) keep ``transformers``' own sampling.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import torch
from transformers import GenerationConfig, LogitsProcessor
from transformers.generation.logits_process import (
    MinPLogitsWarper,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

__all__ = ["SamplingPlan", "sample_inverse_cdf", "sampling_plan"]

_WARPERS_KEPT_BY_TRANSFORMERS = {
    "typical_p": lambda value: value is not None and value < 1.0,
    "epsilon_cutoff": lambda value: value is not None and 0.0 < value < 1.0,
    "eta_cutoff": lambda value: value is not None and 0.0 < value < 1.0,
    "top_h": lambda value: value is not None,
    "watermarking_config": lambda value: value is not None,
    "renormalize_logits": lambda value: bool(value),
    "num_beams": lambda value: value is not None and value > 1,
    "num_return_sequences": lambda value: value is not None and value > 1,
}
"""Settings under which sampling stays ``transformers``' (what this layer does not do)."""


@dataclass
class SamplingPlan:
    """How one ``generate`` call selects tokens.

    Attributes:
        generation_config: The config to pass to ``generate``: greedy when ``warpers`` is not None.
        warpers: The sampling warpers ``TurnSampler`` applies before it samples, or None
            when ``generate`` selects tokens itself (greedy settings, or sampling it must do).
    """

    generation_config: GenerationConfig
    warpers: list[LogitsProcessor] | None


def sampling_plan(config: GenerationConfig, model: Any = None) -> SamplingPlan:
    """Move plain sampling (temperature, top-k, top-p, min-p) out of ``generate``.

    Args:
        config: The config the call passes to ``generate``.
        model: The model it calls: ``generate`` fills the fields ``config`` leaves unset from
            the model's own generation config, then from ``transformers``' defaults (``top_k``
            50), and so does this.

    Example:
        >>> plan = sampling_plan(GenerationConfig(do_sample=True, temperature=0.7, top_k=50))
        >>> plan.generation_config.do_sample, [type(w).__name__ for w in plan.warpers]
        (False, ['TemperatureLogitsWarper', 'TopKLogitsWarper'])
        >>> sampling_plan(GenerationConfig(do_sample=True, typical_p=0.9)).warpers is None
        True
    """
    given, prepare = config, getattr(model, "_prepare_generation_config", None)
    if prepare is not None:  # what generate() will use (config, then the model's, then defaults)
        config = prepare(copy.deepcopy(config))[0]
    if not config.do_sample or any(
        keeps(getattr(config, name, None)) for name, keeps in _WARPERS_KEPT_BY_TRANSFORMERS.items()
    ):
        return SamplingPlan(given, None)
    # transformers' order (GenerationMixin._get_logits_processor), one row kept at least.
    warpers: list[LogitsProcessor] = []
    if config.temperature is not None and config.temperature != 1.0:
        warpers.append(TemperatureLogitsWarper(config.temperature))
    if config.top_k is not None and config.top_k != 0:
        warpers.append(TopKLogitsWarper(top_k=config.top_k, min_tokens_to_keep=1))
    if config.top_p is not None and config.top_p < 1.0:
        warpers.append(TopPLogitsWarper(top_p=config.top_p, min_tokens_to_keep=1))
    if config.min_p is not None:
        warpers.append(MinPLogitsWarper(min_p=config.min_p, min_tokens_to_keep=1))
    greedy = GenerationConfig.from_dict(
        {
            **given.to_dict(),
            "do_sample": False,
            # transformers' defaults: not refilled from the model's config, not warned about
            # (a min_p of None is refilled, and greedy decoding ignores it).
            "temperature": 1.0,
            "top_k": 50,
            "top_p": 1.0,
            "min_p": None,
        }
    )
    return SamplingPlan(greedy, warpers)


def sample_inverse_cdf(scores: torch.Tensor) -> torch.Tensor:
    """One token per row of ``scores`` (logits), drawn from ``softmax(scores)``.

    Tokens of probability 0 (score ``-inf``) are never drawn.

    Example:
        >>> scores = torch.tensor([[0.0, float("-inf"), 0.0], [float("-inf"), float("-inf"), 1.0]])
        >>> sample_inverse_cdf(scores)[1].item()
        2
    """
    probabilities = torch.softmax(scores.double(), dim=-1)
    cumulative = probabilities.cumsum(dim=-1)
    target = torch.rand(scores.shape[0], 1, dtype=torch.float64, device=scores.device)
    tokens = torch.searchsorted(cumulative, target * cumulative[:, -1:], right=True)
    # Rounding can put the target on the total: take the last token that can be drawn.
    vocabulary = scores.shape[-1]
    last_possible = vocabulary - 1 - (probabilities > 0).flip(-1).int().argmax(dim=-1, keepdim=True)
    return torch.minimum(tokens, last_possible).squeeze(1)
