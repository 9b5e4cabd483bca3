from __future__ import annotations

import itertools

import gymnasium as gym
import pytest
from hypothesis import given
from hypothesis import strategies as st
from trl_env.envs.mastermind import (
    TextMastermindEnv,
    consistent_codes,
    oracle_action,
    parse_code,
    score_code,
)

# Hand-checked (secret, guess, (black, white)), one per duplicate-colour situation.
SCORING_CASES = [
    ("1234", "1234", (4, 0)),  # exact
    ("1234", "5656", (0, 0)),  # nothing shared
    ("1234", "4321", (0, 4)),  # all colours, all misplaced
    ("1234", "1243", (2, 2)),
    ("1122", "1212", (2, 2)),
    ("1122", "1111", (2, 0)),  # guess has four 1s, secret two: both matched as black
    ("1122", "2211", (0, 4)),
    ("1122", "1233", (1, 1)),  # one 1 black, the 2 white, the 3s nothing
    ("1234", "1111", (1, 0)),  # one 1 in the secret: the other guessed 1s score nothing
    ("1111", "1222", (1, 0)),
    ("1223", "2245", (1, 1)),  # second 2 black, first 2 white (the secret's other 2)
    ("6655", "5566", (0, 4)),
    ("12345", "54321", (1, 4)),  # five pegs: the middle 3 is black
]


@pytest.mark.parametrize(("secret", "guess", "expected"), SCORING_CASES)
def test_score_code(secret: str, guess: str, expected: tuple[int, int]) -> None:
    assert score_code(secret, guess) == expected
    assert score_code(tuple(map(int, secret)), [int(c) for c in guess]) == expected
    # Scoring is symmetric in secret and guess.
    assert score_code(guess, secret) == expected


def test_score_code_length_mismatch() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        score_code("1234", "123")


@given(st.text("123456", min_size=4, max_size=4), st.text("123456", min_size=4, max_size=4))
def test_score_code_invariants(secret: str, guess: str) -> None:
    black, white = score_code(secret, guess)
    assert black >= 0 and white >= 0 and black + white <= 4
    assert (black == 4) == (secret == guess)
    assert black == sum(s == g for s, g in zip(secret, guess, strict=True))
    # Any permutation of the guess keeps black + white (colours in common).
    assert sum(score_code(secret, guess[::-1])) == black + white


@pytest.mark.parametrize(
    ("action", "code"),
    [
        ("[1 2 3 4]", "1234"),
        ("[1234]", "1234"),
        ("1 2 3 4", "1234"),
        ("6543.", "6543"),
        ("[1,2,3,4]", "1234"),
        ("[1-2-3-4]", "1234"),
        ("Try [1 1 2 2]... no, [ 3 3 4 4 ]", "3344"),
        ("**1 1 2 2**", "1122"),
    ],
)
def test_parse_code_accepts(action: str, code: str) -> None:
    assert parse_code(action) == (code, None)


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ("my guess is 1 2 3 4", "square brackets"),
        ("[1 2 3]", "3 pegs, not 4"),
        ("[1 2 3 4 5]", "5 pegs, not 4"),
        ("[1 2 3 7]", "colour 7 does not exist"),
        ("[0 1 2 3]", "colour 0 does not exist"),
        ("[red blue green red]", "only the digits 1 to 6"),
        ("[١٢٣٤]", "only the digits 1 to 6"),  # Arabic-Indic digits
        ("[1.2.3.4]", "only the digits 1 to 6"),
        pytest.param("1" * 1_000_000, "1000000 pegs", id="megabyte-digits"),
        pytest.param("x" * 1_000_000, "square brackets", id="megabyte-letters"),
    ],
)
def test_parse_code_rejects_with_reason(action: str, problem: str) -> None:
    code, reason = parse_code(action)
    assert code is None and reason is not None and problem in reason


def test_parse_code_follows_the_game_size() -> None:
    assert parse_code("[1 8 2 7 3]", code_length=5, num_colors=8) == ("18273", None)
    assert "colour 9 does not exist: use the digits 1 to 8" in parse_code("[9 1 1 1 1]", 5, 8)[1]


