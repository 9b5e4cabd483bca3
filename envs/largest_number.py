"""Largest number as a text environment: pick the largest of a few numbers (a warm-up task)."""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
import numpy as np

from ._common import BARE_STRIP, MAX_DIGITS, count_noun, has_whitespace, read_whole_number
from ._text_game import TextGame

__all__ = ["TextLargestNumberEnv", "oracle_action", "parse_reply"]

# The whole reply is one pair of brackets.
_ALONE = re.compile(r"\[([^\[\]]*)\]")
_NOT_ALONE = "it held more than the number"


def parse_reply(action: str) -> tuple[int | None, str | None]:
    """Extract the chosen number from free model text.

    The reply must be the number alone: in square brackets (``[7]``) or bare (``7``, with any
    surrounding punctuation). Anything more (text around the brackets, several numbers, stray
    brackets) is not a reply.

    Args:
        action: The model's action text.

    Returns:
        ``(number, None)``, or ``(None, problem)`` describing why no number could be read.

    Example:
        >>> parse_reply(" [7] ")
        (7, None)
        >>> parse_reply("7.")
        (7, None)
        >>> parse_reply("It is [7]")
        (None, 'it held more than the number')
    """
    if not isinstance(action, str):
        return None, f"your reply must be text, not {type(action).__name__}"
    text = action.strip()
    alone = _ALONE.fullmatch(text)
    if alone:
        candidate = alone.group(1).strip()
        if not candidate:
            return None, "the brackets were empty"
    elif "[" in text or "]" in text:
        return None, _NOT_ALONE
    else:
        candidate = text.strip(BARE_STRIP)
        if not candidate:
            return None, "your reply was empty"
        if has_whitespace(candidate):
            return None, _NOT_ALONE
    return read_whole_number(candidate)


