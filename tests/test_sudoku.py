from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trl_env.envs import _sudoku_solver, sudoku
from trl_env.envs.sudoku import (
    DIFFICULTY_CLUES,
    TextSudokuEnv,
    count_solutions,
    generate_puzzle,
    oracle_action,
    parse_move,
    solve,
)

# Wikipedia's example puzzle and its solution.
CLASSIC = "53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79"
CLASSIC_SOLUTION = (
    "534678912672195348198342567859761423426853791713924856961537284287419635345286179"
)
SMALL = "..34.31.2..3...."  # unique; solution 1234 4312 2143 3421
SMALL_SOLUTION = "1234431221433421"


def is_valid_solution(grid: list[int] | str, size: int) -> bool:
    cells = [int(v) for v in grid]
    box = {4: 2, 9: 3}[size]
    digits = set(range(1, size + 1))
    rows = [cells[r * size : (r + 1) * size] for r in range(size)]
    cols = [cells[c::size] for c in range(size)]
    boxes = [
        [cells[(br + r) * size + bc + c] for r in range(box) for c in range(box)]
        for br in range(0, size, box)
        for bc in range(0, size, box)
    ]
    return all(set(group) == digits for group in rows + cols + boxes)


def play_oracle(env: gym.Env[str, str], seed: int) -> tuple[float, int, dict]:
    env.reset(seed=seed)
    total, steps, done, info = 0.0, 0, False, {}
    while not done:
        _, reward, terminated, truncated, info = env.step(oracle_action(env))
        total += reward
        steps += 1
        done = terminated or truncated
    return total, steps, info


def test_solver_on_known_puzzles() -> None:
    assert solve(CLASSIC) == CLASSIC_SOLUTION
    assert count_solutions(CLASSIC) == 1
    assert solve(SMALL) == SMALL_SOLUTION and count_solutions(SMALL) == 1
    assert is_valid_solution(CLASSIC_SOLUTION, 9) and is_valid_solution(SMALL_SOLUTION, 4)
    assert count_solutions("." * 16, limit=1000) == 288  # every 4x4 sudoku grid
    assert count_solutions("." * 81, limit=5) == 5  # counting stops at the limit
    assert count_solutions("1.3.3.1..1.3.3.1") == 2
    assert count_solutions("11.." + "." * 12) == 0 and solve("11.." + "." * 12) is None
    assert count_solutions(CLASSIC.replace("53", "55", 1)) == 0


def test_solver_input_validation() -> None:
    with pytest.raises(ValueError, match="16"):
        solve("123")
    with pytest.raises(ValueError, match="digits"):
        solve("x" * 16)
    with pytest.raises(ValueError, match="1-4"):
        solve("5" + "." * 15)


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_generated_4x4_puzzles_are_unique(difficulty: str) -> None:
    rng = np.random.default_rng(0)
    clues = DIFFICULTY_CLUES[4][difficulty]
    for _ in range(100):
        puzzle, solution = generate_puzzle(4, clues, rng)
        assert count_solutions(puzzle) == 1
        assert is_valid_solution(solution, 4)
        assert all(p in (0, s) for p, s in zip(puzzle, solution, strict=True))
        assert 16 - puzzle.count(0) == clues


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_generated_9x9_puzzles_are_unique(difficulty: str) -> None:
    # No wall-clock bound on generation here: one failed under a full-suite load on 2 cores.
    rng = np.random.default_rng(1)
    clues = DIFFICULTY_CLUES[9][difficulty]
    for _ in range(12):
        puzzle, solution = generate_puzzle(9, clues, rng)
        assert count_solutions(puzzle) == 1 and is_valid_solution(solution, 9)
        assert all(p in (0, s) for p, s in zip(puzzle, solution, strict=True))
        assert clues <= 81 - puzzle.count(0) <= clues + 2


def test_num_clues_overrides_difficulty() -> None:
    env = TextSudokuEnv(size=9, num_clues=45, difficulty="hard")
    _, info = env.reset(seed=0)
    assert info["clues"] == 45 and env.blanks == 36 and info["blanks_left"] == 36
    env = TextSudokuEnv(size=4, difficulty="easy")
    assert env.reset(seed=0)[1]["clues"] == 10