def test_first_observation_states_rules_and_format() -> None:
    env = gym.make("TextMastermind-v0")
    observation, info = env.reset(seed=0)
    for needle in (
        "4 pegs",
        "from 1 to 6",
        "may repeat",
        "10 guesses",
        "black =",
        "white =",
        "[1 2 3 4]",
    ):
        assert needle in observation
    assert info == {"guesses": [], "feedbacks": []}


def test_step_observation_is_the_delta_and_win() -> None:
    env = gym.make("TextMastermind-v0")
    env.reset(seed=0, options={"secret": "1234"})
    observation, reward, terminated, truncated, info = env.step("[1 1 2 2]")
    assert observation == "Guess 1 of 10: 1 1 2 2 -> 1 black, 1 white\n9 guesses left."
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["guess"] == "1122" and info["feedback"] == (1, 1) and not info["invalid_action"]
    observation, *_ = env.step("[4321]")
    assert observation == "Guess 2 of 10: 4 3 2 1 -> 0 black, 4 white\n8 guesses left."
    observation, reward, terminated, truncated, info = env.step("So 1 2 3 4 or 4 3 2 1?")
    assert info["invalid_action"]  # two different codes stated: no guess
    observation, reward, terminated, truncated, info = env.step("So it is 1 2 3 4")
    assert (
        observation
        == "Guess 4 of 10: 1 2 3 4 -> 4 black, 0 white\nYou cracked the code in 4 guesses!"
    )
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["won"] and info["secret"] == "1234"
    assert info["guesses"] == ["1122", "4321", "1234"]
    assert info["feedbacks"] == [(1, 1), (0, 4), (4, 0)]


def test_loss_reveals_secret_and_truncates() -> None:
    env = gym.make("TextMastermind-v0", max_guesses=3, max_episode_steps=3)
    env.reset(seed=0, options={"secret": "6655"})
    for _ in range(2):
        *_, truncated, info = env.step("[1111]")
        assert not truncated and "secret" not in info
    observation, reward, terminated, truncated, info = env.step("[1111]")
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert "No guesses left. The code was 6 6 5 5." in observation and info["secret"] == "6655"


def test_oracle_cracks_every_classic_code_with_reward_one() -> None:
    # Exhaustive over all 6**4 = 1296 secrets: never more than 6 guesses (limit 10).
    env = gym.make("TextMastermind-v0")
    lengths = []
    for code in itertools.product("123456", repeat=4):
        env.reset(seed=0, options={"secret": "".join(code)})
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, info = env.step(oracle_action(env))
            total += reward
            done = terminated or truncated
        assert terminated and info["won"] and total == 1.0, code
        lengths.append(len(info["guesses"]))
    assert max(lengths) <= 6 and sum(lengths) / len(lengths) < 4.7


@pytest.mark.parametrize(
    ("kwargs", "seeds"),
    [
        pytest.param({"code_length": 5, "num_colors": 8, "max_guesses": 12}, 25, id="hard"),
        pytest.param({"allow_duplicates": False}, 60, id="no-duplicates"),
        pytest.param({"code_length": 3, "num_colors": 9, "max_guesses": 8}, 60, id="3x9"),
    ],
)
def test_oracle_wins_variants_over_many_seeds(kwargs: dict, seeds: int) -> None:
    # 5 pegs, 8 colours: at most 9 guesses (one secret needs 9) over all 32768 secrets
    # (checked exhaustively once, offline: too slow for the test suite).
    env = gym.make("TextMastermind-v0", max_episode_steps=kwargs.get("max_guesses", 10), **kwargs)
    for seed in range(seeds):
        env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, info = env.step(oracle_action(env))
            total += reward
            done = terminated or truncated
        assert terminated and total == 1.0, seed
        assert len(info["guesses"]) <= 9


def test_hard_variant_is_registered_and_solved() -> None:
    env = gym.make("TextMastermindHard-v0")
    observation, _ = env.reset(seed=4)
    assert "5 pegs" in observation and "from 1 to 8" in observation and "12 guesses" in observation
    assert env.spec.max_episode_steps == 12
    assert len(env.unwrapped.secret) == 5 and set(env.unwrapped.secret) <= set("12345678")
    done = False
    while not done:
        *_, terminated, truncated, info = env.step(oracle_action(env))
        done = terminated or truncated
    assert info["won"]


