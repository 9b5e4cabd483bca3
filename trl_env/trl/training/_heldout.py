"""Held-out evaluation during training: :class:`HeldOutEvalCallback`.

Every ``every`` steps (and before the first and after the last) the current policy plays
``episodes`` games of each env greedily, on seeds ``seed, seed+1, ...`` that the training dataset
provably avoids (checked against its ``seed`` column), with the play loop of ``trl-env eval``
(:func:`trl_env.trl._model_episodes.play_episodes`, the run's own rollout settings). The figures are
logged through ``trainer.log`` under ``eval_*`` names, so they reach ``metrics.csv``, the
trackers of ``report_to`` (as ``eval/success_rate``, ...) and ``trainer.state.log_history``:

* ``eval_success_rate`` with its 95% Wilson interval ``eval_success_ci_low`` /
  ``eval_success_ci_high``, ``eval_mean_return``, ``eval_invalid_action_rate``,
  ``eval_mean_turns``, ``eval_seconds`` (the cost of that eval);
* with ``samples=k``: every seed is also played ``k`` times at ``sample_temperature``, giving
  ``eval_pass_at_k`` (unbiased estimator), ``eval_avg_at_k`` and ``eval_samples``;
* in runs on several envs, the same figures per env as ``eval_<env ID>/success_rate``, ...

The eval runs on the main process only (others wait for it at their next collective call), so a
2-process ``accelerate`` run evaluates once; sharded models (DeepSpeed ZeRO-3, FSDP) are not
supported. A resumed run continues the history: steps already evaluated (found in the restored
``log_history``) are not evaluated again.

Example:
    >>> trainer = GRPOTrainer(model=..., rollout_func=trl_env.make_rollout_func(),
    ...                       train_dataset=trl_env.make_dataset("TextWordle-v0"), ...)  # doctest: +SKIP
    >>> trainer.add_callback(HeldOutEvalCallback(trainer, "TextWordle-v0", every=50))  # doctest: +SKIP
    >>> trainer.train()  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from transformers import Trainer, TrainerCallback

from trl_env._episode import Episode, Task
from trl_env._memory import release_freed_memory
from trl_env._summary import EnvSummary, add_samples, summarize
from trl_env.error import UsageError
from trl_env.trl.training._config import EVAL_SEED

__all__ = ["EVAL_SEED", "HeldOutEvalCallback", "check_heldout_seeds", "eval_metrics"]

_BATCH = 32
"""Episodes played together in one eval batch."""


def check_heldout_seeds(
    dataset: Any, env_ids: Sequence[str], seeds: Sequence[int], *, option: str = "seed"
) -> None:
    """Refuse held-out seeds that the training dataset also plays.

    Args:
        dataset: The training dataset (rows with ``env_id`` and ``seed`` columns, as
            :func:`trl_env.make_dataset` makes); a dataset without them cannot be checked and
            is let through.
        env_ids: The envs evaluated.
        seeds: The eval seeds.
        option: The name of the setting to change, for the message.

    Raises:
        trl_env.error.UsageError: Some (env, seed) is in both.

    Example:
        >>> import trl_env
        >>> dataset = trl_env.make_dataset("TextWordle-v0", num_tasks=8)
        >>> check_heldout_seeds(dataset, ["TextWordle-v0"], range(10_000, 10_032))
        >>> taken = int(dataset[0]["seed"])
        >>> check_heldout_seeds(dataset, ["TextWordle-v0"], [taken])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        trl_env.error.UsageError: the eval seeds ... overlap the training dataset ...
    """
    columns = getattr(dataset, "column_names", None) or ()
    if "seed" not in columns or "env_id" not in columns:
        return
    wanted = {(env_id, int(seed)) for env_id in env_ids for seed in seeds}
    clash = sorted(
        (env_id, int(seed))
        for env_id, seed in zip(dataset["env_id"], dataset["seed"], strict=True)
        if (env_id, int(seed)) in wanted
    )
    if clash:
        env_id, seed = clash[0]
        low, high = min(seeds), max(seeds)
        raise UsageError(
            f"the eval seeds {low}..{high} overlap the training dataset ({len(clash)} task(s), "
            f"e.g. {env_id} seed {seed}): held-out figures would include games the model trains "
            f"on. Pick another --eval-{option} (e.g. {seed + 1}) or another training --seed"
        )


def _figures(summary: EnvSummary, prefix: str) -> dict[str, float]:
    figures = {
        f"{prefix}success_rate": summary.success_rate,
        f"{prefix}success_ci_low": summary.success_ci_low,
        f"{prefix}success_ci_high": summary.success_ci_high,
        f"{prefix}mean_return": summary.mean_return,
        f"{prefix}invalid_action_rate": summary.invalid_action_rate,
        f"{prefix}mean_turns": summary.mean_turns,
    }
    if summary.samples:
        figures[f"{prefix}pass_at_k"] = float(summary.pass_at_k or 0.0)
        figures[f"{prefix}avg_at_k"] = float(summary.avg_at_k or 0.0)
    return figures


def eval_metrics(
    greedy: Sequence[Episode], sampled: Sequence[Episode] = (), samples: int = 0
) -> dict[str, float]:
    """The ``eval_*`` metrics of an eval's episodes (overall, and per env when several).

    Example:
        >>> won = Episode(Task("TextWordle-v0", "0"), success=True, episode_return=1.0, turns=3)
        >>> lost = Episode(Task("TextWordle-v0", "1"), turns=6)
        >>> metrics = eval_metrics([won, lost])
        >>> metrics["eval_success_rate"], metrics["eval_mean_turns"]
        (0.5, 4.5)
    """
    env_ids = list(dict.fromkeys(e.env_id for e in greedy))
    per_env = {env_id: summarize(env_id, [e for e in greedy if e.env_id == env_id])
               for env_id in env_ids}  # fmt: skip
    if samples:
        for env_id, summary in per_env.items():
            add_samples(summary, [e for e in sampled if e.env_id == env_id], samples)
    overall = per_env[env_ids[0]] if len(env_ids) == 1 else summarize("all", greedy)
    if samples and len(env_ids) > 1:
        # Every env plays the same number of seeds: the overall figures are the envs' mean.
        overall.samples = samples
        for name in ("pass_at_k", "avg_at_k", "avg_return_at_k"):
            values = [getattr(summary, name) for summary in per_env.values()]
            setattr(overall, name, sum(values) / len(values))
    metrics = _figures(overall, "eval_")
    if len(env_ids) > 1:
        for env_id, summary in per_env.items():
            metrics.update(_figures(summary, f"eval_{env_id}/"))
    if samples:
        metrics["eval_samples"] = float(samples)
    return metrics


class HeldOutEvalCallback(TrainerCallback):
    """Evaluate the policy on held-out seeds every ``every`` steps (see the module docstring).

    Args:
        trainer: The ``GRPOTrainer`` (its model, tokenizer and rollout settings are used; the
            figures are logged with ``trainer.log``).
        env_ids: The envs to evaluate (one ID or several).
        every: Evaluate every this many steps (also before the first step and after the last).
        episodes: Episodes per env per eval.
        seed: Seed of the first episode; episode ``i`` plays ``seed + i``.
        samples: Also play every seed this many times sampled (pass@k, avg@k); 0: greedy only.
        sample_temperature: Temperature of the sampled plays.
        env_kwargs: ``gym.make`` keyword arguments of the eval envs.
        log: Where to print one line per eval (default: stderr, main process only; ``None``
            after construction to stay quiet).

    Raises:
        trl_env.error.UsageError: Bad counts, or seeds the training dataset plays.
    """

    def __init__(
        self,
        trainer: Any,
        env_ids: str | Sequence[str],
        *,
        every: int,
        episodes: int = 32,
        seed: int = EVAL_SEED,
        samples: int = 0,
        sample_temperature: float = 1.0,
        env_kwargs: Mapping[str, Any] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        # A repeated ID weights the training mix; the eval plays each env's seeds once.
        self.env_ids = list(dict.fromkeys([env_ids] if isinstance(env_ids, str) else env_ids))
        for name, value, low in (("every", every, 1), ("episodes", episodes, 1),
                                 ("seed", seed, 0), ("samples", samples, 0)):  # fmt: skip
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise UsageError(
                    f"HeldOutEvalCallback: {name} must be an int >= {low}, got {value!r}"
                )
        if not sample_temperature > 0:
            raise UsageError(f"sample_temperature must be > 0, got {sample_temperature!r}")
        self.trainer = trainer
        self.every, self.episodes, self.seed = every, episodes, seed
        self.samples, self.sample_temperature = samples, float(sample_temperature)
        self.env_kwargs = dict(env_kwargs or {})
        self.seeds = list(range(seed, seed + episodes))
        check_heldout_seeds(getattr(trainer, "train_dataset", None), self.env_ids, self.seeds)
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.history: list[dict[str, float]] = []
        """Every eval of this run: ``step`` and the ``eval_*`` metrics."""
        self._done: set[int] = set()
        self._said_default = False

    @property
    def seconds(self) -> float:
        """Seconds spent in evals so far."""
        return sum(row["eval_seconds"] for row in self.history)

    # --- when ------------------------------------------------------------------------------------

    def _due(self, state: Any) -> bool:
        step = state.global_step
        if step in self._done:
            return False
        if any(row.get("step") == step and "eval_success_rate" in row for row in state.log_history):
            return False  # evaluated before the checkpoint this run resumed from
        return step % self.every == 0 or step == state.max_steps

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        # Step N's metrics have been logged by now, so the eval's figures join its row (at
        # on_step_end they would be mixed into the eval's log call); the first call, at step 0,
        # comes after every tracker's on_train_begin opened its writer.
        if self._due(state):
            self.evaluate(state)

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        # After the last step's log and before on_train_end, where trackers close their writers.
        if state.global_step >= state.max_steps and state.global_step not in self._done:
            self.evaluate(state)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step not in self._done:
            self.evaluate(state)

    # --- how -------------------------------------------------------------------------------------

    def evaluate(self, state: Any) -> dict[str, float] | None:
        """Evaluate now and log the figures (main process only); they are also returned."""
        self._done.add(state.global_step)
        if not state.is_world_process_zero:
            return None
        started = time.perf_counter()
        greedy, sampled = self._play()
        metrics = eval_metrics(greedy, sampled, self.samples)
        metrics["eval_seconds"] = time.perf_counter() - started
        self.history.append({"step": state.global_step, **metrics})
        # transformers' own log, not GRPOTrainer's: that one would fold the training metrics
        # gathered since the last log (with logging_steps > 1) into this entry and clear them.
        Trainer.log(self.trainer, dict(metrics))
        if self.log is not None:
            self.log(_eval_line(state.global_step, metrics, len(greedy), self.samples))
        return metrics

    def _play(self) -> tuple[list[Episode], list[Episode]]:
        from trl_env.trl._rollout import EnvRollout

        trainer = self.trainer
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        rollout = trainer.rollout_func if isinstance(trainer.rollout_func, EnvRollout) else None
        rollout = rollout or getattr(trainer.rollout_func, "rollout", None)  # a wrapper of one
        if not isinstance(rollout, EnvRollout) and not self._said_default:
            self._said_default = True
            self.log(
                "held-out eval: the trainer's rollout_func is not trl-env's, so the eval plays "
                "with RolloutConfig()'s defaults (system prompt, tokens per turn); give the "
                "wrapper a `rollout` attribute holding the trl_env rollout to use its settings"
            )
            rollout = None
        if rollout is not None:
            processor = rollout.processor_for(
                tokenizer, getattr(trainer, "chat_template_kwargs", None)
            )
            config = dataclasses.replace(rollout.config, log_metrics=False)
        else:
            from trl_env.trl._processors import ChatTemplateProcessor
            from trl_env.trl._rollout_config import RolloutConfig

            processor, config = ChatTemplateProcessor(tokenizer), RolloutConfig(log_metrics=False)
        budget = config.max_completion_length or trainer.max_completion_length
        tasks = [Task(env_id, s, dict(self.env_kwargs)) for env_id in self.env_ids
                 for s in self.seeds]  # fmt: skip
        model = trainer.model
        was_training = model.training
        model.eval()
        # The model as trl-env eval loads it: without the training fast paths that change it.
        removed = getattr(trainer, "fast_paths_removed", contextlib.nullcontext)
        try:
            with removed():
                return self._play_runs(tasks, processor, config, budget)
        finally:
            model.train(was_training)

    def _play_runs(
        self, tasks: list[Task], processor: Any, config: Any, budget: int
    ) -> tuple[list[Episode], list[Episode]]:
        """The greedy episodes, and with ``samples`` the sampled ones (else ``[]``)."""
        from trl_env.trl._model_episodes import play_episodes

        runs = [(tasks, 0.0)]
        if self.samples:
            runs.append(([t for t in tasks for _ in range(self.samples)], self.sample_temperature))
        played = []
        for batch_tasks, temperature in runs:
            generator = _generator(self.trainer, temperature)
            episodes: list[Episode] = []
            # Sampling draws from torch's generator: on a forked copy, seeded by the eval
            # seed, so that evals neither change training nor depend on when they ran.
            with _own_random_stream(self.seed):
                for start in range(0, len(batch_tasks), _BATCH):
                    episodes += play_episodes(
                        batch_tasks[start : start + _BATCH], generator, processor, config,
                        max_completion_length=budget,
                    )  # fmt: skip
            generator.clear_cache()
            release_freed_memory()  # the eval's float32 caches: the run's largest blocks
            played.append(episodes)
        return played[0], played[1] if self.samples else []


@contextlib.contextmanager
def _own_random_stream(seed: int) -> Iterator[None]:
    import torch

    devices = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


def _generator(trainer: Any, temperature: float) -> Any:
    """A generator on the trainer's model (unwrapped as TRL does for generation), greedy at
    temperature 0. Built here rather than with ``TransformersGenerator.from_trainer``: with
    ``use_vllm`` the trainer has no transformers generation settings to copy."""
    from transformers import GenerationConfig

    from trl_env.trl.models._generation import TransformersGenerator, trainer_model_for_generation

    unwrapped = trainer_model_for_generation(trainer)  # no trainer sampling settings applied
    tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
    eos = list(trainer.eos_token_ids)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos[0]
    base = getattr(trainer, "generation_config", None)
    settings = base.to_dict() if base is not None else {}
    settings.update(pad_token_id=pad, eos_token_id=eos, disable_compile=True)
    if temperature == 0:
        # Neutral values, not None: a None is filled from the trainer's sampling settings, which
        # transformers then flags as "not valid" for greedy decoding.
        settings.update(do_sample=False, temperature=1.0, top_p=1.0, top_k=50, min_p=None)
    else:
        settings.update(do_sample=True, temperature=temperature)
    # No autocast, even when training runs in bf16, and the run's generation fast paths: the
    # held-out figures then match what `trl-env eval --fast-paths <the run's>` (float32) reports
    # for the saved model.
    return TransformersGenerator(
        unwrapped,
        pad_token_id=pad,
        eos_token_ids=eos,
        generation_config=GenerationConfig.from_dict(settings),
        temperature=temperature or 1.0,
        fast_paths=getattr(trainer, "fast_paths", "auto"),
    )


def _eval_line(step: int, metrics: Mapping[str, float], episodes: int, samples: int) -> str:
    """``eval @ step 40 | success 0.781 [0.612, 0.890] of 32 | ... | 3.1s``."""
    parts = [
        f"eval @ step {step}",
        f"success {metrics['eval_success_rate']:.3f} [{metrics['eval_success_ci_low']:.3f}, "
        f"{metrics['eval_success_ci_high']:.3f}] of {episodes}",
        f"return {metrics['eval_mean_return']:+.3f}",
        f"invalid {metrics['eval_invalid_action_rate']:.2f}",
        f"turns {metrics['eval_mean_turns']:.1f}",
    ]
    if samples:
        parts.append(
            f"pass@{samples} {metrics['eval_pass_at_k']:.3f} avg@{samples} {metrics['eval_avg_at_k']:.3f}"
        )
    parts.append(f"{metrics['eval_seconds']:.1f}s")
    return " | ".join(parts)
