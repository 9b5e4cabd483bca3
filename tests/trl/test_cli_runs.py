"""``trl-env eval`` of a train run (its own settings), ``--out`` checked first, ``--threads``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

import torch

import trl_env._eval
from trl_env.cli import main
from trl_env.trl import _threads
from trl_env.trl.training._callbacks import Progress

ENV = "TextLargestNumber-v0"


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Stand in for ``evaluate``: record what the command passes to it, play nothing."""
    seen: dict[str, Any] = {}
    real = trl_env._eval.evaluate

    def fake(env_ids: Any, policy: str, episodes: int, seed: int = 0, **kwargs: Any) -> Any:
        seen.update(kwargs, policy=policy)
        return real(env_ids, "random", 1, seed, env_kwargs=kwargs.get("env_kwargs"))

    monkeypatch.setattr(trl_env._eval, "evaluate", fake)
    return seen


@pytest.fixture
def run_dir(tiny_model_dir: str, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(tiny_model_dir, run / "final")
    config = {
        "max_new_tokens_per_turn": 8,
        "max_completion_length": 16,
        "max_turns": None,
        "system_prompt": None,
        "env_kwargs": {"num_options": 3},
    }
    (run / "train_config.json").write_text(json.dumps(config))
    return run


def test_eval_of_a_run_uses_its_settings(
    run_dir: Path, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", ENV, "--policy", str(run_dir / "final"), "--no-progress"]) == 0
    options = captured["model_options"]
    assert (options.max_new_tokens_per_turn, options.max_completion_length) == (8, 16)
    assert options.system_prompt == ""  # the run had none: none, not the rollout's default
    assert captured["env_kwargs"] == {"num_options": 3}
    err = capsys.readouterr().err
    assert "using the run's settings (max-new-tokens 8" in err and "no system prompt" in err
    assert "torch threads" in err


def test_flags_override_the_run_settings(
    run_dir: Path, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", ENV, "--policy", str(run_dir), "--max-new-tokens-per-turn", "12"]
    assert main([*argv, "--system-prompt", "Play well.", "--no-progress"]) == 0
    options = captured["model_options"]
    assert (options.max_new_tokens_per_turn, options.max_completion_length) == (12, 16)
    assert options.system_prompt == "Play well."


def test_a_model_that_is_no_run_keeps_the_defaults(
    tiny_model_dir: str, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", ENV, "--policy", tiny_model_dir, "--no-progress"]) == 0
    options = captured["model_options"]
    assert (options.max_new_tokens_per_turn, options.max_completion_length) == (256, 4096)
    assert options.system_prompt is None
    assert "run's settings" not in capsys.readouterr().err


def test_out_is_checked_before_any_episode(
    tmp_path: Path, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "results.json").write_text("{}")
    assert main(["eval", ENV, "--policy", "random", "--out", str(tmp_path)]) == 2
    assert "already holds results.json" in capsys.readouterr().err and not captured
    file = tmp_path / "file"
    file.write_text("")
    assert main(["eval", ENV, "--policy", "random", "--output-dir", str(file)]) == 2
    assert "is a file" in capsys.readouterr().err and not captured
    argv = ["eval", ENV, "--policy", "random", "--out", str(tmp_path), "--overwrite"]
    assert main([*argv, "--no-progress"]) == 0 and captured["policy"] == "random"


def test_default_threads_share_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_threads, "_cores", lambda: 8)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert _threads.default_threads() == (8, "8 cores / 1 process")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "3")
    assert _threads.default_threads() == (2, "8 cores / 3 processes")


def test_set_torch_threads(capsys: pytest.CaptureFixture[str]) -> None:
    before = torch.get_num_threads()
    try:
        assert _threads.set_torch_threads(1) == 1 and torch.get_num_threads() == 1
        assert "using 1 torch thread (--threads" in capsys.readouterr().err
        with pytest.raises(ValueError, match="positive"):
            _threads.set_torch_threads(0)
    finally:
        torch.set_num_threads(before)


def test_bad_threads_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", ENV, "--policy", "random", "--threads", "0"]) == 2
    assert "--threads" in capsys.readouterr().err


@pytest.mark.parametrize("terminal", [False, True])
def test_progress_lines_without_a_terminal(terminal: bool) -> None:
    lines: list[str] = []
    progress = Progress(100, "warm start", write=lines.append, terminal=terminal)
    for _ in range(100):
        progress.update(loss=1.0)
    progress.close()
    if terminal:
        assert lines == []  # a tqdm bar instead
    else:
        assert len(lines) == 10 and lines[-1] == "warm start: 100/100 steps (loss 1)"
