from __future__ import annotations

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trl_env.envs.hangman import (
    TextHangmanEnv,
    candidate_words,
    hangman_words,
    oracle_action,
    parse_guess,
)


def play_oracle(env: gym.Env[str, str], secret: str) -> tuple[float, dict]:
    env.reset(seed=0, options={"secret": secret})
    total, done = 0.0, False
    while not done:
        _, reward, terminated, truncated, info = env.step(oracle_action(env))
        assert not info["invalid_action"]
        total += reward
        done = terminated or truncated
    return total, info


def test_word_list() -> None:
    words = hangman_words()
    assert len(words) == 2100 and len(set(words)) == len(words)
    assert all(w.isascii() and w.isalpha() and w.islower() for w in words)
    assert list(words) == sorted(words, key=lambda w: (len(w), w))
    for length in range(4, 11):
        assert sum(len(w) == length for w in words) == 300
    for common in ("home", "house", "garden", "problem", "question", "beautiful", "government"):
        assert common in words


@pytest.mark.parametrize(
    ("action", "guess"),
    [
        ("[e]", "e"),
        ("[E]", "e"),
        ("e", "e"),
        (" E.\n", "e"),
        ("I think [a]. Actually [ garden ]", "garden"),
        ("**garden**", "garden"),
    ],
)
def test_parse_guess_accepts(action: str, guess: str) -> None:
    assert parse_guess(action) == (guess, None)


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ("my guess is e", "square brackets"),
        ("[3]", "only the letters"),
        ("[é]", "only the letters"),
        ("[two words]", "only the letters"),
        ("[ß]", "only the letters"),
        pytest.param("🎉" * 100_000, "only the letters", id="emoji-flood"),
    ],
)
def test_parse_guess_rejects_with_reason(action: str, problem: str) -> None:
    guess, reason = parse_guess(action)
    assert guess is None and reason is not None and problem in reason


def test_first_observation_states_rules_and_format() -> None:
    env = gym.make("TextHangman-v0")
    observation, info = env.reset(seed=0, options={"secret": "garden"})
    for needle in ("Hangman", "6 letters", "Word: _ _ _ _ _ _", "6 lives", "costs one life", "[e]"):
        assert needle in observation
    assert info == {"pattern": "______", "guessed": [], "missed": [], "wrong_words": [], "lives": 6}


def test_letters_reveal_every_copy_and_misses_cost_a_life() -> None:
    env = gym.make("TextHangman-v0")
    env.reset(seed=0, options={"secret": "letter"})
    observation, reward, terminated, truncated, info = env.step("[e]")
    assert observation == "Yes, E is in the word (2 times).\nWord: _ E _ _ E _\n6 lives left."
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["pattern"] == "_e__e_" and info["correct"] and not info["invalid_action"]
    observation, reward, *_, info = env.step("z")
    assert observation == "No, Z is not in the word.\nWord: _ E _ _ E _\n5 lives left. Missed: Z."
    assert info["lives"] == 5 and info["missed"] == ["z"] and info["correct"] is False
    observation, *_, info = env.step("[t]")
    assert (
        observation
        == "Yes, T is in the word (2 times).\nWord: _ E T T E _\n5 lives left. Missed: Z."
    )
    assert info["guessed"] == ["e", "z", "t"]


def test_win_by_letters() -> None:
    env = gym.make("TextHangman-v0")
    env.reset(seed=0, options={"secret": "abba"})
    env.step("[a]")
    observation, reward, terminated, truncated, info = env.step("[b]")
    assert observation == "Yes, B is in the word (2 times).\nYou won! The word was ABBA."
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["won"] and info["secret"] == "abba" and info["pattern"] == "abba"


