"""Utilities for writing, checking and inspecting text environments and training runs.

What an env author needs (reading a move out of a reply, checking an env against the rules a text
env must follow, hostile replies), the building blocks of the play loop (steppers, seeds, oracle
checks), statistics of played episodes, demonstrations on disk, and a run's saved rollouts.

Example:
    >>> import gymnasium as gym
    >>> from trl_env.utils import check_text_env, read_reply
    >>> check_text_env(gym.make("TextGuessNumber-v0"))
    >>> read_reply("I guess [42]")  # (the move, whether it was bracketed, what went wrong)
    ('42', True, None)
"""

from __future__ import annotations

from trl_env._demos import DemosConfig, load_demos, write_demos
from trl_env._eval_report import format_table
from trl_env._parsing import has_whitespace, last_bracketed, quote, read_reply
from trl_env._policies import has_oracle, has_random_action, oracle_action, random_action
from trl_env._replay import Run, format_episode, load_run, rescore, select_episodes
from trl_env._rollout_records import read_rollouts, rollout_steps
from trl_env._seeding import seed_to_int
from trl_env._stepping import (
    EnvOutcome,
    EnvStepper,
    SequentialStepper,
    ThreadStepper,
    make_stepper,
)
from trl_env._summary import add_samples, pass_at_k, summarize_samples, wilson_interval
from trl_env.utils._checker import NASTY_ACTIONS, TextEnvCheckError, check_text_env
from trl_env.utils._hostile import HostileReport, check_hostile_replies, hostile_replies

__all__ = [
    "NASTY_ACTIONS",
    "DemosConfig",
    "EnvOutcome",
    "EnvStepper",
    "HostileReport",
    "Run",
    "SequentialStepper",
    "TextEnvCheckError",
    "ThreadStepper",
    "add_samples",
    "check_hostile_replies",
    "check_text_env",
    "format_episode",
    "format_table",
    "has_oracle",
    "has_random_action",
    "has_whitespace",
    "hostile_replies",
    "last_bracketed",
    "load_demos",
    "load_run",
    "make_stepper",
    "oracle_action",
    "pass_at_k",
    "quote",
    "random_action",
    "read_reply",
    "read_rollouts",
    "rescore",
    "rollout_steps",
    "seed_to_int",
    "select_episodes",
    "summarize_samples",
    "wilson_interval",
    "write_demos",
]
