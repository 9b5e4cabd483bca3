"""The run folder's model card: :func:`write_model_card` (``<run>/README.md``).

TRL writes a card at every checkpoint from its own template, which names the base model only when
it is a Hub id and the repository only when the run is pushed: for a run of a local model (a
``.gguf`` file, a folder, the tiny model) it says "a fine-tuned version of [None]" and its quick
start loads ``model="None"``. At the end of ``trl-env train`` this card replaces it: what was
trained (the base model as the run was given it, the envs, LoRA or full, warm start, credit),
how far (steps, what stopped it, the last held-out eval), what the folder holds, and the commands
that evaluate, load and repeat the run. The YAML header keeps the Hub's keys (``base_model`` only
for a Hub id, ``library_name``, ``tags``).

Example:
    >>> from trl_env.trl.training import TrainConfig
    >>> cfg = TrainConfig(["TextWordle-v0"], model="Qwen/Qwen3-0.6B", lora=True,
    ...                   output_dir="runs/wordle").resolved()  # doctest: +SKIP
    >>> print(model_card(cfg, {"steps": 500, "stopped_by": "max_steps"}, []))  # doctest: +SKIP
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trl_env.trl.training._config import TrainConfig

__all__ = ["model_card", "write_model_card"]


def _base_model(model: str | None) -> tuple[str, str | None]:
    """How the card names the base model, and its Hub id (``None`` for a local file or folder)."""
    if model is None:
        return "the tiny local model trl-env builds (a 2-layer Qwen3)", None
    from trl_env.utils._hub import is_hub_id

    if not Path(model).expanduser().exists() and is_hub_id(model):
        return f"[{model}](https://huggingface.co/{model})", model
    return f"`{model}` (a local {'GGUF file' if model.endswith('.gguf') else 'model'})", None


def _warm_start(cfg: TrainConfig) -> str:
    """The run's warm start, as the card says it (the tiny model's is format-only SFT steps)."""
    if cfg.warm_start != "none":
        return f"warm start {cfg.warm_start}"
    if cfg.warm_start_steps:
        return f"format-only warm start ({cfg.warm_start_steps} SFT steps)"
    return "no warm start"


def _number(value: Any) -> float | None:
    """A logged figure as a float; None where the row has none (missing, empty or NaN)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None


def _last_eval(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The last held-out eval of the run's rows, as one phrase (in a run on several envs, the
    figures over all of them)."""
    for row in reversed(rows):
        if (rate := _number(row.get("eval_success_rate"))) is None:
            continue
        low, high = (
            _number(row.get("eval_success_ci_low")),
            _number(row.get("eval_success_ci_high")),
        )
        interval = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
        return f"success {rate:.3f}{interval} at step {int(_number(row.get('step')) or 0)}"
    return None


def model_card(
    cfg: TrainConfig, record: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
) -> str:
    """The card's text (see the module docstring).

    Args:
        cfg: The run's resolved settings.
        record: The run's ``run.json`` (steps, what stopped it, the machine).
        rows: The run's ``metrics.csv`` rows (for the last held-out eval).
    """
    run = Path(cfg.output_dir or ".")
    named, hub_id = _base_model(cfg.model)
    envs = ", ".join(f"`{env}`" for env in cfg.env_ids)
    header = ["---", f"library_name: {'peft' if cfg.lora else 'transformers'}"]
    header += [f"base_model: {hub_id}"] if hub_id else []
    header += ["tags:", *(f"- {tag}" for tag in ("trl-env", "trl", "grpo", *cfg.env_ids)), "---"]
    how = [
        f"LoRA (r {cfg.lora_r}, alpha {cfg.lora_alpha})" if cfg.lora else "full fine-tuning",
        f"{cfg.credit} credit",
        _warm_start(cfg),
        f"lr {cfg.learning_rate:g}",
        f"groups of {cfg.num_generations}",
    ]
    stopped = {"minutes": "the time budget", "max_steps": "the step limit"}
    lines = [
        *header,
        "",
        f"# {run.name or 'run'}",
        "",
        f"GRPO ([TRL](https://github.com/huggingface/trl)) on {envs}, trained by `trl-env train` "
        f"from {named}: {', '.join(how)}.",
        "",
        f"- Steps: {record.get('steps')} (stopped by "
        f"{stopped.get(str(record.get('stopped_by')), record.get('stopped_by'))}).",
    ]
    if (last := _last_eval(rows)) is not None:
        lines.append(
            f"- Last held-out eval ({cfg.eval_episodes} greedy episodes"
            + (" of each env" if len(cfg.env_ids) > 1 else "")
            + f" from seed {cfg.eval_seed}): {last}."
        )
    if (step := record.get("final_model_step")) is not None:
        lines.append(
            f"- `final/` is the model of the best held-out eval, at step {step} (`--final-model "
            "best`; chosen on those seeds, so judge it on others); the last step's is in `last/`."
        )
    return "\n".join([*lines, *_use_and_files(cfg, run)])


def _use_and_files(cfg: TrainConfig, run: Path) -> list[str]:
    """The card's sections on using the run and on what its folder holds."""
    from trl_env.trl.training._run import eval_command

    return [
        "",
        "## Use it",
        "",
        "```bash",
        eval_command(cfg),
        f"trl-env train --config {shlex.quote(str(run / 'config.yaml'))} --out NEW_RUN"
        "   # the same run again",
        "```",
        "",
        f"In Python: `trl_env.trl.models.load_model_and_tokenizer({str(run)!r})` (the final model).",
        "",
        "## Files",
        "",
        *(line for name, line in _FILES if name is None or (run / name).exists()),
        "",
    ]


_FILES: tuple[tuple[str | None, str], ...] = (
    (None, "- `final/`: the model `trl-env eval --policy RUN` plays: the last step's, or with "
     "`--final-model best` a copy of `best/` (run.json's `final_model_step` names its step); with "
     "LoRA, the adapter, whose config names the base."),
    ("last", "- `last/`: the model after the last step (`--final-model best` made `final/` the "
     "best held-out eval's)."),
    ("best", "- `best/`: the model of the best held-out eval (`best.json` names its step; chosen "
     "on the eval seeds, so judge it on others)."),
    ("warm_start", "- `warm_start/`: the model after the warm start (with its demos, where it "
     "played some)."),
    (None, "- `metrics.csv`: every logged figure, one row per step."),
    ("learning_curve.png", "- `learning_curve.png`: the learning curve."),
    (None, "- `config.yaml`: the run's settings; `run.json`: steps, wall time, memory and "
     "machine."),
)  # fmt: skip
"""The card's list of the run folder's files: ``(name that must exist, or None, line)``."""


def write_model_card(
    cfg: TrainConfig, record: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]
) -> Path:
    """Write :func:`model_card` to ``<output_dir>/README.md`` (replacing TRL's); return the path."""
    path = Path(cfg.output_dir or ".") / "README.md"
    path.write_text(model_card(cfg, record, rows), encoding="utf-8")
    return path
