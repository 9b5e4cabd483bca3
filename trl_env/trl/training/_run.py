"""The run: :func:`train` checks everything, prepares the model, trains with TRL's
``GRPOTrainer`` and saves what it made. Nothing here loads models itself (see
:mod:`trl_env.trl.models`) or formats output (see :mod:`trl_env.trl.training._callbacks`)."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import shlex
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from trl_env._configs import config_to_yaml
from trl_env.error import UsageError
from trl_env.trl.training._config import TrainConfig

__all__ = ["TrainResult", "eval_command", "train"]


@dataclass
class TrainResult:
    """What :func:`train` produced.

    Attributes:
        output_dir: The run's folder.
        model_dir: The final model (or, with ``lora``, adapter) and tokenizer
            (``<output_dir>/final``); load it with
            :func:`trl_env.trl.models.load_model_and_tokenizer`.
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


def eval_command(config: TrainConfig) -> str:
    """The ``trl-env eval`` command that evaluates a run (it reads the run's own settings)."""
    out = Path(config.output_dir or ".")
    words = ["trl-env", "eval", *config.env_ids, "--policy", str(out), "--episodes", "100"]
    words += ["--seed", str(config.eval_seed), "--out", str(out / "eval")]
    return shlex.join(words)


def _require(module: str, feature: str, install: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"{feature} needs the '{module}' package, which is not installed: pip install {install}"
        )


_RUN_OUTPUTS = (
    "final",
    "interrupted",
    "warm-start",
    "base-model",
    "metrics.csv",
    "learning_curve.png",
    "rollouts",
    "runs",
)


def _clear_run(output: Path) -> None:
    """Remove what an earlier run wrote to ``output`` (``--overwrite``)."""
    import shutil

    for child in output.iterdir():
        if child.name in _RUN_OUTPUTS or child.name.startswith("checkpoint-"):
            shutil.rmtree(child) if child.is_dir() else child.unlink()


def _check_output_dir(cfg: TrainConfig) -> str | None:
    """Refuse to overwrite a run; the checkpoint to resume from, if ``resume``."""
    output = Path(cfg.output_dir or ".")
    if output.exists() and not output.is_dir():
        raise ValueError(f"--output-dir {output} is a file: name a folder")
    used = output.is_dir() and any(output.iterdir())
    if cfg.resume:
        from transformers.trainer_utils import get_last_checkpoint

        last = get_last_checkpoint(str(output)) if output.is_dir() else None
        if last is None:
            raise ValueError(
                f"--resume: {output} holds no checkpoint-N folder to continue from; drop "
                "--resume to start a new run"
            )
        return str(last)
    if used and cfg.overwrite and not (output / "train_config.json").is_file():
        raise ValueError(
            f"--output-dir {output} holds files but no trl-env run (no train_config.json); "
            "--overwrite only replaces runs: name another folder"
        )
    if used and not cfg.overwrite:
        raise ValueError(
            f"--output-dir {output} already holds files (an earlier run?): pass --resume to "
            "continue it, --overwrite to replace it, or name another folder"
        )
    return None


def _check_warm_start_prompt(cfg: TrainConfig, path: Path) -> None:
    """A model warm-started by ``trl-env sft`` must be trained with the prompt it learned."""
    from trl_env.trl.models._paths import SFT_RUN_CONFIG

    settings = path / SFT_RUN_CONFIG
    if not settings.is_file():
        return
    learned = json.loads(settings.read_text(encoding="utf-8")).get("system_prompt")
    if learned != cfg.system_prompt:
        raise UsageError(
            f"--model {cfg.model} was warm-started (trl-env sft) with the system prompt "
            f"{learned!r}, but this run uses {cfg.system_prompt!r}: pass the same "
            "--system-prompt, so that GRPO sees episodes as the warm start did"
        )


