"""Every command from a config: options generated from config dataclasses, ``--config FILE.yaml``
(flags override it), the one exit-status policy (a missing extra exits 2 with the pip line, for
every command), and no torch for ``--help``."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from trl_env._configs import config_to_yaml
from trl_env.cli import build_parser, main
from trl_env.cli._arguments import add_config_arguments, config_from_namespace
from trl_env.cli._eval_config import EvalConfig
from trl_env.cli._serve import ServeConfig

ROOT = Path(__file__).resolve().parent.parent
HEAVY = {"torch", "transformers", "trl"}


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )


def one_error_line(err: str, prog: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    return lines[0]


# --- no torch for the command line's options ------------------------------------------------


def test_help_and_configs_import_no_torch() -> None:
    code = (
        "import sys, contextlib, io\n"
        "from trl_env.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for argv in (['--help'], ['train', '--help'], ['eval', '--help'], ['sft', '--help'],\n"
        "                 ['serve', '--help'], ['demos', '--help'], ['replay', '--help']):\n"
        "        assert main(argv) == 0, argv\n"
        "from trl_env.trl.training._config import TrainConfig\n"
        "from trl_env.trl._sft import SFTRunConfig\n"
        "from trl_env.cli._eval_config import EvalConfig\n"
        "from trl_env.cli._serve import ServeConfig\n"
        "import trl_env.trl, trl_env.trl.training\n"
        "print(sorted({'torch', 'transformers', 'trl'} & set(sys.modules)))\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


# --- one exit policy: a missing extra exits 2 with the pip line, for every command -----------


@pytest.mark.parametrize(
    ("missing", "argv", "install"),
    [
        ("trl", ["train", "TextLargestNumber-v0"], '"trl-env[trl]"'),
        ("torch", ["train", "TextLargestNumber-v0"], '"trl-env[trl]"'),
        ("trl", ["sft", "TextGuessNumber-v0", "--model", "m.gguf"], '"trl-env[trl]"'),
        ("trl", ["eval", "TextWordle-v0", "--policy", "."], '"trl-env[trl]"'),
        ("openenv", ["serve", "TextWordle-v0"], '"trl-env[openenv]"'),
        (
            "reasoning_gym",
            ["eval", "reasoning_gym/BasicArithmetic-v0", "--policy", "random", "--episodes", "1"],
            '"trl-env[reasoning-gym]"',
        ),
    ],
)
def test_a_missing_extra_exits_2_with_one_line(missing: str, argv: list[str], install: str) -> None:
    code = (
        "import sys\n"
        f"sys.modules[{missing!r}] = None  # an install without it: its import fails\n"
        "from trl_env.cli import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    result = run_python(code)
    assert result.returncode == 2, result.stderr
    line = one_error_line(result.stderr, f"trl-env {argv[0]}")
    assert f"pip install {install}" in line


def test_usage_errors_exit_2_and_runtime_failures_1(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["serve", "TextWordl-v0"]) == 2
    assert "Did you mean" in one_error_line(capsys.readouterr().err, "trl-env serve")
    assert main(["eval", "TextWordle-v0", "--policy", "random", "--episodes", "0"]) == 2
    one_error_line(capsys.readouterr().err, "trl-env eval")

    import trl_env._eval

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the env crashed")

    monkeypatch.setattr(trl_env._eval, "evaluate", crash)
    assert main(["eval", "TextWordle-v0", "--policy", "random"]) == 1
    assert "RuntimeError: the env crashed" in one_error_line(
        capsys.readouterr().err, "trl-env eval"
    )

    def interrupt(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(trl_env._eval, "evaluate", interrupt)
    assert main(["eval", "TextWordle-v0", "--policy", "random"]) == 130
    assert "trl-env eval: interrupted" in capsys.readouterr().err


# --- options from configs --------------------------------------------------------------------


def parse(config_class: type, argv: list[str]) -> Any:
    parser = argparse.ArgumentParser()
    add_config_arguments(parser, config_class)
    return config_from_namespace(config_class, parser.parse_args(argv))


def test_every_command_that_writes_a_folder_takes_out_and_output_dir() -> None:
    """`--out` and `--output-dir` are one setting in train, eval, demos and sft (docs/cli.md),
    each spelled in full: no reliance on argparse's prefix matching."""
    from trl_env._demos import DemosConfig
    from trl_env.trl._sft import SFTRunConfig
    from trl_env.trl.training import TrainConfig

    for config_class, field_name, head in (
        (TrainConfig, "output_dir", ["TextWordle-v0"]),
        (EvalConfig, "output_dir", ["TextWordle-v0", "--policy", "oracle"]),
        (DemosConfig, "out", ["TextWordle-v0"]),
        (SFTRunConfig, "output_dir", ["TextWordle-v0", "--model", "m"]),
    ):
        for flag in ("--out", "--output-dir"):
            parser = argparse.ArgumentParser(allow_abbrev=False)
            add_config_arguments(parser, config_class)
            config = config_from_namespace(config_class, parser.parse_args([*head, flag, "d"]))
            assert getattr(config, field_name) == "d", (config_class.__name__, flag)


