"""benchmarks/gpu_generation_check.py (run on a GPU machine without trl) works: here on the CPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_generation_check.py"


def test_the_gpu_check_passes_on_the_cpu(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--device", "cpu"],
        capture_output=True, text=True, check=False, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["ok"] is True and result["device"] == "cpu"
    assert result["greedy_same_tokens"] == 1.0
