"""Reading a move out of free model text.

A model's reply is prose: the move is the last ``[bracketed]`` span in it or, when it has no
brackets, the whole reply (minus the punctuation people put around a word). The catalogue's games
and :class:`trl_env.wrappers.ParseAction` read replies the same way through these functions, so
every env accepts the same reply format.

These run on the hot path of ``step``: every scan over a reply is done by C-level string methods
that stop as early as they can, so a megabyte of text costs milliseconds at most.
"""

from __future__ import annotations

import re

__all__ = ["BARE_STRIP", "MAX_ECHO", "has_whitespace", "last_bracketed", "quote", "read_reply"]

BARE_STRIP = " \t\r\n.,;:!?'\"`*_"
"""Punctuation people (and models) put around a bare reply; stripped before the reply is read."""

MAX_ECHO = 24
"""Characters of a bad reply quoted back in feedback (a huge reply must not flood the feedback)."""

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