@pytest.mark.parametrize(
    ("action", "move"),
    [
        ("[1 3 4]", (1, 3, 4)),
        ("[1,3,4]", (1, 3, 4)),
        ("[ (2, 1, 3) ]", (2, 1, 3)),
        ("[1 3 = 4]", (1, 3, 4)),
        ("[r2c1=3]", (2, 1, 3)),
        ("[R2C1 3]", (2, 1, 3)),
        ("[134]", (1, 3, 4)),
        ("1 3 4", (1, 3, 4)),
        ("Maybe [1 1 1]? No: [4 4 2]", (4, 4, 2)),
        ("[10 3 4]", (10, 3, 4)),  # range-checked by the env, not the parser
    ],
)
def test_parse_move_accepts(action: str, move: tuple[int, int, int]) -> None:
    assert parse_move(action) == (move, None)


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ("", "empty"),
        ("  \n", "empty"),
        ("[]", "brackets were empty"),
        ("row one column three is four", "square brackets"),
        ("[1 3]", "not a move"),
        ("[1 3 4 5]", "not a move"),
        ("[a b c]", "not a move"),
        ("[１ ３ ４]", "not a move"),  # full-width digits
        ("[1 3 -4]", "not a move"),
        pytest.param("[" + "1 " * 500_000 + "]", "not a move", id="megabyte"),
        pytest.param("9" * 1_000_000, "square brackets", id="megabyte-digits"),
    ],
)
def test_parse_move_rejects_with_reason(action: str, problem: str) -> None:
    move, reason = parse_move(action)
    assert move is None and reason is not None and problem in reason and len(reason) < 200


def test_first_observation_states_rules_and_format() -> None:
    env = gym.make("TextSudoku-v0")
    observation, info = env.reset(seed=0)
    for needle in ("Sudoku (4x4)", "digit 1-4", "2x2 box", "exactly one solution", "[1 3 4]"):
        assert needle in observation
    assert f"{info['blanks_left']} blanks, {info['blanks_left'] + 10} turns." in observation
    assert "    1 2   3 4\n  +-----+-----+\n1 | " in observation
    assert info["board"].count(".") == info["blanks_left"] == 8 and info["clues"] == 8
    assert info["invalid_action"] is False and info["mistake"] is False
    big, _ = gym.make("TextSudoku9x9-v0").reset(seed=0)
    assert "Sudoku (9x9)" in big and "    1 2 3   4 5 6   7 8 9" in big and len(big) < 1000


def test_correct_move_places_digit_and_shows_board() -> None:
    env = gym.make("TextSudoku-v0")
    env.reset(seed=0, options={"puzzle": SMALL})
    observation, reward, terminated, truncated, info = env.step("[1 1 1]")
    assert observation.startswith("Correct: 1 at row 1, column 1. 9 blanks left.\n")
    assert "1 | 1 . | 3 4 |" in observation and observation.endswith("19 turns left.")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["board"] == "1.34.31.2..3...." and info["move"] == (1, 1, 1)
    assert not info["invalid_action"] and not info["mistake"] and info["blanks_left"] == 9


def test_mistakes_say_wrong_and_name_a_clash() -> None:
    env = gym.make("TextSudoku-v0", mistake_penalty=0.3)
    env.reset(seed=0, options={"puzzle": SMALL})
    observation, reward, *_, info = env.step("[1 2 3]")  # row 1 already has a 3
    assert observation.startswith("Wrong: 3 does not go in row 1, column 2: row 1 already has a 3.")
    assert reward == -0.3 and info["mistake"] and not info["invalid_action"]
    assert info["board"] == SMALL and info["mistakes"] == 1
    observation, *_ = env.step("[1 1 2]")  # column 1 has a 2 (row 3)
    assert "column 1 already has a 2" in observation
    observation, *_ = env.step("[4 2 2]")  # only the box has a 2
    assert "its box already has a 2" in observation
    observation, reward, *_, info = env.step("[4 1 4]")  # fits the board, but the answer is 3
    assert observation.startswith("Wrong: 4 does not go in row 4, column 1. The board")
    assert reward == -0.3 and info["mistakes"] == 4 and info["board"] == SMALL


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("", "empty"),
        ("hello world", "square brackets"),
        ("[1 3]", "not a move"),
        ("[1 3 3]", "given clue (3)"),
        ("[5 1 1]", "off the board"),
        ("[1 0 1]", "off the board"),
        ("[1 1 5]", "not a digit of this puzzle"),
        ("[1 1 0]", "not a digit of this puzzle"),
        ("ñ 中文 🎉", "square brackets"),
        pytest.param("x" * 1_000_000, "square brackets", id="megabyte"),
        pytest.param("[" * 100_000, "square brackets", id="brackets"),
    ],
)
def test_invalid_actions_get_feedback_and_penalty(action: str, reason: str) -> None:
    env = gym.make("TextSudoku-v0", invalid_action_penalty=0.25)
    env.reset(seed=0, options={"puzzle": SMALL})
    observation, reward, terminated, truncated, info = env.step(action)
    assert observation.startswith("Invalid move:") and reason in observation
    assert reason in info["error"] and "[1 3 4]" in observation and "19 turns left" in observation
    assert reward == -0.25 and info["invalid_action"] and not info["mistake"]
    assert info["board"] == SMALL and not terminated and not truncated
    assert len(observation) < 400


