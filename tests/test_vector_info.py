"""Vector envs batch every registered env's ``info`` right, in sync and async mode (issue 13).

Gymnasium sizes a batched info array from the first sub-env that reports the key: an int in one
sub-env and ``None`` in another raised, and a bool next to ``None`` was silently turned into
``False``. Each registered env is stepped in a 2-env vector env with a mix of oracle, random and
invalid replies (autoresetting), next to two plain envs with the same seeds that play the same
replies; every batched value must equal the plain env's, and a key's mask must be set exactly
where the plain env reported it.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import trl_env
from tests.conftest import text_env_ids

NUM_ENVS = 2
INVALID = ("", "I do not know", "[]", "[99999]", "[zz]", "]][[")


def _reply(env: gym.Env[str, str], step: int, rng: np.random.Generator) -> str:
    game: Any = env.unwrapped
    kind = step % 3
    if kind == 0 and hasattr(game, "oracle_action"):
        return game.oracle_action()
    if kind == 1 and hasattr(game, "random_action"):
        return game.random_action(rng)
    return INVALID[int(rng.integers(len(INVALID)))]


def _same(batched: Any, value: Any) -> bool:
    if isinstance(batched, np.generic):
        if isinstance(value, bool) != isinstance(batched, np.bool_):
            return False
        return bool(batched.item() == value)
    if isinstance(batched, np.ndarray) or isinstance(value, np.ndarray):
        return np.array_equal(batched, value)
    return type(batched) is type(value) and batched == value


def _check_batch(infos: dict[str, Any], expected: list[dict[str, Any]], where: str) -> None:
    keys = set().union(*expected)
    for key in keys:
        assert key in infos, f"{where}: info[{key!r}] missing from the batch"
        for i, info in enumerate(expected):
            assert bool(infos[f"_{key}"][i]) == (key in info), f"{where}: mask of {key!r}[{i}]"
            if key in info:
                assert _same(infos[key][i], info[key]), (
                    f"{where}: info[{key!r}][{i}] batched as {infos[key][i]!r}, "
                    f"the env gave {info[key]!r}"
                )
    for key in set(infos) - keys - {f"_{k}" for k in keys}:
        assert not np.any(infos[f"_{key}"]), f"{where}: stale {key!r} in the batch"


def _play(env_id: str, mode: str, steps: int) -> None:
    vector = gym.make_vec(env_id, NUM_ENVS, vectorization_mode=mode)
    plain = [gym.make(env_id) for _ in range(NUM_ENVS)]
    rng = np.random.default_rng(0)
    try:
        observations, infos = vector.reset(seed=3)
        expected = [env.reset(seed=3 + i) for i, env in enumerate(plain)]
        assert list(observations) == [observation for observation, _ in expected]
        _check_batch(infos, [info for _, info in expected], f"{env_id} reset")
        done = [False] * NUM_ENVS
        for step in range(steps):
            # A sub-env that just ended ignores its action (it resets): send an invalid one.
            actions = ["" if done[i] else _reply(env, step + i, rng) for i, env in enumerate(plain)]
            observations, rewards, terminated, truncated, infos = vector.step(actions)
            expected_infos = []
            for i, env in enumerate(plain):
                if done[i]:  # gymnasium's next-step autoreset: this step resets the sub-env
                    observation, info = env.reset()
                    reward, ended = 0.0, (False, False)
                else:
                    observation, reward, *flags, info = env.step(actions[i])
                    ended = (flags[0], flags[1])
                assert observations[i] == observation, f"{env_id} step {step}"
                assert rewards[i] == reward and (terminated[i], truncated[i]) == ended
                done[i] = ended[0] or ended[1]
                expected_infos.append(info)
            _check_batch(infos, expected_infos, f"{env_id} {mode} step {step}")
    finally:
        vector.close()
        for env in plain:
            env.close()


@pytest.mark.parametrize("env_id", text_env_ids())
def test_sync_vector_env_batches_info(env_id: str) -> None:
    _play(env_id, "sync", steps=200)


@pytest.mark.parametrize("env_id", text_env_ids())
def test_async_vector_env_batches_info(env_id: str) -> None:
    _play(env_id, "async", steps=60)


def test_every_native_game_is_a_text_game() -> None:
    from trl_env.envs._text_game import TextGame

    native = [s for s in trl_env.envs.env_specs("catalogue") if ".toy_text:" not in s.entry_point]
    assert len(native) == 14
    for spec in native:
        assert isinstance(gym.make(spec.id).unwrapped, TextGame), spec.id


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_vector_env_mixing_games_steps_and_batches_info(mode: str) -> None:
    """Issue 14's example: TextGuessNumber-v0 beside TextWordle-v0 (different max lengths, a
    shared ``guess`` key) steps in a vector env, and ``guess`` is batched, not mangled."""
    vector = gym.vector.SyncVectorEnv if mode == "sync" else gym.vector.AsyncVectorEnv
    envs = vector(
        [lambda: gym.make("TextGuessNumber-v0"), lambda: gym.make("TextWordle-v0")],
        observation_mode="different",
    )
    try:
        envs.reset(seed=0)
        for actions in [("[50]", "[crane]"), ("garbage", "[slate]"), ("[25]", "xx")]:
            observations, _, _, _, info = envs.step(actions)
            assert all(isinstance(text, str) and text for text in observations)
        assert list(info["guess"]) == ["25", None]
        assert info["number"][0] == 25 and info["_number"].tolist() == [True, False]
    finally:
        envs.close()
