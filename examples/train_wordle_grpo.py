"""Train an LLM to play Wordle with GRPO: TRL's GRPOTrainer + trl-env's multi-turn rollout.

Every piece is plain TRL: a dataset of Wordle games (``trl_env.make_dataset``), a rollout that
plays whole multi-turn games token-exactly (``trl_env.make_rollout_func``), and the game's return
as the reward (``trl_env.env_reward``). ``trl-env train`` does the same with more options.

One GPU, generation with vLLM colocated in the training process (``pip install vllm``)::

    python examples/train_wordle_grpo.py --model Qwen/Qwen3-0.6B --use-vllm

The same with LoRA adapters (``pip install peft``; a larger learning rate is used)::

    python examples/train_wordle_grpo.py --model Qwen/Qwen3-0.6B --use-vllm --lora

vLLM in server mode, on a GPU of its own (two GPUs)::

    CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model Qwen/Qwen3-0.6B
    CUDA_VISIBLE_DEVICES=1 python examples/train_wordle_grpo.py --use-vllm --vllm-mode server

Several GPUs, data parallel (vLLM colocated on each)::

    accelerate launch --num_processes 4 examples/train_wordle_grpo.py --use-vllm

Without vLLM (``model.generate``; slower), or on a CPU with a tiny local model, no download (a
smoke test: the tiny model is untrained and its Wordle games are gibberish)::

    python examples/train_wordle_grpo.py --model Qwen/Qwen3-0.6B
    python examples/train_wordle_grpo.py --tiny --max-steps 1

Thinking is off by default (``--thinking`` turns it on, and needs a larger
``--max-completion-length``). The final model and tokenizer are saved to ``<output-dir>/final``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys

# trl-env's rollout is passed as `rollout_func`, which TRL flags as experimental on every run.
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch
from trl import GRPOConfig, GRPOTrainer

import trl_env
from trl_env.trl import ChatTemplateProcessor


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="Qwen/Qwen3-0.6B", help="Hub id or local directory")
    parser.add_argument("--tiny", action="store_true", help="tiny local model, CPU settings")
    parser.add_argument("--env", default="TextWordle-v0", help="registered env ID")
    parser.add_argument("--output-dir", default="runs/wordle-grpo")
    parser.add_argument("--max-steps", type=int, default=500)
    parser.add_argument("--num-tasks", type=int, default=2048, help="Wordle games in the dataset")
    parser.add_argument("--partial-credit", type=float, default=0.5, help="shaped reward, 0-1")
    parser.add_argument("--learning-rate", type=float, default=None, help="1e-6, or 1e-5 LoRA")
    parser.add_argument("--num-generations", type=int, default=8, help="games per secret word")
    parser.add_argument("--batch-size", type=int, default=8, help="games per device per step")
    parser.add_argument("--gradient-accumulation-steps", type=int, default=4)
    parser.add_argument("--max-completion-length", type=int, default=1024, help="tokens/game")
    parser.add_argument("--max-new-tokens-per-turn", type=int, default=128)
    parser.add_argument("--thinking", action="store_true", help="let Qwen3 think before guessing")
    parser.add_argument("--use-vllm", action="store_true")
    parser.add_argument("--vllm-mode", choices=["colocate", "server"], default="colocate")
    parser.add_argument("--lora", action="store_true", help="train LoRA adapters (needs peft)")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    for flag, package in (("lora", "peft"), ("use_vllm", "vllm")):
        if getattr(args, flag) and importlib.util.find_spec(package) is None:
            sys.exit(f"--{flag.replace('_', '-')} needs {package}: pip install {package}")

    on_gpu = torch.cuda.is_available()
    model = args.model
    if args.tiny:
        # A 2-layer random model and its tokenizer, built locally and loaded from disk exactly
        # like a Hub checkpoint; CPU-sized settings so that a step takes seconds.
        from trl_env.trl.models import build_tiny_model

        model = build_tiny_model(os.path.join(args.output_dir, "tiny-model"), seed=args.seed)
        args.num_tasks, args.batch_size, args.gradient_accumulation_steps = 16, 8, 1
        args.num_generations, args.max_completion_length, args.max_new_tokens_per_turn = 4, 64, 16

    # 1. The dataset: one row per Wordle game (env ID + seed); the rollout plays each game
    #    num_generations times with the same secret word, and GRPO compares those games.
    dataset = trl_env.make_dataset(
        args.env, num_tasks=args.num_tasks, seed=args.seed, partial_credit=args.partial_credit
    )

    # 2. The rollout: whole multi-turn games, token-exact (the model is trained on exactly the
    #    tokens it sampled; the game's feedback turns are masked out of the loss).
    rollout = trl_env.make_rollout_func(
        max_new_tokens_per_turn=args.max_new_tokens_per_turn,
        processor=lambda tokenizer: ChatTemplateProcessor(tokenizer, enable_thinking=args.thinking),
    )

    # 3. GRPO settings. Wordle games are long: the completion budget covers all six turns.
    learning_rate = args.learning_rate or (1e-5 if args.lora else 1e-6)
    config = GRPOConfig(
        output_dir=args.output_dir,
        use_cpu=not on_gpu,
        bf16=on_gpu,
        learning_rate=learning_rate,
        per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        num_generations=args.num_generations,
        max_completion_length=args.max_completion_length,
        max_steps=args.max_steps,
        beta=0.0,  # no reference model: less memory, and GRPO works well without the KL term
        temperature=1.0,
        use_vllm=args.use_vllm,
        vllm_mode=args.vllm_mode,
        vllm_gpu_memory_utilization=0.3,
        logging_steps=1,
        save_steps=100,
        report_to="none",
        seed=args.seed,
    )
    peft_config = None
    if args.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM"
        )

    # 4. Train. env_reward is each game's return (1 for a win, shaped partial credit otherwise,
    #    minus a penalty per invalid guess); env/success_rate etc. are logged every step.
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=trl_env.env_reward,
        args=config,
        train_dataset=dataset,
        rollout_func=rollout,
        peft_config=peft_config,
    )
    trainer.train()

    final = os.path.join(args.output_dir, "final")
    trainer.save_model(final)
    last = next(
        (log for log in reversed(trainer.state.log_history) if "reward" in log), {"reward": None}
    )
    print(
        f"done: {trainer.state.global_step} steps, last reward {last['reward']}, "
        f"success rate {last.get('env/success_rate')}; model saved to {final}"
    )


if __name__ == "__main__":
    main()
