"""The trl-env catalogue of text environments (installed as ``trl_env.envs``).

Every environment is registered from the one table below when ``trl_env`` is imported, so
``import trl_env; gym.make("TextWordle-v0")`` works, and so does ``gym.make("trl_env:TextWordle-v0")``
with no prior import.

New games stand on :class:`TextGame` (the life cycle of a turn-based text game, written once; see
``docs/writing_a_game.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from trl_env.envs._text_game import GameNotRunningError, TextGame

__all__ = ["REGISTRY", "EnvEntry", "GameNotRunningError", "TextGame", "register_envs"]


@dataclass(frozen=True)
class EnvEntry:
    """One row of the registration table.

    Attributes:
        id: Gymnasium ID, ``TextName-vN``.
        entry_point: ``"trl_env.envs.module:ClassName"``.
        description: One line for ``trl-env list`` and the docs.
        max_episode_steps: Turn limit applied by gymnasium's ``TimeLimit`` (sets ``truncated``).
        kwargs: Default constructor arguments (registered variants differ only here). JSON
            values only (lists, not tuples), so ``EnvSpec.from_json(spec.to_json()) == spec``.
    """

    id: str
    entry_point: str
    description: str
    max_episode_steps: int | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


REGISTRY: tuple[EnvEntry, ...] = (
    EnvEntry(
        id="TextWordle-v0",
        entry_point="trl_env.envs.wordle:TextWordleEnv",
        description="Guess a secret five-letter English word in six tries from G/Y/X feedback.",
        max_episode_steps=6,
    ),
    # --- gymnasium toy-text adapters ---
    EnvEntry(
        id="TextFrozenLake-v1",
        entry_point="trl_env.envs.toy_text:TextFrozenLakeEnv",
        description="Gymnasium's FrozenLake (4x4, slippery) as text: reach the goal, avoid holes.",
        max_episode_steps=100,
        kwargs={"map_name": "4x4"},
    ),
    EnvEntry(
        id="TextFrozenLake8x8-v1",
        entry_point="trl_env.envs.toy_text:TextFrozenLakeEnv",
        description="Gymnasium's FrozenLake on the 8x8 map (slippery) as text.",
        max_episode_steps=200,
        kwargs={"map_name": "8x8"},
    ),
    EnvEntry(
        id="TextTaxi-v3",
        entry_point="trl_env.envs.toy_text:TextTaxiEnv",
        description="Gymnasium's Taxi as text: pick up a passenger and drop them at their stop.",
        max_episode_steps=200,
    ),
    EnvEntry(
        id="TextCliffWalking-v1",
        entry_point="trl_env.envs.toy_text:TextCliffWalkingEnv",
        description="Gymnasium's CliffWalking as text: shortest path along a cliff.",
        max_episode_steps=100,
    ),
    EnvEntry(
        id="TextBlackjack-v1",
        entry_point="trl_env.envs.toy_text:TextBlackjackEnv",
        description="Gymnasium's Blackjack (Sutton & Barto rules) as text: hit or stick.",
        max_episode_steps=20,
        kwargs={"sab": True, "natural": False},
    ),
    # --- native games: Mastermind, Hangman, GuessNumber ---
    EnvEntry(
        id="TextMastermind-v0",
        entry_point="trl_env.envs.mastermind:TextMastermindEnv",
        description="Crack a secret code of 4 pegs in 6 colours (digits 1-6) from black/white pegs.",
        max_episode_steps=10,
    ),
    EnvEntry(
        id="TextMastermindHard-v0",
        entry_point="trl_env.envs.mastermind:TextMastermindEnv",
        description="Mastermind with 5 pegs in 8 colours (digits 1-8), 12 guesses.",
        max_episode_steps=12,
        kwargs={"code_length": 5, "num_colors": 8, "max_guesses": 12},
    ),
    EnvEntry(
        id="TextHangman-v0",
        entry_point="trl_env.envs.hangman:TextHangmanEnv",
        description="Find a secret 6-10 letter English word letter by letter with 6 lives.",
        max_episode_steps=30,
    ),
    EnvEntry(
        id="TextHangmanHard-v0",
        entry_point="trl_env.envs.hangman:TextHangmanEnv",
        description="Hangman with short (4-5 letter) words: fewer letters to hit, 6 lives.",
        max_episode_steps=30,
        kwargs={"min_length": 4, "max_length": 5},
    ),
    EnvEntry(
        id="TextGuessNumber-v0",
        entry_point="trl_env.envs.guess_number:TextGuessNumberEnv",
        description="Find a secret integer in 1-100 from higher/lower hints in 7 guesses.",
        max_episode_steps=7,
    ),
    EnvEntry(
        id="TextGuessNumberHard-v0",
        entry_point="trl_env.envs.guess_number:TextGuessNumberEnv",
        description="Find a secret integer in 1-1000 from higher/lower hints in 10 guesses.",
        max_episode_steps=10,
        kwargs={"low": 1, "high": 1000, "max_guesses": 10},
    ),
    # --- native games: TicTacToe, Sudoku, Countdown ---
    EnvEntry(
        id="TextTicTacToe-v0",
        entry_point="trl_env.envs.tictactoe:TextTicTacToeEnv",
        description="Tic-tac-toe as X against a random opponent; win 1, draw 0.5, loss 0.",
        max_episode_steps=10,
        kwargs={"opponent": "random"},
    ),
    EnvEntry(
        id="TextTicTacToePerfect-v0",
        entry_point="trl_env.envs.tictactoe:TextTicTacToeEnv",
        description="Tic-tac-toe as X against a perfect minimax opponent: a draw (0.5) is the best.",
        max_episode_steps=10,
        kwargs={"opponent": "perfect"},
    ),
    EnvEntry(
        id="TextSudoku-v0",
        entry_point="trl_env.envs.sudoku:TextSudokuEnv",
        description="4x4 Sudoku with a unique solution, one [row col digit] move per turn.",
        max_episode_steps=22,
        kwargs={"size": 4},
    ),
    EnvEntry(
        id="TextSudoku9x9-v0",
        entry_point="trl_env.envs.sudoku:TextSudokuEnv",
        description="Classic 9x9 Sudoku with a unique solution, one [row col digit] move per turn.",
        max_episode_steps=74,
        kwargs={"size": 9},
    ),
    EnvEntry(
        id="TextCountdown-v0",
        entry_point="trl_env.envs.countdown:TextCountdownEnv",
        description="Countdown numbers game: hit a 3-digit target from 6 numbers with + - * /.",
        max_episode_steps=3,
        kwargs={"num_numbers": 6, "target_range": [101, 999]},
    ),
    EnvEntry(
        id="TextCountdownEasy-v0",
        entry_point="trl_env.envs.countdown:TextCountdownEnv",
        description="Countdown numbers game, easy: hit a 2-digit target from 4 numbers.",
        max_episode_steps=3,
        kwargs={"num_numbers": 4, "target_range": [10, 99]},
    ),
    # --- easy envs for demos ---
    EnvEntry(
        id="TextLargestNumber-v0",
        entry_point="trl_env.envs.largest_number:TextLargestNumberEnv",
        description="Warm-up: reply with the largest of 4 digits; a tiny model learns it on a CPU.",
        max_episode_steps=3,
        kwargs={"num_options": 4, "low": 0, "high": 9, "num_rounds": 1, "max_turns": 3},
    ),
)
"""The registration table: every environment of the catalogue, one row each."""


def register_envs() -> None:
    """Register every row of :data:`REGISTRY` with gymnasium (idempotent)."""
    for entry in REGISTRY:
        if entry.id in gym.registry:
            continue
        gym.register(
            id=entry.id,
            entry_point=entry.entry_point,
            max_episode_steps=entry.max_episode_steps,
            kwargs=dict(entry.kwargs),
        )
    # Not a catalogue row: it needs a server (base_url=...) to be made, so the every-env tests and
    # pages do not apply. Needs the openenv extra (trl_env.openenv.client says so if missing).
    if "OpenEnv-v0" not in gym.registry:
        gym.register(id="OpenEnv-v0", entry_point="trl_env.openenv.client:OpenEnvTextEnv")
    from trl_env.envs.bridges import register_bridges  # static tables: imports no bridged library

    register_bridges()
