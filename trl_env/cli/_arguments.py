"""Command-line options generated from a config dataclass, and ``--config FILE.yaml``, as TRL's
``TrlParser`` does.

Each field becomes one option: ``--field-name`` (or the field's ``flag`` metadata), its
``aliases``, its ``help`` and its type: ``bool`` fields are switches with both spellings
(``--lora``/``--no-lora``; a default of ``None`` means "decide for me"), ``dict`` fields take
JSON, fields with a ``positional`` metadata are positional arguments (a ``list`` takes one or
more), ``X | None`` takes an ``X``, and ``min``/``above`` bound a number (see
:mod:`trl_env._configs` for every metadata key). Nothing is written by hand, so the options and
the Python API cannot drift apart.

``--config FILE`` (:func:`add_config_file_option`, read by :func:`apply_config_file` before the
command line is parsed) takes a YAML mapping whose keys are the option names (the config's field
names); its values become the options' defaults, so flags given on the command line override
them. Unknown keys and values of the wrong type are refused, naming the valid keys.

Example:
    >>> import argparse
    >>> from trl_env.trl.training._config import TrainConfig
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
import difflib
import json
import types
import typing
from collections.abc import Sequence
from typing import Any

from trl_env.cli._common import Parser, number
from trl_env.error import CommandLineError, UsageError

__all__ = [
    "add_config_arguments",
    "add_config_file_option",
    "apply_config_file",
    "apply_config_values",
    "config_file_in",
    "config_from_namespace",
]

_FILE_VALUES = "_config_file_values"
"""Namespace attribute: the values a ``--config`` file gave (a ``None`` there is meant)."""


def _base_type(annotation: Any) -> Any:
    """``int`` for ``int | None``, ``list`` for ``list[str]``, ..."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return _base_type(args[0])
    return typing.get_origin(annotation) or annotation


def _flag(field: dataclasses.Field[Any]) -> str:
    return str(field.metadata.get("flag") or "--" + field.name.replace("_", "-"))


def _default_text(field: dataclasses.Field[Any]) -> str:
    if field.default in (dataclasses.MISSING, None, "") or field.metadata.get("required"):
        return ""
    return f" (default: {field.default})"


class _Switch(argparse.BooleanOptionalAction):
    """``--x``/``--no-x``, with the help as written (argparse 3.11 appends its own default)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        text = kwargs.pop("help", None)
        super().__init__(option_strings, dest, **kwargs)
        self.help = text


class _JsonOption(argparse.Action):
    """An option that takes a JSON object (a ``--config`` file may give the mapping itself)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, values)


def add_config_arguments(parser: argparse.ArgumentParser, config_class: type) -> None:
    """Add one option per field of the dataclass ``config_class`` to ``parser``.

    Every option's ``dest`` is the field name and its default the field's (``None`` for a
    ``default_factory``, which :func:`config_from_namespace` then leaves to the dataclass).
    Fields with a ``group`` metadata go to an argument group of that title.
    """
    hints = typing.get_type_hints(config_class)
    groups: dict[str, Any] = {}
    for field in dataclasses.fields(config_class):
        meta = field.metadata
        if "help" not in meta:
            continue
        target: Any = parser
        if "group" in meta:
            target = groups.get(meta["group"]) or parser.add_argument_group(meta["group"])
            groups[meta["group"]] = target
        _add_field(target, field, _base_type(hints[field.name]))


def _add_field(target: Any, field: dataclasses.Field[Any], kind: Any) -> None:
    meta = field.metadata
    if "positional" in meta:
        if meta.get("optional"):  # may be left out: zero or more, or zero or one
            nargs: str | None = "*" if kind is list else "?"
        else:
            nargs = "+" if kind is list else None  # a list: one or more; else exactly one
        target.add_argument(field.name, nargs=nargs, metavar=meta["positional"], help=meta["help"])
        return
    names = [_flag(field), *meta.get("aliases", [])]
    default = None if field.default is dataclasses.MISSING else field.default
    if kind is bool:
        state = {True: " (default: on)", False: " (default: off)", None: ""}[default]
        target.add_argument(
            *names, dest=field.name, action=_Switch, default=default, help=meta["help"] + state
        )
        return
    options: dict[str, Any] = {
        "dest": field.name,
        "default": default,
        "help": meta["help"] + _default_text(field),
    }
    for key in ("choices", "required", "metavar"):
        if key in meta:
            options[key] = meta[key]
    if kind in (int, float):
        options["type"] = number(kind, least=meta.get("min"), above=meta.get("above"))
        options.setdefault("metavar", "N" if kind is int else "X")
    if kind is dict:
        options.setdefault("metavar", "JSON")
        options["action"] = _JsonOption
    target.add_argument(*names, **options)


