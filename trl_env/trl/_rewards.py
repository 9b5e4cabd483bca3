"""Reward functions for ``GRPOTrainer`` that read what the rollout recorded."""

from __future__ import annotations

from typing import Any

__all__ = ["env_reward", "env_success"]


def env_reward(
    completions: list[Any], episode_return: list[float] | None = None, **kwargs: Any
) -> list[float]:
    """Each episode's return, as computed by the rollout (sum of step rewards by default).

    Pass it as ``GRPOTrainer(reward_funcs=trl_env.env_reward, rollout_func=...)``. The rollout
    returns ``episode_return`` among its extras, and TRL hands extras to reward functions as keyword
    arguments.

    Raises:
        ValueError: If ``episode_return`` is missing (the trainer was not given
            ``trl_env.make_rollout_func(...)`` as its ``rollout_func``).

    Example:
        >>> env_reward(["a", "b"], episode_return=[1.0, -0.1])
        [1.0, -0.1]
    """
    if episode_return is None:
        raise ValueError(
            "env_reward needs the 'episode_return' column that trl_env's rollout returns: pass "
            "rollout_func=trl_env.make_rollout_func(...) to GRPOTrainer (or use the "
            "environment_factory adapter, whose get_reward() TRL uses directly)."
        )
    if len(episode_return) != len(completions):
        raise ValueError(f"got {len(episode_return)} returns for {len(completions)} completions")
    return [float(r) for r in episode_return]


def env_success(
    completions: list[Any], episode_success: list[bool] | None = None, **kwargs: Any
) -> list[float]:
    """1.0 for each episode the agent won (per the env's ``info``), else 0.0.

    Useful as a sparse reward, or with weight 0 in ``reward_weights`` to log the win rate as a
    reward column.
    """
    if episode_success is None:
        raise ValueError(
            "env_success needs the 'episode_success' column of trl_env's rollout: pass "
            "rollout_func=trl_env.make_rollout_func(...) to GRPOTrainer."
        )
    return [float(bool(s)) for s in episode_success]