def test_oracle_uses_feedback_not_the_secret() -> None:
    env = TextMastermindEnv()
    env.reset(seed=0, options={"secret": "3456"})
    assert oracle_action(env) == "[1 1 2 2]"
    env.step("[1 1 2 2]")  # 0 black 0 white: no 1s or 2s
    candidates = consistent_codes(env)
    assert len(candidates) == 4**4 and all(set(c) <= set("3456") for c in candidates)
    move = oracle_action(env)
    assert parse_code(move)[0] in candidates
    other = TextMastermindEnv()
    other.reset(seed=0, options={"secret": "6543"})  # same feedback so far: same move
    other.step("[1 1 2 2]")
    assert oracle_action(other) == move
    with pytest.raises(TypeError, match="TextMastermind"):
        oracle_action(gym.make("TextWordle-v0"))


def test_consistent_codes_contain_the_secret() -> None:
    env = TextMastermindEnv()
    env.reset(seed=2)
    for guess in ("[1 2 3 4]", "[5 5 6 6]", "[2 4 6 1]"):
        env.step(guess)
        assert env.secret in consistent_codes(env)
        for code in consistent_codes(env):
            assert all(
                score_code(code, g) == f for g, f in zip(env.guesses, env.feedbacks, strict=True)
            )


def test_no_duplicates_option() -> None:
    env = TextMastermindEnv(allow_duplicates=False)
    for seed in range(50):
        observation, _ = env.reset(seed=seed)
        assert len(set(env.secret)) == 4
    assert "are all different" in observation
    env.step("[1 1 1 1]")  # guesses may still repeat colours
    assert env.guesses == ["1111"]
    with pytest.raises(ValueError, match="all different"):
        env.reset(options={"secret": "1123"})
    with pytest.raises(ValueError, match="code_length <= num_colors"):
        TextMastermindEnv(allow_duplicates=False, code_length=5, num_colors=4)


def test_secrets_are_seeded_and_varied() -> None:
    env = TextMastermindEnv()
    secrets = set()
    for seed in range(100):
        env.reset(seed=seed)
        secrets.add(env.secret)
        assert len(env.secret) == 4 and set(env.secret) <= set("123456")
    assert len(secrets) > 90
    env.reset(seed=11)
    first = env.secret
    env.reset(seed=11)
    assert env.secret == first


def test_partial_credit_is_bounded() -> None:
    env = gym.make("TextMastermind-v0", partial_credit=0.5)
    env.reset(seed=0, options={"secret": "1234"})
    rewards = [
        env.step(g)[1] for g in ("[5 5 6 6]", "[4 3 2 1]", "[1 1 1 1]", "[1 2 4 3]", "[1234]")
    ]
    assert rewards[0] == 0.0  # nothing in common
    assert rewards[1] == pytest.approx(0.5 * 0.5)  # 4 white -> score 0.5
    assert rewards[2] == 0.0  # 1 black -> score 0.25, no improvement
    assert rewards[3] == pytest.approx(0.5 * 0.25)  # 2 black 2 white -> score 0.75
    assert rewards[4] == 1.0
    assert sum(rewards[:4]) <= 0.5


def test_fixed_secret_may_be_written_like_a_reply() -> None:
    env = TextMastermindEnv()
    env.reset(options={"secret": "[6 5 4 3]"})
    assert env.secret == "6543"


def test_render_ansi() -> None:
    env = gym.make("TextMastermind-v0", render_mode="ansi")
    env.reset(seed=0, options={"secret": "1234"})
    env.step("[1 1 2 2]")
    board = env.render()
    assert board.splitlines()[0] == "1 1 2 2   black 1 white 1"
    assert board.count("_ _ _ _") == 9
    env.step("[1 2 3 4]")
    assert "secret: 1 2 3 4" in env.render()
    assert TextMastermindEnv().render() is None


def test_code_size_validation() -> None:
    with pytest.raises(ValueError, match="code_length"):
        TextMastermindEnv(code_length=0)
    with pytest.raises(ValueError, match="num_colors"):
        TextMastermindEnv(num_colors=10)


def test_small_colour_sets_give_valid_examples() -> None:
    env = TextMastermindEnv(num_colors=2, code_length=3)
    observation, _ = env.reset(seed=0)
    assert "[1 2 1]" in observation
    assert parse_code("[1 2 1]", 3, 2) == ("121", None)
