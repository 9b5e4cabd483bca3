"""The Countdown numbers game as a text environment: reach a target with + - * / and parentheses."""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction
from typing import Any

import gymnasium as gym
import numpy as np
from trl_env.envs._common import (
    check_render_mode,
    count_noun,
    improvement_reward,
    invalid_feedback,
    quote,
    read_reply,
    reset_needed,
)

from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace

__all__ = [
    "LARGE_NUMBERS",
    "SMALL_NUMBERS",
    "TextCountdownEnv",
    "evaluate_expression",
    "generate_puzzle",
    "oracle_action",
    "parse_reply",
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

_CLAIMED_RESULT = re.compile(
    r"\s*=\s*-?\d{1,12}\s*$", re.ASCII
)  # "(25 + 3) * 4 = 112": the claim is ignored
_TOKEN = re.compile(r"\s*(?:(\d+)|(\*\*|[-+*/×÷()])|([A-Za-z_][A-Za-z_0-9]*)|(\S))", re.ASCII)
_OPERATORS = {"×": "*", "÷": "/"}
# _common.BARE_STRIP without "*": it is an operator, and stripping it could hide a broken
# expression ("3 * 4 *" must be an error, not "3 * 4").
_BARE_STRIP = " \t\r\n.,;:!?'\"`_"
_MAX_ECHO = 40  # characters of a bad action quoted back in feedback (expressions run long)
_MAX_DRAWS = 200  # number draws tried by generate_puzzle before it gives up
_EXAMPLE = "[(25 + 3) * 4]"
# Countdown scoring: 10 points exact, 7 within 5, 5 within 10 (here as a fraction of 10).
_CLOSENESS = ((0, 1.0), (5, 0.7), (10, 0.5))


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
                raise _ParseError(f"division by zero ({_show(value)} / 0)")
            else:
                quotient = value / right
                if not self.allow_fractions and quotient.denominator != 1:
                    raise _ParseError(
                        f"{_show(value)} / {_show(right)} is not a whole number: "
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


def _show(value: Fraction) -> str:
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


def parse_reply(action: str) -> tuple[str | None, str | None]:
    """Extract the expression from free model text (not yet evaluated).

    The last ``[bracketed]`` text wins; without brackets the whole reply must look like an
    expression (digits, operators, parentheses, spaces). A trailing ``= 112`` is dropped.

    Example:
        >>> parse_reply("I get [(25 + 3) * 4 = 112]")
        ('(25 + 3) * 4', None)
        >>> parse_reply("(25+3)*4")
        ('(25+3)*4', None)
        >>> parse_reply("no idea")
        (None, 'no expression found: put your expression in square brackets, like [(25 + 3) * 4]')
    """
    candidate, bracketed, problem = read_reply(action, _BARE_STRIP)
    if problem is not None:
        return None, problem
    if not bracketed and (
        len(candidate) > MAX_EXPRESSION_LENGTH
        or not all(c in "0123456789+-*/×÷()= \t\r\n" for c in candidate)
    ):
        return (
            None,
            f"no expression found: put your expression in square brackets, like {_EXAMPLE}",
        )
    if len(candidate) > MAX_EXPRESSION_LENGTH + 20:  # checked before any regex runs over it
        return None, (
            f"the expression is too long ({len(candidate)} characters; "
            f"at most {MAX_EXPRESSION_LENGTH})"
        )
    candidate = _CLAIMED_RESULT.sub("", candidate).strip()
    if not candidate:
        return None, "the expression was empty"
    return candidate, None


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


def oracle_action(env: gym.Env[str, str]) -> str:
    """An exact solution for ``env``'s puzzle, found by :func:`solve`, as ``[expression]``."""
    game: TextCountdownEnv = env.unwrapped  # type: ignore[assignment]
    solution = solve(game.numbers, game.target)
    assert solution is not None, "every generated puzzle has a solution"
    return f"[{solution}]"


def _closeness(distance: Fraction) -> float:
    for within, score in _CLOSENESS:
        if distance <= within:
            return score
    return 0.0


class TextCountdownEnv(gym.Env[str, str]):
    """Countdown numbers game: combine the given numbers to hit the target exactly.

    ## Description
    Numbers are drawn like the TV show's cards (large 25, 50, 75, 100; small two each of 1-10)
    with ``self.np_random``, and the target is the value of a random expression over some of them
    (see :func:`generate_puzzle`), so every puzzle is solvable. The agent writes an arithmetic
    expression using ``+ - * /`` and parentheses, each number at most once (not all need be used).
    Expressions are read by a small tokenizer and recursive-descent parser (never ``eval``) and
    evaluated exactly with :class:`fractions.Fraction`. Rules: whole numbers only, so every
    division must come out exact (``allow_fractions=True`` lifts this; the final value must still
    equal the target); intermediate results may be zero or negative; no unary signs, no powers.

    ## Action Space
    Free text (:class:`trl_env.TextSpace`). The expression is the last ``[bracketed]`` text, like
    ``[(25 + 3) * 4]``, or the whole reply if it contains only digits, operators and parentheses;
    ``×``/``÷`` are accepted and a trailing ``= 112`` is ignored. At most 200 characters and 20
    levels of parentheses. Anything else (names, ``**``, other symbols, numbers not given or used
    too often, inexact or zero division, syntax errors) is an *invalid action*: feedback saying
    exactly what was wrong, ``info["invalid_action"]`` and ``-invalid_action_penalty``. Every
    reply, valid or not, uses up an attempt.

    ## Observation Space
    Text. The first observation states the numbers, the target, the rules and the reply format.
    Every later one is only the new message: the value obtained and how far it is from the
    target (or what was wrong), the attempts left, and a solution once the episode ends.

    ## Rewards
    1.0 for an expression equal to the target, 0.0 otherwise; ``-invalid_action_penalty`` for an
    invalid action. With ``partial_credit > 0``, each valid attempt also earns ``partial_credit``
    times the increase of its best closeness so far, where closeness is the show's scoring out of
    10 points: 0.7 within 5 of the target, 0.5 within 10, else 0 (the shaped part of a return is
    at most ``0.7 * partial_credit``).

    ## Episode End
    Terminated when the target is hit. Truncated after ``max_attempts`` replies; registered with
    ``max_episode_steps=3`` (the default) so gymnasium's ``TimeLimit`` agrees.

    ## Arguments
    ```python
    gym.make("TextCountdown-v0", num_numbers=6, target_range=(101, 999), num_large=None,
             max_attempts=3, allow_fractions=False, invalid_action_penalty=0.1,
             partial_credit=0.0, render_mode="ansi")
    ```
    ``TextCountdownEasy-v0`` is ``num_numbers=4, target_range=(10, 99)``. ``num_large`` fixes how
    many large numbers are drawn (default random). Pass ``max_episode_steps`` equal to
    ``max_attempts`` when changing it. ``reset(options={"numbers": [...], "target": 112})`` plays
    a given puzzle (it need not be solvable).

    ## Info
    ``numbers``, ``target``, ``expression`` and ``value`` of the step (``None`` when invalid;
    ``value`` is an int, or a float when fractions are allowed and it is not whole), ``distance``,
    ``attempts``, ``invalid_action`` (with ``error``), ``won``, and ``solution`` (an expression
    reaching the target, when known) once the episode ends.

    ## Version History
    * v0: Initial version.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextCountdown-v0")
        >>> observation, info = env.reset(seed=0, options={"numbers": [25, 3, 4, 7], "target": 112})
        >>> env.step("[(25 + 7) * 4]")[0]
        '(25 + 7) * 4 = 128, which is 16 away from 112. 2 attempts left.'
        >>> env.step("I have it: [(25 + 3) * 4]")[1:3]
        (1.0, True)
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        num_numbers: int = 6,
        target_range: tuple[int, int] = (101, 999),
        num_large: int | None = None,
        max_attempts: int = 3,
        allow_fractions: bool = False,
        invalid_action_penalty: float = 0.1,
        partial_credit: float = 0.0,
    ) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        if not 2 <= num_numbers <= 8:
            raise ValueError(f"num_numbers must be in [2, 8], got {num_numbers}")
        low, high = target_range
        if not 1 <= low <= high:
            raise ValueError(
                f"target_range must be (low, high) with 1 <= low <= high, got {target_range}"
            )
        if num_large is not None and not 0 <= num_large <= min(4, num_numbers):
            raise ValueError(f"num_large must be in [0, {min(4, num_numbers)}], got {num_large}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        if invalid_action_penalty < 0 or partial_credit < 0:
            raise ValueError("invalid_action_penalty and partial_credit must be >= 0")
        self.render_mode = render_mode
        self.num_numbers = num_numbers
        self.target_range = (int(low), int(high))
        self.num_large = num_large
        self.max_attempts = max_attempts
        self.allow_fractions = bool(allow_fractions)
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.partial_credit = float(partial_credit)
        self.observation_space = TextSpace(4096)
        self.action_space = TextSpace(DEFAULT_MAX_LENGTH)
        self.numbers: tuple[int, ...] = ()
        self.target = 0
        self.solution: str | None = None
        self._reset_state()

    def _reset_state(self) -> None:
        self.turn = 0
        self.expressions: list[str] = []
        self.values: list[Fraction] = []
        self.won = False
        self._done = False
        self._best_closeness = 0.0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Draw new numbers and a target (or take them from ``options``) and state the rules."""
        super().reset(seed=seed)
        options = options or {}
        if "numbers" in options or "target" in options:
            numbers, target = options.get("numbers"), options.get("target")
            if (
                not isinstance(numbers, list | tuple)
                or not numbers
                or not all(isinstance(n, int | np.integer) and 1 <= n <= 1000 for n in numbers)
                or not isinstance(target, int | np.integer)
                or not 1 <= target <= 1_000_000
            ):
                raise ValueError(
                    "options must give 'numbers' (a list of ints 1-1000) and 'target' (an int "
                    f"1-1000000), got numbers={numbers!r}, target={target!r}"
                )
            self.numbers, self.target, self.solution = (
                tuple(int(n) for n in numbers),
                int(target),
                None,
            )
        else:
            self.numbers, self.target, self.solution = generate_puzzle(
                self.np_random, self.num_numbers, self.target_range, self.num_large
            )
        self._reset_state()
        division = (
            "fractions are allowed along the way"
            if self.allow_fractions
            else "whole numbers only: every division must come out exact"
        )
        message = (
            "Let's play the Countdown numbers game.\n"
            f"Numbers: {' '.join(map(str, self.numbers))}\nTarget: {self.target}\n"
            "Write an arithmetic expression that equals the target, using + - * / and "
            "parentheses. Use each number at most once (you need not use them all); "
            f"{division}; no other symbols.\n"
            f"Reply with your expression in square brackets, for example {_EXAMPLE}. "
            f"You have {count_noun(self.max_attempts, 'attempt')}."
        )
        return message, self._info(None, None)

    def _info(self, expression: str | None, value: Fraction | None) -> dict[str, Any]:
        shown: int | float | None = None
        if value is not None:
            shown = int(value) if value.denominator == 1 else float(value)
        return {
            "numbers": list(self.numbers),
            "target": self.target,
            "expression": expression,
            "value": shown,
            "distance": None if value is None else float(abs(value - self.target)),
            "attempts": self.turn,
            "invalid_action": False,
            "won": self.won,
        }

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Check one expression. Never raises on any string ``action``."""
        if not self.numbers or self._done:
            raise reset_needed("TextCountdown", started=bool(self.numbers))
        self.turn += 1
        left = self.max_attempts - self.turn
        expression, problem = parse_reply(action)
        value: Fraction | None = None
        if expression is not None:
            value, problem = evaluate_expression(
                expression, self.numbers, allow_fractions=self.allow_fractions
            )
        if problem is not None or value is None:
            info = self._info(None, None)
            info.update(invalid_action=True, error=problem)
            reward = -self.invalid_action_penalty
            message = invalid_feedback(
                "expression",
                problem,
                f"Reply with an expression in square brackets, like {_EXAMPLE}.",
                consequence="That used up an attempt.",
            )
        else:
            assert expression is not None
            self.expressions.append(expression)
            self.values.append(value)
            self.won = value == self.target
            distance = abs(value - self.target)
            shown = (
                _show(value)
                if value.denominator == 1
                else f"{_show(value)} (about {float(value):.3g})"
            )
            echo = " ".join(expression.split())
            if self.won:
                reward = 1.0
                message = f"{echo} = {shown}. Exactly {self.target}: you win!"
            else:
                reward = self._shaped_reward(distance)
                message = f"{echo} = {shown}, which is {_show(distance)} away from {self.target}."
            info = self._info(expression, value)
        terminated = self.won
        truncated = not terminated and left <= 0
        if truncated:
            message += " No attempts left."
            if self.solution is not None:
                message += f" One solution: {self.solution} = {self.target}."
        elif not terminated:
            message += f" {count_noun(left, 'attempt')} left."
        if terminated or truncated:
            self._done = True
            info["solution"] = self.solution
        return message, reward, terminated, truncated, info

    def _shaped_reward(self, distance: Fraction) -> float:
        if not self.partial_credit:
            return 0.0
        closeness = _closeness(distance)
        reward, self._best_closeness = improvement_reward(
            self.partial_credit, self._best_closeness, closeness
        )
        return reward

    def render(self) -> str | None:  # type: ignore[override]
        """The puzzle and the attempts so far as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        lines = [f"numbers: {' '.join(map(str, self.numbers))}   target: {self.target}"]
        lines += [
            f"{' '.join(e.split())} = {_show(v)}"
            for e, v in zip(self.expressions, self.values, strict=True)
        ]
        lines += ["(invalid)"] * (self.turn - len(self.expressions))
        return "\n".join(lines) + "\n"
