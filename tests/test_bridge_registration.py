"""Bridged IDs are registered without importing their libraries, and say what to install."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest
from trl_env.envs.bridges import SOURCES, bridged_ids, catalogue_rows, register_bridges

import trl_env


def test_import_trl_env_imports_no_bridged_library() -> None:
    script = (
        "import sys, gymnasium as gym, trl_env\n"
        "assert 'reasoning_gym/Countdown-v0' in gym.registry\n"
        "assert 'TextArena/TowerOfHanoi-v0' in gym.registry\n"
        "print(sorted(m for m in ('reasoning_gym', 'textarena', 'nltk', 'sympy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("env_id", "module", "extra"),
    [
        ("reasoning_gym/Countdown-v0", "reasoning_gym", "reasoning-gym"),
        ("TextArena/TowerOfHanoi-v0", "textarena", "textarena"),
    ],
)
def test_missing_extra_names_the_install(
    env_id: str, module: str, extra: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(trl_env.MissingExtraError, match=f'pip install "trl-env\\[{extra}\\]"'):
        gym.make(env_id)


def test_every_bridged_id_is_registered_once_with_its_row() -> None:
    register_bridges()  # idempotent
    rows = catalogue_rows()
    assert {row["source"] for row in rows} == set(SOURCES)
    assert len({row["id"] for row in rows}) == len(rows) == len(bridged_ids())
    for row in rows:
        spec = gym.spec(row["id"])
        assert spec.entry_point == row["entry_point"]
        assert spec.max_episode_steps == row["max_episode_steps"]
        assert set(row) >= {"id", "source", "description", "has_oracle"}
        assert row["id"].startswith(
            {"reasoning-gym": "reasoning_gym/", "textarena": "TextArena/"}[row["source"]]
        )
