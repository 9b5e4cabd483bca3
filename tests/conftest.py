"""Shared fixtures and helpers for the trl-env test suite."""

from __future__ import annotations

import gymnasium as gym
import pytest

import trl_env


def text_env_ids() -> list[str]:
    """Every registered trl-env ID (the catalogue plus anything registered under trl_env)."""
    return sorted(entry.id for entry in trl_env.REGISTRY)


@pytest.fixture
def wordle() -> gym.Env[str, str]:
    env = gym.make("TextWordle-v0")
    yield env
    env.close()
