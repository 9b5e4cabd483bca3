"""Shared fixtures and helpers for the trl-env test suite."""

from __future__ import annotations

import os

import gymnasium as gym
import pytest
from hypothesis import settings

import trl_env

# CI explores the same examples every run: a property failure there is a bug to reproduce, not
# noise. Locally, hypothesis keeps searching new examples.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def text_env_ids() -> list[str]:
    """Every registered trl-env ID (the catalogue plus anything registered under trl_env)."""
    return sorted(spec.id for spec in trl_env.envs.env_specs("catalogue"))


@pytest.fixture
def wordle() -> gym.Env[str, str]:
    env = gym.make("TextWordle-v0")
    yield env
    env.close()
