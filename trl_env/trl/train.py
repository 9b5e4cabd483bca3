"""``trl-env train``: GRPO on registered text envs, from the command line or from Python.

One function does the work, :func:`train`; the CLI subcommand is :func:`add_arguments` (its
options) and :func:`run` (parse, call :func:`train`, report). A run:

1. loads ``--model`` (a Hub id or a local directory, through ``from_pretrained`` either way), or,
   with no ``--model``, builds the tiny local model of :mod:`trl_env.trl.tiny` so that it runs
   anywhere, offline, on a CPU;
2. optionally warm-starts it on format-only replies (:mod:`trl_env.trl.warm_start`; on by default
   for the tiny model only, which otherwise samples gibberish and never earns a reward);
3. trains with TRL's ``GRPOTrainer``, ``trl_env.make_rollout_func``, ``trl_env.env_reward`` and
   ``trl_env.make_dataset``, showing a progress bar and one line of metrics per step;
4. writes ``metrics.csv`` (every logged metric, one row per step) and ``learning_curve.png``
   (reward and success rate per step) to the output folder, and the final model and tokenizer to
   ``<output>/final`` (plus ``checkpoint-N`` folders with ``--save-steps N``).

Example:
    >>> from trl_env.trl.train import train
    >>> result = train("TextLargestNumber-v0")  # doctest: +SKIP
    >>> result.summary()["last_mean"] > 2 * result.summary()["first_mean"]  # doctest: +SKIP
    True

Command line::

    trl-env train TextLargestNumber-v0            # tiny model, CPU, about 2 minutes
    trl-env train TextWordle-v0 --model Qwen/Qwen3-0.6B --use-vllm --lora --bf16

See ``docs/learning.md`` for what the first command learns, and why the tiny model's defaults are
what they are.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trl_env.trl.rollout import DEFAULT_SYSTEM_PROMPT

__all__ = [
    "TrainConfig",
    "TrainResult",
    "add_arguments",
    "run",
    "train",
]

_TINY_DEFAULTS: dict[str, Any] = {
    "learning_rate": 1e-3,
    "per_device_train_batch_size": 64,
    "max_completion_length": 16,
    "max_new_tokens_per_turn": 8,
    "warm_start_steps": 600,
    "max_steps": 400,
    # A 2-layer model reads a prompt as little more than a bag of tokens: a long fixed system
    # message only dilutes the few tokens that matter (and slows every step).
    "system_prompt": None,
}
"""Settings of the built-in tiny model (no ``--model``), tuned on TextLargestNumber-v0 on a
2-core CPU (see ``docs/learning.md``)."""

_MODEL_DEFAULTS: dict[str, Any] = {
    "learning_rate": 1e-6,
    "per_device_train_batch_size": 8,
    "max_completion_length": 1024,
    "max_new_tokens_per_turn": 256,
    "warm_start_steps": 0,
    "max_steps": 500,
    "system_prompt": DEFAULT_SYSTEM_PROMPT,
}
"""Settings of a real model (``--model``): TRL's GRPO learning rate, room for reasoning."""

_LORA_LEARNING_RATE = 1e-5

_AUTO = "auto"
"""``system_prompt`` value meaning: the default of the model kind (tiny or not)."""

_VLLM_MODES = ("colocate", "server")

# `org/name` or `name`, the shapes of a Hugging Face Hub repository id.
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")

# Columns shown first in metrics.csv, in this order; every other logged metric follows, sorted.
_CSV_FIRST = (
    "step",
    "reward",
    "reward_std",
    "env/success_rate",
    "env/mean_return",
    "env/invalid_action_rate",
    "env/mean_turns",
    "loss",
    "grad_norm",
    "learning_rate",
    "entropy",
    "completions/mean_length",
    "completions/clipped_ratio",
    "frac_reward_zero_std",
    "step_time",
    "wall_time_s",
)


