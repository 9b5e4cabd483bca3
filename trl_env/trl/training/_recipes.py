"""Recorded recipes: YAML files shipped with trl-env (``trl_env/recipes/NAME.yaml``) whose keys
are :class:`~trl_env.trl.training.TrainConfig` fields, like TRL's and Axolotl's example configs.

``trl-env train --recipe NAME`` (or ``train(..., recipe=NAME)``) makes a recipe's settings the
defaults of the run; options given explicitly override them, and the run's ``config.yaml``
repeats the recipe's name with every resolved setting. ``trl-env train --recipe list`` lists
them with the first line of each file's header comment.

A recipe holds what makes a model learn a task, never what depends on the machine: ``bf16``
(the CPU or GPU decides), ``output_dir``, ``model`` and the like are refused in a recipe file.

Example:
    >>> "multiturn-hangman" in recipe_names()
    True
    >>> load_recipe("multiturn-hangman")["warm_start"]
    'random'
"""

from __future__ import annotations

import dataclasses
import difflib
from importlib import resources
from typing import Any

from trl_env.error import UsageError

__all__ = ["LIST", "describe_recipes", "load_recipe", "recipe_names"]

LIST = "list"
"""``--recipe list``: print the recipes instead of training."""

_MACHINE_KEYS = frozenset(
    {
        "bf16",
        "fast_paths",
        "output_dir",
        "overwrite",
        "resume",
        "model",
        "recipe",
        "progress",
        "report_to",
    }
)
"""Settings a recipe may not hold: the machine, the run folder and the model are the user's."""


def _files() -> dict[str, Any]:
    folder = resources.files("trl_env") / "recipes"
    return {
        entry.name.removesuffix(".yaml"): entry
        for entry in folder.iterdir()
        if entry.name.endswith(".yaml")
    }


def recipe_names() -> list[str]:
    """The names of the recipes shipped with trl-env, sorted."""
    return sorted(_files())


def _header(text: str) -> str:
    """The first line of a recipe file's header comment."""
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
        if line.strip():
            break
    return ""


def describe_recipes() -> str:
    """One line per recipe: its name and the first line of its header comment."""
    files = _files()
    width = max(map(len, files), default=0)
    return "\n".join(
        f"{name:<{width}}  {_header(files[name].read_text(encoding='utf-8'))}"
        for name in sorted(files)
    )


def load_recipe(name: str) -> dict[str, Any]:
    """The settings of the recipe ``name`` (checked against :class:`TrainConfig`'s fields).

    Raises:
        UsageError: Unknown name (with a "did you mean" and the list), or a file with a key that
            is no setting or a machine setting.
    """
    from trl_env._configs import read_yaml_mapping
    from trl_env.trl.training._config import TrainConfig

    files = _files()
    if name not in files:
        close = difflib.get_close_matches(name, list(files), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UsageError(
            f"no recipe named {name!r}{hint}; the recipes are: {', '.join(sorted(files))} "
            "(trl-env train --recipe list describes them)"
        )
    try:
        with resources.as_file(files[name]) as path:
            values = read_yaml_mapping(str(path))
    except ValueError as error:
        raise UsageError(f"recipe {name!r}: {error}") from None
    fields = {field.name for field in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise UsageError(f"recipe {name!r} has settings TrainConfig does not know: {unknown}")
    machine = sorted(set(values) & _MACHINE_KEYS)
    if machine:
        raise UsageError(
            f"recipe {name!r} sets {machine}: a recipe holds what makes a model learn, not the "
            "machine's or the run's own settings (the CPU or GPU decides bf16 and the fast paths)"
        )
    return values
