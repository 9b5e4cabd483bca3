from __future__ import annotations

import gymnasium as gym
import pytest
from trl_env.envs.guess_number import TextGuessNumberEnv, oracle_action, parse_number


@pytest.mark.parametrize(
    ("action", "number"),
    [
        ("[42]", 42),
        ("42", 42),
        ("  42.\n", 42),
        ("**7**", 7),
        ("I think [10]... no, [ 64 ]", 64),
        ("[-3]", -3),
        ("[+5]", 5),
        ("[007]", 7),
    ],
)
def test_parse_number_accepts(action: str, number: int) -> None:
    assert parse_number(action) == (number, None)


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ("my guess is 50", "square brackets"),
        ("[4.5]", "not a whole number"),
        ("[fifty]", "not a whole number"),
        ("[٤٢]", "not a whole number"),  # Arabic-Indic digits are not accepted
        ("[1e3]", "not a whole number"),
        pytest.param("9" * 1_000_000, "far too large", id="megabyte-number"),
        pytest.param("[" + "1" * 5000 + "]", "far too large", id="5000-digits"),
    ],
)
def test_parse_number_rejects_with_reason(action: str, problem: str) -> None:
    number, reason = parse_number(action)
    assert number is None and reason is not None and problem in reason


def test_first_observation_is_short_and_states_the_rules() -> None:
    env = gym.make("TextGuessNumber-v0")
    observation, info = env.reset(seed=0)
    assert observation == (
        "Guess my secret number, a whole number from 1 to 100, in 7 tries. "
        "After each guess I say if my number is higher or lower.\n"
        "Reply with your guess in square brackets, like [50]."
    )
    assert info == {"guesses": [], "hints": []}


def test_hints_and_win() -> None:
    env = gym.make("TextGuessNumber-v0")
    env.reset(seed=0, options={"secret": 42})
    observation, reward, terminated, truncated, info = env.step("[50]")
    assert observation == "50 is too high: the number is lower. 6 guesses left."
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert (
        info["hint"] == "lower"
        and info["guess"] == "50"
        and info["number"] == 50
        and not info["invalid_action"]
    )
    observation, *_, info = env.step("25")
    assert observation == "25 is too low: the number is higher. 5 guesses left."
    assert info["hints"] == ["lower", "higher"] and info["guesses"] == [50, 25]
    observation, reward, terminated, truncated, info = env.step("It must be [42]!")
    assert observation == "42 is correct! You found it in 3 guesses."
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["won"] and info["secret"] == 42 and info["hint"] == "correct"


def test_loss_reveals_secret_and_truncates() -> None:
    env = gym.make("TextGuessNumber-v0")
    env.reset(seed=0, options={"secret": 100})
    for _ in range(6):
        *_, truncated, info = env.step("[1]")  # repeating a guess is valid, just wasteful
        assert not truncated and not info["invalid_action"] and "secret" not in info
    observation, reward, terminated, truncated, info = env.step("[1]")
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert observation.endswith("No guesses left. The number was 100.")
    assert info["secret"] == 100


@pytest.mark.parametrize(
    ("env_id", "low", "high"), [("TextGuessNumber-v0", 1, 100), ("TextGuessNumberHard-v0", 1, 1000)]
)
def test_oracle_wins_every_secret_with_reward_one(env_id: str, low: int, high: int) -> None:
    env = gym.make(env_id)
    worst = 0
    for secret in range(low, high + 1):
        env.reset(seed=0, options={"secret": secret})
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, info = env.step(oracle_action(env))
            total += reward
            done = terminated or truncated
        assert terminated and info["won"] and total == 1.0, secret
        worst = max(worst, len(info["guesses"]))
    assert worst == env.unwrapped.max_guesses  # binary search needs (and gets) every guess


def test_oracle_uses_hints_not_the_secret() -> None:
    env = TextGuessNumberEnv()
    env.reset(seed=0, options={"secret": 1})
    assert oracle_action(env) == "[50]"
    env.step("[50]")
    assert oracle_action(env) == "[25]"
    env.step("[30]")  # a sub-optimal guess narrows the interval to 1..29
    assert oracle_action(env) == "[15]"
    with pytest.raises(TypeError, match="TextGuessNumber"):
        oracle_action(gym.make("TextWordle-v0"))


def test_hard_variant_and_difficulty_kwargs() -> None:
    hard = gym.make("TextGuessNumberHard-v0")
    observation, _ = hard.reset(seed=0)
    assert "from 1 to 1000, in 10 tries" in observation and "[500]" in observation
    assert hard.spec.max_episode_steps == 10
    assert 1 <= hard.unwrapped.secret <= 1000
    custom = gym.make("TextGuessNumber-v0", low=-5, high=5, max_guesses=2, max_episode_steps=2)
    observation, _ = custom.reset(seed=0)
    assert "from -5 to 5, in 2 tries" in observation and "[0]" in observation
    custom.reset(seed=0, options={"secret": -5})
    assert custom.step("[-6]")[4]["invalid_action"]
    *_, truncated, info = custom.step("[-4]")
    assert truncated and info["secret"] == -5


def test_secrets_are_seeded_and_cover_the_range() -> None:
    env = TextGuessNumberEnv()
    secrets = []
    for seed in range(300):
        env.reset(seed=seed)
        secrets.append(env.secret)
    assert min(secrets) >= 1 and max(secrets) <= 100 and len(set(secrets)) > 80
    env.reset(seed=5)
    first = env.secret
    env.reset(seed=5)
    assert env.secret == first


def test_shaped_reward_for_getting_closer() -> None:
    env = gym.make("TextGuessNumber-v0", partial_credit=0.5)
    env.reset(seed=0, options={"secret": 100})
    rewards = [env.step(g)[1] for g in ("[1]", "[1]", "[51]", "[40]", "[100]")]
    assert rewards[0] == 0.0  # closeness 0: as far as possible
    assert rewards[1] == 0.0  # no improvement
    assert rewards[2] == pytest.approx(0.5 * 50 / 99)  # closeness 50/99
    assert rewards[3] == 0.0  # further away than the best so far
    assert rewards[4] == 1.0
    assert sum(rewards[:4]) <= 0.5


def test_shaped_reward_is_off_by_default() -> None:
    env = gym.make("TextGuessNumber-v0")
    env.reset(seed=0, options={"secret": 100})
    assert env.step("[99]")[1] == 0.0


def test_render_ansi() -> None:
    env = gym.make("TextGuessNumber-v0", render_mode="ansi")
    env.reset(seed=0, options={"secret": 30})
    env.step("[50]")
    assert env.render() == "range 1-100, guess 1 of 7\n50: lower\n"
    env.step("[30]")
    assert env.render().endswith("30: correct\nsecret: 30\n")
    assert TextGuessNumberEnv().render() is None


def test_range_validation() -> None:
    with pytest.raises(ValueError, match="low < high"):
        TextGuessNumberEnv(low=5, high=5)
    with pytest.raises(ValueError, match="integers"):
        TextGuessNumberEnv(low=1.5)
