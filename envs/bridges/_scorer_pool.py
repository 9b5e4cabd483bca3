"""Bounded third-party code: reasoning-gym's generators and scorers in worker processes (private).

A scorer is code we did not write, run on text a model wrote. Even parsed as data first (see
:mod:`._answer_grammar`), an answer can make a scorer slow (``sympy.simplify`` of a long
expression) or big, and a generator can loop. A thread cannot be stopped (and big-integer
arithmetic holds the GIL), so the work runs in another process, which can:

* each worker caps its own address space (``RLIMIT_AS``, ``memory_limit_mb``), so a huge object
  fails with ``MemoryError`` there;
* the parent waits at most ``time_limit`` seconds for an answer, then kills the worker (a fresh
  one starts on the next request) and reports :class:`ScorerTimeout`.

Why a small shared pool and not a process per env: a GRPO batch holds tens of envs, and a worker
costs ~100 MB; the pool grows to ``min(4, cpu_count)`` workers per process, and requests of
one problem go back to the worker that made it (it has the problem cached). Workers are plain
``subprocess`` children speaking JSON lines (``python -c``), not ``multiprocessing`` ones: the
``spawn`` start method would re-import the user's ``__main__`` (a training script without an
``if __name__ == "__main__"`` guard would run again) and ``fork`` is unsafe once torch has
started its threads. Workers run with ``PYTHONHASHSEED=0`` so every worker, in any process,
generates the same problem from the same seed (five tasks' generators iterate over sets of
strings, whose order depends on the hash seed). While ``check_hostile_replies`` runs, each
request carries its tripwire settings, and the worker watches the request with an audit hook
(see :mod:`trl_env.utils._hostile`).

Example:
    >>> pool = ScorerPool.shared()
    >>> problem = pool.call({"op": "generate", "task": "basic_arithmetic", "config": {},
    ...                      "seed": 7}, time_limit=60, memory_limit_mb=4096)
    >>> sorted(problem)
    ['answer', 'names', 'ok', 'question']
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from typing import Any, ClassVar

__all__ = ["ScorerError", "ScorerPool", "ScorerTimeout"]

_LAUNCH = (
    "import json, os, sys; "
    "sys.path[:0] = [p for p in json.loads(os.environ['TRL_ENV_SCORER_PATH']) if p not in sys.path]; "
    "from trl_env.envs.bridges._scorer_worker import main; main()"
)
_TRIPWIRE_VARIABLE = "TRL_ENV_HOSTILE_TRIPWIRE"
"""Set while ``check_hostile_replies`` runs (``trl_env.utils._hostile.TRIPWIRE_VARIABLE``): every
request carries its value, so the worker arms its audit-hook tripwires for that request."""
_STARTUP_SECONDS = 60.0
"""How long a new worker may take to import reasoning-gym (seconds; a cold disk is slow)."""


class ScorerError(RuntimeError):
    """The worker reported an exception (``kind`` is its type name) or died."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind


class ScorerTimeout(ScorerError):
    """The worker did not answer within the time limit; it was killed."""

    def __init__(self, seconds: float) -> None:
        super().__init__("TimeoutError", f"no answer within {seconds:g} s")
        self.seconds = seconds


