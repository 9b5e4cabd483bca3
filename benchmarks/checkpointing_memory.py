"""Peak memory of one training forward pass of SmolLM2-135M with activation checkpointing: the
model alone, LoRA with the libraries' default (non-reentrant) checkpointing, and LoRA with the
reentrant checkpointing ``trl-env train`` uses on a CPU (``trl_env/trl/_checkpointing.py``).

Each variant runs in its own process (peak RSS by ``getrusage``): 8 sequences of 1024 random
tokens, float32, training mode, logits kept for the last 64 positions. Prints one line per
variant and the ratio of the default's peak to the reentrant one.

Run:
    python benchmarks/checkpointing_memory.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import DEFAULT_GGUF, resolve_model

from trl_env._machine import cpu_summary

VARIANTS = {
    "no LoRA, non-reentrant": (False, False),
    "LoRA, non-reentrant (the default)": (True, False),
    "LoRA, reentrant (trl-env on a CPU)": (True, True),
}

_CHILD = """
import json, resource, sys, torch
from trl_env.trl.models import load_model_and_tokenizer
model_dir, lora, reentrant, threads = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1", int(sys.argv[4])
torch.set_num_threads(threads)
torch.manual_seed(0)
model, _ = load_model_and_tokenizer(model_dir)
if lora:
    from peft import LoraConfig, get_peft_model
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules="all-linear",
                                             task_type="CAUSAL_LM"))
model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": reentrant})
if lora:
    model.enable_input_require_grads()
model.train()
loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
model(input_ids=torch.randint(0, 40000, (8, 1024)), logits_to_keep=64)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
print(json.dumps({"loaded_gb": round(loaded, 2), "peak_gb": round(peak, 2)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_GGUF))
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    model_dir = resolve_model(args.model)
    print(f"SmolLM2-135M, 8 x 1024 tokens, float32, on {cpu_summary(args.threads)}")
    peaks = {}
    for name, (lora, reentrant) in VARIANTS.items():
        argv = [model_dir, str(int(lora)), str(int(reentrant)), str(args.threads)]
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, *argv], capture_output=True, text=True, check=True
        )
        result = json.loads(done.stdout.strip().splitlines()[-1])
        peaks[name] = result["peak_gb"]
        print(f"{name:36s} peak RSS after the forward pass {result['peak_gb']:5.2f} GB "
              f"(model loaded: {result['loaded_gb']:.2f} GB)", flush=True)  # fmt: skip
    default, ours = (
        peaks["LoRA, non-reentrant (the default)"],
        peaks["LoRA, reentrant (trl-env on a CPU)"],
    )
    print(f"default / reentrant: {default / ours:.2f}x the memory")


if __name__ == "__main__":
    main()
