"""The ``Example:`` doctests of the spaces, adapters, wrappers and toy-text modules run and pass.

The env docs pages show these examples (``scripts/gen_env_docs.py``), so one that drifts from what
the code does misleads readers; this keeps them honest.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "trl_env.spaces",
    "trl_env.adapters",
    "trl_env.wrappers.cap_observation_length",
    "trl_env.wrappers.describe_observation",
    "trl_env.wrappers.limit_invalid_actions",
    "trl_env.wrappers.parse_action",
    "trl_env.wrappers.penalize_invalid_actions",
    "trl_env.wrappers.prefix_first_observation",
    "trl_env.wrappers.record_transcript",
    "trl_env.envs.toy_text._adapter",
    "trl_env.envs.toy_text._solvers",
    "trl_env.envs.toy_text.blackjack",
    "trl_env.envs.toy_text.cliff_walking",
    "trl_env.envs.toy_text.frozen_lake",
    "trl_env.envs.toy_text.taxi",
    "trl_env.openenv.export",
    "trl_env.openenv._wheel",
    "trl_env.utils.hostile",
    "trl_env.envs.bridges._answer_grammar",
    "trl_env.envs.bridges._scorer_pool",
    "trl_env.envs.bridges.reasoning_gym_env",
    "trl_env.envs",
    "trl_env.envs._catalogue",
    "trl_env.envs.bridges",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name: str) -> None:
    results = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0
    assert results.failed == 0
