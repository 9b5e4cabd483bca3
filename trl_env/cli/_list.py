"""``trl-env list``: every registered text environment ID with a one-line description."""

from __future__ import annotations

import argparse
import json
from typing import Any

from trl_env.cli._common import Formatter

__all__ = ["add_parser"]

_SOURCES = ("catalogue", "reasoning-gym", "textarena", "registered")


def _first_doc_line(obj: Any) -> str:
    doc = getattr(obj, "__doc__", None) or ""
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _env_rows(with_oracles: bool, source: str | None = None) -> list[dict[str, Any]]:
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
    from trl_env.envs.bridges import catalogue_rows

    for row in catalogue_rows():  # from static tables: imports no bridged library
        rows.append(
            {
                "id": row["id"],
                "description": row["description"],
                "entry_point": row["entry_point"],
                "max_episode_steps": row["max_episode_steps"],
                "kwargs": _jsonable(row["kwargs"]),
                "source": row["source"],
                "oracle": row["has_oracle"],
            }
        )
    known = {row["id"] for row in rows}
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
    if source is not None:
        rows = [row for row in rows if row["source"] == source]
    if with_oracles:
        from trl_env.eval import find_oracle

        for row in rows:
            if "oracle" in row:  # a bridged row knows it without making (importing) the env
                continue
            try:
                row["oracle"] = find_oracle(row["id"]) is not None
            except Exception:
                row["oracle"] = False
    return rows


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr))


def run(args: argparse.Namespace) -> int:
    rows = _env_rows(with_oracles=args.oracles or args.json, source=args.source)
    if args.json:
        print(json.dumps(rows, indent=2, default=repr))
        return 0
    width = max(len(row["id"]) for row in rows) if rows else 2
    for row in rows:
        mark = ""
        if args.oracles:
            mark = "  [oracle]" if row["oracle"] else ""
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
        choices=_SOURCES,
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
