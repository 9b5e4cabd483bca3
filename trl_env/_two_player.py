"""Two-player games: the game says whose turn it is, and an opponent is a policy.

Every two-player env of the catalogue (``TextTicTacToe-v0`` and its variants, the TextArena
bridge's ``TicTacToe`` and ``ConnectFour``) is a :class:`TwoPlayerGame`: one contract that the
native games and the bridge share.

* **Seats.** A game has two seats (:attr:`~TwoPlayerGame.seat_names`, ``("X", "O")`` for
  tic-tac-toe); :attr:`~TwoPlayerGame.current_seat` is the seat to move (``None`` once the game
  is over). Each seat sees only its own observations (:meth:`~TwoPlayerGame.seat_observation`:
  the rules from its side, the moves played since it last moved, the board), so each seat's
  conversation is its own.
* **The gym API plays seat 0** (the agent); the env's ``opponent=`` plays seat 1: ``"random"``,
  one of the game's other scripted players (:attr:`~TwoPlayerGame.scripted_opponents`:
  ``"greedy"`` and ``"perfect"`` for tic-tac-toe), or **any policy** (a
  :class:`~trl_env._policies.Policy` such as a model from :func:`trl_env.trl.model_policy`; a
  plain callable ``fn(turn) -> reply`` is wrapped in a :class:`~trl_env._policies.FunctionPolicy`).
  A policy opponent gets a :class:`~trl_env._policies.Turn` whose ``observation`` and ``episode``
  are the opponent seat's own (:attr:`TwoPlayerEnv.opponent_episode`), never the agent's.
  Scripted opponents draw from the env's ``np_random``, so seeded games are what they were.
* **Both seats from outside.** :meth:`~TwoPlayerGame.start_seats` (``reset`` with
  ``options={"seats": "outside"}``) starts a game that no seat of the env plays; the caller then asks whose turn it is, reads that seat's observation and plays
  its reply with :meth:`~TwoPlayerGame.seat_step`. :func:`trl_env._seats.play_matches` does this
  for a batch of games with one policy call per distinct policy per round: head-to-head evals
  (``trl-env eval --opponent``) and self-play are built on it.

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> from trl_env import FunctionPolicy
    >>> seen = []
    >>> def opponent(turn):  # any policy: here a function of the opponent's own turn
    ...     seen.append(turn.observation)
    ...     return turn.env.unwrapped.scripted_action("random")
    >>> env = gym.make("TextTicTacToe-v0", opponent=FunctionPolicy(opponent))
    >>> _ = env.reset(seed=0)
    >>> _ = env.step("[b2]")
    >>> "You are O" in seen[0], env.unwrapped.current_seat
    (True, 0)
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import gymnasium as gym

from trl_env._episode import Episode, Task
from trl_env._policies import FunctionPolicy, Policy, Reply, ScriptedPolicy, Turn
from trl_env._seats import SeatPlayer, play_seat_turns
from trl_env._seeding import fresh_seed

__all__ = [
    "SEATS_OUTSIDE",
    "SEAT_RESULTS",
    "ScriptedPolicy",
    "SeatStep",
    "TwoPlayerEnv",
    "TwoPlayerGame",
    "as_opponent",
    "is_two_player",
    "two_player_env_ids",
    "two_player_game",
]

SEAT_RESULTS = ("win", "draw", "loss")
"""A seat's result at the end of a game."""


@dataclass(frozen=True)
class SeatStep:
    """What one seat's reply did (:meth:`TwoPlayerGame.seat_step`).

    Attributes:
        invalid: The game rejected the reply (the seat is told why and is still to move).
        reward: The step's reward for that seat: ``-invalid_action_penalty`` for an invalid
            reply, else 0 (the end of the game is worth :meth:`TwoPlayerGame.result_reward`).
        error: The game's reason for an invalid reply.
    """

    invalid: bool = False
    reward: float = 0.0
    error: str | None = None


