"""The rules the guessing games share: find a secret in a few guesses from feedback (private).

Guess the number, Wordle and Mastermind are one game with three kinds of secret: the agent has
``max_guesses`` guesses to find a secret of the same kind as a guess (a number, a word, a code),
and each guess is answered with feedback (a hint, a pattern, black and white pegs). The turn
limit, the bookkeeping of guesses and feedback, the win, the reward (1.0 for the win, or the
shaped reward for beating the best score so far) and the end of each message are the same in all
three, so they are written once, here; each game keeps its own secret, rules, scoring and wording.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar, Generic, TypeVar

from ._common import count_noun, improvement_reward
from ._text_game import Move, TextGame

__all__ = ["Feedback", "GuessingGame"]

Feedback = TypeVar("Feedback")
"""What a guess is answered with: a hint (``"higher"``), a pattern (``"GYXXG"``), ``(2, 1)``."""


class GuessingGame(TextGame[Move], Generic[Move, Feedback]):
    """Find a secret in ``max_guesses`` guesses, from the feedback on each guess.

    Fills these :class:`TextGame` hooks: :attr:`turn_limit` (``max_guesses``), :meth:`is_over`
    (the secret is found), :meth:`new_game` (the secret from :meth:`draw_secret`, the rules from
    :meth:`rules`) and :meth:`end_of_step` (the win, the secret or the guesses left; info's
    ``guesses``, the feedback so far under :attr:`feedback_key`, ``won``, and ``secret`` once the
    episode ends). A game fills :meth:`draw_secret`, :meth:`rules`, :meth:`win_message`,
    :meth:`~TextGame.parse_move`, :meth:`~TextGame.play_move` (which calls :meth:`record_guess`),
    :meth:`~TextGame.draw` and its policies, and may change :meth:`shown_secret`.

    Attributes:
        secret: The secret of the game (set by ``reset``).
        guesses: The valid guesses so far.
        feedbacks: The feedback on each of them.
        won: Whether the secret was found.
    """

    move_kind = "guess"
    feedback_key: ClassVar[str] = "feedbacks"
    """The info key of the feedback so far (``"hints"``, ``"patterns"``, ``"feedbacks"``)."""
    secret_name: ClassVar[str] = "secret"
    """The secret's name in the last message: ``"No guesses left. The word was CRANE."``."""
    message_separator: ClassVar[str] = "\n"
    """What joins a step's message and its end (a space where the messages are one line)."""

    secret: Move

    def __init__(
        self,
        render_mode: str | None,
        max_guesses: int,
        invalid_action_penalty: float,
        partial_credit: float,
    ) -> None:
        super().__init__(render_mode, invalid_action_penalty=invalid_action_penalty)
        if isinstance(max_guesses, bool) or not isinstance(max_guesses, int) or max_guesses < 1:
            raise ValueError(
                f"max_guesses must be an int >= 1 (like max_guesses=6), got {max_guesses!r}"
            )
        if partial_credit < 0:
            raise ValueError("invalid_action_penalty and partial_credit must be >= 0")
        self.max_guesses = max_guesses
        self.partial_credit = float(partial_credit)
        self.guesses: list[Move] = []
        self.feedbacks: list[Feedback] = []
        self.won = False
        self._best_score = 0.0

    @property
    def turn_limit(self) -> int:
        return self.max_guesses

    @abstractmethod
    def draw_secret(self, secret: Any) -> Move:
        """A new secret: drawn with ``self.np_random`` when ``secret`` is ``None``, else ``secret``.

        Args:
            secret: ``reset(options={"secret": ...})``, or ``None``.

        Raises:
            ValueError: If a given ``secret`` is not one the game could draw (say which are).
        """

    @abstractmethod
    def rules(self) -> str:
        """The first observation: the rules of the game just drawn and the reply format."""

    @abstractmethod
    def win_message(self, tries: str) -> str:
        """The end of the winning step's message; ``tries`` is like ``"3 guesses"``."""

    def shown_secret(self) -> str:
        """The secret as the last message shows it (default: ``str(secret)``)."""
        return str(self.secret)

    def new_game(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Draw a new secret (or take ``options["secret"]``) and return the rules."""
        self.secret = self.draw_secret(options.get("secret"))
        self.guesses, self.feedbacks = [], []
        self.won = False
        self._best_score = 0.0
        return self.rules(), {"guesses": [], self.feedback_key: []}

    def record_guess(self, move: Move, feedback: Feedback, *, won: bool, score: float) -> float:
        """Keep a valid guess and its feedback; return its reward.

        Args:
            move: The guess.
            feedback: What it is answered with.
            won: Whether it found the secret.
            score: How close it came, from 0 to 1: the shaped reward (with ``partial_credit > 0``)
                is ``partial_credit`` times the increase of the best score so far, so the shaped
                part of a return is at most ``partial_credit``.

        Returns:
            1.0 for the win, else the shaped reward (0.0 without ``partial_credit``).
        """
        self.guesses.append(move)
        self.feedbacks.append(feedback)
        self.won = won
        if won:
            return 1.0
        if not self.partial_credit:
            return 0.0
        reward, self._best_score = improvement_reward(self.partial_credit, self._best_score, score)
        return reward

    def is_over(self) -> bool:
        return self.won

    def end_of_step(
        self, message: str, info: dict[str, Any], *, terminated: bool, truncated: bool
    ) -> str:
        end = self.message_separator
        if self.won:
            end += self.win_message(count_noun(self.turn, "guess", "guesses"))
        elif truncated:
            end += f"No guesses left. The {self.secret_name} was {self.shown_secret()}."
        else:
            end += f"{count_noun(self.max_guesses - self.turn, 'guess', 'guesses')} left."
        info.update(
            {
                "guesses": list(self.guesses),
                self.feedback_key: list(self.feedbacks),
                "won": self.won,
            }
        )
        if terminated or truncated:
            info["secret"] = self.secret
        return message + end
