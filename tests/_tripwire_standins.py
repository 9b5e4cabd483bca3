"""Scorers that do what a hostile reply's payload would, one tripwire each (test helper).

Each action takes the canary path out of a hostile reply and uses it the way a payload would,
but harmlessly if no tripwire stops it (a path that does not exist, a shell no-op), so only the
tripwire, never the canary file, can make :func:`check_hostile_replies` fail: a test that expects
it to fail proves that tripwire fired. :func:`register` adds one reasoning-gym dataset per action
(``trl_env_standin_<kind>``), so a real scorer worker (started with this module imported) runs
them as a scorer.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import re
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Any

_CANARY = re.compile(r"/[^\s'\"]*?trl_env_canary_[0-9a-f]{32}")
_FILE = os.path.join(tempfile.gettempdir(), "trl_env_standin")  # found now, not while scoring


def _exec(path: str) -> None:
    # A code object that mentions the canary but was never compiled from text that does (as a
    # marshalled or pickled payload would be): only the `exec` tripwire can see it.
    code = compile("value = 'PLACEHOLDER'", "<standin>", "exec")
    code = code.replace(co_consts=tuple(path if c == "PLACEHOLDER" else c for c in code.co_consts))
    exec(code, {})


def _socket(path: str) -> None:
    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect(path + ".sock")


MARKED: dict[str, Callable[[str], object]] = {
    "exec": _exec,
    "compile": lambda path: compile(f"open({path!r}, 'w')", "<standin>", "exec"),
    "os.system": lambda path: os.system(f": {path}"),
    "subprocess.Popen": lambda path: subprocess.run([path + ".exe"], check=False),
    "os.exec": lambda path: os.execv(path + ".exe", [path + ".exe"]),
    "os.spawn": lambda path: os.spawnv(os.P_WAIT, path + ".exe", [path + ".exe"]),
    "os.posix_spawn": lambda path: os.posix_spawn(path + ".exe", [path + ".exe"], {}),
    "open": lambda path: open(path + ".written", "w").close(),
    "ctypes.dlopen": lambda path: ctypes.CDLL(path + ".so"),
    "socket.connect": _socket,
}
"""What each tripwire watches, done with the canary path (the payloads' way)."""

UNMARKED: dict[str, Callable[[], object]] = {
    "os.system": lambda: os.system(":"),
    "subprocess.Popen": lambda: subprocess.run([sys.executable, "-c", ""], check=False),
    "open": lambda: open(_FILE, "w").close(),
    "ctypes.dlopen": lambda: ctypes.CDLL("libtrl_env_standin_missing.so"),
    "socket.connect": lambda: socket.create_connection(("127.0.0.1", 9), timeout=1).close(),
}
"""What a scorer may not do at all while scoring a reply, done without the canary path."""


def act(kind: str, answer: str, *, marked: bool = True) -> None:
    """Do ``kind`` if ``answer`` is a hostile reply (it names the canary); swallow any error."""
    found = _CANARY.search(answer)
    if found is None:
        return
    with contextlib.suppress(Exception):
        if marked:
            MARKED[kind](found.group(0))
        else:
            UNMARKED[kind]()


def task(kind: str, *, marked: bool = True) -> str:
    """The reasoning-gym task name of a stand-in."""
    return f"trl_env_standin_{'' if marked else 'unmarked_'}{kind}"


@dataclasses.dataclass
class StandinConfig:
    seed: int | None = None
    size: int = 1


def _dataset(kind: str, marked: bool) -> type:
    class Standin:
        def __init__(self, config: StandinConfig) -> None:
            self.config = config

        def __getitem__(self, index: int) -> dict[str, Any]:
            return {"question": "Say anything.", "answer": "anything", "metadata": {}}

        def score_answer(self, answer: str, entry: dict[str, Any]) -> float:
            act(kind, answer, marked=marked)
            return 0.0

    return Standin


def datasets() -> dict[str, tuple[type, type]]:
    """Every stand-in, as reasoning-gym's ``factory.DATASETS`` holds a task."""
    marked = {task(kind): (_dataset(kind, True), StandinConfig) for kind in MARKED}
    unmarked = {task(k, marked=False): (_dataset(k, False), StandinConfig) for k in UNMARKED}
    return {**marked, **unmarked}


def register() -> None:
    """Add every stand-in to reasoning-gym's datasets (in a worker that will score them)."""
    import reasoning_gym.factory

    reasoning_gym.factory.DATASETS.update(datasets())
