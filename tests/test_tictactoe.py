from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trl_env.envs import tictactoe
from trl_env.envs.tictactoe import (
    CELL_NAMES,
    TextTicTacToeEnv,
    best_moves,
    minimax_score,
    oracle_action,
    parse_move,
    winner,
)


def play(env: gym.Env[str, str], policy, seed: int) -> tuple[float, dict]:
    env.reset(seed=seed)
    total, done, info = 0.0, False, {}
    while not done:
        _, reward, terminated, truncated, info = env.step(policy(env))
        total += reward
        done = terminated or truncated
    return total, info


@pytest.mark.parametrize(
    ("board", "expected"),
    [
        ("XXXOO....", "X"),
        ("O.XOX.O..", "O"),  # column
        ("X.O.XO..X", "X"),  # diagonal
        (".OX.XOX..", "X"),  # anti-diagonal
        ("XOXXOOOXX", "draw"),  # full, no line
        ("XO.......", None),
        ("." * 9, None),
    ],
)
def test_winner(board: str, expected: str | None) -> None:
    assert winner(board) == expected


def test_cell_names_and_numbering() -> None:
    assert CELL_NAMES == ("a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3")
    for number, name in enumerate(CELL_NAMES, start=1):
        assert parse_move(f"[{number}]") == parse_move(f"[{name}]") == (number - 1, None)


@pytest.mark.parametrize(
    ("action", "cell"),
    [
        ("[b2]", 4),
        ("[B2]", 4),
        ("[2b]", 4),
        ("[ c3 ]", 8),
        ("a1", 0),
        ("  C1.\n", 2),
        ("[5]", 4),
        ("7", 6),
        ("b 2", 4),
        ("Centre is [a1]... no, [b2]", 4),
        ("**b2**", 4),
    ],
)
def test_parse_move_accepts(action: str, cell: int) -> None:
    assert parse_move(action) == (cell, None)


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ("", "empty"),
        (" \n\t", "empty"),
        ("[]", "brackets were empty"),
        ("I take the centre", "square brackets"),
        ("[d4]", "not a cell"),
        ("[0]", "not a cell"),
        ("[10]", "not a cell"),
        ("[b2 c3]", "not a cell"),
        ("[ｂ２]", "not a cell"),  # full-width unicode
        ("[🎉]", "not a cell"),
        pytest.param("b" * 1_000_000, "not a cell", id="megabyte"),
    ],
)
def test_parse_move_rejects_with_reason(action: str, problem: str) -> None:
    cell, reason = parse_move(action)
    assert cell is None and reason is not None and problem in reason
    assert len(reason) < 200


def test_minimax_facts() -> None:
    assert minimax_score("." * 9, "X") == 0  # perfect play draws
    assert minimax_score("." * 9, "O") == 0
    # X to move with a fork available wins; O must block but cannot stop both lines.
    assert minimax_score("X...O...X", "O") == 0  # classic: O plays an edge and holds
    assert best_moves("X...O...X", "O") == [1, 3, 5, 7]  # a corner here loses
    assert minimax_score("XX.OO....", "O") < 0  # O to move wins at once
    assert best_moves("XX.OO.X..", "O") == [5]


def test_first_observation_states_rules_and_format() -> None:
    env = gym.make("TextTicTacToe-v0")
    observation, info = env.reset(seed=0)
    for needle in ("You are X", "three in a row", "a1", "b2", "1-9", "[b2]", "draw = 0.5"):
        assert needle in observation
    assert "   a b c\n1  . . .\n2  . . .\n3  . . ." in observation
    assert info["board"] == "." * 9 and len(info["legal_moves"]) == 9
    assert info["invalid_action"] is False and info["winner"] is None


def test_opponent_can_move_first() -> None:
    env = gym.make("TextTicTacToe-v0", agent_first=False)
    observation, info = env.reset(seed=0)
    assert "Your opponent moved first: O at" in observation
    assert info["board"].count("O") == 1 and info["board"].count("X") == 0
    starts = set()
    coin = gym.make("TextTicTacToe-v0", agent_first="random")
    for seed in range(20):
        starts.add(coin.reset(seed=seed)[1]["board"].count("O"))
    assert starts == {0, 1}


def test_step_observation_is_the_delta() -> None:
    env = gym.make("TextTicTacToe-v0")
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step("[b2]")
    assert observation.startswith("You: X at b2. Opponent: O at ")
    assert "three in a row" not in observation and observation.endswith("Your move (X).")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["agent_move"] == "b2" and info["opponent_move"] in CELL_NAMES
    assert info["board"].count("X") == 1 and info["board"].count("O") == 1
    assert not info["invalid_action"]


