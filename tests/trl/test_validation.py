"""Up-front argument checks of make_dataset, make_rollout_func, make_environment_factory and
register_protocol_env (issue 13 items 3 and 5): each mistake fails at once, naming the argument
and the fix; dataset rows may only name registered IDs and the kwargs their env accepts."""

from __future__ import annotations

import math
from types import SimpleNamespace

import gymnasium as gym
import pytest

pytest.importorskip("trl")

import trl_env
from trl_env._episode import Task
from trl_env.error import TaskSpecError, UsageError
from trl_env.trl import make_dataset, make_environment_factory, make_rollout_func
from trl_env.trl.models import build_tiny_tokenizer


def test_make_dataset_rejects_a_non_text_env_at_once() -> None:
    with pytest.raises(UsageError, match="CartPole-v1 is not a text environment"):
        make_dataset("CartPole-v1", 4)


def test_make_dataset_checks_kwargs_against_the_constructor() -> None:
    with pytest.raises(UsageError, match=r"'max_guess'.*did you mean 'max_guesses'"):
        make_dataset("TextWordle-v0", 4, max_guess=3)
    dataset = make_dataset("TextWordle-v0", 2, max_guesses=3)
    assert dataset["env_kwargs"][0] == '{"max_guesses": 3}'


def test_make_dataset_env_kwargs_keyword_is_explained() -> None:
    with pytest.raises(UsageError, match=r"not as env_kwargs=.*\*\*"):
        make_dataset("TextWordle-v0", 4, env_kwargs={"max_guesses": 3})


def test_make_dataset_honours_a_dict_of_weights() -> None:
    dataset = make_dataset({"TextWordle-v0": 3, "TextSudoku-v0": 1, "TextHangman-v0": 0}, 400)
    counts = {env_id: dataset["env_id"].count(env_id) for env_id in set(dataset["env_id"])}
    assert "TextHangman-v0" not in counts  # weight 0: never
    assert 250 < counts["TextWordle-v0"] < 350 and 50 < counts["TextSudoku-v0"] < 150


@pytest.mark.parametrize(
    ("weights", "message"),
    [({"TextWordle-v0": -1}, "negative"), ({"TextWordle-v0": "x"}, "finite number"),
     ({"TextWordle-v0": 0}, "sum to 0"), ({"TextWordle-v0": math.nan}, "finite number")],
)  # fmt: skip
def test_make_dataset_rejects_bad_weights(weights: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        make_dataset(weights, 4)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("env_error_penalty", "x", "env_error_penalty must be a finite number"),
     ("env_error_penalty", math.nan, "env_error_penalty must be a finite number"),
     ("env_error_penalty", True, "env_error_penalty must be a finite number"),
     ("system_prompt", 123, "system_prompt must be a str or None"),
     ("max_turns", True, "max_turns must be a positive int"),
     ("max_turns", 0, "max_turns must be a positive int"),
     ("max_new_tokens_per_turn", 2.5, "max_new_tokens_per_turn must be a positive int"),
     ("log_metrics", "yes", "log_metrics must be True or False"),
     ("reward_aggregation", "median", "reward_aggregation must be one of")],
)  # fmt: skip
def test_make_rollout_func_rejects_bad_values(option: str, value: object, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        make_rollout_func(**{option: value})


def test_make_rollout_func_rejects_bad_processor_and_generator() -> None:
    with pytest.raises(UsageError, match="processor must be a TokenProcessor"):
        make_rollout_func(processor=42)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="generator must have a generate"):
        make_rollout_func(generator="vllm")  # type: ignore[arg-type]


def _trainer() -> SimpleNamespace:
    tokenizer = build_tiny_tokenizer("qwen3")
    return SimpleNamespace(processing_class=tokenizer, max_completion_length=64, accelerator=None)


class OneTurn:
    def generate(self, inputs, max_new_tokens):
        return [[0] for _ in inputs], [[0.0] for _ in inputs]


@pytest.mark.parametrize(
    ("task", "message"),
    [(Task("this:TextWordle-v0", "1"), "would import the module 'this'"),
     (Task("TextWordle-v0", "1", {"disable_env_checker": True}), "does not accept"),
     (Task("TextWordle-v0", "1", {"max_episode_steps": 10**9}), "does not accept"),
     (Task("TextNope-v0", "1"), "unknown env")],
)  # fmt: skip
def test_dataset_rows_may_not_import_modules_or_pass_foreign_kwargs(
    task: Task, message: str
) -> None:
    rollout = make_rollout_func(generator=OneTurn(), log_metrics=False)
    with pytest.raises(TaskSpecError, match=message):
        rollout([task.to_prompt()], _trainer())


def test_trust_tasks_opts_in_to_any_row() -> None:
    rollout = make_rollout_func(generator=OneTurn(), log_metrics=False, trust_tasks=True)
    task = Task("TextWordle-v0", "1", {"disable_env_checker": True})
    output = rollout([task.to_prompt()], _trainer())
    assert output["env_id"] == ["TextWordle-v0"]


def test_environment_factory_checks_rows_and_kwargs() -> None:
    with pytest.raises(UsageError, match="does not accept"):
        make_environment_factory("TextWordle-v0", max_guess=3)
    env = make_environment_factory()()
    with pytest.raises(TaskSpecError, match="would import"):
        env.reset(env_id="this:TextWordle-v0", seed="1")


class Parrot:
    """A protocol env whose constructor takes ``word`` only."""

    last_step_reward, alive = 0.0, False

    def __init__(self, word: str = "hi") -> None:
        self.word = word

    def reset(self, seed: str) -> str:
        return "Say it."

    def step(self, action: str) -> str:
        return "Bye."


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [(("TextBad-v0", 42), {}, "entry_point must be a protocol env class"),
     (("TextBad-v0", "no_colon"), {}, "must be 'package.module:ClassName'"),
     ((42, "m:C"), {}, "id must be a gymnasium ID string"),
     (("TextBad-v0", "m:C"), {"kwargs": [1]}, "kwargs must be a dict"),
     (("TextBad-v0", "m:C"), {"max_episode_steps": True}, "max_episode_steps must be"),
     (("TextBad-v0", Parrot), {"kwargs": {"volume": 3}}, "Parrot does not accept 'volume'")],
)  # fmt: skip
def test_register_protocol_env_checks_its_arguments(args, kwargs, message) -> None:
    with pytest.raises(UsageError, match=message):
        trl_env.register_protocol_env(*args, **kwargs)
    assert "TextBad-v0" not in gym.registry
