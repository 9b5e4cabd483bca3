"""What kind of game an env is, read by playing it: how many turns its own random policy takes,
whether its steps give rewards before the end, how long its observations are.

``trl-env train`` picks its defaults for a real model from these traits (see
:mod:`trl_env.trl.training._defaults`): a multi-turn game needs an episode budget that fits its
turns (a 256-token budget cut every Hangman game at about 3 turns, where a win needs six or more
right guesses), turn credit pays only where steps carry rewards, and a warm start on the env's
own random demos needs the env to have a random policy. Reading the class alone cannot tell
which envs are multi-turn in practice (``TextLargestNumber-v0`` allows 3 turns, but only to
retry an unreadable reply), so a few seeded episodes of the env's random policy are played: a
fraction of a second for the catalogue's games, deterministic for a given env and kwargs.

Example:
    >>> import trl_env
    >>> traits = env_traits("TextHangman-v0", {"partial_credit": 0.5})
    >>> traits.multi_turn, traits.step_rewards, traits.has_random_policy
    (True, True, True)
    >>> env_traits("TextLargestNumber-v0").multi_turn
    False
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import gymnasium as gym

__all__ = ["PROBE_EPISODES", "EnvTraits", "env_traits"]

PROBE_EPISODES = 8
"""Episodes of the env's random policy played to read its traits (seeds 0, 1, ...)."""

_MULTI_TURN_AT = 2.0
"""A game is multi-turn when its random policy's valid moves take at least this many turns on
average (a one-turn env's random policy plays valid replies and ends in one turn)."""


@dataclass(frozen=True)
class EnvTraits:
    """What a few seeded episodes of an env's random policy showed.

    Attributes:
        env_id: The env.
        turn_limit: Its registered ``max_episode_steps`` (``None`` if unlimited).
        has_random_policy: Whether it has its own random policy (demos, and this probe).
        has_oracle: Whether it has an oracle (demos of the best play).
        mean_turns: Mean turns of the random policy's episodes (``None`` without a random
            policy).
        multi_turn: Whether a game takes several model turns: the random policy's mean turns
            reach 2, or, without a random policy, the turn limit is above 1.
        step_rewards: Whether any step before the last of an episode gave a nonzero reward for a
            valid reply (a per-step signal, what turn credit uses); ``False`` without a random
            policy (unknown).
        mean_observation_chars: Mean length of the observations in characters (an episode's
            token budget holds them too).
        takes_partial_credit: Whether the env takes a ``partial_credit`` kwarg (the catalogue
            games' shaped reward: a step that brings the goal closer earns a share of it).
    """

    env_id: str
    turn_limit: int | None
    has_random_policy: bool
    has_oracle: bool
    mean_turns: float | None
    multi_turn: bool
    step_rewards: bool
    mean_observation_chars: float
    takes_partial_credit: bool = False


def env_traits(env_id: str, env_kwargs: Mapping[str, Any] | None = None) -> EnvTraits:
    """The :class:`EnvTraits` of ``env_id`` made with ``env_kwargs`` (cached per arguments).

    Raises:
        gymnasium.error.Error: For an unknown env ID (gymnasium's message, with its hint).
        trl_env.error.UsageError: For kwargs the env does not take, or an env that is not text.
    """
    return _env_traits(env_id, json.dumps(dict(env_kwargs or {}), sort_keys=True, default=str))


@cache
def _env_traits(env_id: str, kwargs_json: str) -> EnvTraits:
    from trl_env._checks import accepted_kwargs, check_text_env
    from trl_env._episode import Episode, Task
    from trl_env._play import run_episodes
    from trl_env._policies import RandomPolicy, has_oracle, has_random_action

    kwargs = json.loads(kwargs_json)
    # An unknown ID, bad kwargs or a non-text env: the same clear error as the run's own checks.
    check_text_env(env_id, kwargs, argument="env_kwargs")
    spec = gym.spec(env_id)
    turn_limit = spec.max_episode_steps
    # A named partial_credit parameter (an env taking any **kwargs is not assumed to have one).
    shaped = "partial_credit" in (accepted_kwargs(env_id) or ())
    env = gym.make(env_id, **kwargs)
    try:
        random_policy, oracle = has_random_action(env), has_oracle(env)
    finally:
        env.close()
    if not random_policy:
        multi_turn = (turn_limit or 2) > 1
        return EnvTraits(env_id, turn_limit, False, oracle, None, multi_turn, False, 0.0, shaped)
    envs = [gym.make(env_id, **kwargs) for _ in range(PROBE_EPISODES)]
    episodes = [Episode(Task(env_id, seed)) for seed in range(PROBE_EPISODES)]
    try:
        run_episodes(episodes, envs, RandomPolicy(seed=0), max_turns=turn_limit or 100)
    finally:
        for env in envs:
            env.close()
    mean_turns = sum(e.turns for e in episodes) / len(episodes)
    observations = [
        len(str(entry.get("text", "")))
        for e in episodes
        for entry in e.transcript or ()
        if entry["role"] == "env"
    ]
    return EnvTraits(
        env_id=env_id,
        turn_limit=turn_limit,
        has_random_policy=True,
        has_oracle=oracle,
        mean_turns=mean_turns,
        multi_turn=mean_turns >= _MULTI_TURN_AT,
        step_rewards=any(_has_step_reward(e) for e in episodes),
        mean_observation_chars=sum(observations) / max(1, len(observations)),
        takes_partial_credit=shaped,
    )


def _has_step_reward(episode: Any) -> bool:
    """Whether a step before the last, answered with a valid reply, gave a nonzero reward."""
    agent_turns = [entry for entry in episode.transcript or () if entry["role"] == "agent"]
    for entry, reward in zip(agent_turns[:-1], episode.rewards[:-1], strict=False):
        if reward != 0 and not entry.get("invalid_action"):
            return True
    return False
