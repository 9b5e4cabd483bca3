"""``trl-env eval``: measure a policy (random, oracle or a model) on environments."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from trl_env.cli._common import (
    PROG,
    CommandLineError,
    Formatter,
    json_object,
    non_negative_int,
    positive_float,
    positive_int,
    seed,
    temperature,
)
from trl_env.cli._threads import add_threads_option, set_torch_threads

__all__ = ["add_parser"]

_DEFAULTS = {"max_new_tokens": 256, "max_completion_length": 4096}

_EPILOG = """\
policies:
  random    a random legal-looking reply each turn (a random word for Wordle, ...)
  oracle    the environment's own solver (`trl-env list --oracles` shows which envs
            have one)
  MODEL     a model directory, a Hugging Face Hub id, a .gguf file (converted once,
            cached), a LoRA adapter or a trl-env train/sft run folder; episodes are
            played in batches by the training rollout (needs: pip install "trl-env[trl]")

Episode i of every env plays seed S+i (S from --seed), whatever the policy, so
policies are compared on the same games. The table shows, per env: success rate,
with its 95% Wilson interval, mean return with its 95% confidence interval, mean
turns, and the share of turns whose reply the env rejected as invalid.

--samples K plays every seed K more times by sampling (a model at
--sample-temperature, default 1.0; K differently seeded random policies; the
oracle, which is deterministic) and adds two columns: pass@K, the share of seeds
won at least once in the K samples (the unbiased estimator 1 - C(n-c,K)/C(n,K) of
Chen et al. 2021, with n = K samples of which c won), and avg@K, the mean success
of the samples.

examples:
  trl-env eval TextWordle-v0 --policy oracle --episodes 1000
  trl-env eval TextWordle-v0 TextGuessNumber-v0 --policy random --episodes 500 --seed 7
  trl-env eval TextWordle-v0 --policy ./checkpoints/step-500 --episodes 64 \\
      --temperature 0 --max-new-tokens 128 --out runs/step-500
  trl-env eval TextGuessNumber-v0 --policy ./checkpoints/step-500 --episodes 64 \\
      --temperature 0 --samples 8 --sample-temperature 0.7

A trl-env train run folder (or its final/ or checkpoint-N/) as the policy is
evaluated with the run's own settings (system prompt, token limits, turn limit,
env kwargs, from its train_config.json) unless flags override them.

