"""Steps per second of TextWordle-v0: raw class vs ``gym.make`` vs the protocol adapter.

Workload (fixed and seeded): 2,000 episodes, each of up to 6 valid guesses drawn from the
dictionary (an episode ends early when a guess wins). The three ways play the identical workload;
their runs are interleaved and repeated, and the median is reported so that machine noise hits all
three alike.

Targets (issue #2): a step through ``gym.make`` under 10 us; the bridge (gym.make's wrappers plus
the protocol adapter) costing at most 25% over the raw class.

Then, for every registered ID: the mean time of a step through ``gym.make`` (actions from the
env module's ``oracle_action`` when it has a cheap one, seeded random text otherwise; only the
``step`` call is timed), and the throughput of ``gym.make_vec`` with 8 envs, sync vs async
(seeded random text actions). Envs whose step takes more than 1 ms are listed at the end.

Run:
    python benchmarks/env_throughput.py [--episodes 2000] [--repeats 7] [--quick]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
from trl_env.envs.wordle import TextWordleEnv, allowed_words

import trl_env

Workload = list[tuple[int, list[str]]]


def make_workload(episodes: int, seed: int = 0) -> Workload:
    rng = np.random.default_rng(seed)
    words = sorted(allowed_words())
    return [
        (int(rng.integers(2**31)), [f"[{words[i]}]" for i in rng.integers(len(words), size=6)])
        for _ in range(episodes)
    ]


def run_gym(env: gym.Env[str, str], workload: Workload) -> int:
    steps = 0
    for seed, guesses in workload:
        env.reset(seed=seed)
        for guess in guesses:
            _, _, terminated, truncated, _ = env.step(guess)
            steps += 1
            if terminated or truncated:
                break
    return steps


def run_protocol(env: trl_env.protocol.Env, workload: Workload) -> int:
    steps = 0
    for seed, guesses in workload:
        env.reset(str(seed))
        for guess in guesses:
            env.step(guess)
            steps += 1
            if not env.alive:
                break
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument(
        "--quick", action="store_true", help="small workloads everywhere (a smoke run, ~seconds)"
    )
    args = parser.parse_args()
    if args.quick:
        args.episodes, args.repeats = min(args.episodes, 200), min(args.repeats, 3)

    workload = make_workload(args.episodes)
    ways: dict[str, Callable[[], int]] = {
        "raw TextWordleEnv": partial(run_gym, TextWordleEnv(), workload),
        'gym.make("TextWordle-v0")': partial(run_gym, gym.make("TextWordle-v0"), workload),
        "protocol adapter over gym.make": partial(
            run_protocol, trl_env.GymnasiumToProtocol("TextWordle-v0"), workload
        ),
    }
    timings: dict[str, list[float]] = {name: [] for name in ways}
    step_counts: dict[str, int] = {}
    for name, run in ways.items():  # warm-up (word lists, caches)
        step_counts[name] = run()
    assert len(set(step_counts.values())) == 1, f"ways played different workloads: {step_counts}"
    steps = next(iter(step_counts.values()))
    for _ in range(args.repeats):
        for name, run in ways.items():
            start = time.perf_counter()
            run()
            timings[name].append(time.perf_counter() - start)

    raw = statistics.median(timings["raw TextWordleEnv"])
    print(f"workload: {args.episodes} episodes, {steps} steps, median of {args.repeats} repeats")
    print(f"{'way':34s} {'steps/s':>10s} {'us/step':>8s} {'vs raw':>7s}")
    for name, samples in timings.items():
        median = statistics.median(samples)
        print(f"{name:34s} {steps / median:10.0f} {1e6 * median / steps:8.2f} {median / raw:7.2f}x")
    make_us = 1e6 * statistics.median(timings['gym.make("TextWordle-v0")']) / steps
    bridge = statistics.median(timings["protocol adapter over gym.make"]) / raw
    print(
        f"target: gym.make step < 10 us -> {make_us:.2f} us ({'met' if make_us < 10 else 'MISSED'})"
    )
    print(
        f"target: bridge overhead <= 25% over raw -> {100 * (bridge - 1):.1f}% "
        f"({'met' if bridge <= 1.25 else 'MISSED'})"
    )
    every_env_table(
        steps=300 if args.quick else 3000, vector_steps=20 if args.quick else 200, num_envs=8
    )


# --- every registered env ---------------------------------------------------------------------

SLOW_STEP_S = 1e-3
ORACLE_BUDGET_S = 2e-3  # an oracle slower than this per call is not "cheap": use random text


def cheap_oracle(env_id: str) -> Callable[[gym.Env[str, str]], str] | None:
    """The env module's ``oracle_action(env)`` if it exists and answers within the budget."""
    module_name = gym.spec(env_id).entry_point.partition(":")[0]  # type: ignore[union-attr]
    oracle = getattr(importlib.import_module(module_name), "oracle_action", None)
    if oracle is None:
        return None
    env = gym.make(env_id)
    env.reset(seed=0)
    try:
        oracle(env)  # warm-up: an oracle may build a policy table once per process
        start = time.perf_counter()
        for _ in range(3):
            _, _, terminated, truncated, _ = env.step(oracle(env))
            if terminated or truncated:
                env.reset()
    except Exception:  # an oracle that does not fit this variant: fall back to random text
        return None
    return oracle if (time.perf_counter() - start) / 3 < ORACLE_BUDGET_S else None


