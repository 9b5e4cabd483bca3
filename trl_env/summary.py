"""Summary statistics of played episodes, computed once for ``trl-env eval`` and the rollout's
training metrics (``env/success_rate``, ``env/mean_return``, ...).

Example:
    >>> from trl_env.episode import Episode, Task
    >>> won = Episode(Task("TextWordle-v0", "0"), turns=3, success=True, episode_return=1.0,
    ...               ended_by="terminated")
    >>> lost = Episode(Task("TextWordle-v0", "1"), turns=6, ended_by="truncated")
    >>> summary = summarize("TextWordle-v0", [won, lost])
    >>> summary.success_rate, summary.mean_turns
    (0.5, 4.5)
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trl_env.episode import ENDED_BY_ENV, Episode

__all__ = ["EnvSummary", "confidence_interval", "summarize"]


@dataclass
class EnvSummary:
    """The statistics of one env's episodes (see :func:`summarize`)."""

    env_id: str
    episodes: int
    success_rate: float
    mean_return: float
    return_ci95: float | None
    mean_turns: float
    invalid_action_rate: float
    errors: int
    ended_by: dict[str, int]

    @property
    def error_rate(self) -> float:
        """Share of episodes that ended with an env (or policy) error."""
        return self.errors / self.episodes if self.episodes else 0.0

    @property
    def ended_by_limit_rate(self) -> float:
        """Share of episodes the env did not end itself (a limit, the policy or an error did)."""
        limited = sum(n for how, n in self.ended_by.items() if how not in ENDED_BY_ENV)
        return limited / self.episodes if self.episodes else 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return dataclasses.asdict(self)


# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def confidence_interval(values: Sequence[float]) -> float | None:
    """Half-width of the 95% confidence interval of the mean (Student's t); ``None`` if n < 2.

    Example:
        >>> round(confidence_interval([0.0, 1.0, 0.0, 1.0]), 3)
        0.919
    """
    n = len(values)
    if n < 2:
        return None
    df = n - 1
    t = _T95[df - 1] if df <= len(_T95) else 1.959964 + 2.37 / df
    return float(t * np.std(values, ddof=1) / math.sqrt(n))


def summarize(env_id: str, episodes: Sequence[Episode]) -> EnvSummary:
    """Success rate, mean return with its 95% CI, mean turns and invalid-action rate.

    The invalid-action rate is invalid replies over all turns played.
    """
    n = len(episodes)
    returns = [e.episode_return for e in episodes]
    turns = sum(e.turns for e in episodes)
    return EnvSummary(
        env_id=env_id,
        episodes=n,
        success_rate=sum(e.success for e in episodes) / n if n else 0.0,
        mean_return=float(np.mean(returns)) if n else 0.0,
        return_ci95=confidence_interval(returns),
        mean_turns=turns / n if n else 0.0,
        invalid_action_rate=sum(e.invalid_actions for e in episodes) / turns if turns else 0.0,
        errors=sum(e.error is not None for e in episodes),
        ended_by=dict(Counter(e.ended_by or "error" for e in episodes)),
    )
