"""Learning, shown: a default ``trl-env train`` run with the built-in tiny model, on a CPU.

Runs exactly what ``trl-env train TextLargestNumber-v0`` runs (same options, same defaults, same
torch thread count, via ``trl_env.cli._train.add_arguments`` / ``train``), then prints the mean
reward of the first and last 10 GRPO steps, their ratio, the absolute gain, the wall time and the
last held-out eval, and checks them against the bar of ``docs/learning.md``: last-10 mean at least
twice the first-10 mean and at least 0.2 higher, within 10 minutes.

CPU numerics differ between machines and thread counts, so one run's figure is not a
reproducible number: ``--seeds 0 1 2`` runs the same command once per seed, one after another
(each in a fresh process, with ``--seed S``), and ``--results FILE`` writes every seed's figures,
their range and mean over the seeds, and the machine they ran on to a JSON file. The README's and
``docs/learning.md``'s figures come from such a file (``tests/test_readme_figures.py`` checks it).

    python benchmarks/learning_curve.py                       # the documented run (seed 0)
    python benchmarks/learning_curve.py --seed 1              # another seed
    python benchmarks/learning_curve.py --seeds 0 1 2 \\
        --results benchmarks/results/learning_curve/default_run.json \\
        --copy-plot docs/img/learning_curve.png               # the README's figures and plot
    python benchmarks/learning_curve.py TextLargestNumber-v0 --max-steps 600   # any train option

``--copy-plot`` copies the plot of the run (with ``--seeds``, of the first seed listed).

Exit status 0 if the bar is met (by every seed), 1 if not. The last line printed is a JSON
object.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

DEFAULT_ENV = "TextLargestNumber-v0"
WINDOW = 10
MIN_RATIO = 2.0
MIN_GAIN = 0.2
MAX_WALL_S = 600.0
ROOT = Path(__file__).resolve().parent.parent

# The figures of each seed that the summary gives the min, max and mean of.
SUMMARY_FIGURES = (
    f"first{WINDOW}_mean_reward",
    f"last{WINDOW}_mean_reward",
    "ratio",
    "gain",
    "wall_time_s",
    "train_time_s",
    "eval_success_rate",
    "eval_seconds_total",
    "eval_share_of_train_time",
    "other_processes_cpu_share",
)


def _own_parser() -> argparse.ArgumentParser:
    """This script's own options (the rest are ``trl-env train``'s)."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--seeds", type=int, nargs="+", default=None)
    parser.add_argument("--results", default=None)
    parser.add_argument("--copy-plot", default=None)
    parser.add_argument("--note", default=None)
    parser.add_argument("--record", default=None)  # internal: one seed's record, for --seeds
    return parser


def _train_parser() -> argparse.ArgumentParser:
    from trl_env.cli._train import add_arguments  # train's options, --threads included

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        metavar="S",
        help="run the command once per seed (each in a fresh process, one after another)",
    )
    parser.add_argument(
        "--results", metavar="FILE", help="write every seed's figures and their summary here (JSON)"
    )
    parser.add_argument(
        "--copy-plot",
        metavar="PNG",
        help="also copy the PNG plot here (with --seeds: the first seed's)",
    )
    parser.add_argument("--note", metavar="TEXT", help="a note for the results file")
    return parser


def _eval_figures(history: list[dict[str, Any]], train_time_s: float) -> dict[str, Any]:
    """The held-out evals of a run (rows with ``eval_success_rate``): the last one and the cost."""
    rows = sorted(
        (row for row in history if "eval_success_rate" in row), key=lambda r: r.get("step", 0)
    )
    if not rows:
        return {"evals": []}
    last = rows[-1]
    seconds = sum(float(row.get("eval_seconds", 0.0)) for row in rows)
    return {
        "eval_step": int(last.get("step", 0)),
        "eval_success_rate": round(float(last["eval_success_rate"]), 6),
        "eval_success_ci": [
            round(float(last.get("eval_success_ci_low", float("nan"))), 4),
            round(float(last.get("eval_success_ci_high", float("nan"))), 4),
        ],
        "eval_count": len(rows),
        "eval_seconds_total": round(seconds, 1),
        "eval_share_of_train_time": round(seconds / train_time_s, 4) if train_time_s else None,
        "evals": [
            {
                "step": int(row.get("step", 0)),
                "success_rate": round(float(row["eval_success_rate"]), 6),
                "ci": [
                    round(float(row.get("eval_success_ci_low", float("nan"))), 4),
                    round(float(row.get("eval_success_ci_high", float("nan"))), 4),
                ],
                "seconds": round(float(row.get("eval_seconds", 0.0)), 2),
            }
            for row in rows
        ],
    }


