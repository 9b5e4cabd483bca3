"""Step-group credit (``credit="step-group"``, after GiGPO): turns of a GRPO group that answered the
same observation are also normalized among themselves, on top of turn credit.

The expected numbers of the hand-computed tests are written out, with their arithmetic, in the
comments; none is computed by the code under test.
"""

from __future__ import annotations

import argparse
import logging
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("trl")

import torch
from trl import GRPOConfig

import trl_env
from tests.trl.test_credit import ThreeTurns  # the same three-turn env, here under ENV_ID
from trl_env.trl._credit import (
    TurnCreditGRPOTrainer,
    _model_turn_spans,
    normalize_returns,
    returns_to_go,
    step_group_advantages,
    turn_advantages,
    turn_observations,
)
from trl_env.trl._credit_modes import CREDITS, check_credit
from trl_env.trl.models import build_tiny_tokenizer
from trl_env.trl.training import TrainConfig

pytestmark = [
    pytest.mark.usefixtures("silence_trl_experimental"),
    # transformers 5.x deprecates the `gradient_checkpointing*` names that TRL's GRPOConfig uses.
    pytest.mark.filterwarnings(r"ignore:`gradient_checkpointing\w*` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings(r"ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"),
]

ENV_ID = "TestStepGroupThreeTurns-v0"


@pytest.fixture(scope="module", autouse=True)
def three_turns_env() -> Any:
    trl_env.register_protocol_env(ENV_ID, ThreeTurns, max_episode_steps=5)
    yield ENV_ID
    del gym.registry[ENV_ID]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Any:
    """One intra-op thread: faster for a 64-wide model, and kind to a shared 2-core machine."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


# ----------------------------------------------------------------------------- the arithmetic


def test_step_group_credit_is_a_credit_mode() -> None:
    assert CREDITS == ("episode", "turn", "step-group")
    check_credit("step-group", 0.9)
    check_credit("step-group", 0.0)
    config = TrainConfig(["TextHangman-v0"], credit="step-group", gamma=0.95)
    assert config.credit == "step-group" and config.gamma == 0.95
    with pytest.raises(ValueError, match="'episode', 'turn' or 'step-group', got 'steps'"):
        check_credit("steps", 1.0)


def test_train_option() -> None:
    from trl_env.cli._train import add_arguments, config_from_args

    parser = argparse.ArgumentParser(prog="trl-env train")
    add_arguments(parser)
    args = parser.parse_args(["TextHangman-v0", "--credit", "step-group", "--gamma", "0.9"])
    config = config_from_args(args)
    assert config.credit == "step-group" and config.gamma == 0.9


def test_three_episodes_by_hand() -> None:
    # One group of three episodes of a word game, gamma 0.5. Observations are the env's messages.
    #   A: rewards (-0.1, 0, 1.0), observations ("start", "E hit", "A hit")
    #      returns-to-go: G3 = 1.0, G2 = 0 + 0.5 * 1 = 0.5, G1 = -0.1 + 0.5 * 0.5 = 0.15
    #   B: rewards (0, 0, 0), observations ("start", "E hit", "Z miss"): G = (0, 0, 0)
    #   C: rewards (0, 0.5), observations ("start", "T hit"): G2 = 0.5, G1 = 0.5 * 0.5 = 0.25
    rewards = [[-0.1, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.5]]
    seen = [["start", "E hit", "A hit"], ["start", "E hit", "Z miss"], ["start", "T hit"]]
    returns = [returns_to_go(r, 0.5) for r in rewards]
    assert returns == [pytest.approx([0.15, 0.5, 1.0]), [0.0, 0.0, 0.0], [0.25, 0.5]]
    #
    # Turn part (credit="turn"): episode means 0.55, 0, 0.375; group mean 0.925 / 3 = 0.308333.
    #   Variance: A ((-0.158333)^2 + 0.191667^2 + 0.691667^2) / 3 = (0.025069 + 0.036736 +
    #   0.478403) / 3 = 0.180069; B 0.308333^2 = 0.095069; C (0.058333^2 + 0.191667^2) / 2 =
    #   (0.003403 + 0.036736) / 2 = 0.020069; (0.180069 + 0.095069 + 0.020069) / (3 - 1) =
    #   0.147604, std 0.384193, + 1e-4 = 0.384293.
    #   A: -0.158333 / 0.384293 = -0.41201, 0.191667 / 0.384293 = 0.49875, 0.691667 / ... = 1.79984
    #   B: -0.308333 / 0.384293 = -0.80234 on each turn
    #   C: -0.058333 / 0.384293 = -0.15179, 0.49875
    turn = [[-0.41201, 0.49875, 1.79984], [-0.80234] * 3, [-0.15179, 0.49875]]
    assert normalize_returns(returns, 3) == [pytest.approx(t, abs=1e-5) for t in turn]
    #
    # Step part. "start" (all three first turns): returns 0.15, 0, 0.25, mean 0.4 / 3 = 0.133333,
    #   deviations 0.016667, -0.133333, 0.116667; variance (0.000278 + 0.017778 + 0.013611) /
    #   (3 - 1) = 0.015833, std 0.125831, + 1e-4 = 0.125931:
    #   A 0.016667 / 0.125931 = 0.13235, B -0.133333 / 0.125931 = -1.05878, C 0.92644.
    # "E hit" (A's and B's second turns): returns 0.5 and 0, mean 0.25, std sqrt(2 * 0.25^2 / 1) =
    #   0.353553, + 1e-4: +-0.25 / 0.353653 = +-0.70691.
    # "A hit", "Z miss", "T hit": one turn each, step part 0.
    step = [[0.13235, 0.70691, 0.0], [-1.05878, -0.70691, 0.0], [0.92644, 0.0]]
    got_step = step_group_advantages(returns, seen, 3)
    assert got_step == [pytest.approx(s, abs=1e-5) for s in step]
    #
    # Advantage = turn part + step part:
    #   A: -0.41201 + 0.13235 = -0.27966, 0.49875 + 0.70691 = 1.20566, 1.79984
    #   B: -0.80234 - 1.05878 = -1.86112, -0.80234 - 0.70691 = -1.50925, -0.80234
    #   C: -0.15179 + 0.92644 = 0.77465, 0.49875
    # C's first move, below the group's baseline under turn credit, is the best of the three
    # moves made from "start" (it alone earned something right away): step-group credit says so.
    a1, a2, a3 = -0.27966, 1.20566, 1.79984
    b1, b2, b3 = -1.86112, -1.50925, -0.80234
    c1, c2 = 0.77465, 0.49875
    mask = torch.tensor(
        [
            [1, 1, 0, 1, 0, 0, 1, 1],  # A: turns at 0-1, 3, 6-7
            [1, 0, 1, 1, 0, 1, 0, 0],  # B: turns at 0, 2-3, 5
            [1, 0, 0, 1, 1, 1, 0, 0],  # C: turns at 0, 3-5
        ]
    )
    advantages = turn_advantages(rewards, mask, num_generations=3, gamma=0.5, observations=seen)
    expected = torch.tensor(
        [
            [a1, a1, 0, a2, 0, 0, a3, a3],
            [b1, 0, b2, b2, 0, b3, 0, 0],
            [c1, 0, 0, c2, c2, c2, 0, 0],
        ]
    )
    torch.testing.assert_close(advantages, expected, atol=3e-5, rtol=0)


def test_scale_none_centres_the_step_groups_only() -> None:
    # The returns of test_three_episodes_by_hand; "none": deviations from the step group's mean.
    returns = [[0.15, 0.5, 1.0], [0.0, 0.0, 0.0], [0.25, 0.5]]
    seen = [["start", "E hit", "A hit"], ["start", "E hit", "Z miss"], ["start", "T hit"]]
    got = step_group_advantages(returns, seen, 3, "none")
    expected = [[0.016667, 0.25, 0.0], [-0.133333, -0.25, 0.0], [0.116667, 0.0]]
    assert got == [pytest.approx(e, abs=1e-6) for e in expected]


def test_a_state_met_twice_in_one_episode_is_a_step_group() -> None:
    # A: an invalid reply left the board as it was (same message), then the winning move; gamma 1:
    # G = (-0.1 + 1.0, 1.0) = (0.9, 1.0). Step group "board": mean 0.95, std sqrt(2 * 0.05^2 / 1)
    # = 0.070711, + 1e-4 = 0.070811: -0.05 / 0.070811 = -0.70611 and +0.70611. B's one turn saw
    # another message: 0. The invalid reply is judged against the move made from the same state.
    got = step_group_advantages([[0.9, 1.0], [0.0]], [["board", "board"], ["other"]], 2)
    assert got == [pytest.approx([-0.70611, 0.70611], abs=1e-5), [0.0]]


def test_equal_returns_in_a_step_group_add_nothing() -> None:
    got = step_group_advantages([[1.0, 0.5], [1.0, 0.0]], [["s", "x"], ["s", "y"]], 2)
    assert got == [[0.0, 0.0], [0.0, 0.0]]


def _random_batch(
    rng: random.Random, groups: int, size: int
) -> tuple[list[list[float]], torch.Tensor]:
    rewards = [
        [rng.choice([-0.1, 0.0, 0.0, 0.3, 1.0]) for _ in range(rng.randint(1, 5))]
        for _ in range(groups * size)
    ]
    width = 3 * max(len(r) for r in rewards) + 1
    mask = torch.zeros(len(rewards), width, dtype=torch.long)
    for row, episode in enumerate(rewards):
        for turn in range(len(episode)):  # turns of 1 or 2 tokens, one env token between
            mask[row, 3 * turn : 3 * turn + rng.randint(1, 2)] = 1
    return rewards, mask


@pytest.mark.parametrize("scale", ["group", "batch", "none"])
@pytest.mark.parametrize("gamma", [1.0, 0.9, 0.0])
def test_without_shared_observations_it_is_turn_credit(scale: str, gamma: float) -> None:
    rng = random.Random(f"{scale}{gamma}")
    rewards, mask = _random_batch(rng, groups=3, size=4)
    # Every turn of a group saw its own message; the groups share theirs (each group is one task,
    # so step groups never span two GRPO groups): no step group of two.
    seen = [[f"episode {i % 4} turn {t}" for t in range(len(r))] for i, r in enumerate(rewards)]
    turn = turn_advantages(rewards, mask, num_generations=4, gamma=gamma, scale_rewards=scale)
    steps = turn_advantages(
        rewards, mask, num_generations=4, gamma=gamma, scale_rewards=scale, observations=seen
    )
    assert torch.equal(steps, turn)
    assert turn.abs().sum() > 0  # not trivially equal


def test_gamma_applies_as_in_turn_credit() -> None:
    # Two episodes that both saw "s0" then "s1": rewards A (0, 1), B (0, 0).
    # gamma 1: A's G = (1, 1), B's (0, 0): the step terms at "s0" and "s1" are +-0.5 / (0.707107 +
    #   1e-4) = +-0.70700 each.
    # gamma 0: each turn its own reward: A (0, 1), B (0, 0). "s0" holds 0 and 0: step term 0;
    #   "s1": +-0.70700. Turn part, gamma 0: episode means 0.5 and 0, group mean 0.25; variance
    #   ((0.25^2 + 0.75^2) / 2 + 0.25^2) / 1 = 0.3125 + 0.0625 = 0.375, std 0.612372, + 1e-4:
    #   A (-0.25 / 0.612472 = -0.40818, 0.75 / 0.612472 = 1.22454), B (-0.40818, -0.40818).
    rewards = [[0.0, 1.0], [0.0, 0.0]]
    seen = [["s0", "s1"], ["s0", "s1"]]
    mask = torch.tensor([[1, 0, 1], [1, 0, 1]])
    for gamma, steps in ((1.0, [0.70700, 0.70700]), (0.0, [0.0, 0.70700])):
        returns = [returns_to_go(r, gamma) for r in rewards]
        got = step_group_advantages(returns, seen, 2)
        assert got == [pytest.approx(steps, abs=1e-5), pytest.approx([-s for s in steps], abs=1e-5)]
    advantages = turn_advantages(rewards, mask, num_generations=2, gamma=0.0, observations=seen)
    expected = torch.tensor(
        [[-0.40818, 0.0, 1.22454 + 0.70700], [-0.40818, 0.0, -0.40818 - 0.70700]]
    )
    torch.testing.assert_close(advantages, expected, atol=2e-5, rtol=0)


def test_observations_follow_the_model_turns() -> None:
    # A last turn cut by the token budget (3 model turns, 2 rewards) answered the third message;
    # the env's message after the last turn, when there is one, belongs to no turn.
    mask = torch.tensor([[1, 0, 1, 0, 1], [1, 0, 1, 0, 0]])
    seen = [["s0", "s1", "s2"], ["s0", "s1", "end"]]
    got = turn_advantages([[0.0, 1.0], [0.0, 0.0]], mask, num_generations=2, observations=seen)
    # Returns A (1, 1, 0), B (0, 0). Turn part: episode means 2/3 and 0, group mean 1/3; variance
    # ((2/3)^2 * 2 + (1/3)^2) / 3 + (1/3)^2 = 0.333333 + 0.111111 = 0.444444, std 0.666667:
    # A (0.666667 / 0.666767 = 0.99985, 0.99985, -0.333333 / 0.666767 = -0.49992),
    # B (-0.49992, -0.49992). Step groups "s0", "s1": +-0.70700; "s2" alone ("end" is no turn's).
    expected = torch.tensor(
        [
            [0.99985 + 0.70700, 0, 0.99985 + 0.70700, 0, -0.49992],
            [-0.49992 - 0.70700, 0, -0.49992 - 0.70700, 0, 0],
        ]
    )
    torch.testing.assert_close(got, expected, atol=2e-5, rtol=0)
    with pytest.raises(ValueError, match="3 model turns in its token stream but 2 observations"):
        turn_advantages(
            [[0.0, 1.0], [0.0, 0.0]], mask, num_generations=2, observations=[["s0", "s1"], ["s0"]]
        )
    with pytest.raises(ValueError, match="observations for 1 episodes"):
        turn_advantages([[0.0, 1.0], [0.0, 0.0]], mask, num_generations=2, observations=[["s0"]])


def test_an_episode_without_model_turns_is_in_no_step_group() -> None:
    # B's reset failed (-1, no trainable token, one env message): it counts in the group's
    # baseline as in turn credit, but forms no step group with A's first turn.
    mask = torch.tensor([[1, 1, 0], [0, 0, 0]])
    seen = [["[environment error: x]"], ["[environment error: x]"]]
    got = turn_advantages([[0.0], [-1.0]], mask, num_generations=2, observations=seen)
    torch.testing.assert_close(got, turn_advantages([[0.0], [-1.0]], mask, num_generations=2))


# ----------------------------------------------------------------------------- the rollout


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


def test_the_rollout_gives_each_turn_its_observation() -> None:
    from types import SimpleNamespace

    tokenizer = build_tiny_tokenizer("qwen3")
    replies = [["a bad move", "ok", "I win now"], ["ok", "ok ok ok", "ok"]]
    rollout = trl_env.make_rollout_func(generator=PerEpisodeGenerator(tokenizer, replies))
    prompts = [p for p in trl_env.make_dataset(ENV_ID, 1)["prompt"] for _ in range(2)]
    trainer = SimpleNamespace(processing_class=tokenizer, max_completion_length=512)
    output = rollout(prompts, trainer)
    seen = [turn_observations(messages) for messages in output["episode_messages"]]
    messages = ["Play three moves.", "Move 1 noted.", "Move 2 noted.", "Move 3 noted."]
    assert seen == [messages, messages]
    # This env's messages do not depend on the replies: each turn index is one step group.
    width = max(len(ids) for ids in output["completion_ids"])
    mask = torch.tensor([m + [0] * (width - len(m)) for m in output["env_mask"]])
    got = turn_advantages(
        output["step_rewards"], mask, num_generations=2, gamma=0.9, observations=seen
    )
    turn = turn_advantages(output["step_rewards"], mask, num_generations=2, gamma=0.9)
    # Returns A (0.71, 0.9, 1.0), B (0, 0, 0): step terms +-0.355 / (0.502046 + 1e-4) = +-0.70697,
    # +-0.45 / (0.636396 + 1e-4) = +-0.70700, +-0.5 / (0.707107 + 1e-4) = +-0.70700.
    step = got - turn
    for row, sign in ((0, 1.0), (1, -1.0)):
        starts = [s for s, _ in _model_turn_spans(output["env_mask"][row])]
        values = [step[row, s].item() for s in starts]
        assert values == pytest.approx([sign * 0.70697, sign * 0.70700, sign * 0.70700], abs=1e-5)


# ----------------------------------------------------------------------------- inside GRPOTrainer

MASKS = [[1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1], [1, 0, 0, 1, 1, 0, 1]]
REWARDS = [[-0.1, 0.0, 1.0], [0.0, 0.0, 0.0]]
# Both episodes' first two turns saw the same messages; their third did not.
OBSERVATIONS = [["Play.", "Noted.", "Board A."], ["Play.", "Noted.", "Board B."]]


def fixed_rollout(tokenizer: Any, messages: bool = True) -> Any:
    """A rollout_func that returns two hand-built episodes (with their env messages)."""
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")

    def rollout_func(prompts: list, trainer: Any) -> dict[str, list[Any]]:
        assert len(prompts) == 2
        completions = [[20 + i for i in range(len(m) - 1)] + [eos] for m in MASKS]
        output: dict[str, list[Any]] = {
            "prompt_ids": [[30, 31, 32], [30, 31, 32]],
            "completion_ids": completions,
            "logprobs": [[-1.0] * len(c) for c in completions],
            "env_mask": [list(m) for m in MASKS],
            "episode_return": [float(sum(r)) for r in REWARDS],
            "step_rewards": [list(r) for r in REWARDS],
            "env_id": [ENV_ID, ENV_ID],
        }
        if messages:
            output["episode_messages"] = [
                [
                    m
                    for text in seen
                    for m in (
                        {"role": "user", "content": text},
                        {"role": "assistant", "content": "x"},
                    )
                ]
                for seen in OBSERVATIONS
            ]
        return output

    return rollout_func


def make_trainer(model_dir: str, tmp_path: Path, messages: bool = True) -> TurnCreditGRPOTrainer:
    from trl_env.trl.models import load_model_and_tokenizer

    model, tokenizer = load_model_and_tokenizer(model_dir)
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        use_cpu=True,
        bf16=False,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=16,
        max_steps=1,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        seed=0,
    )
    return TurnCreditGRPOTrainer(
        model=model,
        reward_funcs=trl_env.env_reward,
        args=args,
        train_dataset=trl_env.make_dataset(ENV_ID, 4),
        processing_class=tokenizer,
        rollout_func=fixed_rollout(tokenizer, messages),
        credit="step-group",
        gamma=0.9,
    )


def test_trainer_puts_the_hand_computed_advantages_on_the_tokens_and_trains(
    tiny_model_dir: str, tmp_path: Path
) -> None:
    trainer = make_trainer(tiny_model_dir, tmp_path)
    rows = [dict(trainer.train_dataset[0]) for _ in range(2)]
    output = trainer._generate_and_score_completions(rows)
    # Turn part, gamma 0.9 (tests/trl/test_credit.py's test_three_turn_episode_..._by_hand):
    #   A 0.43865, 0.74171, 0.90122; B -0.69386 on each turn (returns A 0.71, 0.9, 1.0; B 0).
    # Step part: "Play." holds 0.71 and 0: +-0.355 / (0.71 / sqrt(2) + 1e-4) = +-0.355 / 0.502146
    #   = +-0.70697; "Noted." holds 0.9 and 0: +-0.45 / 0.636496 = +-0.70700; "Board A."/"Board B.":
    #   alone, 0.
    # A: 0.43865 + 0.70697 = 1.14562, 0.74171 + 0.70700 = 1.44871, 0.90122
    # B: -0.69386 - 0.70697 = -1.40083, -0.69386 - 0.70700 = -1.40086, -0.69386
    a1, a2, a3 = 1.14562, 1.44871, 0.90122
    b1, b2, b3 = -1.40083, -1.40086, -0.69386
    expected = torch.tensor(
        [[a1, a1, 0, 0, 0, a2, 0, 0, a3, a3, a3], [b1, 0, 0, b2, b2, 0, b3, 0, 0, 0, 0]]
    )
    torch.testing.assert_close(output["advantages"], expected, atol=3e-5, rtol=0)
    assert torch.isfinite(trainer.compute_loss(trainer.model, output))
    # One real optimizer step with step-group credit.
    before = [p.detach().clone() for p in trainer.model.parameters() if p.requires_grad]
    trainer.train()
    assert trainer.state.global_step == 1
    losses = [e["loss"] for e in trainer.state.log_history if "loss" in e]
    assert len(losses) == 1 and torch.isfinite(torch.tensor(losses[0]))
    after = [p for p in trainer.model.parameters() if p.requires_grad]
    assert any(not torch.equal(a, b) for a, b in zip(after, before, strict=True))


def test_trainer_needs_the_episode_messages(tiny_model_dir: str, tmp_path: Path) -> None:
    trainer = make_trainer(tiny_model_dir, tmp_path, messages=False)
    rows = [dict(trainer.train_dataset[0]) for _ in range(2)]
    with pytest.raises(ValueError, match="credit='step-group' needs the 'episode_messages'"):
        trainer._generate_and_score_completions(rows)


def test_terminal_only_rewards_are_said_without_the_grpo_claim(
    tiny_model_dir: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    trainer = make_trainer(tiny_model_dir, tmp_path)
    rows = [{**dict(trainer.train_dataset[0]), "env_id": ENV_ID} for _ in range(2)]
    with caplog.at_level(logging.WARNING, logger="trl_env.trl._credit"):
        trainer._say_if_terminal_only(rows, [[0.0, 1.0], [0.0, 0.0]])
    said = [r.getMessage() for r in caplog.records if "no per-step rewards" in r.getMessage()]
    assert len(said) == 1 and "credit='step-group'" in said[0]
    assert "exactly credit='episode'" not in said[0]  # the first turns get a step term too


@pytest.mark.slow
def test_train_command_with_step_group_credit(tmp_path: Path) -> None:
    from trl_env.trl.training import train

    result = train(
        "TextGuessNumber-v0",
        credit="step-group",
        gamma=0.9,
        output_dir=str(tmp_path / "run"),
        num_tasks=4,
        num_generations=4,
        per_device_train_batch_size=4,
        max_completion_length=64,
        max_new_tokens_per_turn=6,
        warm_start_steps=0,
        max_steps=1,
        eval_every=0,
        plot=False,
        progress=False,
        log=lambda line: None,
    )
    assert result.config.credit == "step-group"
    assert len(result.rewards()) == 1
