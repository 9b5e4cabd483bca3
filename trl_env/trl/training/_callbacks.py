"""What a run reports while it trains, as ``TrainerCallback``\\ s and helpers: ``metrics.csv``
(every logged metric, one row per step), a progress bar on a terminal, one line of metrics per
step, and progress lines for long phases when output is not a terminal (a log file)."""

from __future__ import annotations

import csv
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from trl_env._machine import peak_rss_gb
from trl_env._memory import release_freed_memory

__all__ = ["CsvLog", "MetricsCallback", "Progress", "TimeBudget", "step_line"]

# Columns shown first in metrics.csv, in this order; every other logged metric follows, sorted.
_CSV_FIRST = (
    "step",
    "reward",
    "reward_std",
    "env/success_rate",
    "env/mean_return",
    "env/invalid_action_rate",
    "env/mean_turns",
    "loss",
    "grad_norm",
    "learning_rate",
    "entropy",
    "completions/mean_length",
    "completions/clipped_ratio",
    "frac_reward_zero_std",
    "env/cut_turn_rate",
    "step_time",
    "time/generation_s",
    "time/env_s",
    "time/train_s",
    "eval_success_rate",
    "eval_success_ci_low",
    "eval_success_ci_high",
    "eval_mean_return",
    "eval_invalid_action_rate",
    "eval_mean_turns",
    "eval_seconds",
    "wall_time_s",
    "peak_rss_gb",
)
STUCK_SHARE = 0.9
"""A step whose share of zero-variance GRPO groups is above this teaches almost nothing..."""
STUCK_STEPS = 20
"""... and this many such steps in a row make the progress line warn (once)."""
STUCK_ADVICE = (
    "warning: over {share:.0%} of GRPO groups had the same reward for every episode in each of "
    "the last {steps} steps, so they teach nothing (zero advantage). Try: more episodes per task "
    "(--num-generations), a higher --temperature, a shaped reward (env kwargs such as "
    "partial_credit), a warm start on demonstrations (trl-env demos + trl-env sft), or an "
    "easier env; trl-env replay <output-dir> shows what the model is saying."
)
_LINES_PER_PHASE = 10
"""Progress lines a long phase prints when output is not a terminal."""