def _check_before_work(cfg: TrainConfig) -> str | None:
    """Every check that can fail, before anything slow; the checkpoint to resume from."""
    from trl_env._checks import check_text_env

    for env_id in dict.fromkeys(cfg.env_ids):
        # Unknown ID (with gymnasium's "Did you mean" hint), bad kwargs, not a text env: before
        # the warm-start check, whose "no reply format" would hide that the env is not text.
        check_text_env(env_id, cfg.env_kwargs, argument="env_kwargs")
        if cfg.warm_start_steps:
            from trl_env.trl._warm_start import format_example_for

            format_example_for(env_id)
    if cfg.lora:
        _require("peft", "--lora", '"trl-env[lora]"')
    if cfg.use_vllm:
        _require("vllm", "--use-vllm", "vllm")
    if cfg.model is not None:
        from trl_env.trl.models._paths import is_hub_id

        path = Path(cfg.model).expanduser()
        if not path.exists() and not is_hub_id(cfg.model):
            raise FileNotFoundError(
                f"--model {cfg.model!r} is neither an existing model directory nor a Hugging Face "
                "Hub id (like 'Qwen/Qwen3-0.6B'), a .gguf file or a run folder. Check the path, or "
                "leave --model out to use the built-in tiny model."
            )
        if path.suffix.lower() == ".gguf":
            _require("gguf", f"loading {path.name}", '"trl-env[gguf]"')
        _check_warm_start_prompt(cfg, path)
    if cfg.plot:
        _require("matplotlib", "the learning-curve plot", "matplotlib")
    _check_trackers(cfg.trackers)
    if cfg.eval_every:
        from trl_env.trl._tasks import make_dataset
        from trl_env.trl.training._heldout import check_heldout_seeds

        dataset = make_dataset(cfg.env_ids, cfg.num_tasks, seed=cfg.seed, **cfg.env_kwargs)
        seeds = range(cfg.eval_seed, cfg.eval_seed + cfg.eval_episodes)
        check_heldout_seeds(dataset, cfg.env_ids, seeds)
    return _check_output_dir(cfg)


_TRACKER_PACKAGES = {
    "tensorboard": "tensorboard",
    "wandb": "wandb",
    "trackio": "trackio",
    "mlflow": "mlflow",
    "comet_ml": "comet_ml",
    "clearml": "clearml",
    "dvclive": "dvclive",
    "neptune": "neptune",
    "swanlab": "swanlab",
    "codecarbon": "codecarbon",
    "azure_ml": "azureml",
    "dagshub": "dagshub",
    "flyte": "flytekit",
}


def _check_trackers(names: Sequence[str]) -> None:
    """Every ``report_to`` name is a tracker transformers knows, and its package is installed."""
    from transformers.integrations import INTEGRATION_TO_CALLBACK

    for name in names:
        if name == "all":
            continue
        if name not in INTEGRATION_TO_CALLBACK:
            raise UsageError(
                f"--report-to {name!r} is not a tracker transformers knows; pick from "
                f"{', '.join(['none', 'all', *sorted(INTEGRATION_TO_CALLBACK)])}"
            )
        package = _TRACKER_PACKAGES.get(name, name)
        if name == "tensorboard":
            if importlib.util.find_spec("tensorboard") is None and (
                importlib.util.find_spec("tensorboardX") is None
            ):
                _require("tensorboard", "--report-to tensorboard", "tensorboard")
            continue
        _require(package, f"--report-to {name}", package)


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


