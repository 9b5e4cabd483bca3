"""The learning curve of a run as a PNG: mean episode return (and success rate) per step, and the
held-out evals (greedy success with its 95% interval, pass@k) when the run made them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["plot_learning_curve"]


def _moving_average(values: Sequence[float], window: int) -> list[float]:
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def _plot_with_mean(
    axes: Any, steps: Sequence[float], values: Sequence[float], window: int, color: str
) -> None:
    """The values per step (faint) and their moving average (bold) on ``axes``."""
    axes.plot(steps, values, color=color, alpha=0.3, linewidth=1, label="per step")
    axes.plot(
        steps,
        _moving_average(values, window),
        color=color,
        linewidth=2,
        label=f"{window}-step mean",
    )


def _plot_evals(axes: Any, evals: Sequence[dict[str, Any]]) -> None:
    """Held-out greedy success per eval, with its 95% Wilson interval as error bars."""
    steps = [row["step"] for row in evals]
    rates = [row["eval_success_rate"] for row in evals]
    low = [
        rate - row.get("eval_success_ci_low", rate) for rate, row in zip(rates, evals, strict=True)
    ]
    high = [
        row.get("eval_success_ci_high", rate) - rate for rate, row in zip(rates, evals, strict=True)
    ]
    axes.errorbar(steps, rates, yerr=[low, high], color="tab:purple", marker="o", capsize=3,
                  linewidth=1.5, label="held-out greedy (95% CI)")  # fmt: skip
    if any("eval_pass_at_k" in row for row in evals):
        k = int(evals[-1].get("eval_samples", 0))
        points = [(row["step"], row["eval_pass_at_k"]) for row in evals if "eval_pass_at_k" in row]
        axes.plot(*zip(*points, strict=True), color="tab:orange", marker="s", linestyle="--",
                  label=f"held-out pass@{k}")  # fmt: skip
    axes.set_ylabel("held-out success")
    axes.set_ylim(-0.02, 1.02)


def plot_learning_curve(
    rows: Sequence[dict[str, Any]], path: str | os.PathLike[str], title: str = ""
) -> Path:
    """Plot reward (and success rate) per step to a PNG.

    Args:
        rows: Per-step metrics with ``step``, ``reward`` and optionally ``env/success_rate``;
            rows with ``eval_success_rate`` (held-out evals) get a panel of their own.
        path: Where to write the PNG.
        title: The figure's title.

    Raises:
        ImportError: If matplotlib is not installed (``pip install matplotlib``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "plotting the learning curve needs matplotlib: pip install matplotlib "
            '(or pip install "trl-env[trl]")'
        ) from None
    evals = [row for row in rows if "eval_success_rate" in row]
    steps = [row["step"] for row in rows if "reward" in row]
    rewards = [row["reward"] for row in rows if "reward" in row]
    success = [row.get("env/success_rate") for row in rows if "reward" in row]
    window = max(1, min(10, len(rewards) // 5 or 1))
    has_success = bool(success) and all(s is not None for s in success)
    count = 1 + has_success + bool(evals)
    figure = Figure(figsize=(8, 2 + 2 * count), dpi=100)
    FigureCanvasAgg(figure)
    panels = figure.subplots(count, 1, sharex=True, squeeze=False)[:, 0]
    top = panels[0]
    _plot_with_mean(top, steps, rewards, window, "tab:blue")
    top.set_ylabel("mean episode return")
    if title:
        top.set_title(title)
    if has_success:
        bottom = panels[1]
        rates = [float(s) for s in success]  # type: ignore[arg-type]
        _plot_with_mean(bottom, steps, rates, window, "tab:green")
        bottom.set_ylabel("success rate")
        bottom.set_ylim(-0.02, 1.02)
    if evals:
        _plot_evals(panels[-1], evals)
    for axes in panels:
        axes.grid(alpha=0.3)
        axes.legend(loc="lower right")
    panels[-1].set_xlabel("GRPO step")
    figure.tight_layout()
    target = Path(path)
    figure.savefig(target)
    return target
