"""The TextArena bridge: single-player games as registered, isolated, seeded text envs."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("textarena")

from trl_env.envs.bridges.textarena_oracles import SOLVERS

import trl_env
from trl_env.utils import check_text_env
from trl_env.wrappers import LimitInvalidActions

TA_IDS = [spec.id for spec in trl_env.envs.env_specs("textarena")]


def play(env: gym.Env[str, str], seed: int | None, moves: int = 6) -> list[tuple]:
    observation, _ = env.reset(seed=seed)
    trace: list[tuple] = [observation]
    rng = np.random.default_rng(0)
    for _ in range(moves):
        observation, reward, terminated, truncated, _ = env.step(env.unwrapped.random_action(rng))
        trace.append((observation, reward, terminated, truncated))
        if terminated or truncated:
            break
    return trace


@pytest.mark.parametrize("env_id", TA_IDS)
def test_check_text_env(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    check_text_env(env, actions=[env.unwrapped.random_action(rng) for _ in range(6)])


@pytest.mark.parametrize("env_id", TA_IDS)
def test_fresh_game_per_reset_and_seeded(env_id: str) -> None:
    env = gym.make(env_id)
    first = play(env, 3)
    play(env, 4)
    assert play(env, 3) == first  # nothing kept from the earlier episodes
    assert play(gym.make(env_id), 3) == first


def test_envs_do_not_interfere_and_ignore_the_global_rng() -> None:
    solo = [play(gym.make("TextArena/Minesweeper-v0"), 5, 3)]
    a, noise = gym.make("TextArena/Minesweeper-v0"), gym.make("TextArena/Sudoku-v0")
    noise.reset(seed=1)
    random.seed(0)
    np.random.seed(0)
    state = random.getstate()
    observation, _ = a.reset(seed=5)
    noise.step("[1 1 1]")
    assert random.getstate() == state  # TextArena reseeds the global random: not here
    assert [[observation, *play_steps(a)]] == solo


def play_steps(env: gym.Env[str, str]) -> list[tuple]:
    rng, trace = np.random.default_rng(0), []
    for _ in range(3):
        observation, reward, terminated, truncated, _ = env.step(env.unwrapped.random_action(rng))
        trace.append((observation, reward, terminated, truncated))
        if terminated or truncated:
            break
    return trace


def test_same_game_in_another_process() -> None:
    script = (
        "import gymnasium as gym, trl_env\n"
        "print(repr(gym.make('TextArena/Sudoku-v0').reset(seed=9)[0]))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == repr(gym.make("TextArena/Sudoku-v0").reset(seed=9)[0])


def test_a_won_game_and_gym_wrappers() -> None:
    env = gym.wrappers.RecordEpisodeStatistics(gym.make("TextArena/TowerOfHanoi-v0"))
    observation, _ = env.reset(seed=0)
    assert "A: [3, 2, 1]" in observation
    for move in ("[A C]", "[A B]", "[C B]", "[A C]", "[B A]", "[B C]", "[A C]"):
        observation, reward, terminated, truncated, info = env.step(move)
    assert (reward, terminated, info["won"]) == (1.0, True, True)
    assert info["episode"]["l"] == 7 and "Game over" in observation


def test_sync_vector_env() -> None:
    vector = gym.vector.SyncVectorEnv([lambda: gym.make("TextArena/GuessTheNumber-v0")] * 2)
    observations, _ = vector.reset(seed=[2, 2])
    assert observations[0] == observations[1]
    observations, rewards, *_ = vector.step(["[10]", "[10]"])
    assert observations[0] == observations[1] and rewards[0] == rewards[1]


def test_unknown_game_and_game_kwargs() -> None:
    env = gym.make("TextArena/TowerOfHanoi-v0", game_kwargs={"num_disks": 4})
    assert "A: [4, 3, 2, 1]" in env.reset(seed=0)[0]
    with pytest.raises(gym.error.Error, match="no game"):
        trl_env.envs.bridges.textarena_env.TextArenaEnv(game="NoSuchGame-v0")


ORACLE_IDS = [
    spec.id for spec in trl_env.envs.env_specs("textarena") if trl_env.envs.env_has_oracle(spec)
]


def test_oracle_table_matches_the_solvers() -> None:
    assert sorted(SOLVERS) == sorted(i.removeprefix("TextArena/") for i in ORACLE_IDS)
    assert len(ORACLE_IDS) == 4


@pytest.mark.parametrize("env_id", ORACLE_IDS)
@pytest.mark.parametrize("seed", range(3))
def test_oracle_wins(env_id: str, seed: int) -> None:
    env = gym.make(env_id)
    env.reset(seed=seed)
    terminated = truncated = False
    while not (terminated or truncated):
        _, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    assert (reward, terminated, info["won"]) == (1.0, True, True)
    with pytest.raises(gym.error.ResetNeeded):
        env.unwrapped.oracle_action()


@pytest.mark.parametrize("env_id", ["TextArena/TicTacToe-v0", "TextArena/ConnectFour-v0"])
def test_two_player_games_against_the_random_opponent(env_id: str) -> None:
    outcomes = set()
    for seed in range(12):
        env = gym.make(env_id)
        env.reset(seed=seed)
        rng, terminated, moves = np.random.default_rng(seed), False, 0
        while not terminated:
            _, reward, terminated, truncated, info = env.step(env.unwrapped.random_action(rng))
            moves += 1
            assert not truncated and "error" not in info
        assert moves <= 21 and reward in (-1.0, 0.0, 1.0)
        outcomes.add(reward)
    assert {-1.0, 1.0} <= outcomes  # the opponent both wins and loses against random play


def test_the_games_own_invalid_move_verdict_is_an_invalid_action() -> None:
    env = gym.make("TextArena/TowerOfHanoi-v0", invalid_action_penalty=0.25)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("I would rather chat")
    assert (reward, terminated, info["invalid_action"]) == (-0.25, False, True)
    assert "[source] [target]" in info["error"]  # TextArena's own reason
    _, _, terminated, _, info = env.step("still chatting")  # the second offence ends the game
    assert terminated and info["invalid_action"]
    env.reset(seed=0)
    _, reward, _, _, info = env.step(env.unwrapped.oracle_action())
    assert info["invalid_action"] is False and "error" not in info
    limited = LimitInvalidActions(gym.make("TextArena/TowerOfHanoi-v0"), 1)
    limited.reset(seed=0)
    assert limited.step("no move here")[3]  # the wrapper sees it and truncates the episode


def test_overlong_reply_never_reaches_the_game() -> None:
    env = gym.make("TextArena/ConnectFour-v0")  # its move regex is quadratic in the reply length
    env.reset(seed=0)
    observation, reward, terminated, _, info = env.step("[3]" + "a" * 1_000_000)
    assert (reward, terminated, info["invalid_action"]) == (-0.1, False, True)
    assert "characters long" in observation
    assert not env.step("[3]")[4].get("invalid_action")  # the game goes on


# ------------------------------------------------------------- every ID, as for native envs


def test_every_game_is_the_same_in_another_process() -> None:
    """Seeded episodes (random legal-looking replies) are identical in a second process."""
    script = (
        "import json, gymnasium as gym, numpy as np, trl_env\n"
        "def play(i):\n"
        "    env = gym.make(i); out = [env.reset(seed=5)[0]]; rng = np.random.default_rng(0)\n"
        "    for _ in range(3):\n"
        "        o, r, t, tr, _ = env.step(env.unwrapped.random_action(rng))\n"
        "        out.append([o, float(r), bool(t), bool(tr)])\n"
        "        if t or tr: break\n"
        "    return out\n"
        "ids = [spec.id for spec in trl_env.envs.env_specs('textarena')]\n"
        "print(json.dumps({i: play(i) for i in ids}))"
    )
    runs = [
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    first, second = (json.loads(run.stdout) for run in runs)
    assert set(first) == set(TA_IDS) and first == second


@pytest.mark.parametrize("env_id", TA_IDS)
def test_gym_wrappers_and_vector_envs(env_id: str) -> None:
    env = gym.wrappers.RecordEpisodeStatistics(gym.wrappers.TimeLimit(gym.make(env_id), 2))
    env.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(2):
        *_, terminated, truncated, info = env.step(env.unwrapped.random_action(rng))
        if terminated or truncated:
            break
    assert terminated or truncated
    assert "episode" in info
    for vector in (gym.vector.SyncVectorEnv, gym.vector.AsyncVectorEnv):
        envs = vector([lambda: gym.make(env_id)] * 2)
        try:
            observations, _ = envs.reset(seed=[4, 4])
            assert observations[0] == observations[1]
            observations, rewards, *_ = envs.step(["[nonsense]", "[nonsense]"])
            assert observations[0] == observations[1] and rewards[0] == rewards[1]
        finally:
            envs.close()
