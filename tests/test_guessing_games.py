"""What the guessing games share, tested once over a table of them.

Guess the number, Wordle and Mastermind stand on one base (``envs/_guessing.py``); Hangman is a
guessing game too, with lives instead of a guess limit, and shares the reply reading, the invalid
reply and the argument checks. Each game's own rules (scoring, its secrets, its oracle) are tested
in its own file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trl_env.envs import guess_number, hangman, mastermind, wordle


@dataclass(frozen=True)
class Game:
    """A guessing game, and what the tests below need to know about it."""

    env_id: str
    env_class: type[Any]
    parse: Callable[[str], tuple[Any, str | None]]
    options: dict[str, Any] | None  # for the invalid-reply test
    example: str  # the valid reply invalid-reply feedback shows
    turns_left: str  # what the feedback says after one invalid reply
    step_key: str  # the info key of a valid step's result (left out or None when invalid)
    history_key: str  # the info key of the valid guesses so far
    bad_secrets: tuple[Any, ...]
    invalid: tuple[tuple[str, ...], ...]  # (reply, what the feedback says, optional test id)

    def __str__(self) -> str:
        return self.env_id


GUESS_NUMBER = Game(
    "TextGuessNumber-v0",
    guess_number.TextGuessNumberEnv,
    guess_number.parse_number,
    None,
    "[50]",
    "6 guesses left",
    "hint",
    "guesses",
    (0, 101, "42", 4.0, True),
    (
        ("no idea", "square brackets"),
        ("[0]", "outside the range 1 to 100"),
        ("[101]", "outside the range 1 to 100"),
        ("[-50]", "outside the range 1 to 100"),
        ("[3.14]", "not a whole number"),
        ("[ninety]", "not a whole number"),
        ("x" * 1_000_000, "not a whole number", "megabyte"),
        ("🎉" * 100_000, "not a whole number", "emoji-flood"),
        ("\x00\x07[\x1b]", "not a whole number", "control-chars"),
    ),
)
WORDLE = Game(
    "TextWordle-v0",
    wordle.TextWordleEnv,
    wordle.parse_guess,
    None,
    "[crane]",
    "5 guesses left",
    "pattern",
    "guesses",
    ("zzzzz", "crane!", 12345),
    (
        ("hello there", "square brackets"),
        ("[abc]", "3 letters"),
        ("[zzzzz]", "not in the word list"),
        ("[h3llo]", "only the letters"),
        ("🎉" * 100_000, "only the letters", "emoji-flood"),
    ),
)
MASTERMIND = Game(
    "TextMastermind-v0",
    mastermind.TextMastermindEnv,
    mastermind.parse_code,
    None,
    "[1 2 3 4]",
    "9 guesses left",
    "feedback",
    "guesses",
    ("12345", "1237", "abcd", 1234, ""),
    (
        ("hello there", "square brackets"),
        ("[1 2 3]", "3 pegs"),
        ("[9 9 9 9]", "colour 9 does not exist"),
        ("[a b c d]", "only the digits"),
        ("🎉" * 100_000, "square brackets", "emoji-flood"),
        ("[" + "2" * 1_000_000 + "]", "1000000 pegs", "megabyte-code"),
        ("\x00\x1b[2J]", "only the digits", "control-chars"),
    ),
)
HANGMAN = Game(
    "TextHangman-v0",
    hangman.TextHangmanEnv,
    hangman.parse_guess,
    {"secret": "garden"},
    "[e]",
    "6 lives left",
    "correct",
    "guessed",
    ("", "a", "gar den", "café", 42, "x" * 65),
    (
        ("hello there", "square brackets"),
        ("[ab]", "2 letters: guess one letter or the whole 6-letter word"),
        ("[3]", "only the letters"),
        ("x" * 1_000_000, "1000000 letters", "megabyte"),
        ("🎉" * 100_000, "only the letters", "emoji-flood"),
        ("\x00\x07[\x1b]", "only the letters", "control-chars"),
    ),
)
GAMES = [GUESS_NUMBER, WORDLE, MASTERMIND, HANGMAN]
WITH_A_GUESS_LIMIT = [GUESS_NUMBER, WORDLE, MASTERMIND]  # the games on envs/_guessing.py


def _cases(games: list[Game]) -> list[Any]:
    """``(game, reply, reason)`` for every game's invalid replies, with readable ids."""
    cases = []
    for game in games:
        for reply, reason, *name in (("", "empty"), *game.invalid):
            label = name[0] if name else repr(reply[:20])
            cases.append(pytest.param(game, reply, reason, id=f"{game}-{label}"))
    return cases


