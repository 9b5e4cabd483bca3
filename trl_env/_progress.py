"""A progress bar on stderr for long evaluations."""

from __future__ import annotations

import sys
from typing import Any

__all__: list[str] = []


class _Progress:
    """A tqdm bar on stderr updated in chunks (about 1% of the total), or nothing."""

    def __init__(self, total: int, enabled: bool, description: str) -> None:
        self._bar: Any = None
        self._pending = 0
        self._chunk = max(1, total // 100)
        if enabled and total > 0:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm comes with transformers; without it, no bar
                return
            self._bar = tqdm(
                total=total,
                desc=description,
                unit="ep",
                file=sys.stderr,
                mininterval=0.1,
                dynamic_ncols=True,
            )

    def advance(self, n: int = 1) -> None:
        if self._bar is None:
            return
        self._pending += n
        if self._pending >= self._chunk:
            self._bar.update(self._pending)
            self._pending = 0

    def describe(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_description_str(text, refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            if self._pending:
                self._bar.update(self._pending)
            self._bar.close()
            self._bar = None
