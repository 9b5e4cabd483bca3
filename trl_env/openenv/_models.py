"""The wire types of a trl-env text env served over OpenEnv: one text action, one text observation.

They are ordinary openenv-core ``Action``/``Observation`` models, so any OpenEnv client works:
send ``{"message": "<the reply>"}`` and read ``observation["text"]``. The names follow the
``message`` action of openenv-core's own echo template and of TextArena's OpenEnv env.

Example:
    >>> from trl_env.openenv._models import TextAction, TextObservation
    >>> TextAction(message="[crane]").message
    '[crane]'
    >>> observation = TextObservation(text="G Y X X X", reward=0.0, done=False)
    >>> observation.terminated, observation.truncated
    (False, False)
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from trl_env.error import MissingExtraError

try:
    from openenv.core.env_server.types import Action, Observation
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openenv", "Serving and using OpenEnv envs", "openenv-core") from error

__all__ = ["TextAction", "TextObservation"]


class TextAction(Action):
    """The agent's reply, as the text env's ``step`` receives it."""

    message: str = Field(..., description="The agent's reply (the gymnasium action string).")


class TextObservation(Observation):
    """The env's message after a ``reset`` or ``step``.

    ``terminated`` and ``truncated`` are gymnasium's own two flags, exactly as the served env
    returned them (both can be true: a win on the time-limit step), and ``done`` is
    ``terminated or truncated`` for clients that read only OpenEnv's ``done``.
    """

    text: str = Field(default="", description="The observation string of the gymnasium env.")
    terminated: bool = Field(
        default=False, description="The env ended the episode (gymnasium's terminated)."
    )
    truncated: bool = Field(
        default=False,
        description="A time limit ended the episode (gymnasium's truncated; may come with "
        "terminated).",
    )
    info: dict[str, Any] = Field(
        default_factory=dict, description="The gymnasium info dict (JSON-safe values)."
    )
