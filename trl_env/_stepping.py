"""Where env ``reset``/``step`` calls run: the checked calls of one turn, and their executors.

Every play loop of trl-env (the TRL rollout, ``trl-env eval``, ``trl-env play``, the
environment-factory adapter) calls envs only through :func:`reset_envs` and :func:`step_envs`.
Each takes the calls of one turn (a list of ``(env, seed)`` or ``(env, action)`` pairs) and
returns one :class:`EnvOutcome` per call, never raising for an env's fault: an env that raises,
times out, or returns a value of the wrong type gives an outcome with ``error`` set, and the loop
ends only that episode.

A rollout turn makes one batched generation call, then steps every playing episode's env. With
fast in-process games the envs take microseconds and stepping them one after the other is the
fastest (no thread hand-off). With slow envs (a compiler, a browser, a game server, an OpenEnv
server over the network) the model would sit idle for ``episodes x latency`` every turn, so the
envs of a turn are stepped concurrently instead.

Why threads: measured on the shared 2-core CI machine, 64 TextWordle-v0 envs, 6 steps each:

| executor | 50 ms steps | 0 ms steps |
|---|---:|---:|
| sequential (``workers=0``) | 19.4 s | 1.9 ms |
| threads (``workers=64``) | 0.31 s | 4.4 ms |
| gymnasium ``AsyncVectorEnv`` (64 processes) | 0.40 s, + 0.77 s to start | |

- Threads overlap envs that wait (I/O, sleeps, subprocesses, remote calls, C code that releases
  the GIL) at the lowest cost, and the envs stay plain ``gymnasium.Env`` objects in the training
  process: every episode keeps its own env and seed, and outcomes come back in input order, so
  episodes are identical whatever the worker count. For fast in-process games the thread
  hand-off costs more than the games (4.4 ms vs 1.9 ms above), so sequential stays the default.
- asyncio would need ``async`` envs; gymnasium envs are synchronous, so it would end up running
  them in threads anyway.
- gymnasium's ``AsyncVectorEnv`` is slower here, starts a process per sub-env, autoresets
  finished sub-envs and wants every sub-env to be the same ID, while a rollout batch mixes IDs and
  its episodes end at different turns. Envs that burn CPU in Python (where threads do not help
  because of the GIL) are better served in their own processes with ``trl_env.openenv`` (an
  OpenEnv server), which the thread pool then drives concurrently.

A step that does not return within ``timeout`` seconds fails with :class:`StepTimeoutError`. A
Python thread cannot be killed: the hung call keeps its thread until it returns. That thread is a
daemon (it never blocks interpreter exit), the pool starts a replacement so it keeps its size (the
hung call's thread exits when that call returns; the other threads go on serving), and the env is
marked abandoned: :meth:`ThreadStepper.close_env` closes it only once the hung call has
returned, and the rollout never hands it to another episode.

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> from trl_env._stepping import make_stepper
    >>> envs = [gym.make("TextWordle-v0") for _ in range(2)]
    >>> stepper = make_stepper(workers=2, timeout=30.0)
    >>> outcomes = stepper.map(lambda env, seed: env.reset(seed=seed), envs, [0, 0])
    >>> outcomes[0].value[0] == outcomes[1].value[0]
    True
    >>> stepper.shutdown()
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from trl_env._env_results import EnvOutcome, check_reset_result, check_step_result, raised
from trl_env.error import StepTimeoutError

__all__ = [
    "CallOutcome",
    "EnvOutcome",
    "EnvStepper",
    "SequentialStepper",
    "StepTimeoutError",
    "ThreadStepper",
    "check_reset_result",
    "check_step_result",
    "make_stepper",
    "reset_envs",
    "step_envs",
]

T = TypeVar("T")
A = TypeVar("A")


@dataclass(frozen=True)
class CallOutcome(Generic[T]):
    """What one env call gave: its return value, or the exception it raised (or timed out with)."""

    value: T | None = None
    error: BaseException | None = None


class EnvStepper(Protocol):
    """Calls a function on several envs and returns their outcomes in the order of the envs."""

    def map(
        self, function: Callable[[Any, A], T], envs: Sequence[Any], arguments: Sequence[A]
    ) -> list[CallOutcome[T]]:
        """``[function(env, argument) for env, argument in zip(envs, arguments)]``, errors caught."""
        ...

    def close_env(self, env: Any) -> None:
        """Close an env that must not be reused (now, or once a hung call on it returns)."""
        ...

    def shutdown(self) -> None:
        """Release the executor's threads (idle ones exit; hung ones exit when they return)."""
        ...


