"""The run: :func:`train` checks everything, prepares the model, trains with TRL's
``GRPOTrainer`` and saves what it made. Nothing here loads models itself (see
:mod:`trl_env.trl.models`) or formats output (see :mod:`trl_env.trl.training._callbacks`)."""

from __future__ import annotations

import contextlib
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
from trl_env.trl.training._checks import check_before_work, clear_run
from trl_env.trl.training._config import TrainConfig
from trl_env.trl.training._final_model import final_model_step
from trl_env.trl.training._resume import check_resumable

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
    seed = config.eval_seed  # the in-training evals' seeds, unless they chose final/
    if config.final_model == "best":
        seed += config.eval_episodes
    words += ["--seed", str(seed), "--out", str(out / "eval")]
    if config.fast_paths != "auto":  # the run's held-out evals generated with its own setting
        words += ["--fast-paths", config.fast_paths]
    return shlex.join(words)


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
        **overrides: :class:`TrainConfig` fields, e.g. ``max_steps=2, output_dir="runs/x"``;
            ``recipe="NAME"`` (without ``config``) starts from a recorded recipe's settings,
            which the other keywords override.

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
    cfg = _config(env_ids, model, config, overrides)
    checkpoint = check_before_work(cfg)
    # Before the run folder's settings are rewritten: the run's own, to compare against.
    changed = check_resumable(cfg) if checkpoint else []

    def say(message: str) -> None:
        if log is not None:
            log(message)
        elif cfg.progress:
            print(message, file=sys.stderr, flush=True)

    _open_run_folder(cfg)
    say(_run_line(cfg, checkpoint, changed))
    _warn_if_bf16_is_emulated(cfg)
    from trl_env.trl.training._trainer import run_trainer

    with _quiet_third_party():
        rows, train_time, stopped_by = run_trainer(cfg, checkpoint, started, say)
    return _finish(cfg, rows, started, train_time, say, stopped_by)


def _config(
    env_ids: str | Sequence[str],
    model: str | None,
    config: TrainConfig | None,
    overrides: dict[str, Any],
) -> TrainConfig:
    """The run's resolved settings: ``config`` (or a recipe) under the keyword settings."""
    if config is not None and overrides.get("recipe"):
        raise ValueError(
            "recipe= with config=: a TrainConfig is taken as complete; start it from the recipe "
            "instead: TrainConfig(**{**load_recipe(NAME), 'recipe': NAME, ...})"
        )
    base = asdict(config) if config is not None else {}
    base.update(overrides)
    if config is None and base.get("recipe"):
        # A recipe under the keyword settings, as under the flags of `trl-env train --recipe`. (A
        # TrainConfig is taken as complete: `trl-env train` applied its recipe already.)
        from trl_env.trl.training._recipes import load_recipe

        base = {**load_recipe(base["recipe"]), **base}
    base["env_ids"] = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    if model is not None:
        base["model"] = model
    return TrainConfig(**base).resolved()


def _open_run_folder(cfg: TrainConfig) -> None:
    """Create (or clear, with ``overwrite``) the run folder and write the run's settings."""
    output = Path(cfg.output_dir or ".")
    if cfg.overwrite and output.is_dir():
        clear_run(output)
    output.mkdir(parents=True, exist_ok=True)
    (output / "train_config.json").write_text(
        json.dumps(asdict(cfg), indent=2, default=str) + "\n", encoding="utf-8"
    )
    # The same settings as `trl-env train --config` reads them: `--config DIR/config.yaml` repeats
    # the run (overwrite and resume act on this run's folder only, so they are left out).
    (output / "config.yaml").write_text(
        config_to_yaml(cfg, leave_out=("overwrite", "resume")), encoding="utf-8"
    )


def _run_line(cfg: TrainConfig, checkpoint: str | None, changed: Sequence[str] = ()) -> str:
    """The run's first line: what it trains, how, what the machine decided and, on resume, which
    settings differ from the run's own."""
    import torch

    from trl_env._machine import cpu_summary

    budget = f"{cfg.max_steps} steps"
    if cfg.minutes:
        budget = f"{cfg.minutes:g} minutes (at most {budget})"
    return (
        f"training {cfg.model or 'the tiny local model'} on {', '.join(cfg.env_ids)} for "
        f"{budget} (lr {cfg.learning_rate:g}, {cfg.num_generations} generations, "
        f"batch {cfg.per_device_train_batch_size}"
        + (f" in passes of {cfg.micro_batch_size}" if _in_passes(cfg) else "")
        + f", episode budget {cfg.max_completion_length} "
        f"tokens, credit {cfg.credit}"
        + (f" (gamma {cfg.gamma:g})" if cfg.credit != "episode" else "")
        + (f", partial credit {cfg.partial_credit:g}" if cfg.partial_credit is not None else "")
        + (f", warm start {cfg.warm_start}" if cfg.warm_start != "none" else "")
        + (f", recipe {cfg.recipe}" if cfg.recipe else "")
        + f", bf16 {'on' if cfg.bf16 else 'off'}, fast paths {_fast_paths_summary(cfg)}; "
        + (f"GPU {gpu}; " if (gpu := _gpu_name()) else "")
        + f"{cpu_summary(torch.get_num_threads())}: "
        f"--threads N to change); output in {Path(cfg.output_dir or '.')}"
        + (f"; resuming from {checkpoint}" if checkpoint else "")
        + (f" with settings changed from the run's: {'; '.join(changed)}" if changed else "")
    )


