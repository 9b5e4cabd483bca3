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

import time
from collections.abc import Callable, Sequence
from typing import Any

from trl_env._checks import check_task_source
from trl_env._demos import DEFAULT_SYSTEM_PROMPT
from trl_env._episode import Episode, Task
from trl_env._head_to_head import check_two_player_envs, resolve_seat_policy
from trl_env._memory import release_freed_memory
from trl_env._model_options import ModelOptions
from trl_env._stepping import make_stepper
from trl_env.error import EnvErrorWarning, UsageError
from trl_env.protocol import TokenProcessor
from trl_env.trl._model_episodes import _close_stream, _EnvPool, play_episodes
from trl_env.trl._model_policy import ModelPolicy
from trl_env.trl._processors import ChatTemplateProcessor
from trl_env.trl._rollout_config import RolloutConfig
from trl_env.trl._rollout_output import _log_metrics, episodes_to_rollout_output
from trl_env.trl._self_play import (
    POOL,
    SELF,
    OpponentPool,
    as_opponent_policy,
    check_seat_rows,
    play_seat_episodes,
)
from trl_env.trl._tasks import task_from_prompt
from trl_env.trl.models import Generator, generator_from_trainer

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "EnvErrorWarning",
    "EnvRollout",
    "Episode",
    "RolloutConfig",
    "make_rollout_func",
    "play_episodes",
]


class EnvRollout:
    """The ``rollout_func`` made by :func:`make_rollout_func` (a callable object).

    Attributes:
        config: Its :class:`RolloutConfig`.
        generation_calls: Generation calls made by the last call (one per turn played).
        generation_seconds: Seconds the last call spent sampling replies.
        env_seconds: Seconds the last call spent on everything else (env resets and steps,
            tokenising env turns).
        last_episodes: The episodes of the last call, for inspection.
    """

    def __init__(
        self,
        config: RolloutConfig,
        *,
        processor: TokenProcessor | Callable[[Any], TokenProcessor] | None = None,
        generator: Generator | Callable[[Any], Generator] | None = None,
    ) -> None:
        self.config = config
        self._processor_arg = processor
        self._generator_arg = generator
        self._processor: TokenProcessor | None = None
        self._pool = _EnvPool()
        self._checked_tasks: set[tuple[str, str]] = set()
        self.generation_calls = 0
        self.generation_seconds = 0.0
        self.env_seconds = 0.0
        self.last_episodes: list[Episode] = []
        self._seen_env_ids: set[str] = set()
        self._opponents: dict[Any, Any] = {}  # named opponents, loaded once
        self._opponent_pool: OpponentPool | None = None

    def processor_for(
        self, tokenizer: Any, chat_template_kwargs: dict[str, Any] | None = None
    ) -> TokenProcessor:
        """The processor (built once from the trainer's tokenizer unless one was given).

        Args:
            tokenizer: The trainer's tokenizer.
            chat_template_kwargs: The trainer's ``GRPOConfig.chat_template_kwargs`` (for example
                ``{"enable_thinking": False}``), applied when the processor is built here.
        """
        if self._processor is None:
            if isinstance(self._processor_arg, TokenProcessor):
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

    def _check_tasks(self, tasks: Sequence[Task]) -> None:
        """Refuse rows that import modules or pass kwargs the env rejects (unless trusted)."""
        for task in tasks:
            key = (task.env_id, task.kwargs_key)
            if key not in self._checked_tasks:
                check_task_source(task.env_id, task.kwargs, trust=self.config.trust_tasks)
                self._checked_tasks.add(key)

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        """Play one episode per prompt and return the ``GRPOTrainer`` rollout dict."""
        tasks = [task_from_prompt(prompt) for prompt in prompts]
        self._check_tasks(tasks)
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        processor = self.processor_for(tokenizer, getattr(trainer, "chat_template_kwargs", None))
        backend = self._generator_for(trainer)
        generator = _CountingGenerator(backend)
        budget = self.config.max_completion_length or trainer.max_completion_length
        started = time.perf_counter()
        try:
            if self.config.plays_seats:
                episodes = self._play_seats(tasks, trainer, generator, processor, budget)
            else:
                episodes = play_episodes(
                    tasks,
                    generator,
                    processor,
                    self.config,
                    max_completion_length=budget,
                    pool=self._pool,
                    sync=_process_sync(trainer),
                )
        finally:
            # The KV states kept between turns are useless once the weights change: free them
            # before the training step needs the memory.
            clear_cache = getattr(backend, "clear_cache", None)
            if callable(clear_cache):
                clear_cache()
        self.generation_calls = generator.calls
        self.generation_seconds = generator.seconds
        # Everything in the rollout that is not sampling: env resets and steps, tokenisation.
        self.env_seconds = time.perf_counter() - started - generator.seconds
        # The freed caches' pages go back before the training step's blocks of other sizes come.
        release_freed_memory()
        self.last_episodes = episodes
        self._seen_env_ids.update(task.env_id for task in tasks)
        if self.config.log_metrics:
            # Per-env metrics once this run has seen several envs (a mixed dataset), even in a
            # batch that happens to hold one: metric names must not depend on the batch.
            _log_metrics(trainer, episodes, per_env=len(self._seen_env_ids) > 1)
            log_metric = getattr(trainer, "_log_metric", None)
            if log_metric is not None:
                log_metric("time/generation_s", self.generation_seconds)
                log_metric("time/env_s", self.env_seconds)
        return episodes_to_rollout_output(episodes)

    def _opponent(self, tasks: Sequence[Task], trainer: Any, budget: int) -> tuple[Any, str]:
        """This call's opponent policy (``None``: the model itself) and its name."""
        opponent = self.config.opponent
        if opponent is None or opponent == SELF:
            return None, SELF
        options = ModelOptions(
            max_new_tokens_per_turn=self.config.max_new_tokens_per_turn or budget,
            max_completion_length=budget,
            system_prompt="" if self.config.system_prompt is None else self.config.system_prompt,
        )
        if opponent == POOL:
            if self._opponent_pool is None:
                self._opponent_pool = OpponentPool(
                    self.config.opponent_pool_size,
                    self.config.opponent_refresh_steps,
                    seed=int(getattr(getattr(trainer, "args", None), "seed", 0) or 0),
                    temperature=self.config.opponent_temperature,
                )
            return self._opponent_pool.opponent_for(trainer, options)
        policy = as_opponent_policy(opponent)
        if policy is not None:
            return policy, getattr(opponent, "name", type(opponent).__name__)
        classes = check_two_player_envs(sorted({task.env_id for task in tasks}))
        heat = self.config.opponent_temperature
        return resolve_seat_policy(opponent, classes, options, heat, self._opponents), opponent

    def _play_seats(
        self,
        tasks: Sequence[Task],
        trainer: Any,
        generator: Generator,
        processor: TokenProcessor,
        budget: int,
    ) -> list[Episode]:
        """Self-play or a fixed opponent: the model's seats of two-player games, one per row."""
        if _process_sync(trainer) is not None:
            raise UsageError(
                "self-play and opponents run on one process for now: launch the run without "
                "accelerate's multi-process mode (or drop self_play/opponent)"
            )
        opponent, name = self._opponent(tasks, trainer, budget)
        check_seat_rows(tasks, pairs=opponent is None)
        learner = ModelPolicy(
            generator,
            processor,
            system_prompt=self.config.system_prompt,
            max_completion_length=budget,
            max_new_tokens_per_turn=self.config.max_new_tokens_per_turn,
        )
        games = tasks[::2] if opponent is None else tasks
        envs = [self._pool.acquire(task) for task in games]
        matches = []
        stepper = make_stepper(self.config.env_workers, self.config.env_step_timeout)
        try:
            episodes, matches = play_seat_episodes(
                tasks,
                envs,
                learner,
                opponent=opponent,
                opponent_name=name,
                max_turns=self.config.max_turns,
                stepper=stepper,
                error_penalty=self.config.env_error_penalty,
            )
        finally:
            for index, (task, env) in enumerate(zip(games, envs, strict=True)):
                failed = index >= len(matches) or matches[index].error is not None
                if failed:  # a game that failed may be in any state: never reuse its env
                    stepper.close_env(env)  # (once a call that timed out on it returns)
                else:
                    self._pool.release(task, env)
            stepper.shutdown()
        for episode in episodes:
            _close_stream(episode, processor, self.config)
            episode.episode_return = self.config.aggregate(episode.rewards)
        return episodes