def _call(function: Callable[[Any, A], T], env: Any, argument: A) -> CallOutcome[T]:
    try:
        return CallOutcome(value=function(env, argument))
    except Exception as error:  # an env that raises ends only its own episode
        return CallOutcome(error=error)


def _close_quietly(env: Any) -> None:
    # Closing a broken env is best effort; it is never used again.
    with contextlib.suppress(Exception):
        env.close()


class SequentialStepper:
    """Calls the envs one after the other in the calling thread (no timeout); the default."""

    def map(
        self, function: Callable[[Any, A], T], envs: Sequence[Any], arguments: Sequence[A]
    ) -> list[CallOutcome[T]]:
        """Call ``function(env, argument)`` for each pair, in order."""
        return [
            _call(function, env, argument) for env, argument in zip(envs, arguments, strict=True)
        ]

    def close_env(self, env: Any) -> None:
        """Close ``env`` now (errors ignored)."""
        _close_quietly(env)

    def shutdown(self) -> None:
        """Nothing to release."""


class ThreadStepper:
    """Calls the envs of a batch concurrently on a pool of daemon threads, with a per-call timeout.

    Args:
        workers: Threads in the pool (calls beyond that wait for a free thread).
        timeout: Seconds one call may run (counted from when it starts, not while it waits for a
            thread); ``None`` waits forever.
    """

    def __init__(self, workers: int, timeout: float | None = None) -> None:
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"workers must be a positive int, got {workers!r}")
        if timeout is not None and not timeout > 0:
            raise ValueError(
                f"timeout must be a positive number of seconds or None, got {timeout!r}"
            )
        self.workers = workers
        self.timeout = timeout
        self._tasks: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._threads = 0
        # Timed-out calls still running: the thread running one exits once it returns (it was
        # replaced when the call was abandoned); the other threads keep serving the queue.
        self._abandoned: set[Future[Any]] = set()
        self._hung: dict[int, Future[Any]] = {}  # id(env) -> the call still running on it
        for _ in range(workers):
            self._start_thread()

    def _start_thread(self) -> None:
        with self._lock:
            self._threads += 1
        threading.Thread(target=self._work, name="trl-env-stepper", daemon=True).start()

    def _work(self) -> None:
        while True:
            item = self._tasks.get()
            if item is None:
                break
            task, future = item
            if future.set_running_or_notify_cancel():
                try:
                    result = task()
                except BaseException as error:  # SystemExit & co.: reach the caller, never hang it
                    future.set_exception(error)
                else:
                    future.set_result(result)
            with self._lock:
                if future in self._abandoned:  # a hung call came back: its replacement took over
                    self._abandoned.discard(future)
                    break
        with self._lock:
            self._threads -= 1

    def map(
        self, function: Callable[[Any, A], T], envs: Sequence[Any], arguments: Sequence[A]
    ) -> list[CallOutcome[T]]:
        """Call ``function(env, argument)`` for each pair concurrently; outcomes in input order.

        A call that runs longer than ``timeout`` gets a :class:`StepTimeoutError` outcome and its
        env is abandoned (see the module docstring).
        """
        started: list[float | None] = [None] * len(envs)
        futures: list[Future[CallOutcome[T]]] = []
        for index, (env, argument) in enumerate(zip(envs, arguments, strict=True)):
            future: Future[CallOutcome[T]] = Future()

            def task(index: int = index, env: Any = env, argument: A = argument) -> CallOutcome[T]:
                started[index] = time.monotonic()
                return _call(function, env, argument)

            self._tasks.put((task, future))
            futures.append(future)
        return [
            self._wait(future, started, index, env)
            for index, (future, env) in enumerate(zip(futures, envs, strict=True))
        ]

    def _wait(
        self, future: Future[CallOutcome[T]], started: list[float | None], index: int, env: Any
    ) -> CallOutcome[T]:
        if self.timeout is None:
            return future.result()
        while True:
            begun = started[index]
            # A queued call (no thread free yet) is not being timed: poll until it starts.
            wait = 0.01 if begun is None else begun + self.timeout - time.monotonic()
            try:
                return future.result(timeout=max(wait, 0.0))
            except TimeoutError:
                begun = started[index]
                if begun is None or time.monotonic() - begun < self.timeout:
                    continue
            with self._lock:
                # The worker sets the result before it takes the lock to look for its future in
                # ``_abandoned``: a call not done here is abandoned before its worker looks.
                returned = future.done()
                if not returned:
                    self._abandoned.add(future)
                    self._hung[id(env)] = future
            if returned:  # it returned just now: its thread stays in the pool
                return future.result()
            self._start_thread()  # keep the pool at full strength while the hung call holds one
            return CallOutcome(
                error=StepTimeoutError(
                    f"the env call did not return within env_step_timeout={self.timeout} s; "
                    "the env was abandoned (it is closed once the call returns)"
                )
            )

    def close_env(self, env: Any) -> None:
        """Close ``env`` now, or, if a timed-out call still runs on it, as soon as that returns."""
        with self._lock:
            hung = self._hung.pop(id(env), None)
        if hung is None:
            _close_quietly(env)
        else:
            hung.add_done_callback(lambda _: _close_quietly(env))

    def shutdown(self) -> None:
        """Let the idle threads exit (threads stuck in a hung call exit when it returns)."""
        with self._lock:
            threads = self._threads
        for _ in range(threads):
            self._tasks.put(None)


