"""Learning, shown: a default ``trl-env train`` run with the built-in tiny model, on a CPU.

Runs exactly what ``trl-env train TextLargestNumber-v0`` runs (same options, same defaults, via
``trl_env.trl.train.add_arguments`` / ``run``), then prints the mean reward of the first and last
10 GRPO steps, their ratio, the absolute gain and the wall time, and checks them against the
bar of ``docs/learning.md``: last-10 mean at least twice the first-10 mean and at least 0.2
higher, within 10 minutes.

    python benchmarks/learning_curve.py                       # the documented run
    python benchmarks/learning_curve.py --seed 1              # another seed
    python benchmarks/learning_curve.py --copy-plot docs/img/learning_curve.png
    python benchmarks/learning_curve.py TextLargestNumber-v0 --max-steps 600   # any train option

Exit status 0 if the bar is met, 1 if not.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

DEFAULT_ENV = "TextLargestNumber-v0"
WINDOW = 10
MIN_RATIO = 2.0
MIN_GAIN = 0.2
MAX_WALL_S = 600.0


def main(argv: list[str] | None = None) -> int:
    from trl_env.trl.train import add_arguments, config_from_args, train

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.add_argument("--copy-plot", default=None, help="also copy the PNG plot here")
    argv = list(sys.argv[1:] if argv is None else argv)
    if not any(not a.startswith("-") for a in argv[:1]):
        argv = [DEFAULT_ENV, *argv]
    args = parser.parse_args(argv)
    scratch = None
    if args.output_dir is None:
        scratch = tempfile.mkdtemp(prefix="trl-env-learning-curve-")
        args.output_dir = scratch
    config = config_from_args(args)
    result = train(config.env_ids, config=config)
    summary = result.summary(WINDOW)
    ok = (
        summary["last_mean"] >= MIN_RATIO * summary["first_mean"]
        and summary["gain"] >= MIN_GAIN
        and summary["wall_time_s"] <= MAX_WALL_S
    )
    if args.copy_plot and result.plot_png:
        Path(args.copy_plot).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(result.plot_png, args.copy_plot)
    report = {
        "env_ids": config.env_ids,
        "steps": int(summary["steps"]),
        f"first{WINDOW}_mean_reward": round(summary["first_mean"], 4),
        f"last{WINDOW}_mean_reward": round(summary["last_mean"], 4),
        "ratio": round(summary["ratio"], 2),
        "gain": round(summary["gain"], 4),
        "wall_time_s": round(summary["wall_time_s"], 1),
        "train_time_s": round(result.train_time_s, 1),
        "final_success_rate_last10": round(
            sum(row.get("env/success_rate", 0.0) for row in result.history[-WINDOW:])
            / len(result.history[-WINDOW:]),
            4,
        ),
        "output_dir": None if scratch else str(result.output_dir),
        "bar_met": ok,
    }
    print(json.dumps(report, indent=2))
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
