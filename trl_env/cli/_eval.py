"""``trl-env eval``: measure a policy (random, oracle, a scripted player or a model) on environments.

Its options are generated from :class:`~trl_env.cli._eval_config.EvalConfig`; the work is
:func:`trl_env._eval.evaluate`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

from trl_env.cli._arguments import (
    add_config_arguments,
    add_config_file_option,
    config_from_namespace,
)
from trl_env.cli._common import PROG, CommandLineError, Formatter
from trl_env.cli._eval_config import EvalConfig
from trl_env.cli._threads import add_threads_option

__all__ = ["add_parser"]

_PROG = f"{PROG} eval"

_EPILOG = """\
policies:
  random    a random legal-looking reply each turn (a random word for Wordle, ...)
  oracle    the environment's own solver (`trl-env list --oracles` shows which envs
            have one)
  NAME      one of the environment's own scripted players (TextHangman-v0:
            frequency, the untried letters in a fixed frequency order)
  MODEL     a model directory, a Hugging Face Hub id, a .gguf file (converted once,
            cached), a LoRA adapter or a trl-env train/sft run folder; episodes are
            played in batches by the training rollout (needs: pip install "trl-env[trl]")

Episode i of every env plays seed S+i (S from --seed), whatever the policy, so
policies are compared on the same games. The table shows, per env: success rate,
with its 95% Wilson interval, mean return with its 95% confidence interval, mean
turns, and the share of turns whose reply the env rejected as invalid.

--samples K plays every seed K more times by sampling (a model at
--sample-temperature, default 1.0; K differently seeded random policies; the
oracle or a scripted player, which replay the same games) and adds two columns: pass@K, the share of seeds
won at least once in the K samples (the unbiased estimator 1 - C(n-c,K)/C(n,K) of
Chen et al. 2021, with n = K samples of which c won), and avg@K, the mean success
of the samples.

examples:
  trl-env eval TextWordle-v0 --policy oracle --episodes 1000
  trl-env eval TextWordle-v0 TextGuessNumber-v0 --policy random --episodes 500 --seed 7
  trl-env eval TextHangman-v0 --policy frequency --episodes 256 --seed 10000
  trl-env eval TextWordle-v0 --policy ./checkpoints/step-500 --episodes 64 \\
      --temperature 0 --max-new-tokens 128 --out runs/step-500
  trl-env eval TextGuessNumber-v0 --policy ./checkpoints/step-500 --episodes 64 \\
      --temperature 0 --samples 8 --sample-temperature 0.7
  trl-env eval --config runs/step-500/config.yaml --out runs/again   # repeat an eval

head to head (two-player envs: TextTicTacToe-v0, TextTicTacToePerfect-v0,
TextArena/TicTacToe-v0, TextArena/ConnectFour-v0):
  --opponent B plays the policy A against B: random, the env's scripted players
  (greedy, perfect for tic-tac-toe), oracle, or a model. Models play greedily
  unless --temperature (A) / --opponent-temperature (B). Episode i plays seed S+i;
  A moves first when i is even, second when i is odd. The table gives A's wins,
  draws, losses and score (wins + draws/2) / N, each with its 95% Wilson
  interval, with A first, A second and both; --out writes results.json (the same
  figures: wins, draws, losses, score, score_ci_low, score_ci_high, per env and
  under "first"/"second") and transcripts.jsonl (one game a line, both seats'
  own transcripts).
    trl-env eval TextTicTacToe-v0 --policy perfect --opponent random --episodes 100
    trl-env eval TextTicTacToe-v0 --policy runs/ttt --opponent runs/ttt/checkpoint-50 \\
        --episodes 200 --seed 1000 --out runs/ttt/vs-step-50

A trl-env train run folder (or its final/ or checkpoint-N/) as the policy is
evaluated with the run's own settings (system prompt, token limits, turn limit,
env kwargs, from its train_config.json) unless flags override them; its warm
start (RUN/warm_start) with its SFT settings and the run's token and turn limits.

