"""Progress of long evaluations on stderr: a bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import Any

__all__: list[str] = []


class _Progress:
    """Progress of ``total`` episodes on stderr, or nothing when not ``enabled``.

    On a terminal: a tqdm bar updated in chunks (about 1% of the total). Otherwise (a log file,
    a pipe, CI): one line per tenth of the work, so a long model evaluation never looks hung.
    """

    def __init__(self, total: int, enabled: bool, description: str) -> None:
        self._bar: Any = None
        self._pending = 0
        self._chunk = max(1, total // 100)
        self._total, self._done, self._next_line = total, 0, 0
        self._description = description
        self._started = time.monotonic()
        self._lines = enabled and total > 0 and not sys.stderr.isatty()
        if enabled and total > 0 and not self._lines:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm comes with transformers; without it, lines instead
                self._lines = True
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
        self._done += n
        if self._lines:
            if self._done >= self._next_line or self._done >= self._total:
                self._print_line()
            return
        if self._bar is None:
            return
        self._pending += n
        if self._pending >= self._chunk:
            self._bar.update(self._pending)
            self._pending = 0

    def _print_line(self) -> None:
        done, total = min(self._done, self._total), self._total
        elapsed = time.monotonic() - self._started
        print(
            f"{self._description}: {done}/{total} episodes ({100 * done // total}%), "
            f"{elapsed:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        tenth = max(1, total // 10)
        self._next_line = (done // tenth + 1) * tenth

    def describe(self, text: str) -> None:
        self._description = text
        if self._bar is not None:
            self._bar.set_description_str(text, refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            if self._pending:
                self._bar.update(self._pending)
            self._bar.close()
            self._bar = None
