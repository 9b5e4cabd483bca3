"""Turn-level credit (``trl_env.trl._credit``): returns-to-go, group normalization, token-level
advantages that follow the turns of the token stream, equality with plain GRPO for
``credit="episode"``, and short real runs (plain and LoRA, resumed) with ``credit="turn"``.

The expected numbers of the hand-computed tests are written out, with their arithmetic, in the
comments; none is computed by the code under test.
"""

from __future__ import annotations

import argparse
import doctest
import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("trl")

import torch
from trl import GRPOConfig, GRPOTrainer

import trl_env
from trl_env.trl import _credit as credit
from trl_env.trl._credit import (
    TurnCreditGRPOTrainer,
    check_credit,
    normalize_returns,
    returns_to_go,
    turn_advantages,
)
from trl_env.trl.models import build_tiny_tokenizer
from trl_env.trl.training import TrainConfig

pytestmark = [
    pytest.mark.usefixtures("silence_trl_experimental"),
    # transformers 5.x deprecates the `gradient_checkpointing*` names that TRL's GRPOConfig uses.
    pytest.mark.filterwarnings(r"ignore:`gradient_checkpointing\w*` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings(r"ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"),
]

THREE_TURNS_ID = "TestCreditThreeTurns-v0"


class ThreeTurns:
    """A protocol env of exactly three turns whose step reward is read off the reply:
    1.0 if it says "win", -0.1 if it says "bad", else 0.0."""

    last_step_reward = 0.0
    alive = False

    def reset(self, seed: str) -> str:
        self.alive, self.turn, self.last_step_reward = True, 0, 0.0
        return "Play three moves."

    def step(self, action: str) -> str:
        self.turn += 1
        self.last_step_reward = 1.0 if "win" in action else -0.1 if "bad" in action else 0.0
        self.alive = self.turn < 3
        return f"Move {self.turn} noted."


@pytest.fixture(scope="module", autouse=True)
def three_turns_env() -> Any:
    trl_env.register_protocol_env(THREE_TURNS_ID, ThreeTurns, max_episode_steps=5)
    yield THREE_TURNS_ID
    del gym.registry[THREE_TURNS_ID]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Any:
    """One intra-op thread: faster for a 64-wide model, and kind to a shared 2-core machine."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


# ----------------------------------------------------------------------------- the arithmetic


def test_module_doctests_pass() -> None:
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    results = doctest.testmod(credit, optionflags=flags)
    assert results.attempted > 0 and results.failed == 0


def test_returns_to_go_by_hand() -> None:
    # gamma 0.9, rewards (-0.1, 0, 1): G3 = 1, G2 = 0 + 0.9 * 1 = 0.9, G1 = -0.1 + 0.9 * 0.9 = 0.71
    assert returns_to_go([-0.1, 0.0, 1.0], gamma=0.9) == pytest.approx([0.71, 0.9, 1.0])
    assert returns_to_go([-0.1, 0.0, 1.0]) == pytest.approx([0.9, 1.0, 1.0])
    # gamma 0: each turn is judged by its own reward only.
    assert returns_to_go([-0.1, 0.0, 1.0], gamma=0.0) == pytest.approx([-0.1, 0.0, 1.0])
    # A last turn cut by the token budget has no reward of its own: 0.
    assert returns_to_go([0.5, 1.0], turns=3) == pytest.approx([1.5, 1.0, 0.0])
    # No model turn (a failed reset): one value, the whole return.
    assert returns_to_go([-1.0], turns=1) == [-1.0]


def test_terminal_reward_only_with_gamma_1_is_grpo() -> None:
    # Returns 1 and 0, each on every turn: GRPO's (R - mean) / (std + 1e-4) with mean 0.5 and the
    # Bessel-corrected std sqrt(2 * 0.25 / 1) = 0.70711: +-0.5 / 0.70721 = +-0.70700, per turn,
    # whatever the episode lengths.
    advantages = normalize_returns([[1.0, 1.0, 1.0], [0.0]], group_size=2)
    assert advantages == [
        pytest.approx([0.70700] * 3, abs=1e-5),
        pytest.approx([-0.70700], abs=1e-5),
    ]


def test_groups_are_normalized_separately_and_scale_options() -> None:
    returns = [[1.0], [0.0], [3.0], [3.0]]
    assert normalize_returns(returns, 2) == [
        pytest.approx([0.70700], abs=1e-5),
        pytest.approx([-0.70700], abs=1e-5),
        [0.0],  # a group whose returns are all equal has nothing to compare
        [0.0],
    ]
    # "none": centred only; "batch": the std of all four returns around their mean 1.75
    # (sqrt((0.75^2 + 1.75^2 + 2 * 1.25^2) / 3) = sqrt(6.75 / 3) = 1.5), divided into the
    # group-centred values.
    assert normalize_returns(returns, 2, "none") == [[0.5], [-0.5], [0.0], [0.0]]
    batch = normalize_returns(returns, 2, "batch")
    assert batch[0] == pytest.approx([0.5 / 1.5001]) and batch[2] == [0.0]
    assert normalize_returns([[1.0], [2.0]], 1) == [[0.0], [0.0]]  # groups of one: no baseline


def test_three_turn_episode_token_advantages_by_hand() -> None:
    # One group of two 3-turn episodes, gamma 0.9.
    #   A: an invalid reply (-0.1), a valid move (0), the winning move (1.0)
    #      returns-to-go 0.71, 0.9, 1.0 (see test_returns_to_go_by_hand); mean 2.61 / 3 = 0.87
    #   B: three valid moves and a loss: 0, 0, 0; mean 0
    # Group mean (each episode once): (0.87 + 0) / 2 = 0.435
    # Variance: [(0.71-0.435)^2 + (0.9-0.435)^2 + (1-0.435)^2] / 3 = (0.075625 + 0.216225 +
    #   0.319225) / 3 = 0.2036917 for A, 0.435^2 = 0.189225 for B; (0.2036917 + 0.189225) / (2 - 1)
    #   = 0.3929167, std 0.6268307.
    # A: 0.275 / 0.6269307 = 0.43865, 0.465 / 0.6269307 = 0.74171, 0.565 / 0.6269307 = 0.90122
    # B: -0.435 / 0.6269307 = -0.69386 on each turn.
    a1, a2, a3, b = 0.43865, 0.74171, 0.90122, -0.69386
    # Completion tokens: 1 = model (turn), 0 = env; B is shorter (right padding is 0).
    mask = torch.tensor(
        [
            [1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1],  # A: turns at 0-1, 5, 8-10
            [1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0],  # B: turns at 0, 3-4, 6
        ]
    )
    advantages = turn_advantages(
        [[-0.1, 0.0, 1.0], [0.0, 0.0, 0.0]], mask, num_generations=2, gamma=0.9
    )
    expected = torch.tensor(
        [
            [a1, a1, 0, 0, 0, a2, 0, 0, a3, a3, a3],
            [b, 0, 0, b, b, 0, b, 0, 0, 0, 0],
        ]
    )
    assert advantages.shape == mask.shape and advantages.dtype == torch.float32
    torch.testing.assert_close(advantages, expected, atol=2e-5, rtol=0)


def test_episodes_without_model_turns_still_count_in_the_baseline() -> None:
    # B's reset failed (-1 penalty, a masked EOS as completion): it has no trainable token, but
    # its return -1 is in the group: A's 0 then sits above the mean -0.5, like GRPO would say.
    mask = torch.tensor([[1, 1, 0], [0, 0, 0]])
    advantages = turn_advantages([[0.0], [-1.0]], mask, num_generations=2)
    torch.testing.assert_close(
        advantages, torch.tensor([[0.70700, 0.70700, 0.0], [0.0, 0.0, 0.0]]), atol=1e-5, rtol=0
    )


def test_misaligned_turns_are_refused() -> None:
    mask = torch.tensor([[1, 0, 1, 0, 1], [1, 0, 0, 0, 0]])  # three turns, one reward
    with pytest.raises(ValueError, match="3 model turns in its token stream but 1 step rewards"):
        turn_advantages([[1.0], [0.0]], mask, num_generations=2)
    with pytest.raises(ValueError, match="whole groups of 2"):
        normalize_returns([[1.0]], 2)


@pytest.mark.parametrize(
    ("credit_value", "gamma", "match"),
    [
        ("step", 1.0, "credit must be 'episode', 'turn' or 'step-group', got 'step'"),
        ("turn", -0.1, r"gamma must be a number in \[0, 1\]"),
        ("turn", 1.5, r"gamma must be a number in \[0, 1\]"),
        ("turn", float("nan"), r"gamma must be a number in \[0, 1\]"),
        ("turn", True, r"gamma must be a number in \[0, 1\]"),
        ("episode", 0.9, "no effect with credit='episode'"),
    ],
)
def test_bad_credit_and_gamma(credit_value: Any, gamma: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_credit(credit_value, gamma)
    with pytest.raises(ValueError, match=match):
        TrainConfig(["TextGuessNumber-v0"], credit=credit_value, gamma=gamma)
    with pytest.raises(ValueError, match=match):  # before loading anything
        TurnCreditGRPOTrainer(model="unused", credit=credit_value, gamma=gamma)


def test_train_options() -> None:
    from trl_env.cli._train import add_arguments, config_from_args

    parser = argparse.ArgumentParser(prog="trl-env train")
    add_arguments(parser)
    config = config_from_args(parser.parse_args(["TextGuessNumber-v0"]))
    # Left to the run: the tiny model (and a one-turn env, or a GPU) resolves it to "episode".
    assert config.credit is None and config.gamma is None
    assert config.resolved().credit == "episode" and config.resolved().gamma == 1.0
    args = parser.parse_args(["TextGuessNumber-v0", "--credit", "turn", "--gamma", "0.9"])
    config = config_from_args(args)
    assert config.credit == "turn" and config.gamma == 0.9
    config = config_from_args(parser.parse_args(["TextGuessNumber-v0", "--credit", "step-group"]))
    assert config.credit == "step-group"
    with pytest.raises(SystemExit):  # argparse: "invalid choice: 'step' (choose from ...)"
        parser.parse_args(["TextGuessNumber-v0", "--credit", "step"])


# ----------------------------------------------------------------------------- the token stream


class PerEpisodeGenerator:
    """Replies ``replies[episode][turn]`` (with the end-of-turn token), logprob -0.5 each."""

    def __init__(self, tokenizer: Any, replies: Sequence[Sequence[str]]) -> None:
        self.tokenizer, self.replies, self.turn = tokenizer, replies, 0
        self.eos = tokenizer.convert_tokens_to_ids("<|im_end|>")

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int) -> Any:
        samples = []
        for episode in range(len(inputs)):
            text = self.replies[episode][self.turn]
            samples.append([*self.tokenizer.encode(text, add_special_tokens=False), self.eos])
        self.turn += 1
        return samples, [[-0.5] * len(s) for s in samples]


def test_advantages_follow_the_turns_of_the_token_stream() -> None:
    from types import SimpleNamespace

    tokenizer = build_tiny_tokenizer("qwen3")
    replies = [["a bad move", "ok", "I win now"], ["ok", "ok ok ok", "ok"]]
    rollout = trl_env.make_rollout_func(generator=PerEpisodeGenerator(tokenizer, replies))
    prompts = [p for p in trl_env.make_dataset(THREE_TURNS_ID, 1)["prompt"] for _ in range(2)]
    trainer = SimpleNamespace(processing_class=tokenizer, max_completion_length=512)
    output = rollout(prompts, trainer)
    assert output["step_rewards"] == [[-0.1, 0.0, 1.0], [0.0, 0.0, 0.0]]

    width = max(len(ids) for ids in output["completion_ids"])
    mask = torch.tensor([m + [0] * (width - len(m)) for m in output["env_mask"]])
    advantages = turn_advantages(output["step_rewards"], mask, num_generations=2, gamma=0.9)
    expected = normalize_returns(
        [returns_to_go(r, 0.9) for r in output["step_rewards"]], group_size=2
    )
    for row, (ids, env_mask) in enumerate(
        zip(output["completion_ids"], output["env_mask"], strict=True)
    ):
        # Env tokens (and padding) get 0.
        assert all(advantages[row, i] == 0 for i, m in enumerate(env_mask) if m == 0)
        assert torch.all(advantages[row, len(ids) :] == 0)
        # The model tokens split into three runs: each is one turn's sampled reply, and carries
        # that turn's value on every token.
        runs = credit._model_turn_spans(env_mask)
        assert len(runs) == 3
        for turn, (start, end) in enumerate(runs):
            text = tokenizer.decode(ids[start:end])
            assert text == replies[row][turn] + "<|im_end|>"
            values = advantages[row, start:end]
            assert torch.allclose(values, torch.full_like(values, expected[row][turn]))
    # The winning episode's invalid first reply gets less credit than its winning move.
    first, _, last = credit._model_turn_spans(output["env_mask"][0])
    assert advantages[0, first[0]] < advantages[0, last[0]]


# ----------------------------------------------------------------------------- inside GRPOTrainer


def fixed_rollout(tokenizer: Any, rewards: Sequence[Sequence[float]], env_id: str) -> Any:
    """A rollout_func that returns the two hand-built episodes of the by-hand test."""
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    masks = [[1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1], [1, 0, 0, 1, 1, 0, 1]]

    def rollout_func(prompts: list, trainer: Any) -> dict[str, list[Any]]:
        assert len(prompts) == 2
        completions = [[20 + i for i in range(len(m) - 1)] + [eos] for m in masks]
        return {
            "prompt_ids": [[30, 31, 32], [30, 31, 32]],
            "completion_ids": completions,
            "logprobs": [[-1.0] * len(c) for c in completions],
            "env_mask": [list(m) for m in masks],
            "episode_return": [float(sum(r)) for r in rewards],
            "step_rewards": [list(r) for r in rewards],
            "env_id": [env_id, env_id],
        }

    return rollout_func


def make_trainer(
    cls: type[GRPOTrainer],
    model_dir: str,
    tmp_path: Path,
    rewards: Sequence[Sequence[float]],
    env_id: str = THREE_TURNS_ID,
    **kwargs: Any,
) -> GRPOTrainer:
    from trl_env.trl.models import load_model_and_tokenizer

    model, tokenizer = load_model_and_tokenizer(model_dir)
    args = GRPOConfig(
        output_dir=str(tmp_path / cls.__name__),
        use_cpu=True,
        bf16=False,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=16,
        max_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
    )
    kwargs.setdefault("reward_funcs", trl_env.env_reward)
    return cls(
        model=model,
        args=args,
        train_dataset=trl_env.make_dataset(env_id, 4),
        processing_class=tokenizer,
        rollout_func=fixed_rollout(tokenizer, rewards, env_id),
        **kwargs,
    )


def scored(trainer: GRPOTrainer) -> dict[str, Any]:
    rows = [dict(trainer.train_dataset[0]) for _ in range(2)]
    return trainer._generate_and_score_completions(rows)


def test_trainer_puts_the_hand_computed_advantages_on_the_tokens(
    tiny_model_dir: str, tmp_path: Path
) -> None:
    trainer = make_trainer(
        TurnCreditGRPOTrainer,
        tiny_model_dir,
        tmp_path,
        [[-0.1, 0.0, 1.0], [0.0, 0.0, 0.0]],
        credit="turn",
        gamma=0.9,
    )
    output = scored(trainer)
    a1, a2, a3, b = 0.43865, 0.74171, 0.90122, -0.69386  # test_three_turn_..._by_hand
    expected = torch.tensor(
        [[a1, a1, 0, 0, 0, a2, 0, 0, a3, a3, a3], [b, 0, 0, b, b, 0, b, 0, 0, 0, 0]]
    )
    assert output["completion_ids"].shape == (2, 11)
    torch.testing.assert_close(output["advantages"], expected, atol=2e-5, rtol=0)
    loss = trainer.compute_loss(trainer.model, output)
    assert torch.isfinite(loss)


def test_episode_credit_is_plain_grpo(tiny_model_dir: str, tmp_path: Path) -> None:
    rewards = [[-0.1, 0.0, 1.0], [0.0, 0.0, 0.0]]
    plain = make_trainer(GRPOTrainer, tiny_model_dir, tmp_path, rewards)
    ours = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, rewards, credit="episode")
    ours.score_only_model_tokens = False  # bitwise; scoring the model's tokens only: its own test
    torch.manual_seed(0)
    expected = scored(plain)
    torch.manual_seed(0)
    got = scored(ours)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(got[key], value), key
    assert got["advantages"].shape == (2,)
    loss_plain = plain.compute_loss(plain.model, expected)
    loss_ours = ours.compute_loss(ours.model, got)
    assert torch.equal(loss_ours, loss_plain)


def test_turn_credit_without_step_rewards_is_grpo_and_says_so_once(
    tiny_model_dir: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Only the final step is rewarded, gamma 1: every turn gets its episode's GRPO advantage, so
    # the loss is plain GRPO's; the log says once why turn credit adds nothing here.
    rewards = [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    plain = make_trainer(GRPOTrainer, tiny_model_dir, tmp_path, rewards)
    ours = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, rewards, credit="turn")
    expected = scored(plain)
    with caplog.at_level(logging.WARNING, logger="trl_env.trl._credit"):
        got = scored(ours)
        scored(ours)
    said = [r.getMessage() for r in caplog.records if "no per-step rewards" in r.getMessage()]
    assert len(said) == 1 and THREE_TURNS_ID in said[0] and "exactly credit='episode'" in said[0]
    mask = got["completion_mask"] * got["tool_mask"]
    torch.testing.assert_close(got["advantages"], expected["advantages"][:, None] * mask)
    torch.testing.assert_close(
        ours.compute_loss(ours.model, got), plain.compute_loss(plain.model, expected)
    )


def test_other_reward_functions_are_said_not_to_enter_turn_advantages(
    tiny_model_dir: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    rewards = [[0.0, 1.0], [0.0, 0.0]]
    funcs = [trl_env.env_reward, trl_env.env_success]
    with caplog.at_level(logging.WARNING, logger="trl_env.trl._credit"):
        make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, rewards, reward_funcs=funcs)
    assert "'env_success'] are computed and logged but do not enter" in caplog.text


def test_turn_credit_needs_step_rewards(tiny_model_dir: str, tmp_path: Path) -> None:
    trainer = make_trainer(
        TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, [[1.0], [0.0]], credit="turn"
    )
    trainer.rollout_func = lambda prompts, t: {
        k: v
        for k, v in fixed_rollout(t.processing_class, [[1.0], [0.0]], "x")(prompts, t).items()
        if k != "step_rewards"
    }
    with pytest.raises(ValueError, match="needs the 'step_rewards' column"):
        scored(trainer)


# ----------------------------------------------------------------------------- real runs


class RecordingTrainer(TurnCreditGRPOTrainer):
    """Keeps the advantages and loss masks each loss computation saw."""

    seen: list[tuple[torch.Tensor, torch.Tensor]]

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        mask = inputs["completion_mask"] * inputs.get("tool_mask", 1)
        self.seen.append((inputs["advantages"].detach().clone(), mask.clone()))
        return super()._compute_loss(model, inputs)


@pytest.mark.slow
def test_grpo_run_with_turn_credit_on_guess_number(tiny_model_dir: str, tmp_path: Path) -> None:
    trainer = RecordingTrainer(
        model=tiny_model_dir,
        reward_funcs=trl_env.env_reward,
        train_dataset=trl_env.make_dataset("TextGuessNumber-v0", 8, seed=3),
        rollout_func=trl_env.make_rollout_func(max_new_tokens_per_turn=6, system_prompt=None),
        args=GRPOConfig(
            output_dir=str(tmp_path / "out"),
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=4,
            num_generations=4,
            max_completion_length=256,
            max_steps=2,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            disable_tqdm=True,
        ),
        credit="turn",
        gamma=0.9,
    )
    trainer.seen = []
    trainer.train()
    assert trainer.state.global_step == 2 and len(trainer.seen) == 2
    history = [e for e in trainer.state.log_history if "loss" in e]
    assert len(history) == 2 and all(torch.isfinite(torch.tensor(e["loss"])) for e in history)
    for advantages, mask in trainer.seen:
        assert advantages.shape == mask.shape  # (B, T): per token
        assert torch.all(advantages[mask == 0] == 0)
    # The random model's replies are mostly invalid (-0.1 each): later turns have less penalty
    # ahead of them, so some episode's turns get different advantages.
    assert any(
        len(set(row[m.bool()].tolist())) > 1
        for adv, mask in trainer.seen
        for row, m in zip(adv, mask, strict=True)
    )


@pytest.mark.slow
def test_train_command_with_turn_credit_lora_and_resume(tmp_path: Path) -> None:
    pytest.importorskip("peft")
    from trl_env.trl.training import train

    out = tmp_path / "run"
    settings: dict[str, Any] = {
        "credit": "turn",
        "gamma": 0.9,
        "lora": True,
        "output_dir": str(out),
        "num_tasks": 8,
        "num_generations": 4,
        "per_device_train_batch_size": 4,
        "max_completion_length": 64,
        "max_new_tokens_per_turn": 6,
        "warm_start_steps": 0,
        "save_steps": 1,
        "plot": False,
        "progress": False,
    }
    lines: list[str] = []
    first = train("TextGuessNumber-v0", max_steps=1, log=lines.append, **settings)
    assert "credit turn (gamma 0.9)" in lines[0]
    assert (out / "checkpoint-1" / "adapter_config.json").is_file()
    # Another model setting would put the checkpoint's adapter on another model: refused, before
    # the run folder is touched.
    with pytest.raises(ValueError, match=r"other model settings \(lora true -> false\)"):
        train("TextGuessNumber-v0", max_steps=2, resume=True, **{**settings, "lora": False})
    resumed = train("TextGuessNumber-v0", max_steps=2, resume=True, log=lines.append, **settings)
    resuming = next(line for line in lines if "resuming from" in line)
    # What changed from the run's settings is named, so that nothing changes silently.
    assert "with settings changed from the run's: max_steps 1 -> 2" in resuming, resuming
    # Step 0 holds the held-out eval before training (evals are on by default).
    assert [int(row["step"]) for row in resumed.history] == [0, 1, 2]
    assert len(resumed.rewards()) == 2
    assert (out / "final" / "adapter_config.json").is_file()
    assert first.config.credit == resumed.config.credit == "turn"


@pytest.mark.slow
def test_a_group_that_spans_two_processes(tiny_model_dir: str, tmp_path: Path) -> None:
    """Under ``accelerate launch`` with 2 processes, each holding half of a group, every process
    gets the advantages one process computes for the whole group (``ddp_credit.py`` checks)."""
    env = {
        **os.environ,
        "TRL_EXPERIMENTAL_SILENCE": "1",
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONWARNINGS": "ignore::FutureWarning",
    }
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi_gpu",  # starts the processes; the script's use_cpu=True makes it gloo on CPU
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--main_process_port",
        "0",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        str(Path(__file__).resolve().parent / "ddp_credit.py"),
        str(tmp_path),
        "--model",
        tiny_model_dir,
    ]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    match = re.search(r"^DDP_CREDIT_OK (.*)$", result.stdout, flags=re.MULTILINE)
    assert match, output[-6000:]
    advantages = json.loads(match.group(1))["advantages"]
    assert len(advantages) == 2 and all(len(rank) == 2 for rank in advantages)
