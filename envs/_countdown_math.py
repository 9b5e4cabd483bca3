"""The arithmetic of the Countdown numbers game (private): reading and solving expressions.

Expressions are read by a small tokenizer and recursive-descent parser (never ``eval``) and
evaluated exactly with :class:`fractions.Fraction`; puzzles are generated so that a solution
exists, and :func:`solve` finds one. :mod:`trl_env.envs.countdown` re-exports the public names.
"""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction

import numpy as np

from ._common import quote

__all__ = [
    "LARGE_NUMBERS",
    "MAX_EXPRESSION_LENGTH",
    "MAX_NESTING",
    "SMALL_NUMBERS",
    "evaluate_expression",
    "generate_puzzle",
    "show",
    "solve",
]

SMALL_NUMBERS = tuple(n for n in range(1, 11) for _ in range(2))
"""The small cards: two each of 1-10."""
LARGE_NUMBERS = (25, 50, 75, 100)
"""The large cards."""

MAX_EXPRESSION_LENGTH = 200
"""Longest expression (in characters) that is parsed; longer ones are rejected unread."""
MAX_NESTING = 20
"""Deepest parenthesis nesting accepted."""

_TOKEN = re.compile(r"\s*(?:(\d+)|(\*\*|[-+*/×÷()])|([A-Za-z_][A-Za-z_0-9]*)|(\S))", re.ASCII)
_OPERATORS = {"×": "*", "÷": "/"}
_MAX_ECHO = 40  # characters of a bad action quoted back in feedback (expressions run long)
_MAX_DRAWS = 200  # number draws tried by generate_puzzle before it gives up


class _ParseError(ValueError):
    """A reply that is not an allowed expression (the message is the feedback)."""


def _tokenize(text: str) -> list[tuple[str, str]]:
    """``(kind, text)`` tokens: ``num``, ``op`` (``+ - * / ( )``); anything else is an error."""
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:  # only trailing whitespace is left
            break
        number, operator, name, other = match.groups()
        position = match.end()
        if number is not None:
            if len(number) > 6:
                raise _ParseError(f"{quote(number, _MAX_ECHO)} is not one of your numbers")
            tokens.append(("num", number))
        elif operator is not None:
            if operator == "**":
                raise _ParseError("powers (**) are not allowed: use only + - * / and parentheses")
            tokens.append(("op", _OPERATORS.get(operator, operator)))
        elif name is not None:
            raise _ParseError(
                f"{quote(name, _MAX_ECHO)} is not allowed: "
                "use only your numbers, + - * / and parentheses"
            )
        else:
            assert other is not None
            what = "powers (^) are" if other == "^" else f"{quote(other, _MAX_ECHO)} is"
            raise _ParseError(f"{what} not allowed: use only your numbers, + - * / and parentheses")
    if not tokens:
        raise _ParseError("the expression was empty")
    return tokens