def test_win_draw_loss_rewards() -> None:
    env = TextTicTacToeEnv(opponent="random", draw_reward=0.25)
    env.reset(seed=0)
    env.board = "XX.OO...."  # agent to move, wins at c1
    observation, reward, terminated, _, info = env.step("[c1]")
    assert (reward, terminated, info["winner"]) == (1.0, True, "X")
    assert "you won" in observation and info["opponent_move"] is None
    env.reset(seed=0)
    env.board = "XOXXOOOX."  # the last cell: a draw
    observation, reward, terminated, _, info = env.step("[9]")
    assert (reward, terminated, info["winner"]) == (0.25, True, "draw") and "draw" in observation
    env = TextTicTacToeEnv(opponent="greedy")
    env.reset(seed=0)
    env.board = "OO.X..X.."  # agent blocks nothing; greedy O completes the top row
    observation, reward, terminated, _, info = env.step("[b2]")
    assert (reward, terminated, info["winner"], info["opponent_move"]) == (0.0, True, "O", "c1")
    assert "you lost" in observation


def test_greedy_opponent_blocks() -> None:
    for seed in range(10):
        env = TextTicTacToeEnv(opponent="greedy")
        env.reset(seed=seed)
        env.board = "X.....O.."
        *_, info = env.step("[b1]")  # threatens c1
        assert info["opponent_move"] == "c1"


@pytest.mark.parametrize(
    "action",
    [
        "",
        "   ",
        "[]",
        "hello world",
        "[d4]",
        "[0]",
        "[🎉]",
        "ñ ü 中文",
        pytest.param("x" * 1_000_000, id="megabyte"),
        pytest.param("[" * 100_000, id="brackets"),
    ],
)
def test_invalid_actions_get_feedback_and_penalty(action: str) -> None:
    env = gym.make("TextTicTacToe-v0", invalid_action_penalty=0.25)
    env.reset(seed=1)
    observation, reward, terminated, truncated, info = env.step(action)
    assert observation.startswith("Invalid move:") and "still your turn" in observation
    assert "[b2]" in observation and info["error"] in observation
    assert reward == -0.25 and info["invalid_action"] and info["board"] == "." * 9
    assert not terminated and not truncated
    assert len(observation) < 400
    assert env.step("[b2]")[4]["agent_move"] == "b2"  # the turn was not consumed


def test_occupied_cell_is_invalid_and_not_consumed() -> None:
    env = gym.make("TextTicTacToe-v0")
    env.reset(seed=2)
    *_, info = env.step("[b2]")
    board, taken = info["board"], info["opponent_move"]
    observation, reward, terminated, _, info = env.step(f"[{taken}]")
    assert f"{taken} is already taken by O" in observation and reward == -0.1
    assert info["invalid_action"] and info["board"] == board and not terminated
    assert (
        taken not in info["legal_moves"]
        and "b2" not in observation.split("Empty cells:")[1].split(".")[0]
    )
    observation, *_ = env.step("[5]")
    assert "b2 is already taken by X" in observation


def test_oracle_always_draws_against_perfect() -> None:
    env = gym.make("TextTicTacToePerfect-v0", agent_first="random")
    for seed in range(60):
        total, info = play(env, oracle_action, seed)
        assert total == 0.5 and info["winner"] == "draw"  # the documented max vs perfect


@pytest.mark.parametrize("opponent", ["random", "greedy"])
def test_oracle_beats_weaker_opponents(opponent: str) -> None:
    env = gym.make("TextTicTacToe-v0", opponent=opponent, agent_first="random")
    returns = [play(env, oracle_action, seed)[0] for seed in range(100)]
    assert min(returns) >= 0.5  # never loses
    assert max(returns) == 1.0
    assert returns.count(1.0) >= (70 if opponent == "random" else 20)


def test_perfect_opponent_never_loses_to_random_play() -> None:
    env = gym.make("TextTicTacToePerfect-v0", agent_first="random")
    rng = np.random.default_rng(0)

    def random_policy(e: gym.Env[str, str]) -> str:
        legal = [i for i, c in enumerate(e.unwrapped.board) if c == "."]
        return f"[{CELL_NAMES[int(rng.choice(legal))]}]"

    outcomes = [play(env, random_policy, seed)[1]["winner"] for seed in range(100)]
    assert "X" not in outcomes and outcomes.count("O") > 50


