"""Every registered text env in gymnasium's vector envs: sync, async (shared memory), autoreset."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from tests.conftest import text_env_ids
from trl_env.spaces import SharedTextBatch

# Long Unicode replies: several scripts, emoji, accents, a wide-character run; ~40k characters.
LONG_UNICODE = ("Réponse → 回答 ответ 🎉🚀 ñ " * 1500)[:40_000]
REPLIES = ["[crane]", LONG_UNICODE, "[left]", "", "hit", "[1]", "🎉" * 3000, "[up]"]


def make_vec(env_id: str, num_envs: int, mode: str, max_episode_steps: int | None = None, **kw):
    spec = gym.spec(env_id)
    if max_episode_steps is not None:
        spec = copy.deepcopy(spec)
        spec.max_episode_steps = max_episode_steps
    return gym.make_vec(spec, num_envs=num_envs, vectorization_mode=mode, **kw)


def single_rollouts(env_id: str, num_envs: int, seed: int, steps: int, max_episode_steps=None):
    """What each sub-env should see: env i reset with seed + i, then next-step autoreset."""
    kwargs = {} if max_episode_steps is None else {"max_episode_steps": max_episode_steps}
    expected = []
    for i in range(num_envs):
        env = gym.make(env_id, **kwargs)
        observation, _ = env.reset(seed=seed + i)
        trace, done = [observation], False
        for t in range(steps):
            if done:  # next-step autoreset: this step only resets, with reward 0
                observation, _ = env.reset()
                trace.append((observation, 0.0, False, False))
                done = False
                continue
            observation, reward, terminated, truncated, _ = env.step(
                REPLIES[(t + i) % len(REPLIES)]
            )
            trace.append((observation, float(reward), bool(terminated), bool(truncated)))
            done = terminated or truncated
        expected.append(trace)
    return expected


def vector_rollouts(envs, num_envs: int, seed: int, steps: int):
    observations, _ = envs.reset(seed=seed)
    traces = [[observations[i]] for i in range(num_envs)]
    for t in range(steps):
        actions = tuple(REPLIES[(t + i) % len(REPLIES)] for i in range(num_envs))
        observations, rewards, terminations, truncations, _ = envs.step(actions)
        assert observations in envs.observation_space
        for i in range(num_envs):
            traces[i].append(
                (observations[i], float(rewards[i]), bool(terminations[i]), bool(truncations[i]))
            )
    return traces


@pytest.mark.parametrize("env_id", text_env_ids())
def test_sync_vector_env_matches_single_envs_with_next_step_autoreset(env_id: str) -> None:
    envs = make_vec(env_id, 3, "sync", max_episode_steps=3)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    got = vector_rollouts(envs, 3, seed=11, steps=9)
    assert got == single_rollouts(env_id, 3, seed=11, steps=9, max_episode_steps=3)
    for trace in got:  # each episode ended by step 3; the next step only reset the sub-env
        ended = next(t for t in range(1, 4) if trace[t][2] or trace[t][3])
        assert trace[ended + 1][1:] == (0.0, False, False)
    envs.close()


@pytest.mark.parametrize("copy_observations", [True, False], ids=["copy", "live-view"])
@pytest.mark.parametrize("env_id", text_env_ids())
def test_async_vector_env_with_shared_memory(env_id: str, copy_observations: bool) -> None:
    # copy=False hands out the SharedTextBatch itself: it must be in the observation space too.
    envs = make_vec(
        env_id, 2, "async", max_episode_steps=2, vector_kwargs={"copy": copy_observations}
    )
    try:
        got = vector_rollouts(envs, 2, seed=5, steps=4)
    finally:
        envs.close()
    assert got == single_rollouts(env_id, 2, seed=5, steps=4, max_episode_steps=2)
    assert all(isinstance(trace[0], str) and trace[0] for trace in got)


def test_async_without_copy_returns_a_live_view_that_copies_to_tuples() -> None:
    envs = gym.make_vec(
        "TextWordle-v0", num_envs=2, vectorization_mode="async", vector_kwargs={"copy": False}
    )
    try:
        first, _ = envs.reset(seed=0)
        assert isinstance(first, SharedTextBatch) and first in envs.observation_space
        snapshot = copy.deepcopy(first)
        assert type(snapshot) is tuple and snapshot == first
        envs.step(("[crane]", "[slate]"))
        assert first[0].startswith("Guess 1 of 6: CRANE")  # the view follows the buffer
        assert first in envs.observation_space
        assert snapshot[0].startswith("Let's play Wordle")
    finally:
        envs.close()


def test_async_without_shared_memory_agrees_with_shared_memory() -> None:
    results = []
    for shared in (True, False):
        envs = gym.make_vec(
            "TextWordle-v0",
            num_envs=2,
            vectorization_mode="async",
            vector_kwargs={"shared_memory": shared},
        )
        try:
            results.append(vector_rollouts(envs, 2, seed=3, steps=3))
        finally:
            envs.close()
    assert results[0] == results[1]


def test_vector_rewards_and_spaces_are_batched() -> None:
    envs = gym.make_vec("TextWordle-v0", num_envs=4, vectorization_mode="sync")
    observations, _ = envs.reset(seed=0)
    assert isinstance(observations, tuple) and len(observations) == 4
    _, rewards, terminations, _, infos = envs.step(envs.action_space.sample())
    assert rewards.dtype == np.float64 and terminations.shape == (4,)
    assert infos["invalid_action"].shape == (4,)
    envs.close()
