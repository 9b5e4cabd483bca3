"""The settings of ``trl-env eval``: :class:`EvalConfig`, one field per option (TRL's pattern; the
options are generated from it by :mod:`trl_env.cli._arguments`, and ``--config FILE.yaml`` takes
the same names).

The rollout's settings keep the rollout's own names (``max_new_tokens_per_turn``,
``max_completion_length``, ``system_prompt``); ``None`` means "the run's, if ``policy`` is a
``trl-env train`` run, else the default of :class:`~trl_env._eval.ModelOptions`", so no default is
written twice.

Example:
    >>> config = EvalConfig(["TextWordle-v0"], policy="oracle", episodes=10)
    >>> config.model_options().max_new_tokens_per_turn
    256
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from trl_env._configs import (
    env_ids_field,
    env_kwargs_field,
    max_completion_length_field,
    max_new_tokens_per_turn_field,
    max_turns_field,
    seed_field,
    system_prompt_field,
)
from trl_env._model_options import ModelOptions
from trl_env.error import UsageError

__all__ = ["EvalConfig"]

_MODEL = "model policies"  # the help section of the settings that only a model uses

_POLICY_HELP = (
    "random, oracle (the env's solver: see `trl-env list --oracles`), a scripted player of the "
    "env (Hangman: frequency, a fixed letter order), or a model: a directory, a Hugging Face Hub "
    "id, a .gguf file, a LoRA adapter or a trl-env train/sft run folder."
)


@dataclass
class EvalConfig:
    """Settings of ``trl-env eval`` (every option of the command is one field)."""

    env_ids: list[str] = env_ids_field()
    policy: str = field(
        default="", metadata={"help": _POLICY_HELP, "required": True, "metavar": "POLICY"}
    )
    opponent: str | None = field(
        default=None,
        metadata={
            "help": "Play a two-player env against this policy (head to head): random, the "
            "env's scripted players (greedy, perfect for tic-tac-toe), oracle, or a model as for "
            "--policy (greedy unless --opponent-temperature). Seats alternate over the seeds; "
            "the report gives wins, draws, losses and the score (wins + draws/2) / N with their "
            "Wilson intervals, per seat and in total.",
            "metavar": "POLICY",
        },
    )
    episodes: int = field(default=100, metadata={"help": "Episodes per env.", "min": 1})
    seed: int = seed_field("Seed of the first episode (episode i plays seed+i).")
    output_dir: str | None = field(
        default=None,
        metadata={
            "help": "Write results.json, transcripts.jsonl and config.yaml (the settings, for "
            "--config) here; checked before any episode.",
            "flag": "--out",
            "aliases": ["--output-dir"],
            "metavar": "DIR",
        },
    )
    overwrite: bool = field(default=False, metadata={"help": "Replace the results in --out."})
    as_json: bool = field(
        default=False,
        metadata={"help": "Print the results as JSON, not a table.", "flag": "--json"},
    )
    env_kwargs: dict[str, Any] = env_kwargs_field()
    max_turns: int | None = max_turns_field()
    samples: int = field(
        default=0,
        metadata={
            "help": "Also play every seed K more times by sampling and report pass@K (share of "
            "seeds won at least once in K samples; unbiased estimator, Chen et al. 2021) and "
            "avg@K (mean success of the samples); 0: none.",
            "min": 0,
            "metavar": "K",
        },
    )
    progress: bool = field(
        default=True,
        metadata={
            "help": "Progress on stderr: a bar on a terminal, a line every tenth of the episodes "
            "(and at most every 30 s while turns are played) in a log."
        },
    )
    batch_size: int = field(
        default=ModelOptions.batch_size,
        metadata={
            "help": "Episodes played together, one generation call per turn.",
            "min": 1,
            "group": _MODEL,
        },
    )
    max_new_tokens_per_turn: int | None = max_new_tokens_per_turn_field(
        f"Tokens the model may sample per turn (default: the run's, else "
        f"{ModelOptions.max_new_tokens_per_turn}).",
        group=_MODEL,
    )
    max_completion_length: int | None = max_completion_length_field(
        f"Tokens of a whole episode after the prompt, model and env turns (default: the run's, "
        f"else {ModelOptions.max_completion_length}).",
        group=_MODEL,
    )
    temperature: float | None = field(
        default=None,
        metadata={
            "help": "Sampling temperature, 0 for greedy (default: the model's generation config; "
            "with --opponent, 0).",
            "min": 0,
            "metavar": "T",
            "group": _MODEL,
        },
    )
    sample_temperature: float | None = field(
        default=None,
        metadata={
            "help": "Temperature of the --samples episodes, above 0 (default 1.0).",
            "above": 0,
            "metavar": "T",
            "group": _MODEL,
        },
    )
    opponent_temperature: float | None = field(
        default=None,
        metadata={
            "help": "Sampling temperature of a model --opponent (default 0: greedy).",
            "min": 0,
            "metavar": "T",
            "group": _MODEL,
        },
    )
    system_prompt: str | None = system_prompt_field(
        None,
        "System message of every episode ('' for none; default: the run's, else the rollout's).",
        group=_MODEL,
    )
    use_vllm: bool = field(
        default=False,
        metadata={"help": "Generate with vLLM (needs a CUDA GPU).", "group": _MODEL},
    )
    fast_paths: str = field(
        default="auto",
        metadata={
            "help": "The generation fast paths (docs/real_models.md): auto (on a CPU, less the "
            "reserved KV cache and inverse-CDF sampling on one without bf16 units; off on a GPU "
            "or MPS), on, off, or layer names to add (name) or remove (-name), "
            "comma-separated. A trl-env train run's held-out evals use the run's --fast-paths.",
            "metavar": "auto|on|off",
            "group": _MODEL,
        },
    )

    def __post_init__(self) -> None:
        if isinstance(self.env_ids, str):
            self.env_ids = [self.env_ids]
        if not self.env_ids:
            raise UsageError("name at least one environment ID (see `trl-env list`)")
        if not self.policy:
            raise UsageError(f"--policy is required: {_POLICY_HELP}")
        if self.sample_temperature is not None and not self.samples:
            raise UsageError("--sample-temperature only applies with --samples K (K >= 1)")
        if self.opponent is not None and self.samples:
            raise UsageError(
                "--samples is for one-player evals; with --opponent every seed is one game "
                "(raise --episodes for more games)"
            )
        if self.opponent_temperature is not None and self.opponent is None:
            raise UsageError("--opponent-temperature only applies with --opponent POLICY")
        length, per_turn = self.max_completion_length, self.max_new_tokens_per_turn
        if length is not None and per_turn is not None and per_turn > length:
            raise UsageError(
                f"--max-new-tokens ({per_turn}) is larger than --max-completion-length "
                f"({length}): one turn could not fit in the episode"
            )

    def model_options(self) -> ModelOptions:
        """How a model policy generates: these settings, the unset ones at their defaults."""
        given: dict[str, Any] = {
            "max_new_tokens_per_turn": self.max_new_tokens_per_turn,
            "max_completion_length": self.max_completion_length,
            "temperature": self.temperature,
            "batch_size": self.batch_size,
            "system_prompt": self.system_prompt,
            "use_vllm": self.use_vllm,
            "fast_paths": self.fast_paths,
        }
        return ModelOptions(**{name: value for name, value in given.items() if value is not None})

    def resolved(self) -> EvalConfig:
        """A copy with the model settings that were left to their defaults filled in."""
        from trl_env._demos import DEFAULT_SYSTEM_PROMPT

        options = self.model_options()
        prompt = DEFAULT_SYSTEM_PROMPT if self.system_prompt is None else self.system_prompt
        return dataclasses.replace(
            self,
            max_new_tokens_per_turn=options.max_new_tokens_per_turn,
            max_completion_length=options.max_completion_length,
            system_prompt=prompt,
            sample_temperature=self.sample_temperature or (1.0 if self.samples else None),
        )
