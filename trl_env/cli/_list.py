"""``trl-env list``: every trl-env ID of ``gym.registry``, with a one-line description.

Everything comes from the spec and its entry point's class (:mod:`trl_env.envs`): no env is made, and
neither reasoning-gym nor TextArena is imported.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from gymnasium.envs.registration import EnvSpec

from trl_env.cli._common import Formatter
from trl_env.envs import SOURCES, env_description, env_has_oracle, env_source, env_specs

__all__ = ["add_parser"]


def _row(spec: EnvSpec) -> dict[str, Any]:
    """What ``list`` shows of one registered ID, from its spec and class (never made)."""
    entry_point = spec.entry_point
    kwargs = {key: value for key, value in (spec.kwargs or {}).items() if key != "env"}
    return {
        "id": spec.id,
        "description": env_description(spec),
        "entry_point": entry_point if isinstance(entry_point, str) else repr(entry_point),
        "max_episode_steps": spec.max_episode_steps,
        "kwargs": json.loads(json.dumps(kwargs, default=repr)),  # tuples as lists, objects as repr
        "source": env_source(spec),
        "oracle": env_has_oracle(spec),
    }


def run(args: argparse.Namespace) -> int:
    rows = [_row(spec) for spec in env_specs(args.source)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max((len(row["id"]) for row in rows), default=2)
    for row in rows:
        mark = "  [oracle]" if args.oracles and row["oracle"] else ""
        source = "" if row["source"] == "catalogue" else f"[{row['source']}] "
        print(f"{row['id']:<{width}}  {source}{row['description']}{mark}")
    return 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``list`` on the ``commands`` subparsers."""
    p = commands.add_parser(
        "list",
        parents=parents,
        formatter_class=Formatter,
        help="list the registered environment IDs with a one-line description",
        description="List every registered text environment ID with a one-line description:\n"
        "the trl-env catalogue, the bridged catalogues (reasoning-gym, TextArena), then any\n"
        "other env registered through trl-env.",
        epilog="examples:\n  trl-env list\n  trl-env list --oracles\n  trl-env list --json\n"
        "  trl-env list --source textarena",
    )
    p.add_argument(
        "--source",
        choices=SOURCES,
        default=None,
        help="only the envs of one source: the trl-env catalogue, a bridged catalogue "
        "(reasoning-gym, textarena; each needs its extra to be made), or other envs "
        "registered through trl-env",
    )
    p.add_argument("--json", action="store_true", help="print JSON (id, description, ...)")
    p.add_argument(
        "--oracles", action="store_true", help="mark the envs that have an oracle policy"
    )
    p.set_defaults(func=run)
