"""Slow envs off the generation path: rollout time with 50 ms and 500 ms env steps.

64 TextWordle-v0 episodes x 6 turns through the real play loop (``play_episodes``), with a
generation stand-in that takes a fixed 1 s per batched call (about what a small model takes on a
GPU) and always plays the same six words. The env is TextWordle-v0 behind a wrapper that sleeps
``latency`` seconds in every ``step``:

- in-process, ``env_workers=64``, latency 0 / 50 ms / 500 ms (and 50 ms with ``env_workers=0``,
  the sequential default, to show what the workers save);
- through a local OpenEnv server (``trl_env.openenv``, a subprocess of this script serving the
  slow env), ``gym.make("OpenEnv-v0", base_url=...)`` with ``env_workers=64``, latency 0 / 50 ms.

Each ratio is that rollout's time over the in-process 0-latency rollout's. Goals: <= 1.1x
in-process, <= 1.3x through the server; the printed floor, ``(generation + latency) /
generation``, is what no executor can beat (an episode's next generation needs its env's answer),
so 500 ms steps cannot get under 1.5x with 1 s generation calls. The LAST line printed is one JSON object with
``ratio_inprocess_50ms``, ``ratio_inprocess_500ms`` and ``ratio_server_50ms``.

Run:
    python benchmarks/slow_env.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence

import gymnasium as gym

import trl_env  # noqa: F401  (registers the catalogue)

SLOW_ID = "TextSlowWordle-v0"
WORDS = ("[crane]", "[slate]", "[moist]", "[pound]", "[light]", "[brick]")


class StepLatency(gym.Wrapper):
    """Sleeps ``latency`` seconds before every ``step`` (a compiler, a browser, a remote API)."""

    def __init__(self, env: gym.Env, latency: float) -> None:
        super().__init__(env)
        self.latency = latency

    def step(self, action):
        time.sleep(self.latency)
        return super().step(action)


def register_slow_env() -> None:
    if SLOW_ID not in gym.registry:
        gym.register(
            SLOW_ID, entry_point=lambda latency=0.0: StepLatency(gym.make("TextWordle-v0"), latency)
        )


class FixedTimeGenerator:
    """A generation stand-in: ``seconds`` per batched call, the next word of WORDS for everyone."""

    def __init__(self, tokenizer, seconds: float) -> None:
        self.seconds = seconds
        eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.replies = [[*tokenizer.encode(w, add_special_tokens=False), eos] for w in WORDS]
        self.calls = 0

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int):
        time.sleep(self.seconds)
        reply = self.replies[self.calls % len(self.replies)][:max_new_tokens]
        self.calls += 1
        return [list(reply) for _ in inputs], [[-0.1] * len(reply) for _ in inputs]


def rollout_seconds(tasks, processor, seconds: float, turns: int, workers: int) -> float:
    """Time of one ``play_episodes`` call (envs already made: pooled, as across GRPO steps)."""
    from trl_env.trl._rollout import RolloutConfig, _EnvPool, play_episodes

    pool = _EnvPool()
    warm = RolloutConfig(max_turns=1, env_workers=workers)
    play_episodes(tasks, FixedTimeGenerator(processor.tokenizer, 0.0), processor, warm,
                  max_completion_length=4096, pool=pool)  # fmt: skip
    config = RolloutConfig(max_turns=turns, env_workers=workers, env_step_timeout=60.0)
    generator = FixedTimeGenerator(processor.tokenizer, seconds)
    start = time.perf_counter()
    episodes = play_episodes(tasks, generator, processor, config, max_completion_length=4096,
                             pool=pool)  # fmt: skip
    elapsed = time.perf_counter() - start
    errors = [e.error for e in episodes if e.error]
    if errors:
        raise RuntimeError(f"{len(errors)} episodes failed, first: {errors[0]}")
    return elapsed


@contextlib.contextmanager
def local_server(latency: float) -> Iterator[str]:
    """This script in ``--serve`` mode: an OpenEnv server of the slow env on a free port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, __file__, "--serve", str(port), "--latency", str(latency)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/health", timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the benchmark's OpenEnv server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="8 episodes x 2 turns, 0.2 s calls")
    parser.add_argument("--serve", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--latency", type=float, default=0.0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    register_slow_env()
    if args.serve:
        from trl_env.openenv import serve

        serve(SLOW_ID, port=args.serve, env_kwargs={"latency": args.latency}, max_sessions=512)
        return

    from trl_env.trl._processors import ChatTemplateProcessor
    from trl_env.trl._tasks import Task
    from trl_env.trl.models import build_tiny_tokenizer

    episodes, turns, seconds = (8, 2, 0.2) if args.quick else (64, 6, 1.0)
    workers = episodes
    processor = ChatTemplateProcessor(build_tiny_tokenizer("qwen3"))

    def tasks(env_id: str, **kwargs) -> list[Task]:
        return [Task(env_id, seed=i // 4, kwargs=kwargs) for i in range(episodes)]

    print(f"{episodes} episodes x {turns} turns, generation stand-in {seconds} s per call, "
          f"env_workers={workers}")  # fmt: skip
    times: dict[str, float] = {}
    latencies = {"0ms": 0.0, "50ms": 0.05, "500ms": 0.5}
    runs = [
        ("inprocess_0ms", SLOW_ID, {"latency": 0.0}, workers),
        ("inprocess_50ms", SLOW_ID, {"latency": 0.05}, workers),
        ("inprocess_500ms", SLOW_ID, {"latency": 0.5}, workers),
        ("inprocess_50ms_sequential", SLOW_ID, {"latency": 0.05}, 0),
    ]
    for name, env_id, kwargs, run_workers in runs:
        times[name] = rollout_seconds(
            tasks(env_id, **kwargs), processor, seconds, turns, run_workers
        )
    for latency in (0.05,) if args.quick else (0.0, 0.05):
        with local_server(latency) as url:
            name = f"server_{round(latency * 1000)}ms"
            times[name] = rollout_seconds(
                tasks("OpenEnv-v0", base_url=url), processor, seconds, turns, workers
            )
    baseline = times["inprocess_0ms"]
    # No executor can beat this: an episode's next generation needs its env's answer, so every
    # turn takes at least one generation call plus one env step.
    print("floor: (generation + latency) / generation per turn; the machine is shared (noisy)")
    print(f"{'rollout':28} {'seconds':>8} {'ratio':>6} {'floor':>6}  goal")
    goals = {"inprocess_50ms": 1.1, "inprocess_500ms": 1.1, "server_50ms": 1.3}
    for name, value in times.items():
        latency = latencies[name.split("_")[1]]
        floor = "" if "sequential" in name else f"{(seconds + latency) / seconds:.2f}x"
        goal = f"<= {goals[name]}x" if name in goals else ""
        print(f"{name:28} {value:8.2f} {value / baseline:5.2f}x {floor:>6}  {goal}")
    print(json.dumps({f"ratio_{name}": round(times[name] / baseline, 3) for name in goals}))


if __name__ == "__main__":
    main()
