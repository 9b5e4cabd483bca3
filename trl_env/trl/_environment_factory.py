"""An ``environment_factory`` for TRL's own tool-calling loop, over any registered text env.

TRL's ``GRPOTrainer(environment_factory=...)`` builds one instance per rollout, calls
``reset(**row)`` with the dataset row, exposes every public method as a tool, and scores the
rollout with ``get_reward()``. :class:`EnvironmentFactory` exposes exactly one tool, :meth:`act`,
which plays a move in the env; the same datasets as the rollout function work (``make_dataset``
rows carry ``env_id``, ``seed`` and ``env_kwargs``).

Use it with tool-calling models whose chat template TRL can parse (Qwen2.5/3, Llama 3.x, ...);
prompts must be conversational, which ``make_dataset`` prompts are.
"""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym

from trl_env._checks import check_env_id, check_env_kwargs, check_task_source
from trl_env._episode import Episode, Task
from trl_env._play import record_agent_turn, record_reset, record_step
from trl_env._seeding import fresh_seed
from trl_env._stepping import reset_envs, step_envs
from trl_env.error import EpisodeOverError, TaskSpecError

__all__ = ["EnvironmentFactory", "make_environment_factory"]

_GAME_OVER = "The game is over: do not call act again."


class EnvironmentFactory:
    """One environment per rollout, driven by TRL's tool loop through :meth:`act`.

    Instances are pooled and reused by TRL, so :meth:`reset` clears all episode state.

    Attributes:
        env_id: Default env ID for rows that carry none (``None``: rows must carry ``env_id``).
        env_kwargs: Default ``gym.make`` kwargs, updated by a row's ``env_kwargs``.
        instructions: Text put before the first observation (how to use the tool).
        env_error_penalty: Reward added to an episode whose env raised or returned a malformed
            value (the episode ends there; the model is told so in the tool's reply).
        trust_tasks: Let rows name ``module:EnvId`` and pass any ``gym.make`` kwargs.
        episode: The current episode's record (:class:`trl_env._episode.Episode`).
    """

    env_id: str | None = None
    env_kwargs: dict[str, Any] = {}  # noqa: RUF012  (read-only class default)
    env_error_penalty: float = -1.0
    trust_tasks: bool = False
    instructions: str = (
        "Play the game below by calling the `act` tool with your move, in the format the game "
        "asks for, until the game says it is over.\n\n"
    )

    def __init__(self) -> None:
        self._envs: dict[tuple[str, str], gym.Env[str, str]] = {}
        self._env: gym.Env[str, str] | None = None
        self.episode: Episode | None = None
        self.info: dict[str, Any] = {}

    @property
    def rewards(self) -> list[float]:
        """The step rewards of the current episode."""
        return self.episode.rewards if self.episode is not None else []

    @property
    def done(self) -> bool:
        """Whether the current episode has ended (or none has started)."""
        return self.episode is None or self.episode.done

    def reset(self, **row: Any) -> str:
        """Start the episode a dataset row describes and return its first observation.

        Args:
            **row: The dataset row: ``env_id`` (unless the factory has a default), ``seed``, and
                optionally ``env_kwargs`` (a JSON object or dict). Other columns are ignored.
                A row may only name a registered ID and the kwargs its env accepts, unless the
                factory was made with ``trust_tasks=True``.

        Returns:
            The instructions followed by the env's first observation.
        """
        env_id = row.get("env_id") or self.env_id
        if not env_id:
            raise TaskSpecError(
                "the dataset row has no 'env_id': build the dataset with trl_env.make_dataset(...) "
                "or use make_environment_factory('TextWordle-v0') for a fixed env"
            )
        kwargs = dict(self.env_kwargs)
        row_kwargs = row.get("env_kwargs") or {}
        kwargs.update(json.loads(row_kwargs) if isinstance(row_kwargs, str) else row_kwargs)
        key = (env_id, json.dumps(kwargs, sort_keys=True))
        if key not in self._envs:  # instances are reused across rollouts: make each env once
            check_task_source(env_id, kwargs, trust=self.trust_tasks)
            self._envs[key] = gym.make(env_id, **kwargs)
        self._env = self._envs[key]
        seed = row.get("seed")  # an int, or a string (hashed once, in Task); none: a fresh game
        self.episode = Episode(Task(env_id, fresh_seed() if seed is None else seed, kwargs))
        [outcome] = reset_envs([(self._env, self.episode.task.seed)])
        record_reset(self.episode, outcome, warn=True)
        if outcome.error is not None:  # TRL's loop cannot skip a sample: tell the model instead
            return f"{self.instructions}[environment error: {outcome.error}]\n{_GAME_OVER}"
        self.info = outcome.info
        return self.instructions + outcome.observation

    def act(self, move: str) -> str:
        """Play one move in the game and return the game's reply.

        Args:
            move: Your move, written exactly in the format the game asked for.

        Returns:
            The game's reply to the move.
        """
        if self._env is None or self.episode is None:
            raise EpisodeOverError("act() called before reset(); TRL calls reset(**row) first")
        if self.episode.done:
            return _GAME_OVER
        record_agent_turn(self.episode, str(move))
        [outcome] = step_envs([(self._env, str(move))])
        record_step(self.episode, outcome, error_penalty=self.env_error_penalty, warn=True)
        if outcome.error is not None:
            return f"[environment error: {outcome.error}]\n{_GAME_OVER}"
        self.info = outcome.info
        if self.episode.done:
            return f"{outcome.observation}\n{_GAME_OVER}"
        return outcome.observation

    def get_reward(self) -> float:
        """The episode's return: the sum of its step rewards (with ``env_error_penalty`` added
        if the env failed)."""
        return float(sum(self.rewards))


def make_environment_factory(
    env_id: str | None = None,
    *,
    instructions: str | None = None,
    trust_tasks: bool = False,
    **env_kwargs: Any,
) -> type[EnvironmentFactory]:
    """An :class:`EnvironmentFactory` subclass with a default env ID and kwargs.

    Args:
        env_id: Env for rows without an ``env_id`` column (checked now: unknown IDs fail here with
            gymnasium's "Did you mean" hint).
        instructions: Replaces the default text before the first observation.
        trust_tasks: Let dataset rows name ``module:EnvId`` (importing it) and pass any
            ``gym.make`` kwargs; by default only registered IDs and kwargs the env accepts.
        **env_kwargs: Default ``gym.make`` kwargs (checked against the env's constructor).

    Returns:
        A class to pass as ``GRPOTrainer(environment_factory=...)``.

    Example:
        >>> factory = make_environment_factory("TextWordle-v0")
        >>> env = factory()
        >>> env.reset(seed="3").endswith("for example [crane]. Guesses must be real English words.")
        True
        >>> env.act("[crane]").startswith("Guess 1 of 6: CRANE")
        True
    """
    if env_id is not None:
        check_env_id(env_id)
        if not trust_tasks:
            check_env_kwargs(env_id, env_kwargs, argument="make_environment_factory's env kwargs")
    attributes: dict[str, Any] = {
        "env_id": env_id,
        "env_kwargs": dict(env_kwargs),
        "trust_tasks": bool(trust_tasks),
    }
    if instructions is not None:
        attributes["instructions"] = instructions
    name = f"{(env_id or 'Text').split('-')[0].replace('/', '_')}Environment"
    return type(name, (EnvironmentFactory,), attributes)
