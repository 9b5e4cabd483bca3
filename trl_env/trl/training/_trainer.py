"""The GRPO part of a run: the starting model, TRL's ``GRPOTrainer`` and what it saves."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from trl_env.trl.models._paths import WARM_START_DIR
from trl_env.trl.training._config import TrainConfig

__all__ = ["run_trainer"]

Say = Callable[[str], None]
_T = TypeVar("_T")


def _resolved(value: _T | None, name: str) -> _T:
    """``value`` of the field ``name`` of a resolved :class:`TrainConfig` (never ``None`` there).

    Raises:
        ValueError: It is ``None``: the config was not resolved.
    """
    if value is None:
        raise ValueError(
            f"TrainConfig.{name} is None: the trainer needs a resolved config; pass "
            "cfg.resolved(), which fills in every default"
        )
    return value


def _starting_model(cfg: TrainConfig, resuming: bool, say: Say) -> str:
    """The model GRPO starts from, before any warm start (built, converted or as named)."""
    from trl_env.trl import models

    output = Path(cfg.output_dir or ".")
    if cfg.model is not None:
        name = models.resolve_model_path(cfg.model, log=say)
        # Absolute, so that a LoRA adapter saved by the run names a base that loads from anywhere.
        return str(Path(name).resolve()) if Path(name).exists() else name
    base = (output / "base-model").resolve()
    if resuming and (base / "config.json").is_file():
        return str(base)
    name = models.build_tiny_model(base, seed=cfg.seed)
    say(f"built the tiny local model (2-layer Qwen3, qwen3 chat template) in {name}")
    return name


FORMAT_WARM_START_DIR = "warm_start_format"
"""The tiny model's format warm start when a demo warm start follows it."""


def _demo_warm_start(cfg: TrainConfig, name: str, say: Say) -> str:
    """SFT on the ``warm_start`` demos (``trl-env sft``); the merged model GRPO starts from."""
    from trl_env._demos import plays_demos
    from trl_env.trl._self_play import uses_seats
    from trl_env.trl._sft import SFTRunConfig, run_sft
    from trl_env.trl.models import load_model_and_tokenizer

    run = Path(cfg.output_dir or ".", WARM_START_DIR).resolve()
    played = plays_demos(str(cfg.warm_start), cfg.env_ids)
    seats = uses_seats(cfg.self_play, cfg.opponent)
    episodes = f"{cfg.warm_start_episodes} {cfg.warm_start} demo " + (
        "games per env, both seats" if seats else "episodes per env"
    )
    say(
        f"warm start: SFT on {episodes}"
        if played
        else f"warm start: SFT on the demos in {cfg.warm_start}"
    )
    run_sft(
        SFTRunConfig(
            env_ids=list(cfg.env_ids),
            model=name,
            demos=str(cfg.warm_start),
            episodes=cfg.warm_start_episodes,
            output_dir=str(run),
            lora=cfg.lora,
            lora_r=cfg.lora_r,
            lora_alpha=cfg.lora_alpha,
            # LoRA: the rate of the recorded warm starts; all weights of a real model: a nudge.
            learning_rate=2e-4 if cfg.lora or cfg.model is None else 1e-5,
            epochs=cfg.warm_start_epochs,
            # 8 episodes a step in two passes of 4: the logits of 8 long demos over a 49k
            # vocabulary, with their softmax and gradient, took most of an 8.6 GB peak.
            batch_size=8,
            micro_batch_size=4,
            gradient_checkpointing=True,
            bf16=cfg.bf16,
            seed=cfg.seed,
            system_prompt=cfg.system_prompt,
            max_turns=cfg.max_turns,
            env_kwargs=dict(cfg.env_kwargs),
            # A seat-played run (self-play, an opponent) sees each seat's own conversation:
            # its demos play both seats the same way.
            seats=seats,
        ),
        say=say,
    )
    # GRPO's LoRA adapters go on top of the warm-started weights, so they are merged into a model
    # directory the final adapter names as its base (and `--resume` reloads).
    merged = run / "merged"
    model, tokenizer = load_model_and_tokenizer(str(run))
    model.save_pretrained(merged)
    tokenizer.save_pretrained(merged)
    return str(merged)