def test_whole_word_guesses() -> None:
    env = gym.make("TextHangman-v0")
    env.reset(seed=0, options={"secret": "garden"})
    observation, reward, terminated, _, info = env.step("[gardens]")
    assert info["invalid_action"] and "7 letters" in observation and info["lives"] == 6
    observation, reward, terminated, _, info = env.step("[harden]")  # not the word: a life
    assert observation == "No, the word is not HARDEN.\nWord: _ _ _ _ _ _\n5 lives left."
    assert (reward, terminated) == (0.0, False) and info["wrong_words"] == ["harden"]
    observation, reward, terminated, _, info = env.step("[qwerty]")  # need not be a real word
    assert info["lives"] == 4 and not info["invalid_action"]
    observation, reward, terminated, truncated, info = env.step("It is [GARDEN]")
    assert observation == "Yes, the word is GARDEN.\nYou won! The word was GARDEN."
    assert (reward, terminated, truncated) == (1.0, True, False)


def test_losing_the_last_life_terminates_and_reveals_the_word() -> None:
    env = gym.make("TextHangman-v0", lives=2)
    env.reset(seed=0, options={"secret": "garden"})
    *_, terminated, _, info = env.step("[z]")
    assert not terminated and "secret" not in info
    observation, reward, terminated, truncated, info = env.step("[q]")
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert (
        observation
        == "No, Q is not in the word.\nWord: _ _ _ _ _ _\nNo lives left. The word was GARDEN."
    )
    assert info["secret"] == "garden" and not info["won"] and info["lives"] == 0


def test_repeated_guesses_are_feedback_not_a_life() -> None:
    env = gym.make("TextHangman-v0", invalid_action_penalty=0.2)
    env.reset(seed=0, options={"secret": "garden"})
    env.step("[z]")
    env.step("[a]")
    env.step("[harden]")
    for repeat, letter in (("[z]", "Z"), ("A", "A"), ("[harden]", "HARDEN")):
        observation, reward, terminated, _, info = env.step(repeat)
        assert f"you already guessed {letter}" in observation and info["invalid_action"]
        assert reward == -0.2 and info["lives"] == 4 and not terminated
        assert "No life lost" in observation


def test_time_limit_truncates_endless_invalid_replies() -> None:
    env = gym.make("TextHangman-v0")
    env.reset(seed=0)
    for step in range(1, 31):
        *_, terminated, truncated, _ = env.step("?")
        assert not terminated and truncated == (step == 30)


def test_oracle_wins_every_default_word_with_reward_one() -> None:
    # Exhaustive: every one of the 1500 words of 6-10 letters, with the default 6 lives.
    env = gym.make("TextHangman-v0")
    for secret in (w for w in hangman_words() if 6 <= len(w) <= 10):
        total, info = play_oracle(env, secret)
        assert info["won"] and total == 1.0, secret


def test_oracle_on_the_hard_variant() -> None:
    # Short words are harder: some cannot be told apart in time by any strategy.
    env = gym.make("TextHangmanHard-v0")
    secrets = [w for w in hangman_words() if len(w) <= 5][::2]
    won = 0
    for secret in secrets:
        total, info = play_oracle(env, secret)
        assert total == (1.0 if info["won"] else 0.0)
        won += info["won"]
    assert won / len(secrets) >= 0.9


def test_oracle_reads_the_board_not_the_secret() -> None:
    env = TextHangmanEnv()
    env.reset(seed=0, options={"secret": "garden"})
    first = oracle_action(env)
    other = TextHangmanEnv()
    other.reset(seed=0, options={"secret": "letter"})  # same length, same board
    assert oracle_action(other) == first
    env.step("[e]")
    assert "garden" in candidate_words(env)
    assert all(w[4] == "e" and w.count("e") == 1 for w in candidate_words(env))
    # A secret outside the list still gets legal letter guesses.
    env.reset(seed=0, options={"secret": "zyzzyva"})
    total, info = play_oracle(env, "zyzzyva")
    assert info["guessed"] and all(len(g) == 1 for g in info["guessed"])
    with pytest.raises(TypeError, match="TextHangman"):
        oracle_action(gym.make("TextWordle-v0"))