@runtime_checkable
class TwoPlayerGame(Protocol):
    """A two-player game that says whose turn it is (what ``env.unwrapped`` is).

    Attributes:
        seat_names: The two seats' names (``("X", "O")``); seat 0 is the one the gym API
            (``reset``/``step``) plays, seat 1 the env's ``opponent``.
        scripted_opponents: The names of the game's own scripted players (``"random"`` first).
    """

    seat_names: tuple[str, str]
    scripted_opponents: tuple[str, ...]

    @property
    def current_seat(self) -> int | None:
        """The seat to move, or ``None`` when the game is over (or not started)."""
        ...

    def start_seats(self, seed: int | None = None) -> None:
        """Start a new game in which both seats are played from outside (``seat_step``)."""
        ...

    def seat_observation(self, seat: int) -> str:
        """What ``seat`` has been told since it last moved (its rules first), once."""
        ...

    def seat_step(self, seat: int, action: str) -> SeatStep:
        """Play ``action`` for ``seat``, which must be :attr:`current_seat`."""
        ...

    def forfeit(self, seat: int, reason: str) -> None:
        """End the game now: ``seat`` gives up and loses (``reason`` tells both seats why)."""
        ...

    def seat_result(self, seat: int) -> str | None:
        """``"win"``, ``"draw"`` or ``"loss"`` for ``seat`` once the game is over, else ``None``."""
        ...

    def result_reward(self, result: str) -> float:
        """The reward a result is worth in this game (tic-tac-toe: 1, ``draw_reward``, 0)."""
        ...

    def scripted_action(self, name: str) -> str:
        """The reply the scripted player ``name`` plays for the seat to move (from ``np_random``)."""
        ...


_CONTRACT = (
    "seat_names", "scripted_opponents", "current_seat", "start_seats", "seat_observation",
    "seat_step", "forfeit", "seat_result", "result_reward", "scripted_action",
)  # fmt: skip


def is_two_player(env: gym.Env[Any, Any] | type) -> bool:
    """Whether an env (wrapped or not) or an env class is a :class:`TwoPlayerGame`.

    Answered from the class, without making or resetting anything.

    Example:
        >>> from trl_env.envs.tictactoe import TextTicTacToeEnv
        >>> from trl_env.envs.wordle import TextWordleEnv
        >>> is_two_player(TextTicTacToeEnv), is_two_player(TextWordleEnv)
        (True, False)
    """
    cls = env if isinstance(env, type) else type(env.unwrapped)
    return all(hasattr(cls, name) for name in _CONTRACT)


def two_player_game(env: gym.Env[Any, Any]) -> Any:
    """The :class:`TwoPlayerGame` behind ``env``; a ``TypeError`` for a one-player env."""
    game = env.unwrapped
    if not is_two_player(game):
        raise TypeError(f"{type(game).__name__} is not a two-player game (see TwoPlayerGame)")
    return game


def two_player_env_ids() -> list[str]:
    """Every registered trl-env ID whose env is a two-player game (read from the classes)."""
    from trl_env.envs import env_specs
    from trl_env.envs._catalogue import _load

    ids = []
    for spec in env_specs():
        try:
            target = _load(spec.entry_point)
        except Exception:  # cannot be made: not offered
            continue
        if isinstance(target, type) and is_two_player(target):
            ids.append(spec.id)
    return ids


_MODEL_HINT = "a model: trl_env.trl.model_policy('PATH')"