class Progress:
    """Progress of a phase of ``total`` steps: a tqdm bar on a terminal, else a line every tenth
    of the phase (so that a log file shows progress too, without thousands of redrawn bars).

    Example:
        >>> lines = []
        >>> progress = Progress(20, "warm start", write=lines.append, terminal=False)
        >>> for _ in range(20):
        ...     progress.update(loss=0.5)
        >>> progress.close()
        >>> lines[0], len(lines)
        ('warm start: 2/20 steps (loss 0.5)', 10)
    """

    def __init__(
        self,
        total: int,
        description: str,
        *,
        enabled: bool = True,
        write: Callable[[str], None] | None = None,
        terminal: bool | None = None,
    ) -> None:
        self.total, self.description, self.n = total, description, 0
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        terminal = sys.stderr.isatty() if terminal is None else terminal
        self.enabled = enabled
        self.bar: Any = None
        if enabled and terminal:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=description, unit="step", dynamic_ncols=True)
        self.every = max(1, total // _LINES_PER_PHASE)

    def update(self, n: int = 1, **postfix: float) -> None:
        """Advance by ``n`` steps, showing ``postfix`` values (``loss=...``)."""
        before, self.n = self.n, self.n + n
        if self.bar is not None:
            self.bar.update(n)
            if postfix:
                self.bar.set_postfix({k: f"{v:.3g}" for k, v in postfix.items()})
        elif self.enabled and (self.n // self.every > before // self.every or self.n == self.total):
            shown = ", ".join(f"{k} {v:.3g}" for k, v in postfix.items())
            self.write(
                f"{self.description}: {self.n}/{self.total} steps"
                + (f" ({shown})" if shown else "")
            )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class CsvLog:
    """metrics.csv, one row per step: appended to, and rewritten only when new columns appear.

    Args:
        path: The CSV file.
        keep_until_step: When resuming, the rows of the earlier run up to this step are kept
            (later ones are replayed by the resumed run); ``None`` starts a new file.
    """

    def __init__(self, path: Path, keep_until_step: int | None = None) -> None:
        self.path = path
        self.rows: list[dict[str, Any]] = []
        self.columns: list[str] = []
        if keep_until_step is not None and path.is_file():
            with path.open(encoding="utf-8", newline="") as handle:
                for row in csv.DictReader(handle):
                    values = {k: float(v) for k, v in row.items() if v not in ("", None)}
                    if values.get("step", 0) <= keep_until_step:
                        values["step"] = int(values["step"])
                        self.rows.append(values)
            if self.rows:
                self._rewrite()

    def merge(self, row: dict[str, Any]) -> None:
        """Add ``row``'s values to the row of the same step (the last one), or add it."""
        if self.rows and self.rows[-1].get("step") == row.get("step"):
            self.rows[-1].update(row)
            self._rewrite()
        else:
            self.add(row)

    def add(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if set(row) <= set(self.columns):
            with self.path.open("a", newline="", encoding="utf-8") as handle:
                csv.DictWriter(handle, fieldnames=self.columns).writerow(_formatted(row))
            return
        self._rewrite()

    def _rewrite(self) -> None:
        keys = set(self.columns).union(*self.rows)
        self.columns = [c for c in _CSV_FIRST if c in keys] + sorted(keys - set(_CSV_FIRST))
        tmp = self.path.with_suffix(".csv.tmp")
        with tmp.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=self.columns)
            writer.writeheader()
            writer.writerows(_formatted(r) for r in self.rows)
        tmp.replace(self.path)


def _formatted(row: dict[str, Any]) -> dict[str, str]:
    return {k: f"{v:.6g}" if isinstance(v, float) else str(v) for k, v in row.items()}


def _duration(seconds: float) -> str:
    """``42s``, ``12m`` or ``3h05m``.

    Example:
        >>> _duration(42.4), _duration(725), _duration(11_100)
        ('42s', '12m', '3h05m')
    """
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours}h{minutes:02d}m"


def step_line(row: dict[str, Any], max_steps: int, left_s: float | None = None) -> str:
    """One line of a step's main metrics (``step 3/400 | reward +0.250 | ... | 12m left``).

    ``flat`` is the share of GRPO groups whose episodes all got the same reward (they teach
    nothing); ``s/step`` the step's seconds.

    Args:
        row: The step's metrics.
        max_steps: The run's length.
        left_s: Expected seconds until the end of the run (``None``: not shown).
    """
    parts = [f"step {int(row['step']):>{len(str(max_steps))}}/{max_steps}"]
    for key, label, fmt in (
        ("reward", "reward", "{:+.3f}"),
        ("env/success_rate", "success", "{:.2f}"),
        ("env/invalid_action_rate", "invalid", "{:.2f}"),
        ("env/mean_turns", "turns", "{:.1f}"),
        ("loss", "loss", "{:+.4f}"),
        ("entropy", "entropy", "{:.3f}"),
        ("frac_reward_zero_std", "flat", "{:.2f}"),
        ("step_time", "s/step", "{:.2f}"),
    ):
        if key in row:
            parts.append(f"{label} {fmt.format(row[key])}")
    if left_s is not None:
        parts.append(f"{_duration(left_s)} left")
    return " | ".join(parts)


class MetricsCallback(TrainerCallback):
    """Progress bar, one line of metrics per step, and metrics.csv rewritten every step.

    Args:
        csv_log: Where the rows go.
        progress: Show the bar (on a terminal) and the per-step lines.
        started: ``time.perf_counter()`` at the start of the run (for ``wall_time_s``).
    """

    def __init__(self, csv_log: CsvLog, progress: bool, started: float) -> None:
        self.log = csv_log
        self.rows = csv_log.rows
        self.progress = progress
        self.started = started
        self.bar: Any = None
        self.stuck_steps = 0
        """Consecutive steps with over STUCK_SHARE zero-variance groups."""
        self.warned_stuck = False

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        # Time left is extrapolated from this run's own steps (a resumed run skips the old ones).
        self.train_started, self.first_step = time.perf_counter(), state.global_step
        if state.is_world_process_zero and self.progress and sys.stderr.isatty():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=state.max_steps, desc="GRPO", unit="step", dynamic_ncols=True)
            self.bar.update(state.global_step)

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        if not state.is_world_process_zero or not logs:
            return
        row: dict[str, Any] = {"step": state.global_step}
        row.update(
            (key, float(value))
            for key, value in logs.items()
            if isinstance(value, int | float) and not isinstance(value, bool)
        )
        if "reward" not in logs:
            if any(key.startswith("eval_") for key in logs):
                self.log.merge(row)  # a held-out eval: its figures join the step's row
            return
        row["wall_time_s"] = time.perf_counter() - self.started
        # The process's peak so far, per step: a run that outgrows memory shows where it began.
        row["peak_rss_gb"] = round(peak_rss_gb(), 2)
        if "step_time" in row and "time/generation_s" in row:
            # What the rollout did not spend: log-prob passes, forward, backward, optimizer.
            rollout = row["time/generation_s"] + row.get("time/env_s", 0.0)
            row["time/train_s"] = max(0.0, row["step_time"] - rollout)
        self.log.merge(row)
        self._watch_zero_variance(row)
        done = state.global_step - getattr(self, "first_step", 0)
        left = None
        if done > 0 and hasattr(self, "train_started"):
            per_step = (time.perf_counter() - self.train_started) / done
            left = per_step * max(0, state.max_steps - state.global_step)
        line = step_line(row, state.max_steps, left)
        if self.bar is not None:
            from tqdm.auto import tqdm

            self.bar.update(state.global_step - self.bar.n)
            self.bar.set_postfix({"reward": f"{row['reward']:.3f}"})
            tqdm.write(line)
        elif self.progress:
            print(line, file=sys.stderr, flush=True)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        # The training pass's activations are freed: return their pages before the rollout's
        # tensors of other sizes come (trl_env._memory).
        release_freed_memory()

    def _watch_zero_variance(self, row: dict[str, Any]) -> None:
        """Warn once when nearly every group has had zero reward variance for a while."""
        share = row.get("frac_reward_zero_std")
        if share is None:
            return
        self.stuck_steps = self.stuck_steps + 1 if share > STUCK_SHARE else 0
        if self.stuck_steps >= STUCK_STEPS and not self.warned_stuck:
            self.warned_stuck = True
            line = STUCK_ADVICE.format(share=STUCK_SHARE, steps=STUCK_STEPS)
            if not self.progress:
                return
            if self.bar is not None:
                from tqdm.auto import tqdm

                tqdm.write(line)
            else:
                print(line, file=sys.stderr, flush=True)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.bar is not None:
            self.bar.close()


class TimeBudget(TrainerCallback):
    """Stops training after the step that passes ``deadline`` (``--minutes``).

    Training stops as after its last step: the held-out eval of the end runs, and the run saves
    its final model; at least one step runs, however little of the budget the warm start left.

    Args:
        deadline: ``time.perf_counter()`` value past which no new step starts.
        say: Where to print the line that says the budget ended the run.
    """

    def __init__(self, deadline: float, say: Callable[[str], None]) -> None:
        self.deadline = deadline
        self.say = say
        self.stopped_at: int | None = None

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if time.perf_counter() >= self.deadline and state.global_step < state.max_steps:
            self.stopped_at = state.global_step
            control.should_training_stop = True
            self.say(
                f"time budget spent after step {state.global_step} of {state.max_steps}: "
                "evaluating and saving"
            )