class _Parser:
    """Recursive descent over ``expr := term (("+"|"-") term)*``, ``term := factor (("*"|"/")
    factor)*``, ``factor := NUMBER | "(" expr ")"``, evaluated exactly with ``Fraction``."""

    def __init__(self, tokens: list[tuple[str, str]], allow_fractions: bool) -> None:
        self.tokens = tokens
        self.index = 0
        self.depth = 0
        self.allow_fractions = allow_fractions
        self.used: list[int] = []

    def peek(self) -> str | None:
        return self.tokens[self.index][1] if self.index < len(self.tokens) else None

    def parse(self) -> Fraction:
        value = self.expr()
        if self.index < len(self.tokens):
            token = self.tokens[self.index][1]
            if token == ")":
                raise _ParseError("unbalanced parentheses: a ')' has no matching '('")
            raise _ParseError(f"expected an operator before {quote(token, _MAX_ECHO)}")
        return value

    def expr(self) -> Fraction:
        value = self.term()
        while self.peek() in ("+", "-"):
            operator = self.tokens[self.index][1]
            self.index += 1
            right = self.term()
            value = value + right if operator == "+" else value - right
        return value

    def term(self) -> Fraction:
        value = self.factor()
        while self.peek() in ("*", "/"):
            operator = self.tokens[self.index][1]
            self.index += 1
            right = self.factor()
            if operator == "*":
                value *= right
            elif right == 0:
                raise _ParseError(f"division by zero ({show(value)} / 0)")
            else:
                quotient = value / right
                if not self.allow_fractions and quotient.denominator != 1:
                    raise _ParseError(
                        f"{show(value)} / {show(right)} is not a whole number: "
                        "every division must come out exact"
                    )
                value = quotient
        return value

    def factor(self) -> Fraction:
        if self.index >= len(self.tokens):
            raise _ParseError("the expression ends too early: a number or '(' is missing")
        kind, token = self.tokens[self.index]
        self.index += 1
        if kind == "num":
            self.used.append(int(token))
            return Fraction(int(token))
        if token == "(":
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise _ParseError(f"parentheses are nested too deep (at most {MAX_NESTING})")
            value = self.expr()
            if self.peek() != ")":
                raise _ParseError("unbalanced parentheses: a '(' is never closed")
            self.index += 1
            self.depth -= 1
            return value
        if token in ("-", "+"):
            raise _ParseError(
                f"a {token!r} must stand between two numbers (no signs in front of a number)"
            )
        if token == ")":
            raise _ParseError("unexpected ')': a number or '(' is missing")
        raise _ParseError(f"unexpected {token!r}: a number or '(' is missing")


def show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value}"


def evaluate_expression(
    expression: str, numbers: list[int] | tuple[int, ...], *, allow_fractions: bool = False
) -> tuple[Fraction | None, str | None]:
    """Check and evaluate an arithmetic expression by the Countdown rules. Never uses ``eval``.

    Only non-negative integer literals, ``+ - * /`` (``×`` and ``÷`` too) and parentheses are
    accepted; each literal must be one of ``numbers`` (each used at most as often as given).
    Evaluation is exact (:class:`fractions.Fraction`). Unless ``allow_fractions``, every division
    must come out whole. Expressions over 200 characters or nested deeper than 20 are rejected.

    Returns:
        ``(value, None)`` or ``(None, problem)`` with the problem in words.

    Example:
        >>> evaluate_expression("(25 + 3) * 4", [25, 3, 4, 7])
        (Fraction(112, 1), None)
        >>> evaluate_expression("7 / 2", [7, 2])
        (None, '7 / 2 is not a whole number: every division must come out exact')
        >>> evaluate_expression("25 + 25", [25, 3])
        (None, 'you used 25 twice but have it only once')
        >>> evaluate_expression("__import__('os')", [1])[1]
        "'__import__' is not allowed: use only your numbers, + - * / and parentheses"
    """
    text = expression.strip()
    if len(text) > MAX_EXPRESSION_LENGTH:
        return None, (
            f"the expression is too long ({len(text)} characters; at most {MAX_EXPRESSION_LENGTH})"
        )
    try:
        parser = _Parser(_tokenize(text), allow_fractions)
        value = parser.parse()
    except _ParseError as exc:
        return None, str(exc)
    have = Counter(numbers)
    for number, count in Counter(parser.used).items():
        if number not in have:
            return None, f"{number} is not one of your numbers"
        if count > have[number]:
            times = {2: "twice", 3: "three times"}.get(count, f"{count} times")
            limit = "only once" if have[number] == 1 else f"only {have[number]} times"
            return None, f"you used {number} {times} but have it {limit}"
    return value, None


# --- puzzles and solver --------------------------------------------------------------------------
# An item is (value, text, precedence): precedence 3 atom, 2 product/quotient, 1 sum/difference.
_Item = tuple[int, str, int]


def _combine(a: _Item, b: _Item, operator: str) -> _Item | None:
    """``a operator b`` under the strict rules (positive whole results), or None if not allowed."""
    (x, xt, xp), (y, yt, yp) = a, b
    if operator == "+":
        return x + y, f"{xt} + {yt}", 1
    if operator == "-":
        if x <= y:
            return None
        return x - y, f"{xt} - {yt if yp > 1 else f'({yt})'}", 1
    left = xt if xp > 1 else f"({xt})"
    if operator == "*":
        return x * y, f"{left} * {yt if yp > 1 else f'({yt})'}", 2
    if y <= 1 or x % y:
        return None
    return x // y, f"{left} / {yt if yp > 2 else f'({yt})'}", 2