def test_filled_cell_is_invalid() -> None:
    env = gym.make("TextSudoku-v0")
    env.reset(seed=0, options={"puzzle": SMALL})
    env.step("[1 1 1]")
    observation, reward, *_, info = env.step("[1 1 1]")
    assert "row 1, column 1 is already filled (1)" in observation and info["invalid_action"]


@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_oracle_solves_4x4(difficulty: str) -> None:
    env = gym.make("TextSudoku-v0", difficulty=difficulty)
    for seed in range(40):
        total, steps, info = play_oracle(env, seed)
        assert total == 1.0 and info["solved"] and steps == 16 - info["clues"]
        assert info["board"] == info["solution"] and is_valid_solution(info["solution"], 4)


@pytest.mark.parametrize("difficulty", ["easy", "hard"])
def test_oracle_solves_9x9(difficulty: str) -> None:
    env = gym.make("TextSudoku9x9-v0", difficulty=difficulty)
    for seed in range(4):
        total, steps, info = play_oracle(env, seed)
        assert total == 1.0 and info["solved"] and steps == 81 - info["clues"]


def test_oracle_solves_the_classic() -> None:
    env = gym.make("TextSudoku9x9-v0")
    env.reset(seed=0, options={"puzzle": CLASSIC})
    for _ in range(CLASSIC.count(".") - 1):
        assert env.step(oracle_action(env))[1] == 0.0
    observation, reward, terminated, _, info = env.step(oracle_action(env))
    assert (reward, terminated) == (1.0, True) and "Solved in 51 turns!" in observation
    assert info["board"] == CLASSIC_SOLUTION


def test_partial_credit() -> None:
    env = gym.make("TextSudoku-v0", partial_credit=0.5)
    env.reset(seed=0, options={"puzzle": SMALL})
    rewards = [env.step(oracle_action(env))[1] for _ in range(10)]
    assert rewards[:-1] == [pytest.approx(0.05)] * 9 and rewards[-1] == 1.0
    assert sum(rewards[:-1]) < 0.5


def test_truncated_after_blanks_plus_extra_turns() -> None:
    env = gym.make("TextSudoku-v0", extra_turns=2)
    env.reset(seed=0, options={"puzzle": SMALL})
    results = [env.step("[1 2 3]") for _ in range(12)]
    assert not any(r[3] for r in results[:-1])
    observation, reward, terminated, truncated, info = results[-1]
    assert truncated and not terminated and "No turns left." in observation
    assert info["solution"] == SMALL_SOLUTION
    with pytest.raises(gym.error.ResetNeeded, match="after the episode ended"):
        env.step("[1 1 1]")


def test_registered_step_limits_cover_the_env_limit() -> None:
    for env_id, size in (("TextSudoku-v0", 4), ("TextSudoku9x9-v0", 9)):
        spec = gym.spec(env_id)
        most_blanks = size * size - sudoku.MIN_CLUES[size]
        assert spec.max_episode_steps == most_blanks + 10


def test_puzzle_option_is_validated() -> None:
    env = TextSudokuEnv()
    with pytest.raises(ValueError, match="exactly one solution"):
        env.reset(options={"puzzle": "." * 16})
    with pytest.raises(ValueError, match="16 cells"):
        env.reset(options={"puzzle": CLASSIC})
    with pytest.raises(ValueError, match="not a puzzle"):
        env.reset(options={"puzzle": "abc"})
    with pytest.raises(ValueError, match="exactly one solution"):
        env.reset(options={"puzzle": "11.." + "." * 12})


