"""A token-exact, batched multi-turn ``rollout_func`` for TRL's ``GRPOTrainer``.

For each prompt the rollout resolves the task's env with ``gym.make``, resets it with the task's
seed (all ``num_generations`` copies of a task play the same game), and plays the episodes of the
whole batch together: one batched generation call per turn for every episode still playing;
finished episodes leave the batch.

Token exactness: an episode's token stream is ``prompt_ids`` followed by the sampled ids of each
model turn, exactly as sampled, and between them the ids of each environment turn (the chat
template's text between the model's end-of-turn token and the next generation prompt). The input
of turn ``t`` is that stream so far; nothing is re-rendered from text, so what the model is trained
on is what it sampled, and the per-turn bookkeeping does not grow with the conversation.

Example:
    >>> from trl import GRPOConfig, GRPOTrainer  # doctest: +SKIP
    >>> trainer = GRPOTrainer(
    ...     model="Qwen/Qwen3-0.6B",
    ...     reward_funcs=trl_env.env_reward,
    ...     train_dataset=trl_env.make_dataset("TextWordle-v0", num_tasks=512),
    ...     rollout_func=trl_env.make_rollout_func(max_new_tokens_per_turn=256),
    ...     args=GRPOConfig(max_completion_length=2048),
    ... )  # doctest: +SKIP
"""

from __future__ import annotations

import json
import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from trl_env.seeding import seed_to_int
from trl_env.stepping import EnvStepper, Outcome, make_stepper
from trl_env.trl.generation import Generator, generator_from_trainer
from trl_env.trl.processors import ChatTemplateProcessor
from trl_env.trl.tasks import Task, task_from_prompt

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "EnvErrorWarning",
    "EnvRollout",
    "Episode",
    "RolloutConfig",
    "make_rollout_func",
    "play_episodes",
]

DEFAULT_SYSTEM_PROMPT = (
    "You are playing a text game. Read each message from the game carefully and reply with your "
    "next move in exactly the format the game asks for."
)

_AGGREGATIONS: dict[str, Callable[[Sequence[float]], float]] = {
    "sum": lambda rewards: float(sum(rewards)),
    "mean": lambda rewards: float(sum(rewards) / len(rewards)) if rewards else 0.0,
    "last": lambda rewards: float(rewards[-1]) if rewards else 0.0,
    "max": lambda rewards: float(max(rewards)) if rewards else 0.0,
}


class EnvErrorWarning(RuntimeWarning):
    """An environment raised during an episode; that episode was ended and the batch went on."""


@dataclass
class RolloutConfig:
    """Settings of :func:`make_rollout_func` (every field has a default)."""

    system_prompt: str | None = field(
        default=DEFAULT_SYSTEM_PROMPT,
        metadata={"help": "System message of every episode; None for no system message."},
    )
    max_turns: int | None = field(
        default=None,
        metadata={"help": "Model turns per episode at most; None lets the env decide (TimeLimit)."},
    )
    max_new_tokens_per_turn: int | None = field(
        default=None,
        metadata={"help": "Tokens one model turn may sample; None means the remaining budget."},
    )
    max_completion_length: int | None = field(
        default=None,
        metadata={
            "help": "Total tokens of an episode's completion (model and env tokens); None uses "
            "the trainer's max_completion_length. An episode that runs out is truncated."
        },
    )
    reward_aggregation: str | Callable[[Sequence[float]], float] = field(
        default="sum",
        metadata={
            "help": "How step rewards make the episode return: sum, mean, last, max or a callable."
        },
    )
    env_error_penalty: float = field(
        default=-1.0,
        metadata={"help": "Reward added to an episode whose env raised (the episode ends there)."},
    )
    log_metrics: bool = field(
        default=True,
        metadata={
            "help": "Log env/success_rate, env/mean_turns, ... through the trainer's logging."
        },
    )
    env_workers: int = field(
        default=0,
        metadata={
            "help": "Threads that step the envs of a turn concurrently; 0 steps them one after "
            "the other (fastest for in-process games). Use about one per episode of a batch "
            "for slow or remote envs (see docs/slow_envs.md)."
        },
    )
    env_step_timeout: float | None = field(
        default=None,
        metadata={
            "help": "Seconds one env reset/step may take; a call that takes longer ends its "
            "episode with an error (its env is never reused). None: no limit."
        },
    )

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_new_tokens_per_turn", "max_completion_length"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive int or None, got {value!r}")
        if (
            isinstance(self.reward_aggregation, str)
            and self.reward_aggregation not in _AGGREGATIONS
        ):
            raise ValueError(
                f"reward_aggregation must be one of {sorted(_AGGREGATIONS)} or a callable, "
                f"got {self.reward_aggregation!r}"
            )
        if type(self.env_workers) is not int or self.env_workers < 0:
            raise ValueError(
                f"env_workers must be an int >= 0 (0 = sequential), got {self.env_workers!r}"
            )
        if self.env_step_timeout is not None and not (
            type(self.env_step_timeout) in (int, float) and self.env_step_timeout > 0
        ):
            raise ValueError(
                "env_step_timeout must be a positive number of seconds or None, "
                f"got {self.env_step_timeout!r}"
            )

    def aggregate(self, rewards: Sequence[float]) -> float:
        """The episode return from its step rewards."""
        if callable(self.reward_aggregation):
            return float(self.reward_aggregation(rewards))
        return _AGGREGATIONS[self.reward_aggregation](rewards)


