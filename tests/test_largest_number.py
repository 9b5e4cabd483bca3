from __future__ import annotations

from collections import Counter

import gymnasium as gym
import pytest
from hypothesis import given
from hypothesis import strategies as st
from trl_env.envs.largest_number import TextLargestNumberEnv, oracle_action, parse_reply

import trl_env


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ("[7]", (7, None)),
        (" [ 7 ] \n", (7, None)),
        ("7", (7, None)),
        ("7.", (7, None)),
        ("[-3]", (-3, None)),
        ("[007]", (7, None)),
        ("", (None, "your reply was empty")),
        ("  ", (None, "your reply was empty")),
        ("[]", (None, "the brackets were empty")),
        ("It is [7]", (None, "it held more than the number")),
        ("[7]]]]", (None, "it held more than the number")),
        ("[3] [7]", (None, "it held more than the number")),
        ("3 7", (None, "it held more than the number")),
        ("[seven]", (None, "'seven' is not a whole number")),
        ("[4.5]", (None, "'4.5' is not a whole number")),
        ("[" + "9" * 30 + "]", (None, f"'{'9' * 24}...' is far too large")),
    ],
)
def test_parse_reply(action: str, expected: tuple[int | None, str | None]) -> None:
    assert parse_reply(action) == expected


def test_parse_reply_non_string() -> None:
    assert parse_reply(7) == (None, "your reply must be text, not int")  # type: ignore[arg-type]


def test_registered_and_first_observation() -> None:
    assert "TextLargestNumber-v0" in {spec.id for spec in trl_env.envs.env_specs("catalogue")}
    env = gym.make("TextLargestNumber-v0")
    observation, info = env.reset(seed=0, options={"numbers": [[3, 8, 1, 5]]})
    assert observation == (
        "Which number is the largest? Reply with only that number, in square brackets.\n"
        "Numbers: [3] [8] [1] [5]"
    )
    assert info == {"numbers": [3, 8, 1, 5], "legal_moves": ["3", "8", "1", "5"]}


@pytest.mark.parametrize("reply", ["[8]", "8", " [8]\n", "8!"])
def test_right_answer_wins(reply: str) -> None:
    env = gym.make("TextLargestNumber-v0")
    env.reset(seed=0, options={"numbers": [[3, 8, 1, 5]]})
    observation, reward, terminated, _, info = env.step(reply)
    assert (reward, terminated) == (1.0, True)
    assert info["correct"] and info["won"] and info["answer"] == 8 and info["score"] == 1
    assert observation == "Correct. Score: 1 of 1."


def test_wrong_answers() -> None:
    env = TextLargestNumberEnv()
    env.reset(seed=0, options={"numbers": [[3, 8, 1, 5]]})
    observation, reward, terminated, truncated, info = env.step("[5]")
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert not info["correct"] and not info["won"] and not info["invalid_action"]
    assert observation == "Wrong: you replied [5], the largest was [8]. Score: 0 of 1."
    env.reset(seed=0, options={"numbers": [[3, 8, 1, 5]]})
    observation, reward, *_ = env.step("[9]")
    assert reward == 0.0
    assert "(not one of the numbers)" in observation


def test_partial_credit_is_the_rank() -> None:
    env = TextLargestNumberEnv(partial_credit=0.6)
    rewards = {}
    for reply in (1, 3, 5, 8, 9):
        env.reset(seed=0, options={"numbers": [[3, 8, 1, 5]]})
        rewards[reply] = env.step(f"[{reply}]")[1]
    assert rewards == pytest.approx({1: 0.0, 3: 0.2, 5: 0.4, 8: 1.0, 9: 0.0})


def test_invalid_action_asks_again() -> None:
    env = TextLargestNumberEnv(invalid_action_penalty=0.25)
    env.reset(seed=0, options={"numbers": [[3, 8, 1, 5]]})
    observation, reward, terminated, truncated, info = env.step("The largest is [8], not [5].")
    assert (reward, terminated, truncated) == (-0.25, False, False)
    assert info["invalid_action"] and "reply" not in info and info["answer"] == 8
    assert info["error"] == "it held more than the number"
    assert observation == (
        "Invalid reply: it held more than the number. You replied 'The largest is [8], not [5].'. "
        "That used up a turn. Reply with only the largest number, in square brackets, like [5]."
    )
    observation, reward, terminated, truncated, info = env.step("[8]")
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["won"]


def test_truncated_after_max_turns() -> None:
    env = gym.make("TextLargestNumber-v0")  # max_turns=3, and TimeLimit agrees
    env.reset(seed=0, options={"numbers": [[3, 8, 1, 5]]})
    for _ in range(2):
        assert env.step("no idea")[2:4] == (False, False)
    observation, reward, terminated, truncated, info = env.step("")
    assert (reward, terminated, truncated) == (-0.1, False, True)
    assert not info["won"] and info["score"] == 0
    assert observation.endswith("No turns left. The largest was [8]. Score: 0 of 1.")
    assert env.unwrapped.max_turns == env.spec.max_episode_steps == 3


