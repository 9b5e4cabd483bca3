"""The hostile-reply check's tripwires: each fires, in this process and inside a scorer worker.

Every stand-in (``tests/_tripwire_standins.py``) does one thing a payload would do, harmlessly if
nothing stops it and without creating the canary file: the check can only fail on it if that
tripwire fired. The worker cases run the stand-ins as scorers in a real worker process (the
pool's own launch command, with the stand-ins registered), so each tripwire is shown to fire
there and to reach the check through the report file.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("reasoning_gym")

from trl_env.envs.bridges import _scorer_pool
from trl_env.envs.bridges._scorer_pool import ScorerError, ScorerPool
from trl_env.envs.bridges._scorer_worker import _Problems

import trl_env
from tests import _tripwire_standins as standins
from trl_env.error import TextEnvCheckError
from trl_env.utils import _hostile, check_hostile_replies

# The events that show each stand-in was caught. os.spawn* is fork + exec on POSIX: the fork is
# caught while a scorer scores (a worker), the exec in the forked child otherwise.
EVENTS = {kind: (kind,) for kind in standins.MARKED} | {"os.spawn": ("os.fork", "os.exec")}


class _Standin(gym.Env[str, str]):
    observation_space = action_space = trl_env.TextSpace(100_000)

    def __init__(self, step: Callable[[str], object]) -> None:
        self._step = step

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[str, dict]:
        return "question", {}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        self._step(action)
        return "ok", 0.0, False, False, {}


def _tripped(env: gym.Env[str, str]) -> str:
    """The check's error message on ``env`` (it must fail on rule replies-are-data)."""
    with pytest.raises(TextEnvCheckError, match="replies-are-data") as caught:
        check_hostile_replies(env, time_limit=60)
    message = str(caught.value)
    assert "canary file" not in message  # a tripwire, not the canary, caught it
    return message


def _fired(message: str, events: tuple[str, ...], *, in_worker: bool) -> bool:
    where = r"in process \d+: " if in_worker else ""
    return any(re.search(rf"\({where}{re.escape(event)} ", message) for event in events)


# ----------------------------------------------------------------------------- in this process


@pytest.mark.parametrize("kind", sorted(standins.MARKED))
def test_each_tripwire_fires_in_this_process(kind: str) -> None:
    message = _tripped(_Standin(partial(standins.act, kind)))
    in_child = kind == "os.spawn"  # the exec happens in the forked child, which reports too
    assert _fired(message, EVENTS[kind], in_worker=in_child), message


@pytest.mark.parametrize("kind", sorted(standins.UNMARKED))
def test_a_scorer_scoring_in_this_process_may_not_touch_the_system(kind: str) -> None:
    # isolate=False: reasoning-gym scorers run here, in the worker's _Problems.
    problems = _Problems()
    problems._datasets = {**problems._datasets, **standins.datasets()}
    request = {"op": "score", "task": standins.task(kind, marked=False), "config": {}, "seed": 0}
    message = _tripped(_Standin(lambda action: problems.handle({**request, "answer": action})))
    assert _fired(message, EVENTS.get(kind, (kind,)), in_worker=False), message
    assert "while scoring a reply" in message


def test_an_env_may_still_start_processes_and_write_files() -> None:
    # Outside a scorer, only what names the canary trips: an env may start its own workers.
    def step(action: str) -> None:
        for kind in ("os.system", "open"):
            standins.act(kind, action, marked=False)

    assert check_hostile_replies(_Standin(step)).steps == 114


def test_parsing_and_text_that_does_not_compile_pass() -> None:
    def step(action: str) -> None:
        with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError):
            ast.parse(action)  # a tree, nothing runs
        with contextlib.suppress(SyntaxError, ValueError, RecursionError, MemoryError):
            eval("1 +* " + action)  # never compiles

    assert check_hostile_replies(_Standin(step)).steps == 114


def test_the_tripwires_are_disarmed_after_the_check() -> None:
    with contextlib.suppress(TextEnvCheckError):
        check_hostile_replies(_Standin(partial(standins.act, "exec")))
    assert _hostile._armed is None
    assert _hostile.TRIPWIRE_VARIABLE not in os.environ
    assert _scorer_pool._TRIPWIRE_VARIABLE == _hostile.TRIPWIRE_VARIABLE
    code = compile("value = 'trl_env_canary_' + 32 * '0'", "<test>", "exec")
    exec(code, {})  # the hook stays installed, but does nothing


# ------------------------------------------------------------------------ in a scorer worker


@pytest.fixture(scope="module")
def standin_pool() -> Iterator[ScorerPool]:
    """A pool of one real worker with the stand-ins registered as reasoning-gym tasks."""
    with pytest.MonkeyPatch.context() as patch:
        launch = _scorer_pool._LAUNCH.replace(
            "from trl_env",
            "import tests._tripwire_standins as s; s.register(); from trl_env",
            1,
        )
        assert launch != _scorer_pool._LAUNCH
        patch.setattr(_scorer_pool, "_LAUNCH", launch)
        pool = ScorerPool(max_workers=1)
        try:
            yield pool
        finally:
            pool.close()


def _scored_in(pool: ScorerPool, task: str) -> _Standin:
    def step(action: str) -> None:
        request = {"op": "score", "task": task, "config": {}, "seed": 0, "answer": action}
        with contextlib.suppress(ScorerError):
            pool.call(request, time_limit=60, memory_limit_mb=4096)

    return _Standin(step)


@pytest.mark.parametrize("kind", sorted(standins.MARKED))
def test_each_tripwire_fires_inside_a_worker(standin_pool: ScorerPool, kind: str) -> None:
    message = _tripped(_scored_in(standin_pool, standins.task(kind)))
    assert _fired(message, EVENTS[kind], in_worker=True), message


@pytest.mark.parametrize("kind", sorted(standins.UNMARKED))
def test_a_scorer_in_a_worker_may_not_touch_the_system(standin_pool: ScorerPool, kind: str) -> None:
    message = _tripped(_scored_in(standin_pool, standins.task(kind, marked=False)))
    assert _fired(message, (kind,), in_worker=True), message
    assert "while scoring a reply" in message


def test_a_worker_outside_a_check_runs_the_stand_ins_unwatched(standin_pool: ScorerPool) -> None:
    # No check running: the request carries no tripwire, the worker's hook stays unarmed.
    request = {"op": "score", "task": standins.task("os.system", marked=False), "config": {}}
    answer = "/tmp/trl_env_canary_" + 32 * "0"
    response = standin_pool.call(
        {**request, "seed": 0, "answer": answer}, time_limit=60, memory_limit_mb=4096
    )
    assert response == {"ok": True, "score": 0.0}
