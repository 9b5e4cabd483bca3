"""The result of an evaluation: :class:`EvalReport`, its table and its files."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trl_env._episode import Episode
from trl_env._summary import EnvSummary

__all__ = ["EvalReport", "format_table", "write_outputs"]


@dataclass
class EvalReport:
    """The result of :func:`evaluate`: per-env summaries and every episode.

    With ``samples`` = k > 0, ``sampled_episodes[i]`` holds sample ``i``'s episodes (every env
    and seed once), and the summaries have pass@k and avg@k; ``sample_temperature`` is the
    temperature of a model's samples (``None`` for the random and oracle policies).
    """

    policy: str
    seed: int
    episodes_per_env: int
    summaries: dict[str, EnvSummary]
    episodes: list[Episode]
    elapsed_s: float
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    samples: int = 0
    sample_temperature: float | None = None
    sampled_episodes: list[list[Episode]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``results.json``: settings and per-env summaries (episodes go to the JSONL file)."""
        from trl_env._machine import machine_record
        from trl_env._version import __version__

        threads = None
        if "torch" in sys.modules:  # a model played: its thread count (random/oracle: none)
            threads = sys.modules["torch"].get_num_threads()
        return {
            "trl_env_version": __version__,
            "machine": machine_record(threads),
            "policy": self.policy,
            "seed": self.seed,
            "episodes_per_env": self.episodes_per_env,
            "samples": self.samples,
            "sample_temperature": self.sample_temperature,
            "env_kwargs": self.env_kwargs,
            "elapsed_s": round(self.elapsed_s, 4),
            "envs": {env_id: s.to_json() for env_id, s in self.summaries.items()},
        }


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def format_table(report: EvalReport) -> str:
    """The per-env results as a plain-text table (one row per env).

    The success rate comes with its 95% Wilson interval; with samples, ``pass@k`` and ``avg@k``
    columns follow it (``k`` the number of samples per seed).
    """
    k = report.samples
    sampled = (f"pass@{k}", f"avg@{k}") if k else ()
    header = ("env", "episodes", "success (95% CI)", *sampled, "return (95% CI)", "turns",
              "invalid", "errors")  # fmt: skip
    rows = []
    for s in report.summaries.values():
        ci = f" ± {s.return_ci95:.3f}" if s.return_ci95 is not None else ""
        interval = f"[{100 * s.success_ci_low:.1f}-{100 * s.success_ci_high:.1f}]"
        rows.append(
            (
                s.env_id,
                str(s.episodes),
                f"{100 * s.success_rate:.1f}% {interval}",
                *((_percent(s.pass_at_k), _percent(s.avg_at_k)) if k else ()),
                f"{s.mean_return:.3f}{ci}",
                f"{s.mean_turns:.2f}",
                f"{100 * s.invalid_action_rate:.1f}%",
                str(s.errors),
            )
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    title = f"policy: {report.policy}   seeds: {report.seed}..{report.seed + report.episodes_per_env - 1}"
    if k:
        at = f" at temperature {report.sample_temperature:g}" if report.sample_temperature else ""
        title += f"   samples: {k} per seed{at}"
    rule = "-" * len(line(header))
    return "\n".join([title, line(header), rule, *(line(r) for r in rows)])


def write_outputs(report: EvalReport, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write ``results.json`` (settings and summaries) and ``transcripts.jsonl`` (one episode per
    line, with its transcript when recorded) to ``out_dir`` (created if needed).

    The sampled episodes (``trl-env eval --samples K``) follow the main ones in
    ``transcripts.jsonl``, each with ``"sample": i`` (0 to K-1); the main ones have no
    ``sample`` key.

    Returns:
        The paths of the two files.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results_path, transcripts_path = out / "results.json", out / "transcripts.jsonl"
    results_path.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    with transcripts_path.open("w", encoding="utf-8") as file:
        for episode in report.episodes:
            record = {"policy": report.policy, **episode.to_json()}
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
        for i, episodes in enumerate(report.sampled_episodes):
            for episode in episodes:
                record = {"policy": report.policy, "sample": i, **episode.to_json()}
                file.write(json.dumps(record, ensure_ascii=False) + "\n")
    return results_path, transcripts_path
