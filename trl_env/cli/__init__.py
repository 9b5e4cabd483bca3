"""The ``trl-env`` command line: list, play, evaluate and train on text environments.

One module per command (``_list``, ``_play``, ``_eval``, ``_train``, ``_replay``, ``_serve``,
...); this one builds the parser and runs a command. ``trl-env list``, ``play`` and ``replay``
need only the base install (gymnasium, numpy); ``trl-env eval --policy <model>`` and
``trl-env train`` need
``pip install "trl-env[trl]"`` and ``trl-env serve`` needs ``pip install "trl-env[openenv]"``,
imported only when those run. Errors are one line on stderr
(``--debug`` adds the traceback); the exit status is 0 on success, 2 for a usage error (a bad
option, an unknown env ID, a model path that does not exist, an env without an oracle), 1 for a
runtime failure (a missing extra, no GPU for vLLM, a model that fails to load), 130 when
interrupted.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from trl_env.cli import _check, _demos, _eval, _list, _play, _replay, _serve, _sft, _train
from trl_env.cli._common import PROG, CommandLineError, Formatter, Parser, error_line

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
  trl-env demos TextTicTacToe-v0 --policy oracle --out demos/ttt  # oracle episodes as SFT data
  trl-env sft TextTicTacToe-v0 --model M --lora --demos demos/ttt  # warm start on them
  trl-env replay runs/ttt --worst                   # the worst episodes a run saved
  trl-env serve TextWordle-v0 --port 8000           # an OpenEnv server, one session per episode

Run `trl-env COMMAND --help` for the options of a command.
Exit status: 0 ok, 1 runtime failure, 2 usage error (see --help of each command)."""


def _command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not a global option)."""
    for token in argv:
        if token == "--":
            return None
        if not token.startswith("-"):
            return token
    return None


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The ``trl-env`` parser. ``train``'s options are added only when ``argv`` runs ``train``
    (they come from ``trl_env.trl.train``, which imports torch)."""
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

    _list.add_parser(commands, [debug])
    _check.add_parser(commands, [debug])
    _play.add_parser(commands, [debug])
    _eval.add_parser(commands, [debug])
    _train.add_parser(commands, [debug], load=_command_of(argv) == "train")
    _demos.add_parser(commands, [debug])
    _sft.add_parser(commands, [debug], load=_command_of(argv) == "sft")
    _replay.add_parser(commands, [debug])
    _serve.add_parser(commands, [debug])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``trl-env`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv
    prog = PROG
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        prog = f"{PROG} {args.command}"
        debug = debug or bool(getattr(args, "debug", False))
        return int(args.func(args))
    except CommandLineError as error:
        print(error_line(error.prog, str(error)), file=sys.stderr)
        return 2
    except SystemExit as exit_:  # --help, --version
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `trl-env list | head`: stop quietly, as other commands do
        import os

        # Point stdout at devnull so that the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:
        from trl_env.error import MissingExtraError
        from trl_env.eval import UsageError

        if debug:
            traceback.print_exc()
        message = str(error) or type(error).__name__
        if not isinstance(error, UsageError | MissingExtraError) and not _is_ours(error):
            message = f"{type(error).__name__}: {message}"
        print(error_line(prog, message), file=sys.stderr)
        return 2 if isinstance(error, UsageError) else 1


def _is_ours(error: BaseException) -> bool:
    from trl_env.error import Error

    return isinstance(error, Error)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
