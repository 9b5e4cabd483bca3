"""``check_hostile_replies``: step replies that try to run code, and prove that none ran.

During RL a policy explores every string, and a reward hacker finds the ones a scorer executes
(``eval``, ``sympy.parse_expr``...). This check steps an env with a family of such replies (a
call to ``__import__``, ``open``, ``eval``/``exec``, attribute chains to ``Popen``, lambdas,
comprehensions, f-strings, unicode look-alikes and escapes, huge powers), each bare and inside
brackets, answer tags, ``\\boxed{}`` and arithmetic, and fails if any of them ran:

* every payload would create a *canary file* in a fresh temporary folder: it must not appear
  (this also catches code run in a worker process);
* for the duration of the check, an audit hook (:func:`sys.addaudithook`) watches this process
  and the reasoning-gym scorer workers for the events a payload needs: ``exec`` (a code object
  runs: ``eval``/``exec`` of text or of a compiled code object), ``compile`` (text is compiled to
  code; ``ast.parse``, which runs nothing, and text that does not compile are let through),
  ``os.system``, ``subprocess.Popen``, ``os.exec*``, ``os.spawn*``/``os.posix_spawn``,
  ``open``, ``ctypes.dlopen`` and ``socket.connect``. An event whose arguments mention the
  canary's name (for ``exec``, the code object's constants) fails the check and is refused
  (``PermissionError``); everything else still works, so an env may start its own worker
  processes. While a reasoning-gym scorer scores a reply (in a worker, or in this process with
  ``isolate=False``), starting a process, loading a native library, connecting a socket or
  opening a file for writing (``__pycache__`` aside) fails the check whatever its arguments;
* every ``reset`` and ``step`` must return within ``time_limit`` seconds.

Workers learn of the check from the ``TRL_ENV_HOSTILE_TRIPWIRE`` variable (set in this process for
its duration): the pool forwards it with each request, the worker arms its own hook for that
request and appends what tripped to a report file the check reads after every step.

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> from trl_env.utils import check_hostile_replies
    >>> report = check_hostile_replies(gym.make("TextCountdown-v0"))
    >>> report.steps > 50 and report.slowest_step_s < 10
    True
"""

from __future__ import annotations

import ast
import json
import os
import sys
import tempfile
import threading
import time
import types
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import gymnasium as gym

from trl_env.error import TextEnvCheckError

__all__ = ["HostileReport", "check_hostile_replies", "hostile_replies"]

_PAYLOADS = (
    "__import__('os').system('touch {path}')",
    "open('{path}', 'w').write('x')",
    "eval(\"open('{path}', 'w')\")",
    "exec(\"open('{path}', 'w')\")",
    "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == 'Popen'][0]"
    "(['touch', '{path}'])",
    "(lambda: __import__('os').system('touch {path}'))()",
    "[__import__('os').system('touch {path}') for _ in '1']",
    "f\"{{__import__('os').system('touch {path}')}}\"",
    "\uff45\uff56\uff41\uff4c(\"open('{path}', 'w')\")",  # fullwidth "eval": NFKC makes it eval
    "__\U0001d5f6\U0001d5fa\U0001d5fd\U0001d5fc\U0001d5ff\U0001d601__('os').system('touch {path}')",
    'eval(\'\\x6f\\x70\\x65\\x6e("{path}", "w")\')',  # "open" spelled in escapes
    "getattr(__builtins__, 'open')('{path}', 'w')",
    "S(\"__import__('os').system('touch {path}')\")",  # sympy names, for sympy-backed scorers
    "sympify(\"open('{path}', 'w')\")",
    "Symbol('x').__class__.__init__.__globals__['__builtins__']['open']('{path}', 'w')",
)
_DENIAL = ("9**9**9", "10**10**10", "'a'*10**10", "(" * 200 + "1" + ")" * 200)
_WRAPPERS = (
    "{}",
    "[{}]",
    "<answer>{}</answer>",
    "\\boxed{{{}}}",
    "1 + {} * 2",
    "My move: [[{}]]",
)


