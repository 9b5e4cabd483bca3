from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trl_env.envs.countdown import (
    LARGE_NUMBERS,
    MAX_EXPRESSION_LENGTH,
    SMALL_NUMBERS,
    TextCountdownEnv,
    evaluate_expression,
    generate_puzzle,
    oracle_action,
    parse_reply,
    solve,
)

NUMBERS = [25, 3, 4, 7, 7, 100]


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("(25 + 3) * 4", 112),
        ("25 + 3 * 4", 37),  # precedence
        ("100 - 25 - 7", 68),  # left-associative
        ("100 / 25 * 7", 28),
        ("100 / (25 / 25 * 4)", None),  # 25 used twice: rejected (see below)
        ("7 - 7", 0),  # zero allowed
        ("3 - 7", -4),  # negative intermediate/final results allowed
        ("(3 - 7) * (4 - 25)", 84),
        ("((((25))))", 25),
        ("100 ÷ 4 × 3", 75),
        ("  7*7  ", 49),  # both sevens
    ],
)
def test_evaluate_expression(expression: str, value: int | None) -> None:
    result, problem = evaluate_expression(expression, NUMBERS)
    if value is None:
        assert result is None and problem is not None
    else:
        assert (result, problem) == (Fraction(value), None)


def test_division_must_be_exact_unless_fractions_allowed() -> None:
    assert evaluate_expression("7 / 4", NUMBERS)[1] == (
        "7 / 4 is not a whole number: every division must come out exact"
    )
    # An inexact intermediate is rejected even when the final value would be whole.
    assert "not a whole number" in evaluate_expression("25 / 4 * (7 - 3)", NUMBERS)[1]
    assert evaluate_expression("25 / 4 * (7 - 3)", NUMBERS, allow_fractions=True) == (
        Fraction(25),
        None,
    )
    assert evaluate_expression("3 / 4", NUMBERS, allow_fractions=True) == (Fraction(3, 4), None)
    assert evaluate_expression("25 / (7 - 7)", NUMBERS)[1] == "division by zero (25 / 0)"


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("25 + 25", "you used 25 twice but have it only once"),
        ("7 + 7 + 7", "you used 7 three times but have it only 2 times"),
        ("25 + 8", "8 is not one of your numbers"),
        ("250", "250 is not one of your numbers"),
        ("0", "0 is not one of your numbers"),
        ("1234567", "'1234567' is not one of your numbers"),
    ],
)
def test_number_usage_is_checked(expression: str, problem: str) -> None:
    assert evaluate_expression(expression, NUMBERS) == (None, problem)


