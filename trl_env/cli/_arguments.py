"""Command-line options generated from a config dataclass, as TRL's ``TrlParser`` does.

Each field becomes one option: ``--field-name`` (or the field's ``flag`` metadata), its
``aliases``, its ``help`` and its type: ``bool`` fields are switches (``--lora``; a field whose
default is ``True`` becomes ``--no-<name>``, one whose default is ``None`` gets both), ``dict``
fields take JSON, fields with a ``positional`` metadata are positional arguments (a ``list``
takes one or more), ``X | None`` takes an ``X``. Nothing is written by hand, so the options and
the Python API cannot drift apart.

Example:
    >>> import argparse
    >>> from trl_env.trl.training.config import TrainConfig
    >>> parser = argparse.ArgumentParser()
    >>> add_config_arguments(parser, TrainConfig)
    >>> args = parser.parse_args(["TextLargestNumber-v0", "--lr", "0.01", "--no-plot"])
    >>> config = config_from_namespace(TrainConfig, args)
    >>> config.learning_rate, config.plot
    (0.01, False)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import types
import typing
from typing import Any

__all__ = ["add_config_arguments", "config_from_namespace"]


def _base_type(annotation: Any) -> Any:
    """``int`` for ``int | None``, ``list`` for ``list[str]``, ..."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return _base_type(args[0])
    return typing.get_origin(annotation) or annotation


def _flag(field: dataclasses.Field[Any]) -> str:
    return str(field.metadata.get("flag") or "--" + field.name.replace("_", "-"))


def _default_text(field: dataclasses.Field[Any]) -> str:
    if field.default is dataclasses.MISSING or field.default is None:
        return ""
    return f" (default: {field.default})"


def add_config_arguments(parser: argparse.ArgumentParser, config_class: type) -> None:
    """Add one option per field of the dataclass ``config_class`` to ``parser``.

    Every option's ``dest`` is the field name and its default the field's (``None`` for a
    ``default_factory``, which :func:`config_from_namespace` then leaves to the dataclass).
    """
    hints = typing.get_type_hints(config_class)
    for field in dataclasses.fields(config_class):
        meta = field.metadata
        if "help" not in meta:
            continue
        kind = _base_type(hints[field.name])
        if "positional" in meta:
            nargs = "+" if kind is list else None  # a list: one or more; else exactly one
            parser.add_argument(
                field.name, nargs=nargs, metavar=meta["positional"], help=meta["help"]
            )
            continue
        names = [_flag(field), *meta.get("aliases", [])]
        if kind is bool:
            if field.default is None:  # three states: --x, --no-x, or left to the config
                parser.add_argument(
                    *names,
                    dest=field.name,
                    action=argparse.BooleanOptionalAction,
                    default=None,
                    help=meta["help"],
                )
            elif field.default is True:
                names = ["--no-" + name.removeprefix("--") for name in names]
                # The help describes the field (what is on by default); the flag turns it off.
                text = "Turn off: " + meta["help"][:1].lower() + meta["help"][1:]
                parser.add_argument(
                    *names, dest=field.name, action="store_false", default=True, help=text
                )
            else:
                parser.add_argument(*names, dest=field.name, action="store_true", help=meta["help"])
            continue
        default = None if field.default is dataclasses.MISSING else field.default
        options: dict[str, Any] = {
            "dest": field.name,
            "default": default,
            "help": meta["help"] + _default_text(field),
        }
        if "choices" in meta:
            options["choices"] = meta["choices"]
        if kind in (int, float):
            options["type"] = kind
            options["metavar"] = "N" if kind is int else "X"
        if kind is dict:
            options["metavar"] = "JSON"
        parser.add_argument(*names, **options)


def config_from_namespace(config_class: type, args: argparse.Namespace) -> Any:
    """An instance of ``config_class`` from parsed :func:`add_config_arguments` options.

    Raises:
        ValueError: For a bad value (the config's own check); malformed JSON for a ``dict``
            field is a :class:`~trl_env.error.UsageError`, which names the option.
    """
    hints = typing.get_type_hints(config_class)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(config_class):
        if "help" not in field.metadata or not hasattr(args, field.name):
            continue
        value = getattr(args, field.name)
        if value is None:
            continue  # not given: the dataclass default
        if _base_type(hints[field.name]) is dict and isinstance(value, str):
            value = _json_object(_flag(field), value)
        values[field.name] = value
    return config_class(**values)


def _json_object(flag: str, text: str) -> dict[str, Any]:
    from trl_env.error import UsageError  # a ValueError: the command exits 2, as for bad options

    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{flag} is not valid JSON ({error}): {text!r}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{flag} must be a JSON object, got {text!r}")
    return value