def hostile_replies(path: str | os.PathLike[str]) -> list[str]:
    """The replies of the check, each of whose code payloads would create the file ``path``.

    Example:
        >>> replies = hostile_replies("/tmp/canary")
        >>> len(replies), "<answer>__import__('os').system('touch /tmp/canary')</answer>" in replies
        (114, True)
    """
    payloads = [payload.format(path=os.fspath(path)) for payload in _PAYLOADS] + list(_DENIAL)
    return [wrapper.format(payload) for payload in payloads for wrapper in _WRAPPERS]


@dataclass(frozen=True)
class HostileReport:
    """What :func:`check_hostile_replies` did: steps played and the slowest call (seconds)."""

    steps: int
    resets: int
    slowest_step_s: float


# ------------------------------------------------------------------------- the audit tripwires

TRIPWIRE_VARIABLE = "TRL_ENV_HOSTILE_TRIPWIRE"
"""Set while a check runs, to JSON ``{"marker": ..., "report": ...}``; the scorer pool forwards it
to its workers with every request (``trl_env.envs.bridges._scorer_pool``)."""

_SUBJECT: dict[str, tuple[int, ...]] = {
    # The arguments of each watched event that say what runs or is reached (never ``env``: a
    # worker started during the check inherits TRIPWIRE_VARIABLE, which names the canary).
    "os.system": (0,),
    "subprocess.Popen": (0, 1),
    "os.exec": (0, 1),
    "os.spawn": (1, 2),
    "os.posix_spawn": (0, 1),
    "os.fork": (),
    "os.forkpty": (),
    "ctypes.dlopen": (0,),
    "socket.connect": (1,),
}
_WATCHED = frozenset({"exec", "compile", "open", *_SUBJECT})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


@dataclass
class _Armed:
    """What the audit hook watches for now: ``marker`` (the canary's name), and where it reports."""

    marker: str
    record: Callable[[str], None]
    scoring: bool = False  # a third-party scorer is scoring a reply: no process, socket, write


_armed: _Armed | None = None
_hook_installed = False
_hook_lock = threading.Lock()
_inside = threading.local()  # the hook's own work (compile, the report file) is not watched


def _mentions(value: Any, marker: str) -> bool:
    """Whether ``value`` (text, paths, code objects, syntax trees, containers) contains ``marker``."""
    if isinstance(value, str):
        return marker in value
    if isinstance(value, (bytes, bytearray)):
        return marker.encode() in value
    if isinstance(value, os.PathLike):
        return _mentions(os.fspath(value), marker)
    if isinstance(value, types.CodeType):  # its constants, nested functions' code included
        return any(_mentions(item, marker) for item in value.co_consts)
    if isinstance(value, ast.AST):
        return any(
            isinstance(node, ast.Constant) and _mentions(node.value, marker)
            for node in ast.walk(value)
        )
    if isinstance(value, Mapping):
        return any(_mentions(item, marker) for item in (*value.keys(), *value.values()))
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_mentions(item, marker) for item in value)
    return False


