"""Seeded episodes of every native game replay bit-identically to recordings made before a change.

The recordings in ``tests/data/replays`` were made by ``scripts/record_replays.py`` with the games
as they were before the text-game base class (issue 12), and the rewrite replayed them exactly: a
scripted mix of oracle moves, random moves and invalid replies per seed. They were re-recorded
once since, on purpose, when invalid-reply feedback began to quote the reply and replies stating
one legal move in plain words began to be read (issue 9); valid moves were unaffected. The two
Countdown recordings were re-recorded once more when its random policy began to draw among legal
moves only (issue 19): its random moves changed, nothing else. Observations, rewards, flags and rendered frames must be
identical. ``info`` is compared on the keys both have, and a recorded key may only be missing
where the game now leaves it out on purpose (a value that was ``None`` on some steps, which
vector envs cannot batch; see :data:`DROPPED_NONE_KEYS`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import trl_env  # noqa: F401

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import record_replays  # noqa: E402

DROPPED_NONE_KEYS = {"value", "distance", "correct", "hint", "pattern", "feedback", "guess"}
"""Info keys that were ``None`` on some steps: now left out on those steps instead."""


def _load(env_id: str) -> dict[str, Any]:
    return json.loads(record_replays.path_for(env_id).read_text())


def _check_info(recorded: dict[str, Any], info: dict[str, Any], where: str) -> None:
    now = record_replays.jsonable(info)
    for key, value in recorded.items():
        if key not in now:
            assert key in DROPPED_NONE_KEYS and value is None, f"{where}: info[{key!r}] is gone"
            continue
        assert now[key] == value, f"{where}: info[{key!r}] {now[key]!r} != {value!r}"


def _check_policy(env: gym.Env[str, str], step: dict[str, Any], rng: Any) -> None:
    """The game's own policies still choose the recorded oracle and random moves.

    The random moves were drawn by ``trl_env._eval.random_action`` before the policies moved
    into the games; the warm start of ``trl-env train`` relies on the same draws.
    """
    game: Any = env.unwrapped
    if step["kind"] == "o":
        assert game.oracle_action() == step["action"]
    elif step["kind"] == "r":
        assert game.random_action(rng) == step["action"]


@pytest.mark.parametrize("env_id", record_replays.NATIVE_IDS)
def test_recorded_episodes_replay_identically(env_id: str) -> None:
    data = _load(env_id)
    assert data["env_id"] == env_id
    episodes = iter(data["episodes"])
    for _seed in record_replays.SEEDS:
        env = gym.make(env_id, render_mode="ansi")
        for episode_index in range(record_replays.EPISODES_PER_SEED):
            episode = next(episodes)
            observation, info = env.reset(seed=episode["seed"])
            where = f"{env_id} seed={episode['seed']}"
            assert observation == episode["observation"], where
            assert env.render() == episode["render"], where
            _check_info(episode["info"], info, where)
            for index, step in enumerate(episode["steps"]):
                here = f"{where} step {index} ({step['kind']}: {step['action']!r})"
                _check_policy(env, step, record_replays.policy_rng(_seed, episode_index, index))
                observation, reward, terminated, truncated, info = env.step(step["action"])
                assert observation == step["observation"], here
                assert float(reward) == step["reward"], here
                assert (terminated, truncated) == (step["terminated"], step["truncated"]), here
                assert env.render() == step["render"], here
                _check_info(step["info"], info, here)
        env.close()
    assert next(episodes, None) is None
