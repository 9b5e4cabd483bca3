"""What every ``trl-env`` command shares: the parser class whose errors are one line, the help
formatter, and argparse types that check numbers and JSON."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any, NoReturn

from trl_env.error import CommandLineError

__all__ = [
    "PROG",
    "Formatter",
    "Parser",
    "error_line",
    "json_object",
    "non_negative_int",
    "positive_float",
    "positive_int",
    "seed",
    "temperature",
]

PROG = "trl-env"


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (with a pointer to ``--help``)."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(self.prog, f"{message} (see '{self.prog} --help')")


class Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


def _number_at_least(
    convert: Callable[[str], Any], minimum: float, expected: str
) -> Callable[[str], Any]:
    """An argparse ``type`` that converts with ``convert`` and rejects values below ``minimum``."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not value >= minimum:  # `not >=` also rejects nan
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


positive_int = _number_at_least(int, 1, "a positive integer")
non_negative_int = _number_at_least(int, 0, "an integer >= 0")
seed = _number_at_least(int, 0, "an integer >= 0")
temperature = _number_at_least(float, 0.0, "a number >= 0")


def positive_float(text: str) -> float:
    """An argparse ``type``: a number above 0 (``nan``, ``inf`` and 0 rejected)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number above 0, got {text!r}")
    return value


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


def error_line(prog: str, message: str) -> str:
    """``prog: error: message`` on one line (newlines and runs of spaces collapsed)."""
    return f"{prog}: error: {' '.join(str(message).split())}"
