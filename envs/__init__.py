"""The trl-env catalogue of text environments (installed as ``trl_env.envs``).

Importing this package (``import trl_env`` does) registers every environment straight into
``gym.registry`` with :func:`gymnasium.register`, as Gymnasium and Minigrid do, so
``import trl_env; gym.make("TextWordle-v0")`` works, and so does
``gym.make("trl_env:TextWordle-v0")`` with no prior import. ``gym.registry`` is the one catalogue:
:func:`env_specs` filters it, and :func:`env_source`, :func:`env_description` and
:func:`env_has_oracle` read the rest from each spec and its entry point's class.

New games stand on :class:`TextGame` (the life cycle of a turn-based text game, written once; see
``docs/writing_a_game.md``).

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> ", ".join(spec.id for spec in gym.registry.values() if spec.id.startswith("TextGuess"))
    'TextGuessNumber-v0, TextGuessNumberHard-v0'
    >>> env_description(gym.spec("TextWordle-v0"))
    'Guess a secret five-letter English word in 6 tries from G/Y/X feedback.'
"""

from __future__ import annotations

from typing import Any

from gymnasium import register
from trl_env.envs import _deprecated
from trl_env.envs._catalogue import (
    SOURCES,
    env_description,
    env_has_oracle,
    env_source,
    env_specs,
    registering_own_envs,
)
from trl_env.envs._text_game import GameNotRunningError, TextGame
from trl_env.envs.bridges import register_bridged_envs

__all__ = [
    "SOURCES",
    "GameNotRunningError",
    "TextGame",
    "env_description",
    "env_has_oracle",
    "env_source",
    "env_specs",
]

# A spec carries only what makes the env (ID, entry point, kwargs, max_episode_steps). The one-line
# description lives in the class, as a `description` template formatted with the env's arguments
# (constructor defaults updated with the spec's kwargs): variants that differ by kwargs, such as
# TextFrozenLake8x8-v1, get a true line each with no per-ID text kept beside the registry, and so
# does a variant a user registers. Kwargs stay JSON values (lists, not tuples), so
# `EnvSpec.from_json(spec.to_json()) == spec`.
with registering_own_envs():
    register(
        id="TextWordle-v0", entry_point="trl_env.envs.wordle:TextWordleEnv", max_episode_steps=6
    )
    # --- gymnasium toy-text adapters ---
    register(
        id="TextFrozenLake-v1",
        entry_point="trl_env.envs.toy_text:TextFrozenLakeEnv",
        max_episode_steps=100,
        kwargs={"map_name": "4x4"},
    )
    register(
        id="TextFrozenLake8x8-v1",
        entry_point="trl_env.envs.toy_text:TextFrozenLakeEnv",
        max_episode_steps=200,
        kwargs={"map_name": "8x8"},
    )
    register(
        id="TextTaxi-v3", entry_point="trl_env.envs.toy_text:TextTaxiEnv", max_episode_steps=200
    )
    register(
        id="TextCliffWalking-v1",
        entry_point="trl_env.envs.toy_text:TextCliffWalkingEnv",
        max_episode_steps=100,
    )
    register(
        id="TextBlackjack-v1",
        entry_point="trl_env.envs.toy_text:TextBlackjackEnv",
        max_episode_steps=20,
        kwargs={"sab": True, "natural": False},
    )
    # --- native games: Mastermind, Hangman, GuessNumber ---
    register(
        id="TextMastermind-v0",
        entry_point="trl_env.envs.mastermind:TextMastermindEnv",
        max_episode_steps=10,
    )
    register(
        id="TextMastermindHard-v0",
        entry_point="trl_env.envs.mastermind:TextMastermindEnv",
        max_episode_steps=12,
        kwargs={"code_length": 5, "num_colors": 8, "max_guesses": 12},
    )
    register(
        id="TextHangman-v0", entry_point="trl_env.envs.hangman:TextHangmanEnv", max_episode_steps=30
    )
    register(
        id="TextHangmanHard-v0",
        entry_point="trl_env.envs.hangman:TextHangmanEnv",
        max_episode_steps=30,
        kwargs={"min_length": 4, "max_length": 5},
    )
    register(
        id="TextGuessNumber-v0",
        entry_point="trl_env.envs.guess_number:TextGuessNumberEnv",
        max_episode_steps=7,
    )
    register(
        id="TextGuessNumberHard-v0",
        entry_point="trl_env.envs.guess_number:TextGuessNumberEnv",
        max_episode_steps=10,
        kwargs={"low": 1, "high": 1000, "max_guesses": 10},
    )
    # --- native games: TicTacToe, Sudoku, Countdown ---
    register(
        id="TextTicTacToe-v0",
        entry_point="trl_env.envs.tictactoe:TextTicTacToeEnv",
        max_episode_steps=10,
        kwargs={"opponent": "random"},
    )
    register(
        id="TextTicTacToePerfect-v0",
        entry_point="trl_env.envs.tictactoe:TextTicTacToeEnv",
        max_episode_steps=10,
        kwargs={"opponent": "perfect"},
    )
    register(
        id="TextSudoku-v0",
        entry_point="trl_env.envs.sudoku:TextSudokuEnv",
        max_episode_steps=22,
        kwargs={"size": 4},
    )
    register(
        id="TextSudoku9x9-v0",
        entry_point="trl_env.envs.sudoku:TextSudokuEnv",
        max_episode_steps=74,
        kwargs={"size": 9},
    )
    register(
        id="TextCountdown-v0",
        entry_point="trl_env.envs.countdown:TextCountdownEnv",
        max_episode_steps=3,
        kwargs={"num_numbers": 6, "target_range": [101, 999]},
    )
    register(
        id="TextCountdownEasy-v0",
        entry_point="trl_env.envs.countdown:TextCountdownEnv",
        max_episode_steps=3,
        kwargs={"num_numbers": 4, "target_range": [10, 99]},
    )
    # --- easy envs for demos ---
    register(
        id="TextLargestNumber-v0",
        entry_point="trl_env.envs.largest_number:TextLargestNumberEnv",
        max_episode_steps=3,
        kwargs={"num_options": 4, "low": 0, "high": 9, "num_rounds": 1, "max_turns": 3},
    )
    # --- other envs ---
    # Any OpenEnv server as a gym env: it needs a server (base_url=...) to be made, so it is not a
    # catalogue game (env_source says "registered") and the every-env tests and pages skip it.
    # Needs the openenv extra (trl_env.openenv._client says so if missing).
    register(id="OpenEnv-v0", entry_point="trl_env.openenv._client:OpenEnvTextEnv")
    # reasoning_gym/<Task>-v0 and TextArena/<Game>-v0, from static tables: imports neither library.
    register_bridged_envs()


def __getattr__(name: str) -> Any:
    # The table of 0.2 is gone: gym.registry is the catalogue. Kept, with a warning, until 0.3.0.
    if name in _deprecated.NAMES:
        return _deprecated.get(name)
    raise AttributeError(f"module 'trl_env.envs' has no attribute {name!r}")
