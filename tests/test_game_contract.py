"""The game contract: every native env fills it, and "has an oracle?" is answered from the class.

A native game is a :class:`~trl_env.envs.TextGame`: its required hooks are abstract methods, its
policies (``oracle_move``, ``random_move``) optional hooks that the class declares. The toy-text
adapters are not text games but fill the same policy protocols (``HasOracle``,
``HasRandomAction``). ``trl_env._policies.has_oracle`` answers for either, from the class alone.
"""

from __future__ import annotations

import inspect
from typing import Any, cast

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import load_env_creator
from trl_env.envs import TextGame

import trl_env  # registers the catalogue
from trl_env._policies import (
    HasOracle,
    HasRandomAction,
    has_oracle,
    has_random_action,
    oracle_action,
    random_action,
)
from trl_env.error import NoOracleError

assert trl_env  # imported for its registrations

NATIVE_IDS = sorted(
    env_id
    for env_id, spec in gym.registry.items()
    if isinstance(spec.entry_point, str)
    and spec.entry_point.startswith("trl_env.envs.")
    and ".bridges" not in spec.entry_point
)
REQUIRED_HOOKS = {"new_game", "parse_move", "play_move", "is_over", "draw"}


def _env_class(env_id: str) -> type[gym.Env[str, str]]:
    entry_point = gym.spec(env_id).entry_point
    assert isinstance(entry_point, str)
    return cast("type[gym.Env[str, str]]", load_env_creator(entry_point))


def test_native_ids_are_found() -> None:
    assert "TextWordle-v0" in NATIVE_IDS and "TextTaxi-v3" in NATIVE_IDS
    assert len(NATIVE_IDS) >= 19


def test_the_required_hooks_are_abstract() -> None:
    assert TextGame.__abstractmethods__ == REQUIRED_HOOKS  # type: ignore[attr-defined]
    assert not TextGame.has_oracle() and not TextGame.has_random_action()


@pytest.mark.parametrize("env_id", NATIVE_IDS)
def test_every_native_env_fills_the_contract(env_id: str) -> None:
    env_class = _env_class(env_id)
    if issubclass(env_class, TextGame):
        assert not inspect.isabstract(env_class)
        # The base runs the life cycle; a game only fills hooks.
        for name in ("reset", "step", "render", "oracle_action", "random_action", "read_move"):
            assert getattr(env_class, name) is getattr(TextGame, name), name
        assert env_class.game_name != TextGame.game_name
        assert has_oracle(env_class) == env_class.has_oracle()
        assert has_random_action(env_class) == env_class.has_random_action()
    else:  # a toy-text adapter: the policy protocols only
        assert issubclass(env_class, HasOracle) and issubclass(env_class, HasRandomAction)
    # Every native env has both policies, and the class says so without making the env.
    assert has_oracle(env_class) and has_random_action(env_class)


@pytest.mark.parametrize("env_id", NATIVE_IDS)
def test_the_class_answer_matches_playing_the_env(env_id: str) -> None:
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    assert has_oracle(env) == has_oracle(_env_class(env_id)) == has_oracle(env.unwrapped)
    rng = np.random.default_rng(0)
    reply = random_action(env, info, rng)
    assert isinstance(reply, str)
    *_, info = env.step(oracle_action(env))
    assert not info.get("invalid_action", False), info.get("error")
    env.close()


@pytest.mark.parametrize("env_id", NATIVE_IDS)
def test_the_random_policy_plays_only_legal_moves(env_id: str) -> None:
    """Random demos teach the reply format and the rules (``trl-env demos --policy random``): a
    rejected reply in them would be copied by a model warm-started on them."""
    env = gym.make(env_id)
    rng = np.random.default_rng(0)
    for seed in range(10):
        _, info = env.reset(seed=seed)
        for _ in range(8):
            *_, terminated, truncated, info = env.step(random_action(env, info, rng))
            assert not info.get("invalid_action", False), (seed, info.get("error"))
            if terminated or truncated:
                break
    env.close()


class _Riddle(TextGame[str]):
    """A one-turn game with no policies of its own: the smallest that fills the contract."""

    game_name = "Riddle"

    def new_game(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        self.solved = False
        return "What has keys but no locks? Reply like [word].", {}

    def parse_move(self, action: Any) -> tuple[str | None, str | None]:
        if not isinstance(action, str) or not action.strip():
            return None, "your reply was empty"
        return action.strip("[] ").lower(), None

    def play_move(self, move: str) -> tuple[str, float, dict[str, Any]]:
        self.solved = move == "piano"
        return ("Right." if self.solved else "No."), float(self.solved), {}

    def is_over(self) -> bool:
        return self.solved

    def draw(self) -> str:
        return f"solved: {self.solved}\n"


def test_a_game_without_policies_says_so_from_its_class() -> None:
    assert not _Riddle.has_oracle() and not has_oracle(_Riddle)
    assert not _Riddle.has_random_action() and not has_random_action(_Riddle)
    # It has the base's oracle_action() (so it is a HasOracle), yet no oracle: the class says so.
    assert issubclass(_Riddle, HasOracle)
    env = gym.wrappers.PassiveEnvChecker(_Riddle())
    env.reset(seed=0)
    with pytest.raises(NoOracleError, match="has no oracle"):
        oracle_action(env)
    # No random policy of its own: a sample of the action space instead.
    assert isinstance(random_action(env, {}, np.random.default_rng(0)), str)
    assert env.step("[piano]")[1:3] == (1.0, True)


def test_a_game_missing_a_required_hook_cannot_be_made() -> None:
    class NoDrawing(TextGame[str]):
        def new_game(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
            return "", {}

        def parse_move(self, action: Any) -> tuple[str | None, str | None]:
            return "", None

        def play_move(self, move: str) -> tuple[str, float, dict[str, Any]]:
            return "", 0.0, {}

        def is_over(self) -> bool:
            return True

    with pytest.raises(TypeError, match=r"abstract method.*draw"):
        NoDrawing()  # type: ignore[abstract]


def test_a_game_with_its_own_oracle_says_so() -> None:
    class SolvedRiddle(_Riddle):
        def oracle_move(self) -> str:
            return "[piano]"

    assert SolvedRiddle.has_oracle() and has_oracle(SolvedRiddle)
    assert not SolvedRiddle.has_random_action()
    env = SolvedRiddle()
    env.reset(seed=0)
    assert oracle_action(env) == "[piano]"  # type: ignore[arg-type]


def test_unwrap_checks_the_game_class() -> None:
    from trl_env.envs.wordle import TextWordleEnv

    env = gym.make("TextWordle-v0")
    assert TextWordleEnv.unwrap(env) is env.unwrapped
    with pytest.raises(TypeError, match="oracle_action needs a TextWordle env, got TextTaxiEnv"):
        TextWordleEnv.unwrap(gym.make("TextTaxi-v3"), "oracle_action")