class TextLargestNumberEnv(TextGame[int]):
    """Largest number: reply with the largest of the numbers shown.

    ## Description
    A warm-up task, the easiest of the catalogue: each round shows ``num_options`` distinct
    integers from ``low..high`` (default: 4 of the digits 0-9), and the agent must reply with the
    largest. With ``self.np_random``, the largest is drawn uniformly from the values it can take
    (``low + num_options - 1`` to ``high``), then the others uniformly below it, in a random
    order: no fixed reply is right more than ``1 / (high - low - num_options + 2)`` of the time
    (1/7 with the defaults), picking one of the shown numbers at random is right
    ``1 / num_options`` of the time, and a model must read the numbers to do better. It exists
    to check, in minutes on a CPU, that a training setup learns at all (see
    ``docs/learning.md``), not to measure anything about language models.

    ## Action Space
    Free text (:class:`trl_env.TextSpace`). The reply must be one whole number alone, in square
    brackets (``[7]``) or bare (``7``); see :func:`parse_reply`. Any number is a valid reply (one
    that is not the largest, or not shown at all, earns only what ``partial_credit`` gives) and
    ends the round. Anything else (empty, empty brackets, several different numbers) is an
    *invalid action*: it never raises, uses up a turn (the round is asked again),
    returns feedback that says exactly what was wrong, sets ``info["invalid_action"]`` and gives
    ``-invalid_action_penalty``.
    A reply that states exactly one legal move among other words ("The largest number is 7.") or in a code
    fence is read as that move; two different legal moves leave it invalid (see
    :meth:`~trl_env.envs.TextGame.read_move`). The feedback on an invalid reply quotes it.

    ## Observation Space
    Text. The first observation states the rule and shows the first numbers; every later one is
    only the new message (the delta): whether the last reply was right and the next numbers.

    ## Rewards
    Per round, ``1 / num_rounds`` for the largest number, so a perfect episode returns 1.0.
    With ``partial_credit > 0`` (graded reward), a shown number that is not the largest earns
    ``partial_credit / num_rounds`` times its rank among the shown numbers, from 0 (the smallest)
    to ``(num_options - 2) / (num_options - 1)`` (the second largest). A number that was not shown
    earns 0. ``-invalid_action_penalty`` for an invalid action.

    ## Episode End
    Terminated when every round has a valid reply. Truncated after ``max_turns`` replies (valid
    or not; default ``num_rounds + 2``); registered with ``max_episode_steps`` equal to it so
    gymnasium's ``TimeLimit`` agrees.

    ## Arguments
    ```python
    gym.make("TextLargestNumber-v0", num_options=4, low=0, high=9, num_rounds=1, max_turns=3,
             invalid_action_penalty=0.1, partial_credit=0.0, render_mode="ansi")
    ```
    Pass ``max_episode_steps`` equal to ``max_turns`` when changing either.
    ``reset(options={"numbers": [[3, 8, 1, 5]]})`` fixes the numbers of each round.

    ## Info
    ``numbers`` (of the round just asked), ``answer`` (their largest), ``reply`` (only when
    valid), ``correct``, ``invalid_action`` (with ``error``), ``score`` (right replies so far)
    and, once the episode ends, ``won`` (every round right). ``reset`` and every step that asks
    a round also give ``legal_moves``: the numbers now shown, as strings (the replies worth
    considering; a uniformly random one is right ``1 / num_options`` of the time).

    ## Version History
    * v0: Initial version. Replies that state one legal move in plain words are accepted, and
      invalid-reply feedback quotes the reply (issue 9); seeds and valid moves are unchanged.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextLargestNumber-v0")
        >>> observation, info = env.reset(seed=0, options={"numbers": [[3, 8, 1, 5]]})
        >>> observation.splitlines()[-1]
        'Numbers: [3] [8] [1] [5]'
        >>> env.step("[8]")[1:3]
        (1.0, True)
    """

    game_name = "TextLargestNumber"
    description = "Warm-up: reply with the largest of {num_options} numbers in {low}-{high}; a tiny model learns it on a CPU."
    move_kind = "reply"
    observation_length = 1024
    options_example = '{"numbers": [[3, 8, 1, 5]]}'
    invalid_advice = "Reply with only the largest number, in square brackets, like [5]."

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        num_options: int = 4,
        low: int = 0,
        high: int = 9,
        num_rounds: int = 1,
        max_turns: int | None = None,
        invalid_action_penalty: float = 0.1,
        partial_credit: float = 0.0,
    ) -> None:
        super().__init__(render_mode, invalid_action_penalty=invalid_action_penalty)
        self._check_arguments(num_options, low, high, num_rounds)
        if max_turns is None:
            max_turns = num_rounds + 2
        if isinstance(max_turns, bool) or not isinstance(max_turns, int) or max_turns < num_rounds:
            raise ValueError(
                f"max_turns must be an int >= num_rounds ({num_rounds}), got {max_turns!r}"
            )
        if not 0 <= partial_credit <= 1:
            raise ValueError("invalid_action_penalty must be >= 0 and partial_credit in [0, 1]")
        self.num_options = num_options
        self.low, self.high = low, high
        self.num_rounds = num_rounds
        self.max_turns = max_turns
        self.partial_credit = float(partial_credit)
        self.rounds: list[list[int]] = []
        self.round = 0
        self.replies: list[int] = []
        self.score = 0

    @staticmethod
    def _check_arguments(num_options: int, low: int, high: int, num_rounds: int) -> None:
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)):
            raise ValueError(f"low and high must be integers, got {low!r} and {high!r}")
        if max(abs(low), abs(high)) >= 10**MAX_DIGITS:
            raise ValueError(f"low and high must be below 10**{MAX_DIGITS} in size")
        if isinstance(num_options, bool) or not isinstance(num_options, int) or num_options < 2:
            raise ValueError(f"num_options must be an int >= 2, got {num_options!r}")
        if high - low + 1 < num_options:
            raise ValueError(
                f"low..high ({low}..{high}) holds fewer than num_options={num_options} "
                "distinct numbers"
            )
        if isinstance(num_rounds, bool) or not isinstance(num_rounds, int) or num_rounds < 1:
            raise ValueError(f"num_rounds must be an int >= 1, got {num_rounds!r}")

    @property
    def turn_limit(self) -> int:
        return self.max_turns

    def _draw(self) -> list[int]:
        # The largest first, uniform over the values it can take, then the others below it: so
        # no fixed reply (say, always the top of the range) is right more often than by chance.
        answer = int(self.np_random.integers(self.low + self.num_options - 1, self.high + 1))
        others = self.np_random.choice(answer - self.low, size=self.num_options - 1, replace=False)
        numbers = [answer, *(self.low + int(i) for i in others)]
        order = self.np_random.permutation(self.num_options)
        return [numbers[int(i)] for i in order]

    def _check_fixed(self, fixed: Any) -> list[list[int]]:
        problem = (
            f"options['numbers'] must be a list of {self.num_rounds} list(s) of "
            f"{self.num_options} distinct ints in [{self.low}, {self.high}], got {fixed!r}"
        )
        if isinstance(fixed, str | bytes) or len(fixed) != self.num_rounds:
            raise ValueError(problem)
        rounds = []
        for numbers in fixed:
            if (
                isinstance(numbers, str | bytes)
                or len(numbers) != self.num_options
                or len(set(numbers)) != self.num_options
                or any(
                    isinstance(n, bool) or not isinstance(n, int) or not self.low <= n <= self.high
                    for n in numbers
                )
            ):
                raise ValueError(problem)
            rounds.append([int(n) for n in numbers])
        return rounds

    @staticmethod
    def _show(numbers: list[int]) -> str:
        return "Numbers: " + " ".join(f"[{n}]" for n in numbers)

    def new_game(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Draw the numbers of the episode (or take ``options["numbers"]``) and show the first."""
        fixed = options.get("numbers")
        if fixed is None:
            self.rounds = [self._draw() for _ in range(self.num_rounds)]
        else:
            self.rounds = self._check_fixed(fixed)
        self.round, self.replies, self.score = 0, [], 0
        rounds = "" if self.num_rounds == 1 else f" {count_noun(self.num_rounds, 'round')} to play."
        observation = (
            f"Which number is the largest?{rounds} "
            "Reply with only that number, in square brackets.\n" + self._show(self.rounds[0])
        )
        return observation, {"numbers": list(self.rounds[0]), "legal_moves": self._legal_moves()}

    def _legal_moves(self) -> list[str]:
        return [str(n) for n in self.rounds[self.round]]

    def parse_move(self, action: Any) -> tuple[int | None, str | None]:
        return parse_reply(action)

    def _round_info(self, correct: bool) -> dict[str, Any]:
        numbers = self.rounds[self.round]
        return {"numbers": list(numbers), "answer": max(numbers), "correct": correct}

    def invalid_info(self) -> dict[str, Any]:
        return self._round_info(False)

    def play_move(self, move: int) -> tuple[str, float, dict[str, Any]]:
        numbers = self.rounds[self.round]
        answer = max(numbers)
        # "reply" only when valid: an int in some sub-envs and None in others would break the
        # numeric info arrays of gymnasium's vector envs.
        info = {**self._round_info(move == answer), "reply": move}
        self.replies.append(move)
        self.round += 1
        if move == answer:
            self.score += 1
            return "Correct.", 1.0 / self.num_rounds, info
        reward = 0.0
        if move in numbers and self.partial_credit:
            rank = sorted(numbers).index(move) / (self.num_options - 1)
            reward = self.partial_credit * rank / self.num_rounds
        shown = "" if move in numbers else " (not one of the numbers)"
        return f"Wrong: you replied [{move}]{shown}, the largest was [{answer}].", reward, info

    def is_over(self) -> bool:
        return self.round >= self.num_rounds

    def end_of_step(
        self, message: str, info: dict[str, Any], *, terminated: bool, truncated: bool
    ) -> str:
        if terminated or truncated:
            info["won"] = self.score == self.num_rounds
            if truncated:
                message += f" No turns left. The largest was [{info['answer']}]."
            message += f" Score: {self.score} of {self.num_rounds}."
        else:
            if not info["invalid_action"]:
                message += "\n" + self._show(self.rounds[self.round])
            info["legal_moves"] = self._legal_moves()
        info["score"] = self.score
        return message

    def draw(self) -> str:
        """The rounds so far as text."""
        rows = [
            f"round {min(self.round + 1, self.num_rounds)} of {self.num_rounds}, "
            f"turn {self.turn} of {self.max_turns}, score {self.score}"
        ]
        for numbers, reply in zip(self.rounds, self.replies, strict=False):
            mark = "ok" if reply == max(numbers) else "wrong"
            rows.append(f"{' '.join(str(n) for n in numbers)} -> {reply} {mark}")
        return "\n".join(rows) + "\n"

    def oracle_move(self) -> str:
        """The largest number of the round now asked."""
        return f"[{max(self.rounds[self.round])}]"

    def random_move(self, rng: np.random.Generator) -> str:
        """One of the numbers now shown, uniformly at random (right ``1 / num_options`` of the time)."""
        legal = self._legal_moves()
        return f"[{legal[int(rng.integers(len(legal)))]}]"


def oracle_action(env: gym.Env[str, str]) -> str:
    """The right reply: the largest number of the round now asked (``game.oracle_action()``).

    Args:
        env: A ``TextLargestNumber`` env (wrapped or not), reset and not yet ended.

    Returns:
        The action text, like ``"[8]"``.
    """
    return TextLargestNumberEnv.unwrap(env, "oracle_action").oracle_action()
