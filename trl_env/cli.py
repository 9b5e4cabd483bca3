"""The ``trl-env`` command line: list, play, evaluate and train on text environments.

``trl-env list`` and ``trl-env play`` need only the base install (gymnasium, numpy);
``trl-env eval --policy <model>`` and ``trl-env train`` need ``pip install "trl-env[trl]"``, imported
only when those run. Errors are one line on stderr (``--debug`` adds the traceback); the exit
status is 0 on success, 2 for a usage error (a bad option, an unknown env ID, a model path that
does not exist, an env without an oracle), 1 for a runtime failure (a missing extra, no GPU for
vLLM, a model that fails to load), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

__all__ = ["build_parser", "main"]

PROG = "trl-env"

_DESCRIPTION = """\
Text environments for training LLM agents with reinforcement learning.

Every environment is a gymnasium env with text observations and text actions,
registered under an ID such as TextWordle-v0. Start with `trl-env list`, play a
game yourself with `trl-env play`, measure a policy with `trl-env eval`, and
train a model with GRPO with `trl-env train`."""

_EPILOG = """\
examples:
  trl-env list                                      # every environment ID, one line each
  trl-env play TextWordle-v0 --seed 3               # play Wordle in the terminal
  trl-env eval TextWordle-v0 --policy oracle --episodes 1000
  trl-env eval TextWordle-v0 TextMastermind-v0 --policy random --episodes 200 --out runs/random
  trl-env eval TextWordle-v0 --policy Qwen/Qwen3-0.6B --episodes 64 --out runs/qwen
  trl-env train --help                              # GRPO training options

Run `trl-env COMMAND --help` for the options of a command.
Exit status: 0 ok, 1 runtime failure, 2 usage error (see --help of each command)."""

_EVAL_EPILOG = """\
policies:
  random    a random legal-looking reply each turn (a random word for Wordle, ...)
  oracle    the environment's own solver (`trl-env list` shows which envs have one)
  MODEL     a local model directory or a Hugging Face Hub id; episodes are played
            in batches by the training rollout (needs: pip install "trl-env[trl]")

Episode i of every env plays seed S+i (S from --seed), whatever the policy, so
policies are compared on the same games. The table shows, per env: success rate,
mean return with its 95% confidence interval, mean turns, and the share of turns
whose reply the env rejected as invalid.

examples:
  trl-env eval TextWordle-v0 --policy oracle --episodes 1000
  trl-env eval TextWordle-v0 TextGuessNumber-v0 --policy random --episodes 500 --seed 7
  trl-env eval TextWordle-v0 --policy ./checkpoints/step-500 --episodes 64 \\
      --temperature 0 --max-new-tokens 128 --out runs/step-500

--out DIR writes DIR/results.json (settings and per-env statistics) and
DIR/transcripts.jsonl (one line per episode: seed, return, success, turns, transcript)."""

_PLAY_EPILOG = """\
Type your reply and press Enter; the environment answers. Type `quit` (or press
Ctrl-D) to stop. Replies can also be piped in, one per line:

  printf '[crane]\\n[slate]\\n' | trl-env play TextWordle-v0 --seed 0"""


class _UsageExit(Exception):
    """Raised instead of argparse's print-and-exit, so ``main`` prints one line."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (with a pointer to ``--help``)."""

    def error(self, message: str) -> NoReturn:
        raise _UsageExit(self.prog, f"{message} (see '{self.prog} --help')")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)


def _number_at_least(
    convert: Callable[[str], Any], minimum: float, expected: str
) -> Callable[[str], Any]:
    """An argparse ``type`` that converts with ``convert`` and rejects values below ``minimum``."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if not value >= minimum:  # `not >=` also rejects nan
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


_positive_int = _number_at_least(int, 1, "a positive integer")
_seed = _number_at_least(int, 0, "an integer >= 0")
_temperature = _number_at_least(float, 0.0, "a number >= 0")


def _kwargs(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(
            f"expected a JSON object like '{{\"max_guesses\": 8}}', got {text!r} ({error.msg})"
        ) from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            f"expected a JSON object like '{{\"max_guesses\": 8}}', got {text!r}"
        )
    return value


# --- list ---------------------------------------------------------------------------------------


def _first_doc_line(obj: Any) -> str:
    doc = getattr(obj, "__doc__", None) or ""
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _env_rows(with_oracles: bool) -> list[dict[str, Any]]:
    """The catalogue's rows, then any other env registered through trl-env."""
    import gymnasium as gym

    import trl_env

    rows: list[dict[str, Any]] = []
    for entry in trl_env.REGISTRY:
        rows.append(
            {
                "id": entry.id,
                "description": entry.description,
                "entry_point": entry.entry_point,
                "max_episode_steps": entry.max_episode_steps,
                "kwargs": dict(entry.kwargs),
                "source": "catalogue",
            }
        )
    known = {entry.id for entry in trl_env.REGISTRY}
    for spec in gym.registry.values():
        if spec.id in known:
            continue
        entry_point = spec.entry_point
        inner = (spec.kwargs or {}).get("env") if isinstance(spec.kwargs, dict) else None
        module = (
            entry_point if isinstance(entry_point, str) else getattr(entry_point, "__module__", "")
        )
        if not (module or "").startswith("trl_env"):
            continue
        description = ""
        target = inner if entry_point == "trl_env.adapters:ProtocolToGymnasium" else entry_point
        if callable(target):
            description = _first_doc_line(target)
        elif isinstance(target, str):
            try:
                from trl_env.eval import _load

                description = _first_doc_line(_load(target))
            except Exception:  # a broken third-party entry point must not break `list`
                description = ""
        rows.append(
            {
                "id": spec.id,
                "description": description or "(registered with trl-env; no description)",
                "entry_point": entry_point if isinstance(entry_point, str) else repr(entry_point),
                "max_episode_steps": spec.max_episode_steps,
                "kwargs": _jsonable(
                    {k: v for k, v in (spec.kwargs or {}).items() if k not in ("env",)}
                ),
                "source": "registered",
            }
        )
    if with_oracles:
        from trl_env.eval import find_oracle

        for row in rows:
            try:
                row["oracle"] = find_oracle(row["id"]) is not None
            except Exception:
                row["oracle"] = False
    return rows


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


