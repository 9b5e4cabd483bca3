"""``trl_env._memory``: freed heap pages go back to the operating system."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from trl_env import _memory
from trl_env._memory import release_freed_memory

glibc = pytest.mark.skipif(
    sys.platform != "linux" or "LD_PRELOAD" in os.environ,  # jemalloc/tcmalloc: no glibc heap
    reason="needs glibc's own malloc (Linux, no preloaded allocator)",
)

# In a fresh process, so that no earlier test's holes in the heap take the blocks: 160 MB of
# 4 KB blocks, then one block above them that stays in use (the heap cannot shrink past it by
# itself), then the 160 MB freed. Prints the resident bytes before and after the release.
_SCENARIO = textwrap.dedent(
    """
    import os
    from trl_env._memory import release_freed_memory

    def resident():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    blocks = [bytearray(b"x" * 4000) for _ in range(40_000)]
    kept = bytearray(b"y" * 4000)
    del blocks
    held = resident()
    released = release_freed_memory()
    print(held, resident(), released, kept[0])
    """
)


@glibc
def test_freed_blocks_below_a_live_one_are_returned() -> None:
    env = {**os.environ, "TRL_ENV_MALLOC_TRIM": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _SCENARIO], capture_output=True, text=True, check=True, env=env
    )
    held, after, released, kept = done.stdout.split()
    assert released == "True" and kept == str(ord("y"))
    assert int(after) < int(held) - 100e6  # most of the 160 MB left the process


def test_it_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRL_ENV_MALLOC_TRIM", "0")
    _memory._malloc_trim.cache_clear()
    try:
        assert release_freed_memory() is False
    finally:
        monkeypatch.delenv("TRL_ENV_MALLOC_TRIM")
        _memory._malloc_trim.cache_clear()


def test_every_training_step_releases(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("trl")
    from trl_env.trl.training import _callbacks

    calls = []
    monkeypatch.setattr(_callbacks, "release_freed_memory", lambda: calls.append(1) or True)
    callback = _callbacks.MetricsCallback.__new__(_callbacks.MetricsCallback)
    callback.on_step_end(None, None, None)
    assert calls == [1]
