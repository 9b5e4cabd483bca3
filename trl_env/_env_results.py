"""The check of what an env's ``reset``/``step`` returned (private; see :mod:`trl_env._stepping`).

An env that returns a value of the wrong type (an observation that is not a string, a reward
that is not a finite real number, flags that are not booleans, an info that is not a dict) gives
an :class:`EnvOutcome` with ``error`` set, and the play loop ends only that episode.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np

__all__ = ["EnvOutcome", "check_reset_result", "check_step_result", "raised"]


@dataclass(frozen=True)
class EnvOutcome:
    """What one ``reset`` or ``step`` call gave: checked values, or ``error`` (what went wrong).

    After a ``reset``, ``reward`` is 0 and the flags are false.
    """

    observation: str = ""
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def _bad(what: str, value: Any, expected: str) -> str:
    return f"{what} returned {value!r:.80} ({type(value).__name__}); expected {expected}"


def _check_flag(where: str, name: str, value: Any) -> str | None:
    if isinstance(value, bool | np.bool_):
        return None
    return _bad(f"{where} {name}", value, "a bool")


def check_reset_result(result: Any) -> EnvOutcome:
    """Check what ``env.reset`` returned: ``(observation: str, info: dict)``.

    Returns:
        The outcome, with ``error`` set if the result is malformed.
    """
    if not isinstance(result, tuple) or len(result) != 2:
        return EnvOutcome(error=_bad("reset()", result, "a tuple (observation, info)"))
    observation, info = result
    if not isinstance(observation, str):
        return EnvOutcome(error=_bad("reset() observation", observation, "a str"))
    if not isinstance(info, Mapping):
        return EnvOutcome(error=_bad("reset() info", info, "a dict"))
    return EnvOutcome(observation=observation, info=dict(info))


def check_step_result(result: Any) -> EnvOutcome:
    """Check what ``env.step`` returned: ``(observation: str, reward: finite real number,
    terminated: bool, truncated: bool, info: dict)``. A bool or numpy reward is fine (made a
    float); a string, ``None`` or NaN is not.

    Returns:
        The outcome, with ``error`` set if the result is malformed.
    """
    if not isinstance(result, tuple) or len(result) != 5:
        return EnvOutcome(error=_bad("step()", result, "a 5-tuple"))
    observation, reward, terminated, truncated, info = result
    problem = None
    if not isinstance(observation, str):
        problem = _bad("step() observation", observation, "a str")
    elif not isinstance(reward, Real) or not math.isfinite(float(reward)):
        problem = _bad("step() reward", reward, "a finite real number")
    else:
        problem = _check_flag("step()", "terminated", terminated) or _check_flag(
            "step()", "truncated", truncated
        )
    if problem is None and not isinstance(info, Mapping):
        problem = _bad("step() info", info, "a dict")
    if problem is not None:
        return EnvOutcome(error=problem)
    return EnvOutcome(observation, float(reward), bool(terminated), bool(truncated), dict(info))


def raised(call: str, error: BaseException) -> EnvOutcome:
    return EnvOutcome(error=f"{call} raised {type(error).__name__}: {error}")
