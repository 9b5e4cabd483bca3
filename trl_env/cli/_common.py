"""What every ``trl-env`` command shares: the parser class whose errors are one line, the help
formatter, and argparse types that check numbers and JSON (for the options that no config
generates: ``play``, ``check``, ``--threads``)."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from typing import Any, NoReturn

from trl_env.error import CommandLineError

__all__ = [
    "PROG",
    "Formatter",
    "Parser",
    "json_object",
    "number",
    "positive_int",
    "seed",
]

PROG = "trl-env"


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (with a pointer to ``--help``)."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(self.prog, f"{message} (see '{self.prog} --help')")


class Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


def number(
    kind: type, *, least: float | None = None, above: float | None = None
) -> Callable[[str], Any]:
    """An argparse ``type``: a finite ``kind`` (int or float), ``>= least`` and ``> above``.

    Example:
        >>> number(int, least=1)("0")
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: expected a positive integer, got '0'
    """
    word = "an integer" if kind is int else "a number"
    if least == 1 and kind is int:
        expected = "a positive integer"
    elif least is not None:
        expected = f"{word} >= {least:g}"
    elif above is not None:
        expected = f"{word} above {above:g}"
    else:
        expected = word

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        bad = not math.isfinite(value) or (least is not None and not value >= least)
        if bad or (above is not None and not value > above):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in some of its errors
    return parse


positive_int = number(int, least=1)
seed = number(int, least=0)


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(
            f"expected a JSON object like '{{\"max_guesses\": 8}}', got {text!r} ({error.msg})"
        ) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            f"expected a JSON object like '{{\"max_guesses\": 8}}', got {text!r}"
        )
    return value
