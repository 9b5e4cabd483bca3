"""Which model a run's ``final/`` holds (``--final-model last|best``): the check, the copy of
``best/`` into ``final/``, the seeds that chose it and the eval's warning when they are judged
again. The end-to-end run (a LoRA adapter through ``trl-env train`` and ``trl-env eval``) is in
tests/trl/test_watch_run.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trl_env.cli._eval import _warn_if_chosen_on_these_seeds
from trl_env.cli._eval_config import EvalConfig
from trl_env.trl.training import TrainConfig, eval_command
from trl_env.trl.training._checks import clear_run
from trl_env.trl.training._final_model import (
    check_final_model,
    chosen_on_seeds,
    final_model_step,
    keep_best_as_final,
)


def _run_folder(tmp_path: Path, step: int = 30) -> Path:
    run = tmp_path / "run"
    for name, weights in (("best", b"best weights"), ("final", b"stale"), ("last", b"last")):
        (run / name).mkdir(parents=True)
        (run / name / "adapter_model.safetensors").write_bytes(weights)
    (run / "final" / "only_in_the_old_final.txt").write_text("x")
    record = {"step": step, "eval_success_rate": 0.71875, "eval_mean_return": 0.2125}
    (run / "best" / "best.json").write_text(json.dumps(record))
    return run


def test_final_model_must_be_last_or_best_and_best_needs_evals() -> None:
    check_final_model("last", eval_every=0)
    check_final_model("best", eval_every=5)
    check_final_model("best", eval_every=None)  # not resolved yet: the run's default decides
    with pytest.raises(ValueError, match="'last' or 'best', got 'worst'"):
        check_final_model("worst", eval_every=5)
    with pytest.raises(ValueError, match=r"needs held-out evals.*--final-model last"):
        TrainConfig("TextLargestNumber-v0", final_model="best", eval_every=0)
    with pytest.raises(ValueError, match="'last' or 'best'"):
        TrainConfig("TextLargestNumber-v0", final_model="Best")


def test_keep_best_as_final_replaces_final_with_a_copy_of_best(tmp_path: Path) -> None:
    run = _run_folder(tmp_path)
    chosen = keep_best_as_final(run)
    assert chosen == {"step": 30, "eval_success_rate": 0.71875, "eval_mean_return": 0.2125}
    assert (run / "final" / "adapter_model.safetensors").read_bytes() == b"best weights"
    assert not (run / "final" / "only_in_the_old_final.txt").exists()  # replaced, not merged
    assert (run / "best" / "adapter_model.safetensors").read_bytes() == b"best weights"
    assert (run / "last" / "adapter_model.safetensors").read_bytes() == b"last"
    assert (run / "final" / "best.json").is_file()  # final/ says which eval chose it
    assert final_model_step(run, "best") == 30
    assert final_model_step(run, "last") is None
    assert not (run / "final.copying").exists()


def test_keep_best_as_final_without_a_best_model_says_where_the_last_one_is(
    tmp_path: Path,
) -> None:
    (tmp_path / "last").mkdir()
    with pytest.raises(FileNotFoundError, match=r"ran no held-out eval.*last"):
        keep_best_as_final(tmp_path)
    assert final_model_step(tmp_path, "best") is None


def _copied_run(tmp_path: Path, name: str = "run") -> Path:
    """A ``--final-model best`` run after :func:`keep_best_as_final`, its ``train_config.json``
    saying seeds 10000-10031 while ``best.json`` says 20000-20031 (the ones that chose)."""
    run = tmp_path / name
    for folder in ("best", "last", "checkpoint-40", "interrupted", "warm_start"):
        (run / folder).mkdir(parents=True)
    record = {"step": 30, "eval_success_rate": 0.5, "eval_mean_return": 0.1, "eval_seed": 20_000,
              "eval_episodes": 32, "env_ids": ["TextTicTacToePerfect-v0"]}  # fmt: skip
    (run / "best" / "best.json").write_text(json.dumps(record))
    (run / "train_config.json").write_text(json.dumps({"eval_seed": 10_000, "eval_episodes": 32}))
    keep_best_as_final(run)
    return run


CONFIG = {"final_model": "best", "eval_seed": 10_000, "eval_episodes": 32}


@pytest.mark.parametrize(
    ("folder", "chosen"),
    [
        ("", range(20_000, 20_032)),  # the run folder stands for final/, a copy of best/
        ("/", range(20_000, 20_032)),  # a trailing slash
        ("/final", range(20_000, 20_032)),
        ("/best", range(20_000, 20_032)),
        ("/last", None),  # the last step's: not chosen on any seeds
        ("/checkpoint-40", None),
        ("/interrupted", None),
        ("/warm_start", None),
    ],
)
def test_the_seeds_that_chose_a_model_come_from_what_the_folder_holds(
    tmp_path: Path, folder: str, chosen: range | None
) -> None:
    run = _copied_run(tmp_path)
    assert chosen_on_seeds(CONFIG, str(run) + folder) == chosen


def test_a_run_folder_named_best_or_last_is_a_run_folder(tmp_path: Path) -> None:
    assert chosen_on_seeds(CONFIG, _copied_run(tmp_path, "last")) == range(20_000, 20_032)
    named_best = _copied_run(tmp_path, "best")
    (named_best / "final" / "best.json").unlink()  # as a --final-model last run's final/
    assert chosen_on_seeds(CONFIG, named_best) is None


def test_a_best_json_without_seeds_takes_them_from_the_run(tmp_path: Path) -> None:
    """``best.json`` of runs before it recorded the seeds: the run's ``eval_seed`` chose."""
    (tmp_path / "best").mkdir()
    (tmp_path / "best" / "best.json").write_text('{"step": 10}')
    assert chosen_on_seeds(CONFIG, tmp_path / "best") == range(10_000, 10_032)
    assert chosen_on_seeds({}, tmp_path / "best") is None  # no seeds anywhere: nothing to say