@dataclass
class Episode:
    """One played episode: its token stream and what happened.

    ``ended_by`` is ``"terminated"`` or ``"truncated"`` when the env ended it, ``"max_turns"`` or
    ``"token_budget"`` when a limit of the rollout did, and ``"error"`` when the env raised.
    """

    task: Task
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    turns: int = 0
    invalid_actions: int = 0
    success: bool = False
    ended_by: str | None = None
    error: str | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)
    episode_return: float = 0.0
    # The model's input so far (prompt + completion), extended in place so no turn copies history.
    _input_ids: list[int] = field(default_factory=list, repr=False)
    _env: Any = field(default=None, repr=False)

    @property
    def done(self) -> bool:
        """Whether the episode has ended."""
        return self.ended_by is not None

    @property
    def ended_by_env(self) -> bool:
        """Whether the env (not a rollout limit or an error) ended the episode."""
        return self.ended_by in ("terminated", "truncated")


class _EnvPool:
    """Reuses ``gym.make`` instances across calls: one list per (ID, kwargs)."""

    def __init__(self) -> None:
        self._free: dict[tuple[str, str], list[gym.Env[str, str]]] = defaultdict(list)

    def acquire(self, task: Task) -> gym.Env[str, str]:
        free = self._free[(task.env_id, task.kwargs_key)]
        return free.pop() if free else gym.make(task.env_id, **task.kwargs)

    def release(self, task: Task, env: gym.Env[str, str]) -> None:
        self._free[(task.env_id, task.kwargs_key)].append(env)


def _success(info: dict[str, Any], terminated: bool, reward: float) -> bool:
    # Envs that know what winning is say so; otherwise a positive final reward on termination.
    for key in ("won", "success", "is_success"):
        if key in info:
            return bool(info[key])
    return bool(terminated and reward > 0)


