"""The ``trl-env`` command line: list, play, evaluate, train and serve text environments.

One module per command (``_list``, ``_play``, ``_eval``, ``_train``, ``_demos``, ``_sft``,
``_replay``, ``_serve``, ``_check``); this one builds the parser and runs a command.

**Options from configs.** ``train``, ``eval``, ``serve``, ``demos``, ``sft`` and ``replay`` take
one config dataclass each (``TrainConfig``, ``EvalConfig``, ``ServeConfig``, ``DemosConfig``,
``SFTRunConfig``, ``ReplayConfig``); their options are generated from its fields by
:mod:`trl_env.cli._arguments`, and ``--config FILE.yaml`` sets the same fields from a file (flags
override it). ``train`` writes its resolved settings to ``RUN/config.yaml`` and ``eval --out DIR``
to ``DIR/config.yaml``, so ``--config`` repeats them. Building every parser imports no torch.

**Extras.** ``list``, ``play``, ``check``, ``demos``, ``replay`` and ``eval`` with the random or
oracle policy need only the base install; ``eval --policy MODEL``, ``train`` and ``sft`` need
``pip install "trl-env[trl]"``, ``serve`` needs ``pip install "trl-env[openenv]"``, imported only
when those run.

**Errors** (:mod:`trl_env.cli._errors`, the one policy of every command) are one line on stderr,
``trl-env CMD: error: ...`` (``--debug`` adds the traceback). The exit status is 0 on success;
2 when the command cannot run as asked: a usage error (a bad option or value, a bad ``--config``
file, an unknown or non-text env ID, a model path that does not exist, an env without an oracle)
or a missing optional package (the line names the ``pip install``); 1 for a runtime failure (a
model that fails to load, no GPU for vLLM, an env that crashed); 130 when interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from trl_env.cli import _check, _demos, _eval, _list, _play, _replay, _serve, _sft, _train
from trl_env.cli._arguments import apply_config_file, config_file_in
from trl_env.cli._common import PROG, CommandLineError, Formatter, Parser
from trl_env.cli._errors import report
from trl_env.cli._train import apply_recipe

__all__ = ["build_parser", "main"]

_DESCRIPTION = """\
Text environments for training LLM agents with reinforcement learning.

Every environment is a gymnasium env with text observations and text actions,
registered under an ID such as TextWordle-v0. Start with `trl-env list`, play a
game yourself with `trl-env play`, measure a policy with `trl-env eval`,
train a model with GRPO with `trl-env train`, and serve an environment over
OpenEnv with `trl-env serve`."""

_EPILOG = """\
examples:
  trl-env list                                      # every environment ID, one line each
  trl-env play TextWordle-v0 --seed 3               # play Wordle in the terminal
  trl-env check reasoning_gym/Countdown-v0 --hostile  # replies that try to run code run nothing
  trl-env eval TextWordle-v0 --policy oracle --episodes 1000
  trl-env eval TextWordle-v0 TextMastermind-v0 --policy random --episodes 200 --out runs/random
  trl-env eval TextWordle-v0 --policy Qwen/Qwen3-0.6B --episodes 64 --out runs/qwen
  trl-env train --help                              # GRPO training options
  trl-env train --config runs/x/config.yaml --out runs/x2  # repeat a run (flags override)
  trl-env demos TextTicTacToe-v0 --policy oracle --out demos/ttt  # oracle episodes as SFT data
  trl-env sft TextTicTacToe-v0 --model M --lora --demos demos/ttt  # warm start on them
  trl-env replay runs/ttt --worst                   # the worst episodes a run saved
  trl-env serve TextWordle-v0 --port 8000           # an OpenEnv server, one session per episode

Run `trl-env COMMAND --help` for the options of a command.
Exit status: 0 ok, 1 runtime failure, 2 usage error or missing package, 130 interrupted."""


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not a global option)."""
    for token in argv:
        if token == "--":
            return None
        if not token.startswith("-"):
            return token
    return None


def build_parser() -> argparse.ArgumentParser:
    """The ``trl-env`` parser, every command's options included (building it imports no torch)."""
    from trl_env import __version__

    debug = Parser(add_help=False)
    debug.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="on error, show the full traceback",
    )
    parser = Parser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--debug", action="store_true", default=False, help="on error, show the full traceback"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in (_list, _check, _play, _eval, _train, _demos, _sft, _replay, _serve):
        command.add_parser(commands, [debug])
    return parser


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv``; a ``--config FILE`` first sets the defaults of the command's options."""
    command = _command_of(argv)
    subparsers = next(
        (a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None
    )
    sub = subparsers.choices.get(command) if subparsers and command else None
    path = given = None
    if sub is not None and any(action.dest == "config" for action in sub._actions):
        path = given = config_file_in(argv, sub.prog)
    if path is None and sub is not None and command == "train":
        path = _train.resumed_run_config(argv, sub.prog)  # --resume: the run's own settings
    if sub is not None and any(action.dest == "recipe" for action in sub._actions):
        apply_recipe(sub, argv, path)  # under --config and the flags, which override it
    if path is not None and sub is not None:
        apply_config_file(sub, path)
    args = parser.parse_args(argv)
    if getattr(args, "config", None) != given:  # an abbreviation the first look did not see
        raise CommandLineError(sub.prog if sub else PROG, "write --config in full")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``trl-env`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv
    prog, kept = PROG, ""
    try:
        parser = build_parser()
        args = parse_command_line(parser, argv)
        if args.command is None:
            parser.print_help()
            return 0
        prog, kept = f"{PROG} {args.command}", getattr(args, "on_interrupt", "")
        debug = debug or bool(getattr(args, "debug", False))
        return int(args.func(args))
    except CommandLineError as error:
        return report(error, error.prog, debug=False)
    except SystemExit as exit_:  # --help, --version
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except BrokenPipeError:  # `trl-env list | head`: stop quietly, as other commands do
        import os

        # Point stdout at devnull so that the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (Exception, KeyboardInterrupt) as error:
        return report(error, prog, debug=debug, kept=kept)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