def test_resuming_reads_the_run_s_own_settings_under_the_flags_given_now(tmp_path: Path) -> None:
    """docs/cli.md: `trl-env train --out DIR --resume --max-steps N` trains longer with every other
    setting of the run kept (its recipe, its defaults sized from its step count), as
    `--config DIR/config.yaml` would; a --config given wins; a folder without config.yaml leaves
    the flags alone, which re-size the step-count defaults."""
    from trl_env.cli import parse_command_line
    from trl_env.cli._train import config_from_args
    from trl_env.trl.training import TrainConfig

    run = TrainConfig(
        ["TextHangman-v0"], model="m.gguf", output_dir=str(tmp_path), minutes=30.0,
        recipe="multiturn-hangman", learning_rate=3e-6,
    ).resolved()  # fmt: skip
    assert (run.max_steps, run.eval_every, run.save_steps) == (10_000, 10, 10)  # the clock's
    (tmp_path / "config.yaml").write_text(
        config_to_yaml(run, leave_out=("overwrite", "resume")), encoding="utf-8"
    )

    def resumed(*argv: str) -> TrainConfig:
        args = parse_command_line(build_parser(), ["train", *argv])
        return config_from_args(args).resolved()  # type: ignore[no-any-return]

    kept = resumed("--out", str(tmp_path), "--resume", "--max-steps", "103")
    assert (kept.max_steps, kept.eval_every, kept.save_steps, kept.minutes) == (103, 10, 10, 30)
    assert (kept.env_ids, kept.model, kept.recipe, kept.learning_rate) == (
        ["TextHangman-v0"], "m.gguf", "multiturn-hangman", 3e-6
    )  # fmt: skip
    assert resumed(f"--output-dir={tmp_path}", "--resume", "--lr", "1e-6").learning_rate == 1e-6
    explicit = resumed("--config", str(tmp_path / "config.yaml"), "--resume", "--max-steps", "103")
    assert (explicit.max_steps, explicit.eval_every, explicit.recipe) == (
        103,
        10,
        "multiturn-hangman",
    )
    other = tmp_path / "other.yaml"
    other.write_text("env_ids: [TextLargestNumber-v0]\nmax_steps: 7\n", encoding="utf-8")
    chosen = resumed("--config", str(other), "--out", str(tmp_path), "--resume")
    assert (chosen.env_ids, chosen.max_steps, chosen.recipe) == (["TextLargestNumber-v0"], 7, None)
    # Without --resume the folder's settings are not read (and the run would refuse the folder).
    assert resumed("TextWordle-v0", "--out", str(tmp_path)).env_ids == ["TextWordle-v0"]
    (tmp_path / "config.yaml").unlink()  # a folder without it: the flags alone
    flags = resumed(
        "TextLargestNumber-v0", "--model", "m.gguf", "--out", str(tmp_path), "--resume",
        "--max-steps", "103",
    )  # fmt: skip
    assert (flags.max_steps, flags.eval_every, flags.save_steps) == (103, 20, 10)  # a fifth


def test_eval_and_serve_options_come_from_their_configs() -> None:
    config = parse(EvalConfig, ["TextWordle-v0", "--policy", "oracle", "--max-new-tokens", "9"])
    assert config.max_new_tokens_per_turn == 9  # the rollout's own name
    old = parse(EvalConfig, ["TextWordle-v0", "--policy", "m", "--max-new-tokens-per-turn", "9"])
    assert old.max_new_tokens_per_turn == 9  # the older spelling still works
    assert parse(EvalConfig, ["X", "--policy", "m", "--output-dir", "d"]).output_dir == "d"
    assert parse(EvalConfig, ["X", "--policy", "m", "--no-progress"]).progress is False
    serve = parse(ServeConfig, ["TextWordle-v0", "--no-lock", "--port", "9"])
    assert (serve.lock, serve.port, serve.max_sessions) == (False, 9, 256)
    every_option = build_parser()._actions[-1].choices  # type: ignore[attr-defined]
    for command, config_class in (("eval", EvalConfig), ("serve", ServeConfig)):
        dests = {action.dest for action in every_option[command]._actions}
        assert {field.name for field in dataclasses.fields(config_class)} <= dests


def test_demos_sft_and_replay_share_the_common_fields() -> None:
    from trl_env._demos import DemosConfig
    from trl_env._replay import ReplayConfig
    from trl_env.trl._sft import SFTRunConfig

    sft = parse(SFTRunConfig, ["--model", "m.gguf", "--demos", "demos/ttt"])
    assert sft.env_ids == [] and sft.demos == "demos/ttt"  # the IDs may be left out
    demos = parse(DemosConfig, ["TextWordle-v0", "--max-turns", "3", "--env-kwargs", "{}"])
    assert (demos.max_turns, demos.env_kwargs) == (3, {})
    replay = parse(ReplayConfig, ["runs/x", "--rescore", "--env-kwargs", '{"a": 1}'])
    assert replay.env_kwargs == {"a": 1}
    for config_class in (DemosConfig, SFTRunConfig, EvalConfig, ServeConfig, ReplayConfig):
        kwargs = {f.name: f for f in dataclasses.fields(config_class)}["env_kwargs"]
        assert kwargs.metadata["metavar"] == "JSON"  # one definition, from trl_env._configs


