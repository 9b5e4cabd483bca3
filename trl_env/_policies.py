"""Policies: what chooses the agent's reply in ``trl-env eval``, ``trl-env play`` and benchmarks.

A :class:`Policy` gets the turns of every episode still playing (one :class:`Turn` each: the env,
the episode so far, the last observation and info) and returns one reply per turn, so a model
can answer a whole batch in one generation call while a simple policy answers turn by turn.

The random and oracle policies come from the env itself (the contract every catalogue env
fulfils): ``env.unwrapped.oracle_action()`` is the reply the env's own solver plays now, and
``env.unwrapped.random_action(rng)`` a uniformly random legal-looking reply drawn from ``rng``
only (the protocols :class:`HasOracle` and :class:`HasRandomAction`). An env with no
``random_action`` gets a sample of its ``action_space``. Whether an env has them is answered from
its class (:func:`has_oracle`, :func:`has_random_action`), without making it. An env may also
name scripted players of its own (:class:`HasScriptedPolicies`: Hangman's ``frequency``, a fixed
letter order; a two-player game's scripted opponents): :class:`ScriptedPolicy` plays one by name
(``env.unwrapped.scripted_action(name)``), and :func:`scripted_policies` lists a one-player env's. The
model policy lives on the TRL side (:class:`trl_env.trl._model_policy.ModelPolicy`).

Example:
    >>> import gymnasium as gym
    >>> from trl_env._play import play_episode
    >>> episode = play_episode(gym.make("TextGuessNumber-v0"), RandomPolicy(seed=0), seed=3)
    >>> episode.turns > 0
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from trl_env._episode import Episode

__all__ = [
    "DeclaresPolicies",
    "FunctionPolicy",
    "HasOracle",
    "HasRandomAction",
    "HasScriptedPolicies",
    "OraclePolicy",
    "Policy",
    "RandomPolicy",
    "Reply",
    "ScriptedPolicy",
    "Turn",
    "has_oracle",
    "has_random_action",
    "oracle_action",
    "random_action",
    "scripted_policies",
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

    A policy may also define ``observe(episode, outcome)``: :func:`trl_env._play.run_episodes`
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


@runtime_checkable
class HasOracle(Protocol):
    """An env with its own solver: ``oracle_action()`` is the reply it plays now."""

    def oracle_action(self) -> str:
        """The reply the env's own solver plays in the current state (an episode is running)."""
        ...


@runtime_checkable
class HasRandomAction(Protocol):
    """An env with its own random policy: ``random_action(rng)``, drawn from ``rng`` only."""

    def random_action(self, rng: np.random.Generator) -> str:
        """A uniformly random legal-looking reply (an episode is running)."""
        ...


@runtime_checkable
class HasScriptedPolicies(Protocol):
    """An env with scripted players of its own beyond the oracle and the random policy.

    ``scripted_policies`` names them (a class attribute); ``scripted_action(name)`` is the
    reply the named one plays now (the method a two-player game's scripted opponents share). They are baselines and demonstrators: Hangman's
    ``frequency`` guesses letters in a fixed frequency order, the heuristic a trained model is
    measured against.
    """

    scripted_policies: ClassVar[tuple[str, ...]]

    def scripted_action(self, name: str) -> str:
        """The reply the scripted player ``name`` plays in the current state."""
        ...


@runtime_checkable
class DeclaresPolicies(Protocol):
    """An env class whose own policies are optional hooks, so it says itself which it has.

    :class:`trl_env.envs.TextGame` is one: every game has ``oracle_action()``, which works only
    where the game defines ``oracle_move``.
    """

    @classmethod
    def has_oracle(cls) -> bool:
        """Whether the class has an oracle."""
        ...

    @classmethod
    def has_random_action(cls) -> bool:
        """Whether the class has its own random policy."""
        ...


EnvOrClass = gym.Env[str, str] | type[gym.Env[str, str]]
"""An env (wrapped or not), or an env class such as a registered entry point."""


def _env_class(env: EnvOrClass) -> type:
    return env if isinstance(env, type) else type(env.unwrapped)


