"""Which model a run's ``final/`` holds (``--final-model last|best``): the field, its check, the
copy of ``best/`` into ``final/`` and the seeds that chose it.

``final/`` is the model ``trl-env eval --policy RUN`` plays. By default it is the last step's. A
GRPO policy can swing between evals (a tic-tac-toe run on SmolLM2 drew 23/32 held-out games at
step 30 and 9/32 at step 40, docs/multiturn.md), so ``--final-model best`` makes it a copy of
``best/``, the model of the best held-out eval, and keeps the last step's model in ``last/``, as
transformers' ``load_best_model_at_end`` does for a ``Trainer``. The choice is made on the
``--eval-seed`` seeds: judge the model on others; ``trl-env eval`` warns when its seeds overlap
them (:func:`chosen_on_seeds`).

Example:
    >>> check_final_model("best", eval_every=0)
    Traceback (most recent call last):
    ...
    ValueError: final_model 'best' keeps the model of the best held-out eval: ...
    >>> chosen_on_seeds({"eval_seed": 20000, "eval_episodes": 32}, "no/such/run") is None
    True
"""

from __future__ import annotations

import json
import shutil
from dataclasses import field
from pathlib import Path
from typing import Any

__all__ = [
    "BEST_DIR",
    "BEST_RECORD",
    "FINAL_MODELS",
    "LAST_DIR",
    "check_final_model",
    "chosen_on_seeds",
    "final_model_field",
    "final_model_step",
    "keep_best_as_final",
]

BEST_DIR = "best"
"""The folder of a ``trl-env train`` run that holds the model of its best held-out eval."""

BEST_RECORD = "best.json"
"""The file in ``best/`` naming the kept model's step, success rate and mean return."""

LAST_DIR = "last"
"""With ``--final-model best``: the folder that keeps the last step's model."""

FINAL_MODELS = ("last", "best")
"""What ``final/`` can hold: the last step's model or the best held-out eval's."""


def final_model_field() -> Any:
    """``final_model``: which model ``final/`` holds."""
    return field(
        default="last",
        metadata={
            "help": "The model final/ holds (the one `trl-env eval --policy RUN` plays): 'last' "
            "(the last step's) or 'best' (the best held-out eval's, as transformers' "
            "load_best_model_at_end; the last step's is kept in last/). 'best' is chosen on the "
            "--eval-seed seeds, so judge it on others.",
            "choices": FINAL_MODELS,
            "metavar": "last|best",
        },
    )


def check_final_model(final_model: str, eval_every: int | None) -> None:
    """Check ``final_model`` against the run's held-out evals.

    Args:
        final_model: ``"last"`` or ``"best"``.
        eval_every: The run's ``eval_every`` (``None``: not resolved yet, its default evaluates).

    Raises:
        ValueError: An unknown value, or ``"best"`` in a run without held-out evals.
    """
    if final_model not in FINAL_MODELS:
        raise ValueError(f"final_model must be 'last' or 'best', got {final_model!r}")
    if final_model == "best" and eval_every == 0:
        raise ValueError(
            "final_model 'best' keeps the model of the best held-out eval: it needs held-out "
            "evals (--eval-every N with N >= 1, not 0), or pass --final-model last"
        )


def keep_best_as_final(output_dir: str | Path) -> dict[str, Any]:
    """Make ``final/`` a copy of ``best/`` (its ``best.json`` too), after the last step's model
    was saved to ``last/``. The copy is made beside ``final/`` and renamed into place, so a failed
    copy leaves no half a model in ``final/``.

    Args:
        output_dir: The run folder.

    Returns:
        ``best.json``: the step, success rate and mean return of the model ``final/`` now holds.

    Raises:
        FileNotFoundError: The run kept no best model (it ran no held-out eval).
    """
    output = Path(output_dir)
    record = output / BEST_DIR / BEST_RECORD
    if not record.is_file():
        raise FileNotFoundError(
            f"{output / BEST_DIR} holds no model: the run ran no held-out eval, so there is no "
            f"best model for final/; the last step's model is in {output / LAST_DIR}"
        )
    final, copy = output / "final", output / "final.copying"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(output / BEST_DIR, copy)
    shutil.rmtree(final, ignore_errors=True)
    copy.rename(final)
    return json.loads(record.read_text(encoding="utf-8"))


def chosen_on_seeds(run: dict[str, Any], folder: str | Path) -> range | None:
    """The seeds whose held-out evals chose the model ``folder`` holds; ``None`` if none did.

    A chosen model's folder holds ``best.json`` (``RUN/best``, and ``RUN/final`` of a
    ``--final-model best`` run, its copy); a run folder stands for its ``final/``. The seeds come
    from ``best.json`` (runs before it recorded them: from ``run``, the ``train_config.json``).

    Args:
        run: The run's ``train_config.json``.
        folder: The policy folder: a run folder or a model folder in it.
    """
    path = Path(folder)
    if (path / "train_config.json").is_file() and (path / "final").is_dir():
        path = path / "final"
    if not (path / BEST_RECORD).is_file():
        return None
    record = {**run, **json.loads((path / BEST_RECORD).read_text(encoding="utf-8"))}
    start, count = record.get("eval_seed"), record.get("eval_episodes")
    if not isinstance(start, int) or not isinstance(count, int):
        return None
    return range(start, start + count)


def final_model_step(output_dir: str | Path, final_model: str) -> int | None:
    """The step of the model ``final/`` holds when it is the best held-out eval's, else None."""
    record = Path(output_dir) / "final" / BEST_RECORD
    if final_model != "best" or not record.is_file():
        return None
    step = json.loads(record.read_text(encoding="utf-8")).get("step")
    return step if isinstance(step, int) else None
