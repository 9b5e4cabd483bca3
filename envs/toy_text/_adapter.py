"""The machinery every toy-text adapter shares (private): the text stack and its life cycle.

:class:`ToyTextEnv` puts a gymnasium toy-text game behind this library's wrappers
(:class:`~trl_env.wrappers.DescribeObservation`, :class:`~trl_env.wrappers.ParseAction`,
:class:`~trl_env.wrappers.PrefixFirstObservation`), shares its ``np_random`` with the game, adds
one sentence of news per step and reports ``info["success"]``. It owns the env's policies, the
contract ``trl-env eval/play`` use: :meth:`ToyTextEnv.oracle_action` (optimal play) and
:meth:`ToyTextEnv.random_action` (a uniformly random legal move). Each game module fills the
hooks: ``actions``, ``synonyms``, the rules, how to describe a state, the news of a move, and
``oracle_index``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np

from trl_env.error import EpisodeOverError
from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace
from trl_env.wrappers import DescribeObservation, ParseAction, PrefixFirstObservation

__all__ = ["GRID_MOVES", "GRID_SYNONYMS", "ToyTextEnv", "grid_move", "oracle_action", "position"]

_OBSERVATION_LENGTH = 4096
_DESCRIPTION_LENGTH = 2048
GRID_SYNONYMS = {
    "left": ["west", "l", "w"],
    "down": ["south", "d", "s"],
    "right": ["east", "r", "e"],
    "up": ["north", "u", "n"],
}
"""Other spellings of the four grid moves (FrozenLake, CliffWalking)."""
GRID_MOVES = {"left": (0, -1), "down": (1, 0), "right": (0, 1), "up": (-1, 0)}
"""``(row, column)`` change of each grid move."""


def position(state: int, ncol: int) -> str:
    """``"row r, column c"`` (1-based) of a grid state index."""
    row, col = divmod(int(state), ncol)
    return f"row {row + 1}, column {col + 1}"


def grid_move(state: int, direction: tuple[int, int], shape: tuple[int, int]) -> int:
    """The state a move in ``direction`` leads to on a grid of ``shape`` (walls at the edges)."""
    row, col = divmod(int(state), shape[1])
    row = min(max(row + direction[0], 0), shape[0] - 1)
    col = min(max(col + direction[1], 0), shape[1] - 1)
    return row * shape[1] + col


class ToyTextEnv(gym.Env[str, str]):
    """A gymnasium toy-text game behind the text wrappers (see the subclasses)."""

    # Not a ClassVar: gymnasium's Env declares ``metadata`` as an attribute of the instance.
    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    actions: ClassVar[tuple[str, ...]]
    synonyms: ClassVar[dict[str, list[str]]]

    def __init__(
        self,
        game: gym.Env[Any, Any],
        *,
        render_mode: str | None,
        describe: Callable[[Any], str],
        rules: str,
        invalid_action_penalty: float,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if invalid_action_penalty < 0:
            raise ValueError(f"invalid_action_penalty must be >= 0, got {invalid_action_penalty}")
        self.render_mode = render_mode
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.game = game
        """The gymnasium game being played (no render mode; its state is the source of truth)."""
        self._describe = describe
        self._episode_over = True  # until the first reset
        stack: gym.Env[Any, Any] = DescribeObservation(
            game, describe, max_length=_DESCRIPTION_LENGTH
        )
        stack = ParseAction(
            stack,
            self.actions,
            synonyms=self.synonyms,
            invalid_action_penalty=invalid_action_penalty,
        )
        self._text_env = PrefixFirstObservation(stack, rules)
        text_space = self._text_env.observation_space
        assert isinstance(text_space, TextSpace)  # DescribeObservation's, widened for the rules
        assert text_space.max_length + 512 <= _OBSERVATION_LENGTH
        self.observation_space = TextSpace(_OBSERVATION_LENGTH)
        self.action_space = TextSpace(DEFAULT_MAX_LENGTH)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a new game and return the rules, the state and the reply format."""
        super().reset(seed=seed)
        self.game.np_random = self.np_random  # one generator drives the game and this env
        self._episode_over = False
        observation, info = self._text_env.reset(options=options)
        if "prob" in info:  # gymnasium reports an int on reset and floats on steps
            info["prob"] = float(info["prob"])
        return observation, info

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play one reply. Never raises on any string ``action``."""
        before = self._snapshot()
        observation, reward, terminated, truncated, info = self._text_env.step(action)
        reward = float(reward)
        if not info["invalid_action"]:
            news = self._narrate(before, info["action"], reward, terminated)
            observation = f"{news}\n{observation}"
        # Every step says whether the game was won, so success rates need no per-game rule; read
        # from the game's own reward, before any shaping.
        info["success"] = bool(terminated and self._is_success(reward))
        if not info["invalid_action"]:
            reward = self._shaped_reward(reward, info["success"])
        self._episode_over = bool(terminated)
        return observation, reward, terminated, truncated, info

    def render(self) -> str | None:  # type: ignore[override]
        """The current state as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        return self._describe(self._game_observation()) + "\n"

    def close(self) -> None:
        """Close the game."""
        self._text_env.close()

    def oracle_action(self) -> str:
        """The optimal reply now, e.g. ``"[right]"`` (the game's own solver).

        Raises:
            EpisodeOverError: Before the first ``reset`` or after the game has ended.
        """
        if self._episode_over:
            raise EpisodeOverError(
                f"{type(self).__name__}.oracle_action: the game has ended (or was never "
                "started); call reset() to start a new one"
            )
        return f"[{self.actions[self.oracle_index()]}]"

    def random_action(self, rng: np.random.Generator) -> str:
        """A uniformly random legal move, e.g. ``"[up]"``, drawn from ``rng`` only.

        Draws what ``trl-env eval --policy random`` always drew for these games: one
        ``rng.integers(len(actions))``.
        """
        return f"[{self.actions[int(rng.integers(len(self.actions)))]}]"

    def oracle_index(self) -> int:
        """The index into :attr:`actions` of the optimal action now (see :meth:`oracle_action`)."""
        raise NotImplementedError

    # Subclass hooks.
    def _is_success(self, final_reward: float) -> bool:
        """Whether an episode that terminated with ``final_reward`` was won."""
        return final_reward > 0

    def _shaped_reward(self, reward: float, success: bool) -> float:
        """The reward of a valid move as the env reports it (the game's, unless it shapes it)."""
        return reward

    def _snapshot(self) -> Any:
        return int(getattr(self.game, "s", 0))

    def _game_observation(self) -> Any:
        return int(self.game.s)  # type: ignore[attr-defined]

    def _narrate(self, before: Any, action: str, reward: float, terminated: bool) -> str:
        raise NotImplementedError


def oracle_action(env: gym.Env[str, str]) -> str:
    """The optimal reply now in any toy-text env: ``env.unwrapped.oracle_action()``.

    Grid games (FrozenLake, Taxi, CliffWalking) follow the value-iteration policy of the game's
    transition table (optimal, also when slippery or rainy); Blackjack follows
    :func:`~trl_env.envs.toy_text.basic_strategy`.

    Kept for the callers of the function form; the env method is the contract.

    Args:
        env: A ``TextFrozenLake-v1``, ``TextTaxi-v3``, ``TextCliffWalking-v1`` or
            ``TextBlackjack-v1`` env (wrapped or not), after ``reset``.

    Returns:
        The action as the model should write it, e.g. ``"[right]"``.

    Raises:
        TypeError: ``env`` is not a toy-text env.
        EpisodeOverError: The game has ended; call ``reset``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextFrozenLake-v1", is_slippery=False)
        >>> _ = env.reset(seed=0)
        >>> oracle_action(env)
        '[down]'
    """
    game_env = env.unwrapped
    if not isinstance(game_env, ToyTextEnv):
        raise TypeError(f"oracle_action needs an env of trl_env.envs.toy_text, got {game_env!r}")
    return game_env.oracle_action()
