"""GPU check of the trainer path: ``trl-env train`` with ``--fast-paths auto`` on a CUDA GPU.

The successor of ``gpu_generation_check.py`` for the training side. It runs the product's own
library calls (:func:`trl_env.trl.training.train`, :func:`trl_env._eval.evaluate`, the same code
as ``trl-env train`` / ``trl-env eval``) and only *observes* them: which fast paths the trainer
and the rollout's generator turned on, whether the model held anything of ours during and after
training, and what the run logged. Three runs, each with bf16 autocast, LoRA and turn credit:

1. **tiny** -- the built-in tiny model on TextGuessNumber-v0 (multi-turn, so KV reuse runs) with
   a short format warm start, so replies are guesses and GRPO groups carry signal (the adapter
   must move), as in ``tests/trl/test_fast_paths.py``: ``fast_paths="auto"``; afterwards the held-out
   eval after the last step is compared, episode by episode, with ``trl-env eval`` of the saved
   run on the same seeds (transcripts, returns, turns, token ids, log-probabilities);
2. **smollm2-shape auto** -- on TextTicTacToe-v0, a model of SmolLM2-135M-Instruct's architecture, tokenizer and chat
   template (``--shape DIR``: its config and tokenizer files) with random weights (the weights do
   not fit the 64 MiB a GPU call may carry), loaded by path as ``--model DIR`` loads it:
   ``fast_paths="auto"``, the GPU user's run, timed;
3. **smollm2-shape on** -- the same with ``fast_paths="on"``: which layers serve a GPU and which
   refuse (each refusal is one warning), timed.

Prints one line per run and, last, one JSON object: ``ok`` (on a GPU: ``auto`` turned no layer
on, nothing of ours stayed on the model, every loss finite, the tiny run's adapter moved and its
final held-out eval played the games ``trl-env eval`` plays, log-probabilities within 1e-4; on a
CPU: bit for bit), the device, library versions and each run's facts. On a CPU (``--device
cpu``, for trying the script) ``auto`` turns the layers on, as it should.

Run:
    python benchmarks/gpu_trainer_check.py --shape ~/.cache/trl-env/gguf/SmolLM2-* --out /tmp/gpu
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import shutil
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ENV_ID = "TextTicTacToe-v0"
SHAPE_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "chat_template.jinja",
)


class Observer:
    """Records, without changing them, the fast paths each trainer and generator turned on, what
    of ours the model held at each step's end, and the episodes each held-out eval played."""

    def __init__(self) -> None:
        self.trainer: Any = None
        self.trainer_layers: list[str] = []
        self.generation_layers: set[str] = set()
        self.patched_during: list[list[str]] = []
        self.held_out: list[list[tuple[Any, ...]]] = []

    def __enter__(self) -> Observer:
        from transformers import TrainerCallback

        from trl_env.trl import _model_episodes
        from trl_env.trl.fast import _generation, _trainer

        observer = self
        self._saved = [
            (_trainer.FastPathsTrainer, "train", _trainer.FastPathsTrainer.train),
            (_generation.GenerationFastPaths, "active", _generation.GenerationFastPaths.active),
            (_model_episodes, "play_episodes", _model_episodes.play_episodes),
        ]
        train, active, play = (saved for _, _, saved in self._saved)

        class AtStepEnd(TrainerCallback):
            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                observer.patched_during.append(patched(observer.trainer.model))

        def observed_train(trainer: Any, *args: Any, **kwargs: Any) -> Any:
            observer.trainer = trainer
            observer.trainer_layers = [*trainer.fast_paths.enabled]
            trainer.add_callback(AtStepEnd())
            return train(trainer, *args, **kwargs)

        def observed_active(fast: Any, model: Any) -> Any:
            layers = active(fast, model)
            observer.generation_layers.update(layers.enabled)
            return layers

        def observed_play(*args: Any, **kwargs: Any) -> Any:
            episodes = play(*args, **kwargs)
            observer.held_out.append(facts(episodes))
            return episodes

        _trainer.FastPathsTrainer.train = observed_train  # type: ignore[method-assign]
        _generation.GenerationFastPaths.active = observed_active  # type: ignore[method-assign]
        _model_episodes.play_episodes = observed_play
        return self

    def __exit__(self, *exc: Any) -> None:
        for owner, name, saved in self._saved:
            setattr(owner, name, saved)