def test_step_before_reset_and_after_end_raise() -> None:
    env = TextSudokuEnv()
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        env.step("[1 1 1]")
    env.reset(seed=0, options={"puzzle": "1234431221433421".replace("1", ".", 1)})
    assert env.step("[1 1 1]")[1:3] == (1.0, True)
    with pytest.raises(gym.error.ResetNeeded, match="after the episode ended"):
        env.step("[1 1 1]")


def test_render_ansi() -> None:
    env = gym.make("TextSudoku-v0", render_mode="ansi")
    env.reset(seed=0, options={"puzzle": SMALL})
    assert env.render().endswith("10 blanks left\n")
    assert "1 | . . | 3 4 |" in env.render()
    assert TextSudokuEnv().render() is None


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        TextSudokuEnv(render_mode="human")
    with pytest.raises(ValueError, match="size"):
        TextSudokuEnv(size=6)
    with pytest.raises(ValueError, match="difficulty"):
        TextSudokuEnv(difficulty="expert")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_clues"):
        TextSudokuEnv(size=9, num_clues=16)
    with pytest.raises(ValueError, match="extra_turns"):
        TextSudokuEnv(extra_turns=-1)
    with pytest.raises(ValueError, match=">= 0"):
        TextSudokuEnv(mistake_penalty=-1)


def test_reset_does_not_rebuild_static_data() -> None:
    env = TextSudokuEnv(size=9)
    geometry = env._geometry
    env.reset(seed=1)
    env.reset(seed=2)
    assert env._geometry is geometry and TextSudokuEnv(size=9)._geometry is geometry


def test_seeded_puzzles_vary_and_repeat() -> None:
    env = TextSudokuEnv()
    boards = [env.reset(seed=seed)[1]["board"] for seed in range(30)]
    assert len(set(boards)) > 25
    assert env.reset(seed=3)[1]["board"] == boards[3]


@pytest.mark.parametrize("size", [4, 9])
def test_a_step_checks_the_stored_solution_and_runs_no_solver(
    size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move is judged against the solution found at reset: no step generates, searches or
    solves, nor rebuilds the geometry (the time of a step, against the 1 ms this test once
    allowed, is in ``benchmarks/reply_parsing.py``)."""
    env = TextSudokuEnv(size=size, extra_turns=1000)
    env.reset(seed=0)
    called: list[str] = []

    def counting(name: str, function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            called.append(name)
            return function(*args, **kwargs)

        return call

    for module in (sudoku, _sudoku_solver):
        for name in ("generate_puzzle", "search", "count_solutions", "solve", "geometry"):
            monkeypatch.setattr(module, name, counting(name, getattr(module, name)))
    blank, clue = env.grid.index(0), env.clues.index(True)
    right = env._solution[blank]
    row, col = divmod(blank, size)
    moves = {
        "mistake": f"[{row + 1} {col + 1} {right % size + 1}]",
        "correct": f"[{row + 1} {col + 1} {right}]",
        "filled": f"[{row + 1} {col + 1} {right}]",
        "clue": f"[{clue // size + 1} {clue % size + 1} 1]",
        "off the board": "[10 10 1]",
        "nonsense": "nonsense",
    }
    infos = {kind: env.step(action)[4] for kind, action in moves.items()}
    assert called == []
    assert infos["mistake"]["mistake"] and env.grid[blank] == right
    assert infos["correct"]["blanks_left"] == env.blanks - 1
    assert all(infos[k]["invalid_action"] for k in ("filled", "clue", "off the board", "nonsense"))


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.lists(
        st.text(max_size=30)
        | st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 5)).map(
            lambda m: f"[{m[0]} {m[1]} {m[2]}]"
        ),
        max_size=15,
    )
)
def test_any_text_action_never_raises_or_corrupts_state(actions: list[str]) -> None:
    env = TextSudokuEnv()
    env.reset(seed=0, options={"puzzle": SMALL})
    for turn, action in enumerate(actions, start=1):
        before = list(env.grid)
        observation, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(observation) and env.turn == turn
        assert all(g in (0, int(s)) for g, s in zip(env.grid, SMALL_SOLUTION, strict=True))
        changed = sum(a != b for a, b in zip(before, env.grid, strict=True))
        assert changed == (0 if info["invalid_action"] or info["mistake"] else 1)
        assert not (info["invalid_action"] and info["mistake"])
        if terminated or truncated:
            break
