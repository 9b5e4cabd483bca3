from __future__ import annotations

import pickle

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import trl_env
import trl_env.utils
from trl_env import GymnasiumToProtocol, ProtocolToGymnasium
from trl_env.error import EpisodeOverError, NotATextEnvError


class CountdownEnv:
    """A protocol env: say 'go' `start` times; the seed picks the start."""

    def __init__(self, start: int | None = None) -> None:
        self.start = start
        self.last_step_reward = 0.0
        self.alive = False
        self.seeds: list[str] = []

    def reset(self, seed: str) -> str:
        self.seeds.append(seed)
        self.n = self.start if self.start is not None else 1 + len(seed) % 3
        self.alive = True
        self.last_step_reward = 0.0
        return f"Say go {self.n} times."

    def step(self, action: str) -> str:
        if action.strip() == "go":
            self.n -= 1
            self.last_step_reward = 0.5
        else:
            self.last_step_reward = -0.1
        self.alive = self.n > 0
        return "done" if not self.alive else f"{self.n} left"


def play(env: trl_env.protocol.Env, seed: str, actions: list[str]) -> list[tuple[str, float, bool]]:
    trace = [(env.reset(seed), env.last_step_reward, env.alive)]
    for action in actions:
        if not env.alive:
            break
        trace.append((env.step(action), env.last_step_reward, env.alive))
    return trace


def test_protocol_env_becomes_gymnasium_env() -> None:
    env = ProtocolToGymnasium(CountdownEnv, env_kwargs={"start": 2}, render_mode="ansi")
    assert isinstance(env, gym.Env)
    observation, info = env.reset(seed=3)
    assert observation == "Say go 2 times." and info == {"seed": "3"}
    assert env.step("go") == ("1 left", 0.5, False, False, {})
    assert env.step("go") == ("done", 0.5, True, False, {})
    assert "> go" in env.render()
    with pytest.raises(EpisodeOverError, match="reset"):
        env.step("go")


def test_protocol_adapter_passes_check_env() -> None:
    trl_env.register_protocol_env("TextCountdownCheck-v0", CountdownEnv, kwargs={"start": 3})
    try:
        check_env(gym.make("TextCountdownCheck-v0").unwrapped)
    finally:
        del gym.registry["TextCountdownCheck-v0"]


def test_entry_point_string_and_instance() -> None:
    instance = CountdownEnv(start=1)
    assert ProtocolToGymnasium(instance).protocol_env is instance
    built = ProtocolToGymnasium(f"{__name__}:CountdownEnv", env_kwargs={"start": 1})
    assert isinstance(built.protocol_env, CountdownEnv)
    with pytest.raises(ValueError, match="module:ClassName"):
        ProtocolToGymnasium("no_colon_here")
    with pytest.raises(NotATextEnvError, match=r"trl_env\.protocol\.Env"):
        ProtocolToGymnasium(dict)


def test_reset_without_seed_is_reproducible_after_a_seeded_reset() -> None:
    a, b = ProtocolToGymnasium(CountdownEnv), ProtocolToGymnasium(CountdownEnv)
    a.reset(seed=11)
    b.reset(seed=11)
    assert [a.reset()[1]["seed"] for _ in range(3)] == [b.reset()[1]["seed"] for _ in range(3)]


def test_gym_env_becomes_protocol_env(wordle: gym.Env[str, str]) -> None:
    env = GymnasiumToProtocol(wordle)
    assert isinstance(env, trl_env.protocol.Env)
    assert not env.alive
    with pytest.raises(EpisodeOverError, match="reset"):
        env.step("[crane]")
    first = env.reset("5")
    assert first.startswith("Let's play Wordle")
    assert env.alive and env.last_step_reward == 0.0
    for _ in range(6):
        env.step("[zzzzz]")
    assert not env.alive and env.truncated and not env.terminated
    assert env.last_step_reward == pytest.approx(-0.1)
    with pytest.raises(EpisodeOverError):
        env.step("[crane]")


def test_protocol_seed_maps_like_seed_to_int(wordle: gym.Env[str, str]) -> None:
    env = GymnasiumToProtocol(wordle)
    env.reset("1234")
    secret_a = wordle.unwrapped.secret
    wordle.reset(seed=1234)
    assert wordle.unwrapped.secret == secret_a
    env.reset("any string works")
    secret_b = wordle.unwrapped.secret
    wordle.reset(seed=trl_env.utils.seed_to_int("any string works"))
    assert wordle.unwrapped.secret == secret_b


def test_win_sets_terminated_and_reward() -> None:
    env = GymnasiumToProtocol("TextWordle-v0")
    env.reset("0")
    secret = env.gym_env.unwrapped.secret
    reply = env.step(f"[{secret}]")
    assert "You won" in reply and not env.alive and env.terminated
    assert env.last_step_reward == 1.0 and env.last_info["won"]


def test_rejects_non_text_envs() -> None:
    with pytest.raises(NotATextEnvError, match="text space"):
        GymnasiumToProtocol(gym.make("CartPole-v1"))


def test_unknown_id_says_did_you_mean() -> None:
    with pytest.raises(gym.error.Error, match="TextWordle"):
        GymnasiumToProtocol("TextWordel-v0")


@pytest.mark.parametrize("seed", ["0", "17", "not a number", "日本"])
def test_round_trip_is_lossless(seed: str) -> None:
    actions = ["go", "nope", "go", "go", "go"]
    direct = CountdownEnv()
    expected = play(direct, seed, actions)
    inner = CountdownEnv()
    wrapped = GymnasiumToProtocol(ProtocolToGymnasium(inner))
    assert play(wrapped, seed, actions) == expected
    assert inner.seeds == [seed]  # the protocol env saw the very same seed string


def test_round_trip_through_gym_make_and_wrappers() -> None:
    trl_env.register_protocol_env(
        "TextCountdownTest-v0", f"{__name__}:CountdownEnv", max_episode_steps=50
    )
    try:
        env = gym.make("TextCountdownTest-v0")
        env = gym.wrappers.RecordEpisodeStatistics(env)
        assert play(GymnasiumToProtocol(env), "x", ["go"] * 5) == play(
            CountdownEnv(), "x", ["go"] * 5
        )
        assert pickle.loads(pickle.dumps(gym.make("TextCountdownTest-v0"))) is not None
    finally:
        del gym.registry["TextCountdownTest-v0"]


def test_register_protocol_env_time_limit_truncates() -> None:
    trl_env.register_protocol_env(
        "TextCountdownLimit-v0", CountdownEnv, kwargs={"start": 10}, max_episode_steps=2
    )
    try:
        env = GymnasiumToProtocol("TextCountdownLimit-v0")
        env.reset("0")
        env.step("go")
        env.step("go")
        assert not env.alive and env.truncated and not env.terminated
    finally:
        del gym.registry["TextCountdownLimit-v0"]