_SEQUENTIAL = SequentialStepper()


def make_stepper(workers: int = 0, timeout: float | None = None) -> EnvStepper:
    """The executor for a rollout's env calls.

    Args:
        workers: ``0`` steps the envs one after the other in the training thread (fastest for
            in-process games); ``N >= 1`` steps up to ``N`` envs at once on a thread pool.
        timeout: Seconds one ``reset``/``step`` may take before its episode ends with a
            :class:`StepTimeoutError`; ``None`` for no limit. A timeout needs a worker thread, so
            ``workers=0`` with a timeout uses one thread.

    Returns:
        A :class:`SequentialStepper` or a :class:`ThreadStepper`.

    Example:
        >>> make_stepper(0).__class__.__name__
        'SequentialStepper'
        >>> stepper = make_stepper(8, timeout=5.0)
        >>> (stepper.workers, stepper.timeout)
        (8, 5.0)
        >>> stepper.shutdown()
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 0:
        raise ValueError(f"workers must be an int >= 0 (0 = sequential), got {workers!r}")
    if workers == 0 and timeout is None:
        return SequentialStepper()
    return ThreadStepper(max(workers, 1), timeout)


def _reset(env: Any, seed: int | None) -> Any:
    return env.reset(seed=seed)


def _step(env: Any, action: str) -> Any:
    return env.step(action)


def _checked(
    stepper: EnvStepper | None,
    function: Callable[[Any, Any], Any],
    calls: Sequence[tuple[Any, Any]],
    name: str,
    check: Callable[[Any], EnvOutcome],
) -> list[EnvOutcome]:
    envs = [env for env, _ in calls]
    arguments = [argument for _, argument in calls]
    outcomes = (stepper or _SEQUENTIAL).map(function, envs, arguments)
    return [
        raised(name, outcome.error) if outcome.error is not None else check(outcome.value)
        for outcome in outcomes
    ]


def reset_envs(
    resets: Sequence[tuple[Any, int | None]], stepper: EnvStepper | None = None
) -> list[EnvOutcome]:
    """Reset each env with its seed; one checked outcome per pair, in order.

    Args:
        resets: ``(env, seed)`` pairs.
        stepper: Runs the calls (default: one after the other; see :func:`make_stepper`).

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextGuessNumber-v0")
        >>> [first] = reset_envs([(env, 0)])
        >>> first.error is None and isinstance(first.observation, str)
        True
        >>> [outcome] = step_envs([(env, "[50]")])
        >>> outcome.error is None and isinstance(outcome.reward, float)
        True
    """
    return _checked(stepper, _reset, resets, "reset()", check_reset_result)


def step_envs(
    steps: Sequence[tuple[Any, str]], stepper: EnvStepper | None = None
) -> list[EnvOutcome]:
    """Play one turn: step each env with its action; one checked outcome per pair, in order.

    This is the one place where the play loops step envs; ``stepper`` decides how (one after
    the other, or concurrently with a per-step timeout).

    Args:
        steps: ``(env, action)`` pairs.
        stepper: Runs the calls (default: one after the other; see :func:`make_stepper`).
    """
    return _checked(stepper, _step, steps, "step()", check_step_result)
