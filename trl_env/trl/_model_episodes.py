"""A batch of model episodes played together: the loop under trl-env's rollout
(:mod:`trl_env.trl._rollout`), ``trl-env eval --policy MODEL``
(:mod:`trl_env.trl._model_play`) and the held-out evals of a training run.

:func:`play_episodes` plays one episode per task with one batched generation call per turn and
leaves each episode's token stream trainable (a prompt and a non-empty completion).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence

import gymnasium as gym

from trl_env._episode import Episode, Task
from trl_env._play import StepFn, run_episodes
from trl_env._stepping import EnvStepper, make_stepper
from trl_env.protocol import TokenProcessor
from trl_env.trl._model_policy import ModelPolicy
from trl_env.trl._rollout_config import RolloutConfig
from trl_env.trl.models import Generator

__all__ = ["play_episodes"]


class _EnvPool:
    """Reuses ``gym.make`` instances across calls: one list per (ID, kwargs)."""

    def __init__(self) -> None:
        self._free: dict[tuple[str, str], list[gym.Env[str, str]]] = defaultdict(list)

    def acquire(self, task: Task) -> gym.Env[str, str]:
        free = self._free[(task.env_id, task.kwargs_key)]
        return free.pop() if free else gym.make(task.env_id, **task.kwargs)

    def release(self, task: Task, env: gym.Env[str, str]) -> None:
        self._free[(task.env_id, task.kwargs_key)].append(env)


def play_episodes(
    tasks: Sequence[Task],
    generator: Generator,
    processor: TokenProcessor,
    config: RolloutConfig,
    *,
    max_completion_length: int,
    pool: _EnvPool | None = None,
    sync: Callable[[int], int] | None = None,
    step: StepFn | None = None,
    stepper: EnvStepper | None = None,
) -> list[Episode]:
    """Play one episode per task, all together, one batched generation call per turn.

    The loop is :func:`trl_env._play.run_episodes` with a :class:`~trl_env.trl._model_policy.
    ModelPolicy`; env calls go through :func:`trl_env._stepping.step_envs`, so an env that raises
    or returns a malformed value ends only its own episode (``ended_by="error"``, the reward
    ``env_error_penalty``, an :class:`~trl_env.error.EnvErrorWarning`).

    Args:
        tasks: The episodes to play (repeat a task to play the same game several times).
        generator: The generation backend.
        processor: Renders prompts and environment turns as token ids and parses actions (any
            :class:`trl_env.protocol.TokenProcessor`).
        config: Rollout settings.
        max_completion_length: Token budget of each episode's completion.
        pool: Env instances to reuse (a fresh pool if ``None``).
        sync: In distributed runs, maps this process's number of playing episodes to the number
            across all processes, so every process makes the same number of generation calls.
        step: Runs one turn's env steps (default :func:`trl_env._stepping.step_envs` with
            ``stepper``).
        stepper: Runs the env calls of a turn (default: made from ``config.env_workers`` and
            ``config.env_step_timeout``, and shut down at the end).

    Returns:
        The episodes, in the order of ``tasks``; every completion is non-empty.
    """
    pool = pool or _EnvPool()
    own_stepper = stepper is None
    if stepper is None:
        stepper = make_stepper(config.env_workers, config.env_step_timeout)
    episodes = [Episode(task) for task in tasks]
    envs = [pool.acquire(task) for task in tasks]
    policy = ModelPolicy(
        generator,
        processor,
        system_prompt=config.system_prompt,
        max_completion_length=max_completion_length,
        max_new_tokens_per_turn=config.max_new_tokens_per_turn,
        always_generate=sync is not None,
    )
    try:
        run_episodes(
            episodes,
            envs,
            policy,
            max_turns=config.max_turns,
            error_penalty=config.env_error_penalty,
            warn=True,
            sync=sync,
            step=step,
            stepper=stepper,
        )
    finally:
        for episode, env in zip(episodes, envs, strict=True):
            if episode.error is None and episode.done:
                pool.release(episode.task, env)
            else:  # an env that failed may be in any state (or still hung): never reuse it
                stepper.close_env(env)
        if own_stepper:
            stepper.shutdown()
    for episode in episodes:
        _close_stream(episode, processor, config)
        episode.episode_return = config.aggregate(episode.rewards)
    return episodes


def _close_stream(episode: Episode, processor: TokenProcessor, config: RolloutConfig) -> None:
    """Make the token stream trainable: a prompt and a non-empty completion."""
    if not episode.prompt_ids:  # reset failed: the model never saw the episode
        first = (episode.transcript or [{"text": ""}])[0]["text"]
        episode.prompt_ids = processor.initial_prompt_ids(config.system_prompt, first)
    if not episode.completion_ids:
        # TRL cannot train on an empty completion: close the turn with an env-masked EOS.
        episode.completion_ids.append(processor.end_of_turn_id)
        episode.env_mask.append(0)
        episode.logprobs.append(0.0)