def train(
    env_ids: str | Sequence[str],
    *,
    model: str | None = None,
    config: TrainConfig | None = None,
    log: Callable[[str], None] | None = None,
    **overrides: Any,
) -> TrainResult:
    """Train a model with GRPO on registered text envs.

    Args:
        env_ids: One registered ID or several (the dataset mixes them evenly).
        model: Hub id, model directory, ``.gguf`` file, LoRA adapter or run folder; ``None``
            builds the tiny local model (and, by default, warm-starts it on format-only replies,
            see :mod:`trl_env.trl._warm_start`).
        config: A :class:`TrainConfig` (``env_ids`` and ``model`` override its fields).
        log: Where to print progress lines (a callable taking a string); default ``print`` to
            stderr when ``progress`` is on.
        **overrides: :class:`TrainConfig` fields, e.g. ``max_steps=2, output_dir="runs/x"``.

    Returns:
        A :class:`TrainResult`.

    Raises:
        ValueError: For bad settings, or an ``output_dir`` that holds a run (without
            ``overwrite``/``resume``); the message says what to set instead.
        gymnasium.error.NameNotFound: For an unknown env ID (with a "Did you mean" hint).
        FileNotFoundError: For a ``model`` that names nothing loadable.
        ImportError: For ``lora`` without peft, ``use_vllm`` without vLLM, a ``.gguf`` model
            without gguf (names the install).
        KeyboardInterrupt: After saving the model trained so far to ``<output_dir>/interrupted``.

    Example:
        >>> result = train("TextLargestNumber-v0", max_steps=2)  # doctest: +SKIP
    """
    started = time.perf_counter()
    base = asdict(config) if config is not None else {}
    base.update(overrides)
    base["env_ids"] = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    if model is not None:
        base["model"] = model
    cfg = TrainConfig(**base).resolved()
    checkpoint = _check_before_work(cfg)

    def say(message: str) -> None:
        if log is not None:
            log(message)
        elif cfg.progress:
            print(message, file=sys.stderr, flush=True)

    output = Path(cfg.output_dir or ".")
    if cfg.overwrite and output.is_dir():
        _clear_run(output)
    output.mkdir(parents=True, exist_ok=True)
    (output / "train_config.json").write_text(
        json.dumps(asdict(cfg), indent=2, default=str) + "\n", encoding="utf-8"
    )
    # The same settings as `trl-env train --config` reads them: `--config DIR/config.yaml` repeats
    # the run (overwrite and resume act on this run's folder only, so they are left out).
    (output / "config.yaml").write_text(
        config_to_yaml(cfg, leave_out=("overwrite", "resume")), encoding="utf-8"
    )
    import torch

    say(
        f"training {cfg.model or 'the tiny local model'} on {', '.join(cfg.env_ids)} for "
        f"{cfg.max_steps} steps (lr {cfg.learning_rate:g}, {cfg.num_generations} generations, "
        f"batch {cfg.per_device_train_batch_size}, "
        + (f"credit per turn (gamma {cfg.gamma:g}), " if cfg.credit == "turn" else "")
        + f"{torch.get_num_threads()} torch threads: "
        f"--threads N to change); output in {output}"
        + (f"; resuming from {checkpoint}" if checkpoint else "")
    )
    from trl_env.trl.training._trainer import run_trainer

    with _quiet_third_party():
        rows, train_time = run_trainer(cfg, checkpoint, started, say)
    return _finish(cfg, rows, started, train_time, say)


def _finish(
    cfg: TrainConfig,
    rows: list[dict[str, Any]],
    started: float,
    train_time: float,
    say: Callable[[str], None],
) -> TrainResult:
    output = Path(cfg.output_dir or ".")
    if not rows:
        raise RuntimeError("training logged no step (max_steps reached before the first log?)")
    plot_png = None
    if cfg.plot:
        from trl_env.trl.training._plots import plot_learning_curve

        plot_png = plot_learning_curve(
            rows,
            output / "learning_curve.png",
            title=f"GRPO on {', '.join(cfg.env_ids)} ({cfg.model or 'tiny local model'})",
        )
    result = TrainResult(
        output_dir=output,
        model_dir=output / "final",
        metrics_csv=output / "metrics.csv",
        plot_png=plot_png,
        history=rows,
        wall_time_s=time.perf_counter() - started,
        train_time_s=train_time,
        config=cfg,
    )
    summary = result.summary()
    say(
        f"done in {result.wall_time_s:.0f} s: mean reward {summary['first_mean']:.3f} (first 10 "
        f"steps) -> {summary['last_mean']:.3f} (last 10); final model in {result.model_dir}; "
        f"metrics in {result.metrics_csv}" + (f"; plot in {plot_png}" if plot_png else "")
    )
    say(f"evaluate it on held-out seeds with: {eval_command(cfg)}")
    return result
