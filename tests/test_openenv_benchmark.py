"""benchmarks/slow_env.py --quick runs end to end (figures are printed, never asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openenv")
pytest.importorskip("trl")

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "slow_env.py"


@pytest.mark.slow
def test_slow_env_benchmark_quick() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert set(figures) == {"ratio_inprocess_50ms", "ratio_inprocess_500ms", "ratio_server_50ms"}
    assert all(isinstance(value, float) and value > 0 for value in figures.values())
    assert any(line.startswith("server_50ms") for line in lines)
