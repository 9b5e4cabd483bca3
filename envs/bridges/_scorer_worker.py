"""The worker process that generates and scores reasoning-gym problems (private).

Started by :class:`trl_env.envs.bridges._scorer_pool.ScorerPool` as
``python -c "...; main()"``; it reads one JSON request per line on stdin and writes one JSON
response per line on stdout. It caps its own address space (``RLIMIT_AS``) at start, so a reply
that makes a scorer build a huge object fails with ``MemoryError`` here instead of swapping the
training machine; the parent enforces the time limit by killing it.

Requests:
    ``{"op": "generate", "task": ..., "config": {...}, "seed": int}`` ->
    ``{"ok": true, "question": str, "answer": str | null}``

    ``{"op": "score", "task": ..., "config": {...}, "seed": int, "answer": str}`` ->
    ``{"ok": true, "score": float}``

    A failure answers ``{"ok": false, "error": "<exception type>", "message": str}``.

    A request may carry ``"tripwire": {"marker": str, "report": path}`` (sent while
    ``check_hostile_replies`` runs): the worker then arms its audit hook for that request
    (:func:`trl_env.utils._hostile.worker_tripwires`), and what trips is appended to ``report``.

The problem of a request is regenerated from ``(task, config, seed)`` when this worker has not
made it yet (another worker did, or this one was restarted): generation is seeded, so the
problem is the same.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
from collections import OrderedDict
from typing import Any, TextIO

__all__ = ["main"]

_CACHE_SIZE = 256
"""Problems kept per worker; an episode's scoring finds its problem here."""


def _tripwires(settings: dict[str, Any] | None) -> contextlib.AbstractContextManager[None]:
    """The hostile-reply check's tripwires for one request (nothing when it carries none)."""
    if not settings:
        return contextlib.nullcontext()
    from trl_env.utils._hostile import worker_tripwires

    return worker_tripwires(settings)


def _scoring_reply() -> contextlib.AbstractContextManager[None]:
    """While a scorer scores a reply, an armed check refuses processes, sockets and writes."""
    from trl_env.utils._hostile import scoring_reply

    return scoring_reply()


def _limit_memory() -> None:
    """Cap this process's address space at ``TRL_ENV_SCORER_MEMORY_MB`` (0 or unset: no cap)."""
    megabytes = int(os.environ.get("TRL_ENV_SCORER_MEMORY_MB", "0") or 0)
    if megabytes <= 0:
        return
    try:
        import resource
    except ImportError:  # Windows: no rlimits; the time limit still applies
        return
    limit = megabytes * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


class _Problems:
    """Generated problems by ``(task, config, seed)``, with their private global random state."""

    def __init__(self) -> None:
        import reasoning_gym
        from trl_env.envs.bridges._isolation import GlobalRandomState, quiet

        self._datasets = reasoning_gym.factory.DATASETS
        self._random_state, self._quiet = GlobalRandomState, quiet
        self._cache: OrderedDict[str, tuple[Any, dict[str, Any], Any]] = OrderedDict()

    def get(self, task: str, config: dict[str, Any], seed: int) -> tuple[Any, dict[str, Any], Any]:
        """The dataset, entry and random state of one problem, generated if not cached."""
        key = json.dumps([task, config, seed], sort_keys=True)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        dataset_class, config_class = self._datasets[task]
        fields = dict(config)
        names = {field.name for field in dataclasses.fields(config_class)}
        if "seed" in names:
            fields["seed"] = seed
        if "size" in names:
            fields["size"] = 1
        rng_copy = self._random_state(seed)
        with rng_copy.active(), self._quiet():
            dataset = dataset_class(config=config_class(**fields))
            entry = dataset[0]
        self._cache[key] = (dataset, entry, rng_copy)
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return dataset, entry, rng_copy

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        dataset, entry, rng_copy = self.get(request["task"], request["config"], request["seed"])
        if request["op"] == "generate":
            answer = entry.get("answer")
            metadata = entry.get("metadata") or {}
            names = metadata.get("variables") or [metadata.get("variable")]
            return {
                "ok": True,
                "question": str(entry["question"]),
                "answer": None if answer is None else str(answer),
                "names": [str(name) for name in names if isinstance(name, str)],
            }
        with rng_copy.active(), self._quiet(), _scoring_reply():
            score = float(dataset.score_answer(request["answer"], entry))
        return {"ok": True, "score": score}


def serve(lines: TextIO, out: TextIO) -> None:
    """Answer requests from ``lines`` on ``out`` until ``lines`` ends (the parent went away)."""
    problems = _Problems()
    out.write(json.dumps({"ok": True, "ready": True}) + "\n")
    out.flush()
    for line in lines:
        try:
            request = json.loads(line)
            with _tripwires(request.pop("tripwire", None)):
                response = problems.handle(request)
        except MemoryError:
            # The cap was hit: answer if we still can, then exit so the parent starts a fresh one.
            out.write(json.dumps({"ok": False, "error": "MemoryError", "message": ""}) + "\n")
            out.flush()
            return
        except Exception as error:  # a generator or scorer bug is reported, not fatal
            response = {"ok": False, "error": type(error).__name__, "message": str(error)[:500]}
        out.write(json.dumps(response) + "\n")
        out.flush()


def main() -> None:
    """The worker's entry point: cap memory, keep stdout for responses only, serve stdin."""
    _limit_memory()
    responses = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    # Libraries that print (reasoning-gym's generators do) must not corrupt the response stream.
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin, responses)


if __name__ == "__main__":
    main()
