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


def real_model_required() -> bool:
    """Whether a missing real model (or its ``gguf`` reader) must fail the run instead of skipping.

    ``.ci/run`` sets ``TRL_ENV_REQUIRE_REAL_MODEL=1`` (and CI services set ``CI``): there, a GGUF
    file that could not be fetched is a broken build, not a reason to go green without the
    real-model tests.
    """
    return bool(os.environ.get("TRL_ENV_REQUIRE_REAL_MODEL") or os.environ.get("CI"))


def skip_or_fail_without_real_model(reason: str) -> None:
    """Skip with ``reason`` on a developer's machine; fail with it where the model is required."""
    if real_model_required():
        pytest.fail(f"{reason} (required here: TRL_ENV_REQUIRE_REAL_MODEL or CI is set)")
    pytest.skip(reason, allow_module_level=True)


def text_env_ids() -> list[str]:
    """Every registered trl-env ID (the catalogue plus anything registered under trl_env)."""
    return sorted(spec.id for spec in trl_env.envs.env_specs("catalogue"))


@pytest.fixture
def wordle() -> gym.Env[str, str]:
    env = gym.make("TextWordle-v0")
    yield env
    env.close()
