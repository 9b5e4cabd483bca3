"""Helpers shared by the native text games of the catalogue (private).

The games read a move from free model text the same way (the last ``[bracketed]`` span wins,
otherwise the whole reply must be one bare move) and word their feedback the same way. Keeping
that logic here keeps the games consistent with one another; each game keeps its own wording of
what a move is and of what was wrong with it.

These functions sit on the hot path of ``step``, so they are plain module-level functions, and
every scan over a reply is done by C-level string methods that stop as early as they can.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Reading replies is shared with trl_env.wrappers.ParseAction, so it lives in the core package;
# re-exported here because every game imports its helpers from this module.
from trl_env._parsing import (
    BARE_STRIP,
    MAX_ECHO,
    has_whitespace,
    last_bracketed,
    quote,
    read_reply,
)
from trl_env.error import EpisodeOverError

__all__ = [
    "BARE_STRIP",
    "MAX_DIGITS",
    "MAX_ECHO",
    "MAX_REPLY_ECHO",
    "USED_UP_A_TURN",
    "GameNotRunningError",
    "check_render_mode",
    "count_noun",
    "has_whitespace",
    "improvement_reward",
    "invalid_feedback",
    "last_bracketed",
    "quote",
    "read_reply",
    "read_whole_number",
    "reset_needed",
]

MAX_REPLY_ECHO = 60
"""Characters of a rejected reply quoted back in invalid-reply feedback."""

USED_UP_A_TURN = "That used up a turn."
"""What an invalid action cost, as most games say it (see :func:`invalid_feedback`)."""

MAX_DIGITS = 18
"""Digits of the longest whole number a game reads: longer ones are out of any range a game
accepts (and ``int()`` of a huge string is slow)."""

_INTEGER = re.compile(r"[+-]?[0-9]+")


def read_whole_number(candidate: str) -> tuple[int | None, str | None]:
    """The whole number a move's text states, or what is wrong with it.

    Args:
        candidate: The move as read from a reply (see :func:`read_reply`).

    Returns:
        ``(number, None)``, or ``(None, problem)``: not a whole number in ASCII digits, or
        more than :data:`MAX_DIGITS` digits long.

    Example:
        >>> read_whole_number("-7"), read_whole_number("4.5")
        ((-7, None), (None, "'4.5' is not a whole number"))
    """
    if not (candidate.isascii() and _INTEGER.fullmatch(candidate)):
        return None, f"{quote(candidate)} is not a whole number"
    if len(candidate.lstrip("+-").lstrip("0")) > MAX_DIGITS:
        return None, f"{quote(candidate)} is far too large"
    return int(candidate), None


def count_noun(n: int, singular: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for exactly one: ``1 guess``, ``2 guesses``, ``0 lives``.

    Args:
        n: How many.
        singular: The noun for one.
        plural: The noun for any other number (default: ``singular + "s"``).

    Example:
        >>> count_noun(1, "guess", "guesses"), count_noun(0, "life", "lives"), count_noun(2, "turn")
        ('1 guess', '0 lives', '2 turns')
    """
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def invalid_feedback(
    kind: str,
    problem: str,
    advice: str,
    *,
    consequence: str | None = USED_UP_A_TURN,
    reply: object = None,
) -> str:
    """The feedback for an invalid action: what it was, what was wrong, what it cost, what to do.

    Args:
        kind: What the reply should have been (``"guess"``, ``"move"``, ``"expression"``).
        problem: What was wrong with it.
        advice: How to reply instead (a full sentence with an example of a valid reply).
        consequence: What the invalid action cost (a full sentence), or ``None`` to leave it out.
        reply: The rejected reply, quoted back (cut to :data:`MAX_REPLY_ECHO` characters) when it
            is non-blank text, so the agent sees what was read.

    Example:
        >>> invalid_feedback("guess", "the brackets were empty", "Reply like [crane].")
        'Invalid guess: the brackets were empty. That used up a turn. Reply like [crane].'
        >>> invalid_feedback("guess", "no guess found", "Reply like [crane].", reply="Hello!")
        "Invalid guess: no guess found. You replied 'Hello!'. That used up a turn. Reply like [crane]."
    """
    echo = ""
    if isinstance(reply, str) and reply.strip():
        echo = f" You replied {quote(reply, MAX_REPLY_ECHO)}."
    if consequence is None:
        return f"Invalid {kind}: {problem}.{echo} {advice}"
    return f"Invalid {kind}: {problem}.{echo} {consequence} {advice}"


def improvement_reward(scale: float, best: float, score: float) -> tuple[float, float]:
    """Shaped reward for beating the best score so far, and the new best.

    Rewarding only the increase of the best score (never a repeat of it) bounds the shaped part
    of a return by ``scale`` times the best score reached, so it cannot be farmed.

    Args:
        scale: The env's ``partial_credit``.
        best: The best score so far this episode (0 at the start).
        score: This step's score.

    Returns:
        ``(reward, new_best)``: ``scale * max(0, score - best)`` and ``max(best, score)``.
    """
    return scale * max(0.0, score - best), max(best, score)


def check_render_mode(render_mode: str | None, render_modes: Sequence[str]) -> None:
    """Raise ``ValueError`` unless ``render_mode`` is ``None`` or one of ``render_modes``.

    Args:
        render_mode: The ``render_mode`` passed to the env.
        render_modes: The env's ``metadata["render_modes"]``.
    """
    if render_mode is not None and render_mode not in render_modes:
        allowed = " or ".join(repr(mode) for mode in render_modes)
        raise ValueError(f"render_mode must be None or {allowed}, got {render_mode!r}")


GameNotRunningError = EpisodeOverError
"""The games' name for :class:`trl_env.error.EpisodeOverError` (the same class): a game was asked
to step, or for a move, with no episode running (never reset, or the episode ended). It is also
gymnasium's :class:`gymnasium.error.ResetNeeded`, so code that catches either one catches it."""


def reset_needed(env_name: str, *, started: bool, call: str = "step()") -> GameNotRunningError:
    """The error for a ``step`` that needs a ``reset`` first, to ``raise`` at the call site.

    The caller tests the (cheap) condition inline, so a normal step pays no function call:
    ``if not started or done: raise reset_needed(name, started=started)``.

    Args:
        env_name: The env's name, like ``"TextWordle"``.
        started: Whether ``reset`` was ever called; if it was, the episode has ended.
        call: What was called, as the message names it (``"step()"``, ``"oracle_action()"``).
    """
    if not started:
        return GameNotRunningError(f"{env_name}: call reset() before {call}")
    return GameNotRunningError(
        f"{env_name}: {call} called after the episode ended (terminated or truncated); "
        "call reset() to start a new game"
    )