def _gpu_name() -> str | None:
    """The CUDA GPU the run trains on (its first device), or None without one: the run line and
    ``run.json`` name it beside the CPU."""
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def _gpu_entry() -> dict[str, str]:
    """``{"gpu": name}`` on a CUDA GPU, else nothing (``run.json``'s ``machine``)."""
    gpu = _gpu_name()
    return {"gpu": gpu} if gpu else {}


def _in_passes(cfg: TrainConfig) -> bool:
    """Whether the run trains a step's batch in several passes."""
    from trl_env.trl.training._passes import training_passes

    return training_passes(cfg.per_device_train_batch_size, cfg.micro_batch_size) > 1


def _fast_paths_summary(cfg: TrainConfig) -> str:
    """The fast paths this machine gives the run (``auto``: on a CPU), as the run line says it."""
    import torch

    from trl_env.trl.fast import FastPaths

    device = "cuda" if torch.cuda.is_available() else "cpu"
    resolved = str(FastPaths.resolve(cfg.fast_paths, device))
    return resolved if cfg.fast_paths == resolved else f"{resolved} ({cfg.fast_paths})"


def _warn_if_bf16_is_emulated(cfg: TrainConfig) -> None:
    """``--bf16`` asked for on a CPU that emulates it: say what it costs (the run goes on)."""
    import torch

    from trl_env._machine import bf16_emulated_cost, cpu_has_bf16_units

    if cfg.bf16 and not torch.cuda.is_available() and not cpu_has_bf16_units():
        warnings.warn(
            f"--bf16 on this CPU: {bf16_emulated_cost()}. Leave --bf16 out (the default decides "
            "from the CPU) or pass --no-bf16",
            UserWarning,
            stacklevel=3,
        )


def _write_run_record(
    cfg: TrainConfig, result: TrainResult, rows: list[dict[str, Any]], stopped_by: str
) -> dict[str, Any]:
    """``<output_dir>/run.json``: what the run did and on which machine (for results files)."""
    import torch

    from trl_env._machine import machine_record, peak_rss_gb

    record = {
        "env_ids": list(cfg.env_ids),
        "model": cfg.model,
        "recipe": cfg.recipe,
        "steps": int(rows[-1].get("step", len(rows))) if rows else 0,
        "stopped_by": stopped_by,
        # final/'s model: "last", or the step whose held-out eval chose it ("best").
        "final_model": cfg.final_model,
        "final_model_step": final_model_step(Path(cfg.output_dir or "."), cfg.final_model),
        "wall_time_s": round(result.wall_time_s, 1),
        "train_time_s": round(result.train_time_s, 1),
        "peak_rss_gb": round(peak_rss_gb(), 2),
        "bf16": cfg.bf16,
        "fast_paths": _fast_paths_summary(cfg),
        # "gpu" only on a GPU: a CPU run's record stays comparable with the recorded ones.
        "machine": {**machine_record(torch.get_num_threads()), **_gpu_entry()},
        "command": shlex.join(sys.argv) if sys.argv and sys.argv[0] else None,
    }
    path = Path(cfg.output_dir or ".") / "run.json"
    path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return record


def _finish(
    cfg: TrainConfig,
    rows: list[dict[str, Any]],
    started: float,
    train_time: float,
    say: Callable[[str], None],
    stopped_by: str = "max_steps",
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
    record = _write_run_record(cfg, result, rows, stopped_by)
    from trl_env.trl.training._model_card import write_model_card

    write_model_card(cfg, record, rows)  # replaces TRL's, which names no local base model
    say(
        f"done in {result.wall_time_s:.0f} s: mean reward {summary['first_mean']:.3f} (first 10 "
        f"steps) -> {summary['last_mean']:.3f} (last 10); final model in {result.model_dir}; "
        f"metrics in {result.metrics_csv}" + (f"; plot in {plot_png}" if plot_png else "")
    )
    say(f"evaluate it on held-out seeds with: {eval_command(cfg)}")
    say(
        f"{record['steps']} steps ({'time budget' if stopped_by == 'minutes' else 'step limit'}) "
        f"in {result.wall_time_s:.0f} s, peak memory {record['peak_rss_gb']:.1f} GB RSS, on "
        + (f"GPU {gpu}, " if (gpu := record["machine"].get("gpu")) else "")  # type: ignore[attr-defined]
        + f"{record['machine']['summary']}"  # type: ignore[index]
    )
    return result
