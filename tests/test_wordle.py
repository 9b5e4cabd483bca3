from __future__ import annotations

import gymnasium as gym
import pytest
from hypothesis import given
from hypothesis import strategies as st
from trl_env.envs.wordle import TextWordleEnv, allowed_words, answer_words, parse_guess, score_guess

# Hand-checked (secret, guess, pattern), one per duplicate-letter situation.
SCORING_CASES = [
    ("crane", "crane", "GGGGG"),  # exact
    ("crane", "build", "XXXXX"),  # nothing shared
    ("crane", "nacre", "YYYYG"),  # anagram: all yellow but the final e
    ("crane", "slate", "XXGXG"),  # plain greens
    ("crane", "sheep", "XXYXX"),  # guess has 2 e's, secret 1, none green: first yellow, then grey
    ("crane", "eerie", "XXYXG"),  # guess 2 e's, secret's only e is green: the other e is grey
    ("crane", "geese", "XXXXG"),  # three e's in the guess, one green, the rest grey
    ("geese", "eerie", "YGXXG"),  # secret 3 e's: two green, one unmatched copy left for a yellow
    ("geese", "eeeee", "XGGXG"),  # all-same-letter guess: only the greens count
    ("abbey", "brick", "YXXXX"),  # secret 2 b's, guess 1 b elsewhere: one yellow
    ("abbey", "babes", "YYGGX"),  # secret 2 b's, guess 2 b's, one green, one yellow
    ("abbey", "bulbs", "YXXYX"),  # secret 2 b's, guess 2 b's both elsewhere: both yellow
    ("spell", "lolly", "YXXGX"),  # green claims its copy first; the next l finds none left
    ("error", "rarer", "YXGYG"),  # secret 3 r's: two greens, the earlier r takes the last copy
    ("Crane", "CRATE", "GGGXG"),  # case-insensitive
]


@pytest.mark.parametrize(("secret", "guess", "expected"), SCORING_CASES)
def test_score_guess(secret: str, guess: str, expected: str) -> None:
    assert score_guess(secret, guess) == expected


def test_score_guess_length_mismatch() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        score_guess("crane", "cranes")


@given(st.sampled_from(answer_words()), st.sampled_from(sorted(allowed_words())[:3000]))
def test_score_guess_invariants(secret: str, guess: str) -> None:
    pattern = score_guess(secret, guess)
    assert len(pattern) == 5 and set(pattern) <= set("GYX")
    assert (pattern == "GGGGG") == (secret == guess)
    for letter in set(guess):  # never more G+Y marks for a letter than the secret has copies
        marked = sum(p != "X" for g, p in zip(guess, pattern, strict=True) if g == letter)
        assert marked == min(secret.count(letter), guess.count(letter))


def test_word_lists() -> None:
    answers, allowed = answer_words(), allowed_words()
    assert len(answers) >= 2000 and len(allowed) >= 10_000
    assert set(answers) <= allowed
    assert all(len(w) == 5 and w.isascii() and w.isalpha() and w.islower() for w in allowed)
    assert list(answers) == sorted(set(answers))
    for common in ("crane", "slate", "house", "water", "light", "apple", "heart"):
        assert common in answers


@pytest.mark.parametrize(
    ("action", "guess"),
    [
        ("[crane]", "crane"),
        ("[CRANE]", "crane"),
        ("crane", "crane"),
        ("  Crane.\n", "crane"),
        ("I think [slate]. Actually [ crane ]", "crane"),
        ("**crane**", "crane"),
    ],
)
def test_parse_guess_accepts(action: str, guess: str) -> None:
    assert parse_guess(action) == (guess, None)


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ("my guess is crane", "square brackets"),
        ("[cranes]", "6 letters"),
        ("[cr4ne]", "only the letters"),
        ("[crème]", "only the letters"),
        ("[two words]", "only the letters"),
        pytest.param("x" * 1_000_000, "1000000 letters", id="megabyte"),
    ],
)
def test_parse_guess_rejects_with_reason(action: str, problem: str) -> None:
    guess, reason = parse_guess(action)
    assert guess is None and reason is not None and problem in reason


def test_first_observation_states_rules_and_format(wordle: gym.Env[str, str]) -> None:
    observation, info = wordle.reset(seed=0)
    for needle in ("five-letter", "6 tries", "G = right letter", "Y =", "X =", "[crane]"):
        assert needle in observation
    assert info == {"guesses": [], "patterns": []}


def test_step_observation_is_the_delta(wordle: gym.Env[str, str]) -> None:
    wordle.reset(seed=0, options={"secret": "crane"})
    observation, reward, terminated, truncated, info = wordle.step("[slate]")
    assert observation == (
        "Guess 1 of 6: SLATE -> X X G X G\n"
        "(S absent, L absent, A correct, T absent, E correct)\n5 guesses left."
    )
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert (
        info["pattern"] == "XXGXG" and info["patterns"] == ["XXGXG"] and not info["invalid_action"]
    )
    second, *_ = wordle.step("[crate]")
    assert "SLATE" not in second and second.startswith("Guess 2 of 6: CRATE")


def test_win(wordle: gym.Env[str, str]) -> None:
    wordle.reset(seed=0, options={"secret": "crane"})
    wordle.step("[slate]")
    observation, reward, terminated, truncated, info = wordle.step("crane")
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert "You won in 2 guesses! The word was CRANE." in observation
    assert info["won"] and info["secret"] == "crane"


def test_loss_reveals_secret_and_truncates(wordle: gym.Env[str, str]) -> None:
    wordle.reset(seed=0, options={"secret": "crane"})
    for _ in range(5):
        *_, truncated, info = wordle.step("[slate]")
        assert not truncated and "secret" not in info
    observation, reward, terminated, truncated, info = wordle.step("[slate]")
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert "No guesses left. The word was CRANE." in observation and info["secret"] == "crane"


def test_partial_credit_is_bounded() -> None:
    env = gym.make("TextWordle-v0", partial_credit=0.5)
    env.reset(seed=0, options={"secret": "crane"})
    rewards = [env.step(g)[1] for g in ("[build]", "[slate]", "[slate]", "[crate]", "[crane]")]
    assert rewards[0] == 0.0  # no letters: no credit
    assert rewards[1] == pytest.approx(0.5 * 0.4)  # two greens
    assert rewards[2] == 0.0  # no improvement
    assert rewards[3] == pytest.approx(0.5 * 0.4)  # four greens
    assert rewards[4] == 1.0
    assert sum(rewards[:4]) <= 0.5


def test_render_ansi() -> None:
    env = gym.make("TextWordle-v0", render_mode="ansi")
    env.reset(seed=0, options={"secret": "crane"})
    env.step("[slate]")
    board = env.render()
    assert board.splitlines()[0] == "S L A T E   X X G X G"
    assert board.count("_ _ _ _ _") == 5
    env.step("[crane]")
    assert "secret: CRANE" in env.render()


def test_secret_comes_from_the_answer_list_and_varies() -> None:
    env = TextWordleEnv()
    secrets = set()
    for seed in range(40):
        env.reset(seed=seed)
        secrets.add(env.secret)
    assert secrets <= set(answer_words()) and len(secrets) > 30


def test_reset_does_not_rebuild_word_lists() -> None:
    env = TextWordleEnv()
    answers, allowed = env._answers, env._allowed
    env.reset(seed=1)
    env.reset(seed=2)
    assert env._answers is answers and env._allowed is allowed
    assert TextWordleEnv()._allowed is allowed  # shared across instances
