"""``check_hostile_replies``: step replies that try to run code, and prove that none ran.

During RL a policy explores every string, and a reward hacker finds the ones a scorer executes
(``eval``, ``sympy.parse_expr``...). This check steps an env with a family of such replies (a
call to ``__import__``, ``open``, ``eval``/``exec``, attribute chains to ``Popen``, lambdas,
comprehensions, f-strings, unicode look-alikes and escapes, huge powers), each bare and inside
brackets, answer tags, ``\\boxed{}`` and arithmetic, and fails if any of them ran:

* every payload would create a *canary file* in a fresh temporary folder: it must not appear
  (this also catches code run in a worker process);
* for the duration of the check, ``os.system``, ``os.popen``, ``subprocess.Popen``,
  ``builtins.open``, ``builtins.eval`` and ``builtins.exec`` are wrapped in this process: a call
  whose arguments mention the canary's name fails the check (text that ``eval`` cannot even
  compile runs nothing and passes; everything else still works, so an env may start its own
  worker processes);
* every ``reset`` and ``step`` must return within ``time_limit`` seconds.

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> from trl_env.utils import check_hostile_replies
    >>> report = check_hostile_replies(gym.make("TextCountdown-v0"))
    >>> report.steps > 50 and report.slowest_step_s < 10
    True
"""

from __future__ import annotations

import builtins
import os
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
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


def _mentions(value: Any, marker: str) -> bool:
    """Whether ``value`` (strings, paths, and containers of them) contains ``marker``."""
    if isinstance(value, (str, bytes, os.PathLike)):
        text = os.fsdecode(value) if not isinstance(value, str) else value
        return marker in text
    if isinstance(value, dict):
        return any(_mentions(item, marker) for item in (*value.keys(), *value.values()))
    if isinstance(value, (list, tuple)):
        return any(_mentions(item, marker) for item in value)
    return False


@contextmanager
def _tripwires(marker: str, tripped: list[str]) -> Iterator[None]:
    """Wrap the functions that run code or touch files; record calls that mention ``marker``."""

    def would_run(name: str, args: tuple[Any, ...]) -> bool:
        """Whether eval/exec would run ``args[0]``: text that does not compile runs nothing."""
        if (
            name not in ("builtins.eval", "builtins.exec")
            or not args
            or not isinstance(args[0], str)
        ):
            return True
        source = args[0].lstrip(" \t") if name == "builtins.eval" else args[0]
        try:
            compile(source, "<check_hostile_replies>", name.rsplit(".", 1)[1])
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return False
        return True

    def wrap(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(*args: Any, **kwargs: Any) -> Any:
            mentions = _mentions(args, marker) or _mentions(kwargs, marker)
            if mentions and would_run(name, args):
                tripped.append(f"{name} with {(args[0] if args else kwargs)!r}"[:300])
                raise PermissionError(f"check_hostile_replies: {name} refused")
            return function(*args, **kwargs)

        return guarded

    targets: list[tuple[Any, str]] = [
        (os, "system"),
        (os, "popen"),
        (builtins, "open"),
        (builtins, "eval"),
        (builtins, "exec"),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name in targets]
    popen_init = subprocess.Popen.__init__
    for owner, name, function in saved:
        setattr(owner, name, wrap(f"{getattr(owner, '__name__', owner)}.{name}", function))
    subprocess.Popen.__init__ = wrap("subprocess.Popen", popen_init)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for owner, name, function in saved:
            setattr(owner, name, function)
        subprocess.Popen.__init__ = popen_init  # type: ignore[method-assign]


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
            guarded function was called with it) or ``bounded-step`` (a call took longer than
            ``time_limit``, or raised).
    """
    marker = f"trl_env_canary_{uuid.uuid4().hex}"
    tripped: list[str] = []
    slowest, steps, resets = 0.0, 0, 0
    with tempfile.TemporaryDirectory() as folder:
        canary = Path(folder, marker)
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

        with _tripwires(marker, tripped):
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
                if tripped or canary.exists():
                    what = tripped[0] if tripped else f"the canary file {canary.name} was created"
                    raise TextEnvCheckError(
                        "replies-are-data",
                        f"the reply {short!r} ran as code ({what}); parse replies as data "
                        "(ast.literal_eval, a strict grammar), never eval/exec/sympify them",
                    )
    return HostileReport(steps=steps, resets=resets, slowest_step_s=slowest)
