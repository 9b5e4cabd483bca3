"""The base class of the catalogue's native text games: the life cycle, written once.

A game states its rules by filling a few hooks; :class:`TextGame` does the rest, the same way for
every game: ``reset``/``step`` bookkeeping, the "reset needed" errors, reading a move out of a
reply, feedback and a penalty for an invalid reply, the turn limit, ``render`` and the info keys
every game shares. It also gives every game the two policies other code plays it with
(``oracle_action()`` and ``random_action(rng)``), from the game's own ``oracle_move`` and
``random_move`` hooks. Minigrid's ``MiniGridEnv`` is the model.

The contract, in the order a step uses the hooks. Required hooks are abstract methods, so a type
checker flags a game that misses one and making it raises ``TypeError`` naming the hook:

* :meth:`TextGame.new_game` (required, ``reset``): draw the game with ``self.np_random`` (or take
  it from ``options``) and return the first observation (the rules) and info.
* :meth:`TextGame.parse_move` (required): read one move out of the reply, legal in the current
  state, or say what is wrong with it. When it rejects the whole reply,
  :meth:`TextGame.read_move` also reads each piece of it (:meth:`TextGame.move_candidates`, by
  default its words) on its own and takes the move if exactly one distinct legal move is stated:
  "I guess crane", "The largest number is 7.", a move in a code fence.
* :meth:`TextGame.invalid_feedback`: what to say to an invalid reply (a default is given).
* :meth:`TextGame.play_move` (required): apply a legal move; return the message, reward and info.
* :meth:`TextGame.is_over` (required): whether the game has ended by its own rules (won or lost).
* :meth:`TextGame.end_of_step`: the end of the step's message (turns left, the result).
* :meth:`TextGame.draw` (required): the state as text for ``render``.
* :meth:`TextGame.oracle_move`, :meth:`TextGame.random_move` (optional): the game's own policies.
  Whether a game has them is known from its class, without making it:
  :meth:`TextGame.has_oracle` and :meth:`TextGame.has_random_action`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Self, TypeVar

import gymnasium as gym
import numpy as np

from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace

# Relative imports inside the catalogue: it installs as trl_env.envs from the top-level envs/
# folder, a mapping a type checker cannot follow, so `mypy envs/...` checks the games against
# this contract only when they import each other relatively.
from ._common import (
    BARE_STRIP,
    GameNotRunningError,
    check_render_mode,
    invalid_feedback,
    reset_needed,
)

__all__ = ["MAX_CANDIDATES", "GameNotRunningError", "Move", "TextGame"]

Move = TypeVar("Move")
"""What :meth:`TextGame.parse_move` reads from a reply (a word, a number, a cell, ...)."""

StepResult = tuple[str, float, bool, bool, dict[str, Any]]

MAX_CANDIDATES = 40
"""Pieces of a reply read one by one at most: a longer reply is prose, not a stated move."""


class TextGame(gym.Env[str, str], Generic[Move], ABC):
    """A turn-based text game: the agent replies with text, the game answers with text.

    Subclasses set :attr:`game_name` (``"TextWordle"``) and :attr:`move_kind` (``"guess"``), call
    ``super().__init__(render_mode, invalid_action_penalty=...)`` and fill the hooks listed in the
    module docstring: the abstract ones (:meth:`new_game`, :meth:`parse_move`, :meth:`play_move`,
    :meth:`is_over`, :meth:`draw`) always, :meth:`oracle_move` and :meth:`random_move` when the
    game has those policies. Every reply is read, never raised on: a reply that is not a legal
    move gets in-band feedback (``info["invalid_action"] = True`` and ``info["error"]``) and
    ``-invalid_action_penalty``.

    Info keys set by this class on every step: ``invalid_action`` (bool) and, for an invalid
    reply only, ``error`` (str). A game keeps each of its own keys' types the same on every step
    (a key is left out, never ``None``, where it has no numeric or boolean value), so gymnasium's
    vector envs batch it.

    Example:
        >>> import gymnasium as gym
        >>> from trl_env.envs import TextGame
        >>> env = gym.make("TextGuessNumber-v0")
        >>> _ = env.reset(seed=0)
        >>> game = env.unwrapped
        >>> isinstance(game, TextGame), game.oracle_action()
        (True, '[50]')
    """

    # Not a ClassVar: gymnasium's Env declares ``metadata`` as an attribute of the instance.
    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    game_name: ClassVar[str] = "TextGame"
    """The name errors and messages use, like ``"TextWordle"``."""
    move_kind: ClassVar[str] = "move"
    """What one reply is, as invalid-reply feedback says it: ``"guess"``, ``"move"``, ..."""
    observation_length: ClassVar[int] = 4096
    """The longest observation the game can send (the observation space's max length)."""
    options_example: ClassVar[str] = "{}"
    """An example of ``reset(options=...)`` for the error a non-dict ``options`` raises."""

    def __init__(self, render_mode: str | None = None, *, invalid_action_penalty: float = 0.1):
        check_render_mode(render_mode, self.metadata["render_modes"])
        if not invalid_action_penalty >= 0:
            raise ValueError(f"invalid_action_penalty must be >= 0, got {invalid_action_penalty}")
        self.render_mode = render_mode
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.observation_space = TextSpace(self.observation_length)
        self.action_space = TextSpace(DEFAULT_MAX_LENGTH)
        self.turn = 0
        self.last_reply: Any = None
        """The reply of the latest step, as given."""
        self._started = False
        self._done = False

    # --- the life cycle (not meant to be overridden) ------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a new game (seeding ``self.np_random`` when ``seed`` is given).

        Args:
            seed: Seed of the game's random generator.
            options: ``None`` or a dict of the game's options (see its ``## Arguments``).

        Raises:
            TypeError: If ``options`` is neither ``None`` nor a dict.
        """
        super().reset(seed=seed)
        if options is None:
            options = {}
        elif not isinstance(options, Mapping):
            raise TypeError(
                f"{self.game_name}.reset(options=...) takes None or a dict, such as "
                f"options={self.options_example}, got {type(options).__name__} {options!r:.60}"
            )
        self.turn = 0
        self._done = False
        observation, info = self.new_game(dict(options))
        self._started = True
        return observation, info

    def step(self, action: str) -> StepResult:
        """Play one reply. Never raises on any ``action``: a bad one is an invalid move.

        Raises:
            GameNotRunningError: If the game was not reset, or its episode has ended.
        """
        self._check_running("step()")
        self.turn += 1
        self.last_reply = action
        move, problem = self.read_move(action)
        if problem is not None:
            reward = -self.invalid_action_penalty
            message = self.invalid_feedback(problem)
            info: dict[str, Any] = self.invalid_info()
            info.update(invalid_action=True, error=problem)
        else:
            message, reward, info = self.play_move(move)  # type: ignore[arg-type]
            info["invalid_action"] = False
        terminated = self.is_over()
        limit = self.turn_limit
        truncated = not terminated and limit is not None and self.turn >= limit
        message = self.end_of_step(message, info, terminated=terminated, truncated=truncated)
        if terminated or truncated:
            self._done = True
        return message, reward, terminated, truncated, info

    def render(self) -> str | None:  # type: ignore[override]
        """The game as text with ``render_mode="ansi"`` (``None`` otherwise)."""
        if self.render_mode != "ansi":
            return None
        return self.draw()

    def oracle_action(self) -> str:
        """The reply the game's own solver plays now, like ``"[crane]"``.

        Raises:
            GameNotRunningError: If no episode is running (never reset, or ended).
        """
        self._check_running("oracle_action()")
        return self.oracle_move()

    def random_action(self, rng: np.random.Generator) -> str:
        """A uniformly random legal-looking reply, drawn from ``rng`` only.

        ``rng`` (never ``self.np_random``) is the only source of randomness, so playing this
        policy never changes the game's own random stream.

        Raises:
            GameNotRunningError: If no episode is running (never reset, or ended).
        """
        self._check_running("random_action()")
        return self.random_move(rng)

    @classmethod
    def has_oracle(cls) -> bool:
        """Whether the game has an oracle: its class defines :meth:`oracle_move`.

        Answered from the class, so nothing is made or reset to ask it. Code that takes any env
        (or env class), not only a text game, asks :func:`trl_env._policies.has_oracle`.

        Example:
            >>> from trl_env.envs.guess_number import TextGuessNumberEnv
            >>> TextGuessNumberEnv.has_oracle()
            True
        """
        return cls.oracle_move is not TextGame.oracle_move

    @classmethod
    def has_random_action(cls) -> bool:
        """Whether the game has its own random policy: its class defines :meth:`random_move`."""
        return cls.random_move is not TextGame.random_move

    @classmethod
    def unwrap(cls, env: gym.Env[str, str], call: str | None = None) -> Self:
        """The game behind ``env`` (wrapped or not), checked to be an instance of this class.

        Args:
            env: The env, as ``gym.make`` returns it.
            call: The function that needs the game, named in the error (``"oracle_action"``).

        Raises:
            TypeError: If ``env.unwrapped`` is not an instance of this class.
        """
        game = env.unwrapped
        if not isinstance(game, cls):
            needs = f"{call} needs" if call else "needs"
            raise TypeError(f"{needs} a {cls.game_name} env, got {type(game).__name__}")
        return game

    @property
    def running(self) -> bool:
        """Whether an episode is running (reset, and not yet terminated or truncated)."""
        return self._started and not self._done

    def _check_running(self, call: str) -> None:
        if not self._started or self._done:
            raise reset_needed(self.game_name, started=self._started, call=call)

    def read_move(self, action: Any) -> tuple[Move | None, str | None]:
        """The move a reply states: the whole reply's, else the one legal move among its pieces.

        A real model states its move in a sentence ("I guess crane", "The largest number is
        7.") or a code fence. When :meth:`parse_move` rejects the whole reply, each piece of it
        (:meth:`move_candidates`, at most :data:`MAX_CANDIDATES`) is read on its own, skipping
        :attr:`prose_words`. Exactly one distinct legal move found is the move; none, or two
        different ones ("crane or slate?"), leave the reply invalid with :meth:`parse_move`'s
        problem. The move is still the agent's own, stated once, so no game gets easier.
        """
        move, problem = self.parse_move(action)
        if problem is None or not isinstance(action, str):
            return move, problem
        pieces = self.move_candidates(action)
        if not pieces or len(pieces) > MAX_CANDIDATES or pieces == [action]:
            return None, problem
        found: list[Any] = []
        for piece in pieces:
            if piece.strip(BARE_STRIP).lower() in self.prose_words:
                continue
            candidate, piece_problem = self.parse_move(piece)
            if piece_problem is None and candidate not in found:
                found.append(candidate)
                if len(found) > 1:
                    return None, problem
        return (found[0], None) if found else (None, problem)

    # --- the hooks a game fills: abstract ones always, the others to change a default ----------

    @abstractmethod
    def new_game(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """Set up a new game (randomness from ``self.np_random``); return the rules and info.

        Args:
            options: The ``options`` of ``reset`` (a dict, possibly empty).
        """

    @abstractmethod
    def parse_move(self, action: Any) -> tuple[Move | None, str | None]:
        """Read one legal move out of a reply.

        Returns:
            ``(move, None)`` for a legal move, or ``(None, problem)`` where ``problem`` says
            what is wrong (it is shown to the agent after ``"Invalid <move_kind>: "``).
        """

    prose_words: ClassVar[frozenset[str]] = frozenset()
    """Lowercase words never read as a move among other words (``"guess"`` in Wordle)."""

    def move_candidates(self, text: str) -> list[str]:
        """The pieces of a reply that may each state a move (default: its words).

        Returns more than :data:`MAX_CANDIDATES` pieces for a reply too long to search.
        """
        return text.split(None, MAX_CANDIDATES)

    @abstractmethod
    def play_move(self, move: Move) -> tuple[str, float, dict[str, Any]]:
        """Apply a legal move; return the message, the reward and the step's info."""

    @abstractmethod
    def is_over(self) -> bool:
        """Whether the game has ended by its own rules (``terminated``)."""

    @property
    def turn_limit(self) -> int | None:
        """Replies (valid or not) after which the episode is truncated; ``None`` for no limit."""
        return None

    invalid_advice: str = "Reply with one move in square brackets."
    """The last sentence of the default invalid-reply feedback: how to reply instead (a game may
    set it per instance, from its arguments or the game drawn)."""
    invalid_consequence: ClassVar[str | None] = "That used up a turn."
    """What an invalid reply cost, as the feedback says it (``None`` to say nothing)."""

    def invalid_feedback(self, problem: str) -> str:
        """The message for an invalid reply (by default: kind, problem, cost, advice)."""
        return invalid_feedback(
            self.move_kind,
            problem,
            self.invalid_advice,
            consequence=self.invalid_consequence,
            reply=self.last_reply,
        )

    def invalid_info(self) -> dict[str, Any]:
        """The game's own info keys for a step with an invalid reply."""
        return {}

    def end_of_step(
        self, message: str, info: dict[str, Any], *, terminated: bool, truncated: bool
    ) -> str:
        """Finish the step: return the whole message (and add to ``info`` what the end shows)."""
        return message

    @abstractmethod
    def draw(self) -> str:
        """The state of the game as text (for ``render``)."""

    # --- optional: the game's own policies (see has_oracle and has_random_action) --------------

    def oracle_move(self) -> str:
        """The reply the game's own solver plays now (the episode is running).

        Optional: a game without it has no oracle (:meth:`has_oracle` is ``False``).
        """
        raise NotImplementedError(f"{self.game_name} has no oracle: define oracle_move()")

    def random_move(self, rng: np.random.Generator) -> str:
        """A uniformly random legal-looking reply drawn from ``rng`` (the episode is running).

        Optional: without it, :func:`trl_env._policies.random_action` samples the action space.
        """
        raise NotImplementedError(f"{self.game_name} has no random policy: define random_move()")
