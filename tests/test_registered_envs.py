"""Every registered text env, checked the way gymnasium's own test suite checks its envs."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence

import trl_env
from tests.conftest import text_env_ids
from trl_env.utils import check_text_env
from trl_env.wrappers import (
    CapObservationLength,
    LimitInvalidActions,
    PenalizeInvalidActions,
    PrefixFirstObservation,
    RecordTranscript,
)

ACTIONS = ["[crane]", "", "hello world", "[slate]", "🎉 ñ\n\t", "1", "[zzzzz]", "x" * 5000]


def rollout(env: gym.Env[str, str], seed: int, actions: list[str]) -> list[tuple]:
    observation, info = env.reset(seed=seed)
    trace = [(observation, repr(sorted(info)))]
    for action in actions:
        observation, reward, terminated, truncated, info = env.step(action)
        trace.append((observation, reward, terminated, truncated))
        if terminated or truncated:
            break
    return trace


@pytest.mark.parametrize("env_id", text_env_ids())
def test_check_env_without_warnings(env_id: str) -> None:
    # pytest turns every warning into an error (pyproject filterwarnings), so this is warning-free.
    check_env(gym.make(env_id).unwrapped)


@pytest.mark.parametrize("env_id", text_env_ids())
def test_passive_checker_silent_on_ordinary_text(env_id: str) -> None:
    env = gym.make(env_id)
    for seed in range(3):
        rollout(env, seed, ACTIONS)
    assert trl_env.is_text_space(env.observation_space)
    assert trl_env.is_text_space(env.action_space)


@pytest.mark.parametrize("env_id", text_env_ids())
def test_observations_are_inside_the_space(env_id: str) -> None:
    env = gym.make(env_id)
    for observation, *_ in rollout(env, 0, ACTIONS):
        assert env.observation_space.contains(observation)


@pytest.mark.parametrize("env_id", text_env_ids())
def test_seeded_determinism(env_id: str) -> None:
    a, b = gym.make(env_id), gym.make(env_id)
    assert rollout(a, 123, ACTIONS) == rollout(b, 123, ACTIONS)
    # ...and unseeded resets after a seeded one continue the same stream.
    assert rollout(a, None, ACTIONS) == rollout(b, None, ACTIONS)


@pytest.mark.parametrize("env_id", text_env_ids())
def test_envs_do_not_share_random_state(env_id: str) -> None:
    solo = gym.make(env_id)
    expected = [rollout(solo, None if i else 5, ACTIONS[:2]) for i in range(4)]
    a, noise = gym.make(env_id), gym.make(env_id)
    a.reset(seed=5)
    np.random.seed(0)  # global numpy state must not matter either
    got = []
    for i in range(4):
        noise.reset(seed=i + 100)
        got.append(rollout(a, None if i else 5, ACTIONS[:2]))
    assert got == expected


@pytest.mark.parametrize("env_id", text_env_ids())
def test_pickling_mid_episode(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=7)
    env.step(ACTIONS[0])
    clone = pickle.loads(pickle.dumps(env))
    for action in ACTIONS[1:4]:
        original, copied = env.step(action), clone.step(action)
        assert data_equivalence(original, copied)
        if original[2] or original[3]:
            break


@pytest.mark.parametrize("env_id", text_env_ids())
def test_render_ansi(env_id: str) -> None:
    env = gym.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    env.step(ACTIONS[0])
    frame = env.render()
    assert isinstance(frame, str) and frame


@pytest.mark.parametrize("env_id", text_env_ids())
def test_spec_round_trip(env_id: str) -> None:
    env = gym.make(env_id)
    remade = gym.make(env.spec)
    assert remade.spec == env.spec


@pytest.mark.parametrize("env_id", text_env_ids())
def test_spec_json_round_trip(env_id: str) -> None:
    # Gymnasium serialises specs to JSON (e.g. to record how an env was made); a tuple kwarg
    # comes back as a list and the spec compares unequal, so the registry holds JSON values only.
    spec = gym.spec(env_id)
    assert gym.envs.registration.EnvSpec.from_json(spec.to_json()) == spec
    made = gym.make(env_id).spec
    assert made is not None
    assert gym.envs.registration.EnvSpec.from_json(made.to_json()) == made


@pytest.mark.parametrize("env_id", text_env_ids())
def test_gymnasium_wrappers(env_id: str) -> None:
    env = gym.make(env_id, max_episode_steps=2)  # TimeLimit override
    env = gym.wrappers.RecordEpisodeStatistics(env)
    env = gym.wrappers.TransformReward(env, lambda r: 10.0 * r)
    env = gym.wrappers.TransformObservation(env, str.upper, env.observation_space)
    observation, _ = env.reset(seed=0)
    assert observation == observation.upper()
    done, steps, total = False, 0, 0.0
    while not done:
        observation, reward, terminated, truncated, info = env.step("no idea")
        total += reward
        steps += 1
        done = terminated or truncated
    assert steps <= 2 and observation == observation.upper()
    assert info["episode"]["l"] == steps
    assert info["episode"]["r"] == pytest.approx(total / 10.0)  # recorded before the transform


@pytest.mark.parametrize("env_id", text_env_ids())
def test_protocol_adapter(env_id: str) -> None:
    env = trl_env.GymnasiumToProtocol(env_id)
    assert isinstance(env, trl_env.protocol.Env)
    first = env.reset("3")
    assert isinstance(first, str) and env.alive
    steps = 0
    while env.alive:
        assert isinstance(env.step(ACTIONS[steps % len(ACTIONS)]), str)
        steps += 1
        assert steps < 10_000
    with pytest.raises(trl_env.error.EpisodeOverError):
        env.step("anything")


# --- check_text_env and wrapper stacks over every registered env --------------------------------


@pytest.mark.parametrize("env_id", text_env_ids())
def test_check_text_env(env_id: str) -> None:
    check_text_env(gym.make(env_id))


PREFIX = "You are playing a text game. Think, then answer in the format asked."
CAP = 3000


def gymnasium_stack(env_id: str) -> gym.Env[str, str]:
    env = gym.make(env_id, max_episode_steps=3)  # TimeLimit
    env = gym.wrappers.RecordEpisodeStatistics(env)
    env = gym.wrappers.NormalizeReward(env, gamma=0.9)
    env = gym.wrappers.TransformReward(env, lambda r: 10.0 * r)
    return gym.wrappers.TransformObservation(env, str.strip, env.observation_space)


def trl_env_stack(env_id: str) -> gym.Env[str, str]:
    # Recorders go outside whatever ends or rewrites episodes (TimeLimit, LimitInvalidActions).
    env = gym.make(env_id)
    env = PenalizeInvalidActions(env, 0.5)
    env = LimitInvalidActions(env, 2)
    env = PrefixFirstObservation(env, PREFIX)
    env = CapObservationLength(env, CAP)
    return RecordTranscript(env)


def mixed_stack(env_id: str) -> gym.Env[str, str]:
    env = gym.make(env_id, max_episode_steps=4)
    env = LimitInvalidActions(env, 3)
    env = gym.wrappers.TransformReward(env, lambda r: r - 1.0)
    env = PrefixFirstObservation(env, PREFIX)
    env = CapObservationLength(env, CAP)
    env = gym.wrappers.RecordEpisodeStatistics(env)
    return RecordTranscript(env)


STACKS = {"gymnasium": gymnasium_stack, "trl_env": trl_env_stack, "mixed": mixed_stack}


def play_episode(env: gym.Env[str, str], seed: int) -> tuple[list[str], list[float], dict]:
    observation, _ = env.reset(seed=seed)
    observations, rewards = [observation], []
    for step in range(50):
        observation, reward, terminated, truncated, info = env.step(ACTIONS[step % len(ACTIONS)])
        observations.append(observation)
        rewards.append(float(reward))
        if terminated or truncated:
            return observations, rewards, info
    raise AssertionError("the stack did not end the episode")


@pytest.mark.parametrize("stack", sorted(STACKS))
@pytest.mark.parametrize("env_id", text_env_ids())
def test_wrapper_matrix(env_id: str, stack: str) -> None:
    env = STACKS[stack](env_id)
    observations, rewards, info = play_episode(env, seed=1)
    assert all(env.observation_space.contains(o) for o in observations)
    steps = len(rewards)
    if stack != "trl_env":
        assert info["episode"]["l"] == steps <= 4
    if stack != "gymnasium":
        assert observations[0].startswith(PREFIX + "\n\n")
        assert all(len(o) <= CAP for o in observations)
        assert [turn.action for turn in info["transcript"]] == ACTIONS[:steps]
        assert [turn.observation for turn in info["transcript"]] == observations[:-1]
        assert [turn.reward for turn in info["transcript"]] == rewards
    # the spec records every wrapper, so gym.make rebuilds the same stack
    remade = gym.make(env.spec)
    assert str(remade) == str(env)
    assert play_episode(remade, seed=1)[:2] == (observations, rewards)


@pytest.mark.parametrize("env_id", text_env_ids())
def test_trl_env_wrappers_keep_envs_text_envs(env_id: str) -> None:
    check_text_env(trl_env_stack(env_id), check_gymnasium=False)
    env = trl_env.GymnasiumToProtocol(trl_env_stack(env_id))
    assert env.reset("2").startswith(PREFIX)
    while env.alive:
        env.step("???")  # LimitInvalidActions ends it after 2 invalid replies at most
