"""The one error and exit-status policy of every ``trl-env`` command.

A command raises; :func:`report` turns the error into one line on stderr,
``trl-env CMD: error: ...``, that says what to do, and into the exit status:

* **2**, the command cannot run as asked: a bad option or value (argparse's errors, a
  :class:`~trl_env.error.UsageError`, a config's check, a ``--config`` file with an unknown key),
  an unknown or non-text environment, or a **missing optional package** (the line names the
  ``pip install`` that fixes it);
* **1**, it ran and failed: a model that does not load, no GPU for vLLM, an env that crashed,
  anything unexpected (its type is named; ``--debug`` shows the traceback);
* **130**, interrupted (Ctrl-C), with what the command kept.
"""

from __future__ import annotations

import sys
import traceback

import gymnasium as gym

from trl_env.error import Error, MissingExtraError, NotATextEnvError, UsageError

__all__ = ["INSTALL", "error_line", "exit_status", "report"]

INSTALL = {
    "torch": '"trl-env[trl]"',
    "transformers": '"trl-env[trl]"',
    "trl": '"trl-env[trl]"',
    "accelerate": '"trl-env[trl]"',
    "datasets": '"trl-env[trl]"',
    "matplotlib": '"trl-env[trl]"',
    "peft": '"trl-env[lora]"',
    "gguf": '"trl-env[gguf]"',
    "openenv": '"trl-env[openenv]"',
    "uvicorn": '"trl-env[openenv]"',
    "websockets": '"trl-env[openenv]"',
    "fastapi": '"trl-env[openenv]"',
    "reasoning_gym": '"trl-env[reasoning-gym]"',
    "textarena": '"trl-env[textarena]"',
    "tensorboard": '"trl-env[tensorboard]"',
    "vllm": "vllm",
    "yaml": "pyyaml",
}
"""What to install for each optional package a command may need (by import name)."""

_UNKNOWN_ENV = gym.error.UnregisteredEnv | gym.error.DeprecatedEnv
_USAGE = UsageError | MissingExtraError | NotATextEnvError | _UNKNOWN_ENV


def _missing_package(error: BaseException) -> str | None:
    """The top-level name of an optional package ``error`` says is not installed, if any."""
    if not isinstance(error, ImportError) or isinstance(error, MissingExtraError):
        return None
    name = (error.name or "").split(".")[0]
    return name if name in INSTALL else None


def exit_status(error: BaseException) -> int:
    """2 for a usage error or a missing package, 130 for an interrupt, else 1."""
    if isinstance(error, KeyboardInterrupt):
        return 130
    if isinstance(error, _USAGE):
        return 2
    if _missing_package(error) or (isinstance(error, ImportError) and "pip install" in str(error)):
        return 2
    return 1


def _message(error: BaseException) -> str:
    missing = _missing_package(error)
    if missing is not None:
        return f"the '{missing}' package is not installed. Install it with: pip install {INSTALL[missing]}"
    message = str(error) or type(error).__name__
    if isinstance(error, _UNKNOWN_ENV):
        return f"{message} (see `trl-env list`)"
    if isinstance(error, ImportError) and "pip install" in message:
        return message
    if not isinstance(error, Error | KeyboardInterrupt):
        return f"{type(error).__name__}: {message}"  # not ours: say what kind of failure it was
    return message


def error_line(prog: str, message: str) -> str:
    """``prog: error: message`` on one line (newlines and runs of spaces collapsed)."""
    return f"{prog}: error: {' '.join(str(message).split())}"


def report(error: BaseException, prog: str, *, debug: bool = False, kept: str = "") -> int:
    """Print ``error`` as one line on stderr (after its traceback if ``debug``); return the
    exit status.

    Args:
        error: What the command raised.
        prog: The command, ``trl-env eval``.
        debug: Print the traceback first.
        kept: For an interrupt: what the command kept (``the model so far is in ...``).
    """
    if isinstance(error, KeyboardInterrupt):
        print(f"\n{prog}: interrupted" + (f" ({kept})" if kept else ""), file=sys.stderr)
        return 130
    if debug:
        traceback.print_exception(error)
    print(error_line(prog, _message(error)), file=sys.stderr)
    return exit_status(error)
