"""Summary statistics of played episodes, computed once for ``trl-env eval`` and the rollout's
training metrics (``env/success_rate``, ``env/mean_return``, ...).

:func:`summarize` gives one env's success rate (with its 95% Wilson interval,
:func:`wilson_interval`), mean return (with its 95% CI) and more; :func:`add_samples` adds what
``k`` sampled episodes per seed tell (``trl-env eval --samples K``): pass@k, the unbiased
estimator of :func:`pass_at_k`, and avg@k, the mean success over the samples.

Example:
    >>> from trl_env._episode import Episode, Task
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

from trl_env._episode import ENDED_BY_ENV, Episode

__all__ = [
    "EnvSummary",
    "add_samples",
    "confidence_interval",
    "pass_at_k",
    "summarize",
    "summarize_samples",
    "wilson_interval",
]


@dataclass
class EnvSummary:
    """The statistics of one env's episodes (see :func:`summarize`).

    ``success_ci_low`` and ``success_ci_high`` are the 95% Wilson interval of ``success_rate``.
    The sampled figures (``samples`` = k, ``pass_at_k``, ``avg_at_k``, ``avg_return_at_k``) are
    filled by :func:`add_samples` from k sampled episodes per seed; they are ``0`` / ``None``
    for a summary without samples.
    """

    env_id: str
    episodes: int
    success_rate: float
    mean_return: float
    return_ci95: float | None
    mean_turns: float
    invalid_action_rate: float
    errors: int
    ended_by: dict[str, int]
    success_ci_low: float = 0.0
    success_ci_high: float = 1.0
    samples: int = 0
    pass_at_k: float | None = None
    avg_at_k: float | None = None
    avg_return_at_k: float | None = None

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


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95% with the default ``z``).

    Unlike the normal approximation it stays inside [0, 1] and is not empty at 0 or ``n``
    successes; with no trials at all it is the whole range ``(0.0, 1.0)``.

    Args:
        successes: Successful trials, from 0 to ``n``.
        n: Trials.
        z: The standard normal quantile of the confidence level (1.96 for 95%).

    Raises:
        ValueError: ``n < 0`` or ``successes`` outside ``0..n``.

    Example:
        >>> [round(x, 3) for x in wilson_interval(0, 32)]
        [0.0, 0.107]
        >>> [round(x, 3) for x in wilson_interval(16, 32)]
        [0.336, 0.664]
        >>> wilson_interval(0, 0)
        (0.0, 1.0)
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k from ``n`` samples of which ``c`` succeeded.

    pass@k is the chance that at least one of ``k`` samples succeeds. Estimated from ``n >= k``
    samples (Chen et al. 2021, "Evaluating Large Language Models Trained on Code") it is
    ``1 - C(n - c, k) / C(n, k)``, computed as the product ``1 - prod(1 - k / i)`` over
    ``i = n - c + 1 .. n`` so that large ``n`` does not overflow; it is ``1.0`` when
    ``n - c < k`` (every k-subset holds a success). With ``n == k`` it is 1 if any sample
    succeeded, else 0.

    Args:
        n: Samples drawn.
        c: Samples that succeeded.
        k: The k of pass@k, from 1 to ``n``.

    Raises:
        ValueError: ``k < 1``, ``k > n``, or ``c`` outside ``0..n``.

    Example:
        >>> round(pass_at_k(10, 1, 1), 4)  # one sample: the success rate
        0.1
        >>> round(pass_at_k(10, 2, 5), 4)  # 1 - C(8, 5) / C(10, 5) = 1 - 56 / 252
        0.7778
        >>> pass_at_k(4, 0, 4), pass_at_k(4, 1, 4)
        (0.0, 1.0)
    """
    if k < 1 or k > n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got k={k}, n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n successes, got c={c}, n={n}")
    if n - c < k:
        return 1.0
    failure = 1.0
    for i in range(n - c + 1, n + 1):
        failure *= 1.0 - k / i
    return 1.0 - failure