def _cmd_list(args: argparse.Namespace) -> int:
    rows = _env_rows(with_oracles=args.oracles or args.json)
    if args.json:
        print(json.dumps(rows, indent=2, default=repr))
        return 0
    width = max(len(row["id"]) for row in rows) if rows else 2
    for row in rows:
        mark = ""
        if args.oracles:
            mark = "  [oracle]" if row["oracle"] else ""
        print(f"{row['id']:<{width}}  {row['description']}{mark}")
    return 0


# --- play ---------------------------------------------------------------------------------------

# Only this exact word stops the game (a bracketed "[quit]" is still sent to the env as a reply).
_QUIT = "quit"


def _cmd_play(args: argparse.Namespace) -> int:
    import gymnasium as gym

    from trl_env.eval import _make_text_env, check_env_id

    check_env_id(args.env_id)
    env: gym.Env[str, str] = _make_text_env(args.env_id, args.env_kwargs or {})
    interactive = sys.stdin.isatty()
    prompt = "> " if interactive else ""
    try:
        observation, _ = env.reset(seed=args.seed)
        print(observation)
        if interactive:
            print("(type your reply and press Enter; `quit` or Ctrl-D to stop)")
        total, turns = 0.0, 0
        while True:
            try:
                line = input(prompt)
            except EOFError:
                if interactive:
                    print()
                print(f"Stopped after {turns} turn{'s' if turns != 1 else ''}; return {total:g}.")
                return 0
            if line.strip().lower() == _QUIT:
                print(f"Stopped after {turns} turn{'s' if turns != 1 else ''}; return {total:g}.")
                return 0
            observation, reward, terminated, truncated, info = env.step(line)
            total += float(reward)
            turns += 1
            print(observation)
            print(f"[reward {float(reward):+g}, return {total:g}]")
            if terminated or truncated:
                how = "terminated" if terminated else "truncated (turn limit)"
                print(
                    f"Episode over ({how}) after {turns} turn{'s' if turns != 1 else ''}; "
                    f"return {total:g}."
                )
                return 0
    finally:
        env.close()


# --- eval ---------------------------------------------------------------------------------------


def _cmd_eval(args: argparse.Namespace) -> int:
    from trl_env.eval import ModelOptions, evaluate, format_table, write_outputs

    options = ModelOptions(
        max_new_tokens=args.max_new_tokens,
        max_completion_length=args.max_completion_length,
        temperature=args.temperature,
        batch_size=args.batch_size,
        system_prompt=args.system_prompt,
        use_vllm=args.use_vllm,
    )
    if args.max_new_tokens > args.max_completion_length:
        raise _UsageExit(
            f"{PROG} eval",
            f"--max-new-tokens ({args.max_new_tokens}) is larger than --max-completion-length "
            f"({args.max_completion_length}) (see '{PROG} eval --help')",
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
    )
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(format_table(report))
    if args.out is not None:
        results, transcripts = write_outputs(report, args.out)
        print(f"wrote {results} and {transcripts}", file=sys.stderr)
    return 0


# --- train --------------------------------------------------------------------------------------

_TRAIN_MODULE = "trl_env.trl.train"


def _load_train_module() -> Any:
    """``trl_env.trl.train`` (imported only when ``train`` runs), or a one-line error."""
    import importlib

    from trl_env.error import Error, MissingExtraError

    try:
        return importlib.import_module(_TRAIN_MODULE)
    except MissingExtraError:
        raise
    except ModuleNotFoundError as error:
        if error.name in (_TRAIN_MODULE, "trl_env.trl"):
            raise Error(
                f"the train command is not available in this installation ({_TRAIN_MODULE} "
                "is missing); reinstall trl-env"
            ) from error
        raise MissingExtraError("trl", "trl-env train", error.name or "trl") from None


def _cmd_train(args: argparse.Namespace) -> int:
    module = args.train_module or _load_train_module()
    return int(module.run(args) or 0)


