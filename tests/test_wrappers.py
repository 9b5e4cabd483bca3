"""The text wrappers of trl_env.wrappers, alone and stacked with gymnasium's own."""

from __future__ import annotations

import contextlib
import inspect
import io
import pickle
import re
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.envs.toy_text import FrozenLakeEnv, TaxiEnv
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trl_env
import trl_env.wrappers as wrappers
from trl_env import TextSpace
from trl_env.wrappers import (
    CapObservationLength,
    DescribeObservation,
    LimitInvalidActions,
    ParseAction,
    PenalizeInvalidActions,
    PrefixFirstObservation,
    RecordTranscript,
    Turn,
)

LAKE_ACTIONS = ["left", "down", "right", "up"]


def square(state: int) -> str:
    return f"You are on square {state}."


def lake(**kwargs) -> gym.Env[str, str]:
    """FrozenLake (deterministic 4x4) as a text env, through gym.make so the spec is set."""
    env = gym.make("FrozenLake-v1", is_slippery=False)
    env = DescribeObservation(env, square)
    return ParseAction(env, LAKE_ACTIONS, synonyms={"left": ["west", "l"]}, **kwargs)


# --- public surface -----------------------------------------------------------------------------


def test_all_is_complete_and_names_are_gymnasium_style() -> None:
    public = {
        name
        for name, value in vars(wrappers).items()
        if inspect.isclass(value) and not name.startswith("_")
    }
    assert public == set(wrappers.__all__)
    for name in wrappers.__all__:
        cls = getattr(wrappers, name)
        if issubclass(cls, gym.Wrapper):
            assert issubclass(cls, gym.utils.RecordConstructorArgs), name
            assert cls.__doc__ and "Example:" in cls.__doc__, name


# --- DescribeObservation ------------------------------------------------------------------------


def test_describe_with_a_function() -> None:
    env = DescribeObservation(FrozenLakeEnv(is_slippery=False), square, max_length=100)
    assert env.observation_space == TextSpace(100)
    assert env.reset(seed=0)[0] == "You are on square 0."
    assert env.step(2)[0] == "You are on square 1."


def test_describe_defaults_to_the_ansi_render_without_escape_codes() -> None:
    game = FrozenLakeEnv(render_mode="ansi", is_slippery=False)
    assert "\x1b" in (game.reset(seed=0) and game.render())  # gymnasium colours the player
    env = DescribeObservation(FrozenLakeEnv(render_mode="ansi", is_slippery=False))
    observation, _ = env.reset(seed=0)
    assert "\x1b" not in observation and "SFFF" in observation
    assert env.observation_space.contains(observation)


def test_describe_without_render_falls_back_to_a_generic_text() -> None:
    env = DescribeObservation(FrozenLakeEnv())
    assert env.reset(seed=0)[0] == "Observation: 0"


def test_describe_cuts_and_sanitizes() -> None:
    env = DescribeObservation(FrozenLakeEnv(), lambda s: "\x07bell " + "x" * 100, max_length=10)
    assert env.reset(seed=0)[0] == "bell xxxxx"


def test_describe_errors_say_what_to_do() -> None:
    with pytest.raises(ValueError, match="render_mode='ansi'"):
        DescribeObservation(FrozenLakeEnv(), "ansi")
    env = DescribeObservation(FrozenLakeEnv(), lambda s: s)
    with pytest.raises(TypeError, match="must be a str"):
        env.reset(seed=0)


# --- ParseAction --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "square_after"),
    [
        ("[right]", 1),
        ("RIGHT", 1),
        ("  right.  ", 1),
        ("I'll go [down]... no, [Right]", 1),
        ("[west]", 0),
        ("l", 0),
        ("[ down ]", 4),
    ],
)
def test_parse_valid_replies(reply: str, square_after: int) -> None:
    env = lake()
    env.reset(seed=0)
    observation, reward, terminated, truncated, info = env.step(reply)
    assert observation == f"You are on square {square_after}."
    assert info["invalid_action"] is False and info["action"] in LAKE_ACTIONS
    assert (reward, terminated, truncated) == (0.0, False, False)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("", "your reply was empty"),
        ("  \n", "your reply was empty"),
        ("[]", "the brackets were empty"),
        ("jump", "'jump' is not a legal action"),
        ("[left right]", "'left right' is not a legal action"),
        ("I go left", "no action found"),
        pytest.param("x" * 1_000_000, "is not a legal action", id="1MB"),
        ("🎉", "'🎉' is not a legal action"),
        ("\x00\x1b[31m", "is not a legal action"),
    ],
)
def test_invalid_replies_get_feedback_and_do_not_step(reply: str, problem: str) -> None:
    env = lake(invalid_action_penalty=0.5)
    env.reset(seed=0)
    env.step("[right]")
    observation, reward, terminated, truncated, info = env.step(reply)
    assert problem in observation and problem in info["error"]
    assert "[left], [down], [right], [up]" in observation
    assert env.observation_space.contains(observation)
    assert (reward, terminated, truncated) == (-0.5, False, False)
    assert info["invalid_action"] is True and "action" not in info
    assert env.unwrapped.s == 1  # the game did not move


