"""The Countdown numbers game as a text environment: reach a target with + - * / and parentheses."""

from __future__ import annotations

import itertools
import re
from fractions import Fraction
from typing import Any

import gymnasium as gym
import numpy as np

from ._common import count_noun, improvement_reward, read_reply
from ._countdown_math import (
    LARGE_NUMBERS,
    MAX_EXPRESSION_LENGTH,
    MAX_NESTING,
    SMALL_NUMBERS,
    evaluate_expression,
    generate_puzzle,
    show,
    solve,
)
from ._text_game import TextGame

__all__ = [
    "LARGE_NUMBERS",
    "MAX_EXPRESSION_LENGTH",
    "MAX_NESTING",
    "SMALL_NUMBERS",
    "TextCountdownEnv",
    "evaluate_expression",
    "generate_puzzle",
    "oracle_action",
    "parse_reply",
    "solve",
]

_CLAIMED_RESULT = re.compile(
    r"\s*=\s*-?\d{1,12}\s*$", re.ASCII
)  # "(25 + 3) * 4 = 112": the claim is ignored
# _common.BARE_STRIP without "*": it is an operator, and stripping it could hide a broken
# expression ("3 * 4 *" must be an error, not "3 * 4").
_BARE_STRIP = " \t\r\n.,;:!?'\"`_"
_EXAMPLE = "[(25 + 3) * 4]"
# A run of expression characters holding a digit: one piece of a reply that may be an expression.
_EXPRESSION_RUN = re.compile(r"[0-9+\-*/×÷()=\s]*[0-9][0-9+\-*/×÷()=\s]*")

# Countdown scoring: 10 points exact, 7 within 5, 5 within 10 (here as a fraction of 10).
_CLOSENESS = ((0, 1.0), (5, 0.7), (10, 0.5))


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


def oracle_action(env: gym.Env[str, str]) -> str:
    """An exact solution for ``env``'s puzzle, found by :func:`solve`, as ``[expression]``."""
    return TextCountdownEnv.unwrap(env, "oracle_action").oracle_action()


def _closeness(distance: Fraction) -> float:
    for within, score in _CLOSENESS:
        if distance <= within:
            return score
    return 0.0


