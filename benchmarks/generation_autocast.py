"""Multi-turn generation of a LoRA model on a CPU: float32 against bfloat16 autocast.

``trl-env train --bf16`` runs the rollout's generation under the trainer's autocast (a PEFT
model's ``generate`` calls the base model's ``forward``, which accelerate's autocast wrapper does
not cover, so LoRA runs used to sample in float32). This times the same multi-turn generation
both ways: SmolLM2-135M-Instruct with fresh LoRA adapters (r 16, all linear layers), 16 rows of a
300-token prompt, 6 turns of at most 8 sampled tokens, each turn followed by 40 "env" tokens, as
trl-env's rollout feeds ``TransformersGenerator`` (KV cache reused across turns).

The middle lines time bf16 autocast as it ran before ``TransformersGenerator`` held the frozen
base weights in bfloat16 (autocast then re-cast them to bfloat16 at every decode step), and with
those bfloat16 copies but the LoRA adapters run as their own small matmuls instead of folded into
the copies (the fast path ``frozen_bf16``, ``trl_env/trl/fast/_frozen_bf16.py``).

Prints the four times and, as its last line, one JSON object with ``before_s`` (float32),
``after_s`` (bf16 autocast) and ``ratio``.

Run:
    python benchmarks/generation_autocast.py --model path/to/SmolLM2-135M-Instruct.Q4_1.gguf
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import warnings
from pathlib import Path

warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import DEFAULT_GGUF, resolve_model  # noqa: E402


def time_turns(generator, rows: int, turns: int, seed: int) -> float:
    """Seconds for ``turns`` generate calls over ``rows`` growing conversations."""
    import torch

    torch.manual_seed(seed)
    inputs = [torch.randint(100, 40000, (300,)).tolist() for _ in range(rows)]
    generator.generate(inputs, 8)  # one-off costs (allocator, oneDNN kernels) out of the timing
    generator.clear_cache()
    started = time.perf_counter()
    for _ in range(turns):
        replies, _ = generator.generate(inputs, 8)
        inputs = [
            ids + reply + torch.randint(100, 40000, (40,)).tolist()
            for ids, reply in zip(inputs, replies, strict=True)
        ]
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_GGUF), help="a .gguf file or model dir")
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--turns", type=int, default=6)
    args = parser.parse_args()
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, GenerationConfig

    from trl_env.trl import TransformersGenerator
    from trl_env.trl.fast._frozen_bf16 import FrozenBF16Weights

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", str(os.cpu_count() or 2))))
    model = AutoModelForCausalLM.from_pretrained(resolve_model(args.model))
    lora = LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM")
    model = get_peft_model(model, lora).eval()
    config = GenerationConfig(
        do_sample=True, temperature=1.0, top_k=0, top_p=1.0, pad_token_id=0, eos_token_id=[2]
    )
    seconds = {}

    def bf16():
        return torch.autocast("cpu", dtype=torch.bfloat16)

    for name, autocast, frozen in (
        ("float32", None, None),
        ("bf16 autocast, frozen weights cast per token", bf16, None),
        ("bf16 autocast, frozen copies, LoRA unmerged", bf16, FrozenBF16Weights(merge_lora=False)),
        ("bf16 autocast", bf16, FrozenBF16Weights()),
    ):
        generator = TransformersGenerator(
            model, pad_token_id=0, eos_token_ids=[2], generation_config=config, autocast=autocast
        )
        if frozen is None:  # what generation did before FrozenBF16Weights
            generator.frozen_bf16.swapped_in = lambda model: contextlib.nullcontext()
        else:
            generator.frozen_bf16 = frozen
        seconds[name] = time_turns(generator, args.rows, args.turns, seed=0)
        print(f"{name:46s} {seconds[name]:6.2f} s for {args.turns} turns of {args.rows} rows")
    before, after = seconds["float32"], seconds["bf16 autocast"]
    print(json.dumps({"before_s": round(before, 2), "after_s": round(after, 2),
                      "ratio": round(before / after, 2)}))  # fmt: skip


if __name__ == "__main__":
    main()
