"""Peak memory of ``trl-env sft`` with gradient checkpointing (the default) and without it.

Plays random demos of one env once (``trl-env demos``), then runs the same ``trl-env sft --lora``
on them twice, each in its own process: as the default has it (activations recomputed in the
backward pass) and with ``--no-gradient-checkpointing``. Peak RSS comes from ``getrusage`` of
the process, wall time from the clock, the step losses from the command's own progress lines.
The default env is TextSudoku9x9-v0, whose demos of 4 turns are the longest of the 19 native
envs' (776 tokens): the longest batches of an SFT on all of them (the warm-start table's SFT, 608
demos of the 19 envs, peaked at 20.8 GB without checkpointing). Prints one JSON line:
``checkpointing_on`` and ``checkpointing_off`` (each ``peak_rss_gb``, ``wall_s``, ``losses``: every
step's, as the command prints them, to 3 decimals), ``ratio`` (the peak without over the peak
with), ``same_losses``, the CPU, the commit (``uncommitted``: tracked files changed) and the load
average before the runs (``idle``: under 0.5).

Run:
    python benchmarks/sft_memory.py --steps 2
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import DEFAULT_GGUF, cli, git_commit

from trl_env._machine import cpu_summary

# Runs one command and prints its peak RSS (KiB on Linux) and wall time: getrusage of the
# children of this small process is that command's alone.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - start
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr[-4000:],
                  "peak_kib": peak_kib, "wall_s": wall}))
"""
STEP_LOSS = re.compile(r"sft: step \d+/\d+ \(loss ([0-9.]+)\)")


def measure(command: list[str], steps: int) -> dict:
    """Peak RSS, wall time and step losses of one ``trl-env`` command run in its own process."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *cli(command)], capture_output=True, text=True, check=True
    )
    result = json.loads(done.stdout)
    if result["rc"] != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result['stderr']}")
    losses = [float(loss) for loss in STEP_LOSS.findall(result["stdout"])]
    if len(losses) != steps:  # the command prints every step's loss up to 19 steps
        raise SystemExit(f"expected {steps} step losses in the output, read {len(losses)}")
    return {
        "peak_rss_gb": round(result["peak_kib"] * 1024 / 1e9, 2),
        "wall_s": round(result["wall_s"], 1),
        "losses": losses,
        "command": " ".join(command),
    }


def uncommitted() -> bool:
    """Whether tracked files differ from the commit checked out."""
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        cwd=Path(__file__).resolve().parent, capture_output=True, text=True,
    )  # fmt: skip
    return bool(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_GGUF))
    parser.add_argument("--env", default="TextSudoku9x9-v0")
    parser.add_argument("--episodes", type=int, default=16, help="random demos played")
    parser.add_argument(
        "--max-turns", type=int, default=4, help="turns of each demo (the warm-start table's 4)"
    )
    parser.add_argument("--steps", type=int, default=2, choices=range(1, 20), metavar="1..19",
                        help="SFT steps of each run")  # fmt: skip
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    load_before, commit, changed = os.getloadavg()[0], git_commit(), uncommitted()
    with tempfile.TemporaryDirectory() as work:
        demos = str(Path(work) / "demos")
        subprocess.run(
            cli(["trl-env", "demos", args.env, "--policy", "random", "--episodes", str(args.episodes),
             "--max-turns", str(args.max_turns), "--out", demos]), check=True, capture_output=True,
        )  # fmt: skip
        runs = {}
        for name, flags in (("checkpointing_on", []), ("checkpointing_off", ["--no-gradient-checkpointing"])):  # fmt: skip
            command = [
                "trl-env", "sft", args.env, "--model", args.model, "--lora", "--demos", demos,
                "--max-steps", str(args.steps), "--threads", str(args.threads),
                "--output-dir", str(Path(work) / name), *flags,
            ]  # fmt: skip
            runs[name] = measure(command, args.steps)
    on, off = runs["checkpointing_on"], runs["checkpointing_off"]
    print(json.dumps({
        "env": args.env, "episodes": args.episodes, "max_turns": args.max_turns,
        "steps": args.steps, **runs,
        "ratio": round(off["peak_rss_gb"] / on["peak_rss_gb"], 2),
        "same_losses": on["losses"] == off["losses"],
        "cpu": cpu_summary(args.threads),
        "commit": commit, "uncommitted": changed,
        "load_average_before": round(load_before, 2), "idle": load_before < 0.5,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
