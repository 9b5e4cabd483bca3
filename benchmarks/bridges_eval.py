"""Random and oracle success per bridged ID (reasoning-gym and TextArena), as Markdown tables.

For every bridged ID: ``--episodes`` episodes (seeds 0, 1, ...) played by the env's own
``random_action`` policy and, where the env has one, by its ``oracle_action``. Success is
``info["won"]`` at the end of the episode. Also prints the import-time cost of the bridges
(importing their static tables and registering every bridged ID), measured in fresh processes against the
whole ``import trl_env`` (goal: at most 5% of it), and the wall time of the evaluation itself.

The output is the eval table of ``docs/bridges/reasoning_gym.md`` and ``docs/bridges/textarena.md``.

Run:
    python benchmarks/bridges_eval.py [--episodes 10] [--source reasoning-gym|textarena]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
from trl_env.envs import env_has_oracle, env_source, env_specs
from trl_env.envs.bridges import NAMESPACES

import trl_env  # noqa: F401  (registers the bridged IDs)

IMPORT_GOAL = 0.05  # the bridges may add at most 5% to `import trl_env`
_IMPORT_PROBE = """
import time
t0 = time.perf_counter()
import trl_env
t1 = time.perf_counter()
import gymnasium as gym
from trl_env.envs import env_specs
from trl_env.envs.bridges import NAMESPACES, register_bridged_envs
for spec in env_specs():
    if spec.namespace in NAMESPACES.values():
        del gym.registry[spec.id]
t2 = time.perf_counter()
register_bridged_envs()
t3 = time.perf_counter()
print(t1 - t0, t3 - t2)
"""


def play(env: gym.Env[str, str], seed: int, policy: str, max_steps: int = 500) -> bool:
    """One episode; whether it was won."""
    env.reset(seed=seed)
    rng = np.random.default_rng([seed, 1])  # not the env's own stream
    game = env.unwrapped
    for _ in range(max_steps):
        action = game.oracle_action() if policy == "oracle" else game.random_action(rng)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return bool(info.get("won"))
    return False


def import_cost(runs: int = 7) -> tuple[float, float]:
    """Median seconds of ``import trl_env`` and of the bridges' share of it (fresh processes).

    The share is the import of ``trl_env.envs.bridges`` (from ``-X importtime``) plus a timed
    re-registration of every bridged ID.
    """
    totals, bridges = [], []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", _IMPORT_PROBE],
            capture_output=True,
            text=True,
            check=True,
        )
        total, registration = map(float, out.stdout.split())
        module_us = next(
            int(line.split("|")[1])
            for line in out.stderr.splitlines()
            if line.rstrip().endswith(" trl_env.envs.bridges")
        )
        totals.append(total)
        bridges.append(registration + module_us / 1e6)
    return statistics.median(totals), statistics.median(bridges)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=10)
    parser.add_argument("--source", choices=["reasoning-gym", "textarena"], default=None)
    parser.add_argument("--import-only", action="store_true", help="only the import-time cost")
    args = parser.parse_args()
    started = time.perf_counter()
    current = None
    bridged = [spec for spec in env_specs(args.source) if env_source(spec) in NAMESPACES]
    for spec in [] if args.import_only else bridged:
        if env_source(spec) != current:
            current = env_source(spec)
            print(f"\n### {current} ({args.episodes} episodes per policy)\n")
            print("| ID | random success | oracle success |")
            print("|---|---|---|")
        env = gym.make(spec.id)
        seeds = range(args.episodes)
        random_rate = sum(play(env, s, "random") for s in seeds) / args.episodes
        oracle = "no oracle"
        if env_has_oracle(spec):
            oracle = f"{sum(play(env, s, 'oracle') for s in seeds) / args.episodes:.2f}"
        print(f"| `{spec.id}` | {random_rate:.2f} | {oracle} |", flush=True)
    total, bridges = import_cost()
    print(
        f"\nimport trl_env: {1000 * total:.1f} ms (median of 7 fresh processes); registering the "
        f"bridges (module import + registration): {1000 * bridges:.2f} ms = {bridges / total:.1%} of it "
        f"(goal <= {IMPORT_GOAL:.0%}: ratio to goal {bridges / total / IMPORT_GOAL:.2f})"
    )
    print(f"evaluation wall time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