class _Worker:
    """One worker process and its pipes; used by one thread at a time."""

    def __init__(self, memory_limit_mb: int) -> None:
        self.memory_limit_mb = memory_limit_mb
        environment = dict(os.environ)
        environment["TRL_ENV_SCORER_PATH"] = json.dumps([p for p in sys.path if p])
        environment["TRL_ENV_SCORER_MEMORY_MB"] = str(memory_limit_mb)
        # One hash seed for every worker: five tasks' generators iterate over sets of strings.
        environment["PYTHONHASHSEED"] = "0"
        environment["PYTHONUNBUFFERED"] = "1"
        self.process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=environment,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
        self.recent: set[str] = set()  # problems this worker has generated (affinity)
        self._read(_STARTUP_SECONDS, time.monotonic())

    def _read(self, seconds: float, sent: float) -> dict[str, Any]:
        assert self.process.stdout is not None
        remaining = max(0.0, sent + seconds - time.monotonic())
        ready, _, _ = select.select([self.process.stdout], [], [], remaining)
        if not ready:
            self.kill()
            raise ScorerTimeout(seconds)
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            raise ScorerError("WorkerDied", f"the scorer process exited with code {code}")
        # The limit runs from the request, not from the wait: a reply that was already waiting
        # when this process got the CPU back (a busy machine) may still be late.
        if time.monotonic() - sent > seconds:
            raise ScorerTimeout(seconds)
        return dict(json.loads(line))

    def call(self, request: dict[str, Any], seconds: float) -> dict[str, Any]:
        assert self.process.stdin is not None
        tripwire = os.environ.get(_TRIPWIRE_VARIABLE)
        if tripwire:  # a hostile-reply check is running in this process
            request = {**request, "tripwire": json.loads(tripwire)}
        sent = time.monotonic()
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError) as error:
            raise ScorerError("WorkerDied", str(error)) from error
        return self._read(seconds, sent)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class ScorerPool:
    """Worker processes for reasoning-gym calls, shared by every bridged env of a process.

    Args:
        max_workers: The most workers alive at once (default ``min(4, os.cpu_count())``).
    """

    _shared: ClassVar[ScorerPool | None] = None
    _shared_pid: ClassVar[int] = -1
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, max_workers: int | None = None) -> None:
        self.max_workers = max_workers or min(4, os.cpu_count() or 1)
        self._idle: list[_Worker] = []
        self._busy = 0
        self._condition = threading.Condition()
        atexit.register(self.close)

    @classmethod
    def shared(cls) -> ScorerPool:
        """The pool of this process (a forked child gets its own, never its parent's workers)."""
        with cls._shared_lock:
            if cls._shared is None or cls._shared_pid != os.getpid():
                cls._shared, cls._shared_pid = cls(), os.getpid()
            return cls._shared

    def _take(self, key: str, memory_limit_mb: int) -> _Worker | None:
        """An idle worker (the one that made ``key`` if idle), or None to start a new one."""
        with self._condition:
            while True:
                usable = [w for w in self._idle if w.memory_limit_mb == memory_limit_mb]
                if usable:
                    worker = next((w for w in usable if key in w.recent), usable[-1])
                    self._idle.remove(worker)
                    self._busy += 1
                    return worker
                if self._busy + len(self._idle) < self.max_workers:
                    self._busy += 1
                    return None
                if self._idle:  # idle workers with another memory limit: retire one
                    self._idle.pop(0).kill()
                    continue
                self._condition.wait()

    def _give_back(self, worker: _Worker | None) -> None:
        with self._condition:
            self._busy -= 1
            if worker is not None and worker.alive:
                self._idle.append(worker)
            self._condition.notify()

    def call(
        self, request: dict[str, Any], *, time_limit: float, memory_limit_mb: int
    ) -> dict[str, Any]:
        """Send one request to a worker and return its response.

        Raises:
            ScorerTimeout: No response within ``time_limit`` seconds (the worker was killed).
            ScorerError: The worker raised (``kind`` is the exception's type name) or died.
        """
        key = json.dumps([request["task"], request["config"], request["seed"]], sort_keys=True)
        worker = self._take(key, memory_limit_mb)
        try:
            if worker is None:
                worker = _Worker(memory_limit_mb)
            response = worker.call(request, time_limit)
            if response.get("error") == "MemoryError":
                worker.kill()  # it exits after a MemoryError; never reuse it
            worker.recent.add(key)
            if len(worker.recent) > 1024:
                worker.recent.clear()
        except ScorerError:
            if worker is not None:
                worker.kill()
            raise
        finally:
            self._give_back(worker)
        if not response.get("ok"):
            raise ScorerError(str(response.get("error")), str(response.get("message", "")))
        return response

    def close(self) -> None:
        """Stop the idle workers (busy ones stop when their call ends and the pool is gone)."""
        with self._condition:
            workers, self._idle = self._idle, []
        for worker in workers:
            worker.kill()
