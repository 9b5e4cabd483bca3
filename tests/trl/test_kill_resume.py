"""A ``trl-env train`` run killed with SIGKILL resumes cleanly with ``--resume``.

A real process of the command is killed (no Python handler runs: as when the machine's OOM killer
or a scheduler ends it) a step or two after a checkpoint, then resumed: it continues from the
latest checkpoint, the steps logged after that checkpoint are replayed and appear once in
metrics.csv (and in rollouts/), and the final model is written. Marked ``slow`` as the other real
runs; the tiny model's steps take well under a second, so both runs take seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("trl")

if not hasattr(signal, "SIGKILL"):  # pragma: no cover - Windows
    pytest.skip("needs SIGKILL", allow_module_level=True)

ENV = "TextLargestNumber-v0"
MAX_STEPS = 9
SAVE_STEPS = 3
BATCH = 16
RUN = [
    *(sys.executable, "-m", "trl_env", "train", ENV, "--max-steps", str(MAX_STEPS)),
    *("--save-steps", str(SAVE_STEPS), "--batch-size", str(BATCH), "--num-tasks", "16"),
    *("--warm-start-steps", "5", "--eval-every", "0", "--no-plot"),
]  # with its progress lines: the resumed run names the checkpoint it continues from


def logged_steps(metrics: Path) -> list[int]:
    """The steps of metrics.csv's complete rows (the file may be mid-append)."""
    try:
        text = metrics.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    rows = text.split("\n")[1:-1]  # no header; the last piece is "" or a row being written
    return [int(row.split(",", 1)[0]) for row in rows if row]


def checkpoints(out: Path) -> list[int]:
    return sorted(int(path.name.split("-")[1]) for path in out.glob("checkpoint-*"))


@pytest.mark.slow
def test_a_run_killed_with_sigkill_resumes_from_its_last_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "run"
    log = tmp_path / "killed.log"
    env = {**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1"}
    with log.open("w") as output:  # a file, not a pipe: a full pipe would block the run
        process = subprocess.Popen(
            [*RUN, "--output-dir", str(out)],
            cwd=tmp_path,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        # Kill a step or two after a checkpoint: never while one is being saved (steps that
        # are multiples of SAVE_STEPS save right after they are logged).
        deadline = time.monotonic() + 300
        while True:
            steps = logged_steps(out / "metrics.csv")
            if steps and steps[-1] > SAVE_STEPS and steps[-1] % SAVE_STEPS in (1, 2):
                process.send_signal(signal.SIGKILL)
                break
            assert process.poll() is None, f"the run ended before the kill:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"no step after a checkpoint:\n{log.read_text()}"
            time.sleep(0.01)
        assert process.wait(timeout=60) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=60)

    killed_at = logged_steps(out / "metrics.csv")[-1]
    latest = checkpoints(out)[-1]
    assert latest < killed_at < MAX_STEPS  # rows after the checkpoint, to be replayed
    assert not (out / "final").exists()
    rows_before = (out / "metrics.csv").read_text(encoding="utf-8").splitlines()
    saved = {path.name: path.stat().st_mtime_ns for path in (out / "rollouts").glob("*.jsonl")}

    resumed = subprocess.run(
        [*RUN, "--output-dir", str(out), "--resume"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    assert f"resuming from {out / f'checkpoint-{latest}'}" in resumed.stderr, resumed.stderr
    # Every step once, in order, though steps latest+1..killed_at were logged before the kill.
    assert logged_steps(out / "metrics.csv") == list(range(1, MAX_STEPS + 1))
    rows = (out / "metrics.csv").read_text(encoding="utf-8").splitlines()
    assert rows[: latest + 1] == rows_before[: latest + 1]  # the steps up to it were kept
    rollouts = sorted((out / "rollouts").glob("step-*.jsonl"))
    assert [int(path.stem.split("-")[1]) for path in rollouts] == list(range(1, MAX_STEPS + 1))
    for path in rollouts:  # each replayed step's episodes replace the killed run's, not add
        assert len(path.read_text(encoding="utf-8").splitlines()) == BATCH, path
        step = int(path.stem.split("-")[1])
        # Steps up to the checkpoint were not played again; the later ones were.
        assert (path.stat().st_mtime_ns == saved.get(path.name)) == (step <= latest), path
    # The final model and the run's summary are written.
    assert (out / "final" / "config.json").is_file()
    assert (out / "final" / "model.safetensors").is_file()
    assert json.loads((out / "run.json").read_text())["steps"] == MAX_STEPS
