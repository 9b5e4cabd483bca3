"""``--threads N``: torch's CPU threads for a command that runs a model.

The count itself (the cores this process may run on, shared among the processes of a launch) and
the call that sets it live on the TRL side, :mod:`trl_env.trl._threads`; this is the option.
"""

from __future__ import annotations

from typing import Any

from trl_env.cli._common import positive_int
from trl_env.trl._threads import default_threads

__all__ = ["add_threads_option"]


def add_threads_option(parser: Any) -> None:
    """Add ``--threads N`` to a command that runs a model (``parser``: a parser or a group)."""
    threads, why = default_threads()
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"torch CPU threads (default: cores available / processes, here {threads}: {why})",
    )
