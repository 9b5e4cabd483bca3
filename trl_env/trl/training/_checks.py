"""Everything a run checks before it does anything slow: the envs, the warm start, the model,
the extras it needs, the trackers, the held-out seeds and the output folder (refused if it holds
files, unless ``overwrite`` or ``resume``)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path

from trl_env.error import UsageError
from trl_env.trl.training._config import TrainConfig

__all__ = ["RUN_OUTPUTS", "check_before_work", "clear_run"]


def _require(module: str, feature: str, install: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ImportError(
            f"{feature} needs the '{module}' package, which is not installed: pip install {install}"
        )


RUN_OUTPUTS = (
    "final",
    "best",  # left behind, its best.json would compete with the new run's evals
    "last",
    "interrupted",
    "warm_start",
    "warm_start_format",
    "warm-start",  # the tiny model's warm start in runs made before 0.2's warm_start/
    "run.json",
    "base-model",
    "metrics.csv",
    "learning_curve.png",
    "rollouts",
    "runs",
)


def clear_run(output: Path) -> None:
    """Remove what an earlier run wrote to ``output`` (``--overwrite``)."""
    import shutil

    for child in output.iterdir():
        if child.name in RUN_OUTPUTS or child.name.startswith("checkpoint-"):
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


def check_before_work(cfg: TrainConfig) -> str | None:
    """Every check that can fail, before anything slow; the checkpoint to resume from."""
    from trl_env._checks import check_text_env

    for env_id in dict.fromkeys(cfg.env_ids):
        # Unknown ID (with gymnasium's "Did you mean" hint), bad kwargs, not a text env: before
        # the warm-start check, whose "no reply format" would hide that the env is not text.
        check_text_env(env_id, cfg.env_kwargs, argument="env_kwargs")
        if cfg.warm_start_steps:
            from trl_env.trl._warm_start import format_example_for

            format_example_for(env_id)
    if cfg.plays_seats:
        from trl_env._head_to_head import check_two_player_envs

        check_two_player_envs(cfg.env_ids)  # names the two-player envs if one is not
    _check_warm_start(cfg)
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


def _check_warm_start(cfg: TrainConfig) -> None:
    """``--warm-start``: the envs have the policy it names, or the demos folder exists."""
    import gymnasium as gym

    from trl_env._policies import has_oracle, has_random_action

    policy = cfg.warm_start
    if policy in (None, "none"):
        return
    if policy in ("random", "oracle"):
        has = has_random_action if policy == "random" else has_oracle
        for env_id in dict.fromkeys(cfg.env_ids):
            env = gym.make(env_id, **cfg.env_kwargs)
            try:
                if not has(env):
                    raise UsageError(
                        f"--warm-start {policy}: {env_id} has no {policy} policy to play demos "
                        "with; pass --warm-start none, or a folder of demos (trl-env demos)"
                    )
            finally:
                env.close()
        return
    from trl_env._demos import plays_demos

    if plays_demos(policy, cfg.env_ids):  # a scripted player of every env (Hangman: frequency)
        return
    if not (Path(policy) / "demos.jsonl").is_file():
        raise UsageError(
            f"--warm-start {policy!r} is neither random, oracle, a scripted player of every env "
            "(Hangman: frequency) nor none, nor a folder of demos written by "
            "`trl-env demos ENV --policy oracle --out DIR` (no demos.jsonl in it)"
        )
    from trl_env._demos import load_demos

    rows, settings = load_demos(policy)  # a folder trl-env demos did not write: a clear error
    if settings.get("system_prompt") != cfg.system_prompt:
        raise UsageError(
            f"--warm-start {policy}: its demos were played with the system prompt "
            f"{settings.get('system_prompt')!r}, but this run uses {cfg.system_prompt!r}; pass "
            "the same --system-prompt, or make the demos again"
        )
    if not any(row.get("env_id") in cfg.env_ids for row in rows):
        raise UsageError(f"--warm-start {policy}: the demos hold no episode of {cfg.env_ids}")


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
