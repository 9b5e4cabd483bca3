"""The warm start's format examples come from each env's own random_action(rng)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import trl_env
from trl_env.trl.warm_start import format_example_for

NATIVE = [spec.id for spec in trl_env.envs.env_specs("catalogue")]


@pytest.mark.parametrize("env_id", NATIVE)
def test_every_catalogue_env_has_a_well_formed_random_reply(env_id: str) -> None:
    example = format_example_for(env_id)
    env = gym.make(env_id)
    env.reset(seed=0)
    reply = example(env, np.random.default_rng(0))
    # A format example is a legal-looking move: the env reads it as a move, not as garbage.
    _, _, _, _, info = env.step(reply)
    assert not info["invalid_action"], (env_id, reply, info.get("error"))


def test_an_env_without_random_action_names_the_fixes() -> None:
    with pytest.raises(ValueError, match="random_action"):
        format_example_for("CartPole-v1")
