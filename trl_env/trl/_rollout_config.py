"""The settings of trl-env's rollout: :class:`RolloutConfig` (what
:func:`~trl_env.trl._rollout.make_rollout_func` takes), with the checks of every field."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

from trl_env._demos import DEFAULT_SYSTEM_PROMPT
from trl_env.error import UsageError

__all__ = ["RolloutConfig"]


_AGGREGATIONS: dict[str, Callable[[Sequence[float]], float]] = {
    "sum": lambda rewards: float(sum(rewards)),
    "mean": lambda rewards: float(sum(rewards) / len(rewards)) if rewards else 0.0,
    "last": lambda rewards: float(rewards[-1]) if rewards else 0.0,
    "max": lambda rewards: float(max(rewards)) if rewards else 0.0,
}


@dataclass
class RolloutConfig:
    """Settings of :func:`make_rollout_func` (every field has a default)."""

    system_prompt: str | None = field(
        default=DEFAULT_SYSTEM_PROMPT,
        metadata={"help": "System message of every episode; None for no system message."},
    )
    max_turns: int | None = field(
        default=None,
        metadata={"help": "Model turns per episode at most; None lets the env decide (TimeLimit)."},
    )
    max_new_tokens_per_turn: int | None = field(
        default=None,
        metadata={"help": "Tokens one model turn may sample; None means the remaining budget."},
    )
    max_completion_length: int | None = field(
        default=None,
        metadata={
            "help": "Total tokens of an episode's completion (model and env tokens); None uses "
            "the trainer's max_completion_length. An episode that runs out is truncated."
        },
    )
    reward_aggregation: str | Callable[[Sequence[float]], float] = field(
        default="sum",
        metadata={
            "help": "How step rewards make the episode return: sum, mean, last, max or a callable."
        },
    )
    env_error_penalty: float = field(
        default=-1.0,
        metadata={"help": "Reward added to an episode whose env raised (the episode ends there)."},
    )
    log_metrics: bool = field(
        default=True,
        metadata={
            "help": "Log env/success_rate, env/mean_turns, ... through the trainer's logging."
        },
    )
    env_workers: int = field(
        default=0,
        metadata={
            "help": "Threads that step the envs of a turn concurrently; 0 steps them one after "
            "the other (fastest for in-process games). Use about one per episode of a batch "
            "for slow or remote envs (see docs/slow_envs.md)."
        },
    )
    env_step_timeout: float | None = field(
        default=None,
        metadata={
            "help": "Seconds one env reset/step may take; a call that takes longer ends its "
            "episode with an error (its env is never reused). None: no limit."
        },
    )
    self_play: bool = field(
        default=False,
        metadata={
            "help": "Play two-player games with the model in both seats: each seat is its own "
            "sample, advantages are normalized per role (see trl_env.trl._self_play)."
        },
    )
    opponent: Any = field(
        default=None,
        metadata={
            "help": "Who plays the other seat of a two-player game: 'self' (default with "
            "self_play), 'pool' (the run's earlier policies), a scripted player ('random', "
            "'perfect', ...), a model or run folder, or a policy object. Setting it plays "
            "two-player games from outside, as self_play does."
        },
    )
    opponent_pool_size: int = field(
        default=4, metadata={"help": "opponent='pool': snapshots of the run kept in the pool."}
    )
    opponent_refresh_steps: int = field(
        default=10,
        metadata={"help": "opponent='pool': training steps between two snapshots of the model."},
    )
    opponent_temperature: float = field(
        default=0.0,
        metadata={"help": "A model opponent's sampling temperature (0: greedy)."},
    )
    trust_tasks: bool = field(
        default=False,
        metadata={
            "help": "Let dataset rows name 'module:EnvId' (importing that module) and pass any "
            "gym.make kwargs. By default a row may only name a registered ID and the kwargs its "
            "env's constructor accepts."
        },
    )

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_new_tokens_per_turn", "max_completion_length"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 1):  # fmt: skip
                raise UsageError(
                    f"{name} must be a positive int or None, got {value!r}: pass for example "
                    f"make_rollout_func({name}=8)"
                )
        if self.system_prompt is not None and not isinstance(self.system_prompt, str):
            raise UsageError(
                f"system_prompt must be a str or None (no system message), got "
                f"{self.system_prompt!r:.80}"
            )
        penalty = self.env_error_penalty
        if isinstance(penalty, bool) or not isinstance(penalty, Real) or not math.isfinite(penalty):
            raise UsageError(
                f"env_error_penalty must be a finite number (the reward of an episode whose env "
                f"failed, e.g. -1.0), got {penalty!r}"
            )
        workers = self.env_workers
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
            raise UsageError(f"env_workers must be an int >= 0 (0 = sequential), got {workers!r}")
        timeout = self.env_step_timeout
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, Real)
            or not timeout > 0
            or not math.isfinite(timeout)
        ):
            raise UsageError(
                f"env_step_timeout must be a positive number of seconds or None, got {timeout!r}"
            )
        for name in ("log_metrics", "trust_tasks", "self_play"):
            if not isinstance(getattr(self, name), bool):
                raise UsageError(f"{name} must be True or False, got {getattr(self, name)!r}")
        for name in ("opponent_pool_size", "opponent_refresh_steps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be an int >= 1, got {value!r}")
        heat = self.opponent_temperature
        if isinstance(heat, bool) or not isinstance(heat, Real) or not 0 <= heat < math.inf:
            raise UsageError(
                f"opponent_temperature must be a number >= 0 (0: greedy), got {heat!r}"
            )
        opponent = self.opponent
        if opponent is not None and not ((isinstance(opponent, str) and opponent.strip())
                                         or hasattr(opponent, "act") or callable(opponent)):  # fmt: skip
            raise UsageError(
                f"opponent must be 'self', 'pool', a scripted player ('random', 'perfect'), a "
                f"model or run folder, a policy with act(turns) or a function of the turn, got "
                f"{opponent!r:.80}"
            )
        if not callable(self.reward_aggregation) and (self.reward_aggregation not in _AGGREGATIONS):
            raise UsageError(
                f"reward_aggregation must be one of {sorted(_AGGREGATIONS)} or a callable, "
                f"got {self.reward_aggregation!r}"
            )

    @property
    def plays_seats(self) -> bool:
        """Whether the rollout plays two-player games from outside (self-play or an opponent)."""
        return self.self_play or self.opponent is not None

    def aggregate(self, rewards: Sequence[float]) -> float:
        """The episode return from its step rewards."""
        if callable(self.reward_aggregation):
            return float(self.reward_aggregation(rewards))
        return _AGGREGATIONS[self.reward_aggregation](rewards)