def _compiles(source: Any) -> bool:
    """Whether ``source`` compiles to code (text that does not compile runs nothing)."""
    if isinstance(source, ast.AST):
        return True
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8", "replace")
    if not isinstance(source, str):
        return True
    try:  # eval() strips leading blanks; an expression is a statement too
        compile(source.lstrip(" \t"), "<check_hostile_replies>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError, OverflowError):
        return False
    return True


def _short(value: Any) -> str:
    return repr(value)[:200]


def _may_write(path: Any) -> bool:
    """Writes a scorer may make while scoring: bytecode caches of lazy imports, the null device."""
    if isinstance(path, int):
        return True  # an open file descriptor (opening it was watched)
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
    return text == os.devnull or "__pycache__" in Path(text).parts


def _tripped_by(event: str, args: tuple[Any, ...], armed: _Armed, caller: Any) -> str | None:
    """What ``event`` did, if it trips the armed tripwires; None if it is allowed."""
    marker = armed.marker
    if event == "exec":
        return f"exec of {_short(args[0])}" if _mentions(args[0], marker) else None
    if event == "compile":
        source = args[0]
        if not _mentions(source, marker) or getattr(caller, "f_code", None) is ast.parse.__code__:
            return None  # ast.parse only builds a tree, and runs nothing
        return f"compile of {_short(source)}" if _compiles(source) else None
    if event == "open":
        path, flags = args[0], args[2] if len(args) > 2 else None
        if _mentions(path, marker):
            return f"open of {_short(path)}"
        if (
            armed.scoring
            and isinstance(flags, int)
            and flags & _WRITE_FLAGS
            and not _may_write(path)
        ):
            return f"open for writing of {_short(path)} while scoring a reply"
        return None
    subject = [args[index] for index in _SUBJECT[event] if index < len(args)]
    if _mentions(subject, marker):
        return f"{event} with {_short(subject)}"
    if armed.scoring:
        return f"{event} with {_short(subject)} while scoring a reply"
    return None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: record and refuse what trips the armed tripwires (nothing when unarmed)."""
    armed = _armed
    if armed is None or event not in _WATCHED or getattr(_inside, "busy", False):
        return
    _inside.busy = True
    try:
        caller = sys._getframe(1) if event == "compile" else None
        try:
            what = _tripped_by(event, args, armed, caller)
        except Exception as error:  # a tripwire that cannot tell fails the check, loudly
            what = f"{event} (the tripwire failed: {type(error).__name__}: {error})"
        if what is not None:
            armed.record(what[:300])
    finally:
        _inside.busy = False
    if what is not None:
        raise PermissionError(f"check_hostile_replies: {what[:300]} refused")


@contextmanager
def _armed_with(marker: str, record: Callable[[str], None]) -> Iterator[None]:
    """Arm the audit hook (installed once per process: hooks cannot be removed) for the block."""
    global _armed, _hook_installed
    with _hook_lock:
        if not _hook_installed:
            sys.addaudithook(_audit)
            _hook_installed = True
    previous, _armed = _armed, _Armed(marker, record)
    try:
        yield
    finally:
        _armed = previous


@contextmanager
def scoring_reply() -> Iterator[None]:
    """Mark the block as a third-party scorer scoring a reply (no-op unless a check is armed).

    Inside it, starting a process, loading a native library, connecting a socket or opening a
    file for writing trips the check whatever the arguments: a scorer has no reason to.
    """
    armed = _armed
    if armed is None:
        yield
        return
    saved, armed.scoring = armed.scoring, True
    try:
        yield
    finally:
        armed.scoring = saved


def _recorder(report: str) -> Callable[[str], None]:
    """Append what trips to ``report``, a JSON line each, at once: a worker killed later, or a
    child forked from a process under the check, has still reported."""

    def record(what: str) -> None:
        line = json.dumps({"pid": os.getpid(), "tripped": what}) + "\n"
        descriptor = os.open(report, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line.encode())
        finally:
            os.close(descriptor)

    return record


@contextmanager
def worker_tripwires(settings: Mapping[str, Any] | None) -> Iterator[None]:
    """In a scorer worker: arm this process's hook for one request of a running check.

    Args:
        settings: The request's ``tripwire`` field (TRIPWIRE_VARIABLE's value), or None (no
            check is running: nothing is armed). What trips is appended to the file
            ``settings["report"]``, which the check reads after every step.
    """
    if not settings:
        yield
        return
    with _armed_with(str(settings["marker"]), _recorder(os.fspath(settings["report"]))):
        yield


@contextmanager
def _tripwires(marker: str, report: Path) -> Iterator[None]:
    """Arm the hook in this process and, through TRIPWIRE_VARIABLE, in the scorer workers."""
    saved = os.environ.get(TRIPWIRE_VARIABLE)
    os.environ[TRIPWIRE_VARIABLE] = json.dumps({"marker": marker, "report": os.fspath(report)})
    try:
        with _armed_with(marker, _recorder(os.fspath(report))):
            yield
    finally:
        if saved is None:
            os.environ.pop(TRIPWIRE_VARIABLE, None)
        else:
            os.environ[TRIPWIRE_VARIABLE] = saved


def _reported(report: Path) -> list[str]:
    """What tripped, here or in another process (the report file's lines), oldest first."""
    if not report.exists():
        return []
    tripped = []
    for line in report.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.strip():
            entry = json.loads(line)
            where = "" if entry["pid"] == os.getpid() else f"in process {entry['pid']}: "
            tripped.append(f"{where}{entry['tripped']}")
    return tripped


def check_hostile_replies(
    env: gym.Env[Any, Any], *, seed: int = 0, time_limit: float = 30.0
) -> HostileReport:
    """Step ``env`` with replies that try to run code; fail if any ran or a call was too slow.

    Args:
        env: A text env (``gym.make(...)``); resets whenever an episode ends.
        seed: The first reset's seed (each later reset uses the next one).
        time_limit: Seconds any one ``reset`` or ``step`` may take.

    Returns:
        How many steps and resets were played, and the slowest call.

    Raises:
        TextEnvCheckError: Rule ``replies-are-data`` (a reply ran: the canary file appeared or a
            tripwire fired, here or in a scorer worker) or ``bounded-step`` (a call took longer
            than ``time_limit``, or raised).
    """
    marker = f"trl_env_canary_{uuid.uuid4().hex}"
    slowest, steps, resets = 0.0, 0, 0
    with tempfile.TemporaryDirectory() as folder:
        canary = Path(folder, marker)
        report = Path(folder, "tripped.jsonl")  # what tripped (no marker in its name)
        replies = hostile_replies(canary)

        def timed(what: str, call: Callable[[], Any]) -> Any:
            nonlocal slowest
            started = time.monotonic()
            try:
                result = call()
            except Exception as error:
                raise TextEnvCheckError(
                    "bounded-step", f"{what} raised {type(error).__name__}: {error}"
                ) from error
            elapsed = time.monotonic() - started
            slowest = max(slowest, elapsed)
            if elapsed > time_limit:
                raise TextEnvCheckError(
                    "bounded-step",
                    f"{what} took {elapsed:.1f} s (limit {time_limit:g} s); bound the work a "
                    "reply can cause (parse it as data, cap sizes, run third-party scorers "
                    "with a timeout)",
                )
            return result

        with _tripwires(marker, report):
            needs_reset = True
            for reply in replies:
                if needs_reset:
                    reset_seed = seed + resets
                    timed(f"reset(seed={reset_seed})", partial(env.reset, seed=reset_seed))
                    resets += 1
                short = reply.replace(marker, "CANARY")[:80]
                result = timed(f"step({short!r})", partial(env.step, reply))
                steps += 1
                needs_reset = bool(result[2] or result[3])
                tripped = _reported(report)
                if tripped or canary.exists():
                    what = tripped[0] if tripped else f"the canary file {canary.name} was created"
                    what = what.replace(marker, "CANARY")
                    if what.endswith("while scoring a reply"):
                        raise TextEnvCheckError(
                            "replies-are-data",
                            f"scoring the reply {short!r}, the scorer did what no scorer needs "
                            f"({what}); score replies as data, in a process that starts no "
                            "other, opens no connection and writes no file",
                        )
                    raise TextEnvCheckError(
                        "replies-are-data",
                        f"the reply {short!r} ran as code ({what}); parse replies as data "
                        "(ast.literal_eval, a strict grammar), never eval/exec/sympify them",
                    )
    return HostileReport(steps=steps, resets=resets, slowest_step_s=slowest)