@pytest.mark.parametrize("game", GAMES, ids=str)
@pytest.mark.parametrize(
    ("action", "problem"),
    [("", "empty"), ("  \n\t", "empty"), ("[]", "brackets were empty")],
)
def test_a_reply_without_a_move_is_rejected_with_reason(
    game: Game, action: str, problem: str
) -> None:
    move, reason = game.parse(action)
    assert move is None and reason is not None and problem in reason


@pytest.mark.parametrize(("game", "action", "reason"), _cases(GAMES))
def test_invalid_actions_get_feedback_and_penalty(game: Game, action: str, reason: str) -> None:
    env = gym.make(game.env_id, invalid_action_penalty=0.25)
    env.reset(seed=1, options=game.options)
    observation, reward, terminated, truncated, info = env.step(action)
    assert reason in observation and reason in info["error"]
    assert observation.startswith("Invalid guess:") and game.turns_left in observation
    assert game.example in observation  # says how to reply
    assert reward == -0.25 and info["invalid_action"] and info.get(game.step_key) is None
    assert info[game.history_key] == [] and not terminated and not truncated
    # Enormous replies are not echoed back.
    assert env.observation_space.contains(observation) and len(observation) < 400


@pytest.mark.parametrize("game", GAMES, ids=str)
def test_fixed_secret_option_is_validated(game: Game) -> None:
    env = game.env_class()
    for bad in game.bad_secrets:
        with pytest.raises(ValueError, match="secret"):
            env.reset(options={"secret": bad})


@pytest.mark.parametrize("game", GAMES, ids=str)
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"render_mode": "human"}, "render_mode"),
        ({"invalid_action_penalty": -1}, ">= 0"),
        ({"partial_credit": -1}, ">= 0"),
    ],
)
def test_constructor_validation(game: Game, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        game.env_class(**kwargs)


@pytest.mark.parametrize("game", WITH_A_GUESS_LIMIT, ids=str)
@pytest.mark.parametrize("max_guesses", [0, -1, "6", 6.0, True])
def test_max_guesses_must_be_a_positive_int(game: Game, max_guesses: Any) -> None:
    with pytest.raises(ValueError, match=r"max_guesses must be an int >= 1 \(like max_guesses=6\)"):
        game.env_class(max_guesses=max_guesses)


REPLIES = {
    GUESS_NUMBER.env_id: st.integers(-200, 300).map(lambda n: f"[{n}]")
    | st.sampled_from(["50", "[50]", "[]", "[[7]]", "7]"]),
    WORDLE.env_id: st.sampled_from(["[crane]", "slate", "[abcde]", "I guess crane"]),
    MASTERMIND.env_id: st.text("0123456789 ,[]", max_size=12)
    | st.sampled_from(["[1 2 3 4]", "1122", "[6 6 6 6]", "[]"]),
}
LEGAL = {
    GUESS_NUMBER.env_id: lambda guess: 1 <= guess <= 100,
    WORDLE.env_id: lambda guess: guess in wordle.allowed_words(),
    MASTERMIND.env_id: lambda guess: len(guess) == 4 and set(guess) <= set("123456"),
}


@pytest.mark.parametrize("game", WITH_A_GUESS_LIMIT, ids=str)
@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_any_text_action_never_raises_or_corrupts_state(game: Game, data: st.DataObject) -> None:
    actions = data.draw(st.lists(st.text(max_size=40) | REPLIES[game.env_id], max_size=8))
    env = game.env_class(partial_credit=0.3)
    env.reset(seed=3)
    secret, shaped = env.secret, 0.0
    for turn, action in enumerate(actions, start=1):
        observation, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(observation)
        assert env.turn == turn and env.secret == secret
        assert info["invalid_action"] == (info.get("guess") is None)
        assert all(LEGAL[game.env_id](guess) for guess in env.guesses)
        invalid = sum(1 for a in actions[:turn] if env.read_move(a)[0] is None)
        assert len(env.guesses) == len(env.feedbacks) == len(info["guesses"]) == turn - invalid
        assert reward in (-0.1, 1.0) or 0.0 <= reward <= 0.3
        shaped += reward if 0.0 < reward < 1.0 else 0.0
        assert shaped <= 0.3 + 1e-9  # the shaped part of a return is at most partial_credit
        if terminated or truncated:
            break