@pytest.mark.parametrize(
    ("expression", "problem"),
    [
        ("__import__('os')", "'__import__' is not allowed"),
        ("__import__('os').system('ls')", "'__import__' is not allowed"),
        ("2**100000", "powers (**) are not allowed"),
        ("25 ** 3", "powers (**) are not allowed"),
        ("25 ^ 3", "powers (^) are not allowed"),
        ("x", "'x' is not allowed"),
        ("abs(25)", "'abs' is not allowed"),
        ("(25).real", "'.' is not allowed"),
        ("().__class__", "'.' is not allowed"),
        ("25 % 3", "'%' is not allowed"),
        ("25 // 3", "unexpected '/'"),
        ("2.5 * 4", "'.' is not allowed"),
        ("1e3", "'e3' is not allowed"),
        ("25; 3", "';' is not allowed"),
        ("lambda: 3", "'lambda' is not allowed"),
        ("[3]", "'[' is not allowed"),
        ("'25'", '"\'" is not allowed'),
        ("２５ + 3", "'２' is not allowed"),  # full-width digits
        ("-3 + 25", "no signs in front of a number"),
        ("25 * -3", "no signs in front of a number"),
        ("+25", "no signs in front of a number"),
        ("25 3", "expected an operator before '3'"),
        ("3(25)", "expected an operator before '('"),
        ("25 +", "ends too early"),
        ("(25 + 3", "'(' is never closed"),
        ("25 + 3)", "')' has no matching '('"),
        ("()", "unexpected ')'"),
        ("", "the expression was empty"),
        ("   ", "the expression was empty"),
        ("(" * 25 + "3" + ")" * 25, "nested too deep"),
        ("3" + " + 3" * 60, "too long"),
    ],
)
def test_parser_rejects_everything_else(expression: str, problem: str) -> None:
    value, reason = evaluate_expression(expression, NUMBERS)
    assert value is None and reason is not None and problem in reason, reason
    assert len(reason) < 200


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param("(" * 100_000 + "3" + ")" * 100_000, id="deep-parens"),
        pytest.param("3*" * 500_000 + "3", id="megabyte-product"),
        pytest.param("9" * 1_000_000, id="megabyte-number"),
        pytest.param("2**" * 300_000 + "2", id="power-tower"),
    ],
)
def test_huge_expressions_are_rejected_before_any_parsing(
    expression: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By their length alone: the tokenizer never runs and no regex of the env scans them (the
    time of a rejection, against the 0.5 s this test once allowed, is in
    ``benchmarks/reply_parsing.py``)."""
    import trl_env.envs._countdown_math as countdown_math
    import trl_env.envs.countdown as countdown

    scanned: list[int] = []  # the length of every text a regex of the env module read

    class Spy:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def __getattr__(self, name: str) -> Any:
            def call(*args: Any, **kwargs: Any) -> Any:
                scanned.append(max((len(a) for a in args if isinstance(a, str)), default=0))
                return getattr(self.pattern, name)(*args, **kwargs)

            return call

    def tokenize(text: str) -> list[tuple[str, str]]:
        raise AssertionError(f"tokenized {len(text)} characters")

    monkeypatch.setattr(countdown_math, "_tokenize", tokenize)
    patterns = {k: v for k, v in vars(countdown).items() if isinstance(v, re.Pattern)}
    assert patterns
    for name, pattern in patterns.items():
        monkeypatch.setattr(countdown, name, Spy(pattern))
    value, reason = evaluate_expression(expression, NUMBERS)
    assert value is None and "too long" in reason
    env = gym.make("TextCountdown-v0")
    env.reset(seed=0)
    observation, reward, *_, info = env.step(f"[{expression}]")
    assert info["invalid_action"] and "too long" in observation and len(observation) < 400
    assert all(n <= 4 * MAX_EXPRESSION_LENGTH for n in scanned), scanned


@pytest.mark.parametrize(
    ("action", "expression"),
    [
        ("[(25 + 3) * 4]", "(25 + 3) * 4"),
        ("[ (25 + 3) * 4 ]", "(25 + 3) * 4"),
        ("I think [25 + 3] then [(25 + 3) * 4 = 112]", "(25 + 3) * 4"),
        ("(25+3)*4", "(25+3)*4"),
        ("(25+3)*4 = 112.", "(25+3)*4"),
        ("[100 ÷ 4]", "100 ÷ 4"),
    ],
)
def test_parse_reply_accepts(action: str, expression: str) -> None:
    assert parse_reply(action) == (expression, None)


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ("", "empty"),
        ("  \n", "empty"),
        ("[]", "brackets were empty"),
        ("[= 112]", "expression was empty"),
        ("(25 + 3) times 4", "square brackets"),
        ("the answer is 112", "square brackets"),
        pytest.param("1" * 1_000_000, "square brackets", id="megabyte-bare"),
        pytest.param("[1" + " " * 1_000_000 + "= 1]", "too long", id="megabyte-spaces"),
    ],
)
def test_parse_reply_rejects(action: str, problem: str) -> None:
    expression, reason = parse_reply(action)
    assert expression is None and reason is not None and problem in reason


def test_generated_puzzles_are_solvable_and_in_range() -> None:
    rng = np.random.default_rng(0)
    pool = SMALL_NUMBERS + LARGE_NUMBERS
    for num_numbers, (low, high) in ((6, (101, 999)), (4, (10, 99))):
        for _ in range(200):
            numbers, target, solution = generate_puzzle(rng, num_numbers, (low, high))
            assert len(numbers) == num_numbers and low <= target <= high
            assert target not in numbers
            assert all(numbers.count(n) <= pool.count(n) for n in numbers)
            assert sum(n in LARGE_NUMBERS for n in numbers) <= 4
            assert evaluate_expression(solution, numbers) == (Fraction(target), None)


def test_num_large_and_unreachable_targets() -> None:
    rng = np.random.default_rng(1)
    for large in range(5):
        numbers, *_ = generate_puzzle(rng, 6, (101, 999), num_large=large)
        assert sum(n in LARGE_NUMBERS for n in numbers) == large
    with pytest.raises(ValueError, match="widen target_range"):
        generate_puzzle(rng, 2, (10**6, 10**6))


def test_solver() -> None:
    assert evaluate_expression(solve([25, 3, 4], 112), [25, 3, 4]) == (Fraction(112), None)
    found = solve([25, 50, 75, 100, 3, 6], 952)
    assert evaluate_expression(found, [25, 50, 75, 100, 3, 6]) == (Fraction(952), None)
    assert solve([1, 2], 7) is None
    assert solve([5], 5) == "5"
    # Exhaustive: nothing reaches it (no wall-clock assertion: the machine may be busy).
    assert solve([100, 75, 50, 25, 10, 9], 10**9) is None


def test_first_observation_states_rules_and_format() -> None:
    env = gym.make("TextCountdown-v0")
    observation, info = env.reset(seed=0)
    numbers = " ".join(map(str, info["numbers"]))
    for needle in (
        f"Numbers: {numbers}\nTarget: {info['target']}",
        "+ - * /",
        "each number at most once",
        "every division must come out exact",
        "[(25 + 3) * 4]",
        "3 attempts",
    ):
        assert needle in observation
    assert len(info["numbers"]) == 6 and 101 <= info["target"] <= 999
    assert info["invalid_action"] is False and info["attempts"] == 0
    fractions_env = gym.make("TextCountdown-v0", allow_fractions=True)
    assert "fractions are allowed" in fractions_env.reset(seed=0)[0]


def test_easy_variant() -> None:
    env = gym.make("TextCountdownEasy-v0")
    for seed in range(20):
        _, info = env.reset(seed=seed)
        assert len(info["numbers"]) == 4 and 10 <= info["target"] <= 99


def test_attempts_feedback_and_win() -> None:
    env = gym.make("TextCountdown-v0")
    env.reset(seed=0, options={"numbers": [25, 3, 4, 7], "target": 112})
    observation, reward, terminated, truncated, info = env.step("[(25 + 7) * 4]")
    assert observation == "(25 + 7) * 4 = 128, which is 16 away from 112. 2 attempts left."
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["value"] == 128 and info["distance"] == 16.0 and info["attempts"] == 1
    observation, reward, terminated, truncated, info = env.step("so [(25 +  3)*4]")
    assert observation == "(25 + 3)*4 = 112. Exactly 112: you win!"
    assert (reward, terminated, truncated) == (1.0, True, False) and info["won"]
    assert "solution" in info


def test_loss_reveals_a_solution() -> None:
    env = gym.make("TextCountdown-v0")
    _, info = env.reset(seed=5)
    for _ in range(2):
        assert not env.step("[1 + ]")[3]
    observation, reward, terminated, truncated, info = env.step("nothing")
    assert truncated and not terminated and "No attempts left. One solution: " in observation
    solution = info["solution"]
    assert evaluate_expression(solution, info["numbers"]) == (Fraction(info["target"]), None)
    with pytest.raises(gym.error.ResetNeeded, match="after the episode ended"):
        env.step("[1]")


def test_fractional_results_are_reported() -> None:
    env = gym.make("TextCountdown-v0", allow_fractions=True)
    env.reset(seed=0, options={"numbers": [25, 3, 4, 7], "target": 112})
    observation, *_, info = env.step("[25 / 3 * 4]")
    assert observation.startswith("25 / 3 * 4 = 100/3 (about 33.3), which is 236/3 away")
    assert info["value"] == pytest.approx(100 / 3)


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("", "empty"),
        ("hello world", "square brackets"),
        ("[__import__('os')]", "'__import__' is not allowed"),
        ("[2**100000]", "powers (**) are not allowed"),
        ("[25 + 25]", "you used 25 twice"),
        ("[7 / 2]", "not a whole number"),
        ("[8 * 3]", "8 is not one of your numbers"),
        ("ñ 中文 🎉", "square brackets"),
        ("[🎉]", "'🎉' is not allowed"),
        pytest.param("x" * 1_000_000, "square brackets", id="megabyte"),
        pytest.param("[" * 100_000, "square brackets", id="brackets"),
    ],
)
def test_invalid_actions_get_feedback_and_penalty(action: str, reason: str) -> None:
    env = gym.make("TextCountdown-v0", invalid_action_penalty=0.25)
    env.reset(seed=0, options={"numbers": [25, 3, 4, 7, 2], "target": 112})
    observation, reward, terminated, truncated, info = env.step(action)
    assert observation.startswith("Invalid expression:") and reason in observation
    assert reason in info["error"] and "[(25 + 3) * 4]" in observation
    assert "2 attempts left" in observation
    assert reward == -0.25 and info["invalid_action"] and "value" not in info
    assert not terminated and not truncated and len(observation) < 400


def test_partial_credit_by_distance() -> None:
    env = gym.make("TextCountdown-v0", partial_credit=0.5, max_attempts=5)
    env.reset(seed=0, options={"numbers": [25, 3, 4, 7, 100], "target": 112})
    rewards = [
        env.step(e)[1]
        for e in ("[25 * 3]", "[100 + 4]", "[100 + 7]", "[100 + 7 + 4]", "[(25 + 3) * 4]")
    ]
    assert rewards[0] == 0.0  # 37 away: no points
    assert rewards[1] == pytest.approx(0.5 * 0.5)  # 8 away: 5 of 10 points
    assert rewards[2] == pytest.approx(0.5 * 0.2)  # 5 away: 7 points, +2 over the best
    assert rewards[3] == 0.0  # 1 away: still 7 points, no improvement
    assert rewards[4] == 1.0


@pytest.mark.parametrize("env_id", ["TextCountdown-v0", "TextCountdownEasy-v0"])
def test_oracle_always_wins_on_the_first_attempt(env_id: str) -> None:
    env = gym.make(env_id)
    for seed in range(60):
        env.reset(seed=seed)
        _, reward, terminated, _, info = env.step(oracle_action(env))
        assert (reward, terminated, info["won"]) == (1.0, True, True)


def test_options_puzzle_is_validated() -> None:
    env = TextCountdownEnv()
    with pytest.raises(ValueError, match="numbers"):
        env.reset(options={"numbers": [1, 2]})
    with pytest.raises(ValueError, match="numbers"):
        env.reset(options={"numbers": ["1"], "target": 3})


def test_render_ansi() -> None:
    env = gym.make("TextCountdown-v0", render_mode="ansi")
    env.reset(seed=0, options={"numbers": [25, 3, 4, 7], "target": 112})
    env.step("[25 + 3]")
    env.step("oops")
    assert env.render() == "numbers: 25 3 4 7   target: 112\n25 + 3 = 28\n(invalid)\n"
    assert TextCountdownEnv().render() is None


def test_constructor_validation() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        TextCountdownEnv(render_mode="human")
    with pytest.raises(ValueError, match="num_numbers"):
        TextCountdownEnv(num_numbers=1)
    with pytest.raises(ValueError, match="target_range"):
        TextCountdownEnv(target_range=(50, 10))
    with pytest.raises(ValueError, match="num_large"):
        TextCountdownEnv(num_large=5)
    with pytest.raises(ValueError, match="max_attempts"):
        TextCountdownEnv(max_attempts=0)
    with pytest.raises(ValueError, match=">= 0"):
        TextCountdownEnv(partial_credit=-1)


def test_seeded_puzzles_vary() -> None:
    env = TextCountdownEnv()
    puzzles = {
        (tuple(info["numbers"]), info["target"])
        for info in (env.reset(seed=s)[1] for s in range(30))
    }
    assert len(puzzles) == 30


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.lists(
        st.text(max_size=40)
        | st.text(alphabet="0123456789+-*/()[] =", max_size=40)
        | st.sampled_from(["[(25 + 3) * 4]", "[25 * 4]", "[3]"]),
        max_size=4,
    )
)
def test_any_text_action_never_raises_or_corrupts_state(actions: list[str]) -> None:
    env = TextCountdownEnv()
    env.reset(seed=0, options={"numbers": [25, 3, 4, 7, 7, 100], "target": 112})
    for turn, action in enumerate(actions, start=1):
        observation, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(observation) and env.turn == turn
        assert env.numbers == (25, 3, 4, 7, 7, 100) and env.target == 112
        assert info["invalid_action"] == ("value" not in info)
        assert reward in (-0.1, 0.0, 1.0)
        if terminated or truncated:
            break
