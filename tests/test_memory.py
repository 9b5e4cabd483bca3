"""``trl_env._memory``: freed heap pages go back to the operating system."""

from __future__ import annotations

import sys

import pytest

from trl_env import _memory
from trl_env._memory import release_freed_memory

glibc = pytest.mark.skipif(
    sys.platform != "linux" or _memory._malloc_trim() is None, reason="needs glibc's malloc_trim"
)


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


@glibc
def test_freed_blocks_below_a_live_one_are_returned() -> None:
    """Blocks freed under a block still in use stay resident (the heap cannot shrink past it)
    until they are released."""
    blocks = [bytearray(b"x" * 4000) for _ in range(40_000)]  # ~160 MB of malloc'd 4 KB blocks
    kept = bytearray(b"y" * 4000)  # allocated above them: the heap's top stays in use
    before = resident_bytes()
    del blocks
    held = resident_bytes()
    assert held > before - 50e6  # glibc kept most of the freed pages
    assert release_freed_memory()
    assert resident_bytes() < held - 100e6
    assert kept[0] == ord("y")


def test_it_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRL_ENV_MALLOC_TRIM", "0")
    _memory._malloc_trim.cache_clear()
    try:
        assert release_freed_memory() is False
    finally:
        monkeypatch.delenv("TRL_ENV_MALLOC_TRIM")
        _memory._malloc_trim.cache_clear()
