"""Two-process GRPO training on CPU, for ``accelerate launch --num_processes 2 --cpu``.

Run by ``tests/trl/test_train_e2e.py``; also runnable by hand::

    accelerate launch --multi_gpu --num_processes 2 tests/trl/ddp_train.py /tmp/ddp [--model DIR]

``--multi_gpu`` is what starts two processes (through torchrun); ``GRPOConfig(use_cpu=True)``
then makes them a ``MULTI_CPU`` group over gloo, no GPU needed. (``accelerate launch --cpu
--num_processes 2`` starts only one process unless an MPI hostfile is given.)

Each step's two prompts go one to each process (``shuffle_dataset=False``): one process plays a
one-turn game, the other Wordle (several turns). The rollout syncs the turn loop across processes
with ``accelerator.gather``, so the process whose games ended early keeps making (empty)
generation calls until the other's are done. The held-out eval runs once, on the main process,
and the saved rollouts of a step hold both processes' episodes. The script checks that, then prints
``DDP_TRAIN_OK {json}`` on the main process and exits 0; any failed check raises.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import gymnasium as gym
import torch
from accelerate.utils import DistributedType, gather_object
from torch.nn.parallel import DistributedDataParallel
from trl import GRPOConfig, GRPOTrainer

import trl_env
from trl_env._rollout_records import step_file
from trl_env.trl.models import build_tiny_model
from trl_env.trl.training._heldout import HeldOutEvalCallback
from trl_env.trl.training._recording import RecordingGRPOTrainer

ONE_SHOT_ID = "TestDDPOneShot-v0"


class OneShot:
    """A protocol env that ends after one move and pays 1.0 for any move."""

    last_step_reward = 0.0
    alive = False

    def reset(self, seed: str) -> str:
        self.alive, self.last_step_reward = True, 0.0
        return "Say anything at all; every answer wins."

    def step(self, action: str) -> str:
        self.alive, self.last_step_reward = False, 1.0
        return "You win."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output_dir", type=Path)
    parser.add_argument("--model", help="a model directory (default: build a tiny one)")
    parser.add_argument("--max-steps", type=int, default=2)
    args = parser.parse_args(argv)

    if ONE_SHOT_ID not in gym.registry:
        trl_env.register_protocol_env(ONE_SHOT_ID, OneShot, max_episode_steps=3)
    rank = int(os.environ.get("RANK", "0"))
    # Each process builds its own copy (deterministic, milliseconds): no cross-process file race.
    model = args.model or build_tiny_model(args.output_dir / f"tiny-rank{rank}")

    # Row i of the dataset is the i-th prompt of a step; with shuffle_dataset=False, step prompts
    # are rows (0, 1), one per process: one process gets the one-turn game, the other Wordle.
    dataset = trl_env.make_dataset([ONE_SHOT_ID, "TextWordle-v0"], num_tasks=2)
    assert sorted(dataset["env_id"]) == sorted([ONE_SHOT_ID, "TextWordle-v0"])

    rollout = trl_env.make_rollout_func(max_new_tokens_per_turn=16)
    calls: list[dict[str, object]] = []

    class Spy:
        """trl-env's rollout, recording each call (and showing its episodes to the trainer)."""

        config = rollout.config

        @property
        def last_episodes(self) -> list:
            return rollout.last_episodes

        def __call__(self, prompts: list, trainer: GRPOTrainer) -> dict:
            return rollout_func(prompts, trainer)

    def rollout_func(prompts: list, trainer: GRPOTrainer) -> dict:
        output = rollout(prompts, trainer)
        episodes = rollout.last_episodes
        calls.append(
            {
                "rank": trainer.accelerator.process_index,
                "env_ids": sorted({e.task.env_id for e in episodes}),
                "local_turns": max(e.turns for e in episodes),
                "generation_calls": rollout.generation_calls,
            }
        )
        return output

    trainer = RecordingGRPOTrainer(
        model=model,
        reward_funcs=trl_env.env_reward,
        train_dataset=dataset,
        rollout_func=Spy(),
        args=GRPOConfig(
            output_dir=str(args.output_dir / "out"),
            use_cpu=True,
            bf16=False,
            per_device_train_batch_size=4,
            num_generations=4,
            max_completion_length=128,
            max_steps=args.max_steps,
            shuffle_dataset=False,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            disable_tqdm=True,
        ),
        credit="episode",
        save_rollouts_to=args.output_dir / "out",
    )
    # Held-out evals before the first step and after each: on the main process only.
    evals = HeldOutEvalCallback(trainer, "TextWordle-v0", every=1, episodes=4, log=print)
    trainer.add_callback(evals)
    trainer.train()

    accelerator = trainer.accelerator
    world_size = accelerator.num_processes
    assert world_size == 2, f"expected 2 processes, got {world_size}"
    # Real data parallelism on CPU: the trained model is wrapped in DDP, over gloo.
    assert accelerator.distributed_type == DistributedType.MULTI_CPU, accelerator.distributed_type
    assert isinstance(trainer.model_wrapped, DistributedDataParallel), type(trainer.model_wrapped)
    assert torch.distributed.get_backend() == "gloo"
    records = gather_object(calls)
    per_step: dict[int, list[dict[str, object]]] = {}
    counts: dict[int, int] = {}
    for record in records:  # gather_object concatenates rank 0's list, then rank 1's
        step = counts.get(record["rank"], 0)  # type: ignore[arg-type]
        counts[record["rank"]] = step + 1  # type: ignore[index]
        per_step.setdefault(step, []).append(record)
    assert len(per_step) == args.max_steps, per_step
    for step_records in per_step.values():
        assert len(step_records) == 2, step_records
        # Same number of generation calls on both processes, whatever each one played ...
        assert len({r["generation_calls"] for r in step_records}) == 1, step_records
        # ... and it is the longest episode's turn count across processes.
        assert step_records[0]["generation_calls"] == max(r["local_turns"] for r in step_records)
        # The processes played different games, one of them needing fewer turns than it called.
        assert {tuple(r["env_ids"]) for r in step_records} == {(ONE_SHOT_ID,), ("TextWordle-v0",)}
        assert any(r["local_turns"] < r["generation_calls"] for r in step_records), step_records

    history = trainer.state.log_history
    if accelerator.is_main_process:
        keys = {key for entry in history for key in entry}
        assert {"env/success_rate", "env/mean_turns", "rewards/env_reward/mean"} <= keys, keys
        # Metrics are averaged over both processes: one game always won, Wordle never.
        success = [entry["env/success_rate"] for entry in history if "env/success_rate" in entry]
        assert success == [0.5] * args.max_steps, success
        evaluated = [entry["step"] for entry in history if "eval_success_rate" in entry]
        assert evaluated == list(range(args.max_steps + 1)), evaluated
        assert [row["step"] for row in evals.history] == evaluated
        # Every step's episodes of both processes, saved once by the main process.
        saved = [
            [json.loads(line) for line in step_file(args.output_dir / "out", step).open()]
            for step in range(1, args.max_steps + 1)
        ]
        assert [len(records) for records in saved] == [8] * args.max_steps, saved
        assert all({r["rank"] for r in records} == {0, 1} for records in saved)
        assert all([r["group"] for r in records] == [0] * 4 + [1] * 4 for records in saved)
        summary = {
            "world_size": world_size,
            "global_step": trainer.state.global_step,
            "distributed_type": accelerator.distributed_type.value,
            "calls": records,
            "success_rate": success,
        }
        print("DDP_TRAIN_OK " + json.dumps(summary), flush=True)
    else:
        assert evals.history == [], "the held-out eval ran on a second process"
    accelerator.wait_for_everyone()
    return 0


if __name__ == "__main__":
    sys.exit(main())
