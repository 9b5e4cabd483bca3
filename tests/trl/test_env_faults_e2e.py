"""Real ``GRPOTrainer`` runs (tiny model, CPU) that must survive broken envs and give reward
functions the right view of multi-turn episodes.

* Issue 13 item 1: envs that return malformed values (or raise) end only their own episode, with
  a warning, the ``env/error_rate`` metric and the error in the transcript; training completes.
* Issue 14 item 5: with a tokenizer that has a ``response_template`` (the tiny model's), TRL
  hands reward functions the whole multi-turn completion parsed as one message; the
  ``episode_messages`` column is the conversation, one message per turn, with no markup.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("trl")

import torch
from trl import GRPOTrainer

import trl_env

# The same marks, single-thread fixture and CPU GRPO settings as the other end-to-end runs.
from tests.trl.test_train_e2e import grpo_args, one_torch_thread, pytestmark  # noqa: F401
from trl_env.spaces import TextSpace

# What a broken env returns from its first step (or reset), and a word the error must contain.
FAULTS: dict[str, tuple[str, Any, str]] = {
    "obs-none": ("step", (None, 0.0, False, False, {}), "observation"),
    "obs-int": ("step", (7, 0.0, False, False, {}), "observation"),
    "obs-bytes": ("step", (b"hi", 0.0, False, False, {}), "observation"),
    "reward-none": ("step", ("o", None, False, False, {}), "reward"),
    "reward-nan": ("step", ("o", math.nan, False, False, {}), "reward"),
    "reward-str": ("step", ("o", "1.0", False, False, {}), "reward"),
    "info-none": ("step", ("o", 0.0, False, False, None), "info"),
    "reset-bytes": ("reset", (b"start", {}), "reset() observation"),
    "raises": ("step", RuntimeError("env exploded"), "env exploded"),
}


class Faulty(gym.Env[str, str]):
    """A text env with one fault, on its first step (or on reset)."""

    observation_space = TextSpace(200)
    action_space = TextSpace(10_000)

    def __init__(self, fault: str = "none") -> None:
        self.fault = fault

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        where, value, _ = FAULTS.get(self.fault, ("", None, ""))
        return value if where == "reset" else ("Say anything.", {})

    def step(self, action: str) -> Any:
        where, value, _ = FAULTS.get(self.fault, ("", None, ""))
        if isinstance(value, Exception):
            raise value
        if where == "step":
            return value
        return "You win.", 1.0, True, False, {"won": True}


@pytest.fixture(scope="module")
def faulty_ids() -> Any:
    ids = {}
    for fault in [*FAULTS, "none"]:
        env_id = f"TestFault{''.join(p.title() for p in fault.split('-'))}-v0"
        # No passive env checker: the rollout's own checks are under test.
        gym.register(
            env_id, Faulty, kwargs={"fault": fault}, max_episode_steps=3, disable_env_checker=True
        )
        ids[fault] = env_id
    yield ids
    for env_id in ids.values():
        del gym.registry[env_id]


def test_training_survives_every_env_fault_and_counts_it(
    tiny_model_dir: str, tmp_path: Path, faulty_ids: dict[str, str]
) -> None:
    ids = list(faulty_ids.values())
    rollout = trl_env.make_rollout_func(max_new_tokens_per_turn=8, env_error_penalty=-2.0)
    trainer = GRPOTrainer(
        model=tiny_model_dir,
        reward_funcs=trl_env.env_reward,
        train_dataset=trl_env.make_dataset(ids, num_tasks=len(ids)),
        rollout_func=rollout,
        args=grpo_args(
            tmp_path,
            per_device_train_batch_size=4 * len(ids),
            max_completion_length=64,
            max_steps=1,
        ),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", trl_env.error.EnvErrorWarning)
        trainer.train()

    assert trainer.state.global_step == 1
    episodes = rollout.last_episodes
    assert sorted(e.env_id for e in episodes) == sorted(ids * 4)
    for fault, (where, _, needle) in FAULTS.items():
        mine = [e for e in episodes if e.env_id == faulty_ids[fault]]
        for episode in mine:
            assert episode.ended_by == "error", (fault, episode.ended_by)
            assert episode.error is not None and needle in episode.error, (fault, episode.error)
            assert episode.error.startswith(f"{where}: ")
            assert episode.episode_return == -2.0
            assert episode.transcript[-1]["error"]  # the transcript says what happened
            assert len(episode.completion_ids) == len(episode.env_mask) >= 1
    good = [e for e in episodes if e.env_id == faulty_ids["none"]]
    assert all(e.error is None and e.ended_by != "error" for e in good)
    faults = [w for w in caught if issubclass(w.category, trl_env.error.EnvErrorWarning)]
    assert len(faults) == 4 * len(FAULTS)
    history = trainer.state.log_history
    error_rates = [entry["env/error_rate"] for entry in history if "env/error_rate" in entry]
    assert error_rates == [pytest.approx(len(FAULTS) / len(ids))]
    per_env = [entry[f"env/{faulty_ids['reward-nan']}/error_rate"] for entry in history
               if f"env/{faulty_ids['reward-nan']}/error_rate" in entry]  # fmt: skip
    assert per_env == [1.0]


def test_reward_functions_get_the_conversation_as_messages(
    tiny_model_dir: str, tmp_path: Path
) -> None:
    rollout = trl_env.make_rollout_func(max_new_tokens_per_turn=12)
    seen: list[dict[str, Any]] = []

    def inspect_reward(completions: list, **kwargs: Any) -> list[float]:
        seen.append({"completions": completions, **kwargs})
        return [0.0] * len(completions)

    trainer = GRPOTrainer(
        model=tiny_model_dir,
        reward_funcs=[trl_env.env_reward, inspect_reward],
        train_dataset=trl_env.make_dataset("TextWordle-v0", num_tasks=4),
        rollout_func=rollout,
        args=grpo_args(tmp_path, max_completion_length=160, max_steps=1),
    )
    assert getattr(trainer.processing_class, "response_template", None) is not None
    processor = rollout.processor_for(trainer.processing_class)
    with torch.no_grad():  # make the random model end turns by itself, so episodes go on
        trainer.model.get_input_embeddings().weight[processor.end_of_turn_id] *= 30.0
    trainer.train()

    last = seen[-1]
    episodes = rollout.last_episodes
    multi = [i for i, e in enumerate(episodes) if e.turns >= 2]
    assert multi, "no multi-turn episode was played"
    for i in multi:
        episode, messages = episodes[i], last["episode_messages"][i]
        agent = [m for m in episode.transcript if m["role"] == "agent"]
        env = [m for m in episode.transcript if m["role"] == "env"]
        # One message per turn, alternating, in order, starting with the env's first message.
        assert [m["role"] for m in messages[:2]] == ["user", "assistant"]
        assert [m["content"] for m in messages if m["role"] == "assistant"] == [
            a["action"] for a in agent
        ]
        assert [m["content"] for m in messages if m["role"] == "user"] == [e["text"] for e in env]
        # No template markup in the messages reward functions are pointed to.
        assert not any("<|im_start|>" in m["content"] for m in messages)
        # TRL's own `completions` is the whole completion as (at most) one message: it cannot
        # give the turns, which is why the rollout passes episode_messages.
        assert len(last["completions"][i]) == 1
