"""``trl-env train``: GRPO training. Its options are generated from
:class:`~trl_env.trl.training._config.TrainConfig` (which imports without torch, so ``--help``
works on any install); the run itself, :func:`trl_env.trl.training.train`, is imported only when
the command runs and needs ``pip install "trl-env[trl]"``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trl_env.cli._arguments import (
    add_config_arguments,
    add_config_file_option,
    apply_config_values,
    config_from_namespace,
)
from trl_env.cli._common import CommandLineError, Formatter, Parser
from trl_env.cli._threads import add_threads_option
from trl_env.error import Error, UsageError
from trl_env.trl.training._config import TrainConfig

__all__ = [
    "add_arguments",
    "add_parser",
    "apply_recipe",
    "config_from_args",
    "resumed_run_config",
    "run",
]

_EPILOG = """\
examples:
  trl-env train TextLargestNumber-v0                 # the tiny local model, CPU, ~2 minutes
  trl-env train TextWordle-v0 --model SmolLM2-135M-Instruct.Q4_1.gguf --lora --out runs/smol
  trl-env train --config runs/smol/config.yaml --out runs/smol-again  # repeat a run
  trl-env train --out runs/smol --resume --max-steps 200  # continue it longer, its settings kept
  trl-env train TextTicTacToe-v0 --credit turn --gamma 0.9
  trl-env train TextHangman-v0 --model SmolLM2-135M-Instruct.Q4_1.gguf --lora --minutes 55
  trl-env train --recipe list                        # the recorded recipes
  trl-env train TextHangman-v0 --recipe multiturn-hangman --model FILE.gguf  # flags override it

A real model on a CPU on a multi-turn env (one whose random policy takes 2+ turns) gets, from
the recorded Hangman recipe, its warm start on 64 of the env's random demos (it teaches the
reply format), two groups of 8 a step and clip-higher 0.28; and an episode budget that holds 16
turns, 16 tokens per reply, and turn credit where steps give rewards before the end. On a
win-only game that takes a partial_credit (Hangman, Wordle, ...) it trains on partial credit 0.5
with turn credit at gamma 0 (success stays the env's; --partial-credit 0 turns it off). bf16 is on
only where the CPU has bf16 units (AMX/AVX-512 bf16): elsewhere it is emulated and slower.

The run folder holds config.yaml (every resolved setting: `--config` takes it back),
train_config.json, run.json (steps, wall time, peak memory, CPU), metrics.csv,
learning_curve.png, checkpoints, warm_start/ (with --warm-start), final/ (the last step's
model; with --final-model best a copy of best/, the last step's then in last/) and best/ (the
model of the best held-out eval, chosen on the eval seeds: judge it on others)."""

_INTERRUPTED = (
    "the model so far is in <output-dir>/interrupted, metrics.csv holds the steps done; --resume "
    "continues from the last checkpoint"
)


def apply_recipe(
    parser: argparse.ArgumentParser, argv: Sequence[str], config_file: str | None = None
) -> None:
    """``--recipe NAME`` in ``argv`` (or ``recipe: NAME`` in the ``--config`` file): the recipe's
    settings become ``parser``'s defaults, under the file's and the flags'.

    ``--recipe list`` prints the recipes and exits (status 0).

    Raises:
        CommandLineError: An unknown recipe (with the list), an abbreviated ``--recipe``, or a
            recipe file the command cannot read.
    """
    from trl_env._configs import read_yaml_mapping
    from trl_env.trl.training._recipes import LIST, describe_recipes, load_recipe

    scan = Parser(prog=parser.prog, add_help=False, allow_abbrev=False)
    scan.add_argument("--recipe", default=None)
    name = scan.parse_known_args(list(argv))[0].recipe
    if name is None and any(
        arg.startswith("--rec") and "--recipe".startswith(arg.split("=")[0]) for arg in argv
    ):
        raise CommandLineError(parser.prog, "write --recipe in full")
    if name is None and config_file is not None:
        try:
            name = read_yaml_mapping(config_file).get("recipe")
        except ValueError:
            return  # the --config file's own reading reports it
    if name is None:
        return
    if name == LIST:
        print(describe_recipes())
        raise SystemExit(0)
    try:
        values = load_recipe(name)
    except UsageError as error:
        raise CommandLineError(parser.prog, str(error)) from None
    apply_config_values(parser, {**values, "recipe": name}, f"--recipe {name}")


def resumed_run_config(argv: Sequence[str], prog: str) -> str | None:
    """``DIR/config.yaml`` when ``argv`` resumes the run in ``DIR`` without ``--config``.

    ``trl-env train --out DIR --resume`` then reads the run's own settings as a ``--config``
    file would, under the flags given now: a plain ``--resume`` continues the run as it was set
    up (its recipe, its defaults sized from its step count), and ``--max-steps 103`` changes only
    that. ``None`` without ``--resume``, with ``--config`` (which wins), or when ``DIR`` holds no
    ``config.yaml``.
    """
    from trl_env.cli._arguments import config_file_in

    scan = Parser(prog=prog, add_help=False, allow_abbrev=False)
    scan.add_argument("--resume", action="store_true")
    scan.add_argument("--output-dir", "--out", dest="output_dir", default=None)
    known = scan.parse_known_args(list(argv))[0]
    if not known.resume or known.output_dir is None or config_file_in(argv, prog) is not None:
        return None
    path = Path(known.output_dir).expanduser() / "config.yaml"
    return str(path) if path.is_file() else None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``trl-env train`` to ``parser`` (one per :class:`TrainConfig` field,
    and ``--threads``)."""
    add_config_arguments(parser, TrainConfig)
    add_threads_option(parser)


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The :class:`TrainConfig` of parsed ``trl-env train`` arguments.

    Raises:
        UsageError: For bad values (including malformed ``--env-kwargs`` JSON).
    """
    return config_from_namespace(TrainConfig, args)  # type: ignore[no-any-return]


def run(args: argparse.Namespace) -> int:
    """Run ``trl-env train`` with parsed arguments: train, then print a JSON summary.

    Raises:
        UsageError: A setting the run cannot use, found before any work (train's ``ValueError``
            and ``FileNotFoundError``).
        MissingExtraError: Without the ``trl`` extra.
    """
    from trl_env.trl._lazy import require_trl
    from trl_env.trl._threads import set_torch_threads

    config = config_from_args(args)
    require_trl("trl-env train")
    # Set silently: the run names the count in its first line, after its checks pass.
    set_torch_threads(getattr(args, "threads", None), announce=False)
    from trl_env.trl.training._run import train

    try:
        result = train(config.env_ids, config=config)
    except (ValueError, FileNotFoundError) as error:
        if isinstance(error, Error):
            raise
        raise UsageError(str(error)) from error  # train()'s contract: a bad setting, before work
    summary = result.summary()
    record = json.loads((result.output_dir / "run.json").read_text(encoding="utf-8"))
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
                "stopped_by": record["stopped_by"],
                "peak_rss_gb": record["peak_rss_gb"],
                "cpu": record["machine"]["summary"],
            },
            indent=2,
        )
    )
    return 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``train`` on the ``commands`` subparsers."""
    p = commands.add_parser(
        "train",
        parents=parents,
        formatter_class=Formatter,
        help='train a model with GRPO on environments (needs: pip install "trl-env[trl]")',
        description="Train a model with TRL's GRPOTrainer on text environments.",
        epilog=_EPILOG,
    )
    add_arguments(p)
    add_config_file_option(p)
    p.set_defaults(func=run, on_interrupt=_INTERRUPTED)
