"""Every native env plays the same through ``OpenEnv-v0`` and a served copy as it does locally.

Each native ID (entry point under ``trl_env.envs.``, not a bridge) is served in-process twice: as
registered, and with ``max_episode_steps`` set to the length of its oracle's game, so that the
oracle's last move lands on the time-limit step and the local env answers ``terminated=True,
truncated=True``. The same actions are played locally (``gym.make``) and remotely
(``gym.make("OpenEnv-v0", base_url=...)``), and every step must agree on the observation, the
reward and both flags.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("openenv")

import trl_env  # noqa: F401  (registers the catalogue and OpenEnv-v0)
from tests import test_openenv as served  # a module: its tests are not collected here
from trl_env._policies import oracle_action, random_action

NATIVE_IDS = sorted(
    env_id
    for env_id, spec in gym.registry.items()
    if isinstance(spec.entry_point, str)
    and spec.entry_point.startswith("trl_env.envs.")
    and not spec.entry_point.startswith("trl_env.envs.bridges")
)

# A policy: the local env (its state) and the last info -> the next action.
Policy = Callable[[gym.Env[str, str], dict], str]


def oracle(env: gym.Env[str, str], info: dict) -> str:
    return oracle_action(env)


def seeded_random(seed: int) -> Policy:
    rng = np.random.default_rng([seed, 0x7E57])  # not the env's own stream
    return lambda env, info: random_action(env, info, rng)


def play_both_ways(local: gym.Env, remote: gym.Env, seed: int, policy: Policy) -> list[tuple]:
    """Play one episode on both envs with the local env's choice of actions; assert that every
    step agrees and return the local steps' ``(reward, terminated, truncated)``."""
    local_observation, info = local.reset(seed=seed)
    remote_observation, _ = remote.reset(seed=seed)
    assert remote_observation == local_observation
    steps = []
    while True:
        action = policy(local, info)
        local_observation, reward, terminated, truncated, info = local.step(action)
        remote_step = remote.step(action)
        local_step = (local_observation, float(reward), bool(terminated), bool(truncated))
        assert remote_step[:4] == local_step, f"seed {seed}, step {len(steps) + 1}: {action!r}"
        assert isinstance(remote_step[2], bool) and isinstance(remote_step[3], bool)
        steps.append(local_step[1:])
        if terminated or truncated:
            return steps


def oracle_game_length(env_id: str, seed: int) -> int:
    env = gym.make(env_id)
    _, info = env.reset(seed=seed)
    length = 0
    while True:
        length += 1
        *_, terminated, truncated, info = env.step(oracle(env, info))
        if terminated or truncated:
            env.close()
            return length


def test_every_native_id_is_checked() -> None:
    assert len(NATIVE_IDS) >= 19
    assert {"TextWordle-v0", "TextGuessNumber-v0", "TextFrozenLake-v1"} <= set(NATIVE_IDS)


@pytest.mark.parametrize("env_id", NATIVE_IDS)
def test_served_env_returns_what_the_local_env_returns(env_id: str) -> None:
    # As registered: the server applies the spec's wrappers (its TimeLimit), the client none.
    with served.thread_server(env_id) as url:
        local, remote = gym.make(env_id), gym.make("OpenEnv-v0", base_url=url)
        for seed in (0, 1):
            play_both_ways(local, remote, seed, oracle)
            play_both_ways(local, remote, seed, seeded_random(seed))
        remote.close()

    # A win (or the game's end) on the time-limit step: terminated and truncated both ways.
    limit = oracle_game_length(env_id, seed=0)
    with served.thread_server(env_id, env_kwargs={"max_episode_steps": limit}) as url:
        local = gym.make(env_id, max_episode_steps=limit)
        remote = gym.make("OpenEnv-v0", base_url=url)
        steps = play_both_ways(local, remote, 0, oracle)
        assert len(steps) == limit and steps[-1][1:] == (True, True)
        for seed in (1, 2):  # other games under the short limit: some cut by it
            play_both_ways(local, remote, seed, oracle)
            play_both_ways(local, remote, seed, seeded_random(seed))
        remote.close()


def test_a_server_that_sends_only_done_still_plays() -> None:
    # Other OpenEnv servers send OpenEnv's done (and maybe truncated) without terminated.
    from trl_env.openenv._client import _episode_end

    assert _episode_end({"text": "x"}, True) == (True, False)
    assert _episode_end({"truncated": True}, True) == (False, True)
    assert _episode_end({"info": {"truncated": True}}, True) == (False, True)
    assert _episode_end({"truncated": True}, False) == (False, False)
    assert _episode_end({"terminated": True, "truncated": True}, True) == (True, True)
