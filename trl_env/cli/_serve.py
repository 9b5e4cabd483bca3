"""``trl-env serve``: run a registered text env as an OpenEnv server (one session per episode),
or write it as a standalone OpenEnv environment directory (``--export DIR``).

Its options are generated from :class:`ServeConfig`; ``python -m trl_env.openenv serve ...`` is
this same command. openenv-core (``pip install "trl-env[openenv]"``) is imported only when it
runs.

Example:
    >>> config = ServeConfig("TextWordle-v0", port=8001)
    >>> (config.host, config.port, config.max_sessions, config.max_action_chars)
    ('127.0.0.1', 8001, 256, 1048576)
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from trl_env._configs import env_kwargs_field
from trl_env.cli._arguments import (
    add_config_arguments,
    add_config_file_option,
    config_from_namespace,
)
from trl_env.cli._common import Formatter
from trl_env.error import UsageError

__all__ = ["ServeConfig", "add_parser"]

_EXPORT = "export (instead of serving here)"

_LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


@dataclass
class ServeConfig:
    """Settings of ``trl-env serve`` (every option of the command is one field)."""

    env_id: str = field(
        default="",
        metadata={
            "help": "A registered text env ID, for example TextWordle-v0 (see `trl-env list`).",
            "positional": "ENV_ID",
        },
    )
    host: str = field(
        default="127.0.0.1", metadata={"help": "Interface to listen on (0.0.0.0: all)."}
    )
    port: int = field(default=8000, metadata={"help": "TCP port.", "min": 1})
    env_kwargs: dict[str, Any] = env_kwargs_field("gym.make kwargs of every session, as JSON.")
    max_sessions: int = field(
        default=256, metadata={"help": "Concurrent sessions (episodes) at most.", "min": 1}
    )
    max_action_chars: int = field(
        default=1_048_576,
        metadata={
            "help": "Longest action (reply) passed to the env, in characters; a longer one is "
            "answered with an error and the env is not stepped.",
            "min": 1,
        },
    )
    log_level: str = field(
        default="warning",
        metadata={
            "help": "uvicorn's log level (info: also one line per client that left without a "
            "close message).",
            "choices": _LOG_LEVELS,
        },
    )
    export: str | None = field(
        default=None,
        metadata={
            "help": "Write ENV_ID as a standalone OpenEnv environment directory DIR and exit "
            "(openenv validate, openenv build and openenv push work on it).",
            "metavar": "DIR",
            "group": _EXPORT,
        },
    )
    lock: bool = field(
        default=True,
        metadata={"help": "Run 'uv lock' in the exported directory.", "group": _EXPORT},
    )
    overwrite: bool = field(
        default=False, metadata={"help": "Replace an earlier export.", "group": _EXPORT}
    )

    def __post_init__(self) -> None:
        if not self.env_id:
            raise UsageError("name the env to serve, e.g. TextWordle-v0 (see `trl-env list`)")


def _export(config: ServeConfig) -> int:
    """Write the OpenEnv directory ``config.export`` and say what to do with it."""
    from trl_env.error import Error
    from trl_env.openenv._export import export_openenv_dir, package_name

    try:
        out = export_openenv_dir(
            config.env_id,
            config.export or ".",
            env_kwargs=config.env_kwargs,
            max_sessions=config.max_sessions,
            lock=config.lock,
            overwrite=config.overwrite,
        )
    except Error as error:
        if isinstance(error, UsageError):
            raise
        raise UsageError(f"cannot export {config.env_id}: {error}") from error
    where = out.resolve()
    print(f"wrote the OpenEnv environment {where} for {config.env_id}. Next:")
    if not config.lock:
        print(f"  (cd {where} && uv lock)   # needed by openenv validate/build/push")
    print(f"  uv run --project {where} server --port {config.port}   # serve it here")
    print(f"  openenv validate {where}")
    print(f"  openenv build {where} -t openenv-{package_name(config.env_id)}   # a Docker image")
    print(f"  openenv push {where}   # a Hugging Face Space")
    return 0


def run(args: argparse.Namespace) -> int:
    """Serve the env until interrupted, or export it (``--export DIR``)."""
    config: ServeConfig = config_from_namespace(ServeConfig, args)
    if config.export is not None:
        return _export(config)
    from trl_env._checks import check_text_env

    # A bad ID or kwargs is a usage error with gymnasium's "Did you mean", before openenv loads.
    check_text_env(config.env_id, config.env_kwargs, argument="--env-kwargs")
    from trl_env.openenv._server import serve

    serve(
        config.env_id,
        host=config.host,
        port=config.port,
        env_kwargs=config.env_kwargs,
        max_sessions=config.max_sessions,
        max_action_chars=config.max_action_chars,
        log_level=config.log_level,
    )
    return 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``serve`` on the ``commands`` subparsers (its options: :class:`ServeConfig`)."""
    p = commands.add_parser(
        "serve",
        parents=parents,
        formatter_class=Formatter,
        help='serve an environment over OpenEnv (needs: pip install "trl-env[openenv]")',
        description="Run a registered text env as an OpenEnv server: one session per episode,\n"
        "many sessions at once, for TRL's OpenEnv integration and any OpenEnv client\n"
        '(gym.make("OpenEnv-v0", base_url=URL) here). See docs/slow_envs.md.',
    )
    add_config_arguments(p, ServeConfig)
    add_config_file_option(p)
    p.set_defaults(func=run, on_interrupt="the server stopped")
