"""``benchmarks/bf16_matmul.py``: each ``ONEDNN_MAX_CPU_ISA`` cap runs in its own process, and the
library's bf16 decision under it is the one its children report (a cap below bf16: no bf16)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trl_env._machine import cpu_has_bf16_units

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "bf16_matmul.py"


def test_each_cap_is_timed_in_its_own_process_with_the_librarys_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):  # as the children run "none"
        monkeypatch.delenv(name, raising=False)
    env = {
        k: v for k, v in os.environ.items() if k not in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")
    }
    done = subprocess.run(
        [sys.executable, str(BENCHMARK), "--caps", "none", "AVX2", "--repeats", "1"],
        env=env, capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    result = json.loads(done.stdout.splitlines()[-1])
    assert list(result["caps"]) == ["none", "AVX2"]
    assert result["caps"]["none"]["bf16_units"] is cpu_has_bf16_units()
    assert result["caps"]["AVX2"]["bf16_units"] is False  # the cap, not the CPU's flags
    for cap in result["caps"].values():
        assert set(cap["shapes"]) == {"mlp_512_tokens", "lm_head_8_rows"}
        for timing in cap["shapes"].values():
            assert timing["float32_ms"] > 0 and timing["bf16_ms"] > 0
            assert timing["bf16_over_float32"] == round(timing["bf16_ms"] / timing["float32_ms"], 2)
    rows = [line.split()[0] for line in done.stdout.splitlines()[1:-1]]
    assert rows == ["none", "none", "AVX2", "AVX2"] and result["cpu"]["summary"]
