"""Where one GRPO step of a real model goes on a CPU, and what the CPU defaults save.

Plays and trains SmolLM2-135M-Instruct (LoRA) with TRL's ``GRPOTrainer`` and this library's
rollout on ``TextTicTacToe-v0`` (8 episodes per step, up to 6 turns), under settings that differ
only in what the CPU defaults change:

* ``before``: TRL's ``GRPOConfig`` defaults (gradient checkpointing on), float32;
* ``no-checkpointing``: gradient checkpointing off (it recomputes every forward pass during the
  backward pass to save memory; measured here: no faster, and twice the memory);
* ``bf16-no-checkpointing``: checkpointing off and bfloat16 autocast;
* ``after``: what ``trl-env train`` does on a CPU with bf16 units (``amx_bf16``/``avx512_bf16``,
  where oneDNN runs bf16 matmuls in hardware): gradient checkpointing kept on, bfloat16 autocast
  for the training passes and the rollout's generation, and trl-env's trainer
  (``TurnCreditGRPOTrainer``, ``credit="episode"``: TRL's loss). Generation holds the frozen LoRA
  base weights in bfloat16 with the adapters folded in, packed once for oneDNN; prefills a
  group's shared prompt once; appends the KV cache into reserved room; and samples by inverse
  CDF. The training forward projects only the model's own tokens through the LM head, runs
  without the padding mask where that is exact (causal attention), and adds each LoRA term
  inside one matmul from one shared bfloat16 cast of its input.

The other settings train with TRL's ``GRPOTrainer`` itself.

Each setting plays the same tasks (same seeds); the first step of each pays one-off costs and is
left out. A step is split into generation (inside ``generate``), env (the rest of the rollout)
and training (log-probability passes, forward, backward, optimizer). Padding waste is the share
of the padded completion tensor that is padding. For bf16, the gap between the log-probabilities
recorded while sampling (since the generator runs under the trainer's autocast: bf16 too, but
batched and through the KV cache) and a bf16 teacher-forced pass is measured on the same tokens
(TRL's loss uses the training pass only, so the gap is what off-policy corrections would see).

Prints one line per step and setting, a table, and as its last line one JSON object with
``before_s``, ``after_s`` (mean seconds per step) and ``ratio``.

Run:
    python benchmarks/grpo_step_profile.py --model path/to/SmolLM2-135M-Instruct.Q4_1.gguf
    # each fast path's share, judged within 3 rounds of alternating order:
    python benchmarks/grpo_step_profile.py --model FILE.gguf --ablate --steps 2 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
warnings.filterwarnings("ignore")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _real_model import DEFAULT_GGUF, git_commit, resolve_model  # noqa: E402

import trl_env  # noqa: E402

SETTINGS: dict[str, dict[str, Any]] = {
    "before": {"activation_checkpointing": True, "bf16": False},
    "no-checkpointing": {"activation_checkpointing": False, "bf16": False},
    "bf16-no-checkpointing": {"activation_checkpointing": False, "bf16": True},
    "after": {"activation_checkpointing": True, "bf16": True},  # trl-env train's CPU default
}
TRL_ENV_TRAINER = {"after"}
"""Settings trained with trl-env's trainer (the rest with TRL's ``GRPOTrainer``)."""


def ablation_settings(bf16: bool, rounds: int = 1) -> dict[str, dict[str, Any]]:
    """``--ablate``: trl-env's trainer as ``trl-env train`` runs it on this CPU (bf16 where the
    CPU has bf16 units), with every fast path on, with each layer off in turn, with none, and
    (in a run of one round) with every layer on again: the two "on" runs give the run-to-run
    noise; with ``--rounds`` the rounds give it (:func:`rounds_summary`). Layers idle in the
    run's dtype (:func:`idle_layers`) are left out."""
    from trl_env.trl.fast import LAYERS

    base = {"activation_checkpointing": True, "bf16": bf16}
    idle = idle_layers(bf16)
    layers = [layer for layer in LAYERS if layer not in idle]
    settings = {"fast-paths on": {**base, "fast_paths": "on"}}
    for layer in layers:
        settings[f"without {layer}"] = {**base, "fast_paths": f"on,-{layer}", "layer": layer}
    settings["fast-paths off"] = {**base, "fast_paths": "off"}
    if rounds == 1:
        settings["fast-paths on (again)"] = {**base, "fast_paths": "on"}
    return settings


def idle_layers(bf16: bool) -> list[str]:
    """The fast paths that change nothing in a run of this dtype: the bf16 layers in a float32
    run, the float32 ones (``merged_lora``) under bf16 autocast."""
    from trl_env.trl.fast import BF16_LAYERS, FLOAT32_LAYERS

    return list(FLOAT32_LAYERS if bf16 else BF16_LAYERS)