# --- parser -------------------------------------------------------------------------------------


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

    debug = _Parser(add_help=False)
    debug.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help="on error, show the full traceback",
    )
    parser = _Parser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--debug", action="store_true", default=False, help="on error, show the full traceback"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    # list
    p = commands.add_parser(
        "list",
        parents=[debug],
        formatter_class=_Formatter,
        help="list the registered environment IDs with a one-line description",
        description="List every registered text environment ID with a one-line description:\n"
        "the trl-env catalogue, then any other env registered through trl-env.",
        epilog="examples:\n  trl-env list\n  trl-env list --oracles\n  trl-env list --json",
    )
    p.add_argument("--json", action="store_true", help="print JSON (id, description, ...)")
    p.add_argument(
        "--oracles", action="store_true", help="mark the envs that have an oracle policy"
    )
    p.set_defaults(func=_cmd_list)

    # play
    p = commands.add_parser(
        "play",
        parents=[debug],
        formatter_class=_Formatter,
        help="play an environment yourself in the terminal",
        description="Play an environment yourself: the game's messages are printed, you type\n"
        "the replies. The reward of each step and the return so far are shown.",
        epilog=_PLAY_EPILOG,
    )
    p.add_argument("env_id", metavar="ID", help="environment ID (see `trl-env list`)")
    p.add_argument("--seed", type=_seed, default=None, help="seed of the game (default: random)")
    p.add_argument(
        "--env-kwargs",
        type=_kwargs,
        default=None,
        metavar="JSON",
        help="gym.make keyword arguments, e.g. '{\"max_guesses\": 8}'",
    )
    p.set_defaults(func=_cmd_play)

    # eval
    p = commands.add_parser(
        "eval",
        parents=[debug],
        formatter_class=_Formatter,
        help="evaluate a policy (random, oracle or a model) on environments",
        description="Evaluate a policy on one or more environments and print a table of results.",
        epilog=_EVAL_EPILOG,
    )
    p.add_argument("env_ids", nargs="+", metavar="ID", help="environment IDs (see `trl-env list`)")
    p.add_argument(
        "--policy",
        required=True,
        metavar="POLICY",
        help="random, oracle, or a model directory / Hugging Face Hub id",
    )
    p.add_argument(
        "--episodes", type=_positive_int, default=100, metavar="N", help="episodes per env (100)"
    )
    p.add_argument(
        "--seed", type=_seed, default=0, metavar="S", help="seed of the first episode (0)"
    )
    p.add_argument(
        "--out", default=None, metavar="DIR", help="write results.json and transcripts.jsonl here"
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON, not a table")
    p.add_argument(
        "--env-kwargs",
        type=_kwargs,
        default=None,
        metavar="JSON",
        help="gym.make keyword arguments for every env, e.g. '{\"max_guesses\": 8}'",
    )
    p.add_argument(
        "--max-turns",
        type=_positive_int,
        default=None,
        metavar="N",
        help="end an episode after N turns (default: the env's own limit)",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    model = p.add_argument_group("model policies")
    model.add_argument(
        "--batch-size",
        type=_positive_int,
        default=16,
        metavar="N",
        help="episodes played together, one generation call per turn (16)",
    )
    model.add_argument(
        "--max-new-tokens",
        type=_positive_int,
        default=256,
        metavar="N",
        help="tokens the model may sample per turn (256)",
    )
    model.add_argument(
        "--max-completion-length",
        type=_positive_int,
        default=4096,
        metavar="N",
        help="tokens of a whole episode after the prompt (4096)",
    )
    model.add_argument(
        "--temperature",
        type=_temperature,
        default=None,
        metavar="T",
        help="sampling temperature, 0 for greedy (default: the model's generation config)",
    )
    model.add_argument(
        "--system-prompt",
        default=None,
        metavar="TEXT",
        help="system message of every episode ('' for none; default: the rollout's)",
    )
    model.add_argument(
        "--use-vllm", action="store_true", help="generate with vLLM (needs a CUDA GPU)"
    )
    p.set_defaults(func=_cmd_eval)

    # train: options come from trl_env.trl.train, imported only when `train` runs.
    p = commands.add_parser(
        "train",
        parents=[debug],
        formatter_class=_Formatter,
        help='train a model with GRPO on environments (needs: pip install "trl-env[trl]")',
        description="Train a model with TRL's GRPOTrainer on text environments.",
        conflict_handler="resolve",  # the train module may define --debug itself
    )
    module = None
    if _command_of(argv) == "train":
        module = _load_train_module()
        module.add_arguments(p)
    p.set_defaults(func=_cmd_train, train_module=module)
    return parser


def _error_line(prog: str, message: str) -> str:
    return f"{prog}: error: {' '.join(str(message).split())}"


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
    except _UsageExit as error:
        print(_error_line(error.prog, str(error)), file=sys.stderr)
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
        print(_error_line(prog, message), file=sys.stderr)
        return 2 if isinstance(error, UsageError) else 1


def _is_ours(error: BaseException) -> bool:
    from trl_env.error import Error

    return isinstance(error, Error)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