def facts(episodes: Any) -> list[tuple[Any, ...]]:
    return [
        (e.transcript, e.episode_return, e.turns, e.completion_ids, e.logprobs) for e in episodes
    ]


def lora_layers(model: Any) -> list[tuple[str, Any]]:
    from peft.tuners.lora.layer import LoraLayer

    return [(name, m) for name, m in model.named_modules() if isinstance(m, LoraLayer)]


def patched(model: Any) -> list[str]:
    """What of ours a model holds: LoRA layers with a forward of their own or casts turned off."""
    return [
        f"{name} {what}"
        for name, m in lora_layers(model)
        for what, yes in (
            ("forward", "forward" in m.__dict__),
            ("casts", not getattr(m, "cast_input_dtype_enabled", True)),
        )
        if yes
    ]


def run(
    label: str, model: str | None, out: Path, env_id: str = ENV_ID, **settings: Any
) -> dict[str, Any]:
    """One ``train()`` call under the observer; the facts of the run."""
    from trl_env.trl.training import train

    folder = out / label
    shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught, Observer() as seen:
        warnings.simplefilter("always")
        result = train(
            env_id,
            model=model,
            output_dir=str(folder),
            lora=True,
            bf16=True,
            credit="turn",
            plot=False,
            save_rollouts=False,
            log=print,
            **settings,
        )
    model_after = seen.trainer.model
    losses = [row["loss"] for row in result.history if "loss" in row]
    facts_of_run = {
        "env": env_id,
        "wall_s": round(time.perf_counter() - started, 1),
        "train_s": round(result.train_time_s, 1),
        "steps": len(losses),
        "losses": losses,
        "rewards": [row.get("reward") for row in result.history if "loss" in row],
        "model_device": str(next(model_after.parameters()).device),
        "trainer_fast_paths": seen.trainer_layers,
        "generation_fast_paths": sorted(seen.generation_layers),
        "patched_at_step_ends": [len(step) for step in seen.patched_during],
        "lora_layers": len(lora_layers(model_after)),
        "patched_after_training": patched(model_after),
        "fast_path_warnings": sorted(
            {str(w.message)[:160] for w in caught if "fast path" in str(w.message)}
        ),
        "run_json_fast_paths": json.loads((folder / "run.json").read_text())["fast_paths"],
    }
    copy.deepcopy(model_after)  # nothing of ours in the way (raises otherwise)
    facts_of_run["deepcopy"] = True
    facts_of_run["_result"], facts_of_run["_held_out"] = result, seen.held_out
    print(
        f"{label}: {facts_of_run['steps']} steps in {facts_of_run['train_s']} s; losses "
        f"{[round(x, 4) for x in losses]}; trainer layers {seen.trainer_layers or 'none'}; "
        f"generation layers {sorted(seen.generation_layers) or 'none'}",
        flush=True,
    )
    return facts_of_run


def compare_with_eval(run_facts: dict[str, Any]) -> dict[str, Any]:
    """The run's last held-out eval against ``trl-env eval`` of the saved run, same seeds."""
    from safetensors.torch import load_file

    from trl_env._eval import evaluate
    from trl_env._model_options import ModelOptions

    result = run_facts["_result"]
    cfg = result.config
    adapter = load_file(str(result.model_dir / "adapter_model.safetensors"))
    moved = max(float(w.abs().max()) for name, w in adapter.items() if "lora_B" in name)
    options = ModelOptions(
        temperature=0,
        batch_size=32,
        max_new_tokens_per_turn=cfg.max_new_tokens_per_turn,
        max_completion_length=cfg.max_completion_length,
        system_prompt=cfg.system_prompt or "",
    )
    report = evaluate(
        cfg.env_ids,
        str(result.output_dir),
        episodes=cfg.eval_episodes,
        seed=cfg.eval_seed,
        model_options=options,
        max_turns=cfg.max_turns,
    )
    held_out, evaluated = run_facts["_held_out"][-1], facts(report.episodes)
    same = sum(a == b for a, b in zip(held_out, evaluated, strict=True))
    # The same games: transcripts, returns, turns and the model's token ids (all but log-probs).
    same_games = sum(a[:4] == b[:4] for a, b in zip(held_out, evaluated, strict=True))
    gap = max(
        (
            abs(x - y)
            for a, b in zip(held_out, evaluated, strict=True)
            for x, y in zip(a[4], b[4], strict=False)
        ),
        default=0.0,
    )
    line = {
        "episodes": len(held_out),
        "identical": same,
        "same_games": same_games,
        "max_logprob_gap": gap,
        "adapter_lora_B_max": moved,
        "success_rate": report.summaries[cfg.env_ids[0]].success_rate,
    }
    print(f"final held-out eval vs trl-env eval: {line}", flush=True)
    return line


