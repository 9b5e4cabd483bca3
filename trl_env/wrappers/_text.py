"""Helpers shared by the text wrappers (private)."""

from __future__ import annotations

import re
from typing import Any

from gymnasium import spaces

from trl_env._adapters import is_text_space
from trl_env.error import NotATextEnvError
from trl_env.spaces import TextSpace

# ANSI escape sequences (colours, cursor moves) that gymnasium's ``ansi`` renders contain.
_ANSI_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|[@-Z\\-_])")
_KEEP_CONTROL = "\n\t"
_DROP_KEPT_CONTROL = str.maketrans("", "", _KEEP_CONTROL)


def sanitize(text: str) -> str:
    """Drop ANSI escape sequences and every other non-printable character except newline and tab."""
    if "\x1b" in text:
        text = _ANSI_ESCAPE.sub("", text)
    if text.isprintable() or text.translate(_DROP_KEPT_CONTROL).isprintable():
        return text  # the common case, at C speed
    return "".join(c for c in text if c.isprintable() or c in _KEEP_CONTROL)


def require_text_observations(space: spaces.Space[Any], wrapper: str) -> None:
    """Raise :class:`NotATextEnvError` with the fix when ``space`` does not hold strings."""
    if not is_text_space(space):
        raise NotATextEnvError(
            f"{wrapper} needs an env whose observations are text, but its observation space is "
            f"{space}; wrap it with trl_env.wrappers.DescribeObservation first"
        )


def widen(space: spaces.Space[Any], extra: int) -> spaces.Space[Any]:
    """A :class:`TextSpace` ``extra`` characters longer than ``space`` (other spaces unchanged)."""
    if isinstance(space, TextSpace) and extra > 0:
        return TextSpace(space.max_length + extra, min_length=space.min_length)
    return space