def play_episodes(
    tasks: Sequence[Task],
    generator: Generator,
    processor: ChatTemplateProcessor,
    config: RolloutConfig,
    *,
    max_completion_length: int,
    pool: _EnvPool | None = None,
    sync: Callable[[int], int] | None = None,
    stepper: EnvStepper | None = None,
) -> list[Episode]:
    """Play one episode per task, all together, one batched generation call per turn.

    Args:
        tasks: The episodes to play (repeat a task to play the same game several times).
        generator: The generation backend.
        processor: Renders prompts and environment turns as token ids and parses actions.
        config: Rollout settings.
        max_completion_length: Token budget of each episode's completion.
        pool: Env instances to reuse (a fresh pool if ``None``).
        sync: In distributed runs, maps this process's number of playing episodes to the number
            across all processes, so every process makes the same number of generation calls.
        stepper: Calls ``reset``/``step`` on the envs of a turn (default: made from
            ``config.env_workers`` and ``config.env_step_timeout``, shut down at the end).

    Returns:
        The episodes, in the order of ``tasks``; every completion is non-empty.
    """
    pool = pool or _EnvPool()
    tokenizer = processor.tokenizer
    eos_ids = processor.eos_token_ids
    episodes = [Episode(task=task) for task in tasks]
    prompt_cache: dict[str, list[int]] = {}
    own_stepper = stepper is None
    stepper = stepper or make_stepper(config.env_workers, config.env_step_timeout)
    for episode in episodes:
        episode._env = pool.acquire(episode.task)
    resets = stepper.map(
        _reset, [e._env for e in episodes], [seed_to_int(e.task.seed) for e in episodes]
    )
    for episode, outcome in zip(episodes, resets, strict=True):
        if outcome.error is None:
            observation = outcome.value[0]
        else:  # a broken env ends only its episode
            _record_error(episode, config, "reset", outcome.error)
            observation = f"[environment error: {type(outcome.error).__name__}]"
        episode.transcript.append({"role": "env", "text": observation})
        # Copies of a task share their first observation: tokenise it once.
        if observation not in prompt_cache:
            prompt_cache[observation] = processor.initial_prompt_ids(
                config.system_prompt, observation
            )
        episode.prompt_ids = prompt_cache[observation]
        episode._input_ids = list(episode.prompt_ids)

    per_turn = config.max_new_tokens_per_turn or max_completion_length
    while True:
        playing = [e for e in episodes if not e.done]
        if (sync(len(playing)) if sync else len(playing)) == 0:
            break
        max_new = max(
            (min(per_turn, max_completion_length - len(e.completion_ids)) for e in playing),
            default=1,
        )
        samples, sample_logprobs = generator.generate([e._input_ids for e in playing], max_new)
        stepping = []
        for episode, sample, logprobs in zip(playing, samples, sample_logprobs, strict=True):
            room = max_completion_length - len(episode.completion_ids)
            _take_model_turn(episode, sample[:room], logprobs[:room], tokenizer, processor, eos_ids)
            if len(episode.completion_ids) >= max_completion_length:
                episode.ended_by = "token_budget"  # cut mid-turn: the action is not played
                continue
            stepping.append(episode)
        # The envs of a turn are stepped together (concurrently with env_workers > 0); outcomes
        # are applied in episode order, so the episodes do not depend on the worker count.
        steps = stepper.map(
            _step, [e._env for e in stepping], [e.transcript[-1]["action"] for e in stepping]
        )
        for episode, outcome in zip(stepping, steps, strict=True):
            _take_env_turn(episode, outcome, config, processor, max_completion_length)

    for episode in episodes:
        if not episode.completion_ids:
            # TRL cannot train on an empty completion: close the turn with an env-masked EOS.
            episode.completion_ids.append(processor.end_of_turn_id)
            episode.env_mask.append(0)
            episode.logprobs.append(0.0)
        episode.episode_return = config.aggregate(episode.rewards)
        if episode.error is None:
            pool.release(episode.task, episode._env)
        else:  # an env that raised or hung may be in any state: never hand it to another episode
            stepper.close_env(episode._env)
        episode._env = None
        episode._input_ids = []
    if own_stepper:
        stepper.shutdown()
    return episodes


def _reset(env: gym.Env[str, str], seed: int | None) -> tuple[str, dict[str, Any]]:
    return env.reset(seed=seed)


