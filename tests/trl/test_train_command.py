"""``trl-env train`` (``trl_env.cli._train`` over ``trl_env.trl.training``): options, defaults, errors,
``--config`` files, and short real runs.

The runs use the built-in tiny model or the session's ``tiny_model_dir`` and 1-2 GRPO steps; they
are marked ``slow`` because they train (CI runs them), and each takes seconds.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

import torch
import transformers

from trl_env.cli import main
from trl_env.cli._train import add_arguments, config_from_args
from trl_env.trl.models import load_model_and_tokenizer
from trl_env.trl.training import TrainConfig, TrainResult, train
from trl_env.trl.training import _run as train_module

ENV = "TextLargestNumber-v0"
# Small and fast: 2 tasks x 8 generations per step, a few warm-start steps.
FAST = ["--batch-size", "16", "--num-tasks", "16", "--warm-start-steps", "5", "--no-progress"]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="trl-env train")
    add_arguments(parser)
    return parser.parse_args(argv)


def run_cli(argv: list[str]) -> int:
    return main(["train", *argv])


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


# ---------------------------------------------------------------------------- options and config


def test_parser_defaults() -> None:
    args = parse([ENV, "TextWordle-v0"])
    assert args.env_ids == [ENV, "TextWordle-v0"]
    assert args.model is None and args.max_steps is None and args.learning_rate is None
    assert args.num_generations == 8 and args.beta == 0.0 and args.temperature == 1.0
    assert args.vllm_mode == "colocate" and not args.use_vllm and not args.lora and not args.bf16


def test_defaults_resolve_per_model_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    from trl_env.trl.training import _defaults as config_module

    monkeypatch.setattr(config_module, "_has_gpu", lambda: True)  # TRL's GPU defaults
    tiny = TrainConfig([ENV]).resolved()
    assert tiny.learning_rate == 1e-3 and tiny.per_device_train_batch_size == 64
    assert tiny.warm_start_steps == 600 and tiny.system_prompt is None
    assert tiny.max_new_tokens_per_turn == 8 and tiny.max_steps == 400
    real = TrainConfig([ENV], model="Qwen/Qwen3-0.6B").resolved()
    assert real.learning_rate == 1e-6 and real.warm_start_steps == 0
    assert real.max_completion_length == 1024 and real.system_prompt is not None
    assert TrainConfig([ENV], model="Qwen/Qwen3-0.6B", lora=True).resolved().learning_rate == 1e-5
    # On a CPU, a real model's defaults finish within about an hour (the tiny model's do not change).
    monkeypatch.setattr(config_module, "_has_gpu", lambda: False)
    cpu = TrainConfig([ENV], model="Qwen/Qwen3-0.6B", lora=True).resolved()
    assert (cpu.learning_rate, cpu.max_new_tokens_per_turn, cpu.max_completion_length) == (
        2e-4,
        32,
        256,
    )
    assert cpu.max_steps == 100 and TrainConfig([ENV]).resolved().max_steps == 400
    # Explicit values win; a default batch is rounded up to whole groups.
    custom = TrainConfig([ENV], learning_rate=5e-4, num_generations=6, system_prompt=None)
    assert custom.resolved().learning_rate == 5e-4
    assert custom.resolved().per_device_train_batch_size == 66
    assert custom.resolved().system_prompt is None
    assert TrainConfig([ENV]).resolved().output_dir.startswith("trl-env-runs")


@pytest.mark.parametrize("pays", [True, False])
def test_bf16_defaults_to_where_it_pays(monkeypatch: pytest.MonkeyPatch, pays: bool) -> None:
    """bf16 is on for a real model where the machine has bf16 matmul units (a bf16 GPU, an AMX
    CPU), never for the tiny model; an explicit value wins."""
    from trl_env.trl.models import _bf16

    monkeypatch.setattr(_bf16, "default_bf16", lambda: pays)
    assert TrainConfig([ENV], model="m", lora=True).resolved().bf16 is pays
    assert TrainConfig([ENV]).resolved().bf16 is False
    assert TrainConfig([ENV], model="m", bf16=not pays).resolved().bf16 is (not pays)
    assert TrainConfig([ENV], bf16=True).resolved().bf16 is True


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"num_generations": 1}, "at least 2"),
        ({"per_device_train_batch_size": 12}, "multiple of num_generations"),
        ({"learning_rate": 0.0}, "learning_rate must be a positive"),
        ({"learning_rate": math.nan}, "learning_rate must be a positive"),
        ({"temperature": 0.0}, "temperature must be > 0"),
        ({"beta": -0.1}, "beta must be >= 0"),
        ({"epsilon_high": 0.0}, "epsilon_high must be > 0"),
        ({"epsilon_high": math.inf}, "epsilon_high must be > 0"),
        ({"max_steps": 0}, "max_steps must be a positive int"),
        ({"num_tasks": 0}, "num_tasks must be a positive int"),
        ({"vllm_mode": "remote"}, "vllm_mode must be 'colocate' or 'server'"),
        ({"vllm_gpu_memory_utilization": 1.5}, "vllm_gpu_memory_utilization"),
        ({"warm_start_steps": -1}, "warm_start_steps must be an int >= 0"),
        ({"save_steps": -1}, "save_steps must be an int >= 0"),
    ],
)
def test_bad_config_values(overrides: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TrainConfig([ENV], **overrides)


@pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")  # TRL's
def test_epsilon_high_reaches_grpo_config() -> None:
    """``--epsilon-high`` (clip-higher) is GRPOConfig's; unset, TRL's default (epsilon) holds."""
    from trl_env.trl.training._trainer import _grpo_args

    args = parse([ENV, "--epsilon-high", "0.28", "--max-steps", "1"])
    assert args.epsilon_high == 0.28
    clipped = _grpo_args(TrainConfig([ENV], epsilon_high=0.28, max_steps=1).resolved())
    assert (clipped.epsilon, clipped.epsilon_high) == (0.2, 0.28)
    default = _grpo_args(TrainConfig([ENV], max_steps=1).resolved())
    assert default.epsilon_high is None and default.epsilon == 0.2  # the trainer uses epsilon


def test_no_env_id() -> None:
    with pytest.raises(ValueError, match="at least one env ID"):
        TrainConfig([])


def test_summary() -> None:
    rows = [{"step": i + 1, "reward": r} for i, r in enumerate([0.1] * 10 + [0.5] * 10)]
    result = TrainResult(
        Path("."), Path("."), Path("."), None, rows, 12.0, 10.0, TrainConfig([ENV])
    )
    summary = result.summary()
    assert summary["first_mean"] == pytest.approx(0.1) and summary["last_mean"] == pytest.approx(
        0.5
    )
    assert summary["ratio"] == pytest.approx(5.0) and summary["gain"] == pytest.approx(0.4)
    assert summary["steps"] == 20 and summary["wall_time_s"] == 12.0


# ---------------------------------------------------------------------------- clear errors, fast


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["TextWordel-v0"], "Did you mean: `TextWordle`"),
        ([ENV, "--num-generations", "1"], "at least 2"),
        ([ENV, "--batch-size", "12"], "must be a multiple of num_generations (8)"),
        ([ENV, "--learning-rate", "-1"], "learning_rate must be a positive number"),
        ([ENV, "--temperature", "0"], "temperature must be > 0"),
        ([ENV, "--max-steps", "0"], "max_steps must be a positive int"),
        ([ENV, "--env-kwargs", "{num_options: 3"], "--env-kwargs is not valid JSON"),
        ([ENV, "--env-kwargs", "[3]"], "--env-kwargs must be a JSON object"),
        ([ENV, "--env-kwargs", '{"num_options": 1}'], "num_options must be an int >= 2"),
        (
            [ENV, "--env-kwargs", '{"colour": "red"}'],
            "TextLargestNumber-v0 does not accept 'colour'",
        ),
        ([ENV, "--model", "/no/such/model/dir"], "neither an existing model directory"),
        (["CartPole-v1"], "CartPole-v1 is not a text environment"),
    ],
)
def test_bad_values_give_clear_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli([*argv, "--output-dir", str(tmp_path / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trl-env train: error: ") and message in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()  # failed before doing anything


@pytest.mark.parametrize(("flag", "package"), [("--lora", "peft"), ("--use-vllm", "vllm")])
def test_missing_packages_name_the_install(
    flag: str,
    package: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    # Make the package look absent whether or not it is installed (CI installs peft), so this
    # case runs everywhere instead of skipping where the extra is present.
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == package else real(name, *a)
    )
    assert run_cli([ENV, flag, "--output-dir", str(tmp_path)]) == 2
    install = '"trl-env[lora]"' if package == "peft" else package
    assert f"pip install {install}" in capsys.readouterr().err


def test_bad_vllm_mode_is_an_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse([ENV, "--vllm-mode", "remote"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'remote'" in capsys.readouterr().err


def test_hub_ids_go_through_from_pretrained(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No network here: stand in for the Hub and check that a Hub id reaches from_pretrained, the
    # call a local directory takes too (see test_local_model_dir below).
    names: list[str] = []

    def offline(name: str, *args: Any, **kwargs: Any) -> Any:
        names.append(name)
        raise OSError(f"We couldn't connect to the Hub to load {name}")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", offline)
    argv = [ENV, "--model", "some-org/some-model", "--output-dir", str(tmp_path), "--no-progress"]
    assert run_cli(argv) == 1  # a model that cannot be loaded: a runtime failure, as in eval
    assert names == ["some-org/some-model"]
    assert "couldn't connect to the Hub" in capsys.readouterr().err


# ---------------------------------------------------------------------------- real runs


@pytest.mark.slow
def test_run_writes_csv_png_and_checkpoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = [ENV, "--max-steps", "2", "--save-steps", "1", "--output-dir", str(out), *FAST]
    assert run_cli(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["steps"] == 2 and report["model_dir"] == str(out / "final")

    all_rows = read_csv(out / "metrics.csv")
    # Held-out evals (on by default) before the first step and after every step of this
    # 2-step run: step 0 has only eval figures; the others have both.
    assert [row["step"] for row in all_rows] == ["0", "1", "2"]
    assert all(row["eval_success_rate"] != "" for row in all_rows)
    assert all_rows[0]["reward"] == ""
    rows = all_rows[1:]
    for column in ("reward", "env/success_rate", "loss", "learning_rate", "wall_time_s"):
        assert all(row[column] != "" for row in rows), column
        float(rows[0][column])
    # The process's peak RSS so far, at every step: positive and never falling.
    peaks = [float(row["peak_rss_gb"]) for row in rows]
    assert peaks[0] > 0 and peaks == sorted(peaks)
    assert list(rows[0])[:2] == ["step", "reward"]

    assert (out / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((out / "train_config.json").read_text())["max_steps"] == 2
    # Final model and tokenizer, loadable like any --model; intermediate checkpoints.
    model, tokenizer = load_model_and_tokenizer(out / "final")
    assert model.config.model_type == "qwen3" and tokenizer.chat_template
    assert (out / "checkpoint-1").is_dir() and (out / "checkpoint-2").is_dir()
    # The warm-started model the run started from is kept too.
    assert (out / "warm_start" / "config.json").is_file()


@pytest.mark.slow
def test_a_run_repeats_from_its_config_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    first, again = tmp_path / "first", tmp_path / "again"
    argv = [ENV, "--output-dir", str(first), *FAST, "--max-steps", "1", "--no-plot"]
    assert run_cli([*argv, "--eval-every", "0"]) == 0
    written = yaml.safe_load((first / "config.yaml").read_text())
    assert written["max_steps"] == 1 and written["output_dir"] == str(first)
    assert written["learning_rate"] == 1e-3  # resolved: the tiny model's default, written out
    assert "overwrite" not in written and "resume" not in written
    # The run folder already holds a run: the file's output_dir is refused, a flag overrides it.
    assert run_cli(["--config", str(first / "config.yaml")]) == 2
    assert "already holds files" in capsys.readouterr().err
    assert run_cli(["--config", str(first / "config.yaml"), "--output-dir", str(again)]) == 0
    repeated = yaml.safe_load((again / "config.yaml").read_text())
    assert repeated == {**written, "output_dir": str(again)}
    rewards = [[row["reward"] for row in read_csv(run / "metrics.csv")] for run in (first, again)]
    assert rewards[0] == rewards[1]  # the same seeded run


@pytest.mark.slow
def test_local_model_dir(
    tiny_model_dir: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    names: list[str] = []
    original = transformers.AutoTokenizer.from_pretrained

    def spy(name: Any, *args: Any, **kwargs: Any) -> Any:
        names.append(str(name))
        return original(name, *args, **kwargs)

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", spy)
    out = tmp_path / "run"
    argv = [
        ENV,
        "--model",
        tiny_model_dir,
        "--max-steps",
        "1",
        "--max-new-tokens-per-turn",
        "8",
        "--max-completion-length",
        "32",
        "--output-dir",
        str(out),
        *FAST[:4],
        "--no-progress",
    ]
    assert run_cli(argv) == 0
    assert names[0] == tiny_model_dir  # no warm start for a given model: loaded as is
    assert not (out / "warm_start").exists()
    config = json.loads((out / "train_config.json").read_text())
    assert config["model"] == tiny_model_dir and config["learning_rate"] == 1e-6
    assert config["system_prompt"] is not None
    assert len([row for row in read_csv(out / "metrics.csv") if row["reward"]]) == 1
    assert (out / "final" / "model.safetensors").is_file()
    capsys.readouterr()


@pytest.mark.slow
def test_python_api_on_two_envs(tmp_path: Path) -> None:
    lines: list[str] = []
    result = train(
        [ENV, "TextGuessNumber-v0"],
        output_dir=str(tmp_path / "api"),
        max_steps=2,
        per_device_train_batch_size=16,
        num_tasks=16,
        warm_start_steps=5,
        env_kwargs={},
        log=lines.append,
        plot=False,
    )
    assert isinstance(result, TrainResult)
    # Two steps, and held-out evals at steps 0, 1 and 2 (step 0's row holds only those).
    assert len(result.history) == 3 and len(result.rewards()) == 2
    assert "eval_TextGuessNumber-v0/success_rate" in result.history[0]
    assert result.plot_png is None and not (tmp_path / "api" / "learning_curve.png").exists()
    assert result.metrics_csv.is_file() and (result.model_dir / "config.json").is_file()
    assert result.config.env_ids == [ENV, "TextGuessNumber-v0"]
    assert result.wall_time_s >= result.train_time_s > 0
    assert any(line.startswith("warm start: 5 steps") for line in lines)
    # Progress of the warm start shows in a log too (output here is not a terminal).
    assert "warm start: 5/5 steps" in " ".join(lines)
    assert lines[-4].startswith("held-out evals: 3 x 64 episodes")
    assert lines[-3].startswith("done in ")
    assert lines[-2].startswith("evaluate it on held-out seeds with: trl-env eval")
    assert f"--policy {tmp_path / 'api'}" in lines[-2]
    # The last line names the steps, what ended the run, the peak memory and the machine.
    assert lines[-1].startswith("2 steps (step limit) in ") and "GB RSS, on " in lines[-1]
    assert lines[-1].endswith(f"{torch.get_num_threads()} torch threads")
    # Per-env metrics are logged when the dataset mixes envs.
    assert any(key.startswith(f"env/{ENV}/") for key in result.history[1])


def test_module_exports() -> None:
    import trl_env.trl.training as training

    assert set(training.__all__) >= {"TrainConfig", "TrainResult", "train", "eval_command"}


# ---------------------------------------------------------------------------- options from the config


def test_every_config_field_is_an_option() -> None:
    import dataclasses

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    dests = {action.dest for action in parser._actions}
    assert {f.name for f in dataclasses.fields(TrainConfig)} <= dests


@pytest.mark.parametrize(
    ("argv", "field", "value"),
    [
        (["--lr", "0.01"], "learning_rate", 0.01),
        (["--learning-rate", "0.01"], "learning_rate", 0.01),
        (["--max-new-tokens", "5"], "max_new_tokens_per_turn", 5),
        (["--max-new-tokens-per-turn", "5"], "max_new_tokens_per_turn", 5),
        (["--batch-size", "16"], "per_device_train_batch_size", 16),
        (["--out", "x"], "output_dir", "x"),
        (["--lr-scheduler", "linear"], "lr_scheduler_type", "linear"),
        (["--no-plot"], "plot", False),
        (["--no-progress"], "progress", False),
        (["--lora"], "lora", True),
        (["--system-prompt", ""], "system_prompt", None),
        (["--env-kwargs", '{"num_options": 3}'], "env_kwargs", {"num_options": 3}),
        (["--resume"], "resume", True),
        ([], "save_steps", None),
    ],
)
def test_options_and_aliases_map_to_config_fields(argv: list[str], field: str, value: Any) -> None:
    config = config_from_args(parse([ENV, *argv]))
    assert getattr(config, field) == value


def test_help_lists_generated_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse(["--help"])
    out = capsys.readouterr().out
    for flag in ("--max-new-tokens", "--overwrite", "--resume", "--save-total-limit", "--no-plot"):
        assert flag in out


def test_checkpoints_are_on_by_default() -> None:
    assert TrainConfig([ENV]).resolved().save_steps == 40  # a tenth of the 400 tiny-model steps
    assert TrainConfig([ENV], max_steps=5).resolved().save_steps == 1
    assert TrainConfig([ENV], save_steps=0).resolved().save_steps == 0


# ---------------------------------------------------------------------------- runs never lose work


def test_an_existing_run_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "metrics.csv").write_text("step,reward\n1,0.5\n")
    assert run_cli([ENV, "--output-dir", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "already holds files" in err and "--resume" in err and "--overwrite" in err
    assert (tmp_path / "metrics.csv").read_text() == "step,reward\n1,0.5\n"  # untouched


def test_overwrite_only_replaces_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert run_cli([ENV, "--output-dir", str(tmp_path), "--overwrite", "--no-progress"]) == 2
    assert "no trl-env run" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_resume_needs_a_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli([ENV, "--output-dir", str(tmp_path / "new"), "--resume"]) == 2
    assert "holds no checkpoint-N folder" in capsys.readouterr().err
    with pytest.raises(ValueError, match="exclude each other"):
        TrainConfig([ENV], overwrite=True, resume=True)


def test_eval_command_of_a_run() -> None:
    config = TrainConfig([ENV, "TextWordle-v0"], output_dir="runs/my run").resolved()
    assert train_module.eval_command(config) == (
        f"trl-env eval {ENV} TextWordle-v0 --policy 'runs/my run' --episodes 100 --seed 10000 "
        "--out 'runs/my run/eval'"
    )


@pytest.mark.slow
def test_resume_overwrite_and_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from trl_env.trl.training import _callbacks as callbacks

    out = tmp_path / "run"
    base = [ENV, "--output-dir", str(out), *FAST, "--no-plot"]
    assert run_cli([*base, "--max-steps", "2", "--save-steps", "1"]) == 0
    capsys.readouterr()
    # --resume continues from checkpoint-2 up to the new max_steps; earlier rows are kept.
    assert run_cli([*base, "--max-steps", "3", "--save-steps", "1", "--resume"]) == 0
    rows = read_csv(out / "metrics.csv")
    assert [row["step"] for row in rows] == ["0", "1", "2", "3"]
    # The eval history continues: every step of both runs has its held-out eval.
    assert all(row["eval_success_rate"] != "" for row in rows)
    assert (out / "checkpoint-3").is_dir() and (out / "final" / "config.json").is_file()
    capsys.readouterr()

    # Ctrl-C during step 1 of a new run (--overwrite): the model so far is saved, exit 130.
    def interrupt(self: Any, *args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(callbacks.MetricsCallback, "on_log", interrupt)
    assert run_cli([*base, "--max-steps", "2", "--save-steps", "0", "--overwrite"]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert (out / "interrupted" / "model.safetensors").is_file()
    assert not (out / "final").exists() and not (out / "checkpoint-3").exists()  # replaced


@pytest.mark.slow
def test_lora_run_saves_an_adapter_that_eval_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("peft")
    from trl_env.cli import main

    out = tmp_path / "lora"
    argv = [ENV, "--lora", "--max-steps", "1", "--output-dir", str(out), *FAST, "--no-plot"]
    assert run_cli(argv) == 0
    assert (out / "final" / "adapter_config.json").is_file()
    assert not (out / "final" / "config.json").exists()  # the adapter only, not a copy of the base
    capsys.readouterr()
    code = main(["eval", ENV, "--policy", str(out), "--episodes", "4", "--json", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "using the run's settings (max-new-tokens 8, max-completion-length 16" in captured.err
    report = json.loads(captured.out)
    assert report["envs"][ENV]["episodes"] == 4


def test_step_line_shows_the_time_left() -> None:
    from trl_env.trl.training._callbacks import step_line

    line = step_line({"step": 3, "reward": 0.25}, 400, left_s=725)
    assert line == "step   3/400 | reward +0.250 | 12m left"
    assert "left" not in step_line({"step": 3, "reward": 0.25}, 400)