def _warm_start(cfg: TrainConfig, name: str, say: Say) -> str:
    import torch

    from trl_env.trl._warm_start import warm_start
    from trl_env.trl.models import load_model_and_tokenizer
    from trl_env.trl.training._callbacks import Progress

    model, tokenizer = load_model_and_tokenizer(name)
    if torch.cuda.is_available():
        model.to("cuda")
    progress = Progress(cfg.warm_start_steps or 0, "warm start", enabled=cfg.progress, write=say)
    stats = warm_start(
        model,
        tokenizer,
        cfg.env_ids,
        steps=cfg.warm_start_steps or 0,
        # The tiny model is trained from scratch; a pretrained one only needs nudging.
        learning_rate=3e-3 if cfg.model is None else 1e-5,
        seed=cfg.seed,
        system_prompt=cfg.system_prompt,
        env_kwargs=cfg.env_kwargs,
        callback=lambda step, loss: progress.update(loss=loss),
    )
    progress.close()
    # With a demo warm start after it, that one is the run's warm start; this one keeps its own.
    folder = WARM_START_DIR if cfg.warm_start in (None, "none") else FORMAT_WARM_START_DIR
    target = str((Path(cfg.output_dir or ".") / folder).resolve())
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    say(
        f"warm start: {stats.steps} steps of format-only SFT (random well-formed replies), "
        f"loss {stats.first_loss:.3f} -> {stats.last_loss:.3f} in {stats.seconds:.0f} s; "
        f"saved to {target}"
    )
    return target


def _prepare_model(cfg: TrainConfig, resuming: bool, say: Say) -> str:
    """The directory or Hub id GRPO starts from (warm-started if asked)."""
    warm = Path(cfg.output_dir or ".", WARM_START_DIR).resolve()
    demos = cfg.warm_start not in (None, "none")
    if resuming:
        # The checkpoint holds the weights; this only gives the architecture (and the base the
        # final adapter names).
        for done in (warm / "merged", warm, warm.with_name(FORMAT_WARM_START_DIR)):
            if (demos or cfg.warm_start_steps) and (done / "config.json").is_file():
                return str(done)
    name = _starting_model(cfg, resuming, say)
    if cfg.warm_start_steps:
        name = _warm_start(cfg, name, say)
    return _demo_warm_start(cfg, name, say) if demos else name


def _grpo_args(cfg: TrainConfig) -> Any:
    import torch
    from trl import GRPOConfig

    from trl_env.trl._checkpointing import lora_checkpointing_kwargs
    from trl_env.trl.training._passes import trl_batch_settings

    on_cpu = not torch.cuda.is_available()
    return GRPOConfig(
        output_dir=str(cfg.output_dir),
        use_cpu=on_cpu,
        bf16=_resolved(cfg.bf16, "bf16"),
        # Gradient checkpointing stays on (TRL's default) on a CPU too: without it, one 16-episode
        # step of SmolLM2-135M on TextGuessNumber-v0 (up to 512 completion tokens each) took
        # over 24 GB and was killed.
        gradient_checkpointing_kwargs=lora_checkpointing_kwargs(cfg.lora, on_cpu),
        learning_rate=_resolved(cfg.learning_rate, "learning_rate"),
        lr_scheduler_type=cfg.lr_scheduler_type,
        **trl_batch_settings(
            batch=_resolved(cfg.per_device_train_batch_size, "per_device_train_batch_size"),
            micro=_resolved(cfg.micro_batch_size, "micro_batch_size"),
            accumulation=cfg.gradient_accumulation_steps,
        ),
        num_generations=cfg.num_generations,
        max_completion_length=cfg.max_completion_length,
        max_steps=_resolved(cfg.max_steps, "max_steps"),
        beta=cfg.beta,
        epsilon_high=cfg.epsilon_high,  # None: GRPOTrainer uses epsilon
        temperature=cfg.temperature,
        seed=cfg.seed,
        data_seed=cfg.seed,
        use_vllm=cfg.use_vllm,
        vllm_mode=cfg.vllm_mode,
        vllm_gpu_memory_utilization=cfg.vllm_gpu_memory_utilization,
        logging_steps=1,
        save_strategy="steps" if cfg.save_steps else "no",
        save_steps=cfg.save_steps or 500,
        save_total_limit=cfg.save_total_limit,
        report_to=cfg.trackers or "none",
        disable_tqdm=True,
    )