@pytest.mark.parametrize(
    ("seed", "episodes", "shared"),
    [(10_000, 256, 0), (20_000, 8, 8), (19_990, 20, 10), (20_031, 100, 1), (19_744, 256, 0)],
)
def test_eval_warns_when_its_seeds_chose_the_model(
    seed: int, episodes: int, shared: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copied_run(tmp_path)
    config = EvalConfig(["TextTicTacToePerfect-v0"], policy=str(run), seed=seed, episodes=episodes)
    _warn_if_chosen_on_these_seeds(config, {**CONFIG, "env_ids": ["TextTicTacToePerfect-v0"]})
    err = capsys.readouterr().err
    if not shared:
        assert err == ""
        return
    assert f"on seeds 20000-20031; {shared} of this eval's seeds are among them" in err
    assert f"--seed 20032 or above (or below {20_000 - episodes + 1})" in err


def test_eval_on_another_env_or_from_seed_0_warns_as_it_should(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _copied_run(tmp_path)
    config = EvalConfig(["TextTicTacToe-v0"], policy=str(run), seed=20_000, episodes=8)
    _warn_if_chosen_on_these_seeds(config, {**CONFIG, "env_ids": ["TextTicTacToePerfect-v0"]})
    assert capsys.readouterr().err == ""  # the seeds chose on another env
    config = EvalConfig(["TextTicTacToePerfect-v0"], policy=str(run), seed=0, episodes=30_000)
    _warn_if_chosen_on_these_seeds(config, {**CONFIG, "env_ids": ["TextTicTacToePerfect-v0"]})
    err = capsys.readouterr().err
    assert (
        "32 of this eval's seeds" in err and "--seed 20032 or above to judge" in err
    )  # no "below"


def test_the_printed_eval_command_judges_a_best_final_model_past_its_seeds() -> None:
    cfg = TrainConfig("TextLargestNumber-v0", output_dir="runs/a", eval_seed=20_000)
    assert "--seed 20000 " in eval_command(cfg)  # the last step's model: the evals' own seeds
    best = TrainConfig("TextLargestNumber-v0", output_dir="runs/a", eval_seed=20_000,
                       eval_episodes=32, final_model="best")  # fmt: skip
    assert "--seed 20032 " in eval_command(best)


def test_overwrite_clears_best_and_last(tmp_path: Path) -> None:
    """A ``best.json`` left by an earlier run would compete with the new run's evals."""
    run = _run_folder(tmp_path)
    (run / "keep.txt").write_text("not the run's")
    clear_run(run)
    assert sorted(child.name for child in run.iterdir()) == ["keep.txt"]


def test_a_final_model_other_than_last_or_best_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from trl_env.cli import main

    assert main(["train", "TextLargestNumber-v0", "--final-model", "worst"]) == 2
    assert (
        "--final-model: invalid choice: 'worst' (choose from 'last', 'best')"
        in capsys.readouterr().err
    )
