"""The settings of self-play and opponents in a training run (``--self-play``, ``--opponent``):
their fields for :class:`~trl_env.trl.training.TrainConfig` and their check. Apart from
:mod:`trl_env.trl._self_play` (which plays), so that the settings import without it.

Example:
    >>> check_seat_settings(True, None, num_generations=8)
    >>> check_seat_settings(True, None, num_generations=2)
    Traceback (most recent call last):
    ...
    ValueError: --self-play/--opponent need an even num_generations of at least 4, got 2: ...
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

__all__ = ["check_seat_settings", "opponent_field", "self_play_field"]


def self_play_field() -> Any:
    """``self_play``: the model plays both seats of two-player games."""
    return field(
        default=False,
        metadata={
            "help": "Two-player envs: the model plays both seats of each game (rows 2k and 2k+1 "
            "of a group are one game's two seats); each seat is its own sample with its own "
            "return (+1 win, -1 loss, a draw as the game scores it), and advantages are "
            "normalized per role (first and second mover each get their own baseline). See "
            "docs/self_play.md."
        },
    )


def opponent_field() -> Any:
    """``opponent``: who plays the other seat."""
    return field(
        default=None,
        metadata={
            "help": "Who plays the other seat of a two-player env: 'self' (the default with "
            "--self-play), 'pool' (the run's own earlier policies: a snapshot every "
            "--opponent-refresh-steps steps, the last --opponent-pool-size kept, one drawn per "
            "step), a scripted player ('random', 'perfect', ...) or a model or run folder "
            "(greedy). Given without --self-play, the model trains against that opponent, "
            "moving first in half the games.",
            "metavar": "self|pool|random|perfect|MODEL|RUN",
        },
    )


def check_seat_settings(self_play: bool, opponent: str | None, num_generations: int) -> None:
    """Check the self-play settings of a run.

    Raises:
        ValueError: An empty ``opponent``, or, with self-play or an opponent, a
            ``num_generations`` that is odd or below 4 (each role gets half of a group and needs
            two episodes for a baseline).
    """
    if opponent is not None and not str(opponent).strip():
        raise ValueError("opponent must be self, pool, a scripted player or a model")
    if (self_play or opponent is not None) and (num_generations < 4 or num_generations % 2):
        raise ValueError(
            f"--self-play/--opponent need an even num_generations of at least 4, got "
            f"{num_generations}: each role (first and second mover) gets half of a group and "
            "needs at least 2 episodes for a baseline"
        )