def test_difficulty_kwargs_and_hard_variant() -> None:
    hard = gym.make("TextHangmanHard-v0")
    lengths = set()
    for seed in range(60):
        hard.reset(seed=seed)
        lengths.add(len(hard.unwrapped.secret))
    assert lengths == {4, 5} and hard.spec.max_episode_steps == 30
    env = gym.make("TextHangman-v0", lives=3, min_length=8, max_length=8)
    observation, info = env.reset(seed=0)
    assert "3 lives" in observation and "8 letters" in observation and info["lives"] == 3


def test_secrets_are_seeded_and_varied() -> None:
    env = TextHangmanEnv()
    secrets = set()
    for seed in range(100):
        env.reset(seed=seed)
        secrets.add(env.secret)
        assert 6 <= len(env.secret) <= 10 and env.secret in hangman_words()
    assert len(secrets) > 90
    env.reset(seed=11)
    first = env.secret
    env.reset(seed=11)
    assert env.secret == first


def test_partial_credit_is_bounded() -> None:
    env = gym.make("TextHangman-v0", partial_credit=0.5)
    env.reset(seed=0, options={"secret": "letter"})
    rewards = [env.step(g)[1] for g in ("[z]", "[e]", "[t]", "[l]", "[r]")]
    assert rewards[0] == 0.0  # a miss earns nothing
    assert rewards[1] == pytest.approx(0.5 * 2 / 6)
    assert rewards[2] == pytest.approx(0.5 * 2 / 6)
    assert rewards[3] == pytest.approx(0.5 * 1 / 6)
    assert rewards[4] == 1.0  # the winning letter: just the win
    assert sum(rewards[:4]) < 0.5


def test_reset_does_not_rebuild_the_word_list() -> None:
    env = TextHangmanEnv()
    words = env._words
    env.reset(seed=1)
    env.reset(seed=2)
    assert env._words is words and TextHangmanEnv()._words is words


def test_render_ansi() -> None:
    env = gym.make("TextHangman-v0", render_mode="ansi")
    env.reset(seed=0, options={"secret": "garden"})
    env.step("[a]")
    env.step("[z]")
    assert env.render() == "Word: _ A _ _ _ _\nLives: 5/6\nMissed: Z\n"
    env.step("[garden]")
    assert env.render().endswith("secret: GARDEN\n")
    assert TextHangmanEnv().render() is None


def test_lives_and_length_validation() -> None:
    with pytest.raises(ValueError, match="lives"):
        TextHangmanEnv(lives=0)
    with pytest.raises(ValueError, match="min_length"):
        TextHangmanEnv(min_length=3)
    with pytest.raises(ValueError, match="max_length"):
        TextHangmanEnv(min_length=8, max_length=7)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.lists(
        st.text(max_size=30)
        | st.sampled_from("abcdefghijklmnopqrstuvwxyz").map(lambda c: f"[{c}]")
        | st.sampled_from(["[garden]", "letter", "[ab]", "[]", "E"]),
        max_size=12,
    )
)
def test_any_text_action_never_raises_or_corrupts_state(actions: list[str]) -> None:
    env = TextHangmanEnv()
    env.reset(seed=3, options={"secret": "letter"})
    for turn, action in enumerate(actions, start=1):
        observation, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(observation)
        assert env.turn == turn and env.secret == "letter"
        assert info["invalid_action"] == (info["guess"] is None)
        assert len(set(env.guessed)) == len(env.guessed) and set(env.missed) <= set(env.guessed)
        assert env.lives_left == 6 - len(env.missed) - len(env.wrong_words) >= 0
        assert all(len(g) == 1 for g in env.guessed) and all(len(w) == 6 for w in env.wrong_words)
        assert reward in (-0.1, 0.0, 1.0)
        if terminated or truncated:
            break