class _CountingGenerator:
    """Counts and times the calls of a generator (for the step's time split)."""

    def __init__(self, inner: Generator) -> None:
        self.inner = inner
        self.calls = 0
        self.seconds = 0.0

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int) -> Any:
        self.calls += 1
        started = time.perf_counter()
        try:
            return self.inner.generate(inputs, max_new_tokens)
        finally:
            self.seconds += time.perf_counter() - started


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


def make_rollout_func(
    *,
    processor: TokenProcessor | Callable[[Any], TokenProcessor] | None = None,
    generator: Generator | Callable[[Any], Generator] | None = None,
    **config: Any,
) -> EnvRollout:
    """Make a ``rollout_func`` for ``GRPOTrainer`` that plays any registered text env.

    Args:
        processor: A :class:`~trl_env.protocol.TokenProcessor` (such as
            :class:`ChatTemplateProcessor`) or a function of the tokenizer returning one;
            default: built from the trainer's tokenizer and its chat template.
        generator: A generation backend or a function of the trainer returning one; default: the
            trainer's own (``transformers`` or, with ``use_vllm=True``, vLLM colocate/server).
        **config: Fields of :class:`RolloutConfig`: ``system_prompt``, ``max_turns``,
            ``max_new_tokens_per_turn``, ``max_completion_length``, ``reward_aggregation``,
            ``env_error_penalty``, ``log_metrics``, ``env_workers``, ``env_step_timeout``,
            ``trust_tasks``; for two-player games ``self_play``, ``opponent``,
            ``opponent_pool_size``, ``opponent_refresh_steps``, ``opponent_temperature`` (see
            :mod:`trl_env.trl._self_play`).

    Returns:
        An :class:`EnvRollout`, to pass as ``GRPOTrainer(rollout_func=...)``.

    Raises:
        TypeError: For an unknown option (with the list of known ones).
        trl_env.error.UsageError: For a bad value (the message names the option and the fix).
    """
    known = set(RolloutConfig.__dataclass_fields__)
    unknown = set(config) - known
    if unknown:
        raise TypeError(
            f"make_rollout_func got unknown option(s) {sorted(unknown)}; known: {sorted(known)}"
        )
    if processor is not None and not (isinstance(processor, TokenProcessor) or callable(processor)):
        raise UsageError(
            f"processor must be a TokenProcessor (e.g. ChatTemplateProcessor(tokenizer)) or a "
            f"function of the tokenizer returning one, got {processor!r:.80}"
        )
    if generator is not None and not (hasattr(generator, "generate") or callable(generator)):
        raise UsageError(
            f"generator must have a generate(inputs, max_new_tokens) method or be a function of "
            f"the trainer returning such a backend, got {generator!r:.80}"
        )
    return EnvRollout(RolloutConfig(**config), processor=processor, generator=generator)
