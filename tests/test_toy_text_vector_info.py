"""Toy-text info keys keep one type, so gymnasium's vector envs batch them without loss.

A vector env sizes each info array from the first sub-env that reports the key; a key that is an
``int`` in one sub-env (gymnasium's FrozenLake reports ``prob=1`` on reset) and a ``float`` in
another (``prob=0.333`` after a slippery move) is silently truncated to ``0``. Keys that only
make sense on some steps are left out on the others (``action`` on invalid replies, ``error`` on
valid ones, the game's own ``prob``/``action_mask`` on invalid replies); the vector env's ``_key``
mask says which sub-envs reported them.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import trl_env

TOY_TEXT_IDS = sorted(
    spec.id for spec in trl_env.envs.env_specs("catalogue") if ".toy_text:" in str(spec.entry_point)
)
NUM_ENVS = 3
STEPS = 40
MAX_EPISODE_STEPS = 6


def replies_for(env_id: str, t: int, i: int) -> str:
    """A mix of legal moves (by index), synonyms-free junk and empty replies, per sub-env."""
    actions = gym.make(env_id).unwrapped.actions
    cycle = [
        f"[{actions[(t + i) % len(actions)]}]",
        "[fly]",
        "",
        f"{actions[(t * 7 + i) % len(actions)]}",
    ]
    return cycle[(t * (i + 1)) % len(cycle)]


def single_env_infos(env_id: str, seed: int) -> list[list[dict[str, Any]]]:
    """Each sub-env's info at every vector step (reset, steps, next-step autoresets)."""
    per_env = []
    for i in range(NUM_ENVS):
        env = gym.make(env_id, max_episode_steps=MAX_EPISODE_STEPS)
        _, info = env.reset(seed=seed + i)
        infos, done = [info], False
        for t in range(STEPS):
            if done:
                _, info = env.reset()
                done = False
            else:
                _, _, terminated, truncated, info = env.step(replies_for(env_id, t, i))
                done = terminated or truncated
            infos.append(info)
        per_env.append(infos)
    return per_env


def _same(batched: Any, single: Any) -> bool:
    if isinstance(single, np.ndarray):
        return np.array_equal(batched, single) and batched.dtype == single.dtype
    return type(batched.item() if isinstance(batched, np.generic) else batched) is type(
        single
    ) and (batched == single)


@pytest.mark.parametrize("env_id", TOY_TEXT_IDS)
def test_every_info_key_keeps_one_type_across_reset_and_steps(env_id: str) -> None:
    types: dict[str, set[str]] = defaultdict(set)
    for infos in single_env_infos(env_id, seed=0):
        for info in infos:
            for key, value in info.items():
                kind = type(value).__name__
                types[key].add(f"{kind}[{value.dtype}]" if isinstance(value, np.ndarray) else kind)
    assert {key: kinds for key, kinds in types.items() if len(kinds) > 1} == {}


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("env_id", TOY_TEXT_IDS)
def test_vector_env_batches_every_info_value_unchanged(env_id: str, mode: str) -> None:
    spec = copy.deepcopy(gym.spec(env_id))
    spec.max_episode_steps = MAX_EPISODE_STEPS
    expected = single_env_infos(env_id, seed=10)
    envs = gym.make_vec(spec, num_envs=NUM_ENVS, vectorization_mode=mode)
    try:
        _, infos = envs.reset(seed=10)
        got = [infos]
        for t in range(STEPS):
            replies = tuple(replies_for(env_id, t, i) for i in range(NUM_ENVS))
            got.append(envs.step(replies)[4])
    finally:
        envs.close()
    for step, infos in enumerate(got):
        for i in range(NUM_ENVS):
            single = expected[i][step]
            reported = {key for key in infos if not key.startswith("_") and infos[f"_{key}"][i]}
            assert reported == set(single), (step, i)
            for key, value in single.items():
                assert _same(infos[key][i], value), (step, i, key, infos[key][i], value)
