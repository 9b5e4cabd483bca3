"""Errors raised by trl-env. Every message says what to do about it."""

from __future__ import annotations

__all__ = [
    "EpisodeOverError",
    "Error",
    "InvalidSpaceError",
    "MissingExtraError",
    "NotATextEnvError",
    "TaskSpecError",
]


class Error(Exception):
    """Base class of every trl-env error."""


class EpisodeOverError(Error, RuntimeError):
    """``step`` was called on an environment whose episode has ended; call ``reset`` first."""


class NotATextEnvError(Error, TypeError):
    """An environment does not have string observation and action spaces."""


class InvalidSpaceError(Error, ValueError):
    """A value does not fit a text space (for example too long for its shared-memory buffer)."""


class TaskSpecError(Error, ValueError):
    """A task prompt or dataset row does not identify a registered environment task."""


class MissingExtraError(Error, ImportError):
    """An optional dependency group is not installed."""

    def __init__(self, extra: str, feature: str, missing: str) -> None:
        super().__init__(
            f"{feature} needs the '{missing}' package, which is not installed. "
            f'Install it with: pip install "trl-env[{extra}]"'
        )
        self.extra = extra