def random_replies(env: gym.Env[str, str], n: int, seed: int = 0) -> list[str]:
    space = env.action_space
    space.seed(seed)
    return [space.sample() for _ in range(n)]


def time_single(env_id: str, steps: int) -> tuple[float, str]:
    """Mean seconds per ``step`` through gym.make, and the policy used."""
    env = gym.make(env_id)
    oracle = cheap_oracle(env_id)
    replies = random_replies(env, 97)
    env.reset(seed=0)
    elapsed, episodes = 0.0, 0
    for t in range(steps):
        action = oracle(env) if oracle is not None else replies[t % len(replies)]
        start = time.perf_counter()
        _, _, terminated, truncated, _ = env.step(action)
        elapsed += time.perf_counter() - start
        if terminated or truncated:
            episodes += 1
            env.reset(seed=episodes)
    return elapsed / steps, "oracle" if oracle is not None else "random"


def time_vector(env_id: str, mode: str, num_envs: int, steps: int) -> float:
    """Env steps per second of ``gym.make_vec(..., vectorization_mode=mode)``."""
    envs = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode=mode)
    try:
        replies = random_replies(gym.make(env_id), 97)
        batches = [
            tuple(replies[(t * num_envs + i) % len(replies)] for i in range(num_envs))
            for t in range(steps)
        ]
        envs.reset(seed=0)
        envs.step(batches[0])  # warm-up (worker start-up, first allocations)
        start = time.perf_counter()
        for batch in batches:
            envs.step(batch)
        return num_envs * steps / (time.perf_counter() - start)
    finally:
        envs.close()


def every_env_table(steps: int, vector_steps: int, num_envs: int) -> None:
    print()
    print(
        f"every registered env: gym.make step ({steps} steps), "
        f"make_vec N={num_envs} ({vector_steps} steps)"
    )
    header = f"{'env id':26s} {'policy':>6s} {'us/step':>8s} {'steps/s':>9s}"
    print(f"{header} {'sync/s':>9s} {'async/s':>9s}")
    slow: list[tuple[str, float]] = []
    rows: list[dict[str, Any]] = []
    for spec in trl_env.envs.env_specs("catalogue"):
        per_step, policy = time_single(spec.id, steps)
        sync = time_vector(spec.id, "sync", num_envs, vector_steps)
        async_ = time_vector(spec.id, "async", num_envs, vector_steps)
        rows.append({"id": spec.id, "us": 1e6 * per_step})
        print(
            f"{spec.id:26s} {policy:>6s} {1e6 * per_step:8.1f} {1 / per_step:9.0f} "
            f"{sync:9.0f} {async_:9.0f}"
        )
        if per_step > SLOW_STEP_S:
            slow.append((spec.id, per_step))
    if slow:
        for env_id, per_step in slow:
            print(f"SLOW: {env_id} steps in {1e3 * per_step:.2f} ms (> 1 ms)")
    else:
        print(f"every env steps in under 1 ms (slowest: {max(rows, key=lambda r: r['us'])['id']})")


if __name__ == "__main__":
    main()