def _peft_config(cfg: TrainConfig) -> Any:
    if not cfg.lora:
        return None
    from peft import LoraConfig

    return LoraConfig(
        r=cfg.lora_r, lora_alpha=cfg.lora_alpha, target_modules="all-linear", task_type="CAUSAL_LM"
    )


def _step_of(checkpoint: str | None) -> int | None:
    return int(Path(checkpoint).name.rsplit("-", 1)[1]) if checkpoint else None


def _grpo_trainer(cfg: TrainConfig, model: Any, tokenizer: Any, callbacks: list[Any]) -> Any:
    """trl-env's GRPO trainer for the run (with ``credit="episode"``, no saved rollouts and
    ``fast_paths="off"`` this is ``GRPOTrainer`` itself)."""
    from trl_env.trl._rewards import env_reward
    from trl_env.trl._rollout import make_rollout_func
    from trl_env.trl._tasks import make_dataset
    from trl_env.trl.training._recording import RecordingGRPOTrainer

    output = Path(cfg.output_dir or ".")
    return RecordingGRPOTrainer(
        model=model,
        reward_funcs=env_reward,
        args=_grpo_args(cfg),
        train_dataset=make_dataset(cfg.env_ids, cfg.num_tasks, seed=cfg.seed, **cfg.env_kwargs),
        processing_class=tokenizer,
        rollout_func=make_rollout_func(
            max_new_tokens_per_turn=cfg.max_new_tokens_per_turn,
            max_turns=cfg.max_turns,
            system_prompt=cfg.system_prompt,
            env_workers=cfg.env_workers,
            env_step_timeout=cfg.env_step_timeout,
            self_play=cfg.self_play,
            opponent=cfg.opponent,
            opponent_pool_size=cfg.opponent_pool_size,
            opponent_refresh_steps=cfg.opponent_refresh_steps,
        ),
        peft_config=_peft_config(cfg),
        callbacks=callbacks,
        credit=cfg.credit,
        gamma=cfg.gamma,
        fast_paths=cfg.fast_paths,
        save_rollouts_to=output if cfg.save_rollouts else None,
    )


