"""check_text_env: each rule catches the mistake it is for, and good envs pass."""

from __future__ import annotations

import random
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.toy_text import FrozenLakeEnv

import trl_env
from trl_env import TextSpace
from trl_env.utils import NASTY_ACTIONS, TextEnvCheckError, check_text_env
from trl_env.wrappers import DescribeObservation, ParseAction


class Echo(gym.Env[str, str]):
    """A small, correct text env: counts down from a seeded number; subclasses break one rule."""

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012

    def __init__(self) -> None:
        self.observation_space = TextSpace(256)
        self.action_space = TextSpace(1024)
        self.left = 0

    def start(self) -> int:
        return int(self.np_random.integers(3, 6))

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.left = self.start()
        return f"Say anything {self.left} times. Every reply counts as one; go ahead now.", {}

    def message(self, action: str) -> str:
        return f"{self.left} to go (you said {len(action)} characters)."

    def step(self, action):
        self.left -= 1
        return self.message(action), float(self.left == 0), self.left == 0, False, {}


class Raises(Echo):
    def step(self, action):
        if not action.strip():
            raise ValueError("empty action")
        return super().step(action)


class NotPrintable(Echo):
    def message(self, action):
        return "\x1b[31mred\x1b[0m"


class TooLong(Echo):
    def message(self, action):
        return "x" * 300


class NonFiniteReward(Echo):
    def step(self, action):
        observation, _, terminated, truncated, info = super().step(action)
        return observation, float("nan"), terminated, truncated, info


class GlobalNumpy(Echo):
    def start(self):
        return int(np.random.randint(3, 6))


class GlobalRandomInStep(Echo):
    def message(self, action):
        return f"{random.random():.3f}"


class Unseeded(Echo):
    episodes = 0

    def start(self):
        Unseeded.episodes += 1
        return 3 + Unseeded.episodes % 3


class History(Echo):
    def reset(self, *, seed=None, options=None):
        observation, info = super().reset(seed=seed, options=options)
        self.history = observation
        return observation, info

    def message(self, action):
        self.history += f"\nYou said {action[:10]!r}. {self.left} to go."
        return self.history


class ShortHistory(History):
    """No long first observation, but each observation extends the previous one."""

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed, options=options)
        self.history = "Go."
        return self.history, {}


@pytest.mark.parametrize(
    ("env", "rule"),
    [
        (Raises(), "any-string-action"),
        (NotPrintable(), "observation-in-space"),
        (TooLong(), "observation-in-space"),
        (NonFiniteReward(), "step-returns"),
        (GlobalNumpy(), "no-global-rng"),
        (GlobalRandomInStep(), "no-global-rng"),
        (Unseeded(), "seeded-determinism"),
        (History(), "observation-is-delta"),
        (ShortHistory(), "observation-is-delta"),
    ],
    ids=lambda x: type(x).__name__ if isinstance(x, gym.Env) else x,
)
def test_each_rule_catches_its_mistake(env: gym.Env, rule: str) -> None:
    with pytest.raises(TextEnvCheckError) as caught:
        check_text_env(env, check_gymnasium=False)
    assert caught.value.rule == rule
    assert str(caught.value).startswith(f"[{rule}] ")
    assert isinstance(caught.value, AssertionError) and isinstance(
        caught.value, trl_env.error.Error
    )


def test_a_correct_env_passes() -> None:
    check_text_env(Echo(), check_gymnasium=False)


def test_global_random_state_is_restored() -> None:
    np.random.seed(1)
    random.seed(1)
    expected = (np.random.random(), random.random())
    np.random.seed(1)
    random.seed(1)
    check_text_env(Echo(), check_gymnasium=False)
    assert (np.random.random(), random.random()) == expected


def test_non_text_spaces_are_named_with_the_fix() -> None:
    with pytest.raises(TextEnvCheckError, match=r"observation_space is Discrete\(16\).*Describe"):
        check_text_env(FrozenLakeEnv(), check_gymnasium=False)
    with pytest.raises(TextEnvCheckError, match=r"action_space is Discrete\(4\).*ParseAction"):
        check_text_env(DescribeObservation(FrozenLakeEnv()), check_gymnasium=False)


def test_wrapped_gymnasium_game_passes_including_check_env() -> None:
    env = gym.make("FrozenLake-v1", is_slippery=False)
    env = ParseAction(DescribeObservation(env, str), ["left", "down", "right", "up"])
    # check_env runs on the FrozenLakeEnv underneath, without its GUI render modes.
    check_text_env(env, actions=["[right]", "[right]", "[down]", "[left]", "[down]"])


def test_check_env_failures_are_reported() -> None:
    class BadReset(Echo):
        def reset(self, *, seed=None, options=None):  # ignores the seed
            self.left = 3
            return "Go.", {}

    with pytest.raises(AssertionError):
        check_text_env(BadReset())


def test_nasty_actions_include_a_megabyte_and_a_lone_surrogate() -> None:
    assert max(map(len, NASTY_ACTIONS)) >= 1_000_000
    assert "\ud800" in NASTY_ACTIONS and "" in NASTY_ACTIONS
