"""The log-probability of each token a turn samples: :class:`TurnSampler`, the rollout's logits
processor in every ``generate`` call of :class:`~trl_env.trl.models.TransformersGenerator`.

With the fast path ``inverse_cdf_sampling`` (:mod:`trl_env.trl.fast._inverse_cdf`) it also
samples the token itself; without it ``generate`` samples as ``transformers`` does.
"""

from __future__ import annotations

import torch
from transformers import LogitsProcessor

from trl_env.trl.fast._inverse_cdf import sample_inverse_cdf

__all__ = ["TurnSampler"]


class TurnSampler(LogitsProcessor):
    """Records the log-probability of each token ``generate`` selects, and with ``warpers``
    samples the token itself by inverse CDF (fast path ``inverse_cdf_sampling``).

    ``scores`` are the logits after ``transformers``' processors and before any warper, so
    dividing them by ``temperature`` gives exactly the distribution TRL's loss uses
    (``log_softmax(logits / temperature)``). Only the previous step's distribution is kept, so
    memory is ``batch x vocab`` instead of ``batch x steps x vocab`` (``output_logits`` would need
    gigabytes for a 150k vocabulary).

    Args:
        prompt_length: Columns of ``generate``'s input (nothing is selected before them).
        temperature: The sampling temperature (the recorded log-probabilities use it).
        warpers: From :func:`~trl_env.trl.fast._inverse_cdf.sampling_plan`; None: ``generate``
            selects the tokens.
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
