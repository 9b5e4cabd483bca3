"""Two-player games (issue 32, item 1): the game says whose turn it is, each seat sees only its own
conversation, and an opponent is a policy, through one contract the native tic-tac-toe and the
TextArena bridge share (``trl_env._two_player``, ``trl_env._seats``)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import trl_env  # noqa: F401 (registers the envs)
from trl_env import FunctionPolicy, OraclePolicy, Reply, Turn
from trl_env._episode import Task
from trl_env._seats import play_matches
from trl_env._two_player import (
    ScriptedPolicy,
    TwoPlayerGame,
    is_two_player,
    two_player_env_ids,
)

TWO_PLAYER_IDS = [
    "TextTicTacToe-v0",
    "TextTicTacToePerfect-v0",
    "TextArena/TicTacToe-v0",
    "TextArena/ConnectFour-v0",
]


def _needs(env_id: str) -> None:
    if env_id.startswith("TextArena/"):
        pytest.importorskip("textarena")


def _play(env: gym.Env[str, str], seed: int, policy: Any) -> list[Any]:
    """Every observation, reward and flag of one seeded game of ``env``'s agent seat."""
    observation, info = env.reset(seed=seed)
    record: list[Any] = [observation]
    rng = np.random.default_rng(seed)
    done = False
    while not done:
        observation, reward, terminated, truncated, info = env.step(policy(env, rng))
        record.append((observation, reward, terminated, truncated, info.get("board")))
        done = terminated or truncated
    return record


def test_the_two_player_envs_are_found_from_their_classes() -> None:
    assert two_player_env_ids() == TWO_PLAYER_IDS
    assert not is_two_player(gym.make("TextWordle-v0"))
    assert isinstance(gym.make("TextTicTacToe-v0").unwrapped, TwoPlayerGame)


def test_the_env_says_whose_turn_it_is() -> None:
    env = gym.make("TextTicTacToe-v0", agent_first=False)
    game: Any = env.unwrapped
    assert game.current_seat is None  # not started
    env.reset(seed=0)
    assert game.current_seat == 0 and game.board.count("O") == 1  # the opponent opened
    game.start_seats(0)  # both seats from outside: nobody has moved, O is to move
    assert game.current_seat == 1 and game.board == "." * 9
    assert "You are O" in game.seat_observation(1) and "Your move (O)." in game.seat_observation(1)
    with pytest.raises(ValueError, match="turn"):
        game.seat_step(0, "[b2]")
    assert game.seat_step(1, "[b2]").invalid is False and game.current_seat == 0
    step = game.seat_step(0, "[b2]")  # taken
    assert step.invalid and step.reward == -0.1 and game.current_seat == 0
    assert game.seat_observation(0).startswith("Invalid move: b2 is already taken by O")
    with pytest.raises(RuntimeError, match="start_seats"):
        env.step("[a1]")  # the gym API plays seat 0 against the env's opponent: not this game
    for seat, cell in ((0, "[a1]"), (1, "[c1]"), (0, "[a2]"), (1, "[a3]")):
        game.seat_step(seat, cell)
    assert game.current_seat is None and game.board == "X.OXO.O.."  # O: c1 b2 a3
    assert (game.seat_result(1), game.seat_result(0)) == ("win", "loss")
    assert "you lost" in game.seat_observation(0) and "you won" in game.seat_observation(1)


def test_a_callable_opponent_gets_only_its_own_seats_observations() -> None:
    seen: list[Turn] = []

    def opponent(turn: Turn) -> str:
        seen.append(turn)
        return turn.env.unwrapped.random_action(np.random.default_rng(len(seen)))

    env = gym.make("TextTicTacToe-v0", opponent=opponent, agent_first="random")
    for seed in range(6):
        seen.clear()
        agent = _play(env, seed, lambda e, rng: e.unwrapped.oracle_action())
        assert "You are X" in agent[0] and not any("(O)" in str(r) for r in agent)
        episode = env.unwrapped.opponent_episode
        assert episode is not None and all(turn.episode is episode for turn in seen)
        assert "You are O" in seen[0].observation and "You are X" not in seen[0].observation
        assert all("Your move (O)." in turn.observation for turn in seen)
        told = [e["text"] for e in episode.transcript if e["role"] == "env"]
        assert told[:-1] == [turn.observation for turn in seen]  # the last one: how it ended
        assert told[-1].endswith(("you lost.", "it's a draw.", "you won!"))
        roles = [e["role"] for e in episode.transcript]
        assert roles == ["env", "agent"] * len(seen) + ["env"] and episode.turns == len(seen)


@pytest.mark.parametrize("name", ["random", "greedy", "perfect"])
@pytest.mark.parametrize("agent_first", [True, False, "random"])
def test_a_scripted_player_as_a_policy_plays_the_same_games(name: str, agent_first: Any) -> None:
    """The scripted opponents' seeded games are unchanged (the replays of tests/test_replays.py
    hold them), and the same player given as a policy, through the seat contract, plays them."""

    def agent(e: gym.Env[str, str], rng: np.random.Generator) -> str:
        return e.unwrapped.random_action(rng) if rng.random() < 0.8 else "no idea"

    scripted = gym.make("TextTicTacToe-v0", opponent=name, agent_first=agent_first)
    as_policy = gym.make("TextTicTacToe-v0", opponent=ScriptedPolicy(name), agent_first=agent_first)
    for seed in range(15):
        assert _play(scripted, seed, agent) == _play(as_policy, seed, agent)


