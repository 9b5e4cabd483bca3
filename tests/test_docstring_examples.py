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
    "trl_env._adapters",
    "trl_env.wrappers._cap_observation_length",
    "trl_env.wrappers._describe_observation",
    "trl_env.wrappers._limit_invalid_actions",
    "trl_env.wrappers._parse_action",
    "trl_env.wrappers._penalize_invalid_actions",
    "trl_env.wrappers._prefix_first_observation",
    "trl_env.wrappers._record_transcript",
    "trl_env.envs.toy_text._adapter",
    "trl_env.envs.toy_text._solvers",
    "trl_env.envs.toy_text.blackjack",
    "trl_env.envs.toy_text.cliff_walking",
    "trl_env.envs.toy_text.frozen_lake",
    "trl_env.envs.toy_text.taxi",
    "trl_env.openenv._export",
    "trl_env.openenv._wheel",
    "trl_env.utils._hostile",
    "trl_env.envs.bridges._answer_grammar",
    "trl_env.envs.bridges._scorer_pool",
    "trl_env.envs.bridges.reasoning_gym_env",
    "trl_env.envs",
    "trl_env.envs._catalogue",
    "trl_env.envs.bridges",
    "trl_env._two_player",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_pass(name: str) -> None:
    results = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0
    assert results.failed == 0
