"""API misuses that used to fail with a foreign error (a ``TypeError`` from ``<``, an
``AttributeError`` about ``partition``, "'NoneType' object is not iterable") now say what was wrong
and what to pass."""

from __future__ import annotations

import gymnasium as gym
import pytest

import trl_env


@pytest.mark.parametrize(
    ("env_id", "kwarg"),
    [
        ("TextWordle-v0", "max_guesses"),
        ("TextMastermind-v0", "max_guesses"),
        ("TextGuessNumber-v0", "max_guesses"),
        ("TextHangman-v0", "lives"),
    ],
)
def test_a_count_given_as_text(env_id: str, kwarg: str) -> None:
    with pytest.raises(
        ValueError, match=rf"{kwarg} must be an int >= 1 \(like {kwarg}=6\), got '6'"
    ):
        gym.make(env_id, **{kwarg: "6"})
    with pytest.raises(ValueError, match=f"{kwarg} must be an int >= 1"):
        gym.make(env_id, **{kwarg: True})


def test_protocol_to_gymnasium_given_a_gymnasium_env() -> None:
    with pytest.raises(TypeError, match="it is a gymnasium env already"):
        trl_env.ProtocolToGymnasium(gym.make("TextWordle-v0"))


def test_make_dataset_given_none() -> None:
    pytest.importorskip("datasets")
    with pytest.raises(trl_env.error.UsageError, match="a list of IDs or a dict"):
        trl_env.make_dataset(None, 8)


def test_yes_no_switches_show_both_spellings_and_their_default() -> None:
    """Issue 20: ``--no-progress``'s help said the opposite of what it does. Each yes/no setting
    is now one option with both spellings whose help describes the setting and its default."""
    import argparse

    from trl_env._demos import DemosConfig
    from trl_env.cli._arguments import add_config_arguments

    pytest.importorskip("trl")
    from trl_env.trl.training._config import TrainConfig

    switches = {}
    for config in (TrainConfig, DemosConfig):
        parser = argparse.ArgumentParser()
        add_config_arguments(parser, config)
        for action in parser._actions:
            if any(flag.startswith("--no-") for flag in action.option_strings):
                switches[tuple(action.option_strings)] = action
    assert ("--progress", "--no-progress") in switches and ("--plot", "--no-plot") in switches
    for flags, action in switches.items():
        assert isinstance(action, argparse.BooleanOptionalAction), flags
        assert not action.help.lower().startswith(("turn off", "disable", "do not", "don't")), flags
    for flags, default in (
        (("--progress", "--no-progress"), True),
        (("--plot", "--no-plot"), True),
    ):
        parser = argparse.ArgumentParser()
        add_config_arguments(parser, TrainConfig)
        dest = switches[flags].dest
        assert getattr(parser.parse_args(["X", flags[1]]), dest) is False
        assert getattr(parser.parse_args(["X", flags[0]]), dest) is True
        assert getattr(parser.parse_args(["X"]), dest) is default
