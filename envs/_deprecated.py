"""The registration table of trl-env 0.2, kept with a ``DeprecationWarning`` until 0.3.0.

``gym.registry`` is the catalogue now (see :mod:`trl_env.envs`); ``REGISTRY`` is rebuilt from it
on each access, so old code that reads it keeps working for one more version.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, field
from typing import Any

from trl_env.envs._catalogue import env_description, env_specs

__all__ = ["NAMES", "EnvEntry", "get"]

REMOVAL_VERSION = "0.3.0"

_INSTEAD = {
    "REGISTRY": "filter gym.registry with trl_env.envs.env_specs() (one line on each: "
    "trl_env.envs.env_description(spec))",
    "EnvEntry": "gym.registry's EnvSpec, described by trl_env.envs.env_description(spec)",
    "register_envs": "nothing: importing trl_env registers every env with gymnasium",
}
NAMES = frozenset(_INSTEAD)
"""The deprecated names, served by the module ``__getattr__`` of ``trl_env.envs`` and ``trl_env``."""


@dataclass(frozen=True)
class EnvEntry:
    """One row of the 0.2 registration table (deprecated: use ``gym.registry``'s ``EnvSpec``)."""

    id: str
    entry_point: str
    description: str
    max_episode_steps: int | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)


def register_envs() -> None:
    """Do nothing: importing ``trl_env`` registers every env (deprecated)."""


def _registry() -> tuple[EnvEntry, ...]:
    return tuple(
        EnvEntry(
            id=spec.id,
            entry_point=str(spec.entry_point),
            description=env_description(spec),
            max_episode_steps=spec.max_episode_steps,
            kwargs=dict(spec.kwargs),
        )
        for spec in env_specs("catalogue")
    )


def _stacklevel() -> int:
    """The ``stacklevel`` of the first caller outside ``trl_env`` (through any ``__getattr__``)."""
    level, frame = 1, inspect.currentframe()
    frame = frame.f_back if frame is not None else None  # get(), the caller of this function
    while frame is not None and frame.f_globals.get("__name__", "").startswith("trl_env"):
        level, frame = level + 1, frame.f_back
    return level


def get(name: str) -> Any:
    """The deprecated ``name``, after a ``DeprecationWarning`` that says what to use instead."""
    warnings.warn(
        f"{name} is deprecated and will be removed in trl-env {REMOVAL_VERSION}; use "
        f"{_INSTEAD[name]}",
        DeprecationWarning,
        stacklevel=_stacklevel(),
    )
    if name == "REGISTRY":
        return _registry()
    return {"EnvEntry": EnvEntry, "register_envs": register_envs}[name]
