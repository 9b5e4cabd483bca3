"""trl-env's turn generation against transformers' static cache with ``torch.compile``.

Issue 34 asks, for each fast path, whether the ecosystem has a public mechanism that measures at
least as fast. For the generation paths (``reserved_kv_cache``, and the reuse of key/value states
across turns that ``TransformersGenerator`` does), transformers' candidate is its static cache
with automatic compilation of the decode step: ``GenerationConfig(cache_implementation="static",
max_cache_len=N, compile_config=CompileConfig(...))``, which compiles on a CPU only when told to
(``CompileConfig._compile_all_devices``; transformers' own comment: "often not optimal, but useful
for testing purposes").

The settings, timed on the same turn shape as ``generation_fast_paths.py`` (``--rows`` growing
conversations, ``--turns`` turns of at most ``--tokens`` sampled tokens, ``--env-tokens`` "env"
tokens after each), SmolLM2-135M-Instruct with LoRA adapters r 16, in the run's dtype on this CPU:

* ``trl-env``: :class:`trl_env.trl.TransformersGenerator`, ``fast_paths="auto"``, key/value
  states reused across turns: what ``trl-env train`` runs;
* ``trl-env-off``: the same generator with ``fast_paths="off"`` (reuse kept);
* ``dynamic``: plain ``model.generate`` on the whole conversation each turn, transformers'
  default ``DynamicCache`` (a stock multi-turn loop);
* ``static``: the same with ``cache_implementation="static"`` sized once for the longest turn
  (``max_cache_len``), so every call has the same cache shape;
* ``static-compile``: ``static`` plus transformers' automatic ``torch.compile`` of the decode
  forward (inductor, ``mode="default"``: the default ``reduce-overhead`` is CUDA graphs).

Each setting's first call (one turn from the bare prompt) is timed alone: it carries the
compilation of ``static-compile``. Then each setting plays the turns ``--rounds`` times in
alternating order (``time_turns`` of ``generation_fast_paths.py``, which makes one untimed call
first); the table gives the first round and the median of the later rounds apart.
The last line is one JSON object with every median, the compile time, the CPU and the commit.

Run:
    python benchmarks/static_cache_compile.py --model path/to/SmolLM2-135M-Instruct.Q4_1.gguf
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import DEFAULT_GGUF, git_commit  # noqa: E402
from generation_fast_paths import (  # noqa: E402
    add_turn_shape_arguments,
    lora_model_in_run_dtype,
    machine_threads,
    time_turns,
)

SETTINGS = ("trl-env", "trl-env-off", "dynamic", "static", "static-compile")


class StockGenerator:
    """``model.generate`` on the whole conversation each turn: what a multi-turn loop written
    against transformers alone does (no key/value reuse across turns). Not
    ``TransformersGenerator(reuse_kv_cache=False)``: that one rebuilds its generation config
    from ``to_dict()``, which drops ``CompileConfig._compile_all_devices``, so it would never
    compile on a CPU.

    Args:
        model: The model to sample from.
        config: The generation settings (cache kind, compilation).
        autocast: The run's autocast context factory.
        eos_token_id: The end-of-reply token.
    """

    def __init__(
        self,
        model: Any,
        config: Any,
        autocast: Callable[[], contextlib.AbstractContextManager[Any]],
        eos_token_id: int,
    ) -> None:
        self.model, self.config, self.autocast, self.eos = model, config, autocast, eos_token_id

    def generate(
        self, inputs: Sequence[Sequence[int]], max_new_tokens: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        import torch

        width = max(len(ids) for ids in inputs)
        # Left padding: every row's next token is at the same column.
        ids = torch.tensor([[0] * (width - len(row)) + list(row) for row in inputs])
        mask = torch.tensor([[0] * (width - len(row)) + [1] * len(row) for row in inputs])
        with torch.no_grad(), self.autocast():
            out = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                generation_config=self.config,
                max_new_tokens=max_new_tokens,
            )
        replies = []
        for row in out[:, width:].tolist():
            end = row.index(self.eos) + 1 if self.eos in row else len(row)
            replies.append(row[:end])
        return replies, [[] for _ in replies]

    def clear_cache(self) -> None:
        """Nothing is kept between calls (the static cache is rebuilt per call by transformers)."""


def time_first_call(generator: Any, args: argparse.Namespace) -> float:
    """Seconds of one turn from the bare prompt, the first call a setting gets."""
    import torch

    torch.manual_seed(args.seed + 1)
    inputs = [torch.randint(100, 40000, (args.prompt,)).tolist() for _ in range(args.rows)]
    started = time.perf_counter()
    generator.generate(inputs, args.tokens)
    seconds = time.perf_counter() - started
    generator.clear_cache()
    return seconds


def make_generator(setting: str, model: Any, autocast: Callable, args: argparse.Namespace) -> Any:
    """The generator of one setting (see the module docstring)."""
    from transformers import CompileConfig, GenerationConfig

    from trl_env.trl import TransformersGenerator

    sampling = {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0}
    ids = {"pad_token_id": 0, "eos_token_id": [2]}
    if setting in ("trl-env", "trl-env-off"):
        return TransformersGenerator(
            model,
            pad_token_id=0,
            eos_token_ids=[2],
            generation_config=GenerationConfig(**sampling, **ids),
            autocast=autocast,
            fast_paths="auto" if setting == "trl-env" else "off",
        )
    config = GenerationConfig(**sampling, **ids)
    if setting.startswith("static"):
        # One size for every turn: the longest conversation plus a turn's tokens.
        longest = args.prompt + args.turns * (args.tokens + args.env_tokens) + args.tokens
        config.cache_implementation = "static"
        config.max_cache_len = longest
    if setting == "static-compile":
        compile_config = CompileConfig(mode="default", fullgraph=False)
        compile_config._compile_all_devices = True  # transformers compiles on GPUs only otherwise
        config.compile_config = compile_config
    else:
        config.disable_compile = True
    return StockGenerator(model, config, autocast, eos_token_id=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_GGUF), help="a .gguf file or model dir")
    parser.add_argument("--settings", nargs="+", default=list(SETTINGS), choices=SETTINGS)
    add_turn_shape_arguments(parser)
    args = parser.parse_args()

    import torch

    from trl_env._machine import cpu_summary, machine_record

    threads, load_before = machine_threads()
    model, bf16, autocast = lora_model_in_run_dtype(args)

    print(f"# {cpu_summary(threads)}; {'bf16 autocast' if bf16 else 'float32'}; "
          f"{args.rows} rows, {args.turns} turns of {args.tokens} tokens, {args.prompt}-token "
          f"prompt, {args.env_tokens} env tokens a turn; {args.rounds} rounds", flush=True)  # fmt: skip
    times: dict[str, list[float]] = {setting: [] for setting in args.settings}
    generators = {s: make_generator(s, model, autocast, args) for s in args.settings}
    first_call = {}
    for setting, generator in generators.items():
        # The first call of each setting alone: compilation (static-compile) happens here.
        first_call[setting] = time_first_call(generator, args)
        print(f"first call  {setting:16s} {first_call[setting]:8.2f} s", flush=True)
    compiled = hasattr(model.get_base_model(), "_compiled_call")
    if "static-compile" in args.settings and not compiled:
        sys.exit("static-compile: transformers did not compile the decode step; nothing to measure")
    for round_ in range(args.rounds):
        for setting in args.settings:
            seconds, _ = time_turns(generators[setting], args)
            times[setting].append(seconds)
            print(f"round {round_ + 1}  {setting:16s} {seconds:8.2f} s", flush=True)
    first = args.settings[0]
    later = {s: statistics.median(v[1:]) if len(v) > 1 else v[0] for s, v in times.items()}
    print(
        f"\n{'setting':16s} {'first call s':>12s} {'round 1 s':>10s} {'median of later rounds s':>25s}  vs {first}"
    )
    for setting, values in times.items():
        print(f"{setting:16s} {first_call[setting]:12.2f} {values[0]:10.2f} {later[setting]:25.2f}  "
              f"{later[setting] / later[first]:.2f}x")  # fmt: skip
    print(json.dumps({
        "first_call_s": {k: round(v, 2) for k, v in first_call.items()},
        "first_round_s": {k: round(v[0], 2) for k, v in times.items()},
        "later_rounds_median_s": {k: round(v, 2) for k, v in later.items()},
        "ratio_to_first_setting": {k: round(v / later[first], 2) for k, v in later.items()},
        "shape": {k: getattr(args, k) for k in ("rows", "turns", "tokens", "prompt", "env_tokens")},
        "cpu": machine_record(threads), "bf16": bf16, "commit": git_commit(),
        "torch": torch.__version__, "transformers": __import__("transformers").__version__,
        "command": " ".join(["python", *sys.argv]), "idle": load_before < 0.5,
        "load_average_before": round(load_before, 2),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
