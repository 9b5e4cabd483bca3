"""``check_text_env``: gymnasium's ``check_env`` plus the rules an LLM text environment needs."""

from __future__ import annotations

import copy
import math
import random
from collections.abc import Sequence
from numbers import Real
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env, data_equivalence

from trl_env._adapters import is_text_space
from trl_env.error import TextEnvCheckError

__all__ = ["NASTY_ACTIONS", "TextEnvCheckError", "check_text_env"]

NASTY_ACTIONS: tuple[str, ...] = (
    "",
    " ",
    "\n\n\t",
    "[]",
    "[",
    "]]][[[",
    "None",
    "0",
    "-1",
    "1e309",
    "[left] [right] [up] [down]",
    "🎉🚀 ñ 中文 한국어 عربى",
    "\x00\x07\x1b[31mred\x1b[0m",
    "\u202e\u200b\ufeff",
    "\ud800",  # a lone surrogate: a valid str that cannot be encoded
    "[" * 10_000,
    "a" * 1_000_000,
)
"""Replies every text env must survive: empty, brackets, numbers, emoji and scripts, control
characters, invisible and bidirectional marks, a lone surrogate, and a 1 MB string."""

DEFAULT_ACTIONS: tuple[str, ...] = ("[a]", "hello world", "1", "[yes]", "b", "[2]", "no idea")
"""Generic replies used for the trajectory rules when no ``actions`` are given."""

_ECHO_MIN_LENGTH = 32  # a first observation shorter than this may legitimately recur
_GROWTH_MIN_LENGTH = 16  # shorter observations are too generic to count as "contained"
_GROWTH_RUN = 3  # this many steps in a row that each extend the previous observation


def _short(text: Any, limit: int = 40) -> str:
    if isinstance(text, str) and len(text) > limit:
        return repr(text[:limit]) + f"... ({len(text)} characters)"
    return repr(text)


def _check_observation(env: gym.Env[Any, Any], observation: Any, where: str) -> None:
    if not isinstance(observation, str):
        raise TextEnvCheckError(
            "observation-is-text",
            f"{where} returned an observation of type {type(observation).__name__}, not str; "
            "return text (wrap the env with trl_env.wrappers.DescribeObservation)",
        )
    if not env.observation_space.contains(observation):
        space = env.observation_space
        limit = getattr(space, "max_length", None)
        if limit is not None and len(observation) > limit:
            detail = f"it has {len(observation)} characters, more than max_length={limit}"
        else:
            bad = next((c for c in observation if not (c.isprintable() or c in "\n\t\r")), None)
            detail = f"it contains {bad!r}" if bad is not None else "the space rejects it"
        raise TextEnvCheckError(
            "observation-in-space",
            f"{where} returned an observation outside {space}: {detail} "
            f"(observation starts {_short(observation)}). Return only printable characters, "
            "newlines and tabs within max_length (raise max_length, or cap with "
            "trl_env.wrappers.CapObservationLength)",
        )


def _check_step(env: gym.Env[Any, Any], result: Any, where: str) -> tuple[Any, ...]:
    if not isinstance(result, tuple) or len(result) != 5:
        raise TextEnvCheckError(
            "step-returns",
            f"{where} must return (observation, reward, terminated, truncated, info), "
            f"got {_short(result)}",
        )
    observation, reward, terminated, truncated, info = result
    _check_observation(env, observation, where)
    if not isinstance(reward, Real) or isinstance(reward, bool) or not math.isfinite(reward):
        raise TextEnvCheckError(
            "step-returns", f"{where} returned reward {reward!r}; return a finite float"
        )
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if not isinstance(flag, bool | np.bool_):
            raise TextEnvCheckError(
                "step-returns", f"{where} returned {name}={flag!r}; return a bool"
            )
    if not isinstance(info, dict):
        raise TextEnvCheckError("step-returns", f"{where} returned info {info!r}; return a dict")
    return result


