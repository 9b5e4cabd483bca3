"""Wall time of ``trl-env eval TextWordle-v0 --policy oracle --episodes 1000`` against its 5 s target.

Target (the CLI issue): the whole command, progress bar included, finishes in under 5 seconds.

Measured three ways:
* in-process, cold: the first ``trl_env.cli.main([...])`` call of a fresh interpreter (the Wordle
  solver builds its 2,315 x 2,315 pattern table and memoises its decisions then), timed from before
  ``import trl_env.cli``;
* in-process, warm: the same call again in that interpreter (table and decisions cached);
* the real command in a subprocess (interpreter start-up, imports, everything): the ``trl-env``
  console script when it is on ``PATH``, and ``python -m trl_env``.

The progress bar is on (tqdm writes to the subprocess's stderr, a pipe). Each figure is the median
of ``--repeats`` runs (the maximum is shown too); the ratio is median / 5 s.

Run:
    python benchmarks/eval_speed.py [--episodes 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET_S = 5.0
ROOT = Path(__file__).resolve().parent.parent

_IN_PROCESS = """
import contextlib, io, sys, time
start = time.perf_counter()
from trl_env.cli import main
argv = sys.argv[1:]
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
    code = main(argv)
cold = time.perf_counter() - start
assert code == 0 and "100.0%" in out.getvalue(), out.getvalue()
start = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(argv)
warm = time.perf_counter() - start
assert code == 0
print(cold, warm)
"""


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }


def in_process(argv: list[str]) -> tuple[float, float]:
    """(cold, warm) seconds of ``main(argv)`` in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", _IN_PROCESS, *argv],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    )
    cold, warm = result.stdout.split()
    return float(cold), float(warm)


def command(prefix: list[str], argv: list[str]) -> float:
    """Wall seconds of the command, start-up included; checks its exit status and output."""
    start = time.perf_counter()
    result = subprocess.run([*prefix, *argv], capture_output=True, text=True, env=_env())
    elapsed = time.perf_counter() - start
    if result.returncode != 0 or "100.0%" not in result.stdout:
        raise SystemExit(f"{' '.join(prefix + argv)} failed:\n{result.stdout}\n{result.stderr}")
    if "it/s" not in result.stderr and "ep/s" not in result.stderr:
        raise SystemExit("no progress bar on stderr: the figure would not include it")
    return elapsed


def report(name: str, times: list[float]) -> float:
    median = statistics.median(times)
    verdict = "ok" if median < TARGET_S else "OVER TARGET"
    print(
        f"{name:<34} median {median:6.3f} s   max {max(times):6.3f} s   "
        f"ratio to 5 s target {median / TARGET_S:5.2f}   {verdict}"
    )
    return median


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    argv = ["eval", "TextWordle-v0", "--policy", "oracle", "--episodes", str(args.episodes)]
    print(f"trl-env {' '.join(argv)}   ({args.repeats} runs each, {os.cpu_count()} CPUs)")

    colds, warms = zip(*(in_process(argv) for _ in range(args.repeats)), strict=True)
    report("in-process, cold (first call)", list(colds))
    report("in-process, warm (second call)", list(warms))
    worst = 0.0
    prefixes = [("python -m trl_env", [sys.executable, "-m", "trl_env"])]
    script = shutil.which("trl-env")
    if script is not None:
        prefixes.insert(0, ("trl-env (console script)", [script]))
    for name, prefix in prefixes:
        worst = max(worst, report(name, [command(prefix, argv) for _ in range(args.repeats)]))
    return 0 if worst < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