def test_an_opponent_that_keeps_replying_invalidly_or_stops_forfeits() -> None:
    env = gym.make("TextTicTacToe-v0", opponent=lambda turn: "pass")
    env.reset(seed=0)
    observation, reward, terminated, _, info = env.step("[b2]")
    assert (reward, terminated, info["winner"]) == (1.0, True, "X")
    assert observation.endswith("Your opponent forfeited (3 invalid replies in a row): you won!")
    transcript = env.unwrapped.opponent_episode.transcript
    assert sum(e.get("invalid_action", False) for e in transcript) == 3
    assert "You forfeited" in transcript[-1]["text"] and transcript[-1]["result"] == "loss"
    stops = gym.make("TextTicTacToe-v0", opponent=FunctionPolicy(lambda turn: None))
    stops.reset(seed=0)
    assert stops.step("[a1]")[1:3] == (1.0, True)
    fails = gym.make("TextTicTacToe-v0", agent_first=False, opponent=lambda turn: 1 / 0)
    observation, _ = fails.reset(seed=0)  # forfeited before the agent's first move
    assert "forfeited (its policy failed)" in observation
    assert fails.step("[a1]")[1:3] == (1.0, True)


def test_the_opponent_argument_is_checked() -> None:
    with pytest.raises(ValueError, match="Did you mean 'perfect'"):
        gym.make("TextTicTacToe-v0", opponent="perfct")
    with pytest.raises(ValueError, match="a policy"):
        gym.make("TextTicTacToe-v0", opponent=42)
    policy = OraclePolicy()
    assert gym.make("TextTicTacToe-v0", opponent=policy).unwrapped.opponent is policy
    assert gym.make("TextTicTacToe-v0").unwrapped.opponent == "random"  # as it always was


class _Counting:
    """A policy that counts its calls and the turns of each."""

    def __init__(self, policy: Any) -> None:
        self.policy, self.calls = policy, []

    def act(self, turns: list[Turn]) -> list[str | Reply | None]:
        self.calls.append(len(turns))
        return self.policy.act(turns)


def test_play_matches_asks_each_policy_once_a_round_for_every_seat() -> None:
    perfect = _Counting(ScriptedPolicy("perfect"))
    envs = [gym.make("TextTicTacToe-v0") for _ in range(6)]
    tasks = [Task("TextTicTacToe-v0", seed) for seed in range(6)]
    matches = play_matches(envs, tasks, [(perfect, perfect)] * 6)
    assert perfect.calls == [6] * 9  # 9 rounds (one move of every game each), one call each
    for match in matches:
        assert [player.result for player in match.players] == ["draw", "draw"]
        x, o = (player.episode for player in match.players)
        assert x.episode_return == o.episode_return == 0.5 and (x.turns, o.turns) == (5, 4)
        assert "You are X" in x.transcript[0]["text"] and "You are O" in o.transcript[0]["text"]
        assert not any("(O)" in e.get("text", "") for e in x.transcript)
        assert not any("(X)" in e.get("text", "") for e in o.transcript)


def test_a_seat_that_stops_loses_the_match() -> None:
    env = gym.make("TextTicTacToe-v0")
    [match] = play_matches(
        [env],
        [Task("TextTicTacToe-v0", 0)],
        [(ScriptedPolicy("random"), FunctionPolicy(lambda t: None))],
    )
    assert [p.result for p in match.players] == ["win", "loss"]
    assert match.players[1].episode.ended_by == "stopped"


@pytest.mark.parametrize("env_id", ["TextArena/TicTacToe-v0", "TextArena/ConnectFour-v0"])
def test_the_textarena_games_fill_the_same_contract(env_id: str) -> None:
    _needs(env_id)

    def agent(e: gym.Env[str, str], rng: np.random.Generator) -> str:
        return e.unwrapped.random_action(rng)

    seen: list[str] = []

    def opponent(turn: Turn) -> str:
        seen.append(turn.observation)
        return turn.env.unwrapped.scripted_action("random")

    for seed in range(4):  # the random opponent as a policy plays the scripted one's games
        assert _play(gym.make(env_id), seed, agent) == _play(
            gym.make(env_id, opponent=ScriptedPolicy("random")), seed, agent
        )
    env = gym.make(env_id, opponent=opponent)
    _play(env, 0, agent)
    episode = env.unwrapped.opponent_episode
    assert episode.transcript[-1]["result"] in ("win", "draw", "loss")
    assert "Player 1" in seen[0] and seen[0] != env.reset(seed=0)[0]  # its own side
    [match] = play_matches([gym.make(env_id)], [Task(env_id, 3)], [(ScriptedPolicy("random"),) * 2])
    assert match.error is None and {p.result for p in match.players} <= {"win", "draw", "loss"}
    assert match.players[0].episode.transcript[0]["text"].count("Player 0") >= 1