def summarize(env_id: str, episodes: Sequence[Episode]) -> EnvSummary:
    """Success rate with its 95% Wilson interval, mean return with its 95% CI, mean turns and
    invalid-action rate.

    The invalid-action rate is invalid replies over all turns played.
    """
    n = len(episodes)
    returns = [e.episode_return for e in episodes]
    turns = sum(e.turns for e in episodes)
    wins = sum(e.success for e in episodes)
    low, high = wilson_interval(wins, n)
    return EnvSummary(
        env_id=env_id,
        episodes=n,
        success_rate=wins / n if n else 0.0,
        mean_return=float(np.mean(returns)) if n else 0.0,
        return_ci95=confidence_interval(returns),
        mean_turns=turns / n if n else 0.0,
        invalid_action_rate=sum(e.invalid_actions for e in episodes) / turns if turns else 0.0,
        errors=sum(e.error is not None for e in episodes),
        ended_by=dict(Counter(e.ended_by or "error" for e in episodes)),
        success_ci_low=low,
        success_ci_high=high,
    )


def summarize_samples(env_id: str, episodes: Sequence[Episode], k: int) -> dict[str, Any]:
    """pass@k, avg@k and the mean return of ``k`` sampled episodes per seed of ``env_id``.

    The episodes are grouped by seed (:attr:`Episode.seed`); every seed must have exactly ``k``.
    ``pass_at_k`` is the mean over seeds of :func:`pass_at_k` ``(k, successes, k)``, the share
    of seeds won at least once; ``avg_at_k`` is the mean success over each seed's ``k`` samples,
    averaged over seeds; ``avg_return_at_k`` the same for the episode return.

    Args:
        env_id: The env the episodes played (an episode of another env is an error).
        episodes: The sampled episodes, ``k`` per seed, in any order.
        k: Samples per seed (at least 1).

    Returns:
        ``{"samples": k, "pass_at_k": ..., "avg_at_k": ..., "avg_return_at_k": ...}``, the
        fields of the same names of :class:`EnvSummary`.

    Raises:
        ValueError: No episodes, ``k < 1``, an episode of another env, or a seed without
            exactly ``k`` episodes.

    Example:
        >>> from trl_env._episode import Episode, Task
        >>> def played(seed, won):
        ...     return Episode(Task("TextWordle-v0", seed), success=won, episode_return=float(won))
        >>> sampled = [played("0", True), played("0", False), played("1", False), played("1", False)]
        >>> summarize_samples("TextWordle-v0", sampled, k=2)
        {'samples': 2, 'pass_at_k': 0.5, 'avg_at_k': 0.25, 'avg_return_at_k': 0.25}
    """
    if k < 1:
        raise ValueError(f"k must be a positive number of samples per seed, got {k}")
    if not episodes:
        raise ValueError(f"no sampled episodes of {env_id} to summarise (need k={k} per seed)")
    by_seed: dict[int | str, list[Episode]] = {}
    for episode in episodes:
        if episode.env_id != env_id:
            raise ValueError(
                f"an episode of {episode.env_id} is among the samples of {env_id}: pass the "
                "episodes of one env"
            )
        by_seed.setdefault(episode.seed, []).append(episode)
    wrong = {seed: len(group) for seed, group in by_seed.items() if len(group) != k}
    if wrong:
        raise ValueError(
            f"every seed needs exactly k={k} sampled episodes of {env_id}; these seeds have "
            f"another count: {wrong}"
        )
    groups = list(by_seed.values())
    wins = [sum(e.success for e in group) for group in groups]
    return {
        "samples": k,
        "pass_at_k": float(np.mean([pass_at_k(k, c, k) for c in wins])),
        "avg_at_k": float(np.mean([c / k for c in wins])),
        "avg_return_at_k": float(np.mean([[e.episode_return for e in g] for g in groups])),
    }


def add_samples(summary: EnvSummary, episodes: Sequence[Episode], k: int) -> EnvSummary:
    """Fill the sampled figures of ``summary`` (see :func:`summarize_samples`) and return it.

    Raises:
        ValueError: As :func:`summarize_samples`.

    Example:
        >>> from trl_env._episode import Episode, Task
        >>> greedy = [Episode(Task("TextWordle-v0", "0")), Episode(Task("TextWordle-v0", "1"))]
        >>> sampled = [Episode(Task("TextWordle-v0", s), success=s == "0") for s in "0011"]
        >>> summary = add_samples(summarize("TextWordle-v0", greedy), sampled, k=2)
        >>> summary.success_rate, summary.samples, summary.pass_at_k, summary.avg_at_k
        (0.0, 2, 0.5, 0.5)
    """
    for name, value in summarize_samples(summary.env_id, episodes, k).items():
        setattr(summary, name, value)
    return summary
