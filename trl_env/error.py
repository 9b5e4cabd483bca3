"""Every error and warning class of trl-env, in one place. Every message says what to do about it.

The hierarchy (catch :class:`Error` to catch anything trl-env raises on purpose)::

    Exception
    ├── Error                              base class of every trl-env error
    │   ├── EpisodeOverError               step() after the episode ended (also a
    │   │                                  gymnasium.error.ResetNeeded and a RuntimeError)
    │   ├── NotATextEnvError               an env without string spaces (also a TypeError)
    │   ├── InvalidSpaceError              a value that does not fit a text space (ValueError)
    │   ├── TaskSpecError                  a prompt/dataset row that names no valid task
    │   │                                  (ValueError)
    │   ├── UsageError                     a wrong argument or option; says what to pass
    │   │   │                              instead (ValueError)
    │   │   ├── CommandLineError           a wrong command-line argument (trl-env exits 2)
    │   │   └── NoOracleError              the oracle policy for an env that has none
    │   ├── MissingExtraError              an optional dependency group is not installed
    │   │                                  (ImportError)
    │   ├── TextEnvCheckError              an env breaks a rule of check_text_env
    │   │                                  (AssertionError)
    │   ├── OpenEnvConnectionError         no OpenEnv server answered, or the connection broke
    │   │                                  mid-episode (ConnectionError)
    │   ├── GameGenerationError            a bridged env's library could not generate a game
    │   │                                  at reset (RuntimeError)
    │   ├── StepTimeoutError               an env call ran past env_step_timeout; its
    │   │                                  episode ends with an error (TimeoutError)
    │   └── FastPathVersionError           a fast path met a library version outside the range
    │                                      it was tested with; --fast-paths off runs the stock
    │                                      path (RuntimeError)
    └── Warning
        ├── RuntimeWarning
        │   └── EnvErrorWarning            an env raised or returned a malformed value during
        │                                  an episode; that episode ended, the batch went on
        └── UserWarning
            └── FastPathWarning            a fast path refused a model or device it cannot
                                           serve exactly; the stock path runs instead

``EpisodeOverError`` is the one type for "step after the episode ended": it subclasses
gymnasium's :class:`gymnasium.error.ResetNeeded`, so code written for gymnasium catches it too.

Example:
    >>> import gymnasium as gym
    >>> from trl_env.error import EpisodeOverError
    >>> issubclass(EpisodeOverError, gym.error.ResetNeeded)
    True
"""

from __future__ import annotations

import gymnasium as gym

__all__ = [
    "CommandLineError",
    "EnvErrorWarning",
    "EpisodeOverError",
    "Error",
    "FastPathVersionError",
    "FastPathWarning",
    "GameGenerationError",
    "InvalidSpaceError",
    "MissingExtraError",
    "NoOracleError",
    "NotATextEnvError",
    "OpenEnvConnectionError",
    "StepTimeoutError",
    "TaskSpecError",
    "TextEnvCheckError",
    "UsageError",
]


class Error(Exception):
    """Base class of every trl-env error."""


class EpisodeOverError(Error, gym.error.ResetNeeded, RuntimeError):
    """``step`` was called on an environment whose episode has ended; call ``reset`` first.

    Also a :class:`gymnasium.error.ResetNeeded` (gymnasium's own type for this) and, as before,
    a :class:`RuntimeError`.
    """


class NotATextEnvError(Error, TypeError):
    """An environment does not have string observation and action spaces."""


class InvalidSpaceError(Error, ValueError):
    """A value does not fit a text space (for example too long for its shared-memory buffer)."""


class TaskSpecError(Error, ValueError):
    """A task prompt or dataset row does not identify a registered environment task."""


class UsageError(Error, ValueError):
    """An argument or option is wrong; the message says what to pass instead."""


class CommandLineError(UsageError):
    """A wrong command-line argument: ``trl-env`` prints it as one line and exits with 2.

    Raised instead of argparse's print-and-exit; ``prog`` is the command it concerns.
    """

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class NoOracleError(UsageError):
    """The ``oracle`` policy was asked for an environment that has no oracle."""


class MissingExtraError(Error, ImportError):
    """An optional dependency group is not installed."""

    def __init__(self, extra: str, feature: str, missing: str) -> None:
        super().__init__(
            f"{feature} needs the '{missing}' package, which is not installed. "
            f'Install it with: pip install "trl-env[{extra}]"'
        )
        self.extra = extra


class TextEnvCheckError(Error, AssertionError):
    """A text environment breaks one of the rules of :func:`trl_env.utils.check_text_env`.

    Attributes:
        rule: The name of the rule (see :func:`trl_env.utils.check_text_env`).
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"[{rule}] {message}")
        self.rule = rule


class OpenEnvConnectionError(Error, ConnectionError):
    """No OpenEnv server answered, or the connection broke during an episode."""


class GameGenerationError(Error, RuntimeError):
    """A bridged env could not generate a game at ``reset``: its library failed on several seeds
    in a row, or took longer than the env's time limit. The message names the env, the seed and
    what to do."""


class StepTimeoutError(Error, TimeoutError):
    """An env call did not return within the per-step timeout; its episode ends with an error."""


class EnvErrorWarning(RuntimeWarning):
    """An environment raised, or returned a malformed value, during an episode.

    That episode was ended with the rollout's ``env_error_penalty`` and the error recorded in its
    transcript and metrics; the rest of the batch went on.
    """


class FastPathVersionError(Error, RuntimeError):
    """A fast path (:mod:`trl_env.trl.fast`) overrides private code of a library whose installed
    version is outside the range the fast path was tested with. The message names the fast path,
    the library and the tested range; ``--fast-paths off`` (``fast_paths="off"``) runs TRL's,
    transformers' and peft's own code instead."""


class FastPathWarning(UserWarning):
    """A fast path (:mod:`trl_env.trl.fast`) checked its preconditions (model, attention kind,
    device, dtype) and refused: the stock path runs instead, with the same numbers as without
    the fast path. Said once per fast path and reason."""