--out DIR writes DIR/results.json (settings and per-env statistics),
DIR/transcripts.jsonl (one line per episode: seed, return, success, turns, transcript;
sampled episodes come after the others, marked "sample": i) and DIR/config.yaml (every
setting, resolved: `--config DIR/config.yaml` repeats the eval)."""


def _check_out(config: EvalConfig) -> None:
    """Fail before any episode is played if ``--out`` cannot take the results."""
    if config.output_dir is None:
        return
    out = Path(config.output_dir)
    if out.exists() and not out.is_dir():
        raise CommandLineError(_PROG, f"--out {out} is a file: name a folder")
    if (out / "results.json").exists() and not config.overwrite:
        raise CommandLineError(
            _PROG,
            f"--out {out} already holds results.json: pass --overwrite to replace it, or name "
            "another folder",
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandLineError(_PROG, f"--out {out} cannot be created: {error}") from None


_RUN_SETTINGS = ("max_new_tokens_per_turn", "max_completion_length", "max_turns", "env_kwargs")
"""The settings a ``trl-env train`` run folder lends to its eval, unless flags give them."""


def _warn_if_chosen_on_these_seeds(config: EvalConfig, run: dict[str, Any]) -> None:
    """Warn when the policy (``RUN/best``, or ``RUN`` of a ``--final-model best`` run) was chosen
    by held-out evals on seeds of an env this eval plays again: its figures there are flattered."""
    from trl_env.trl.training._final_model import chosen_on_seeds

    chosen = chosen_on_seeds(run, config.policy)
    envs = run.get("env_ids")
    if chosen is None or (isinstance(envs, list) and not set(envs) & set(config.env_ids)):
        return
    played = range(config.seed, config.seed + config.episodes)
    shared = len(range(max(chosen[0], played[0]), min(chosen[-1], played[-1]) + 1))
    if not shared:
        return
    below = chosen[0] - config.episodes + 1  # the first seed that would end before them
    print(
        f"{_PROG}: warning: this model was chosen as the best of the run's held-out evals on "
        f"seeds {chosen[0]}-{chosen[-1]}; {shared} of this eval's seeds are among them, which "
        f"flatters it: pass --seed {chosen[-1] + 1} or above"
        + (f" (or below {below})" if below > 0 else "")
        + " to judge it on seeds its choice never saw",
        file=sys.stderr,
    )


def _with_run_settings(config: EvalConfig) -> EvalConfig:
    """``config`` with the settings it leaves unset taken from the run that ``--policy`` names."""
    if not os.path.isdir(config.policy):
        return config
    from trl_env.trl.models import run_config

    run = run_config(config.policy)
    if run is None:
        return config
    _warn_if_chosen_on_these_seeds(config, run)
    taken: list[str] = []
    changes: dict[str, Any] = {}
    for name in _RUN_SETTINGS:
        if getattr(config, name) in (None, {}) and run.get(name) not in (None, {}):
            changes[name] = run[name]
            flag = "max-new-tokens" if name == "max_new_tokens_per_turn" else name.replace("_", "-")
            taken.append(f"{flag} {run[name]}")
    if config.system_prompt is None:
        prompt = run.get("system_prompt")
        changes["system_prompt"] = prompt if isinstance(prompt, str) else ""
        taken.append("its system prompt" if prompt else "no system prompt")
    if taken:  # flags gave every setting: nothing to announce
        print(f"{_PROG}: using the run's settings ({', '.join(taken)}); flags override them",
              file=sys.stderr)  # fmt: skip
    return dataclasses.replace(config, **changes)


def run(args: argparse.Namespace) -> int:
    """Run ``trl-env eval`` with parsed arguments; return the exit status."""
    from trl_env._configs import config_to_yaml
    from trl_env._eval import check_env_id, evaluate, format_table, policy_kind, write_outputs

    config: EvalConfig = config_from_namespace(EvalConfig, args)
    for env_id in config.env_ids:
        check_env_id(env_id)
    if config.opponent is not None:
        return _run_head_to_head(config, args)
    kind = policy_kind(config.policy, config.env_ids)
    if kind == "model" and not os.path.exists(config.policy):
        from trl_env._head_to_head import _scripted_players

        if config.policy in _scripted_players():
            raise CommandLineError(
                _PROG,
                f"{config.policy} is a scripted player of the two-player envs: play it against "
                f"another policy with --opponent (--policy {config.policy} --opponent random), or "
                "use --policy oracle",
            )
    _check_out(config)
    if config.sample_temperature is not None and kind != "model":
        raise CommandLineError(
            _PROG,
            f"--sample-temperature only applies when --policy is a model; the {config.policy} "
            "policy's samples have no temperature",
        )
    threads = None
    if kind == "model":
        from trl_env.trl._lazy import require_trl
        from trl_env.trl._threads import set_torch_threads

        require_trl("evaluating a model")
        config = _with_run_settings(config)
        # Said after the results, so that an error stays the one line on stderr.
        threads = set_torch_threads(getattr(args, "threads", None), announce=False)
    report = evaluate(
        config.env_ids,
        config.policy,
        config.episodes,
        config.seed,
        env_kwargs=config.env_kwargs,
        max_turns=config.max_turns,
        model_options=config.model_options(),
        record_transcripts=config.output_dir is not None,
        progress=config.progress,
        samples=config.samples,
        sample_temperature=config.sample_temperature or 1.0,
    )
    print(json.dumps(report.to_json(), indent=2) if config.as_json else format_table(report))
    if config.output_dir is not None:
        results, transcripts = write_outputs(report, config.output_dir)
        settings = Path(config.output_dir) / "config.yaml"
        settings.write_text(config_to_yaml(config.resolved(), leave_out=("overwrite",)), "utf-8")
        print(f"wrote {results}, {transcripts} and {settings}", file=sys.stderr)
    if threads is not None:
        print(f"{_PROG}: generated with {threads} torch threads (--threads N to change)",
              file=sys.stderr)  # fmt: skip
    return 0


def _run_head_to_head(config: EvalConfig, args: argparse.Namespace) -> int:
    """``trl-env eval ENV --policy A --opponent B``: A against B on two-player envs."""
    from trl_env._configs import config_to_yaml
    from trl_env._head_to_head import check_two_player_envs, head_to_head
    from trl_env._head_to_head_report import format_head_to_head, write_head_to_head

    assert config.opponent is not None
    classes = check_two_player_envs(config.env_ids)  # a one-player env: exit 2, naming them
    _check_out(config)
    scripted = {name for cls in classes.values() for name in cls.scripted_opponents}
    models = [n for n in (config.policy, config.opponent) if n not in scripted | {"oracle"}]
    threads = None
    opponent_options = config.model_options()  # B's run folder lends its own settings
    if models:
        from trl_env.trl._lazy import require_trl
        from trl_env.trl._threads import set_torch_threads

        require_trl("evaluating a model")
        if config.policy in models:
            config = _with_run_settings(config)
        threads = set_torch_threads(getattr(args, "threads", None), announce=False)
    report = head_to_head(
        config.env_ids,
        config.policy,
        config.opponent,
        config.episodes,
        config.seed,
        env_kwargs=config.env_kwargs,
        max_turns=config.max_turns,
        model_options=config.model_options(),
        opponent_options=opponent_options,
        opponent_temperature=config.opponent_temperature,
        record_transcripts=config.output_dir is not None,
        progress=config.progress,
    )
    print(json.dumps(report.to_json(), indent=2) if config.as_json else format_head_to_head(report))
    if config.output_dir is not None:
        results, transcripts = write_head_to_head(report, config.output_dir)
        settings = Path(config.output_dir) / "config.yaml"
        settings.write_text(config_to_yaml(config.resolved(), leave_out=("overwrite",)), "utf-8")
        print(f"wrote {results}, {transcripts} and {settings}", file=sys.stderr)
    if threads is not None:
        print(f"{_PROG}: generated with {threads} torch threads (--threads N to change)",
              file=sys.stderr)  # fmt: skip
    return 0


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Register ``eval`` on the ``commands`` subparsers (its options: :class:`EvalConfig`)."""
    p = commands.add_parser(
        "eval",
        parents=parents,
        formatter_class=Formatter,
        help="evaluate a policy (random, oracle, a scripted player or a model) on environments",
        description="Evaluate a policy on one or more environments and print a table of results.",
        epilog=_EPILOG,
    )
    add_config_arguments(p, EvalConfig)
    model = next(g for g in p._action_groups if g.title == "model policies")
    add_threads_option(model)
    add_config_file_option(p)
    p.set_defaults(func=run)
