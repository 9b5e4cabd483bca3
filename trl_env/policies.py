"""Policies: what chooses the agent's reply in ``trl-env eval``, ``trl-env play`` and benchmarks.

A :class:`Policy` gets the turns of every episode still playing (one :class:`Turn` each: the env,
the episode so far, the last observation and info) and returns one reply per turn, so a model
can answer a whole batch in one generation call while a simple policy answers turn by turn.

The random and oracle policies come from the env itself (the contract every catalogue env
fulfils): ``env.unwrapped.oracle_action()`` is the reply the env's own solver plays now, and
``env.unwrapped.random_action(rng)`` a uniformly random legal-looking reply drawn from ``rng``
only. An env with no ``random_action`` gets a sample of its ``action_space``. The model policy
lives on the TRL side (:class:`trl_env.trl.model_policy.ModelPolicy`).

Example:
    >>> import gymnasium as gym
    >>> from trl_env.play import play_episode
    >>> episode = play_episode(gym.make("TextGuessNumber-v0"), RandomPolicy(seed=0), seed=3)
    >>> episode.turns > 0
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from trl_env.episode import Episode

__all__ = [
    "FunctionPolicy",
    "OraclePolicy",
    "Policy",
    "RandomPolicy",
    "Reply",
    "Turn",
    "has_oracle",
    "oracle_action",
    "random_action",
]


@dataclass
class Turn:
    """One episode's turn, as a policy sees it.

    Attributes:
        env: The episode's env (``env.unwrapped`` for its state and its own policies).
        episode: The episode so far (transcript, turns, rewards).
        observation: The env's last message.
        info: The env's last info.
    """

    env: gym.Env[str, str]
    episode: Episode
    observation: str
    info: Mapping[str, Any]


@dataclass(frozen=True)
class Reply:
    """A reply with more to it than the action text (a policy may also return a plain ``str``).

    Attributes:
        action: The reply to play, or ``None`` for no turn.
        details: Extra fields for the transcript's agent entry (a model's ``text``,
            ``reasoning``, ``stopped``).
        ended_by: If set, the episode ends with this reason and ``action`` (recorded if given)
            is not played: ``"token_budget"`` for a model cut mid-turn, ``"stopped"`` for a
            player who quit, ``"error"`` for a policy that failed (``error`` says how).
        error: What went wrong, with ``ended_by="error"``.
    """

    action: str | None
    details: Mapping[str, Any] = field(default_factory=dict)
    ended_by: str | None = None
    error: str | None = None


@runtime_checkable
class Policy(Protocol):
    """Chooses replies: ``act(turns)`` returns one reply per turn, in order.

    A reply is a ``str`` (play it), a :class:`Reply`, or ``None`` (stop this episode, as a
    player typing ``quit``). ``turns`` may be empty (in distributed rollouts every process makes
    the same number of calls); return an empty list then.

    A policy may also define ``observe(episode, outcome)``: :func:`trl_env.play.run_episodes`
    calls it after each env step of an episode that goes on.
    """

    def act(self, turns: Sequence[Turn]) -> list[str | Reply | None]:
        """One reply per turn."""
        ...


class FunctionPolicy:
    """A policy from a function of one turn, ``fn(turn) -> str | Reply | None``.

    An exception raised by ``fn`` ends only that episode (``ended_by="error"``).

    Example:
        >>> always = FunctionPolicy(lambda turn: "[50]")
        >>> isinstance(always, Policy)
        True
    """

    def __init__(self, fn: Callable[[Turn], str | Reply | None]) -> None:
        self.fn = fn

    def act(self, turns: Sequence[Turn]) -> list[str | Reply | None]:
        """Call the function on each turn."""
        replies: list[str | Reply | None] = []
        for turn in turns:
            try:
                replies.append(self.fn(turn))
            except Exception as error:  # one failing turn does not end the others
                message = f"policy raised {type(error).__name__}: {error}"
                replies.append(Reply(None, ended_by="error", error=message))
        return replies


def oracle_action(env: gym.Env[str, str]) -> str:
    """The reply the env's own solver plays in the current state.

    Raises:
        trl_env.error.NoOracleError: If the env has no oracle.
    """
    game: Any = env.unwrapped
    oracle = getattr(game, "oracle_action", None)
    if callable(oracle):
        return str(oracle())
    from trl_env.error import NoOracleError

    name = env.spec.id if env.spec is not None else type(game).__name__
    raise NoOracleError(
        f"{name} has no oracle: its env defines no oracle_action(); use the random policy or "
        "a model"
    )


def has_oracle(env: gym.Env[str, str]) -> bool:
    """Whether ``env`` has an oracle (see :func:`oracle_action`)."""
    return callable(getattr(env.unwrapped, "oracle_action", None))


def random_action(env: gym.Env[str, str], info: Mapping[str, Any], rng: np.random.Generator) -> str:
    """A uniformly random legal-looking reply: the env's ``random_action(rng)``, or a sample of
    its ``action_space`` for an env that has none."""
    game: Any = env.unwrapped
    own = getattr(game, "random_action", None)
    if callable(own):
        return str(own(rng))
    return str(env.action_space.sample())


class OraclePolicy(FunctionPolicy):
    """The env's own solver (:func:`oracle_action`)."""

    def __init__(self) -> None:
        super().__init__(lambda turn: oracle_action(turn.env))


_POLICY_STREAM = 0x52414E44  # "RAND": tells the policy's stream apart from an env's


class RandomPolicy(FunctionPolicy):
    """Uniformly random legal-looking replies (:func:`random_action`), from one seeded generator.

    Args:
        seed: Seed of the generator (and of each env's ``action_space`` the first time it
            is sampled), so a run is reproducible.
    """

    def __init__(self, seed: int | None = None) -> None:
        # Not default_rng(seed): that is the very stream gymnasium gives an env reset with the same
        # seed, so the policy would replay the env's own draws (its secret word or number) and win
        # for free. A second word in the seed sequence gives an independent stream.
        self.rng = np.random.default_rng(None if seed is None else [seed, _POLICY_STREAM])
        self._seed = seed
        self._seeded: set[int] = set()
        super().__init__(self._random)

    def _random(self, turn: Turn) -> str:
        if id(turn.env) not in self._seeded:  # action_space samples are reproducible too
            self._seeded.add(id(turn.env))
            turn.env.action_space.seed(self._seed)
        return random_action(turn.env, turn.info, self.rng)
