"""The play loop: the one loop that plays episodes, for the rollout, ``eval`` and ``play``.

:func:`run_episodes` plays several episodes together: it resets their envs, then each turn asks
the :class:`~trl_env._policies.Policy` for the replies of every episode still playing (one call,
so a model generates for the whole batch at once) and steps their envs through
:func:`trl_env._stepping.step_envs`, recording everything in each :class:`~trl_env._episode.Episode`.
:func:`play_episode` plays one episode, with an optional callback after every turn (what
``trl-env play`` prints).

A broken env ends only its own episode: an exception or a malformed return value sets
``ended_by="error"`` and ``error``, adds ``error_penalty`` (if any) to its rewards, marks the env
entry of the transcript, and (with ``warn=True``) issues an :class:`~trl_env.error.EnvErrorWarning`.

Example:
    >>> import gymnasium as gym
    >>> from trl_env._policies import OraclePolicy
    >>> episode = play_episode(gym.make("TextGuessNumber-v0"), OraclePolicy(), seed=7)
    >>> episode.ended_by, episode.success
    ('terminated', True)
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from trl_env._episode import Episode, Task, is_success
from trl_env._policies import Policy, Reply, Turn
from trl_env._seeding import fresh_seed
from trl_env._stepping import EnvOutcome, EnvStepper, reset_envs, step_envs
from trl_env.error import EnvErrorWarning

__all__ = [
    "StepFn",
    "TurnCallback",
    "play_episode",
    "record_agent_turn",
    "record_reset",
    "record_step",
    "run_episodes",
]

StepFn = Callable[[Sequence[tuple[gym.Env[Any, Any], str]]], list[EnvOutcome]]
"""How a turn's env steps run: :func:`trl_env._stepping.step_envs` or a replacement."""
TurnCallback = Callable[[Episode, EnvOutcome], None]
"""Called after each env step of an episode with the episode and the step's outcome."""


class _Playing:
    """An episode in the loop: its env and its last observation and info."""

    def __init__(self, episode: Episode, env: gym.Env[str, str]) -> None:
        self.episode, self.env = episode, env
        self.observation: str = ""
        self.info: dict[str, Any] = {}

    def turn(self) -> Turn:
        return Turn(self.env, self.episode, self.observation, self.info)


def _end_with_error(
    episode: Episode, where: str, message: str, penalty: float | None, warn: bool
) -> None:
    episode.error = f"{where}: {message}"
    episode.ended_by = "error"
    if penalty is not None:
        episode.rewards.append(float(penalty))
    if warn:
        task = episode.task
        warnings.warn(
            f"{task.env_id} (seed {task.seed}): {message}. That episode ended"
            + (" with env_error_penalty" if penalty is not None else "")
            + "; the batch goes on.",
            EnvErrorWarning,
            stacklevel=4,
        )


def _record_agent(episode: Episode, reply: str | Reply | None) -> Reply:
    if reply is None:
        reply = Reply(None, ended_by="stopped")
    elif isinstance(reply, str):
        reply = Reply(reply)
    if reply.action is not None:
        episode.turns += 1
        if episode.transcript is not None:
            episode.transcript.append({"role": "agent", **reply.details, "action": reply.action})
    if reply.ended_by is not None:
        episode.ended_by = reply.ended_by
        episode.error = reply.error
    return reply


def record_agent_turn(episode: Episode, action: str, **details: Any) -> None:
    """Record that the agent played ``action`` (one turn; ``details`` go to the transcript)."""
    _record_agent(episode, Reply(action, details))


def record_step(
    episode: Episode,
    outcome: EnvOutcome,
    *,
    max_turns: int | None = None,
    error_penalty: float | None = None,
    warn: bool = False,
) -> None:
    """Record the outcome of an env step in ``episode``: reward, invalid action, transcript, and
    how the episode ended (the env, ``max_turns``, or an error).

    Loops that are not :func:`run_episodes` (TRL's own tool loop through
    :class:`trl_env.trl.EnvironmentFactory`) record with this too.
    """
    if outcome.error is not None:
        if episode.transcript is not None:
            text = f"[environment error: {outcome.error}]"
            reward = error_penalty or 0.0
            episode.transcript.append(
                {"role": "env", "text": text, "reward": reward, "error": outcome.error}
            )
        _end_with_error(episode, "step", outcome.error, error_penalty, warn)
        return
    episode.rewards.append(outcome.reward)
    episode.invalid_actions += bool(outcome.info.get("invalid_action", False))
    if episode.transcript is not None:
        entry = {"role": "env", "text": outcome.observation, "reward": outcome.reward}
        if outcome.info.get("invalid_action", False):
            entry["invalid_action"] = True  # per turn, for saved rollouts and replays
        episode.transcript.append(entry)
    if outcome.terminated or outcome.truncated:
        episode.ended_by = "terminated" if outcome.terminated else "truncated"
        episode.success = is_success(outcome.info, outcome.terminated, outcome.reward)
    elif max_turns is not None and episode.turns >= max_turns:
        episode.ended_by = "max_turns"