def config_from_namespace(config_class: type, args: argparse.Namespace) -> Any:
    """An instance of ``config_class`` from parsed :func:`add_config_arguments` options.

    An option left at ``None`` leaves the field to the dataclass default, unless a ``--config``
    file set it to ``null`` (then the field is ``None``, as the file says).

    Raises:
        UsageError: For a bad value (the config's own check, or malformed JSON for a ``dict``
            field, naming the option); the command exits 2.
    """
    hints = typing.get_type_hints(config_class)
    from_file = getattr(args, _FILE_VALUES, {})
    values: dict[str, Any] = {}
    for field in dataclasses.fields(config_class):
        if "help" not in field.metadata or not hasattr(args, field.name):
            continue
        value = getattr(args, field.name)
        if value is None and not (field.name in from_file and from_file[field.name] is None):
            continue  # not given: the dataclass default
        if _base_type(hints[field.name]) is dict and isinstance(value, str):
            value = _json_object(_flag(field), value)
        values[field.name] = value
    try:
        return config_class(**values)
    except UsageError:
        raise
    except ValueError as error:  # a config's own check: a value the command cannot use
        raise UsageError(str(error)) from error


def _json_object(flag: str, text: str) -> dict[str, Any]:
    example = "expected a JSON object like '{\"max_guesses\": 8}'"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(f"{flag} is not valid JSON ({error}): {example}, got {text!r}") from None
    if not isinstance(value, dict):
        raise UsageError(f"{flag} must be a JSON object ({example}), got {text!r}")
    return value


# --------------------------------------------------------------------------- --config FILE.yaml


def add_config_file_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--config FILE`` (read by :func:`apply_config_file` before parsing)."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help="Read the settings from a YAML file whose keys are this command's option names "
        "with underscores (max_new_tokens_per_turn: 64, env_ids: [TextWordle-v0], ...); options "
        "on the command line override it.",
    )


def config_file_in(argv: Sequence[str], prog: str) -> str | None:
    """The ``FILE`` of ``--config FILE`` (or ``--config=FILE``) in ``argv``, if any."""
    scan = Parser(prog=prog, add_help=False, allow_abbrev=False)
    scan.add_argument("--config", default=None)
    known, _ = scan.parse_known_args(list(argv))
    return typing.cast(str | None, known.config)


def _settable(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The actions a config file may set, by ``dest`` (not --help, --config, --debug)."""
    skip = {"help", "config", "debug", "version", argparse.SUPPRESS}
    return {action.dest: action for action in parser._actions if action.dest not in skip}


def apply_config_file(parser: argparse.ArgumentParser, path: str) -> dict[str, Any]:
    """Make the values of the YAML file ``path`` the defaults of ``parser``'s options.

    Options given on the command line then override the file. A positional argument the file
    gives (``env_ids``) may be left out of the command line.

    Returns:
        The checked values, by option name.

    Raises:
        CommandLineError: The file cannot be read, has a key that is no option of the command
            (the message lists the valid keys), or a value of the wrong type.
    """
    from trl_env._configs import read_yaml_mapping

    try:
        values = read_yaml_mapping(path)
    except ValueError as error:
        raise CommandLineError(parser.prog, f"--config: {error}") from None
    return apply_config_values(parser, values, f"--config {path}")


def apply_config_values(
    parser: argparse.ArgumentParser, values: dict[str, Any], origin: str
) -> dict[str, Any]:
    """Make ``values`` (by option name) the defaults of ``parser``'s options, as
    :func:`apply_config_file` does for a file; ``origin`` names them in errors
    (``"--config FILE"``, ``"--recipe NAME"``). Called again, later values win.

    Returns:
        The checked values, by option name.

    Raises:
        CommandLineError: A key is no option of the command, or a value has the wrong type.
    """
    prog = parser.prog
    path = origin
    actions = _settable(parser)
    unknown = sorted(set(values) - set(actions))
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(actions), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise CommandLineError(
            prog,
            f"{path}: unknown setting{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(map(repr, unknown))}{hint}; the valid keys are: "
            f"{', '.join(sorted(actions))}",
        )
    for key, value in list(values.items()):
        action = actions[key]
        try:
            values[key] = _checked(action, value)
        except (TypeError, ValueError, argparse.ArgumentTypeError) as error:
            raise CommandLineError(prog, f"{path}: {key}: {error}") from None
        action.default, action.required = values[key], False
        if not action.option_strings:  # a positional the file gives may be left out
            action.nargs = (
                "*" if action.nargs == "+" else "?" if action.nargs is None else action.nargs
            )
    earlier = parser.get_default(_FILE_VALUES) or {}
    parser.set_defaults(**{_FILE_VALUES: {**earlier, **values}})
    return values


def _checked(action: argparse.Action, value: Any) -> Any:
    """``value`` from a config file, checked (and converted) as the option would check it."""
    if value is None:
        return None  # the default of the setting (or None, for a setting that may be None)
    if isinstance(action, argparse.BooleanOptionalAction | argparse._StoreConstAction):
        if not isinstance(value, bool):
            raise TypeError(f"expected true or false, got {value!r}")
        return value
    if action.nargs in ("+", "*"):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise TypeError(f"expected a list of strings, got {value!r}")
        return items
    if isinstance(action, _JsonOption) and isinstance(value, dict):
        return value
    if isinstance(value, bool | list | dict):
        raise TypeError(f"expected {action.metavar or 'a value'}, got {value!r}")
    if callable(action.type):
        value = action.type(str(value))
    elif not isinstance(value, str):
        raise TypeError(f"expected text, got {value!r} (quote it)")
    if action.choices is not None and value not in action.choices:
        raise ValueError(f"expected one of {', '.join(map(str, action.choices))}, got {value!r}")
    return value
