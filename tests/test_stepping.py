"""Env-call executors (trl_env._stepping) and their use by the rollout (env_workers, timeouts)."""

from __future__ import annotations

import random
import threading
import time
from typing import ClassVar

import gymnasium as gym
import pytest

import trl_env  # noqa: F401  (registers the catalogue)
from trl_env._stepping import SequentialStepper, StepTimeoutError, ThreadStepper, make_stepper


class Recorder:
    """A stand-in env: ``step`` records its argument, optionally sleeps, blocks or raises."""

    def __init__(self, name: str, *, delay: float = 0.0, block: threading.Event | None = None):
        self.name = name
        self.delay = delay
        self.block = block
        self.closed = threading.Event()

    def step(self, action: str) -> str:
        if self.block is not None:
            self.block.wait()
        time.sleep(self.delay)
        if action == "raise":
            raise RuntimeError(f"{self.name} broke")
        return f"{self.name}:{action}"

    def close(self) -> None:
        self.closed.set()


def _step(env: Recorder, action: str) -> str:
    return env.step(action)


@pytest.mark.parametrize("stepper", [SequentialStepper(), ThreadStepper(3)], ids=["seq", "threads"])
def test_outcomes_in_input_order_and_errors_caught(stepper) -> None:
    envs = [Recorder(f"e{i}", delay=0.01 * (5 - i)) for i in range(5)]
    actions = ["a", "b", "raise", "d", "e"]
    outcomes = stepper.map(_step, envs, actions)
    assert [o.value for o in outcomes] == ["e0:a", "e1:b", None, "e3:d", "e4:e"]
    assert isinstance(outcomes[2].error, RuntimeError) and "e2 broke" in str(outcomes[2].error)
    stepper.shutdown()


def test_a_hung_call_times_out_and_its_env_is_closed_only_when_it_returns() -> None:
    release = threading.Event()
    hung = Recorder("hung", block=release)
    others = [Recorder(f"e{i}") for i in range(2)]
    stepper = ThreadStepper(3, timeout=0.2)
    outcomes = stepper.map(_step, [hung, *others], ["x", "y", "z"])
    assert isinstance(outcomes[0].error, StepTimeoutError)
    assert isinstance(outcomes[0].error, TimeoutError)
    assert [o.value for o in outcomes[1:]] == ["e0:y", "e1:z"]
    stepper.close_env(hung)
    assert not hung.closed.is_set()  # its call still runs: closing now would race with it
    # The pool replaced the stuck thread: a full-width batch still runs concurrently.
    gate = threading.Barrier(3, timeout=10)
    outcomes = stepper.map(lambda env, _: gate.wait(), [object()] * 3, [None] * 3)
    assert all(o.error is None for o in outcomes)
    release.set()
    assert hung.closed.wait(timeout=10)
    stepper.shutdown()


def _full_width_batch(stepper: ThreadStepper) -> list[str]:
    """One call per worker, each waiting for all the others: needs every thread of the pool."""
    gate = threading.Barrier(stepper.workers, timeout=30)
    outcomes = stepper.map(
        lambda gate, _: gate.wait(), [gate] * stepper.workers, [None] * stepper.workers
    )
    return [type(outcome.error).__name__ for outcome in outcomes]


@pytest.mark.parametrize("workers", [1, 3])
def test_calls_after_a_timeout_do_not_wait_for_the_hung_call(workers: int) -> None:
    # The hung call's thread leaves the pool when that call returns; until then its replacement
    # and the other threads serve every later call (they used to give up their place instead).
    release = threading.Event()  # set only at the end: a later call that waited never returns
    events: list[str] = []
    hung = Recorder("hung", block=release)
    stepper = ThreadStepper(workers, timeout=1.0)
    [outcome] = stepper.map(_step, [hung], ["x"])
    assert isinstance(outcome.error, StepTimeoutError)
    stepper.close_env(hung)

    def later_batches() -> None:
        for round_ in range(4):
            events.append(f"round {round_}: {_full_width_batch(stepper)}")
        events.append("done")

    runner = threading.Thread(target=later_batches, daemon=True)
    runner.start()
    runner.join(timeout=10.0)  # a hang guard only (10 x the limit); the batches need no release
    events.append("released")
    release.set()
    assert events == [
        *(f"round {r}: {['NoneType'] * workers}" for r in range(4)),
        "done",
        "released",
    ]
    # Once the hung call returns, its thread exits: the pool is back to its size, and serves.
    assert hung.closed.wait(timeout=10)
    deadline = time.monotonic() + 10
    while stepper._threads > workers and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stepper._threads == workers
    assert _full_width_batch(stepper) == ["NoneType"] * workers
    stepper.shutdown()


def test_time_waiting_for_a_free_thread_is_not_counted() -> None:
    # One thread, four calls of 0.3 s: the last starts after ~0.9 s but runs well within 1 s.
    stepper = ThreadStepper(1, timeout=1.0)
    envs = [Recorder(f"e{i}", delay=0.3) for i in range(4)]
    outcomes = stepper.map(_step, envs, ["a"] * 4)
    assert [o.error for o in outcomes] == [None] * 4
    stepper.shutdown()


def test_make_stepper_choices_and_errors() -> None:
    assert isinstance(make_stepper(0), SequentialStepper)
    threaded = make_stepper(0, timeout=3.0)  # a timeout needs a thread
    assert isinstance(threaded, ThreadStepper) and threaded.workers == 1
    threaded.shutdown()
    for bad in (-1, 1.5, True, "4"):
        with pytest.raises(ValueError, match="workers"):
            make_stepper(bad)  # type: ignore[arg-type]
    for bad in (0, -2.0, float("nan")):
        with pytest.raises(ValueError, match="timeout"):
            ThreadStepper(2, timeout=bad)