class TextCountdownEnv(TextGame[tuple[str, Fraction]]):
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
    A reply that states exactly one legal move among other words ("I get (25 + 3) * 4 = 112") or in a code
    fence is read as that move; two different legal moves leave it invalid (see
    :meth:`~trl_env.envs.TextGame.read_move`). The feedback on an invalid reply quotes it.

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
    gym.make("TextCountdown-v0", num_numbers=6, target_range=[101, 999], num_large=None,
             max_attempts=3, allow_fractions=False, invalid_action_penalty=0.1,
             partial_credit=0.0, render_mode="ansi")
    ```
    ``TextCountdownEasy-v0`` is ``num_numbers=4, target_range=[10, 99]`` (a list or a tuple of
    two ints; registered as a list so the ``EnvSpec`` JSON round trip is exact). ``num_large`` fixes how
    many large numbers are drawn (default random). Pass ``max_episode_steps`` equal to
    ``max_attempts`` when changing it. ``reset(options={"numbers": [...], "target": 112})`` plays
    a given puzzle (it need not be solvable).

    ## Info
    ``numbers``, ``target``, ``expression`` of the step (``None`` when invalid), ``value`` and
    ``distance`` from the target (both floats, left out when the reply was invalid, so vector
    envs batch them), ``attempts``, ``invalid_action`` (with ``error``), ``won``, and ``solution`` (an expression
    reaching the target, when known) once the episode ends.

    ## Version History
    * v0: Initial version. Since the text-game base class, ``value`` and ``distance`` are floats
      left out after an invalid reply (were ``None``; ``value`` was an int when whole), and
      ``target_range`` is registered as a list; observations, rewards and seeds are unchanged. Later: replies that state
      one legal move in plain words are accepted, and invalid-reply feedback quotes the reply.

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

    game_name = "TextCountdown"
    description = "Countdown numbers game: hit a target in {target_range[0]}-{target_range[1]} from {num_numbers} numbers with + - * /."
    move_kind = "expression"
    options_example = '{"numbers": [25, 3, 4, 7], "target": 112}'
    invalid_advice = f"Reply with an expression in square brackets, like {_EXAMPLE}."
    invalid_consequence = "That used up an attempt."

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        num_numbers: int = 6,
        target_range: tuple[int, int] | list[int] = (101, 999),
        num_large: int | None = None,
        max_attempts: int = 3,
        allow_fractions: bool = False,
        invalid_action_penalty: float = 0.1,
        partial_credit: float = 0.0,
    ) -> None:
        super().__init__(render_mode, invalid_action_penalty=invalid_action_penalty)
        if not 2 <= num_numbers <= 8:
            raise ValueError(f"num_numbers must be in [2, 8], got {num_numbers}")
        if isinstance(target_range, str | bytes) or len(target_range) != 2:
            raise ValueError(f"target_range must be [low, high], got {target_range!r}")
        low, high = target_range
        if not 1 <= low <= high:
            raise ValueError(
                f"target_range must be (low, high) with 1 <= low <= high, got {target_range}"
            )
        if num_large is not None and not 0 <= num_large <= min(4, num_numbers):
            raise ValueError(f"num_large must be in [0, {min(4, num_numbers)}], got {num_large}")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        if partial_credit < 0:
            raise ValueError("invalid_action_penalty and partial_credit must be >= 0")
        self.num_numbers = num_numbers
        self.target_range = (int(low), int(high))
        self.num_large = num_large
        self.max_attempts = max_attempts
        self.allow_fractions = bool(allow_fractions)
        self.partial_credit = float(partial_credit)
        self.numbers: tuple[int, ...] = ()
        self.target = 0
        self.solution: str | None = None
        self.expressions: list[str] = []
        self.values: list[Fraction] = []
        self.won = False

    @property
    def turn_limit(self) -> int:
        return self.max_attempts

    def _given_puzzle(self, options: dict[str, Any]) -> tuple[tuple[int, ...], int, None]:
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
        return tuple(int(n) for n in numbers), int(target), None

    def new_game(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Draw new numbers and a target (or take them from ``options``) and state the rules."""
        if "numbers" in options or "target" in options:
            self.numbers, self.target, self.solution = self._given_puzzle(options)
        else:
            self.numbers, self.target, self.solution = generate_puzzle(
                self.np_random, self.num_numbers, self.target_range, self.num_large
            )
        self.expressions, self.values = [], []
        self.won = False
        self._best_closeness = 0.0
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
        info: dict[str, Any] = {
            "numbers": list(self.numbers),
            "target": self.target,
            "expression": expression,
            "attempts": self.turn,
            "invalid_action": False,
            "won": self.won,
        }
        if value is not None:  # left out, never None: vector envs batch it as a float array
            info["value"] = float(value)
            info["distance"] = float(abs(value - self.target))
        return info

    def parse_move(self, action: Any) -> tuple[tuple[str, Fraction] | None, str | None]:
        expression, problem = parse_reply(action)
        if expression is None:
            return None, problem
        value, problem = evaluate_expression(
            expression, self.numbers, allow_fractions=self.allow_fractions
        )
        if problem is not None or value is None:
            return None, problem
        return (expression, value), None

    def move_candidates(self, text: str) -> list[str]:
        """The runs of expression characters in a reply ("I get (25 + 3) * 4" -> one run)."""
        runs = (run.strip() for run in _EXPRESSION_RUN.findall(text[: 4 * MAX_EXPRESSION_LENGTH]))
        # A lone number that is not one of the numbers is never legal: skip it unparsed.
        return [run for run in runs if not run.isdigit() or int(run) in self.numbers]

    def invalid_info(self) -> dict[str, Any]:
        return self._info(None, None)

    def play_move(self, move: tuple[str, Fraction]) -> tuple[str, float, dict[str, Any]]:
        expression, value = move
        self.expressions.append(expression)
        self.values.append(value)
        self.won = value == self.target
        distance = abs(value - self.target)
        shown = (
            show(value) if value.denominator == 1 else f"{show(value)} (about {float(value):.3g})"
        )
        echo = " ".join(expression.split())
        if self.won:
            reward = 1.0
            message = f"{echo} = {shown}. Exactly {self.target}: you win!"
        else:
            reward = self._shaped_reward(distance)
            message = f"{echo} = {shown}, which is {show(distance)} away from {self.target}."
        return message, reward, self._info(expression, value)

    def is_over(self) -> bool:
        return self.won

    def end_of_step(
        self, message: str, info: dict[str, Any], *, terminated: bool, truncated: bool
    ) -> str:
        if truncated:
            message += " No attempts left."
            if self.solution is not None:
                message += f" One solution: {self.solution} = {self.target}."
        elif not terminated:
            message += f" {count_noun(self.max_attempts - self.turn, 'attempt')} left."
        if terminated or truncated:
            info["solution"] = self.solution
        return message

    def _shaped_reward(self, distance: Fraction) -> float:
        if not self.partial_credit:
            return 0.0
        closeness = _closeness(distance)
        reward, self._best_closeness = improvement_reward(
            self.partial_credit, self._best_closeness, closeness
        )
        return reward

    def draw(self) -> str:
        """The puzzle and the attempts so far as text."""
        lines = [f"numbers: {' '.join(map(str, self.numbers))}   target: {self.target}"]
        lines += [
            f"{' '.join(e.split())} = {show(v)}"
            for e, v in zip(self.expressions, self.values, strict=True)
        ]
        lines += ["(invalid)"] * (self.turn - len(self.expressions))
        return "\n".join(lines) + "\n"

    def oracle_move(self) -> str:
        """An exact solution found by :func:`solve`, in brackets."""
        solution = solve(self.numbers, self.target)
        assert solution is not None, "every generated puzzle has a solution"
        return f"[{solution}]"

    def random_move(self, rng: np.random.Generator) -> str:
        """A uniformly random legal move of two different numbers and one operator, in brackets.

        Only legal ones: like every catalogue env's random policy, it shows the reply format and
        the rules, never a rejected reply (drawing the operator blindly made about a quarter of
        its moves inexact divisions, and a model warm-started on its demos copied them).
        """
        moves = [
            expression
            for a, b in itertools.permutations(range(len(self.numbers)), 2)
            for operator in "+-*/"
            if evaluate_expression(
                expression := f"{self.numbers[a]} {operator} {self.numbers[b]}",
                self.numbers,
                allow_fractions=self.allow_fractions,
            )[1]
            is None
        ]
        return f"[{moves[int(rng.integers(len(moves)))]}]"