@dataclass
class TrainConfig:
    """Settings of :func:`train` (and of ``trl-env train``).

    Fields left at ``None`` are resolved by :meth:`resolved`: with no ``model`` (the built-in tiny
    model) to settings that learn on a CPU in minutes, otherwise to ones for a real model on a GPU.
    """

    env_ids: list[str] = field(
        default_factory=list, metadata={"help": "Registered env IDs to train on (mixed evenly)."}
    )
    model: str | None = field(
        default=None,
        metadata={
            "help": "Hugging Face Hub id or local directory; None builds the tiny local model."
        },
    )
    output_dir: str | None = field(
        default=None,
        metadata={"help": "Output folder; default trl-env-runs/<first env ID>-<date-time>."},
    )
    num_tasks: int = field(
        default=4096, metadata={"help": "Tasks (env seeds) in the training dataset."}
    )
    max_steps: int | None = field(
        default=None, metadata={"help": "Optimizer steps (default 400 tiny model, 500)."}
    )
    learning_rate: float | None = field(
        default=None,
        metadata={"help": "AdamW learning rate (default 1e-3 tiny model, 1e-5 LoRA, 1e-6 full)."},
    )
    lr_scheduler_type: str = field(
        default="constant", metadata={"help": "transformers learning-rate schedule."}
    )
    num_generations: int = field(
        default=8, metadata={"help": "Episodes per task (the GRPO group size)."}
    )
    per_device_train_batch_size: int | None = field(
        default=None,
        metadata={"help": "Episodes per device per step (default 64 tiny model, 8 otherwise)."},
    )
    gradient_accumulation_steps: int = field(
        default=1, metadata={"help": "Batches accumulated per optimizer step."}
    )
    max_completion_length: int | None = field(
        default=None,
        metadata={"help": "Tokens of a whole episode's completion (default 16 tiny, 1024)."},
    )
    max_new_tokens_per_turn: int | None = field(
        default=None, metadata={"help": "Tokens of one model turn (default 8 tiny, 256)."}
    )
    max_turns: int | None = field(
        default=None, metadata={"help": "Model turns per episode at most (None: the env's)."}
    )
    beta: float = field(default=0.0, metadata={"help": "KL coefficient (0: no reference model)."})
    temperature: float = field(default=1.0, metadata={"help": "Sampling temperature."})
    seed: int = field(default=0, metadata={"help": "Seed of the dataset, warm start and trainer."})
    use_vllm: bool = field(default=False, metadata={"help": "Generate with vLLM."})
    vllm_mode: str = field(default="colocate", metadata={"help": "vLLM mode: colocate or server."})
    vllm_gpu_memory_utilization: float = field(
        default=0.3, metadata={"help": "GPU memory share of vLLM in colocate mode."}
    )
    lora: bool = field(default=False, metadata={"help": "Train LoRA adapters (needs peft)."})
    lora_r: int = field(default=16, metadata={"help": "LoRA rank."})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA alpha."})
    bf16: bool = field(default=False, metadata={"help": "Train in bfloat16 mixed precision."})
    warm_start_steps: int | None = field(
        default=None,
        metadata={"help": "Format-only SFT steps before RL (default 600 tiny model, else 0)."},
    )
    system_prompt: str | None = field(
        default=_AUTO,
        metadata={
            "help": "System message of every episode; None for none; default: none for the tiny "
            "model, trl_env's DEFAULT_SYSTEM_PROMPT otherwise."
        },
    )
    save_steps: int = field(
        default=0, metadata={"help": "Save a checkpoint every N steps (0: only the final model)."}
    )
    env_kwargs: dict[str, Any] = field(
        default_factory=dict, metadata={"help": "gym.make kwargs for every env."}
    )
    progress: bool = field(default=True, metadata={"help": "Progress bar and per-step lines."})
    plot: bool = field(default=True, metadata={"help": "Write learning_curve.png."})

    def __post_init__(self) -> None:
        if isinstance(self.env_ids, str):
            self.env_ids = [self.env_ids]
        self.env_ids = list(self.env_ids)
        if not self.env_ids:
            raise ValueError(
                "give at least one env ID, e.g. TextLargestNumber-v0 (see `trl-env list`)"
            )
        _positive_int("num_tasks", self.num_tasks)
        _positive_int("num_generations", self.num_generations)
        _positive_int("gradient_accumulation_steps", self.gradient_accumulation_steps)
        for name in (
            "max_steps",
            "per_device_train_batch_size",
            "max_completion_length",
            "max_new_tokens_per_turn",
            "max_turns",
        ):
            if getattr(self, name) is not None:
                _positive_int(name, getattr(self, name))
        if self.num_generations < 2:
            raise ValueError(
                f"num_generations must be at least 2 (GRPO compares the episodes of a task with "
                f"each other), got {self.num_generations}"
            )
        if self.learning_rate is not None and not (
            math.isfinite(self.learning_rate) and self.learning_rate > 0
        ):
            raise ValueError(f"learning_rate must be a positive number, got {self.learning_rate}")
        if not (math.isfinite(self.temperature) and self.temperature > 0):
            raise ValueError(f"temperature must be > 0, got {self.temperature}")
        if not (math.isfinite(self.beta) and self.beta >= 0):
            raise ValueError(f"beta must be >= 0, got {self.beta}")
        if self.vllm_mode not in _VLLM_MODES:
            raise ValueError(f"vllm_mode must be 'colocate' or 'server', got {self.vllm_mode!r}")
        if not 0 < self.vllm_gpu_memory_utilization <= 1:
            raise ValueError(
                "vllm_gpu_memory_utilization must be in (0, 1], "
                f"got {self.vllm_gpu_memory_utilization}"
            )
        if self.warm_start_steps is not None and (
            not isinstance(self.warm_start_steps, int) or self.warm_start_steps < 0
        ):
            raise ValueError(f"warm_start_steps must be an int >= 0, got {self.warm_start_steps!r}")
        if not isinstance(self.save_steps, int) or self.save_steps < 0:
            raise ValueError(f"save_steps must be an int >= 0, got {self.save_steps!r}")
        _positive_int("lora_r", self.lora_r)
        _positive_int("lora_alpha", self.lora_alpha)
        if not isinstance(self.env_kwargs, dict):
            raise ValueError(f"env_kwargs must be a dict, got {self.env_kwargs!r}")
        batch = self.per_device_train_batch_size
        if batch is not None and (batch * self.gradient_accumulation_steps) % self.num_generations:
            raise ValueError(
                f"per_device_train_batch_size x gradient_accumulation_steps "
                f"({batch} x {self.gradient_accumulation_steps}) must be a multiple of "
                f"num_generations ({self.num_generations}): each task is played num_generations "
                f"times within one batch. Set per_device_train_batch_size to a multiple of "
                f"{self.num_generations}, or change num_generations."
            )

    @property
    def uses_tiny_model(self) -> bool:
        """Whether the run builds the tiny local model (no ``model`` given)."""
        return self.model is None

    def resolved(self) -> TrainConfig:
        """A copy with every ``None`` default filled in (see the field helps)."""
        defaults = dict(_TINY_DEFAULTS if self.uses_tiny_model else _MODEL_DEFAULTS)
        if self.lora and not self.uses_tiny_model:
            defaults["learning_rate"] = _LORA_LEARNING_RATE
        values = asdict(self)
        for name, default in defaults.items():
            if values[name] is (_AUTO if name == "system_prompt" else None):
                values[name] = default
        if values["output_dir"] is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            values["output_dir"] = str(Path("trl-env-runs") / f"{self.env_ids[0]}-{stamp}")
        if values["per_device_train_batch_size"] % self.num_generations:
            # The default batch need not suit a custom group size: round it up to one that does.
            groups = -(-values["per_device_train_batch_size"] // self.num_generations)
            values["per_device_train_batch_size"] = groups * self.num_generations
        return TrainConfig(**values)


def _positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


@dataclass
class TrainResult:
    """What :func:`train` produced.

    Attributes:
        output_dir: The run's folder.
        model_dir: The final model and tokenizer (``<output_dir>/final``).
        metrics_csv: One row per step, every logged metric.
        plot_png: The learning curve (``None`` if plotting was off).
        history: The rows of ``metrics_csv``, as dicts.
        wall_time_s: Seconds from start (model building included) to the saved final model.
        train_time_s: Seconds of GRPO training alone.
        config: The resolved :class:`TrainConfig`.
    """

    output_dir: Path
    model_dir: Path
    metrics_csv: Path
    plot_png: Path | None
    history: list[dict[str, float]]
    wall_time_s: float
    train_time_s: float
    config: TrainConfig

    def rewards(self) -> list[float]:
        """The mean reward of each step."""
        return [row["reward"] for row in self.history if "reward" in row]

    def summary(self, window: int = 10) -> dict[str, float]:
        """Mean reward of the first and last ``window`` steps, their ratio and difference."""
        rewards = self.rewards()
        if not rewards:
            raise ValueError("no step was logged")
        first = sum(rewards[:window]) / len(rewards[:window])
        last = sum(rewards[-window:]) / len(rewards[-window:])
        ratio = last / first if first > 0 else math.inf if last > 0 else math.nan
        return {
            "steps": float(len(rewards)),
            "first_mean": first,
            "last_mean": last,
            "ratio": ratio,
            "gain": last - first,
            "wall_time_s": self.wall_time_s,
        }


# ---------------------------------------------------------------------------- helpers


def _require(module: str, feature: str, install: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"{feature} needs the '{module}' package, which is not installed: pip install {install}"
        )


def _check_model_name(name: str) -> None:
    if not Path(name).exists() and not _HUB_ID.match(name):
        raise FileNotFoundError(
            f"--model {name!r} is neither an existing model directory nor a Hugging Face Hub id "
            "(like 'Qwen/Qwen3-0.6B'). Check the path, or leave --model out to use the built-in "
            "tiny model."
        )


def _load_tokenizer(name: str) -> Any:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(name)
    if getattr(tokenizer, "chat_template", None) is None:
        raise ValueError(
            f"the tokenizer of {name!r} has no chat template: use an instruct/chat model "
            "(trl-env renders every episode with the model's own chat template)"
        )
    if getattr(tokenizer, "response_template", None) is None:
        from trl.chat_template_utils import add_response_schema

        # ValueError: a template TRL does not know; ChatTemplateProcessor parses with a fallback.
        with contextlib.suppress(ValueError):
            add_response_schema(tokenizer)
    return tokenizer


@contextlib.contextmanager
def _quiet_third_party() -> Iterator[None]:
    """Hide warnings a user of ``train`` cannot act on (scoped to the run)."""
    with warnings.catch_warnings():
        # We pass rollout_func on purpose; TRL flags it as experimental on every trainer.
        warnings.filterwarnings("ignore", message="You are using 'rollout_func'")
        # transformers 5.x renamed gradient_checkpointing*; TRL's GRPOConfig still uses the old
        # names and triggers this FutureWarning itself.
        warnings.filterwarnings(
            "ignore",
            message=r"`(is_)?gradient_checkpointing\w*` is deprecated",
            category=FutureWarning,
        )
        yield


def _prepare_model(config: TrainConfig, say: Any) -> tuple[str, Any]:
    """Return ``(name_or_path, tokenizer)`` of the model GRPO starts from."""
    output = Path(config.output_dir or ".")
    if config.model is None:
        from trl_env.trl.tiny import build_tiny_model

        name = build_tiny_model(output / "base-model", seed=config.seed)
        say(f"built the tiny local model (2-layer Qwen3, qwen3 chat template) in {name}")
    else:
        _check_model_name(config.model)
        name = config.model
    if config.warm_start_steps:
        import torch

        from trl_env.trl.tiny import load_model_and_tokenizer
        from trl_env.trl.warm_start import warm_start

        model, tokenizer = load_model_and_tokenizer(name)
        if torch.cuda.is_available():
            model.to("cuda")
        bar = _progress_bar(config.warm_start_steps, "warm start", config.progress)
        stats = warm_start(
            model,
            tokenizer,
            config.env_ids,
            steps=config.warm_start_steps,
            # The tiny model is trained from scratch; a pretrained one only needs nudging.
            learning_rate=3e-3 if config.model is None else 1e-5,
            seed=config.seed,
            system_prompt=config.system_prompt,
            env_kwargs=config.env_kwargs,
            callback=lambda step, loss: (bar.update(1), bar.set_postfix(loss=f"{loss:.3f}")),
        )
        bar.close()
        name = str(output / "warm-start")
        model.save_pretrained(name)
        tokenizer.save_pretrained(name)
        say(
            f"warm start: {stats.steps} steps of format-only SFT (random well-formed replies), "
            f"loss {stats.first_loss:.3f} -> {stats.last_loss:.3f} in {stats.seconds:.0f} s; "
            f"saved to {name}"
        )
        del model
    return name, _load_tokenizer(name)


def _progress_bar(total: int, desc: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    # Only on a terminal: in a log file a redrawn bar is thousands of lines (the per-step lines
    # of the metrics callback report progress there).
    return tqdm(
        total=total,
        desc=desc,
        unit="step",
        disable=not enabled or not sys.stderr.isatty(),
        dynamic_ncols=True,
    )


class _CsvLog:
    """metrics.csv, one row per step: appended to, and rewritten only when new columns appear."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self.columns: list[str] = []

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if set(row) <= set(self.columns):
            with self.path.open("a", newline="", encoding="utf-8") as handle:
                csv.DictWriter(handle, fieldnames=self.columns).writerow(_formatted(row))
            return
        keys = set(self.columns) | set(row)
        self.columns = [c for c in _CSV_FIRST if c in keys] + sorted(keys - set(_CSV_FIRST))
        tmp = self.path.with_suffix(".csv.tmp")
        with tmp.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.columns)
            writer.writeheader()
            writer.writerows(_formatted(r) for r in self.rows)
        tmp.replace(self.path)


def _formatted(row: dict[str, Any]) -> dict[str, str]:
    return {k: f"{v:.6g}" if isinstance(v, float) else str(v) for k, v in row.items()}


def _moving_average(values: Sequence[float], window: int) -> list[float]:
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def plot_learning_curve(
    rows: Sequence[dict[str, Any]], path: str | os.PathLike[str], title: str = ""
) -> Path:
    """Plot reward (and success rate) per step to a PNG.

    Args:
        rows: Per-step metrics with ``step``, ``reward`` and optionally ``env/success_rate``.
        path: Where to write the PNG.
        title: The figure's title.

    Raises:
        ImportError: If matplotlib is not installed (``pip install matplotlib``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "plotting the learning curve needs matplotlib: pip install matplotlib "
            '(or pip install "trl-env[trl]")'
        ) from None
    steps = [row["step"] for row in rows if "reward" in row]
    rewards = [row["reward"] for row in rows if "reward" in row]
    success = [row.get("env/success_rate") for row in rows if "reward" in row]
    window = max(1, min(10, len(rewards) // 5 or 1))
    has_success = bool(success) and all(s is not None for s in success)
    figure = Figure(figsize=(8, 6 if has_success else 4), dpi=100)
    FigureCanvasAgg(figure)
    panels = figure.subplots(2 if has_success else 1, 1, sharex=True, squeeze=False)[:, 0]
    top = panels[0]
    top.plot(steps, rewards, color="tab:blue", alpha=0.3, linewidth=1, label="per step")
    top.plot(
        steps,
        _moving_average(rewards, window),
        color="tab:blue",
        linewidth=2,
        label=f"{window}-step mean",
    )
    top.set_ylabel("mean episode return")
    if title:
        top.set_title(title)
    if has_success:
        bottom = panels[1]
        rates = [float(s) for s in success]  # type: ignore[arg-type]
        bottom.plot(steps, rates, color="tab:green", alpha=0.3, linewidth=1, label="per step")
        bottom.plot(
            steps,
            _moving_average(rates, window),
            color="tab:green",
            linewidth=2,
            label=f"{window}-step mean",
        )
        bottom.set_ylabel("success rate")
        bottom.set_ylim(-0.02, 1.02)
    for axes in panels:
        axes.grid(alpha=0.3)
        axes.legend(loc="lower right")
    panels[-1].set_xlabel("GRPO step")
    figure.tight_layout()
    target = Path(path)
    figure.savefig(target)
    return target


def _metrics_callback(csv_path: Path, progress: bool, started: float) -> Any:
    from tqdm.auto import tqdm
    from transformers import TrainerCallback

    class MetricsCallback(TrainerCallback):
        """Progress bar, one line of metrics per step, and metrics.csv rewritten every step."""

        def __init__(self) -> None:
            self.log = _CsvLog(csv_path)
            self.rows = self.log.rows
            self.bar: Any = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if state.is_world_process_zero:
                self.bar = _progress_bar(state.max_steps, "GRPO", progress)

        def on_log(
            self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any
        ) -> None:
            if not state.is_world_process_zero or not logs or "reward" not in logs:
                return
            row: dict[str, Any] = {"step": state.global_step}
            row.update(
                (key, float(value))
                for key, value in logs.items()
                if isinstance(value, int | float) and not isinstance(value, bool)
            )
            row["wall_time_s"] = time.perf_counter() - started
            self.log.add(row)
            if self.bar is not None:
                self.bar.update(state.global_step - self.bar.n)
                success = row.get("env/success_rate")
                postfix = {"reward": f"{row['reward']:.3f}"}
                if success is not None:
                    postfix["success"] = f"{success:.2f}"
                self.bar.set_postfix(postfix)
                if progress:
                    tqdm.write(_step_line(row, state.max_steps))

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self.bar is not None:
                self.bar.close()

    return MetricsCallback()


def _step_line(row: dict[str, Any], max_steps: int) -> str:
    parts = [f"step {int(row['step']):>{len(str(max_steps))}}/{max_steps}"]
    for key, label, fmt in (
        ("reward", "reward", "{:+.3f}"),
        ("env/success_rate", "success", "{:.2f}"),
        ("env/invalid_action_rate", "invalid", "{:.2f}"),
        ("env/mean_turns", "turns", "{:.1f}"),
        ("loss", "loss", "{:+.4f}"),
        ("entropy", "entropy", "{:.3f}"),
        ("step_time", "s/step", "{:.2f}"),
    ):
        if key in row:
            parts.append(f"{label} {fmt.format(row[key])}")
    return " | ".join(parts)


# ---------------------------------------------------------------------------- train


def train(
    env_ids: str | Sequence[str],
    *,
    model: str | None = None,
    config: TrainConfig | None = None,
    log: Any = None,
    **overrides: Any,
) -> TrainResult:
    """Train a model with GRPO on registered text envs.

    Args:
        env_ids: One registered ID or several (the dataset mixes them evenly).
        model: Hub id or local directory; ``None`` builds the tiny local model (and, by default,
            warm-starts it on format-only replies, see :mod:`trl_env.trl.warm_start`).
        config: A :class:`TrainConfig` (``env_ids`` and ``model`` override its fields).
        log: Where to print progress lines (a callable taking a string); default ``print`` to
            stderr when ``progress`` is on.
        **overrides: :class:`TrainConfig` fields, e.g. ``max_steps=2, output_dir="runs/x"``.

    Returns:
        A :class:`TrainResult`.

    Raises:
        ValueError: For bad settings (the message says what to set instead).
        gymnasium.error.NameNotFound: For an unknown env ID (with a "Did you mean" hint).
        FileNotFoundError: For a ``model`` that is neither a directory nor a Hub id.
        ImportError: For ``lora`` without peft or ``use_vllm`` without vLLM (names the install).
    """
    import gymnasium as gym

    started = time.perf_counter()
    ids = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    base = asdict(config) if config is not None else {}
    base.update(overrides)
    base["env_ids"] = ids
    if model is not None:
        base["model"] = model
    cfg = TrainConfig(**base).resolved()
    # Every check that can fail runs before anything slow (building, loading, training).
    for env_id in dict.fromkeys(cfg.env_ids):
        gym.spec(env_id)  # NameNotFound with gymnasium's "Did you mean" hint
        try:
            gym.make(env_id, **cfg.env_kwargs).close()
        except TypeError as error:
            raise ValueError(f"env_kwargs {cfg.env_kwargs} do not suit {env_id}: {error}") from None
        if cfg.warm_start_steps:
            from trl_env.trl.warm_start import format_example_for

            format_example_for(env_id)
    if cfg.lora:
        _require("peft", "--lora", "peft")
    if cfg.use_vllm:
        _require("vllm", "--use-vllm", "vllm")
    if cfg.model is not None:
        _check_model_name(cfg.model)
    if cfg.plot:
        _require("matplotlib", "the learning-curve plot", "matplotlib")

    def say(message: str) -> None:
        if log is not None:
            log(message)
        elif cfg.progress:
            print(message, file=sys.stderr, flush=True)

    import torch
    from transformers.trainer_callback import PrinterCallback, ProgressCallback
    from trl import GRPOConfig, GRPOTrainer

    import trl_env

    output = Path(cfg.output_dir or ".")
    output.mkdir(parents=True, exist_ok=True)
    (output / "train_config.json").write_text(
        json.dumps(asdict(cfg), indent=2, default=str) + "\n", encoding="utf-8"
    )
    say(
        f"training {cfg.model or 'the tiny local model'} on {', '.join(cfg.env_ids)} for "
        f"{cfg.max_steps} steps (lr {cfg.learning_rate:g}, {cfg.num_generations} generations, "
        f"batch {cfg.per_device_train_batch_size}); output in {output}"
    )
    with _quiet_third_party():
        name, tokenizer = _prepare_model(cfg, say)
        on_gpu = torch.cuda.is_available()
        grpo_args = GRPOConfig(
            output_dir=str(output),
            use_cpu=not on_gpu,
            bf16=cfg.bf16,
            learning_rate=cfg.learning_rate,
            lr_scheduler_type=cfg.lr_scheduler_type,
            per_device_train_batch_size=cfg.per_device_train_batch_size,
            gradient_accumulation_steps=cfg.gradient_accumulation_steps,
            num_generations=cfg.num_generations,
            max_completion_length=cfg.max_completion_length,
            max_steps=cfg.max_steps,
            beta=cfg.beta,
            temperature=cfg.temperature,
            seed=cfg.seed,
            data_seed=cfg.seed,
            use_vllm=cfg.use_vllm,
            vllm_mode=cfg.vllm_mode,
            vllm_gpu_memory_utilization=cfg.vllm_gpu_memory_utilization,
            logging_steps=1,
            save_strategy="steps" if cfg.save_steps else "no",
            save_steps=cfg.save_steps or 500,
            report_to="none",
            disable_tqdm=True,
        )
        peft_config = None
        if cfg.lora:
            from peft import LoraConfig

            peft_config = LoraConfig(
                r=cfg.lora_r,
                lora_alpha=cfg.lora_alpha,
                target_modules="all-linear",
                task_type="CAUSAL_LM",
            )
        rollout = trl_env.make_rollout_func(
            max_new_tokens_per_turn=cfg.max_new_tokens_per_turn,
            max_turns=cfg.max_turns,
            system_prompt=cfg.system_prompt,
        )
        dataset = trl_env.make_dataset(cfg.env_ids, cfg.num_tasks, seed=cfg.seed, **cfg.env_kwargs)
        metrics = _metrics_callback(output / "metrics.csv", cfg.progress, started)
        trainer = GRPOTrainer(
            model=name,
            reward_funcs=trl_env.env_reward,
            args=grpo_args,
            train_dataset=dataset,
            processing_class=tokenizer,
            rollout_func=rollout,
            peft_config=peft_config,
            callbacks=[metrics],
        )
        # Our callback prints one compact line per step instead of transformers' dicts and bar.
        trainer.remove_callback(PrinterCallback)
        trainer.remove_callback(ProgressCallback)
        train_started = time.perf_counter()
        trainer.train()
        train_time = time.perf_counter() - train_started
        final = output / "final"
        trainer.save_model(str(final))
        tokenizer.save_pretrained(str(final))
    wall_time = time.perf_counter() - started
    csv_path = output / "metrics.csv"
    if not metrics.rows:
        raise RuntimeError("training logged no step (max_steps reached before the first log?)")
    plot_png = None
    if cfg.plot:
        plot_png = plot_learning_curve(
            metrics.rows,
            output / "learning_curve.png",
            title=f"GRPO on {', '.join(cfg.env_ids)} ({cfg.model or 'tiny local model'})",
        )
    result = TrainResult(
        output_dir=output,
        model_dir=final,
        metrics_csv=csv_path,
        plot_png=plot_png,
        history=metrics.rows,
        wall_time_s=wall_time,
        train_time_s=train_time,
        config=cfg,
    )
    summary = result.summary()
    say(
        f"done in {wall_time:.0f} s: mean reward {summary['first_mean']:.3f} (first 10 steps) -> "
        f"{summary['last_mean']:.3f} (last 10); final model in {final}; metrics in {csv_path}"
        + (f"; plot in {plot_png}" if plot_png else "")
    )
    return result


# ---------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``trl-env train`` to ``parser``."""
    parser.add_argument("env_ids", nargs="+", metavar="ENV_ID", help="registered env ID(s)")
    parser.add_argument(
        "--model",
        default=None,
        help="Hugging Face Hub id or local model directory (default: build the tiny local model, "
        "which runs offline on a CPU)",
    )
    parser.add_argument(
        "--output-dir", default=None, help="output folder (default trl-env-runs/<env>-<date-time>)"
    )
    parser.add_argument(
        "--max-steps", type=int, default=None, help="optimizer steps (400 tiny model, 500)"
    )
    parser.add_argument("--num-tasks", type=int, default=4096, help="tasks in the dataset (4096)")
    parser.add_argument(
        "--learning-rate",
        "--lr",
        type=float,
        default=None,
        help="learning rate (1e-3 tiny model, 1e-5 with --lora, 1e-6 otherwise)",
    )
    parser.add_argument(
        "--lr-scheduler", default="constant", help="learning-rate schedule (constant)"
    )
    parser.add_argument(
        "--num-generations", type=int, default=8, help="episodes per task, the GRPO group (8)"
    )
    parser.add_argument(
        "--per-device-train-batch-size",
        "--batch-size",
        type=int,
        default=None,
        help="episodes per device per step (64 tiny model, 8 otherwise)",
    )
    parser.add_argument(
        "--gradient-accumulation-steps", type=int, default=1, help="batches per step (1)"
    )
    parser.add_argument(
        "--max-completion-length",
        type=int,
        default=None,
        help="tokens of a whole episode (16 tiny model, 1024 otherwise)",
    )
    parser.add_argument(
        "--max-new-tokens-per-turn",
        type=int,
        default=None,
        help="tokens of one model turn (8 tiny model, 256 otherwise)",
    )
    parser.add_argument("--max-turns", type=int, default=None, help="model turns per episode")
    parser.add_argument("--beta", type=float, default=0.0, help="KL coefficient (0)")
    parser.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (1)")
    parser.add_argument("--seed", type=int, default=0, help="seed (0)")
    parser.add_argument("--use-vllm", action="store_true", help="generate with vLLM")
    parser.add_argument(
        "--vllm-mode", choices=_VLLM_MODES, default="colocate", help="vLLM mode (colocate)"
    )
    parser.add_argument(
        "--vllm-gpu-memory-utilization",
        type=float,
        default=0.3,
        help="GPU memory share of vLLM in colocate mode (0.3)",
    )
    parser.add_argument("--lora", action="store_true", help="train LoRA adapters (needs peft)")
    parser.add_argument("--lora-r", type=int, default=16, help="LoRA rank (16)")
    parser.add_argument("--lora-alpha", type=int, default=32, help="LoRA alpha (32)")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 mixed precision")
    parser.add_argument(
        "--warm-start-steps",
        type=int,
        default=None,
        help="format-only SFT steps before RL (600 for the tiny model, 0 otherwise)",
    )
    parser.add_argument(
        "--system-prompt",
        default=_AUTO,
        help="system message of every episode ('' for none; default: none for the tiny model, "
        "trl-env's generic game prompt otherwise)",
    )
    parser.add_argument(
        "--save-steps", type=int, default=0, help="checkpoint every N steps (0: final only)"
    )
    parser.add_argument(
        "--env-kwargs",
        default=None,
        metavar="JSON",
        help="gym.make kwargs for every env, as JSON, e.g. '{\"num_options\": 6}'",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar or per-step lines"
    )
    parser.add_argument("--no-plot", action="store_true", help="do not write the PNG plot")


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` of parsed ``trl-env train`` arguments.

    Raises:
        ValueError: For bad values (including malformed ``--env-kwargs`` JSON).
    """
    env_kwargs: dict[str, Any] = {}
    if args.env_kwargs:
        try:
            env_kwargs = json.loads(args.env_kwargs)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"--env-kwargs is not valid JSON ({error}): {args.env_kwargs!r}"
            ) from None
        if not isinstance(env_kwargs, dict):
            raise ValueError(f"--env-kwargs must be a JSON object, got {args.env_kwargs!r}")
    return TrainConfig(
        env_ids=list(args.env_ids),
        model=args.model,
        output_dir=args.output_dir,
        num_tasks=args.num_tasks,
        max_steps=args.max_steps,
        learning_rate=args.learning_rate,
        lr_scheduler_type=args.lr_scheduler,
        num_generations=args.num_generations,
        per_device_train_batch_size=args.per_device_train_batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        max_completion_length=args.max_completion_length,
        max_new_tokens_per_turn=args.max_new_tokens_per_turn,
        max_turns=args.max_turns,
        beta=args.beta,
        temperature=args.temperature,
        seed=args.seed,
        use_vllm=args.use_vllm,
        vllm_mode=args.vllm_mode,
        vllm_gpu_memory_utilization=args.vllm_gpu_memory_utilization,
        lora=args.lora,
        lora_r=args.lora_r,
        lora_alpha=args.lora_alpha,
        bf16=args.bf16,
        warm_start_steps=args.warm_start_steps,
        system_prompt=args.system_prompt or None,
        save_steps=args.save_steps,
        env_kwargs=env_kwargs,
        progress=not args.no_progress,
        plot=not args.no_plot,
    )


def run(args: argparse.Namespace) -> int:
    """Run ``trl-env train`` with parsed arguments; return the exit status.

    0 on success; 2 for a bad setting (unknown env, bad value, missing model or package, a model
    that cannot be loaded), with one ``trl-env train: error: ...`` line on stderr; 130 if
    interrupted.
    """
    import gymnasium as gym

    try:
        config = config_from_args(args)
        result = train(config.env_ids, config=config)
    except (ValueError, OSError, ImportError, gym.error.Error) as error:
        # OSError: also what from_pretrained raises for a Hub id it cannot find or download.
        print(f"trl-env train: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("trl-env train: interrupted (metrics.csv holds the steps done)", file=sys.stderr)
        return 130
    summary = result.summary()
    print(
        json.dumps(
            {
                "output_dir": str(result.output_dir),
                "model_dir": str(result.model_dir),
                "metrics_csv": str(result.metrics_csv),
                "plot_png": str(result.plot_png) if result.plot_png else None,
                "steps": int(summary["steps"]),
                "first10_mean_reward": round(summary["first_mean"], 4),
                "last10_mean_reward": round(summary["last_mean"], 4),
                "gain": round(summary["gain"], 4),
                "wall_time_s": round(summary["wall_time_s"], 1),
            },
            indent=2,
        )
    )
    return 0