def _step(env: gym.Env[str, str], action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
    return env.step(action)


def _take_model_turn(
    episode: Episode,
    sample: list[int],
    logprobs: list[float],
    tokenizer: Any,
    processor: ChatTemplateProcessor,
    eos_ids: frozenset[int] | set[int],
) -> None:
    episode.completion_ids += sample
    episode.env_mask += [1] * len(sample)
    episode.logprobs += [float(lp) for lp in logprobs[: len(sample)]]
    episode.logprobs += [0.0] * (len(sample) - len(logprobs))  # a backend that could not score
    episode._input_ids += sample
    episode.turns += 1
    text = tokenizer.decode(sample, skip_special_tokens=False)
    reasoning, action = processor.parse_agent_output(text)
    episode.transcript.append(
        {
            "role": "agent",
            "text": text,
            "reasoning": reasoning,
            "action": action,
            "stopped": bool(sample) and sample[-1] in eos_ids,
        }
    )


def _take_env_turn(
    episode: Episode,
    outcome: Outcome[Any],
    config: RolloutConfig,
    processor: ChatTemplateProcessor,
    budget: int,
) -> None:
    if outcome.error is not None:
        _record_error(episode, config, "step", outcome.error)
        return
    observation, reward, terminated, truncated, info = outcome.value
    reward = float(reward)
    episode.rewards.append(reward)
    episode.invalid_actions += bool(info.get("invalid_action", False))
    episode.transcript.append({"role": "env", "text": observation, "reward": reward})
    if terminated or truncated:
        episode.ended_by = "terminated" if terminated else "truncated"
        episode.success = _success(info, terminated, reward)
        return
    if config.max_turns is not None and episode.turns >= config.max_turns:
        episode.ended_by = "max_turns"
        return
    last = episode.completion_ids[-1] if episode.completion_ids else None
    chunk = processor.env_turn_ids(observation, last_token_id=last)
    if len(episode.completion_ids) + len(chunk) >= budget:  # no room left for the model to answer
        episode.ended_by = "token_budget"
        return
    episode.completion_ids += chunk
    episode.env_mask += [0] * len(chunk)
    episode.logprobs += [0.0] * len(chunk)
    episode._input_ids += chunk


def _record_error(
    episode: Episode, config: RolloutConfig, where: str, error: BaseException
) -> None:
    task = episode.task
    message = f"{type(error).__name__}: {error}"
    episode.error = f"{where}: {message}"
    episode.ended_by = "error"
    episode.rewards.append(config.env_error_penalty)
    warnings.warn(
        f"{task.env_id} (seed {task.seed}) raised in {where}(): {message}. "
        "That episode ended with env_error_penalty; the batch goes on.",
        EnvErrorWarning,
        stacklevel=3,
    )


class EnvRollout:
    """The ``rollout_func`` made by :func:`make_rollout_func` (a callable object).

    Attributes:
        config: Its :class:`RolloutConfig`.
        generation_calls: Generation calls made by the last call (one per turn played).
        last_episodes: The episodes of the last call, for inspection.
    """

    def __init__(
        self,
        config: RolloutConfig,
        *,
        processor: ChatTemplateProcessor | Callable[[Any], ChatTemplateProcessor] | None = None,
        generator: Generator | Callable[[Any], Generator] | None = None,
    ) -> None:
        self.config = config
        self._processor_arg = processor
        self._generator_arg = generator
        self._processor: ChatTemplateProcessor | None = None
        self._pool = _EnvPool()
        self.generation_calls = 0
        self.last_episodes: list[Episode] = []
        self._seen_env_ids: set[str] = set()

    def processor_for(
        self, tokenizer: Any, chat_template_kwargs: dict[str, Any] | None = None
    ) -> ChatTemplateProcessor:
        """The processor (built once from the trainer's tokenizer unless one was given).

        Args:
            tokenizer: The trainer's tokenizer.
            chat_template_kwargs: The trainer's ``GRPOConfig.chat_template_kwargs`` (for example
                ``{"enable_thinking": False}``), applied when the processor is built here.
        """
        if self._processor is None:
            if isinstance(self._processor_arg, ChatTemplateProcessor):
                self._processor = self._processor_arg
            elif callable(self._processor_arg):
                self._processor = self._processor_arg(tokenizer)
            else:
                self._processor = ChatTemplateProcessor(
                    tokenizer, chat_template_kwargs=chat_template_kwargs or None
                )
        return self._processor

    def _generator_for(self, trainer: Any) -> Generator:
        if self._generator_arg is None:
            return generator_from_trainer(trainer)
        if hasattr(self._generator_arg, "generate"):
            return self._generator_arg  # type: ignore[return-value]
        return self._generator_arg(trainer)

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """Play one episode per prompt and return the ``GRPOTrainer`` rollout dict."""
        tasks = [task_from_prompt(prompt) for prompt in prompts]
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        processor = self.processor_for(tokenizer, getattr(trainer, "chat_template_kwargs", None))
        generator = _CountingGenerator(self._generator_for(trainer))
        budget = self.config.max_completion_length or trainer.max_completion_length
        episodes = play_episodes(
            tasks,
            generator,
            processor,
            self.config,
            max_completion_length=budget,
            pool=self._pool,
            sync=_process_sync(trainer),
        )
        self.generation_calls = generator.calls
        self.last_episodes = episodes
        self._seen_env_ids.update(task.env_id for task in tasks)
        if self.config.log_metrics:
            # Per-env metrics once this run has seen several envs (a mixed dataset), even in a
            # batch that happens to hold one: metric names must not depend on the batch.
            _log_metrics(trainer, episodes, per_env=len(self._seen_env_ids) > 1)
        return episodes_to_rollout_output(episodes)


def episodes_to_rollout_output(episodes: Sequence[Episode]) -> dict[str, list[Any]]:
    """The dict ``GRPOTrainer`` expects from a ``rollout_func``, plus per-episode extras.

    Extras (one entry per episode, passed to reward functions as keyword arguments):
    ``episode_return``, ``episode_success``, ``episode_turns``, ``episode_ended_by``,
    ``episode_ended_by_env``, ``episode_invalid_actions``, ``episode_error`` (``""`` if none),
    ``episode_transcript`` (JSON), ``env_id``.
    """
    return {
        "prompt_ids": [e.prompt_ids for e in episodes],
        "completion_ids": [e.completion_ids for e in episodes],
        "logprobs": [e.logprobs for e in episodes],
        "env_mask": [e.env_mask for e in episodes],
        "episode_return": [e.episode_return for e in episodes],
        "episode_success": [e.success for e in episodes],
        "episode_turns": [e.turns for e in episodes],
        "episode_ended_by": [e.ended_by or "" for e in episodes],
        "episode_ended_by_env": [e.ended_by_env for e in episodes],
        "episode_invalid_actions": [e.invalid_actions for e in episodes],
        "episode_error": [e.error or "" for e in episodes],
        "episode_transcript": [json.dumps(e.transcript, ensure_ascii=False) for e in episodes],
        "env_id": [e.task.env_id for e in episodes],
    }


class _CountingGenerator:
    def __init__(self, inner: Generator) -> None:
        self.inner = inner
        self.calls = 0

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int) -> Any:
        self.calls += 1
        return self.inner.generate(inputs, max_new_tokens)


