"""The warm start: its format examples come from each env's own random_action(rng), its loss is on
the replies only, and a run is reproducible from its seed."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import trl_env
from trl_env.trl._warm_start import format_example_for

NATIVE = [spec.id for spec in trl_env.envs.env_specs("catalogue")]


@pytest.mark.parametrize("env_id", NATIVE)
def test_every_catalogue_env_has_a_well_formed_random_reply(env_id: str) -> None:
    example = format_example_for(env_id)
    env = gym.make(env_id)
    env.reset(seed=0)
    reply = example(env, np.random.default_rng(0))
    # A format example is a legal-looking move: the env reads it as a move, not as garbage.
    _, _, _, _, info = env.step(reply)
    assert not info["invalid_action"], (env_id, reply, info.get("error"))


def test_an_env_without_random_action_names_the_fixes() -> None:
    with pytest.raises(ValueError, match="random_action"):
        format_example_for("CartPole-v1")


def test_padded_rows_put_the_loss_on_the_targets_only() -> None:
    from trl_env.trl._warm_start import _padded

    input_ids, attention, labels = _padded([([1, 2, 3], [4, 5]), ([6], [7])], pad_id=0)
    assert input_ids.tolist() == [[1, 2, 3, 4, 5], [6, 7, 0, 0, 0]]
    assert attention.tolist() == [[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]]
    assert labels.tolist() == [[-100, -100, -100, 4, 5], [-100, 7, -100, -100, -100]]


def test_warm_start_is_reproducible_and_fails_before_training(tiny_model_dir: str) -> None:
    import torch

    from trl_env.trl._warm_start import warm_start
    from trl_env.trl.models import load_model_and_tokenizer

    def run(seed: int) -> tuple[list[tuple[int, float]], object]:
        model, tokenizer = load_model_and_tokenizer(tiny_model_dir)
        calls: list[tuple[int, float]] = []
        stats = warm_start(
            model, tokenizer, ["TextLargestNumber-v0", "TextGuessNumber-v0"], steps=3, batch_size=2, seed=seed,
            callback=lambda step, loss: calls.append((step, loss)),
        )  # fmt: skip
        assert not model.training and stats.steps == 3
        assert stats.first_loss == pytest.approx(sum(loss for _, loss in calls) / 3)
        return calls, model

    first, model = run(seed=1)
    assert [step for step, _ in first] == [1, 2, 3]
    assert run(seed=1)[0] == first and run(seed=2)[0] != first
    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(ValueError, match="random_action"):
        warm_start(model, load_model_and_tokenizer(tiny_model_dir)[1], ["CartPole-v1"])
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
