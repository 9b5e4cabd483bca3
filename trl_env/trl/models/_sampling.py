"""Token selection for :class:`~trl_env.trl.models.TransformersGenerator`: each sampled token's
log-probability, and sampling by inverse CDF instead of ``torch.multinomial``.

``transformers``' sampling draws each token with ``torch.multinomial``, which on a CPU draws one
exponential random number per vocabulary entry: for SmolLM2's 49,152 entries and 8 rows, 6.6 ms a
token, about a tenth of a decode step of the whole 135M-parameter model (``torch.profiler`` on the
generation of ``benchmarks/grpo_step_profile.py``). Inverse-CDF sampling draws one uniform number per
row and searches the cumulative distribution (about 0.3 ms). It samples the same distribution, from
another stream of random numbers than ``torch.multinomial``'s, so a seed gives other tokens than
``transformers``' sampling does.

``transformers`` applies custom logits processors before its sampling warpers (temperature,
top-k, top-p, min-p), so the sampler cannot simply come last. :func:`sampling_plan` instead turns
a sampling config into a greedy one and hands the warpers to :class:`TurnSampler`, which applies
them in ``transformers``' order, samples, and leaves only the sampled token selectable: greedy
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

__all__ = ["SamplingPlan", "TurnSampler", "sample_inverse_cdf", "sampling_plan"]

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
"""Settings under which sampling stays ``transformers``' (what :class:`TurnSampler` does not do)."""


@dataclass
class SamplingPlan:
    """How one ``generate`` call selects tokens.

    Attributes:
        generation_config: The config to pass to ``generate``: greedy when ``warpers`` is not None.
        warpers: The sampling warpers :class:`TurnSampler` applies before it samples, or None
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


class TurnSampler(LogitsProcessor):
    """Records the log-probability of each token ``generate`` selects, and with ``warpers``
    samples the token itself (see the module docstring).

    ``scores`` are the logits after ``transformers``' processors and before any warper, so
    dividing them by ``temperature`` gives exactly the distribution TRL's loss uses
    (``log_softmax(logits / temperature)``). Only the previous step's distribution is kept, so
    memory is ``batch x vocab`` instead of ``batch x steps x vocab`` (``output_logits`` would need
    gigabytes for a 150k vocabulary).

    Args:
        prompt_length: Columns of ``generate``'s input (nothing is selected before them).
        temperature: The sampling temperature (the recorded log-probabilities use it).
        warpers: From :func:`sampling_plan`; None: ``generate`` selects the tokens.
    """

    def __init__(
        self,
        prompt_length: int,
        temperature: float,
        warpers: list[LogitsProcessor] | None = None,
    ) -> None:
        self.prompt_length = prompt_length
        self.temperature = temperature if temperature > 0 else 1.0
        self.warpers = warpers
        self.steps: list[torch.Tensor] = []
        self._previous: torch.Tensor | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if input_ids.shape[1] > self.prompt_length:
            self.collect(input_ids[:, -1])
        self._previous = torch.log_softmax(scores.float() / self.temperature, dim=-1)
        if self.warpers is None:
            return scores
        warped = scores
        for warper in self.warpers:
            warped = warper(input_ids, warped)
        tokens = sample_inverse_cdf(warped)
        # Only the sampled token stays selectable: greedy decoding picks it.
        chosen = torch.full_like(scores, float("-inf"))
        return chosen.scatter_(1, tokens.unsqueeze(1), 0.0)

    def collect(self, sampled: torch.Tensor) -> None:
        """Record the log-probability of ``sampled`` (one token per row) under the last scores."""
        if self._previous is not None:
            index = sampled.to(self._previous.device).unsqueeze(1)
            self.steps.append(self._previous.gather(1, index).squeeze(1))
            self._previous = None