--out DIR writes DIR/results.json (settings and per-env statistics) and
DIR/transcripts.jsonl (one line per episode: seed, return, success, turns, transcript;
sampled episodes come after the others, marked "sample": i)."""


def _check_out(args: argparse.Namespace) -> None:
    """Fail before any episode is played if ``--out`` cannot take the results."""
    if args.out is None:
        return
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CommandLineError(f"{PROG} eval", f"--out {out} is a file: name a folder")
    if (out / "results.json").exists() and not args.overwrite:
        raise CommandLineError(
            f"{PROG} eval",
            f"--out {out} already holds results.json: pass --overwrite to replace it, or name "
            "another folder",
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandLineError(f"{PROG} eval", f"--out {out} cannot be created: {error}") from None


def _run_settings(args: argparse.Namespace) -> None:
    """Fill the options not given on the command line from the run that ``--policy`` names."""
    if args.policy in ("random", "oracle") or not os.path.isdir(args.policy):
        return
    from trl_env.trl.models import run_config

    config = run_config(args.policy)
    if config is None:
        return
    taken = []
    for option, key in (
        ("max_new_tokens", "max_new_tokens_per_turn"),
        ("max_completion_length", "max_completion_length"),
        ("max_turns", "max_turns"),
        ("env_kwargs", "env_kwargs"),
    ):
        if getattr(args, option) is None and config.get(key) not in (None, {}):
            setattr(args, option, config[key])
            taken.append(f"{option.replace('_', '-')} {config[key]}")
    if args.system_prompt is None:
        prompt = config.get("system_prompt")
        args.system_prompt = prompt if isinstance(prompt, str) else ""
        taken.append("its system prompt" if prompt else "no system prompt")
    print(
        f"{PROG} eval: using the run's settings ({', '.join(taken)}); flags override them",
        file=sys.stderr,
    )


def run(args: argparse.Namespace) -> int:
    """Run ``trl-env eval`` with parsed arguments; return the exit status."""
    from trl_env.eval import (
        ModelOptions,
        check_env_id,
        evaluate,
        format_table,
        policy_kind,
        write_outputs,
    )

    for env_id in args.env_ids:
        check_env_id(env_id)
    _check_out(args)
    _run_settings(args)
    for name, default in _DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    if args.sample_temperature is not None and not args.samples:
        raise CommandLineError(
            f"{PROG} eval", "--sample-temperature only applies with --samples K (K >= 1)"
        )
    if args.sample_temperature is not None and policy_kind(args.policy) != "model":
        raise CommandLineError(
            f"{PROG} eval",
            f"--sample-temperature only applies when --policy is a model; the {args.policy} "
            "policy's samples have no temperature",
        )
    if args.max_new_tokens > args.max_completion_length:
        raise CommandLineError(
            f"{PROG} eval",
            f"--max-new-tokens ({args.max_new_tokens}) is larger than --max-completion-length "
            f"({args.max_completion_length}) (see '{PROG} eval --help')",
        )
    threads = None
    if policy_kind(args.policy) == "model":
        # Said after the results, so that an error stays the one line on stderr.
        threads = set_torch_threads(args.threads, announce=False)
    options = ModelOptions(
        max_new_tokens=args.max_new_tokens,
        max_completion_length=args.max_completion_length,
        temperature=args.temperature,
        batch_size=args.batch_size,
        system_prompt=args.system_prompt,
        use_vllm=args.use_vllm,
    )
    report = evaluate(
        args.env_ids,
        args.policy,
        args.episodes,
        args.seed,
        env_kwargs=args.env_kwargs,
        max_turns=args.max_turns,
        model_options=options,
        record_transcripts=args.out is not None,
        progress=not args.no_progress,
        samples=args.samples,
        sample_temperature=1.0 if args.sample_temperature is None else args.sample_temperature,
    )
    print(json.dumps(report.to_json(), indent=2) if args.json else format_table(report))
    if args.out is not None:
        results, transcripts = write_outputs(report, args.out)
        print(f"wrote {results} and {transcripts}", file=sys.stderr)
    if threads is not None:
        print(
            f"{PROG} eval: generated with {threads} torch threads (--threads N to change)",
            file=sys.stderr,
        )
    return 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``eval`` on the ``commands`` subparsers."""
    p = commands.add_parser(
        "eval",
        parents=parents,
        formatter_class=Formatter,
        help="evaluate a policy (random, oracle or a model) on environments",
        description="Evaluate a policy on one or more environments and print a table of results.",
        epilog=_EPILOG,
    )
    p.add_argument("env_ids", nargs="+", metavar="ID", help="environment IDs (see `trl-env list`)")
    p.add_argument(
        "--policy",
        required=True,
        metavar="POLICY",
        help="random, oracle, or a model: directory, .gguf file, train run folder or Hub id",
    )
    p.add_argument(
        "--episodes", type=positive_int, default=100, metavar="N", help="episodes per env (100)"
    )
    p.add_argument(
        "--seed", type=seed, default=0, metavar="S", help="seed of the first episode (0)"
    )
    p.add_argument(
        "--out",
        "--output-dir",
        default=None,
        metavar="DIR",
        help="write results.json and transcripts.jsonl here (checked before any episode)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace the results in --out")
    p.add_argument("--json", action="store_true", help="print the results as JSON, not a table")
    p.add_argument(
        "--env-kwargs",
        type=json_object,
        default=None,
        metavar="JSON",
        help="gym.make keyword arguments for every env, e.g. '{\"max_guesses\": 8}'",
    )
    p.add_argument(
        "--max-turns",
        type=positive_int,
        default=None,
        metavar="N",
        help="end an episode after N turns (default: the env's own limit)",
    )
    p.add_argument(
        "--samples",
        type=non_negative_int,
        default=0,
        metavar="K",
        help="also play every seed K more times by sampling and report pass@K (share of seeds "
        "won at least once in K samples; unbiased estimator, Chen et al. 2021) and avg@K (mean "
        "success of the samples) (0: none)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    _add_model_options(p.add_argument_group("model policies"))
    p.set_defaults(func=run)


def _add_model_options(model: Any) -> None:
    model.add_argument(
        "--batch-size",
        type=positive_int,
        default=16,
        metavar="N",
        help="episodes played together, one generation call per turn (16)",
    )
    model.add_argument(
        "--max-new-tokens",
        "--max-new-tokens-per-turn",
        type=positive_int,
        default=None,
        metavar="N",
        help="tokens the model may sample per turn (default: the run's, else 256)",
    )
    model.add_argument(
        "--max-completion-length",
        type=positive_int,
        default=None,
        metavar="N",
        help="tokens of a whole episode after the prompt (default: the run's, else 4096)",
    )
    model.add_argument(
        "--temperature",
        type=temperature,
        default=None,
        metavar="T",
        help="sampling temperature, 0 for greedy (default: the model's generation config)",
    )
    model.add_argument(
        "--sample-temperature",
        type=positive_float,
        default=None,
        metavar="T",
        help="temperature of the --samples episodes, above 0 (1.0)",
    )
    model.add_argument(
        "--system-prompt",
        default=None,
        metavar="TEXT",
        help="system message of every episode ('' for none; default: the run's, else the "
        "rollout's)",
    )
    model.add_argument(
        "--use-vllm", action="store_true", help="generate with vLLM (needs a CUDA GPU)"
    )
    add_threads_option(model)