def has_oracle(env: EnvOrClass) -> bool:
    """Whether an env, or an env class, has an oracle (see :func:`oracle_action`).

    Answered from the class: nothing is made, reset or imported besides the class itself. A
    class has an oracle when it is a :class:`HasOracle` (it defines ``oracle_action()``), unless
    it is a :class:`DeclaresPolicies` whose ``has_oracle()`` says no.

    Example:
        >>> import gymnasium as gym
        >>> from trl_env.envs.wordle import TextWordleEnv
        >>> has_oracle(TextWordleEnv), has_oracle(gym.make("TextGuessNumber-v0"))
        (True, True)
    """
    env_class = _env_class(env)
    if issubclass(env_class, DeclaresPolicies):
        return env_class.has_oracle()
    return issubclass(env_class, HasOracle)


def has_random_action(env: EnvOrClass) -> bool:
    """Whether an env, or an env class, has its own random policy (see :func:`random_action`).

    Answered from the class, like :func:`has_oracle`.
    """
    env_class = _env_class(env)
    if issubclass(env_class, DeclaresPolicies):
        return env_class.has_random_action()
    return issubclass(env_class, HasRandomAction)


def oracle_action(env: gym.Env[str, str]) -> str:
    """The reply the env's own solver plays in the current state.

    Raises:
        trl_env.error.NoOracleError: If the env has no oracle.
    """
    game = env.unwrapped
    if has_oracle(env) and isinstance(game, HasOracle):
        return str(game.oracle_action())
    from trl_env.error import NoOracleError

    name = env.spec.id if env.spec is not None else type(game).__name__
    raise NoOracleError(
        f"{name} has no oracle: its env defines no oracle_action(); use the random policy or "
        "a model"
    )


def scripted_policies(env: EnvOrClass) -> tuple[str, ...]:
    """The names of an env's own scripted players (:class:`HasScriptedPolicies`); ``()`` if none.

    Answered from the class, like :func:`has_oracle`.

    Example:
        >>> import gymnasium as gym
        >>> scripted_policies(gym.make("TextHangman-v0")), scripted_policies(gym.make("TextWordle-v0"))
        (('frequency',), ())
    """
    env_class = _env_class(env)
    names = getattr(env_class, "scripted_policies", ())
    if not callable(getattr(env_class, "scripted_action", None)):
        return ()
    return tuple(names) if isinstance(names, tuple) else ()


def random_action(env: gym.Env[str, str], info: Mapping[str, Any], rng: np.random.Generator) -> str:
    """A uniformly random legal-looking reply: the env's ``random_action(rng)``, or a sample of
    its ``action_space`` for an env that has none."""
    game = env.unwrapped
    if has_random_action(env) and isinstance(game, HasRandomAction):
        return str(game.random_action(rng))
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


class ScriptedPolicy(FunctionPolicy):
    """One of the env's own scripted players, by name: ``env.unwrapped.scripted_action(name)``.

    A one-player env names its players in ``scripted_policies`` (:func:`scripted_policies`;
    Hangman: ``"frequency"``); a two-player game names them in ``scripted_opponents``
    (``"random"``, ``"perfect"``, ...) and its player moves for whichever seat is to move. A
    player that draws at random draws from the env's ``np_random``, so a seeded game plays the same
    way every time.

    Args:
        name: The player's name.

    Example:
        >>> import gymnasium as gym
        >>> from trl_env._play import play_episode
        >>> episode = play_episode(gym.make("TextHangman-v0"), ScriptedPolicy("frequency"), seed=0)
        >>> [m["content"] for m in episode.messages() if m["role"] == "assistant"][:4]
        ['[e]', '[s]', '[i]', '[a]']
    """

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(self._move)

    def _move(self, turn: Turn) -> str:
        game = turn.env.unwrapped
        move = getattr(game, "scripted_action", None)
        if not callable(move):
            from trl_env.error import UsageError

            raise UsageError(f"{type(game).__name__} has no scripted players (no scripted_action)")
        return str(move(self.name))

    def __repr__(self) -> str:
        return f"ScriptedPolicy({self.name!r})"
