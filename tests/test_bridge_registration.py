"""Bridged IDs are registered without importing their libraries, and say what to install."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import pytest
from trl_env.envs import env_has_oracle, env_source, env_specs
from trl_env.envs.bridges import NAMESPACES
from trl_env.envs.bridges._tables import (
    REASONING_GYM_NO_STORED_ANSWER,
    REASONING_GYM_TASKS,
    TEXTARENA_GAMES,
    reasoning_gym_id,
)

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
    with pytest.raises(
        trl_env.error.MissingExtraError, match=f'pip install "trl-env\\[{extra}\\]"'
    ):
        gym.make(env_id)


def test_every_bridged_task_and_game_is_registered_in_its_namespace() -> None:
    expected = {
        reasoning_gym_id(task): ("reasoning-gym", task not in REASONING_GYM_NO_STORED_ANSWER, None)
        for task in REASONING_GYM_TASKS
    } | {
        f"TextArena/{game.name}-v0": ("textarena", game.has_oracle, game.max_episode_steps)
        for game in TEXTARENA_GAMES
    }
    bridged = [spec for spec in env_specs() if env_source(spec) in NAMESPACES]
    assert sorted(spec.id for spec in bridged) == sorted(expected)
    for spec in bridged:
        assert spec.namespace == NAMESPACES[env_source(spec)]
        source, has_oracle, max_episode_steps = expected[spec.id]
        assert (env_source(spec), env_has_oracle(spec)) == (source, has_oracle), spec.id
        assert spec.max_episode_steps == max_episode_steps
