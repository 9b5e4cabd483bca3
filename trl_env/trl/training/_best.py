"""The model of a run's best held-out eval, kept beside its last: :class:`BestHeldOutModel`.

A GRPO policy can swing between evals: a tic-tac-toe run on SmolLM2 drew 201/256 held-out games
at step 100 and 64/256 at step 103, its last (docs/multiturn.md). ``final/`` is by default the
last step's model; this callback also keeps the model of the best held-out eval so far in ``RUN/best`` (the
highest ``eval_success_rate``, ties broken by ``eval_mean_return``, the earlier eval kept on a full
tie), with ``best.json`` naming its step and figures. ``trl-env eval --policy RUN/best`` plays it
with the run's settings.

The choice is made on the in-training eval's seeds (``--eval-seed``, ``--eval-episodes``), so
those seeds flatter it: judge ``RUN/best`` on other seeds (``trl-env eval --seed`` past
``eval_seed + eval_episodes``). ``best.json`` records those seeds and envs. A resumed run
compares against the ``best.json`` already there, unless it is stale: from a step past the
checkpoint resumed (an abandoned stretch of the run) or chosen on other seeds or envs; then
``best/`` is dropped and the resumed run's evals choose again.

``--final-model best`` (:mod:`trl_env.trl.training._final_model`) makes ``final/`` a copy of it.

Example:
    >>> trainer.add_callback(BestHeldOutModel(trainer))  # doctest: +SKIP
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from trl_env.trl.training._final_model import BEST_DIR, BEST_RECORD

__all__ = ["BEST_DIR", "BestHeldOutModel"]


class BestHeldOutModel(TrainerCallback):
    """Save the model to ``<output_dir>/best`` whenever a held-out eval beats the best so far.

    Args:
        trainer: The trainer (its ``save_model`` and ``args.output_dir`` are used).
        chosen_on: What the evals play, recorded in ``best.json`` (``eval_seed``,
            ``eval_episodes``, ``env_ids``): a resumed run whose evals play otherwise chooses
            again.
    """

    def __init__(self, trainer: Any, chosen_on: dict[str, Any] | None = None) -> None:
        self.trainer = trainer
        self.chosen_on = dict(chosen_on or {})

    @property
    def folder(self) -> Path:
        """Where the best model is kept."""
        return Path(self.trainer.args.output_dir) / BEST_DIR

    def best_so_far(self) -> dict[str, Any] | None:
        """``best.json``: the step, success rate and mean return of the kept model, if any."""
        record = self.folder / BEST_RECORD
        return json.loads(record.read_text(encoding="utf-8")) if record.is_file() else None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        best = self.best_so_far()
        if best is None or not state.is_world_process_zero:
            return
        past = best.get("step", 0) > state.global_step  # kept on a stretch the resume abandons
        elsewhere = any(best.get(name, value) != value for name, value in self.chosen_on.items())
        if past or elsewhere:
            shutil.rmtree(self.folder)

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        if not logs or "eval_success_rate" not in logs or not state.is_world_process_zero:
            return
        score = (logs["eval_success_rate"], logs.get("eval_mean_return", 0.0))
        best = self.best_so_far()
        if best is not None and score <= (best["eval_success_rate"], best["eval_mean_return"]):
            return
        self.trainer.save_model(str(self.folder))
        record = {"step": state.global_step, "eval_success_rate": score[0],
                  "eval_mean_return": score[1], **self.chosen_on}  # fmt: skip
        (self.folder / BEST_RECORD).write_text(
            json.dumps(record, indent=2) + "\n", encoding="utf-8"
        )