# --- in the rollout -------------------------------------------------------------------------

trl = pytest.importorskip("trl")

from trl_env.trl import make_rollout_func, play_episodes  # noqa: E402
from trl_env.trl._processors import ChatTemplateProcessor  # noqa: E402
from trl_env.trl._rollout import EnvErrorWarning, RolloutConfig, _EnvPool  # noqa: E402
from trl_env.trl._tasks import Task  # noqa: E402
from trl_env.trl.models import build_tiny_tokenizer  # noqa: E402


@pytest.fixture(scope="module")
def processor() -> ChatTemplateProcessor:
    return ChatTemplateProcessor(build_tiny_tokenizer("qwen3"))


class WordGenerator:
    """Plays the n-th word of a list at turn n for every episode (a stand-in for a model)."""

    WORDS = ("[crane]", "[slate]", "[moist]", "[pound]", "[light]", "[brick]")

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.turn = 0

    def generate(self, inputs, max_new_tokens):
        word = self.WORDS[self.turn % len(self.WORDS)]
        self.turn += 1
        eos = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        ids = [*self.tokenizer.encode(word, add_special_tokens=False), eos][:max_new_tokens]
        return [list(ids) for _ in inputs], [[-0.25] * len(ids) for _ in inputs]


class JitteryEnv(gym.Wrapper):
    """Steps after a random short sleep, so concurrent steps finish in a shuffled order."""

    def step(self, action):
        time.sleep(random.uniform(0, 0.01))
        return super().step(action)


class HangsOnMoist(gym.Wrapper):
    """Hangs (until released) when asked to play "moist"."""

    release = threading.Event()
    closed: ClassVar[list[int]] = []

    def step(self, action):
        if "moist" in action:
            self.release.wait()
        return super().step(action)

    def close(self):
        HangsOnMoist.closed.append(id(self))
        super().close()


@pytest.fixture
def registered():
    gym.register("TextJitteryWordle-v0", entry_point=lambda: JitteryEnv(gym.make("TextWordle-v0")))
    gym.register("TextHangWordle-v0", entry_point=lambda: HangsOnMoist(gym.make("TextWordle-v0")))
    yield
    del gym.registry["TextJitteryWordle-v0"], gym.registry["TextHangWordle-v0"]


def _play(processor, tasks, **config):
    return play_episodes(
        tasks,
        WordGenerator(processor.tokenizer),
        processor,
        RolloutConfig(**config),
        max_completion_length=1024,
    )


@pytest.mark.parametrize("workers", [1, 4, 16])
def test_same_seeds_same_episodes_whatever_the_worker_count(processor, registered, workers) -> None:
    tasks = [Task("TextJitteryWordle-v0", seed=seed) for seed in range(6) for _ in range(2)]
    sequential = _play(processor, tasks)
    concurrent = _play(processor, tasks, env_workers=workers, env_step_timeout=30.0)
    for a, b in zip(sequential, concurrent, strict=True):
        assert a.prompt_ids == b.prompt_ids
        assert a.completion_ids == b.completion_ids  # token-exact, same order
        assert a.env_mask == b.env_mask and a.logprobs == b.logprobs
        assert a.rewards == b.rewards and a.transcript == b.transcript
        assert a.ended_by == b.ended_by and a.error is None
    assert len({tuple(e.completion_ids) for e in sequential}) > 1  # the seeds differ


def test_a_hung_env_ends_only_its_episode_and_is_never_reused(processor, registered) -> None:
    HangsOnMoist.release.clear()
    HangsOnMoist.closed.clear()
    pool = _EnvPool()
    tasks = [Task("TextHangWordle-v0", seed=1), Task("TextWordle-v0", seed=1)]
    config = RolloutConfig(env_workers=2, env_step_timeout=0.5, env_error_penalty=-3.0)
    with pytest.warns(EnvErrorWarning, match="StepTimeoutError.*env_step_timeout=0.5"):
        hung, fine = play_episodes(
            tasks, WordGenerator(processor.tokenizer), processor, config,
            max_completion_length=1024, pool=pool,
        )  # fmt: skip
    assert hung.ended_by == "error" and hung.turns == 3 and hung.rewards[-1] == -3.0
    assert "StepTimeoutError" in (hung.error or "")
    assert fine.error is None and fine.ended_by == "truncated" and fine.turns == 6
    # The hung env is not in the pool and gets closed once its call returns.
    assert not pool._free[(tasks[0].env_id, tasks[0].kwargs_key)] and not HangsOnMoist.closed
    HangsOnMoist.release.set()
    deadline = time.monotonic() + 10
    while len(HangsOnMoist.closed) < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(HangsOnMoist.closed) == 1


def test_rollout_options_validated() -> None:
    for options in ({"env_workers": -1}, {"env_workers": "8"}, {"env_workers": True}):
        with pytest.raises(ValueError, match="env_workers"):
            make_rollout_func(**options)
    for options in ({"env_step_timeout": 0}, {"env_step_timeout": float("nan")}):
        with pytest.raises(ValueError, match="env_step_timeout"):
            make_rollout_func(**options)
    rollout = make_rollout_func(env_workers=8, env_step_timeout=2.5)
    assert (rollout.config.env_workers, rollout.config.env_step_timeout) == (8, 2.5)