class TimedRollout:
    """The library's ``rollout_func`` with its generation and total time recorded per call."""

    def __init__(self, args: argparse.Namespace) -> None:
        from trl_env.trl.models import generator_from_trainer

        self.generation_s = 0.0
        self.rollout_s = 0.0
        self.episodes: list[Any] = []
        outer = self

        class Timed:
            def __init__(self, inner: Any) -> None:
                self.inner = inner

            def generate(self, inputs: Any, max_new_tokens: int) -> Any:
                start = time.perf_counter()
                try:
                    return self.inner.generate(inputs, max_new_tokens)
                finally:
                    outer.generation_s += time.perf_counter() - start

        self.inner = trl_env.make_rollout_func(
            generator=lambda trainer: Timed(generator_from_trainer(trainer)),
            max_new_tokens_per_turn=args.max_new_tokens,
            max_turns=args.max_turns,
        )

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        start = time.perf_counter()
        try:
            return self.inner(prompts, trainer)
        finally:
            self.rollout_s += time.perf_counter() - start
            self.episodes = self.inner.last_episodes


def profile(
    args: argparse.Namespace, model_dir: str, name: str, setting: dict[str, Any]
) -> dict[str, Any]:
    """Train ``--steps`` + 1 steps under ``setting``; mean and median of the last ``--steps``."""
    import torch
    from peft import LoraConfig
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    from trl_env.trl import TurnCreditGRPOTrainer

    rollout = TimedRollout(args)
    rows: list[dict[str, float]] = []

    class Recorder(TrainerCallback):
        def on_step_begin(self, *_: Any, **__: Any) -> None:
            self.started = time.perf_counter()
            self.marks = (rollout.generation_s, rollout.rollout_s)

        def on_step_end(self, _args: Any, state: Any, *__: Any, **___: Any) -> None:
            step = time.perf_counter() - self.started
            generation = rollout.generation_s - self.marks[0]
            in_rollout = rollout.rollout_s - self.marks[1]
            lengths = [len(e.completion_ids) for e in rollout.episodes]
            waste = 1 - sum(lengths) / (len(lengths) * max(lengths)) if lengths else 0.0
            rows.append({
                "step_s": step, "generation_s": generation, "env_s": in_rollout - generation,
                "training_s": step - in_rollout, "padding_waste": waste,
                "turns": sum(e.turns for e in rollout.episodes) / max(1, len(rollout.episodes)),
            })  # fmt: skip
            print(f"{name:16s} step {state.global_step}: {step:5.1f} s (generation "
                  f"{generation:.1f}, training {step - in_rollout:.1f})", flush=True)  # fmt: skip

    output = tempfile.mkdtemp(prefix="grpo_step_profile_")
    config = GRPOConfig(
        output_dir=output, use_cpu=True, learning_rate=2e-4, lr_scheduler_type="constant",
        per_device_train_batch_size=args.batch_size, num_generations=args.num_generations,
        max_completion_length=args.max_completion_length, max_steps=args.steps + 1, beta=args.beta,
        temperature=1.0, seed=args.seed, logging_steps=1, save_strategy="no", report_to="none",
        disable_tqdm=True, activation_checkpointing=setting["activation_checkpointing"],
        bf16=setting["bf16"],
    )  # fmt: skip
    dataset = trl_env.make_dataset(args.env, (args.steps + 1) * args.batch_size, seed=args.seed)
    trainer_class, credit = GRPOTrainer, {}
    if name in TRL_ENV_TRAINER:
        trainer_class, credit = TurnCreditGRPOTrainer, {"credit": "episode"}
    if "fast_paths" in setting:  # --ablate: trl-env's trainer with these fast paths
        trainer_class = TurnCreditGRPOTrainer
        credit = {"credit": "episode", "fast_paths": setting["fast_paths"]}
    trainer = trainer_class(
        model=model_dir, reward_funcs=trl_env.env_reward, args=config, train_dataset=dataset,
        rollout_func=rollout, callbacks=[Recorder()],
        peft_config=LoraConfig(r=16, lora_alpha=32, target_modules="all-linear",
                               task_type="CAUSAL_LM"), **credit,
    )  # fmt: skip
    torch.manual_seed(args.seed)
    trainer.train()
    gap = logprob_gap(trainer, rollout.episodes) if setting["bf16"] and not args.ablate else None
    shutil.rmtree(output, ignore_errors=True)
    measured = rows[1:] or rows
    mean = {key: sum(r[key] for r in measured) / len(measured) for key in measured[0]}
    import resource

    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # KiB on Linux
    return {
        "setting": name, **setting, "trainer": type(trainer).__name__, **mean,
        "median_step_s": statistics.median(r["step_s"] for r in measured),
        "step_times_s": [round(r["step_s"], 2) for r in measured],
        "steps": len(measured), "bf16_gap": gap,
        "peak_memory_gb": round(peak_gb, 2),
    }  # fmt: skip


