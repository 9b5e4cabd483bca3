"""Progress of long evaluations on stderr: a bar on a terminal, rate-limited lines otherwise.

Progress counts finished episodes and the turns played so far, so an evaluation whose episodes
all run in one batch (a model playing 64 Wordle games at once) shows it is alive long before the
first episode ends.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__: list[str] = []


class _Progress:
    """Progress of ``total`` episodes (and their turns) on stderr, or nothing when not ``enabled``.

    On a terminal: a tqdm bar over the episodes, updated in chunks (about 1% of the total), with
    the turns played as its postfix (redrawn at most every ``redraw_s`` seconds). Otherwise (a log
    file, a pipe, CI), plain lines, never one per update: a line each time another tenth of the
    episodes is done, and in between at most one line every ``interval_s`` seconds while turns
    are played; the last line at the end.

    Args:
        total: Episodes to play.
        enabled: Show anything at all.
        description: The label of the bar or lines (an env ID, ``"episodes"``).
        terminal: Draw a bar (default: whether stderr is a terminal).
        write: Where lines go (default: stderr).
        clock: Seconds, for the rate limit (default: :func:`time.monotonic`).
        interval_s: Seconds between two lines that report turns only.
        redraw_s: Seconds between two redraws of the bar for turns only.

    Example:
        >>> lines = []
        >>> progress = _Progress(20, True, "TextWordle-v0", terminal=False, write=lines.append)
        >>> for _ in range(20):
        ...     progress.advance(1, turns=3)
        >>> progress.close()
        >>> len(lines), lines[-1].split(",")[0]
        (10, 'TextWordle-v0: 20/20 episodes (100%)')
    """

    def __init__(
        self,
        total: int,
        enabled: bool,
        description: str,
        *,
        terminal: bool | None = None,
        write: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        interval_s: float = 30.0,
        redraw_s: float = 0.5,
    ) -> None:
        self._bar: Any = None
        self._pending = 0
        self._chunk = max(1, total // 100)
        self._total, self._done, self._turns = total, 0, 0
        self._description = description
        self._write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self._clock, self._interval_s, self._redraw_s = clock, interval_s, redraw_s
        self._started = self._last_shown = clock()
        self._next_tenth = max(1, total // 10)  # the first line: a tenth done, or a turn line
        terminal = sys.stderr.isatty() if terminal is None else terminal
        self._lines = enabled and total > 0 and not terminal
        if enabled and total > 0 and terminal:
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

    def advance(self, n: int = 1, *, turns: int = 0) -> None:
        """``n`` more episodes are done (with ``turns`` turns not counted yet)."""
        self._done += n
        self._turns += turns
        if self._lines:
            if self._done >= self._next_tenth or self._done >= self._total:
                self._print_line()
            elif turns:
                self._line_if_due()
            return
        if self._bar is None:
            return
        self._pending += n
        if self._pending >= self._chunk:
            self._bar.set_postfix_str(self._turns_text(), refresh=False)
            self._bar.update(self._pending)
            self._pending = 0

    def add_turns(self, n: int) -> None:
        """``n`` more turns were played by episodes still going."""
        self._turns += n
        if self._lines:
            self._line_if_due()
        elif self._bar is not None and self._clock() - self._last_shown >= self._redraw_s:
            self._last_shown = self._clock()
            self._bar.set_postfix_str(self._turns_text(), refresh=True)

    def _turns_text(self) -> str:
        return f"{self._turns} turn{'s' if self._turns != 1 else ''}"

    def _line_if_due(self) -> None:
        if self._clock() - self._last_shown >= self._interval_s:
            self._print_line()

    def _print_line(self) -> None:
        done, total = min(self._done, self._total), self._total
        now = self._clock()
        self._write(
            f"{self._description}: {done}/{total} episodes ({100 * done // total}%), "
            f"{self._turns_text()}, {now - self._started:.0f} s"
        )
        self._last_shown = now
        tenth = max(1, total // 10)
        self._next_tenth = (done // tenth + 1) * tenth

    def describe(self, text: str) -> None:
        self._description = text
        if self._bar is not None:
            self._bar.set_description_str(text, refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            if self._pending:
                self._bar.set_postfix_str(self._turns_text(), refresh=False)
                self._bar.update(self._pending)
            self._bar.close()
            self._bar = None


class _TurnCounter:
    """A generation backend that reports each call's turns (one per input) to ``on_turns``.

    A model plays a batch of episodes with one generation call per turn; counting the calls' inputs
    is how :class:`_Progress` sees turns before any episode of the batch ends.
    """

    def __init__(self, generator: Any, on_turns: Callable[[int], None]) -> None:
        self._generator = generator
        self._on_turns = on_turns

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int) -> Any:
        result = self._generator.generate(inputs, max_new_tokens)
        self._on_turns(len(inputs))
        return result

    def __getattr__(self, name: str) -> Any:  # everything else is the backend's own
        return getattr(self._generator, name)