def test_several_rounds() -> None:
    env = gym.make("TextLargestNumber-v0", num_rounds=2, max_turns=4, max_episode_steps=4)
    observation, _ = env.reset(seed=0, options={"numbers": [[3, 8, 1, 5], [0, 2, 9, 4]]})
    assert "2 rounds to play." in observation
    observation, reward, terminated, truncated, info = env.step("[8]")
    assert (reward, terminated, truncated) == (0.5, False, False)
    assert observation == "Correct.\nNumbers: [0] [2] [9] [4]"  # only the new message
    assert "won" not in info
    observation, reward, terminated, truncated, info = env.step("[4]")
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["score"] == 1 and not info["won"]
    assert observation == "Wrong: you replied [4], the largest was [9]. Score: 1 of 2."


def test_numbers_are_distinct_in_range_and_the_largest_is_uniform() -> None:
    env = TextLargestNumberEnv(num_options=4, low=0, high=9)
    largest = Counter()
    for seed in range(1400):
        env.reset(seed=seed)
        numbers = env.rounds[0]
        assert len(set(numbers)) == 4 and all(0 <= n <= 9 for n in numbers)
        largest[max(numbers)] += 1
    assert sorted(largest) == [3, 4, 5, 6, 7, 8, 9]  # 3 is the smallest possible largest
    assert all(150 <= count <= 250 for count in largest.values())  # 200 each on average
    positions = Counter()
    for seed in range(400):
        env.reset(seed=seed)
        positions[env.rounds[0].index(max(env.rounds[0]))] += 1
    assert all(count >= 60 for count in positions.values()) and len(positions) == 4


def test_seeded_and_unseeded_resets() -> None:
    a, b = TextLargestNumberEnv(), TextLargestNumberEnv()
    assert a.reset(seed=3) == b.reset(seed=3)
    assert a.reset() == b.reset()
    assert a.reset(seed=3)[0] != a.reset(seed=4)[0]


def test_step_before_reset_and_after_the_end() -> None:
    env = TextLargestNumberEnv()
    with pytest.raises(gym.error.ResetNeeded, match="call reset"):
        env.step("[1]")
    env.reset(seed=0)
    env.step("[1]")
    with pytest.raises(gym.error.ResetNeeded, match="episode ended"):
        env.step("[1]")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_options": 1}, "num_options"),
        ({"num_options": 11}, "fewer than num_options"),
        ({"low": 5, "high": 3}, "fewer than num_options"),
        ({"low": 0.5}, "integers"),
        ({"num_rounds": 0}, "num_rounds"),
        ({"num_rounds": 3, "max_turns": 2}, "max_turns"),
        ({"partial_credit": 2.0}, "partial_credit"),
        ({"invalid_action_penalty": -1.0}, "invalid_action_penalty"),
        ({"render_mode": "human"}, "render_mode"),
    ],
)
def test_bad_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TextLargestNumberEnv(**kwargs)


@pytest.mark.parametrize(
    "numbers",
    [
        [[3, 8, 1]],
        [[3, 8, 1, 1]],
        [[3, 8, 1, 50]],
        [[3, 8, 1, 5], [1, 2, 3, 4]],
        "3815",
        [[3, 8, 1, True]],
    ],
)
def test_bad_fixed_numbers(numbers: object) -> None:
    env = TextLargestNumberEnv()
    with pytest.raises(ValueError, match="options\\['numbers'\\]"):
        env.reset(options={"numbers": numbers})


def test_render() -> None:
    env = TextLargestNumberEnv(render_mode="ansi", num_rounds=2)
    env.reset(seed=0, options={"numbers": [[3, 8, 1, 5], [0, 2, 9, 4]]})
    env.step("[8]")
    assert env.render() == "round 2 of 2, turn 1 of 4, score 1\n3 8 1 5 -> 8 ok\n"
    env.step("no idea")
    env.step("4")
    assert env.render() == (
        "round 2 of 2, turn 3 of 4, score 1\n3 8 1 5 -> 8 ok\n0 2 9 4 -> 4 wrong\n"
    )
    assert TextLargestNumberEnv().render() is None


@given(st.text(max_size=40))
def test_step_never_raises(action: str) -> None:
    env = TextLargestNumberEnv(max_turns=1)
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(action)
    assert terminated != truncated and isinstance(observation, str)
    assert reward in (-0.1, 0.0, 1.0)
    assert info["invalid_action"] == ("reply" not in info) == truncated


def test_oracle_and_legal_moves() -> None:
    env = gym.make("TextLargestNumber-v0", num_rounds=2, max_turns=4, max_episode_steps=4)
    _, info = env.reset(seed=0, options={"numbers": [[3, 8, 1, 5], [0, 2, 9, 4]]})
    assert oracle_action(env) == "[8]"
    _, _, _, _, info = env.step("what?")  # invalid: the same round is asked again
    assert info["legal_moves"] == ["3", "8", "1", "5"] and oracle_action(env) == "[8]"
    _, _, _, _, info = env.step(oracle_action(env))
    assert info["legal_moves"] == ["0", "2", "9", "4"]
    _, reward, terminated, _, info = env.step(oracle_action(env))
    assert (reward, terminated, info["won"]) == (0.5, True, True) and "legal_moves" not in info
    with pytest.raises(gym.error.ResetNeeded):
        oracle_action(env)
    with pytest.raises(TypeError, match="TextLargestNumber"):
        oracle_action(gym.make("TextWordle-v0"))