def record_reset(
    episode: Episode, outcome: EnvOutcome, *, error_penalty: float | None = None, warn: bool = False
) -> None:
    """Record the outcome of the env's ``reset`` in ``episode`` (the first transcript entry)."""
    if outcome.error is not None:
        if episode.transcript is not None:
            text = f"[environment error: {outcome.error}]"
            episode.transcript.append({"role": "env", "text": text, "error": outcome.error})
        _end_with_error(episode, "reset", outcome.error, error_penalty, warn)
    elif episode.transcript is not None:
        episode.transcript.append({"role": "env", "text": outcome.observation})


def _reset(
    games: Sequence[_Playing], penalty: float | None, warn: bool, stepper: EnvStepper | None
) -> None:
    outcomes = reset_envs([(g.env, g.episode.task.seed) for g in games], stepper)
    for game, outcome in zip(games, outcomes, strict=True):
        record_reset(game.episode, outcome, error_penalty=penalty, warn=warn)
        game.observation, game.info = outcome.observation, outcome.info


def run_episodes(
    episodes: Sequence[Episode],
    envs: Sequence[gym.Env[str, str]],
    policy: Policy,
    *,
    max_turns: int | None = None,
    error_penalty: float | None = None,
    warn: bool = False,
    on_turn: TurnCallback | None = None,
    sync: Callable[[int], int] | None = None,
    step: StepFn | None = None,
    stepper: EnvStepper | None = None,
) -> list[Episode]:
    """Play ``episodes`` (fresh records) in ``envs`` (one each) with ``policy``, all together.

    Args:
        episodes: The episodes to fill, one per env; each plays ``reset(seed=task.seed)``.
        envs: Their envs.
        policy: Chooses every reply; called once per turn with the turns of all playing episodes.
            A policy with an ``observe(episode, outcome)`` method has it called after each env
            step of an episode still playing (a model appends the reply to its token stream
            there, and may end the episode by setting ``ended_by``).
        max_turns: End an episode after this many turns (``ended_by="max_turns"``).
        error_penalty: Reward added to an episode whose env failed (``None``: nothing added).
        warn: Issue an :class:`~trl_env.error.EnvErrorWarning` for every env failure.
        on_turn: Called after each env step with the episode and the step's outcome.
        sync: In distributed runs, maps this process's number of playing episodes to the number
            across all processes, so every process calls the policy the same number of times.
        step: Runs one turn's env steps (default :func:`trl_env._stepping.step_envs` with
            ``stepper``).
        stepper: Runs the env calls of a turn, resets included (default: one after the other;
            :func:`trl_env._stepping.make_stepper` gives a thread pool with a per-step timeout).

    Returns:
        ``episodes``, filled (the episode return is the sum of its rewards).
    """
    games = [_Playing(episode, env) for episode, env in zip(episodes, envs, strict=True)]
    _reset(games, error_penalty, warn, stepper)
    if step is None:
        step = functools.partial(step_envs, stepper=stepper)
    while True:
        playing = [g for g in games if not g.episode.done]
        if (sync(len(playing)) if sync else len(playing)) == 0:
            break
        replies = policy.act([g.turn() for g in playing])
        if len(replies) != len(playing):
            raise ValueError(f"the policy gave {len(replies)} replies for {len(playing)} turns")
        stepping = []
        for game, reply in zip(playing, replies, strict=True):
            reply = _record_agent(game.episode, reply)
            if not game.episode.done and reply.action is not None:
                stepping.append((game, reply.action))
        outcomes = step([(game.env, action) for game, action in stepping])
        observe = getattr(policy, "observe", None)
        for (game, _), outcome in zip(stepping, outcomes, strict=True):
            record_step(
                game.episode, outcome, max_turns=max_turns, error_penalty=error_penalty, warn=warn
            )
            game.observation, game.info = outcome.observation, outcome.info
            if observe is not None and not game.episode.done:
                observe(game.episode, outcome)
            if on_turn is not None:
                on_turn(game.episode, outcome)
    for episode in episodes:
        episode.episode_return = float(sum(episode.rewards))
    return list(episodes)


def play_episode(
    env: gym.Env[str, str],
    policy: Policy,
    seed: int | str | None = None,
    *,
    max_turns: int | None = None,
    on_turn: TurnCallback | None = None,
    step: StepFn | None = None,
) -> Episode:
    """Play one episode of ``env`` with ``policy`` (see :func:`run_episodes`).

    Args:
        env: The env to play.
        policy: Chooses every reply (a model, the env's oracle, random, or a person).
        seed: The game's seed (``reset(seed=...)``): an int >= 0, or a string (hashed stably,
            see :class:`~trl_env._episode.Task`); ``None`` draws a fresh one, kept in the record.
        max_turns: End the episode after this many turns.
        on_turn: Called after each env step with the episode and the step's outcome.
        step: Runs the env step (default :func:`trl_env._stepping.step_envs`).

    Returns:
        The episode.
    """
    env_id = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
    # A fresh game: the loop resets with the task's seed, so draw one (the record keeps it).
    episode = Episode(Task(env_id, fresh_seed() if seed is None else seed))
    run_episodes([episode], [env], policy, max_turns=max_turns, on_turn=on_turn, step=step)
    return episode