def _process_sync(trainer: Any) -> Callable[[int], int] | None:
    accelerator = getattr(trainer, "accelerator", None)
    if accelerator is None or accelerator.num_processes <= 1:
        return None
    import torch

    def total_playing(local: int) -> int:
        # Every process must make the same number of generation calls (vLLM server mode gathers
        # prompts across processes; sharded models gather weights), so the turn loop runs until no
        # process has an episode left; a process with none makes an empty call.
        count = torch.tensor([local], device=accelerator.device)
        return int(accelerator.gather(count).sum().item())

    return total_playing


def _log_metrics(trainer: Any, episodes: Sequence[Episode], *, per_env: bool) -> None:
    log_metric = getattr(trainer, "_log_metric", None)
    if log_metric is None or not episodes:
        return
    groups: dict[str, list[Episode]] = {"env": list(episodes)}
    if per_env:
        for env_id in sorted({e.task.env_id for e in episodes}):
            groups[f"env/{env_id}"] = [e for e in episodes if e.task.env_id == env_id]
    for prefix, group in groups.items():
        n = len(group)
        turns = sum(e.turns for e in group)
        log_metric(f"{prefix}/success_rate", sum(e.success for e in group) / n)
        log_metric(f"{prefix}/mean_return", sum(e.episode_return for e in group) / n)
        log_metric(f"{prefix}/mean_turns", turns / n)
        log_metric(
            f"{prefix}/invalid_action_rate", sum(e.invalid_actions for e in group) / max(turns, 1)
        )
        log_metric(f"{prefix}/ended_by_limit_rate", sum(not e.ended_by_env for e in group) / n)
        log_metric(f"{prefix}/error_rate", sum(e.error is not None for e in group) / n)


def make_rollout_func(
    *,
    processor: ChatTemplateProcessor | Callable[[Any], ChatTemplateProcessor] | None = None,
    generator: Generator | Callable[[Any], Generator] | None = None,
    **config: Any,
) -> EnvRollout:
    """Make a ``rollout_func`` for ``GRPOTrainer`` that plays any registered text env.

    Args:
        processor: A :class:`ChatTemplateProcessor` or a function of the tokenizer returning one;
            default: built from the trainer's tokenizer and its chat template.
        generator: A generation backend or a function of the trainer returning one; default: the
            trainer's own (``transformers`` or, with ``use_vllm=True``, vLLM colocate/server).
        **config: Fields of :class:`RolloutConfig`: ``system_prompt``, ``max_turns``,
            ``max_new_tokens_per_turn``, ``max_completion_length``, ``reward_aggregation``,
            ``env_error_penalty``, ``log_metrics``, ``env_workers``, ``env_step_timeout``.

    Returns:
        An :class:`EnvRollout`, to pass as ``GRPOTrainer(rollout_func=...)``.

    Raises:
        TypeError: For an unknown option (with the list of known ones).
    """
    known = set(RolloutConfig.__dataclass_fields__)
    unknown = set(config) - known
    if unknown:
        raise TypeError(
            f"make_rollout_func got unknown option(s) {sorted(unknown)}; known: {sorted(known)}"
        )
    return EnvRollout(RolloutConfig(**config), processor=processor, generator=generator)
