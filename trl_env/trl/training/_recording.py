"""The trainer of ``trl-env train``: :class:`RecordingGRPOTrainer` saves every step's episodes.

It is :class:`~trl_env.trl._credit.TurnCreditGRPOTrainer` (so ``credit`` works as there) that,
with ``save_rollouts_to`` set, writes the episodes of each generation batch, with the advantage
each got, to ``<save_rollouts_to>/rollouts/step-N.jsonl`` (format: :mod:`trl_env._rollout_records`).
In a run of several processes the records of all processes are gathered and written once, by the
main process. It needs trl-env's rollout (:func:`trl_env.make_rollout_func`), whose
``last_episodes`` hold what was played.

Example:
    >>> trainer = RecordingGRPOTrainer(
    ...     model="Qwen/Qwen3-0.6B",
    ...     reward_funcs=trl_env.env_reward,
    ...     train_dataset=trl_env.make_dataset("TextWordle-v0", num_tasks=512),
    ...     rollout_func=trl_env.make_rollout_func(max_new_tokens_per_turn=64),
    ...     save_rollouts_to="runs/wordle",
    ... )  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch
from accelerate.utils import gather_object

from trl_env._episode import Episode
from trl_env._rollout_records import episode_record, write_step
from trl_env.error import UsageError
from trl_env.trl._credit import TurnCreditGRPOTrainer, _model_turn_spans

__all__ = ["RecordingGRPOTrainer"]


def _per_turn(advantages: torch.Tensor, env_mask: Sequence[int]) -> list[float]:
    """One advantage per model turn: the value on the first token of each model-turn span."""
    width = advantages.shape[-1]
    return [
        float(advantages[start]) if start < width else 0.0
        for start, _ in _model_turn_spans(env_mask)
    ]


@runtime_checkable
class _KeepsEpisodes(Protocol):
    """A rollout function that keeps the episodes of its last call (trl-env's rollout does)."""

    @property
    def last_episodes(self) -> Sequence[Episode]:
        """The episodes the last call played."""


def _episode_source(rollout_func: object) -> _KeepsEpisodes:
    """``rollout_func``, checked to keep its episodes (what ``save_rollouts_to`` writes).

    Raises:
        trl_env.error.UsageError: It does not (a ``rollout_func`` that is not trl-env's).
    """
    if not isinstance(rollout_func, _KeepsEpisodes):
        raise UsageError(
            "save_rollouts_to needs trl-env's rollout (rollout_func=trl_env."
            "make_rollout_func(...)), whose last_episodes hold the episodes to save"
        )
    return rollout_func


class RecordingGRPOTrainer(TurnCreditGRPOTrainer):
    """``TurnCreditGRPOTrainer`` that saves every step's episodes (see the module docstring).

    Args:
        *args: ``TurnCreditGRPOTrainer``'s (that is ``GRPOTrainer``'s) arguments.
        save_rollouts_to: The run folder; ``None`` saves nothing.
        **kwargs: ``TurnCreditGRPOTrainer``'s keyword arguments (``credit``, ``gamma``, ...).

    Raises:
        trl_env.error.UsageError: ``save_rollouts_to`` with a ``rollout_func`` that is not
            trl-env's (nothing to read the episodes from).
    """

    def __init__(self, *args: Any, save_rollouts_to: str | Path | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.save_rollouts_to = Path(save_rollouts_to) if save_rollouts_to is not None else None
        if self.save_rollouts_to is not None:
            _episode_source(self.rollout_func)  # refuse a rollout with nothing to save now

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        output = super()._generate_and_score_completions(inputs)
        run_dir = self.save_rollouts_to
        if run_dir is not None and self._model_is_training():
            self._save_rollouts(output, run_dir)
        return output

    def _save_rollouts(self, output: dict[str, Any], run_dir: Path) -> None:
        episodes = list(_episode_source(self.rollout_func).last_episodes)
        advantages = output["advantages"].detach().float().cpu()
        rank = self.accelerator.process_index
        offset = rank * len(episodes)
        config = getattr(self.rollout_func, "config", None)
        system_prompt = getattr(config, "system_prompt", None)
        step = self.state.global_step + 1  # the step these episodes are trained in
        records = []
        for i, episode in enumerate(episodes):
            if i >= advantages.shape[0]:
                break
            row = advantages[i]
            advantage = _per_turn(row, episode.env_mask) if row.dim() else float(row)
            records.append(
                episode_record(
                    episode,
                    step=step,
                    group=(offset + i) // self.num_generations,
                    advantage=advantage,
                    system_prompt=system_prompt,
                    rank=rank,
                )
            )
        if self.accelerator.num_processes > 1:
            records = gather_object(records)
        if self.accelerator.is_main_process:
            write_step(run_dir, step, records)