def test_model_settings_default_once() -> None:
    from trl_env._configs import MAX_NEW_TOKENS_PER_TURN
    from trl_env._eval import ModelOptions

    options = EvalConfig(["TextWordle-v0"], policy="m").model_options()
    assert options == ModelOptions()
    assert options.max_new_tokens_per_turn == MAX_NEW_TOKENS_PER_TURN


# --- --config FILE.yaml ----------------------------------------------------------------------


def write(path: Path, values: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump(values), encoding="utf-8")
    return str(path)


def test_config_file_sets_the_options_and_flags_override_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = {"env_ids": ["TextGuessNumber-v0"], "policy": "oracle", "episodes": 3, "seed": 7}
    file = write(tmp_path / "eval.yaml", settings)
    assert main(["eval", "--config", file, "--json", "--no-progress"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["seed"], report["episodes_per_env"]) == (7, 3)
    assert list(report["envs"]) == ["TextGuessNumber-v0"]
    # Flags (and positional IDs) on the command line win over the file.
    argv = ["eval", "TextWordle-v0", f"--config={file}", "--episodes", "2", "--json"]
    assert main([*argv, "--no-progress"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["seed"], report["episodes_per_env"]) == (7, 2)
    assert list(report["envs"]) == ["TextWordle-v0"]


@pytest.mark.parametrize(
    ("values", "needles"),
    [
        ({"episodez": 3}, ["unknown setting 'episodez'", "did you mean 'episodes'", "valid keys"]),
        ({"episodes": "many"}, ["episodes:", "expected a positive integer"]),
        ({"progress": "yes"}, ["progress:", "true or false"]),
        ({"env_ids": [1, 2]}, ["env_ids:", "list of strings"]),
        ({"env_kwargs": [1]}, ["env_kwargs:"]),
    ],
)
def test_a_bad_config_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], values: dict[str, Any], needles: list[str]
) -> None:
    file = write(
        tmp_path / "bad.yaml", {"env_ids": ["TextWordle-v0"], "policy": "random", **values}
    )
    assert main(["eval", "--config", file]) == 2
    line = one_error_line(capsys.readouterr().err, "trl-env eval")
    for needle in needles:
        assert needle in line, line


def test_config_file_that_is_not_a_mapping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    assert main(["serve", "--config", str(tmp_path / "list.yaml")]) == 2
    assert "must hold a mapping" in one_error_line(capsys.readouterr().err, "trl-env serve")
    assert main(["serve", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "cannot read" in one_error_line(capsys.readouterr().err, "trl-env serve")


def test_eval_writes_its_resolved_config_and_repeats_from_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = tmp_path / "first"
    argv = ["eval", "TextGuessNumber-v0", "--policy", "random", "--episodes", "4", "--seed", "3"]
    assert main([*argv, "--out", str(first), "--json", "--no-progress"]) == 0
    written = yaml.safe_load((first / "config.yaml").read_text())
    assert written["max_new_tokens_per_turn"] == 256 and "overwrite" not in written
    report = json.loads(capsys.readouterr().out)
    again = tmp_path / "again"
    assert main(["eval", "--config", str(first / "config.yaml"), "--out", str(again)]) == 0
    capsys.readouterr()
    repeated = json.loads((again / "results.json").read_text())
    assert repeated["envs"] == report["envs"]  # the same seeded games, the same results


def test_a_null_in_a_config_file_is_kept(tmp_path: Path) -> None:
    pytest.importorskip("torch")  # resolved() asks torch whether there is a GPU
    from trl_env.cli import parse_command_line
    from trl_env.cli._train import config_from_args
    from trl_env.trl.training._config import TrainConfig

    resolved = TrainConfig(["TextLargestNumber-v0"], model="m", system_prompt="").resolved()
    assert resolved.system_prompt is None  # no system message, not the default one
    file = tmp_path / "config.yaml"
    file.write_text(config_to_yaml(resolved, leave_out=("overwrite", "resume")))
    args = parse_command_line(build_parser(), ["train", "--config", str(file)])
    assert config_from_args(args) == resolved  # the file gives back the same settings


@pytest.mark.parametrize(
    "name",
    [
        "trl_env._configs",
        "trl_env.cli._arguments",
        "trl_env.cli._common",
        "trl_env.cli._eval_config",
        "trl_env.cli._serve",
        "trl_env.trl._credit_modes",
        "trl_env.trl._lazy",
        "trl_env.trl.training._final_model",
    ],
)
def test_docstring_examples_pass(name: str) -> None:
    import doctest
    import importlib

    if name == "trl_env.trl._lazy":
        pytest.importorskip("trl")
    results = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0
