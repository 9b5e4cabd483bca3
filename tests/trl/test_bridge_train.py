"""GRPO on a mixed dataset of native and bridged IDs, through ``trl_env.make_rollout_func``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")
pytest.importorskip("reasoning_gym")
pytest.importorskip("textarena")

import torch
from trl import GRPOConfig, GRPOTrainer

import trl_env

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("silence_trl_experimental"),
    # transformers 5.x deprecation warnings that TRL's own code triggers (as in test_train_e2e).
    pytest.mark.filterwarnings(r"ignore:`gradient_checkpointing\w*` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings(r"ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"),
]

IDS = ["TextGuessNumber-v0", "reasoning_gym/BasicArithmetic-v0", "TextArena/GuessTheNumber-v0"]


def test_train_mixed_native_and_bridged_dataset(tiny_model_dir: str, tmp_path: Path) -> None:
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # see test_train_e2e.one_torch_thread
    try:
        trainer = GRPOTrainer(
            model=tiny_model_dir,
            reward_funcs=[trl_env.env_reward, trl_env.env_success],
            train_dataset=trl_env.make_dataset(IDS, num_tasks=3),
            rollout_func=trl_env.make_rollout_func(max_new_tokens_per_turn=16, max_turns=2),
            args=GRPOConfig(
                output_dir=str(tmp_path),
                use_cpu=True,
                bf16=False,
                per_device_train_batch_size=6,
                num_generations=2,
                max_completion_length=96,
                max_steps=1,
                logging_steps=1,
                report_to="none",
                save_strategy="no",
                disable_tqdm=True,
            ),
        )
        trainer.train()
    finally:
        torch.set_num_threads(previous)
    keys: set[str] = {key for entry in trainer.state.log_history for key in entry}
    for env_id in IDS:
        assert f"env/{env_id}/success_rate" in keys, f"{env_id} was not played: {sorted(keys)}"
    grad_norms: list[Any] = [e["grad_norm"] for e in trainer.state.log_history if "grad_norm" in e]
    assert trainer.state.global_step == 1 and grad_norms