def _rollout(env: gym.Env[Any, Any], seed: int, actions: Sequence[str]) -> list[tuple[Any, ...]]:
    """Reset with ``seed`` and play ``actions`` until the episode ends; validate every output."""
    observation, info = env.reset(seed=seed)
    _check_observation(env, observation, f"reset(seed={seed})")
    trajectory: list[tuple[Any, ...]] = [(observation,)]
    for t, action in enumerate(actions):
        result = _check_step(env, env.step(action), f"step {t + 1} ({_short(action)})")
        trajectory.append(result[:4])
        if result[2] or result[3]:
            break
    return trajectory


def _first_difference(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> str:
    for t, (x, y) in enumerate(zip(a, b, strict=False)):
        if not data_equivalence(x, y):
            what = "the reset observation" if t == 0 else f"step {t}"
            return f"{what} differs: {_short(x)} vs {_short(y)}"
    return f"the episodes have different lengths ({len(a) - 1} vs {len(b) - 1} steps)"


def _check_any_string_action(env: gym.Env[Any, Any], seed: int) -> None:
    needs_reset = True
    for i, action in enumerate((*NASTY_ACTIONS, env.action_space.sample())):
        if needs_reset:
            observation, _ = env.reset(seed=seed + i)
            _check_observation(env, observation, f"reset(seed={seed + i})")
        try:
            result = env.step(action)
        except Exception as error:
            raise TextEnvCheckError(
                "any-string-action",
                f"step({_short(action)}) raised {type(error).__name__}: {error}. Any string is a "
                "possible model reply: answer it in band (feedback observation, "
                "info['invalid_action']=True, a penalty) instead of raising",
            ) from error
        _, _, terminated, truncated, _ = _check_step(env, result, f"step({_short(action)})")
        needs_reset = bool(terminated or truncated)


def _check_determinism_and_rng(
    env: gym.Env[Any, Any], seed: int, actions: Sequence[str]
) -> list[tuple[Any, ...]]:
    python_state, numpy_state = random.getstate(), np.random.get_state()
    try:
        first = _rollout(env, seed, actions)
        if random.getstate() != python_state or not data_equivalence(
            np.random.get_state(), numpy_state
        ):
            raise TextEnvCheckError(
                "no-global-rng",
                "reset/step changed the global random state (random.* or np.random.*); draw "
                "every random number from self.np_random (seeded by super().reset(seed=seed)), "
                "so that envs in one process do not interfere",
            )
        second = _rollout(env, seed, actions)
        if not data_equivalence(first, second):
            raise TextEnvCheckError(
                "seeded-determinism",
                f"two episodes with reset(seed={seed}) and the same actions differ: "
                f"{_first_difference(first, second)}. Call super().reset(seed=seed) first in "
                "reset and take all randomness from self.np_random; reset every piece of "
                "episode state",
            )
        random.seed(12345)
        np.random.seed(12345)
        third = _rollout(env, seed, actions)
        if not data_equivalence(first, third):
            raise TextEnvCheckError(
                "no-global-rng",
                "the episode changes when the global random state changes: "
                f"{_first_difference(first, third)}. Draw every random number from "
                "self.np_random, never from random.* or np.random.*",
            )
    finally:
        random.setstate(python_state)
        np.random.set_state(numpy_state)
    return first


def _check_observations_are_deltas(trajectory: list[tuple[Any, ...]]) -> None:
    observations = [step[0] for step in trajectory]
    first = observations[0]
    if len(first.strip()) >= _ECHO_MIN_LENGTH:
        for t, observation in enumerate(observations[1:], start=1):
            if observation != first and first in observation:
                raise TextEnvCheckError(
                    "observation-is-delta",
                    f"the observation of step {t} repeats the first observation verbatim. "
                    "Return only the new message of each step: the trainer appends it to the "
                    "conversation, so repeating history makes the context grow quadratically",
                )
    run = 0
    for t in range(1, len(observations)):
        previous, current = observations[t - 1], observations[t]
        extends = (
            len(previous.strip()) >= _GROWTH_MIN_LENGTH
            and previous != current
            and previous in current
        )
        run = run + 1 if extends else 0
        if run >= _GROWTH_RUN:
            raise TextEnvCheckError(
                "observation-is-delta",
                f"observations {t - run}..{t} each contain the previous one verbatim: the "
                "observation accumulates the history. Return only the new message of each step",
            )


def check_text_env(
    env: gym.Env[Any, Any],
    *,
    seed: int = 0,
    actions: Sequence[str] | None = None,
    check_gymnasium: bool = True,
    skip_render_check: bool = False,
) -> None:
    """Check that ``env`` is a well-behaved text environment for LLM training.

    Raises :class:`TextEnvCheckError` (an ``AssertionError``) naming the first rule broken and how
    to fix it. The rules, in the order they are checked:

    ``gymnasium`` (when ``check_gymnasium``)
        :func:`gymnasium.utils.env_checker.check_env` on ``env.unwrapped`` (its warnings are
        warnings, as when you call it yourself). When ``env.unwrapped`` is not itself a text env
        (a gymnasium game wrapped by :mod:`trl_env.wrappers`), its render modes are not checked:
        they are the game's business and often need a GUI.
    ``text-spaces``
        ``observation_space`` and ``action_space`` hold strings (:class:`trl_env.TextSpace`).
    ``observation-is-text``, ``observation-in-space``, ``step-returns``
        Every observation is a ``str`` inside the observation space; rewards are finite reals,
        ``terminated``/``truncated`` bools, ``info`` a dict.
    ``any-string-action``
        ``step`` never raises on any string, and still returns an in-space observation: each of
        :data:`NASTY_ACTIONS` (empty, a 1 MB string, emoji, control characters, a lone
        surrogate, ...) and a sample of the action space.
    ``seeded-determinism``
        Two episodes with ``reset(seed=seed)`` and the same ``actions`` are identical
        (observations, rewards, ``terminated``, ``truncated``).
    ``no-global-rng``
        ``reset``/``step`` leave the global ``random`` and ``np.random`` states untouched, and
        the episode does not change when those states change. (Both states are restored after
        the check.)
    ``observation-is-delta``
        Observations are the new message of each step, not the history. A heuristic, on the
        seeded episode: (1) no later observation may contain the first observation (when that is
        at least 32 characters, as a first observation with rules is) unless it *is* the first
        observation again; (2) no 3 consecutive steps may each contain the previous observation
        (of at least 16 characters) verbatim and add to it, the signature of a growing
        transcript. Observations that repeat identically (the same board after an invalid move)
        or that describe a growing *state* in new words pass.

    Args:
        env: The environment, typically ``gym.make(id)``; wrappers are checked as a whole.
        seed: Seed of the episodes played (the nasty-action episodes use ``seed + i``).
        actions: Replies for the seeded episodes; pass moves that make progress (for example an
            oracle's) so the delta rule sees real steps. Default: :data:`DEFAULT_ACTIONS` and a
            few seeded samples of the action space.
        check_gymnasium: Also run gymnasium's ``check_env`` on ``env.unwrapped``.
        skip_render_check: Passed to ``check_env``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> from trl_env.utils import check_text_env
        >>> check_text_env(gym.make("TextWordle-v0"), actions=["[crane]", "[slate]", "[pious]"])
    """
    if check_gymnasium:
        base = env.unwrapped
        text_base = is_text_space(base.observation_space) and is_text_space(base.action_space)
        check_env(base, skip_render_check=skip_render_check or not text_base)
    for name in ("observation_space", "action_space"):
        space = getattr(env, name)
        if not is_text_space(space):
            wrapper = "DescribeObservation" if name == "observation_space" else "ParseAction"
            raise TextEnvCheckError(
                "text-spaces",
                f"{name} is {space}, not a text space; declare trl_env.TextSpace(...) or wrap "
                f"the env with trl_env.wrappers.{wrapper}",
            )
    if actions is None:
        space = copy.deepcopy(env.action_space)
        space.seed(seed)
        actions = [*DEFAULT_ACTIONS, *(space.sample() for _ in range(5))]
    _check_any_string_action(env, seed)
    trajectory = _check_determinism_and_rng(env, seed, list(actions))
    _check_observations_are_deltas(trajectory)
