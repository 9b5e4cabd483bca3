"""Turn-level credit with two processes whose GRPO group spans both, on CPU.

Run by ``tests/trl/test_credit.py`` under ``accelerate launch --multi_gpu --num_processes 2``
(``GRPOConfig(use_cpu=True)`` makes the two processes a gloo group; see ``ddp_train.py``).

Each process holds 2 episodes of a group of 4 (``per_device_train_batch_size=2``,
``num_generations=4``). The rollout is fixed: rank 0 plays episodes A and B, rank 1 C and D, with
known step rewards. Every process must get, for its own two episodes, exactly the advantages that
one process computes for the whole group [A, B, C, D]: the returns of the other process's episodes
must enter the baseline (normalizing locally would compare A with B only). Prints
``DDP_CREDIT_OK {json}`` on the main process and exits 0; any failed check raises.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch
from accelerate.utils import gather_object
from trl import GRPOConfig

import trl_env
from trl_env.trl._credit import TurnCreditGRPOTrainer, turn_advantages
from trl_env.trl.models import build_tiny_model

# Per rank: two episodes, each (env_mask of its completion, step rewards).
EPISODES = {
    0: [([1, 1, 0, 1, 0, 1], [-0.1, 0.0, 1.0]), ([1, 0, 1], [0.0, 0.0])],
    1: [([1, 0, 1, 1, 0, 1], [0.0, -0.1, 0.0]), ([1, 1, 1], [0.5])],
}
GAMMA = 0.9


def expected_advantages(rank: int, width: int) -> torch.Tensor:
    """What one process computes for the whole group, restricted to ``rank``'s episodes."""
    everyone = EPISODES[0] + EPISODES[1]
    mask = torch.tensor([m + [0] * (width - len(m)) for m, _ in everyone])
    advantages = turn_advantages([r for _, r in everyone], mask, num_generations=4, gamma=GAMMA)
    return advantages[2 * rank : 2 * rank + 2]


class Recording(TurnCreditGRPOTrainer):
    seen: list[torch.Tensor]

    def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        output = super()._generate_and_score_completions(inputs)
        self.seen.append(output["advantages"].detach().cpu().clone())
        return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--model", help="a model directory (default: build a tiny one)")
    args = parser.parse_args(argv)
    rank = int(os.environ.get("RANK", "0"))
    model = args.model or build_tiny_model(args.output_dir / f"tiny-rank{rank}")

    def rollout_func(prompts: list, trainer: Any) -> dict[str, list[Any]]:
        episodes = EPISODES[trainer.accelerator.process_index]
        eos = trainer.processing_class.convert_tokens_to_ids("<|im_end|>")
        completions = [[20 + i for i in range(len(m) - 1)] + [eos] for m, _ in episodes]
        return {
            "prompt_ids": [[30, 31, 32] for _ in episodes],
            "completion_ids": completions,
            "logprobs": [[-1.0] * len(c) for c in completions],
            "env_mask": [list(m) for m, _ in episodes],
            "episode_return": [float(sum(r)) for _, r in episodes],
            "step_rewards": [list(r) for _, r in episodes],
        }

    trainer = Recording(
        model=model,
        reward_funcs=trl_env.env_reward,
        train_dataset=trl_env.make_dataset("TextGuessNumber-v0", 4),
        rollout_func=rollout_func,
        args=GRPOConfig(
            output_dir=str(args.output_dir / "out"),
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=2,
            num_generations=4,
            max_completion_length=16,
            max_steps=1,
            shuffle_dataset=False,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            disable_tqdm=True,
        ),
        credit="turn",
        gamma=GAMMA,
    )
    trainer.seen = []
    trainer.train()

    accelerator = trainer.accelerator
    assert accelerator.num_processes == 2, accelerator.num_processes
    assert len(trainer.seen) == 1, len(trainer.seen)
    got = trainer.seen[0]
    expected = expected_advantages(accelerator.process_index, got.shape[1])
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=0)
    everything = gather_object([got.tolist()])
    if accelerator.is_main_process:
        print("DDP_CREDIT_OK " + json.dumps({"advantages": everything}), flush=True)
    accelerator.wait_for_everyone()
    return 0


if __name__ == "__main__":
    sys.exit(main())
