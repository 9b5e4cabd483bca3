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

import gymnasium as gym

__all__ = [
    "BARE_STRIP",
    "MAX_ECHO",
    "USED_UP_A_TURN",
    "check_render_mode",
    "count_noun",
    "has_whitespace",
    "improvement_reward",
    "invalid_feedback",
    "last_bracketed",
    "quote",
    "read_reply",
    "reset_needed",
]

BARE_STRIP = " \t\r\n.,;:!?'\"`*_"
"""Punctuation people (and models) put around a bare reply; stripped before the reply is read."""

MAX_ECHO = 24
"""Characters of a bad reply quoted back in feedback (a huge reply must not flood the feedback)."""

USED_UP_A_TURN = "That used up a turn."
"""What an invalid action cost, as most games say it (see :func:`invalid_feedback`)."""

# `\s` matches exactly the characters for which str.isspace() is true (both use CPython's
# Py_UNICODE_ISSPACE), but scans in C: about 10x faster than a generator over a long reply.
_WHITESPACE = re.compile(r"\s")


def last_bracketed(text: str) -> str | None:
    """The content of the last ``[...]`` span with no bracket inside it, or ``None``.

    Identical to the last match of ``re.findall(r"\\[([^\\[\\]]*)\\]", text)``, but found by
    scanning from the end: the cost is bounded by the distance from the end of ``text`` to that
    span, not by the number of spans before it (a 1 MB reply full of brackets costs microseconds,
    not milliseconds).

    Args:
        text: The reply.

    Returns:
        The text between the brackets (unstripped, possibly empty), or ``None`` when ``text`` has
        no ``[`` followed, with no other bracket in between, by a ``]``.

    Example:
        >>> last_bracketed("I think [slate]... no, [crane]")
        'crane'
        >>> last_bracketed("[[a] b]")  # the last span with no bracket inside
        'a'
        >>> last_bracketed("no brackets] here[") is None
        True
    """
    end = text.rfind("]")
    if end < 0:
        return None
    # The last "[" before the last "]". Unbounded rfind is the cheaper call for a short reply,
    # so the bounded one runs only when a stray "[" follows the last "]".
    start = text.rfind("[")
    if start > end:
        start = text.rfind("[", 0, end)
    if start < 0:
        return None
    # No "[" lies between `start` and the last "]", so the first "]" after `start` closes the
    # last complete pair; any later "]" has a "]" (not a "[") as its nearest bracket before it.
    inside = text[start + 1 : end]
    if "]" in inside:  # rare; testing first keeps the common case to one slice
        return inside[: inside.find("]")]
    return inside


def read_reply(action: object, bare_strip: str = BARE_STRIP) -> tuple[str, bool, str | None]:
    """Pick the candidate move out of a reply: the last ``[bracketed]`` span, else the bare reply.

    This does the reading every game shares; the game then checks the candidate itself (and, for
    a bare reply, whether it looks like one move at all).

    Args:
        action: The model's action (anything: a non-string is a problem, never an exception).
        bare_strip: Characters stripped from both ends of a reply without brackets.

    Returns:
        ``(candidate, bracketed, problem)``. ``candidate`` is the stripped text between the last
        brackets (``bracketed=True``) or the reply stripped of ``bare_strip``
        (``bracketed=False``). When that is empty, or ``action`` is not a string, ``candidate``
        is ``""`` and ``problem`` says why; otherwise ``problem`` is ``None``.

    Example:
        >>> read_reply("I think [slate]... no, [ crane ]")
        ('crane', True, None)
        >>> read_reply("crane.")
        ('crane', False, None)
        >>> read_reply("[ ]")
        ('', True, 'the brackets were empty')
    """
    if not isinstance(action, str):
        return "", False, f"your reply must be text, not {type(action).__name__}"
    inside = last_bracketed(action)
    if inside is not None:
        candidate = inside.strip()
        if not candidate:
            return "", True, "the brackets were empty"
        return candidate, True, None
    candidate = action.strip(bare_strip)
    if not candidate:
        return "", False, "your reply was empty"
    return candidate, False, None


def has_whitespace(text: str) -> bool:
    """Whether ``text`` holds any whitespace character (``str.isspace``), scanned in C.

    A bare reply with whitespace in it is prose, not one move.
    """
    return _WHITESPACE.search(text) is not None


def quote(text: str, max_chars: int = MAX_ECHO) -> str:
    """``repr`` of a (possibly huge, possibly non-printable) reply, cut to ``max_chars``.

    Example:
        >>> quote("crane")
        "'crane'"
        >>> quote("abcdefgh", max_chars=3)
        "'abc...'"
    """
    return repr(text if len(text) <= max_chars else text[:max_chars] + "...")


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
    kind: str, problem: str, advice: str, *, consequence: str | None = USED_UP_A_TURN
) -> str:
    """The feedback for an invalid action: what it was, what was wrong, what it cost, what to do.

    Args:
        kind: What the reply should have been (``"guess"``, ``"move"``, ``"expression"``).
        problem: What was wrong with it.
        advice: How to reply instead (a full sentence).
        consequence: What the invalid action cost (a full sentence), or ``None`` to leave it out.

    Example:
        >>> invalid_feedback("guess", "the brackets were empty", "Reply like [crane].")
        'Invalid guess: the brackets were empty. That used up a turn. Reply like [crane].'
    """
    if consequence is None:
        return f"Invalid {kind}: {problem}. {advice}"
    return f"Invalid {kind}: {problem}. {consequence} {advice}"


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


def reset_needed(env_name: str, *, started: bool) -> gym.error.ResetNeeded:
    """The error for a ``step`` that needs a ``reset`` first, to ``raise`` at the call site.

    The caller tests the (cheap) condition inline, so a normal step pays no function call:
    ``if not started or done: raise reset_needed(name, started=started)``.

    Args:
        env_name: The env's name, like ``"TextWordle"``.
        started: Whether ``reset`` was ever called; if it was, the episode has ended.
    """
    if not started:
        return gym.error.ResetNeeded(f"{env_name}: call reset() before step()")
    return gym.error.ResetNeeded(
        f"{env_name}: step() called after the episode ended (terminated or truncated); "
        "call reset() to start a new game"
    )
