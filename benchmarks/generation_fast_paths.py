"""The rollout's multi-turn generation under several ``--fast-paths`` settings, alternated.

``trl-env train``'s rollout generates with :class:`trl_env.trl.TransformersGenerator` (key/value
states reused across turns). This times that generator on SmolLM2-135M-Instruct with LoRA
adapters (r 16 on all linear layers, as ``--lora`` makes them, nudged off zero as after a few
steps) in the run's own dtype on this CPU (bfloat16 autocast where the CPU has bf16 units, float32
elsewhere), for one turn shape: ``--rows`` growing conversations from a ``--prompt``-token
prompt, ``--turns`` turns of at most ``--tokens`` sampled tokens, each followed by ``--env-tokens``
"env" tokens; with ``--group-size G`` the rows start in groups of G from the same prompt, as
a GRPO group's episodes do (``shared_prefill`` then has work; by default every row has its own
prompt). The settings run in turn, ``--rounds`` times over, so slow drift of the machine
hits them alike; each setting's median, its spread, and the gain of each setting against the
first are printed. The spread of the first setting across rounds is the run-to-run noise.

Shapes of the recorded games: ``--rows 16 --turns 14 --tokens 8`` (TextHangman-v0's recipe),
``--rows 8 --turns 6 --tokens 32`` (``grpo_step_profile.py``'s TextTicTacToe-v0).

The last line is one JSON object: ``before_s`` (the setting ``off``, if run), ``after_s`` (the
first setting), ``ratio``, every setting's median, the CPU (model, flags, torch threads), the
commit, the command and whether the machine was idle when it started.

Run:
    python benchmarks/generation_fast_paths.py --model path/to/SmolLM2-135M-Instruct.Q4_1.gguf \\
        --settings auto auto,-merged_lora off
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import DEFAULT_GGUF, git_commit, resolve_model  # noqa: E402


def time_turns(generator, args: argparse.Namespace, group_size: int = 1) -> tuple[float, int]:
    """Seconds for ``args.turns`` generate calls over ``args.rows`` growing conversations (the
    same random prompts and env tokens for every setting; rows in groups of ``group_size`` start
    from their group's first prompt), and the tokens sampled in them (equal work across settings
    unless a reply ends early)."""
    import torch

    torch.manual_seed(args.seed)
    prompts = [torch.randint(100, 40000, (args.prompt,)).tolist() for _ in range(args.rows)]
    inputs = [list(prompts[row - row % group_size]) for row in range(args.rows)]
    env_tokens = [
        [torch.randint(100, 40000, (args.env_tokens,)).tolist() for _ in range(args.rows)]
        for _ in range(args.turns)
    ]
    generator.generate(inputs, args.tokens)  # one-off costs (allocator, kernels) out of timing
    generator.clear_cache()
    started, sampled = time.perf_counter(), 0
    for turn in range(args.turns):
        replies, _ = generator.generate(inputs, args.tokens)
        sampled += sum(map(len, replies))
        inputs = [
            ids + reply + env
            for ids, reply, env in zip(inputs, replies, env_tokens[turn], strict=True)
        ]
    seconds = time.perf_counter() - started
    generator.clear_cache()
    return seconds, sampled


def add_turn_shape_arguments(parser: argparse.ArgumentParser) -> None:
    """The turn shape and rounds options this benchmark shares with ``static_cache_compile.py``."""
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--turns", type=int, default=14)
    parser.add_argument("--tokens", type=int, default=8, help="sampled tokens per turn")
    parser.add_argument("--prompt", type=int, default=300, help="prompt tokens")
    parser.add_argument("--env-tokens", type=int, default=40, help="tokens after each reply")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)


def machine_threads() -> tuple[int, float]:
    """Torch threads (``$OMP_NUM_THREADS``, else every core), set; and the load average before."""
    import torch

    threads = int(os.environ.get("OMP_NUM_THREADS", str(os.cpu_count() or 2)))
    torch.set_num_threads(threads)
    return threads, os.getloadavg()[0]


def lora_model_in_run_dtype(
    args: argparse.Namespace,
) -> tuple[Any, bool, Callable[[], contextlib.AbstractContextManager]]:
    """``--model`` with LoRA adapters r 16 on every linear layer, nudged off zero as after some
    training; whether the run is bf16 on this CPU, and its autocast context factory."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from trl_env._machine import cpu_has_bf16_units

    model = AutoModelForCausalLM.from_pretrained(resolve_model(args.model))
    lora = LoraConfig(r=16, lora_alpha=32, target_modules="all-linear", task_type="CAUSAL_LM")
    model = get_peft_model(model, lora).eval()
    torch.manual_seed(args.seed)
    with torch.no_grad():  # as after some training: the adapters change the output
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.01)
    bf16 = cpu_has_bf16_units()

    def autocast() -> contextlib.AbstractContextManager:
        if bf16:
            return torch.autocast("cpu", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    return model, bf16, autocast


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_GGUF), help="a .gguf file or model dir")
    parser.add_argument(
        "--settings", nargs="+", default=["auto", "off"], help="--fast-paths settings to compare"
    )
    add_turn_shape_arguments(parser)
    parser.add_argument(
        "--group-size", type=int, default=1,
        help="rows that start from the same prompt, as a GRPO group's (default: each its own)",
    )  # fmt: skip
    args = parser.parse_args()
    if not 1 <= args.group_size <= args.rows or args.rows % args.group_size:
        parser.error(f"--group-size must divide --rows ({args.rows}) into whole groups")

    from transformers import GenerationConfig

    from trl_env._machine import cpu_summary, machine_record
    from trl_env.trl import TransformersGenerator

    threads, load_before = machine_threads()
    model, bf16, autocast = lora_model_in_run_dtype(args)
    config = GenerationConfig(
        do_sample=True, temperature=1.0, top_k=0, top_p=1.0, pad_token_id=0, eos_token_id=[2]
    )

    shared = f"s shared in groups of {args.group_size}" if args.group_size > 1 else ""
    print(f"# {cpu_summary(threads)}; {'bf16 autocast' if bf16 else 'float32'}; "
          f"{args.rows} rows, {args.turns} turns of {args.tokens} tokens, {args.prompt}-token "
          f"prompt{shared}, "
          f"{args.env_tokens} env tokens a turn; {args.rounds} rounds", flush=True)  # fmt: skip
    times: dict[str, list[float]] = {setting: [] for setting in args.settings}
    tokens: dict[str, list[int]] = {setting: [] for setting in args.settings}
    for round_ in range(args.rounds):
        for setting in args.settings:
            generator = TransformersGenerator(
                model, pad_token_id=0, eos_token_ids=[2], generation_config=config,
                autocast=autocast, fast_paths=setting,
            )  # fmt: skip
            seconds, sampled = time_turns(generator, args, args.group_size)
            times[setting].append(seconds)
            tokens[setting].append(sampled)
            print(f"round {round_ + 1}  {setting:40s} {seconds:7.2f} s", flush=True)
    first = args.settings[0]
    medians = {setting: statistics.median(values) for setting, values in times.items()}
    noise = max(times[first]) - min(times[first])
    print(f"\n{'setting':40s} {'median s':>9s} {'min':>7s} {'max':>7s}  vs {first}")
    for setting, values in times.items():
        gain = medians[setting] - medians[first]
        print(f"{setting:40s} {medians[setting]:9.2f} {min(values):7.2f} {max(values):7.2f}  "
              f"{gain:+.2f} s")  # fmt: skip
    print(f"run-to-run noise ({first}, max - min over {args.rounds} rounds): {noise:.2f} s")
    before = medians.get("off")
    print(json.dumps({
        "before_s": round(before, 2) if before is not None else None,
        "after_s": round(medians[first], 2),
        "ratio": round(before / medians[first], 2) if before is not None else None,
        "medians_s": {k: round(v, 2) for k, v in medians.items()},
        "noise_s": round(noise, 2), "times_s": {k: [round(t, 2) for t in v] for k, v in times.items()},
        "sampled_tokens": tokens,
        "shape": {k: getattr(args, k) for k in ("rows", "turns", "tokens", "prompt", "env_tokens",
                                                 "group_size")},
        "cpu": machine_record(threads), "bf16": bf16, "commit": git_commit(),
        "command": " ".join(["python", *sys.argv]), "idle": load_before < 0.5,
        "load_average_before": round(load_before, 2),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