def logprob_gap(trainer: Any, episodes: list[Any]) -> dict[str, float]:
    """|sampled - bf16 teacher-forced| log-probabilities of the model's own tokens."""
    import torch

    model = trainer.model
    deltas = []
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        for episode in episodes[:4]:
            ids = torch.tensor([episode.prompt_ids + episode.completion_ids])
            logits = model(input_ids=ids).logits[0, len(episode.prompt_ids) - 1 : -1].float()
            logps = torch.log_softmax(logits, dim=-1)
            picked = logps.gather(1, torch.tensor(episode.completion_ids)[:, None])[:, 0]
            for value, sampled, own in zip(
                picked.tolist(), episode.logprobs, episode.env_mask, strict=True
            ):
                if own:
                    deltas.append(abs(value - sampled))
    return {
        "mean": round(sum(deltas) / max(1, len(deltas)), 4),
        "max": round(max(deltas, default=0.0), 4),
        "tokens": len(deltas),
    }


def run_settings(
    args: argparse.Namespace, settings: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Profile each setting in its own process (its own peak memory, no shared caches), once per
    ``--rounds``: round 0 in the given order, round 1 in reverse, and so on, so that a machine
    that drifts (gets faster or slower over the run) shifts every setting alike within a round.
    Each result carries its ``round``."""
    results = []
    for round_ in range(args.rounds):
        names = list(settings) if round_ % 2 == 0 else list(reversed(settings))
        for name in names:
            results.append({**run_one(name, settings[name]), "round": round_})
    return results


def run_one(name: str, setting: dict[str, Any]) -> dict[str, Any]:
    """One setting in a child process: its printed steps, then its result (the last line)."""
    argv = [a for a in sys.argv[1:] if a != "--child"]
    done = subprocess.run(
        [sys.executable, __file__, *argv, "--settings", name, "--child"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    print("".join(line + "\n" for line in done.stdout.splitlines()[:-1]), end="", flush=True)
    if done.returncode != 0:
        killed = done.returncode in (-9, 137)
        print(f"{name}: failed ({'killed: out of memory?' if killed else done.stderr[-500:]})")
        return {"setting": name, **setting, "failed": True, "returncode": done.returncode}
    return json.loads(done.stdout.splitlines()[-1])


def print_table(args: argparse.Namespace, results: list[dict[str, Any]]) -> None:
    print(f"\n{args.env}, {args.batch_size} episodes/step, up to {args.max_turns} turns, "
          f"{args.max_new_tokens} tokens/turn, LoRA; {args.steps} measured steps each")  # fmt: skip
    print(f"{'setting':30s}{'median s':>9s}{'mean s':>8s}{'gen s':>8s}{'train s':>9s}"
          f"{'pad waste':>11s}{'peak GB':>9s}")  # fmt: skip
    for r in results:
        label = r["setting"] + (f" [round {r['round']}]" if args.rounds > 1 else "")
        if r.get("failed"):
            print(f"{label:30s}  failed (exit {r['returncode']})")
            continue
        print(f"{label:30s}{r['median_step_s']:9.1f}{r['step_s']:8.1f}"
              f"{r['generation_s']:8.1f}{r['training_s']:9.1f}{r['padding_waste']:11.2f}"
              f"{r['peak_memory_gb']:9.1f}")  # fmt: skip


def ablation_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each layer's gain: the median step without it less the median step with every layer on
    (the mean of the two "on" runs), its share of the step, and its verdict against the
    run-to-run noise (the gap between the medians of the two "on" runs, the same setting run
    twice): a gain above it earns the layer its place, one below minus it makes the step slower,
    the rest is inside the noise. (Steps within one run play different tasks, so their spread is
    not noise; a layer that changes the sampled tokens also changes the episodes, so a setting's
    generation and training parts move by several seconds with it.)"""
    ok = {r["setting"]: r for r in results if not r.get("failed")}
    ons = [ok[n]["median_step_s"] for n in ("fast-paths on", "fast-paths on (again)") if n in ok]
    if not ons:
        return {"layers": {}, "on_s": None, "off_s": None, "noise_s": None}
    on_s = sum(ons) / len(ons)
    noise_s = max(ons) - min(ons)
    layers = {}
    for r in ok.values():
        if "layer" not in r:
            continue
        gain = r["median_step_s"] - on_s
        verdict = "earns its place" if gain > noise_s else "inside the noise"
        layers[r["layer"]] = {
            "median_without_s": round(r["median_step_s"], 2), "gain_s": round(gain, 2),
            "share": round(gain / r["median_step_s"], 3), "inside_noise": gain <= noise_s,
            "verdict": "slower with it" if gain < -noise_s else verdict,
        }  # fmt: skip
    off = ok.get("fast-paths off")
    return {
        "layers": layers, "on_s": round(on_s, 2),
        "off_s": round(off["median_step_s"], 2) if off else None, "noise_s": round(noise_s, 2),
    }  # fmt: skip


def rounds_summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`ablation_summary` for ``--rounds`` R > 1, judged within each round: a layer's gain
    in a round is the median step without it less the median step with every layer on, in that
    round; its figure is the median of those R gains; it **earns its place** when the gain is
    positive in every round, is **slower with it** when negative in every round, and is inside
    the noise otherwise. ``noise_s`` is the spread of the "every layer on" medians across rounds
    (what a single sequential run would have taken for noise). A machine that drifts over the run
    moves both terms of a round's gain alike, so it cannot fake a verdict.

    Example:
        >>> def run(name, round_, step, layer=None):
        ...     return {"setting": name, "round": round_, "median_step_s": step,
        ...             **({"layer": layer} if layer else {})}
        >>> results = [run("fast-paths on", 0, 30.0), run("without a", 0, 31.0, "a"),
        ...            run("fast-paths off", 0, 60.0), run("fast-paths on", 1, 25.0),
        ...            run("without a", 1, 25.5, "a"), run("fast-paths off", 1, 50.0)]
        >>> summary = rounds_summary(results)
        >>> summary["on_s"], summary["off_s"], summary["noise_s"]
        (27.5, 55.0, 5.0)
        >>> summary["layers"]["a"]["gains_s"], summary["layers"]["a"]["verdict"]
        ([1.0, 0.5], 'earns its place')
    """
    ok = [r for r in results if not r.get("failed")]
    rounds = sorted({r["round"] for r in ok})
    step = {(r["round"], r["setting"]): r["median_step_s"] for r in ok}
    ons = [step[(k, "fast-paths on")] for k in rounds if (k, "fast-paths on") in step]
    if not ons:
        return {"layers": {}, "on_s": None, "off_s": None, "noise_s": None, "rounds": rounds}
    layers = {}
    for layer in dict.fromkeys(r["layer"] for r in ok if "layer" in r):
        name = f"without {layer}"
        paired = [k for k in rounds if (k, name) in step and (k, "fast-paths on") in step]
        gains = [step[(k, name)] - step[(k, "fast-paths on")] for k in paired]
        without = statistics.median(step[(k, name)] for k in paired)
        gain = statistics.median(gains)
        verdict = "earns its place" if min(gains) > 0 else "inside the noise"
        verdict = "slower with it" if max(gains) < 0 else verdict
        layers[layer] = {
            "median_without_s": round(without, 2), "gain_s": round(gain, 2),
            "gains_s": [round(g, 2) for g in gains], "share": round(gain / without, 3),
            "inside_noise": verdict == "inside the noise", "verdict": verdict,
        }  # fmt: skip
    offs = [step[(k, "fast-paths off")] for k in rounds if (k, "fast-paths off") in step]
    return {
        "layers": layers, "on_s": round(statistics.median(ons), 2),
        "off_s": round(statistics.median(offs), 2) if offs else None,
        "noise_s": round(max(ons) - min(ons), 2), "rounds": rounds,
    }  # fmt: skip


def print_ablation(summary: dict[str, Any], idle: list[str], bf16: bool) -> None:
    print(f"\nevery layer on: median {summary['on_s']} s/step; none (stock TRL/transformers/peft): "
          f"{summary['off_s']} s; run-to-run noise {summary['noise_s']} s")  # fmt: skip
    print(f"{'layer':24s}{'without s':>10s}{'gain s':>8s}{'share':>8s}  verdict")
    for layer, row in summary["layers"].items():
        verdict = row["verdict"]
        if "gains_s" in row:  # --rounds: the gain of each round
            verdict += " (by round: " + ", ".join(f"{g:+.1f}" for g in row["gains_s"]) + ")"
        print(f"{layer:24s}{row['median_without_s']:10.1f}{row['gain_s']:8.1f}"
              f"{row['share']:8.1%}  {verdict}")  # fmt: skip
    where = "in a float32 generation" if bf16 else "under bf16 autocast"
    for layer in idle:
        print(f"{layer:24s}{'':26s}  idle here (acts only {where})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model",
        default=str(DEFAULT_GGUF),
        help="a .gguf file, model directory or run folder (default: %(default)s)",
    )
    parser.add_argument("--env", default="TextTicTacToe-v0")
    parser.add_argument("--steps", type=int, default=3, help="measured steps per setting")
    parser.add_argument("--batch-size", type=int, default=8, help="episodes per step")
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=32, help="tokens per model turn")
    parser.add_argument("--max-turns", type=int, default=6)
    parser.add_argument("--max-completion-length", type=int, default=512)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--beta", type=float, default=0.0, help="KL coefficient (a reference pass each step)"
    )
    parser.add_argument(
        "--ablate",
        action="store_true",
        help="turn off one fast path at a time in trl-env's trainer (see ablation_settings)",
    )
    parser.add_argument("--settings", nargs="+", default=None, help="settings to run (by name)")
    parser.add_argument(
        "--rounds", type=int, default=1,
        help="run every setting this many times, in alternating order (see rounds_summary)",
    )  # fmt: skip
    parser.add_argument(
        "--bf16", action=argparse.BooleanOptionalAction, default=None,
        help="bfloat16 autocast for --ablate (default: as trl-env train decides, where the CPU "
        "has bf16 units); --no-bf16 measures the float32 run on a CPU that has them",
    )  # fmt: skip
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    import torch

    threads = int(os.environ.get("OMP_NUM_THREADS", str(os.cpu_count() or 2)))
    torch.set_num_threads(threads)
    model_dir = resolve_model(args.model)
    from trl_env._machine import machine_record
    from trl_env.trl.models._bf16 import default_bf16  # the library's own test

    bf16 = default_bf16() if args.bf16 is None else args.bf16
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    settings = ablation_settings(bf16, args.rounds) if args.ablate else dict(SETTINGS)
    if not bf16 and not args.ablate:
        print(
            "bf16 is off for this run (no bf16 units here, or --no-bf16): skipping the bf16 settings"
        )
        settings = {n: s for n, s in settings.items() if not s["bf16"]}
    unknown = [n for n in args.settings or [] if n not in settings]
    if unknown:
        parser.error(f"unknown settings {unknown}; this run has {list(settings)}")
    if args.settings:
        settings = {n: settings[n] for n in args.settings}
    if args.child:
        name = next(iter(settings))
        print(json.dumps(profile(args, model_dir, name, settings[name])))
        return
    load_before = os.getloadavg()[0]
    commit = git_commit()  # now: a checkout that moves during a long run must not rename it
    started = time.perf_counter()
    results = run_settings(args, settings)
    print_table(args, results)
    facts = {
        "env": args.env, "cpu": machine_record(threads), "commit": commit,
        "command": shlex.join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "idle": load_before < 0.5, "load_average_before": round(load_before, 2),
        "wall_s": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    ok = [r for r in results if not r.get("failed")]
    by_name: dict[str, Any] = {r["setting"]: r for r in ok}
    if args.rounds > 1:  # every round's result of each setting
        by_name = {name: [r for r in ok if r["setting"] == name] for name in by_name}
    if args.ablate:
        summary = rounds_summary(results) if args.rounds > 1 else ablation_summary(results)
        idle = idle_layers(bf16)
        print_ablation(summary, idle, bf16)
        ratio = (
            round(summary["off_s"] / summary["on_s"], 2)
            if summary["off_s"] and summary["on_s"]
            else None
        )
        print(json.dumps({
            **facts, "settings": by_name, "ablation": summary["layers"], "idle_layers": idle,
            "noise_s": summary["noise_s"], "rounds": args.rounds,
            "before": "fast-paths off", "after": "fast-paths on",
            "before_s": summary["off_s"], "after_s": summary["on_s"], "ratio": ratio,
        }))  # fmt: skip
        return
    if "before" not in by_name or len(by_name) < 2:
        print(json.dumps({**facts, "settings": results, "before_s": None,
                          "after_s": None, "ratio": None}))  # fmt: skip
        return
    before = by_name["before"]
    after = by_name.get("after") or by_name[[n for n in by_name if n != "before"][-1]]
    print(json.dumps({
        **facts, "settings": by_name, "after": after["setting"],
        "before_s": round(before["step_s"], 2), "after_s": round(after["step_s"], 2),
        "ratio": round(before["step_s"] / after["step_s"], 2),
        "bf16_logprob_gap": after.get("bf16_gap"),
    }))  # fmt: skip


if __name__ == "__main__":
    main()