def test_first_observation_announces_the_reply_format() -> None:
    observation, _ = lake().reset(seed=0)
    assert observation.endswith(
        "Reply with one action in square brackets: [left], [down], [right] or [up]."
    )
    silent = ParseAction(
        DescribeObservation(FrozenLakeEnv(), square), LAKE_ACTIONS, announce_actions=False
    )
    assert silent.reset(seed=0)[0] == "You are on square 0."


def test_invalid_replies_count_toward_the_time_limit() -> None:
    env = gym.wrappers.TimeLimit(lake(), max_episode_steps=2)
    env.reset(seed=0)
    assert env.step("?")[3] is False
    assert env.step("?")[3] is True


def test_step_after_the_end_or_before_reset_raises_reset_needed() -> None:
    env = ParseAction(DescribeObservation(FrozenLakeEnv(is_slippery=False), square), LAKE_ACTIONS)
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        env.step("[down]")
    env.reset(seed=0)
    env.step("[right]")
    assert env.step("[down]")[2]  # square 5 is a hole
    with pytest.raises(gym.error.ResetNeeded, match="call reset"):
        env.step("[down]")
    env.reset()
    env.step("[down]")


def test_parse_action_handles_names_with_spaces_and_discrete_start() -> None:
    class Shifted(gym.Wrapper):
        def __init__(self, env):
            super().__init__(env)
            self.action_space = gym.spaces.Discrete(6, start=10)

        def step(self, action):
            assert action >= 10
            return self.env.step(action - 10)

    names = ["south", "north", "east", "west", "pickup", "dropoff"]
    env = ParseAction(
        DescribeObservation(Shifted(TaxiEnv()), str),
        names,
        synonyms={"pickup": ["pick up"], "dropoff": ["drop off"]},
    )
    env.reset(seed=0)
    assert env.step("[Pick-Up]")[4]["action"] == "pickup"
    assert env.step("drop_off!")[4]["action"] == "dropoff"
    assert env.parse("[north]") == (1, None)
    assert env.parse(42) == (None, "your reply must be text, not int")


def test_parse_action_rejects_bad_configurations() -> None:
    text_lake = DescribeObservation(FrozenLakeEnv(), square)
    with pytest.raises(ValueError, match="name each of the 4"):
        ParseAction(text_lake, ["left", "right"])
    with pytest.raises(ValueError, match="two actions"):
        ParseAction(text_lake, LAKE_ACTIONS, synonyms={"left": ["RIGHT"]})
    with pytest.raises(ValueError, match="unknown action"):
        ParseAction(text_lake, LAKE_ACTIONS, synonyms={"jump": ["hop"]})
    with pytest.raises(TypeError, match="list of strings"):
        ParseAction(text_lake, LAKE_ACTIONS, synonyms={"left": "west"})
    with pytest.raises(trl_env.error.NotATextEnvError, match="DescribeObservation"):
        ParseAction(FrozenLakeEnv(), LAKE_ACTIONS)
    with pytest.raises(TypeError, match="Discrete"):
        ParseAction(gym.make("TextWordle-v0"), ["a"])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=60) | st.sampled_from(["[up]", "[left]", "DOWN", "[[right]]", "]["]))
def test_any_text_is_safe(reply: str) -> None:
    env = lake()
    env.reset(seed=0)
    env.step("[right]")
    observation, reward, terminated, truncated, info = env.step(reply)
    assert env.observation_space.contains(observation)
    if info["invalid_action"]:
        assert env.unwrapped.s == 1 and reward == -0.1
    else:
        assert info["action"] in LAKE_ACTIONS


# --- RecordTranscript ---------------------------------------------------------------------------


def test_record_transcript_at_episode_end() -> None:
    env = RecordTranscript(lake())
    first, _ = env.reset(seed=0)
    second, *_ = env.step("[right]")
    assert env.transcript == (Turn(first, "[right]", 0.0),)
    _, _, terminated, _, info = env.step("jump")
    assert "transcript" not in info and not terminated
    _, _, terminated, _, info = env.step("[down]")  # into the hole
    assert terminated
    assert [turn.action for turn in info["transcript"]] == ["[right]", "jump", "[down]"]
    assert info["transcript"][1] == Turn(second, "jump", pytest.approx(-0.1))
    env.reset(seed=0)
    assert env.transcript == ()


def test_record_transcript_sees_time_limit_truncation() -> None:
    env = RecordTranscript(gym.make("TextWordle-v0", max_episode_steps=2), info_key="log")
    env.reset(seed=0)
    env.step("?")
    *_, truncated, info = env.step("?")
    assert truncated and len(info["log"]) == 2


