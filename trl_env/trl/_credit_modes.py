"""The credit-assignment modes of a training run, and their check: apart from
:mod:`trl_env.trl._credit` (which needs torch), so that the settings
(:class:`~trl_env.trl.training._config.TrainConfig`) import without it."""

from __future__ import annotations

import dataclasses
from numbers import Real
from typing import Any

__all__ = ["CREDITS", "check_credit", "gamma_field", "partial_credit_field"]

CREDITS = ("episode", "turn", "step-group")
"""The credit-assignment modes: ``"episode"`` (GRPO: one advantage per episode), ``"turn"`` (each
model turn its normalized return-to-go) and ``"step-group"`` (``"turn"`` plus GiGPO's step-group
term for turns that saw the same observation); see :mod:`trl_env.trl._credit`."""

_NAMES = ", ".join(repr(c) for c in CREDITS[:-1]) + f" or {CREDITS[-1]!r}"


def check_credit(credit: str, gamma: float | None, partial_credit: float | None = None) -> None:
    """Check a ``credit``/``gamma`` pair (``None``: a run's default, 1.0 unless the run decides
    otherwise) and a run's ``partial_credit``, if given.

    Raises:
        ValueError: ``credit`` is not one of :data:`CREDITS`; ``gamma`` is not a number in
            ``[0, 1]``; ``gamma`` is not 1 with ``credit="episode"`` (where it would do nothing);
            or ``partial_credit`` is not a number >= 0.

    Example:
        >>> check_credit("turn", 0.9)
        >>> check_credit("step", 1.0)
        Traceback (most recent call last):
        ...
        ValueError: credit must be 'episode', 'turn' or 'step-group', got 'step'
        >>> check_credit("step-group", 0.9)
    """
    if credit not in CREDITS:
        raise ValueError(f"credit must be {_NAMES}, got {credit!r}")
    gamma = 1.0 if gamma is None else gamma
    if isinstance(gamma, bool) or not isinstance(gamma, Real) or not 0 <= gamma <= 1:
        raise ValueError(
            f"gamma must be a number in [0, 1] (1: no discount; 0: each turn's own reward only), "
            f"got {gamma!r}"
        )
    if credit == "episode" and gamma != 1:
        raise ValueError(
            f"gamma={gamma} has no effect with credit='episode' (one advantage per episode): "
            "set credit='turn' (or 'step-group') to discount per turn, or leave gamma at 1.0"
        )
    _check_partial_credit(partial_credit)


def _check_partial_credit(partial_credit: Any) -> None:
    """A run's ``partial_credit``: ``None`` (the run's default) or a number >= 0."""
    if partial_credit is None:
        return
    number = isinstance(partial_credit, Real) and not isinstance(partial_credit, bool)
    if not number or not 0 <= partial_credit < float("inf"):
        raise ValueError(f"partial_credit must be a number >= 0 (like 0.5), got {partial_credit!r}")


def gamma_field() -> Any:
    """``TrainConfig.gamma`` (``--gamma``): ``None`` is decided by the run's defaults."""
    help = (
        "Discount of later step rewards in a turn's return-to-go, in [0, 1] (--credit turn "
        "only). Default 1.0; 0 where the run turns on the env's partial credit (--partial-credit)."
    )
    return dataclasses.field(default=None, metadata={"help": help})


def partial_credit_field() -> Any:
    """``TrainConfig.partial_credit`` (``--partial-credit``): the env's shaped reward."""
    help = (
        "Train on the env's shaped reward: its partial_credit kwarg (the catalogue's games: a "
        "step that brings the goal closer earns a share of it; success is unchanged). Default: "
        "0.5 for a real model on a CPU on a multi-turn env that takes it and gives no reward "
        "before the end, unless --credit or --gamma is given (a win-only reward gives a "
        "near-random policy almost no signal in an hour of CPU steps; see docs/cli.md); there, "
        "given or not, turn credit at --gamma 0 by default. Else the env's own (0). Overrides "
        "--env-kwargs' partial_credit."
    )
    return dataclasses.field(default=None, metadata={"help": help, "metavar": "X"})