def _watch(trainer: Any, cfg: TrainConfig, started: float, say: Say) -> tuple[Any, Any]:
    """Add the held-out evals and the time budget the run asks for; ``(evals, budget)``, each
    None when off. transformers' printer and bar give way to the run's one line per step."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    from trl_env.trl.training._best import BestHeldOutModel
    from trl_env.trl.training._callbacks import TimeBudget
    from trl_env.trl.training._heldout import HeldOutEvalCallback

    evals = None
    if cfg.eval_every:
        evals = HeldOutEvalCallback(
            trainer,
            cfg.env_ids,
            every=cfg.eval_every,
            episodes=cfg.eval_episodes,
            seed=cfg.eval_seed,
            samples=cfg.eval_samples,
            sample_temperature=cfg.eval_temperature,
            env_kwargs=cfg.env_kwargs,
            log=say,
        )
        trainer.add_callback(evals)
        chosen_on = {"eval_seed": cfg.eval_seed, "eval_episodes": cfg.eval_episodes,
                     "env_ids": list(cfg.env_ids)}  # fmt: skip
        trainer.add_callback(BestHeldOutModel(trainer, chosen_on))  # the last step's may be worse
    budget = None
    if cfg.minutes is not None:  # warm start and RL together: the clock started with the run
        budget = TimeBudget(started + 60 * cfg.minutes, say)
        trainer.add_callback(budget)
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    return evals, budget


def _train(trainer: Any, tokenizer: Any, checkpoint: str | None, output: Path, say: Say) -> float:
    """``trainer.train()``; the seconds it took. Interrupted: the model so far is saved first.

    Raises:
        KeyboardInterrupt: After saving the model so far to ``<output_dir>/interrupted``.
    """
    train_started = time.perf_counter()
    try:
        trainer.train(resume_from_checkpoint=checkpoint)
    except KeyboardInterrupt:
        target = output / "interrupted"
        trainer.save_model(str(target))
        tokenizer.save_pretrained(str(target))
        say(
            f"interrupted after step {trainer.state.global_step}: model saved to {target}; "
            f"continue from the last checkpoint with --output-dir {output} --resume"
        )
        raise
    return time.perf_counter() - train_started


def _say_eval_cost(evals: Any, cfg: TrainConfig, train_time: float, say: Say) -> None:
    if evals is None or not evals.history:
        return
    share = evals.seconds / train_time if train_time else 0.0
    say(
        f"held-out evals: {len(evals.history)} x {evals.episodes * len(cfg.env_ids)} "
        f"episodes, {evals.seconds / len(evals.history):.1f} s each, {100 * share:.0f}% of "
        "the training time" + (" (--eval-every larger or --eval-episodes smaller to cut it)"
                               if share > 0.15 else "")
    )  # fmt: skip


def _save_final(trainer: Any, tokenizer: Any, cfg: TrainConfig, output: Path, say: Say) -> None:
    """Save ``final/``: the last step's model, or with ``final_model`` "best" a copy of ``best/``
    (the last step's then kept in ``last/``). Earlier ones of either are replaced, not merged."""
    import shutil

    from trl_env.trl.training._final_model import LAST_DIR, keep_best_as_final

    last = output / (LAST_DIR if cfg.final_model == "best" else "final")
    if trainer.is_world_process_zero():  # a resumed run's: another run's files must not linger
        for stale in {output / LAST_DIR, last}:
            shutil.rmtree(stale, ignore_errors=True)
    trainer.accelerator.wait_for_everyone()
    trainer.save_model(str(last))
    tokenizer.save_pretrained(str(last))
    if cfg.final_model == "best" and trainer.is_world_process_zero():
        best = keep_best_as_final(output)
        seeds = f"{cfg.eval_seed}-{cfg.eval_seed + cfg.eval_episodes - 1}"
        untrained = "; no eval beat the one before training: final/ is the starting model"
        say(
            f"final/ holds the best held-out eval's model (step {best['step']}, success "
            f"{best['eval_success_rate']:.3f} on seeds {seeds}: judge it on others); the last "
            f"step's model is in {last}" + (untrained if best["step"] == 0 else "")
        )
    trainer.accelerator.wait_for_everyone()


def run_trainer(
    cfg: TrainConfig, checkpoint: str | None, started: float, say: Say
) -> tuple[list[dict[str, Any]], float, str]:
    """Train (resuming from ``checkpoint`` if given) and save ``<output_dir>/final``.

    Returns:
        The logged rows (one per step), the seconds spent in ``trainer.train``, and what ended
        it: ``"max_steps"`` or ``"minutes"`` (the ``--minutes`` budget).

    Raises:
        KeyboardInterrupt: After saving the model so far to ``<output_dir>/interrupted``.
    """
    from trl_env.trl.models import load_model_and_tokenizer
    from trl_env.trl.training._callbacks import CsvLog, MetricsCallback

    output = Path(cfg.output_dir or ".")
    name = _prepare_model(cfg, checkpoint is not None, say)
    model, tokenizer = load_model_and_tokenizer(name, require_chat_template=True, log=say)
    metrics = MetricsCallback(
        CsvLog(output / "metrics.csv", keep_until_step=_step_of(checkpoint)), cfg.progress, started
    )
    trainer = _grpo_trainer(cfg, model, tokenizer, [metrics])
    evals, budget = _watch(trainer, cfg, started, say)
    train_time = _train(trainer, tokenizer, checkpoint, output, say)
    _save_final(trainer, tokenizer, cfg, output, say)
    _say_eval_cost(evals, cfg, train_time, say)
    stopped_by = "minutes" if budget is not None and budget.stopped_at is not None else "max_steps"
    return metrics.rows, train_time, stopped_by
