"""Steps per second of TextWordle-v0: raw class vs ``gym.make`` vs the protocol adapter.

Workload (fixed and seeded): 2,000 episodes, each of up to 6 valid guesses drawn from the
dictionary (an episode ends early when a guess wins). The three ways play the identical workload;
their runs are interleaved and repeated, and the median is reported so that machine noise hits all
three alike.

Targets (issue #2): a step through ``gym.make`` under 10 us; the bridge (gym.make's wrappers plus
the protocol adapter) costing at most 25% over the raw class.

Run:
    python benchmarks/env_throughput.py [--episodes 2000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

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


def run_protocol(env: trl_env.Env, workload: Workload) -> int:
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
    args = parser.parse_args()

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


if __name__ == "__main__":
    main()