# --- PenalizeInvalidActions / LimitInvalidActions -----------------------------------------------


def test_penalize_invalid_actions() -> None:
    env = PenalizeInvalidActions(lake(invalid_action_penalty=0.0), 0.25)
    env.reset(seed=0)
    assert env.step("?")[1] == -0.25
    assert env.step("[right]")[1] == 0.0
    with pytest.raises(ValueError, match=">= 0"):
        PenalizeInvalidActions(lake(), -1)


def test_limit_invalid_actions_counts_consecutive_ones() -> None:
    env = LimitInvalidActions(lake(), max_consecutive=2)
    env.reset(seed=0)
    assert env.step("?")[3] is False
    assert env.step("[right]")[3] is False  # a valid reply resets the count
    assert env.step("?")[3] is False
    observation, _, terminated, truncated, info = env.step("??")
    assert truncated and not terminated and info["invalid_action_limit"]
    assert observation.endswith("2 invalid replies in a row: the episode is over.")
    assert env.observation_space.contains(observation)
    with pytest.raises(gym.error.ResetNeeded):
        env.step("[left]")
    env.reset(seed=0)
    assert env.step("?")[3] is False


# --- PrefixFirstObservation / CapObservationLength ----------------------------------------------


def test_prefix_first_observation_only() -> None:
    env = PrefixFirstObservation(lake(), "You are a careful explorer.", separator="\n")
    observation, _ = env.reset(seed=0)
    assert observation.startswith("You are a careful explorer.\nYou are on square 0.")
    assert env.step("[right]")[0] == "You are on square 1."
    assert env.observation_space.max_length == lake().observation_space.max_length + 28
    with pytest.raises(ValueError, match="printable"):
        PrefixFirstObservation(lake(), "\x07")
    with pytest.raises(trl_env.error.NotATextEnvError):
        PrefixFirstObservation(FrozenLakeEnv(), "hi")


def test_cap_observation_length() -> None:
    env = CapObservationLength(lake(), 30, marker="...")
    observation, _ = env.reset(seed=0)
    assert observation == "You are on square 0.\nReply ..."
    assert env.observation_space == TextSpace(30)
    assert env.step("[right]")[0] == "You are on square 1."
    with pytest.raises(ValueError, match="longer than the marker"):
        CapObservationLength(lake(), 3, marker="...")


# --- composition --------------------------------------------------------------------------------


def full_stack() -> gym.Env[str, str]:
    env = RecordTranscript(lake())
    env = PenalizeInvalidActions(env, 0.2)
    env = LimitInvalidActions(env, 3)
    env = PrefixFirstObservation(env, "Reach the goal.")
    return CapObservationLength(env, 500)


def test_spec_round_trip_rebuilds_the_whole_stack() -> None:
    env = full_stack()
    remade = gym.make(env.spec)
    assert remade.spec == env.spec
    assert str(remade) == str(env)
    assert remade.reset(seed=0) == env.reset(seed=0)
    assert remade.step("[right]")[:4] == env.step("[right]")[:4]


def test_stack_pickles_mid_episode() -> None:
    env = full_stack()
    env.reset(seed=0)
    env.step("[right]")
    clone = pickle.loads(pickle.dumps(env))
    assert clone.step("?")[:4] == env.step("?")[:4]
    assert clone.step("[down]")[4]["transcript"] == env.step("[down]")[4]["transcript"]


def test_stacks_with_gymnasium_wrappers() -> None:
    env = gym.wrappers.RecordEpisodeStatistics(full_stack())
    env = gym.wrappers.TransformReward(env, lambda r: 2 * r)
    env.reset(seed=0)
    env.step("?")
    *_, terminated, truncated, info = env.step("[right]")
    assert not terminated
    *_, terminated, truncated, info = env.step("[down]")  # square 5 is a hole
    assert terminated
    assert info["episode"]["l"] == 3
    assert info["episode"]["r"] == pytest.approx(-0.1 - 0.2)
    assert len(info["transcript"]) == 3


# --- the documentation page runs ----------------------------------------------------------------

DOC = Path(__file__).parent.parent / "docs" / "wrapping_your_env.md"


def test_wrapping_your_env_doc_runs_and_prints_what_it_says() -> None:
    blocks = re.findall(r"```(python|text)\n(.*?)```", DOC.read_text("utf-8"), re.S)
    assert sum(kind == "python" for kind, _ in blocks) >= 6
    namespace: dict = {}
    printed = None
    gym.registry.pop("TextMyLake-v0", None)
    try:
        for kind, code in blocks:
            if kind == "python":
                out = io.StringIO()
                with contextlib.redirect_stdout(out):
                    exec(compile(code, str(DOC), "exec"), namespace)
                printed = out.getvalue()
            elif printed is not None:
                assert printed == code
                printed = None
        namespace["test_text_env"]("TextMyLake-v0")
    finally:
        gym.registry.pop("TextMyLake-v0", None)
