"""``python -m trl_env.openenv serve ENV_ID --port N``: the command line of the OpenEnv server.

``trl-env serve`` runs the same :func:`main` (its arguments after ``serve``).

Example:
    >>> from trl_env.openenv.cli import build_parser
    >>> args = build_parser().parse_args(["serve", "TextWordle-v0", "--port", "8001"])
    >>> (args.env_id, args.port, args.host, args.max_sessions)
    ('TextWordle-v0', 8001, '127.0.0.1', 256)
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["add_serve_arguments", "build_parser", "main", "run_export", "run_serve"]


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON ({error}); example: '{{\"a\": 1}}'") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object, got {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``serve`` to ``parser`` (for ``trl-env serve`` as well)."""
    parser.add_argument("env_id", help="A registered text env ID, for example TextWordle-v0.")
    parser.add_argument(
        "--host", default="127.0.0.1", help="Interface (0.0.0.0: all) (default: 127.0.0.1)."
    )
    parser.add_argument(
        "--port", type=_positive_int, default=8000, help="TCP port (default: 8000)."
    )
    parser.add_argument(
        "--env-kwargs", type=_json_object, default={}, help="gym.make kwargs as a JSON object."
    )
    parser.add_argument(
        "--max-sessions",
        type=_positive_int,
        default=256,
        help="Concurrent sessions (episodes) at most (default: 256).",
    )
    parser.add_argument(
        "--log-level", default="warning", help="uvicorn's log level (default: warning)."
    )
    export = parser.add_argument_group(
        "export (instead of serving here)",
        "Write ENV_ID as a standalone OpenEnv environment directory\n(openenv validate, "
        "openenv build and openenv push work on it).",
    )
    export.add_argument("--export", metavar="DIR", help="Write the directory DIR and exit.")
    export.add_argument(
        "--no-lock", action="store_true", help="Skip 'uv lock' (run it in DIR yourself)."
    )
    export.add_argument("--overwrite", action="store_true", help="Replace an earlier export.")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m trl_env.openenv``."""
    parser = argparse.ArgumentParser(
        prog="python -m trl_env.openenv", description="Serve a trl-env text env over OpenEnv."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add_serve_arguments(commands.add_parser("serve", help="Serve ENV_ID over OpenEnv."))
    return parser


def run_export(args: argparse.Namespace) -> int:
    """Write the OpenEnv directory ``args.export``; an error prints one message and returns 2."""
    from trl_env.error import Error
    from trl_env.openenv.export import export_openenv_dir

    try:
        out = export_openenv_dir(
            args.env_id,
            args.export,
            env_kwargs=args.env_kwargs,
            max_sessions=args.max_sessions,
            lock=not args.no_lock,
            overwrite=args.overwrite,
        )
    except Error as error:
        print(f"trl-env serve: error: cannot export {args.env_id}: {error}", file=sys.stderr)
        return 2
    from trl_env.openenv.export import package_name

    where = out.resolve()
    print(f"wrote the OpenEnv environment {where} for {args.env_id}. Next:")
    if args.no_lock:
        print(f"  (cd {where} && uv lock)   # needed by openenv validate/build/push")
    print(f"  uv run --project {where} server --port {args.port}   # serve it here")
    print(f"  openenv validate {where}")
    print(f"  openenv build {where} -t openenv-{package_name(args.env_id)}   # a Docker image")
    print(f"  openenv push {where}   # a Hugging Face Space")
    return 0


def run_serve(args: argparse.Namespace) -> int:
    """Serve with parsed ``args``; a bad env ID or kwargs prints the error and returns 2."""
    import gymnasium as gym

    from trl_env.error import Error

    if getattr(args, "export", None) is not None:
        return run_export(args)
    from trl_env.openenv.server import serve

    try:
        serve(
            args.env_id,
            host=args.host,
            port=args.port,
            env_kwargs=args.env_kwargs,
            max_sessions=args.max_sessions,
            log_level=args.log_level,
        )
    except (gym.error.Error, Error, TypeError) as error:
        hint = " (see `trl-env list`)" if isinstance(error, gym.error.Error) else ""
        print(f"trl-env serve: error: cannot serve {args.env_id}: {error}{hint}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``) and run the command; returns the exit code."""
    return run_serve(build_parser().parse_args(argv))
