"""What the settings of every command share: one definition of each common field, and YAML files.

Every command's settings are a dataclass whose fields carry ``metadata={"help": ...}`` (TRL's
pattern); :mod:`trl_env.cli._arguments` makes the command's options from it. A setting that means
the same in several commands (the env IDs, ``env_kwargs``, ``max_turns``, the rollout's
``max_new_tokens_per_turn`` ...) is made by one factory here, so its name, default and option
spelling are written once. A field's ``metadata`` may also hold, for the command line:

* ``flag``/``aliases``: the option's spelling (default ``--field-name``) and other spellings;
* ``positional``: the metavar of a positional argument (a ``list`` field takes one or more,
  or with ``optional`` zero or more);
* ``required``, ``choices``, ``metavar``, ``group`` (the help section);
* ``min``/``above``: the smallest value allowed (inclusive / exclusive), checked on the command
  line and in a ``--config`` file.

:func:`config_to_yaml` and :func:`read_yaml_mapping` write and read a config as YAML, the file
``trl-env CMD --config FILE`` takes (its keys are the field names).

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Settings:
    ...     env_ids: list[str] = env_ids_field()
    ...     max_turns: int | None = max_turns_field()
    >>> print(config_to_yaml(Settings(["TextWordle-v0"])), end="")
    env_ids:
    - TextWordle-v0
    max_turns: null
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_NEW_TOKENS_PER_TURN",
    "check_count",
    "config_to_yaml",
    "env_ids_field",
    "env_kwargs_field",
    "max_completion_length_field",
    "max_new_tokens_per_turn_field",
    "max_turns_field",
    "read_yaml_mapping",
    "seed_field",
    "system_prompt_field",
]

MAX_NEW_TOKENS_PER_TURN = 256
"""Tokens one turn of a real model may sample unless told otherwise (``eval``; ``train`` on a
GPU): room for a short reasoning before the move."""


def _field(default: Any = dataclasses.MISSING, *, factory: Any = None, **metadata: Any) -> Any:
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def env_ids_field(help: str = "Environment IDs (see `trl-env list`).", **metadata: Any) -> Any:
    """The registered env IDs a command plays: positional, one or more."""
    return _field(factory=list, help=help, positional="ID", **metadata)


def env_kwargs_field(
    help: str = "gym.make keyword arguments for every env, as JSON, e.g. '{\"max_guesses\": 8}'.",
) -> Any:
    """``gym.make`` keyword arguments for every env (``--env-kwargs JSON``; ``{}``: none)."""
    return _field(factory=dict, help=help, metavar="JSON")


def max_turns_field(
    help: str = "Model turns per episode at most (default: the env's own limit).",
) -> Any:
    """The rollout's ``max_turns``: ``None`` lets the env decide."""
    return _field(None, help=help, min=1, metavar="N")


def max_new_tokens_per_turn_field(help: str, **metadata: Any) -> Any:
    """The rollout's ``max_new_tokens_per_turn`` (``--max-new-tokens``; the rollout's own name
    stays an alias); ``None``: the command's default."""
    return _field(
        None,
        help=help,
        flag="--max-new-tokens",
        aliases=["--max-new-tokens-per-turn"],
        min=1,
        metavar="N",
        **metadata,
    )


def max_completion_length_field(help: str, **metadata: Any) -> Any:
    """The rollout's ``max_completion_length``: tokens of a whole episode after the prompt."""
    return _field(None, help=help, min=1, metavar="N", **metadata)


def system_prompt_field(default: str | None, help: str, **metadata: Any) -> Any:
    """The rollout's ``system_prompt`` (``''`` on the command line: no system message)."""
    return _field(default, help=help, metavar="TEXT", **metadata)


def seed_field(help: str, default: int = 0) -> Any:
    """A seed (an int >= 0)."""
    return _field(default, help=help, min=0, metavar="S")


def check_count(name: str, value: Any, least: int, *, optional: bool = False) -> None:
    """Raise a ``ValueError`` unless ``value`` is an int ``>= least`` (or ``None``, if
    ``optional``); the message names the setting.

    Example:
        >>> check_count("max_steps", 0, 1)
        Traceback (most recent call last):
        ...
        ValueError: max_steps must be a positive int, got 0
    """
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        expected = "a positive int" if least == 1 else f"an int >= {least}"
        raise ValueError(f"{name} must be {expected}, got {value!r}")


def config_to_yaml(config: Any, *, leave_out: tuple[str, ...] = ()) -> str:
    """The fields of the dataclass ``config`` as YAML, in field order (``--config`` reads it).

    Args:
        config: A config dataclass instance.
        leave_out: Fields not to write (switches that act on one run, such as ``overwrite``).
    """
    import yaml

    values = {
        field.name: getattr(config, field.name)
        for field in dataclasses.fields(config)
        if field.name not in leave_out
    }
    return str(yaml.safe_dump(values, sort_keys=False, allow_unicode=True, width=100))


def read_yaml_mapping(path: str | Path) -> dict[str, Any]:
    """The top-level mapping of the YAML file ``path``.

    Raises:
        ValueError: The file cannot be read, is not YAML, or does not hold a mapping.
    """
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror or error}") from None
    try:
        values = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"{path} is not valid YAML: {' '.join(str(error).split())}") from None
    if values is None:
        return {}
    if not isinstance(values, dict) or not all(isinstance(key, str) for key in values):
        raise ValueError(
            f"{path} must hold a mapping of setting names to values (like 'max_steps: 10'), "
            f"got {type(values).__name__}"
        )
    return values