def as_opponent(
    opponent: str | Policy | Callable[[Turn], str | Reply | None], scripted: tuple[str, ...]
) -> str | Policy:
    """An env's ``opponent=`` argument, checked: a scripted player's name, or a policy.

    A callable that is not a policy (no ``act``) becomes a
    :class:`~trl_env._policies.FunctionPolicy`.

    Raises:
        ValueError: An unknown name (with a "Did you mean" hint) or another value.
    """
    if isinstance(opponent, str):
        if opponent in scripted:
            return opponent
        close = difflib.get_close_matches(opponent, scripted, n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(
            f"opponent must be one of {scripted} or a policy (an object with act(turns), a "
            f"function of a turn, or {_MODEL_HINT}), got {opponent!r}.{hint}"
        )
    if isinstance(opponent, Policy):
        return opponent
    if callable(opponent):
        return FunctionPolicy(opponent)
    raise ValueError(
        f"opponent must be one of {scripted} or a policy (an object with act(turns), a function "
        f"of a turn, or {_MODEL_HINT}), got {type(opponent).__name__} {opponent!r:.60}"
    )


SEATS_OUTSIDE: dict[str, str] = {"seats": "outside"}
"""The ``reset`` options of a game whose two seats are both played from outside."""


class TwoPlayerEnv:
    """The half of a two-player env that every game shares: its opponent and the seats' modes.

    A game class lists it among its bases (``class Game(TwoPlayerEnv, TextGame[int])``), calls
    :meth:`_init_opponent` in ``__init__`` and :meth:`_begin_game` first thing in every reset
    (a text game: in ``new_game``), fills the rest of :class:`TwoPlayerGame`, and when its
    opponent is a policy (``self.opponent`` is not a string) calls :meth:`_play_opponent` after
    each valid move of the agent. It gets :meth:`start_seats` (``reset`` with
    :data:`SEATS_OUTSIDE`: no seat played by the env) and :attr:`opponent_episode`.

    Attributes:
        opponent: The scripted player's name, or the opponent's policy.
    """

    seat_names: ClassVar[tuple[str, str]] = ("Player 0", "Player 1")
    scripted_opponents: ClassVar[tuple[str, ...]] = ("random",)
    opponent: str | Policy
    _opponent_seat: SeatPlayer | None = None
    _outside = False

    def _init_opponent(self, opponent: Any) -> None:
        self.opponent = as_opponent(opponent, self.scripted_opponents)

    @property
    def seats_outside(self) -> bool:
        """Whether the current game was started with :meth:`start_seats` (no seat played here)."""
        return self._outside

    @property
    def opponent_episode(self) -> Episode | None:
        """The opponent seat's own episode in the current game (a policy opponent only): its
        transcript is everything the opponent was told and replied."""
        return None if self._opponent_seat is None else self._opponent_seat.episode

    def _begin_game(self, options: Any) -> None:
        """A new game (call it first in reset, after seeding): read whether both seats are played
        from outside, and give a policy opponent a fresh episode of its own."""
        if self._opponent_seat is not None:
            self._opponent_seat.release()
            self._opponent_seat = None
        self._outside = dict(options or {}).get("seats") == SEATS_OUTSIDE["seats"]
        if self._outside or isinstance(self.opponent, str):
            return
        spec = getattr(self, "spec", None)
        env_id = spec.id if spec is not None else type(self).__name__
        seed = getattr(self, "np_random_seed", -1)  # the seed the game was last reset with
        task = Task(env_id, seed if 0 <= seed < 2**63 else fresh_seed())
        self._opponent_seat = SeatPlayer(self, 1, self.opponent, Episode(task))  # type: ignore[arg-type]

    def start_seats(self, seed: int | None = None) -> None:
        """Start a new game in which both seats are played from outside with ``seat_step``."""
        self.reset(seed=seed, options=dict(SEATS_OUTSIDE))  # type: ignore[attr-defined]

    def _refuse_gym_step(self) -> None:
        if self._outside:
            raise RuntimeError(
                "this game was started with start_seats(): play it with seat_step(seat, action), "
                "or reset() it to play seat 0 against the env's opponent"
            )

    def _play_opponent(self) -> None:
        """Let the policy opponent move until it is the agent's turn; record the end if over."""
        player = self._opponent_seat
        if player is None:
            return
        current: Any = self
        while current.current_seat == 1:
            play_seat_turns([player])
            if player.error is not None:
                raise RuntimeError(f"the game failed on the opponent's move: {player.error}")
        if current.current_seat is None:
            player.finish()