def test_perfect_opponent_varies_its_play() -> None:
    env = gym.make("TextTicTacToePerfect-v0", agent_first=False)
    openings = {env.reset(seed=seed)[1]["board"] for seed in range(30)}
    assert len(openings) == 9  # every opening move is optimal; ties broken by np_random


def test_step_after_end_raises_clear_error() -> None:
    env = TextTicTacToeEnv()
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        env.step("[b2]")
    env.reset(seed=0)
    env.board = "XX.OO...."
    env.step("[c1]")
    with pytest.raises(gym.error.ResetNeeded, match="after the episode ended"):
        env.step("[b3]")


def test_time_limit_truncates_invalid_spam() -> None:
    env = gym.make("TextTicTacToe-v0")
    env.reset(seed=0)
    results = [env.step("no idea") for _ in range(10)]
    assert not any(r[3] for r in results[:-1]) and results[-1][3]


def test_render_ansi() -> None:
    env = gym.make("TextTicTacToe-v0", render_mode="ansi")
    env.reset(seed=0)
    env.step("[a1]")
    frame = env.render()
    assert frame.startswith("   a b c\n1  X") and frame.endswith("X to move\n")
    assert TextTicTacToeEnv().render() is None


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        TextTicTacToeEnv(render_mode="human")
    with pytest.raises(ValueError, match="opponent"):
        TextTicTacToeEnv(opponent="smart")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="agent_first"):
        TextTicTacToeEnv(agent_first="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="draw_reward"):
        TextTicTacToeEnv(draw_reward=2.0)
    with pytest.raises(ValueError, match=">= 0"):
        TextTicTacToeEnv(invalid_action_penalty=-1)


def test_reset_does_not_rebuild_the_minimax_table() -> None:
    env = TextTicTacToeEnv(opponent="perfect")
    table = env._table
    env.reset(seed=1)
    env.reset(seed=2)
    assert env._table is table and TextTicTacToeEnv()._table is table
    assert tictactoe._minimax_table.cache_info().misses == 1


def test_a_step_reads_the_table_and_searches_no_game_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """The perfect opponent and the oracle look moves up in the table built once per process: a
    step checks one board for a winner per mark placed and walks no game tree (the time of an
    episode, against the 1 ms this test once allowed, is in ``benchmarks/reply_parsing.py``)."""
    env = TextTicTacToeEnv(opponent="perfect")  # the table exists from here on
    builds = tictactoe._minimax_table.cache_info().misses
    checked: list[str] = []  # every board looked at for a winner (a search looks at thousands)
    real_winner = tictactoe.winner

    def counting_winner(board: str) -> str | None:
        checked.append(board)
        return real_winner(board)

    monkeypatch.setattr(tictactoe, "winner", counting_winner)
    for seed in range(3):
        env.reset(seed=seed)
        assert env.step("[b2]")[4]["opponent_move"] is not None  # the perfect opponent answered
        assert env.step("not a move")[4]["invalid_action"]
        while not env.is_over():  # oracle moves to the end: a draw against a perfect opponent
            env.step(env.oracle_move())
        assert env.result == "draw"
        # Only the game's own positions, each once: one mark more than the one before.
        assert len(checked) == 9 and checked[-1] == env.board
        assert all(
            sum(a != b for a, b in zip(before, after, strict=True)) == 1
            for before, after in zip(["." * 9, *checked[:-1]], checked, strict=True)
        )
        checked.clear()
    assert tictactoe._minimax_table.cache_info().misses == builds


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.lists(
        st.text(max_size=30) | st.sampled_from(["[b2]", "a1", "[9]", "[c3]", "[4]", "2b"]),
        max_size=12,
    ),
    st.sampled_from(["random", "greedy", "perfect"]),
)
def test_any_text_action_never_raises_or_corrupts_state(actions: list[str], opponent: str) -> None:
    env = TextTicTacToeEnv(opponent=opponent, agent_first="random")  # type: ignore[arg-type]
    env.reset(seed=3)
    for action in actions:
        before = env.board
        observation, reward, terminated, _, info = env.step(action)
        assert env.observation_space.contains(observation)
        xs, os_ = env.board.count("X"), env.board.count("O")
        assert abs(xs - os_) <= 1 and set(env.board) <= {"X", "O", "."}
        if info["invalid_action"]:
            assert env.board == before and reward < 0
        else:
            assert env.board.count("X") == before.count("X") + 1
            assert all(b == "." or a == b for a, b in zip(env.board, before, strict=True))
        if terminated:
            assert info["winner"] is not None
            break