def _run_one(args: argparse.Namespace) -> dict[str, Any]:
    """One training run, in this process: its figures (and the per-step rewards)."""
    import torch

    from trl_env.cli._train import config_from_args
    from trl_env.trl._threads import set_torch_threads
    from trl_env.trl.training import train

    set_torch_threads(args.threads, announce=False)  # as trl-env train does
    scratch = None
    if args.output_dir is None:
        scratch = tempfile.mkdtemp(prefix="trl-env-learning-curve-")
        args.output_dir = scratch
    load_before = os.getloadavg()
    cpu_before = _cpu_seconds()
    config = config_from_args(args)
    result = train(config.env_ids, config=config)
    load_after = os.getloadavg()
    cpu_after = _cpu_seconds()
    summary = result.summary(WINDOW)
    ok = (
        summary["last_mean"] >= MIN_RATIO * summary["first_mean"]
        and summary["gain"] >= MIN_GAIN
        and summary["wall_time_s"] <= MAX_WALL_S
    )
    if args.copy_plot and result.plot_png:
        Path(args.copy_plot).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(result.plot_png, args.copy_plot)
    last_rows = [row for row in result.history if "reward" in row][-WINDOW:]
    record: dict[str, Any] = {
        "seed": config.seed,
        "env_ids": list(config.env_ids),
        "steps": int(summary["steps"]),
        f"first{WINDOW}_mean_reward": round(summary["first_mean"], 6),
        f"last{WINDOW}_mean_reward": round(summary["last_mean"], 6),
        "ratio": _finite(summary["ratio"], 4),
        "gain": round(summary["gain"], 6),
        "wall_time_s": round(summary["wall_time_s"], 1),
        "train_time_s": round(result.train_time_s, 1),
        f"success_rate_last{WINDOW}": round(
            sum(row.get("env/success_rate", 0.0) for row in last_rows) / max(1, len(last_rows)), 6
        ),
        **_eval_figures(result.history, result.train_time_s),
        "eval_episodes": (
            result.config.eval_episodes * len(result.config.env_ids)
            if result.config.eval_every
            else 0
        ),
        "torch_threads": torch.get_num_threads(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "other_processes_cpu_share": _others_share(cpu_before, cpu_after),
        "bar_met": ok,
        "output_dir": None if scratch else str(result.output_dir),
        "rewards": [round(r, 6) for r in result.rewards()],
    }
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    return record


def _cpu_seconds() -> tuple[float, float, float] | None:
    """CPU seconds busy on the whole machine (``/proc/stat``), used by this process (and its
    children), and the wall clock: their differences over a run say how much CPU other
    processes took meanwhile (``None`` where ``/proc/stat`` is missing)."""
    import resource
    import time

    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    jiffies = [int(x) for x in fields]
    busy = (sum(jiffies[:8]) - jiffies[3] - jiffies[4]) / os.sysconf("SC_CLK_TCK")
    own = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        own += usage.ru_utime + usage.ru_stime
    return busy, own, time.perf_counter()


def _others_share(before: tuple | None, after: tuple | None) -> float | None:
    """Share of the machine's CPU time (all its cores) that other processes used during a run:
    0 on an idle machine, 0.5 if they kept half of the cores busy."""
    if before is None or after is None:
        return None
    busy, own, wall = (a - b for a, b in zip(after, before, strict=True))
    cores = os.cpu_count() or 1
    return round(max(0.0, busy - own) / (wall * cores), 3) if wall > 0 else None


def _finite(value: float, digits: int) -> float | None:
    """``value`` rounded, or ``None`` if it is not finite (a ratio to a zero first-10 mean)."""
    return round(value, digits) if math.isfinite(value) else None


def _report(record: dict[str, Any]) -> dict[str, Any]:
    """The short form of a record that is printed (no per-step rewards or eval rows)."""
    return {k: v for k, v in record.items() if k not in ("rewards", "evals")}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("trl-env", "torch", "transformers", "trl"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def summarize(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Min, max and mean over the seeds of each of :data:`SUMMARY_FIGURES`."""
    summary = {}
    for name in SUMMARY_FIGURES:
        values = [r[name] for r in records if isinstance(r.get(name), (int, float))]
        if values:
            summary[name] = {
                "min": min(values),
                "max": max(values),
                "mean": round(sum(values) / len(values), 6),
            }
    return summary


def write_results(
    path: str,
    records: list[dict[str, Any]],
    command: list[str],
    train_argv: list[str],
    note: str | None = None,
) -> None:
    """The results file: the machine, the command, every seed's figures and their summary."""
    from trl_env._machine import cpu_model, machine_record

    versions = _versions()
    results = {
        "command": shlex.join(command),
        "train_command": shlex.join(["trl-env", "train", *train_argv]) + " --seed S",
        "seeds": [r["seed"] for r in records],
        "window": WINDOW,
        "bar": {"min_ratio": MIN_RATIO, "min_gain": MIN_GAIN, "max_wall_time_s": MAX_WALL_S},
        "bar_met": all(r["bar_met"] for r in records),
        "summary": summarize(records),
        "per_seed": records,
        "machine": {
            "cpu_model": cpu_model(),
            # The flags that decide the arithmetic (bf16 units or emulation), as every results
            # file of a train command records them.
            **{k: v for k, v in machine_record().items() if k in ("cpu_flags", "bf16_units")},
            "cores_available": _cores(),
            "torch_threads": sorted({r["torch_threads"] for r in records}),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "versions": versions,
        "trl_env_version": versions["trl-env"],
        "torch_version": versions["torch"],
        "git_commit": _git_commit(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "note": note,
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


def _print_table(records: list[dict[str, Any]]) -> None:
    first, last = f"first{WINDOW}_mean_reward", f"last{WINDOW}_mean_reward"
    print(f"\nseed  first{WINDOW}  last{WINDOW}   ratio    gain   wall s  eval success [95% CI]")
    for r in records:
        ev = (
            f"{r['eval_success_rate']:.3f} [{r['eval_success_ci'][0]:.3f}, "
            f"{r['eval_success_ci'][1]:.3f}] @ step {r['eval_step']}"
            if "eval_success_rate" in r
            else "-"
        )
        ratio = f"{r['ratio']:5.2f}x" if r["ratio"] is not None else "    -"
        print(
            f"{r['seed']:>4}  {r[first]:7.3f}  {r[last]:6.3f}  {ratio}  "
            f"{r['gain']:+.3f}  {r['wall_time_s']:7.1f}  {ev}"
        )


def _is_note(argv: list[str], i: int) -> bool:
    """Whether ``argv[i]`` is ``--note`` or its value (left out of the recorded command)."""
    return (
        argv[i] == "--note" or argv[i].startswith("--note=") or (i > 0 and argv[i - 1] == "--note")
    )


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    own, rest = _own_parser().parse_known_args(argv)
    if not rest or rest[0].startswith("-"):
        rest = [DEFAULT_ENV, *rest]
    parser = _train_parser()
    args = parser.parse_args(rest)  # validates the train options
    if own.seeds and any(a == "--seed" or a.startswith("--seed=") for a in rest):
        parser.error("give either --seed or --seeds, not both")

    if not own.seeds:
        args.copy_plot = own.copy_plot
        record = _run_one(args)
        if own.record:
            Path(own.record).write_text(json.dumps(record), encoding="utf-8")
        records = [record]
    else:
        records = []
        for i, seed in enumerate(own.seeds):
            child = [sys.executable, str(Path(__file__).resolve()), *rest, "--seed", str(seed)]
            if args.output_dir is not None:
                child += ["--output-dir", str(Path(args.output_dir) / f"seed-{seed}")]
            if own.copy_plot and i == 0:
                child += ["--copy-plot", own.copy_plot]
            with tempfile.TemporaryDirectory(prefix="trl-env-learning-curve-record-") as tmp:
                record_file = Path(tmp) / "record.json"
                print(f"--- seed {seed}: {shlex.join(child[1:])}", flush=True)
                done = subprocess.run([*child, "--record", str(record_file)], check=False)
                if not record_file.is_file():
                    print(f"seed {seed}: the run failed (exit status {done.returncode})")
                    return 2
                records.append(json.loads(record_file.read_text(encoding="utf-8")))
        _print_table(records)

    if own.results:
        shown = [a for i, a in enumerate(argv) if not _is_note(argv, i)]
        command = ["python", "benchmarks/learning_curve.py", *shown]
        write_results(own.results, records, command, rest, own.note)
    if len(records) == 1 and not own.seeds:
        print(json.dumps(_report(records[0])))
    else:
        print(
            json.dumps(
                {
                    "seeds": [r["seed"] for r in records],
                    "summary": summarize(records),
                    "per_seed": [_report(r) for r in records],
                    "results": own.results,
                    "bar_met": all(r["bar_met"] for r in records),
                }
            )
        )
    return 0 if all(r["bar_met"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
