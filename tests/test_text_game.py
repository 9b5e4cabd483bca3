"""The text-game base class: the life cycle every native game shares (envs/_text_game.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from trl_env.envs import GameNotRunningError, TextGame

import trl_env

ROOT = Path(__file__).resolve().parent.parent
NATIVE_IDS = sorted(
    spec.id for spec in trl_env.envs.env_specs("catalogue") if ".toy_text:" not in spec.entry_point
)
GAME_MODULES = (
    "_common",
    "_countdown_math",
    "_guessing",
    "_hangman_solver",
    "_mastermind_solver",
    "_sudoku_solver",
    "_text_game",
    "_wordle_words",
    "countdown",
    "guess_number",
    "hangman",
    "largest_number",
    "mastermind",
    "sudoku",
    "tictactoe",
    "wordle",
    "wordle_solver",
)


def _finish(env: gym.Env[str, str]) -> None:
    """Play the oracle until the episode ends."""
    for _ in range(1000):
        _, _, terminated, truncated, _ = env.step(env.unwrapped.oracle_action())
        if terminated or truncated:
            return
    raise AssertionError("the oracle never ended the episode")


def test_one_error_type_for_reset_needed() -> None:
    assert issubclass(GameNotRunningError, trl_env.error.EpisodeOverError)
    assert issubclass(GameNotRunningError, gym.error.ResetNeeded)


@pytest.mark.parametrize("env_id", NATIVE_IDS)
def test_step_and_policies_need_a_running_episode(env_id: str) -> None:
    game = gym.make(env_id).unwrapped
    assert isinstance(game, TextGame) and not game.running
    with pytest.raises(GameNotRunningError, match=r"call reset\(\) before step\(\)"):
        game.step("[1]")
    with pytest.raises(GameNotRunningError, match=r"before oracle_action\(\)"):
        game.oracle_action()
    env = gym.make(env_id, disable_env_checker=True)
    env.reset(seed=5)
    _finish(env)
    assert not env.unwrapped.running
    for call in (
        lambda: env.unwrapped.step("[1]"),
        lambda: env.unwrapped.oracle_action(),
        lambda: env.unwrapped.random_action(np.random.default_rng(0)),
    ):
        with pytest.raises(GameNotRunningError, match="after the episode ended"):
            call()
    env.reset(seed=6)
    assert env.unwrapped.running and isinstance(env.unwrapped.oracle_action(), str)


@pytest.mark.parametrize("env_id", NATIVE_IDS)
@pytest.mark.parametrize("options", ["secret", 42, ["secret", "crane"]])
def test_non_dict_options_are_a_clear_type_error(env_id: str, options: object) -> None:
    env = gym.make(env_id)
    with pytest.raises(TypeError, match=r"reset\(options=\.\.\.\) takes None or a dict, such as"):
        env.reset(seed=0, options=options)  # type: ignore[arg-type]
    env.reset(seed=0, options={})  # an empty dict is the same as None
    env.reset(seed=0, options=None)


@pytest.mark.parametrize("env_id", NATIVE_IDS)
def test_random_action_uses_only_the_given_generator(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=1)
    game = env.unwrapped
    before = game.np_random.bit_generator.state
    replies = [game.random_action(np.random.default_rng(7)) for _ in range(3)]
    assert game.np_random.bit_generator.state == before
    assert len(set(replies)) == 1 and replies[0].startswith("[")
    _, _, _, _, info = env.step(replies[0])
    # Legal-looking: a well-formed move (a Countdown expression may still divide inexactly).
    assert not info["invalid_action"] or env_id.startswith("TextCountdown"), info.get("error")


@pytest.mark.parametrize("env_id", NATIVE_IDS)
def test_invalid_reply_feedback_and_penalty(env_id: str) -> None:
    env = gym.make(env_id, invalid_action_penalty=0.3)
    env.reset(seed=2)
    observation, reward, terminated, _, info = env.step("")
    assert reward == -0.3 and not terminated
    assert info["invalid_action"] is True and info["error"] in observation
    assert observation.startswith("Invalid ")


def test_render_only_in_ansi_mode() -> None:
    env = gym.make("TextGuessNumber-v0")
    env.reset(seed=0)
    assert env.render() is None
    env = gym.make("TextGuessNumber-v0", render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == "range 1-100, guess 0 of 7\n"
    with pytest.raises(ValueError, match="render_mode must be None or 'ansi'"):
        type(env.unwrapped)(render_mode="human")


@pytest.mark.parametrize("module", GAME_MODULES)
def test_game_modules_stay_small(module: str) -> None:
    source = (ROOT / "envs" / f"{module}.py").read_text("utf-8")
    assert len(source.splitlines()) <= 450, f"envs/{module}.py is over 450 lines"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1  # type: ignore[operator]
            assert length <= 70, f"envs/{module}.py: {node.name} is {length} lines"


# --- replies a real small model writes (issue 9 item 4) ------------------------------------------

PLAIN_WORD_CASES = [
    ("TextWordle-v0", {"secret": "crane"}, "I guess crane", "Guess 1 of 6: CRANE"),
    ("TextWordle-v0", {"secret": "crane"}, "```\nCRANE\n```", "Guess 1 of 6: CRANE"),
    ("TextWordle-v0", {"secret": "crane"}, "```python\nslate\n```", "Guess 1 of 6: SLATE"),
    ("TextLargestNumber-v0", {"numbers": [[3, 8, 1, 5]]}, "The largest number is 8.", "Correct."),
    ("TextLargestNumber-v0", {"numbers": [[3, 8, 1, 5]]}, "The largest number is 1.", "Wrong"),
    ("TextGuessNumber-v0", {"secret": 42}, "I guess 50", "50 is too high"),
    ("TextMastermind-v0", {"secret": "1234"}, "My guess: 1 1 2 2.", "Guess 1 of 10: 1 1 2 2"),
    ("TextHangman-v0", {"secret": "garden"}, "I guess the letter E.", "Yes, E is in the word."),
    ("TextTicTacToe-v0", None, "I'll take the centre, B2.", "You: X at b2."),
    ("TextSudoku-v0", {"puzzle": "..34.31.2..3...."}, "I place 121", "Wrong: 1 does not go"),
    ("TextCountdown-v0", {"numbers": [25, 3, 4, 7], "target": 112}, "I get (25 + 3) * 4", "112"),
]
AMBIGUOUS_CASES = [
    ("TextWordle-v0", {"secret": "crane"}, "crane or slate?"),
    ("TextWordle-v0", {"secret": "crane"}, "Hello there, let me think"),
    ("TextLargestNumber-v0", {"numbers": [[3, 8, 1, 5]]}, "Between 3 and 8, I say 8"),
    ("TextGuessNumber-v0", {"secret": 42}, "Is it 25 or 30?"),
    ("TextMastermind-v0", {"secret": "1234"}, "1 1 2 2 or 3 3 4 4"),
    ("TextTicTacToe-v0", None, "Turn 2: a1"),
    ("TextCountdown-v0", {"numbers": [25, 3, 4, 7], "target": 112}, "Using 25 and 3: (25+3)*4"),
    ("TextHangman-v0", {"secret": "garden"}, "e or a?"),
    ("TextGuessNumber-v0", {"secret": 42}, "50 " * 50),  # too long to be one stated move
]


@pytest.mark.parametrize(("env_id", "options", "reply", "start"), PLAIN_WORD_CASES)
def test_one_legal_move_in_plain_words_is_read(
    env_id: str, options: dict | None, reply: str, start: str
) -> None:
    env = gym.make(env_id)
    env.reset(seed=0, options=options)
    observation, _, _, _, info = env.step(reply)
    assert not info["invalid_action"], info.get("error")
    assert observation.startswith(start) or start in observation.splitlines()[0], observation


@pytest.mark.parametrize(("env_id", "options", "reply"), AMBIGUOUS_CASES)
def test_two_legal_moves_or_none_stay_invalid(
    env_id: str, options: dict | None, reply: str
) -> None:
    env = gym.make(env_id)
    env.reset(seed=0, options=options)
    observation, reward, _, _, info = env.step(reply)
    assert info["invalid_action"] and reward < 0
    # The feedback quotes the reply and shows a valid one.
    assert f"You replied {reply[:60]!r}"[:40] in observation
    assert "like [" in observation or "like (" in observation, observation
