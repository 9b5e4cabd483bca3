"""The settings of a ``trl-env train`` run: :class:`TrainConfig`, a dataclass whose field
metadata (``help``, and for the command line ``flag``/``aliases``/``choices``) is the one source of
both the Python API and the command's options (see :mod:`trl_env.cli._arguments`)."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trl_env._configs import (
    MAX_NEW_TOKENS_PER_TURN,
    check_count,
    env_ids_field,
    env_kwargs_field,
    max_completion_length_field,
    max_new_tokens_per_turn_field,
    max_turns_field,
    seed_field,
    system_prompt_field,
)
from trl_env.trl._credit_modes import CREDITS, check_credit, gamma_field, partial_credit_field
from trl_env.trl._seat_settings import check_seat_settings, opponent_field, self_play_field
from trl_env.trl.fast._switch import check_fast_paths, fast_paths_field
from trl_env.trl.training._defaults import run_defaults, with_partial_credit
from trl_env.trl.training._final_model import check_final_model, final_model_field
from trl_env.trl.training._passes import batch_settings, check_groups

__all__ = ["AUTO", "EVAL_SEED", "SAVE_ROLLOUTS_UP_TO", "TrainConfig"]

AUTO = "auto"
"""``system_prompt`` value meaning: the default of the model kind (tiny or not)."""

_CHECKPOINTS_PER_RUN = 10
"""With ``save_steps`` unset, a checkpoint every tenth of the run (a lost run loses <= 10%)."""

VLLM_MODES = ("colocate", "server")
EVAL_SEED = 10_000
"""Seed of the first held-out eval episode by default."""
SAVE_ROLLOUTS_UP_TO = 100_000
"""Runs that play at most this many episodes save them by default (about 0.5 KB each on
one-turn envs, a few KB on multi-turn ones)."""
_EVALS_PER_RUN = 10
_EVALS_PER_RUN_REAL_MODEL = 5

_AT_LEAST_1 = (
    "num_tasks num_generations gradient_accumulation_steps max_steps lora_r lora_alpha save_total_limit"
    " per_device_train_batch_size micro_batch_size max_completion_length max_new_tokens_per_turn"
    " max_turns warm_start_episodes opponent_pool_size opponent_refresh_steps"
)
_AT_LEAST_0 = "warm_start_steps save_steps eval_every eval_seed eval_samples"
_COUNTS = dict.fromkeys(_AT_LEAST_1.split(), 1) | dict.fromkeys(_AT_LEAST_0.split(), 0)
"""The int settings and their smallest value (``None`` is allowed where it is the default)."""


def _help(text: str, **cli: Any) -> dict[str, Any]:
    return {"help": text, **cli}


@dataclass
class TrainConfig:
    """Settings of :func:`~trl_env.trl.training.train` (and of ``trl-env train``).

    Fields left at ``None`` are resolved by :meth:`resolved`: with no ``model`` (the built-in tiny
    model) to settings that learn on a CPU in minutes, otherwise to ones for a real model.

    Example:
        >>> TrainConfig(["TextLargestNumber-v0"]).resolved().learning_rate
        0.001
    """

    env_ids: list[str] = env_ids_field("Registered env IDs to train on (mixed evenly).")
    model: str | None = field(
        default=None,
        metadata=_help(
            "Hub id, model directory, .gguf file, LoRA adapter or run folder; default: build the "
            "tiny local model (offline, CPU)."
        ),
    )
    output_dir: str | None = field(
        default=None,
        metadata=_help(
            "Output folder (refused if it holds files, unless --overwrite or --resume); default "
            "trl-env-runs/<first env ID>-<date-time>.",
            aliases=["--out"],
        ),
    )
    overwrite: bool = field(default=False, metadata=_help("Replace the run in --output-dir."))
    resume: bool = field(
        default=False,
        metadata=_help("Continue the run in --output-dir: its last checkpoint and config.yaml."),
    )
    num_tasks: int = field(default=4096, metadata=_help("Tasks (env seeds) in the dataset."))
    max_steps: int | None = field(
        default=None,
        metadata=_help(
            "Optimizer steps (default 400 tiny model; a real model 500 on a GPU, 100 on a CPU; "
            "10000 with --minutes, where the clock ends the run)."
        ),
    )
    learning_rate: float | None = field(
        default=None,
        metadata=_help(
            "AdamW learning rate (default 1e-3 tiny model; LoRA 1e-5 on a GPU, 2e-4 on a CPU; "
            "1e-6 full).",
            aliases=["--lr"],
        ),
    )
    lr_scheduler_type: str = field(
        default="constant", metadata=_help("transformers LR schedule.", aliases=["--lr-scheduler"])
    )
    num_generations: int = field(
        default=8, metadata=_help("Episodes per task (the GRPO group size).")
    )
    per_device_train_batch_size: int | None = field(
        default=None,
        metadata=_help(
            "Episodes per device per step (default 64 tiny model; 16 for a real model on a CPU "
            "on a multi-turn env; else 8).",
            aliases=["--batch-size"],
        ),
    )
    micro_batch_size: int | None = field(
        default=None,
        metadata=_help(
            "Episodes per training pass, gradients summed: the same update (default: up to 4 for "
            "a real model on a CPU, else the batch; docs/real_models.md).",
            aliases=["--micro-batch"],
        ),
    )
    gradient_accumulation_steps: int = field(
        default=1, metadata=_help("Batches accumulated per optimizer step.")
    )
    max_completion_length: int | None = max_completion_length_field(
        "Tokens of a whole episode's completion (default 16 tiny; 1024 on a GPU; on a CPU 256, "
        "or up to 1024 to hold 16 turns of a multi-turn env)."
    )
    max_new_tokens_per_turn: int | None = max_new_tokens_per_turn_field(
        f"Tokens of one model turn (default 8 tiny; {MAX_NEW_TOKENS_PER_TURN} on a GPU, 32 on a "
        "CPU, 16 on a CPU on a multi-turn catalogue game)."
    )
    max_turns: int | None = max_turns_field()
    env_workers: int = field(
        default=0,
        metadata=_help(
            "Threads that step the envs of a turn concurrently (0: one after the other, the "
            "fastest for in-process games; see docs/slow_envs.md)."
        ),
    )
    env_step_timeout: float | None = field(
        default=None,
        metadata=_help("Seconds one env reset/step may take before its episode ends (no limit)."),
    )
    beta: float = field(default=0.0, metadata=_help("KL coefficient (0: no reference model)."))
    epsilon_high: float | None = field(
        default=None,
        metadata=_help(
            "Upper clip of the ratio, e.g. 0.28 (default: TRL's, 0.2; 0.28 for a real model on a "
            "CPU on a multi-turn env)."
        ),
    )
    credit: str | None = field(
        default=None,
        metadata=_help(
            "Credit assignment: 'episode' (GRPO: every token of an episode gets the episode's "
            "normalized return) or 'turn' (each model turn gets its discounted return-to-go from "
            "the env's step rewards, normalized within its group; see docs/multiturn.md) or "
            "'step-group' (turn credit plus GiGPO's step-level term: turns of a group that saw "
            "the same observation are also compared with each other). "
            "Default: 'turn' for a real model on a CPU on a multi-turn env whose steps give rewards "
            "before the end (read by playing a few episodes of its random policy) or where the "
            "run turns on partial credit (--partial-credit), else 'episode'.",
            choices=list(CREDITS),
        ),
    )
    gamma: float | None = gamma_field()
    partial_credit: float | None = partial_credit_field()
    self_play: bool = self_play_field()
    opponent: str | None = opponent_field()
    opponent_pool_size: int = field(
        default=4, metadata=_help("--opponent pool: snapshots of the run kept in the pool.")
    )
    opponent_refresh_steps: int = field(
        default=10, metadata=_help("--opponent pool: training steps between two snapshots.")
    )
    temperature: float = field(default=1.0, metadata=_help("Sampling temperature."))
    seed: int = seed_field("Seed of the dataset, warm start and trainer.")
    use_vllm: bool = field(default=False, metadata=_help("Generate with vLLM."))
    vllm_mode: str = field(
        default="colocate", metadata=_help("vLLM mode.", choices=list(VLLM_MODES))
    )
    vllm_gpu_memory_utilization: float = field(
        default=0.3, metadata=_help("GPU memory share of vLLM in colocate mode.")
    )
    lora: bool = field(
        default=False, metadata=_help('Train LoRA adapters (pip install "trl-env[lora]").')
    )
    lora_r: int = field(default=16, metadata=_help("LoRA rank."))
    lora_alpha: int = field(default=32, metadata=_help("LoRA alpha."))
    bf16: bool | None = field(
        default=None,
        metadata=_help(
            "bfloat16 autocast for the training passes and the rollout's generation (default: "
            "off for the tiny model; for a real model on with a CUDA GPU that supports it and on "
            "CPUs with AMX/AVX-512 bf16 units). The machine decides, not a recipe: --bf16 on a "
            "CPU without bf16 units warns (emulated there, several times slower)."
        ),
    )
    fast_paths: str = fast_paths_field()
    warm_start: str | None = field(
        default=None,
        metadata=_help(
            "Warm start before RL: SFT (LoRA with --lora) on demos played now by the env's own "
            "'random' or 'oracle' policy or one of its scripted players (Hangman: 'frequency'), "
            "or a `trl-env demos` folder; 'none' for none. The demos and the SFT run are kept in "
            "<output-dir>/warm_start, a policy `trl-env eval --policy` takes. Default: 'random' "
            "for a real model on a CPU on a multi-turn env with a random policy (it teaches the "
            "reply format, not the game: most of the base model's Hangman replies were unreadable)"
            " unless --model is a `trl-env sft`/`train` run folder (taught already); else 'none'.",
            metavar="random|oracle|NAME|none|DIR",
        ),
    )
    warm_start_episodes: int = field(
        default=64,
        metadata=_help("Demo episodes per env played for --warm-start random|oracle|NAME."),
    )
    warm_start_epochs: float = field(
        default=1.0, metadata=_help("Passes of the --warm-start SFT over its demos.")
    )
    warm_start_steps: int | None = field(
        default=None,
        metadata=_help(
            "Format-only SFT steps before RL on random well-formed replies (the built-in tiny "
            "model's warm start; default 600 tiny model, else 0)."
        ),
    )
    minutes: float | None = field(
        default=None,
        metadata=_help(
            "Wall-clock budget in minutes for warm start and RL together: GRPO stops after the "
            "step that passes it, then the run evaluates and saves as after its last step (the "
            "final eval and save come on top). With --minutes and no --max-steps the budget "
            "decides (max steps 10000). Step budgets reproduce across machines; minutes are a "
            "convenience (a slower CPU gives fewer steps). 0: no budget (turns a recipe's off). "
            "The clock starts with the process: --resume gets the whole budget again."
        ),
    )
    recipe: str | None = field(
        default=None,
        metadata=_help(
            "A recorded recipe shipped with trl-env (`--recipe list` lists them): its settings "
            "become the defaults, and options given on the command line override them."
        ),
    )
    system_prompt: str | None = system_prompt_field(
        AUTO,
        "System message of every episode ('' or None: none); default: none for the tiny "
        "model, trl-env's DEFAULT_SYSTEM_PROMPT otherwise.",
    )
    save_steps: int | None = field(
        default=None,
        metadata=_help(
            "Save a checkpoint every N steps (0: only the final model); default: every tenth "
            "of the run."
        ),
    )
    save_total_limit: int = field(
        default=2, metadata=_help("Checkpoints kept (the oldest are deleted).")
    )
    env_kwargs: dict[str, Any] = env_kwargs_field()
    eval_every: int | None = field(
        default=None,
        metadata=_help(
            "Evaluate the policy greedily on held-out seeds every N steps (and before the first "
            "and after the last step; 0: never); default: every tenth of the run (tiny model), "
            "every fifth (a real model)."
        ),
    )
    eval_episodes: int = field(
        default=32, metadata=_help("Episodes per env of each held-out eval.")
    )
    eval_seed: int = field(
        default=EVAL_SEED,
        metadata=_help(
            "Seed of the first held-out episode (episode i plays seed+i); refused if the "
            "training dataset plays any of them."
        ),
    )
    eval_samples: int = field(
        default=0,
        metadata=_help(
            "Also play every held-out seed K times sampled, for pass@K and avg@K (0: greedy only)."
        ),
    )
    eval_temperature: float = field(
        default=1.0, metadata=_help("Sampling temperature of --eval-samples.")
    )
    final_model: str = final_model_field()
    report_to: str = field(
        default="none",
        metadata=_help(
            "Trackers that get every metric, comma-separated: none, tensorboard, trackio, wandb, "
            "mlflow, ... (TRL's report_to; 'all': every installed one)."
        ),
    )
    save_rollouts: bool | None = field(
        default=None,
        metadata=_help(
            "Save every step's episodes to <output-dir>/rollouts/ (read them with trl-env "
            f"replay); default: on for runs of at most {SAVE_ROLLOUTS_UP_TO:,} episodes."
        ),
    )
    progress: bool = field(default=True, metadata=_help("Progress bar and per-step lines."))
    plot: bool = field(default=True, metadata=_help("Write learning_curve.png."))

    def __post_init__(self) -> None:
        self.env_ids = [self.env_ids] if isinstance(self.env_ids, str) else list(self.env_ids)
        if not self.env_ids:
            raise ValueError(
                "give at least one env ID, e.g. TextLargestNumber-v0 (see `trl-env list`)"
            )
        self.system_prompt = self.system_prompt or None  # "": none, as the CLI's --system-prompt ''
        self._check_counts()
        self._check_numbers()
        check_seat_settings(self.self_play, self.opponent, self.num_generations)
        if not isinstance(self.env_kwargs, dict):
            raise ValueError(f"env_kwargs must be a dict, got {self.env_kwargs!r}")
        if self.overwrite and self.resume:
            raise ValueError("overwrite and resume exclude each other: pick one")
        check_groups(
            self.per_device_train_batch_size, self.gradient_accumulation_steps, self.num_generations
        )

    @property
    def plays_seats(self) -> bool:
        """Whether the run plays two-player games from outside (``self_play`` or ``opponent``)."""
        return self.self_play or self.opponent is not None

    def _check_counts(self) -> None:
        for name, least in _COUNTS.items():
            optional = self.__dataclass_fields__[name].default is None
            check_count(name, getattr(self, name), least, optional=optional)
        if self.num_generations < 2:
            raise ValueError(
                f"num_generations must be at least 2 (GRPO compares the episodes of a task with "
                f"each other), got {self.num_generations}"
            )
        if isinstance(self.eval_episodes, int) and self.eval_episodes == 0:
            raise ValueError(
                "eval_episodes must be at least 1 (to turn held-out evals off, pass --eval-every 0)"
            )
        check_count("eval_episodes", self.eval_episodes, 1)

    def _check_numbers(self) -> None:
        if self.learning_rate is not None and not (
            math.isfinite(self.learning_rate) and self.learning_rate > 0
        ):
            raise ValueError(f"learning_rate must be a positive number, got {self.learning_rate}")
        if not (math.isfinite(self.temperature) and self.temperature > 0):
            raise ValueError(f"temperature must be > 0, got {self.temperature}")
        if not (math.isfinite(self.beta) and self.beta >= 0):
            raise ValueError(f"beta must be >= 0, got {self.beta}")
        if self.epsilon_high is not None and not 0 < self.epsilon_high < math.inf:
            raise ValueError(f"epsilon_high must be > 0 (like 0.28), got {self.epsilon_high}")
        check_credit(self.credit or "turn", self.gamma, self.partial_credit)  # None: the run's
        if self.minutes is not None and not (math.isfinite(self.minutes) and self.minutes >= 0):
            raise ValueError(f"minutes must be a number >= 0 (0: no budget), got {self.minutes}")
        if self.minutes == 0:
            self.minutes = None  # 0 turns a recipe's budget off
        if not (math.isfinite(self.warm_start_epochs) and self.warm_start_epochs > 0):
            raise ValueError(f"warm_start_epochs must be > 0, got {self.warm_start_epochs}")
        if self.warm_start is not None and not str(self.warm_start).strip():
            raise ValueError("warm_start must be random, oracle, a player's name, none or a folder")
        if not (math.isfinite(self.eval_temperature) and self.eval_temperature > 0):
            raise ValueError(f"eval_temperature must be > 0, got {self.eval_temperature}")
        if not isinstance(self.report_to, str) or not self.report_to.strip():
            raise ValueError(
                f"report_to must be tracker names separated by commas (or 'none'), got "
                f"{self.report_to!r}"
            )
        check_fast_paths(self.fast_paths)
        check_final_model(self.final_model, self.eval_every)
        if self.vllm_mode not in VLLM_MODES:
            raise ValueError(f"vllm_mode must be 'colocate' or 'server', got {self.vllm_mode!r}")
        if not 0 < (share := self.vllm_gpu_memory_utilization) <= 1:
            raise ValueError(f"vllm_gpu_memory_utilization must be in (0, 1], got {share}")

    @property
    def uses_tiny_model(self) -> bool:
        """Whether the run builds the tiny local model (no ``model`` given)."""
        return self.model is None

    def resolved(self) -> TrainConfig:
        """A copy with every ``None`` default filled in (see the field helps)."""
        defaults = run_defaults(
            model=self.model,
            lora=self.lora,
            env_ids=self.env_ids,
            env_kwargs=self.env_kwargs,
            max_new_tokens_per_turn=self.max_new_tokens_per_turn,
            max_turns=self.max_turns,
            budget_in_minutes=self.minutes is not None and self.max_steps is None,
            partial_credit=self.partial_credit,
            credit_chosen=self.credit is not None or self.gamma is not None,
        )
        values = asdict(self)
        for name, default in defaults.items():
            if values[name] is (AUTO if name == "system_prompt" else None):
                values[name] = default
        kwargs = with_partial_credit(self.env_ids, self.env_kwargs, values["partial_credit"])
        values["env_kwargs"] = kwargs
        if self.warm_start_steps is None and values["warm_start"] != "none":
            values["warm_start_steps"] = 0  # demos teach the format: no format-only SFT first
        if self.credit is None and values["gamma"] != 1:
            values["credit"] = "turn"  # a discount only means something per turn
        check_credit(values["credit"], values["gamma"])
        if values["output_dir"] is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            values["output_dir"] = str(Path("trl-env-runs") / f"{self.env_ids[0]}-{stamp}")
        values.update(batch_settings(values, self.num_generations, self.micro_batch_size))
        if values["save_steps"] is None:
            values["save_steps"] = max(1, values["max_steps"] // _CHECKPOINTS_PER_RUN)
        if values["eval_every"] is None:
            # A real model's eval episodes cost a greedy generation each, about what an episode
            # of training costs to sample: fewer evals keep them near 10% of the run.
            evals = _EVALS_PER_RUN if self.uses_tiny_model else _EVALS_PER_RUN_REAL_MODEL
            values["eval_every"] = max(1, values["max_steps"] // evals)
        elif values["eval_every"] > values["max_steps"]:
            raise ValueError(
                f"eval_every {values['eval_every']} is larger than the run ({values['max_steps']} "
                "steps): only the evals before the first and after the last step would run. Pick "
                f"--eval-every at most {values['max_steps']}, or 0 for no held-out evals"
            )
        if values["save_rollouts"] is None and self.minutes is not None:
            values["save_rollouts"] = True  # the clock, not the 10000-step ceiling, sizes the run
        if values["save_rollouts"] is None:
            batches = values["max_steps"] * values["gradient_accumulation_steps"]
            episodes = batches * values["per_device_train_batch_size"]
            values["save_rollouts"] = episodes <= SAVE_ROLLOUTS_UP_TO
        return TrainConfig(**values)

    @property
    def trackers(self) -> list[str]:
        """The ``report_to`` names as a list (``[]`` for ``"none"``)."""
        names = [name.strip() for name in self.report_to.split(",") if name.strip()]
        return [] if names == ["none"] else names
