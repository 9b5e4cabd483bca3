"""Whether bfloat16 pays on this CPU: a matmul in float32 and in bf16, uncapped and with oneDNN
capped by ``ONEDNN_MAX_CPU_ISA``, beside what the library decides there
(:func:`trl_env._machine.cpu_has_bf16_units`, the default of ``--bf16``).

torch runs a CPU bf16 matmul through oneDNN, which does it in hardware with ``avx512_bf16`` or
AMX. Capped below them, oneDNN emulates bf16 (``ONEDNN_MAX_CPU_ISA=AVX512_CORE``), or, under
AVX-512, torch does not hand bf16 to oneDNN at all and falls back to a loop
(``ONEDNN_MAX_CPU_ISA=AVX2``). The library counts such a cap as "no bf16 units", so its default
stays float32 there; this benchmark shows both sides of that rule on the CPU at hand.

The shape is SmolLM2-135M's MLP up-projection for 512 tokens (512 x 576 by 576 x 1536), and its
LM head for a decode step of 8 rows (8 x 576 by 576 x 49152). Each setting runs in its own
process (the cap is read when oneDNN starts). Prints a table and, as its last line, one JSON
object: per cap, ``float32_ms``, ``bf16_ms``, ``bf16_over_float32`` (> 1: bf16 slower) and
``bf16_units`` (the library's answer under that cap), plus the CPU and the torch threads.

Run:
    python benchmarks/bf16_matmul.py
    python benchmarks/bf16_matmul.py --caps none AVX2 AVX512_CORE AVX512_CORE_BF16
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _real_model import git_commit

SHAPES = {"mlp_512_tokens": ((512, 576), (576, 1536)), "lm_head_8_rows": ((8, 576), (576, 49152))}


def time_matmuls(repeats: int) -> dict[str, dict[str, float]]:
    """The median time (ms) of each shape's matmul in float32 and bf16, in this process."""
    import torch

    torch.manual_seed(0)
    timings: dict[str, dict[str, float]] = {}
    for name, (left, right) in SHAPES.items():
        for dtype in (torch.float32, torch.bfloat16):
            a, b = torch.randn(*left, dtype=dtype), torch.randn(*right, dtype=dtype)
            for _ in range(3):  # warm-up: oneDNN builds its kernels on first use
                a @ b
            runs = []
            for _ in range(repeats):
                started = time.perf_counter()
                a @ b
                runs.append((time.perf_counter() - started) * 1e3)
            key = "float32_ms" if dtype is torch.float32 else "bf16_ms"
            timings.setdefault(name, {})[key] = round(statistics.median(runs), 3)
    return timings


def run_cap(cap: str, repeats: int) -> dict[str, object]:
    """One cap in a child process: its timings and the library's ``cpu_has_bf16_units``."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")
    }
    if cap != "none":
        env["ONEDNN_MAX_CPU_ISA"] = cap
    done = subprocess.run(
        [sys.executable, __file__, "--child", "--repeats", str(repeats)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--caps", nargs="+", default=["none", "AVX2", "AVX512_CORE"],
        help="ONEDNN_MAX_CPU_ISA values to run under ('none': uncapped)",
    )  # fmt: skip
    parser.add_argument("--repeats", type=int, default=20, help="timed matmuls per shape")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    import torch

    from trl_env._machine import cpu_has_bf16_units, machine_record

    if args.child:
        print(
            json.dumps({"shapes": time_matmuls(args.repeats), "bf16_units": cpu_has_bf16_units()})
        )
        return
    load_before = os.getloadavg()[0]
    caps: dict[str, object] = {}
    print(
        f"{'cap':18s} {'shape':16s} {'float32 ms':>10s} {'bf16 ms':>9s} {'bf16/fp32':>9s}  bf16 units"
    )
    for cap in args.caps:
        result = run_cap(cap, args.repeats)
        for shape, timing in result["shapes"].items():
            timing["bf16_over_float32"] = round(timing["bf16_ms"] / timing["float32_ms"], 2)
            print(f"{cap:18s} {shape:16s} {timing['float32_ms']:10.2f} {timing['bf16_ms']:9.2f} "
                  f"{timing['bf16_over_float32']:9.2f}  {result['bf16_units']}")  # fmt: skip
        caps[cap] = result
    print(json.dumps({
        "cpu": machine_record(torch.get_num_threads()), "commit": git_commit(),
        "load_average_before": round(load_before, 2), "caps": caps,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