def generate_puzzle(
    rng: np.random.Generator,
    num_numbers: int = 6,
    target_range: tuple[int, int] = (101, 999),
    num_large: int | None = None,
) -> tuple[tuple[int, ...], int, str]:
    """Draw numbers and a reachable target.

    ``num_large`` large cards (default: 0 to ``min(4, num_numbers - 2)`` at random) and small
    cards for the rest are drawn without replacement; then a random expression over a random
    subset of them is built, combining two items at a time with a random operator (only positive,
    whole intermediate results), until its value is in ``target_range`` and is not itself one of
    the numbers. So every puzzle has a solution under the strictest rules.

    Returns:
        ``(numbers, target, solution_expression)``.
    """
    low, high = target_range
    for _ in range(_MAX_DRAWS):
        large = (
            int(rng.integers(0, min(4, num_numbers - 2) + 1)) if num_large is None else num_large
        )
        picks = [
            *(LARGE_NUMBERS[i] for i in rng.choice(len(LARGE_NUMBERS), large, replace=False)),
            *(
                SMALL_NUMBERS[i]
                for i in rng.choice(len(SMALL_NUMBERS), num_numbers - large, replace=False)
            ),
        ]
        numbers = tuple(int(picks[i]) for i in rng.permutation(num_numbers))
        for _ in range(100):
            size = int(rng.integers(2, num_numbers + 1))
            items: list[_Item] = [
                (n, str(n), 3) for n in (numbers[i] for i in rng.permutation(num_numbers)[:size])
            ]
            while len(items) > 1:
                i, j = (int(k) for k in rng.choice(len(items), 2, replace=False))
                combined = _combine(items[i], items[j], "+-*/"[int(rng.integers(4))])
                if combined is None:
                    combined = _combine(items[j], items[i], "+-*/"[int(rng.integers(4))])
                if combined is None:
                    combined = _combine(items[i], items[j], "+")
                assert combined is not None
                items = [item for k, item in enumerate(items) if k not in (i, j)] + [combined]
            value, text, _ = items[0]
            if low <= value <= high and value not in numbers:
                return numbers, value, text
    raise ValueError(
        f"no target in {target_range} found from {num_numbers} numbers after {_MAX_DRAWS} draws; "
        "widen target_range or use more numbers"
    )


def solve(numbers: list[int] | tuple[int, ...], target: int) -> str | None:
    """An expression over ``numbers`` (each at most once) equal to ``target``, or None.

    Exhaustive depth-first search under the strict rules (every intermediate result a positive
    whole number, which is valid under every rule setting of the env), combining two numbers at
    a time; multisets of values already explored are skipped. Returns as soon as one is found.
    Worst case (no solution, 6 numbers, full search) about 0.5 s; solvable puzzles take ~10 ms.

    Example:
        >>> solve([25, 50, 75, 100, 3, 6], 952)
        '(75 * 3 * (100 + 6) - 50) / 25'
    """
    seen: set[tuple[int, ...]] = set()

    def search(items: list[_Item]) -> str | None:
        for value, text, _ in items:
            if value == target:
                return text
        if len(items) < 2:
            return None
        key = tuple(sorted(value for value, _, _ in items))
        if key in seen:
            return None
        seen.add(key)
        for i in range(len(items)):
            for j in range(len(items)):
                if i == j:
                    continue
                a, b = items[i], items[j]
                rest = [item for k, item in enumerate(items) if k not in (i, j)]
                for operator in "+-*/":
                    if operator in "+*" and (i > j or (operator == "*" and b[0] == 1)):
                        continue  # commutative: one order suffices; * 1 changes nothing
                    combined = _combine(a, b, operator)
                    if combined is None:
                        continue
                    found = search([*rest, combined])
                    if found is not None:
                        return found
        return None

    return search([(int(n), str(int(n)), 3) for n in numbers])