def shape_model(shape: Path, out: Path) -> str:
    """A directory with SmolLM2's config and tokenizer files and random weights of that shape."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    folder = out / "smollm2-shape-random"
    folder.mkdir(parents=True, exist_ok=True)
    for name in SHAPE_FILES:
        if (shape / name).exists():
            shutil.copy(shape / name, folder / name)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder))
    model.save_pretrained(folder)
    return str(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--shape",
        type=Path,
        required=True,
        help="a folder with SmolLM2's config.json and tokenizer files",
    )
    parser.add_argument("--out", type=Path, default=Path("/tmp/gpu_trainer_check"))
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    import peft
    import torch
    import transformers
    import trl

    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU (or --device cpu to try the script)")
    on_gpu = args.device == "cuda"
    small = {
        "max_steps": args.steps,
        "num_generations": 4,
        "per_device_train_batch_size": 8,
        "num_tasks": 16,
        "eval_every": args.steps,
        "eval_episodes": 16,
    }
    # As tests/trl/test_fast_paths.py's eval-equality test: a short format warm start, so that
    # rewards differ within groups, and a high rate, so that one step moves the replies.
    tiny = run(
        "tiny",
        None,
        args.out,
        **small,
        env_id="TextGuessNumber-v0",
        warm_start_steps=20,
        learning_rate=0.05,
        max_completion_length=256,
        max_new_tokens_per_turn=8,
    )
    tiny["vs_trl_env_eval"] = compare_with_eval(tiny)
    shape = shape_model(args.shape.expanduser(), args.out)
    real = {
        **small,
        "max_steps": 2,
        "eval_every": 0,
        "warm_start": "none",
        "max_completion_length": 256,
        "max_new_tokens_per_turn": 32,
    }
    auto = run("smollm2-shape-auto", shape, args.out, **real)
    on = run("smollm2-shape-on", shape, args.out, **real, fast_paths="on")
    runs = {"tiny": tiny, "smollm2_shape_auto": auto, "smollm2_shape_on": on}
    ok = all(math.isfinite(x) for r in runs.values() for x in r["losses"])
    ok &= all(not r["patched_after_training"] for r in runs.values())
    ok &= tiny["vs_trl_env_eval"]["adapter_lora_B_max"] > 0
    versus = tiny["vs_trl_env_eval"]
    # A CPU gives the eval's episodes bit for bit (tests/trl/test_fast_paths.py); a GPU's float32
    # kernels may round differently between the two model instances: the same games, log-probs
    # within 1e-4.
    if on_gpu:
        ok &= versus["same_games"] == versus["episodes"] and versus["max_logprob_gap"] < 1e-4
    else:
        ok &= versus["identical"] == versus["episodes"]
    if on_gpu:  # auto: stock TRL, transformers and peft on a GPU
        ok &= all(
            not r["trainer_fast_paths"] and not r["generation_fast_paths"] for r in (tiny, auto)
        )
    print(
        json.dumps(
            {
                "ok": ok,
                "device": torch.cuda.get_device_name() if on_gpu else "cpu",
                "versions": {
                    "torch": torch.__version__,
                    "transformers": transformers.__version__,
                    "trl": trl.__version__,
                    "peft": peft.__version__,
                },
                **{
                    label: {k: v for k, v in r.items() if not k.startswith("_")}
                    for label, r in runs.items()
                },
            },
            default=str,
        )
    )


if __name__ == "__main__":
    sys.exit(main())
