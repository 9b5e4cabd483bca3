"""The run folder's model card (``trl_env.trl.training._model_card``): it names the base model
as the run was given it, replacing TRL's card, which names none for a local model."""

from __future__ import annotations

from pathlib import Path

import pytest

from trl_env.trl.training import TrainConfig
from trl_env.trl.training._model_card import model_card, write_model_card

ENV = "TextHangman-v0"
ROWS = [
    {"step": 0, "eval_success_rate": 0.0, "eval_success_ci_low": 0.0, "eval_success_ci_high": 0.107},
    {"step": 1, "loss": 0.1, "eval_success_rate": float("nan")},
    {"step": 2, "loss": 0.2, "eval_success_rate": 0.25, "eval_success_ci_low": 0.133,
     "eval_success_ci_high": 0.42},
    {"step": 3, "loss": 0.3},
]  # fmt: skip
RECORD = {"steps": 3, "stopped_by": "minutes"}


def config(tmp_path: Path, **settings: object) -> TrainConfig:
    return TrainConfig([ENV], output_dir=str(tmp_path / "run"), **settings).resolved()


def test_a_local_gguf_file_is_named_as_given_and_not_as_a_hub_model(tmp_path: Path) -> None:
    gguf = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf.write_bytes(b"GGUF")
    card = model_card(config(tmp_path, model=str(gguf), lora=True), RECORD, ROWS)
    assert "[None]" not in card and "None" not in card
    assert f"from `{gguf}` (a local GGUF file): LoRA (r 16, alpha 32)" in card
    assert "base_model:" not in card and "library_name: peft" in card
    assert f"- {ENV}" in card.split("---")[1]  # a tag of the Hub header
    assert "- Steps: 3 (stopped by the time budget)." in card
    # The last eval of the rows (NaN rows and rows without one skipped), with its interval.
    assert "from seed 10000): success 0.250 [0.133, 0.420] at step 2." in card
    assert f"trl-env eval {ENV} --policy {tmp_path / 'run'} --episodes 100 --seed 10000" in card
    assert f"trl-env train --config {tmp_path / 'run' / 'config.yaml'} --out NEW_RUN" in card


def test_a_hub_model_is_the_card_s_base_model_and_the_tiny_model_is_named() -> None:
    cfg = TrainConfig([ENV], model="HuggingFaceTB/SmolLM2-135M-Instruct", output_dir="r").resolved()
    card = model_card(cfg, {"steps": 400, "stopped_by": "max_steps"}, [])
    assert "base_model: HuggingFaceTB/SmolLM2-135M-Instruct" in card
    assert "[HuggingFaceTB/SmolLM2-135M-Instruct](https://huggingface.co/HuggingFaceTB/" in card
    assert "library_name: transformers" in card and "full fine-tuning" in card
    assert "(stopped by the step limit)" in card and "Last held-out eval" not in card
    tiny = model_card(TrainConfig([ENV], output_dir="r").resolved(), RECORD, [])
    assert "from the tiny local model trl-env builds" in tiny and "base_model:" not in tiny
    assert "format-only warm start (600 SFT steps)" in tiny  # the tiny model's default


def test_the_eval_line_reads_csv_rows_and_says_per_env(tmp_path: Path) -> None:
    """Rows as ``metrics.csv`` gives them (strings, empty cells, NaN bounds); with several envs
    the episodes are per env."""
    rows = [{"step": "4", "eval_success_rate": "0.5", "eval_success_ci_low": "nan",
             "eval_success_ci_high": ""}, {"step": "5", "eval_success_rate": ""}]  # fmt: skip
    cfg = TrainConfig([ENV, "TextWordle-v0"], output_dir=str(tmp_path), eval_episodes=8).resolved()
    card = model_card(cfg, RECORD, rows)
    assert "(8 greedy episodes of each env from seed 10000): success 0.500 at step 4." in card


def test_the_files_section_lists_what_the_folder_holds(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    card = model_card(cfg, RECORD, ROWS)
    assert "- `best/`" not in card and "- `warm_start/`" not in card and "- `final/`" in card
    for name in ("best", "warm_start"):
        (Path(cfg.output_dir) / name).mkdir(parents=True)
    (Path(cfg.output_dir) / "learning_curve.png").touch()
    card = model_card(cfg, RECORD, ROWS)
    assert "- `best/`" in card and "- `warm_start/`" in card and "- `learning_curve.png`" in card
    assert "- `last/`" not in card and "is the model of the best held-out eval" not in card


def test_a_best_final_model_is_named_with_its_step_and_last_is_listed(tmp_path: Path) -> None:
    cfg = config(tmp_path, final_model="best", eval_seed=20_000)
    (Path(cfg.output_dir) / "last").mkdir(parents=True)
    card = model_card(cfg, {**RECORD, "final_model": "best", "final_model_step": 2}, ROWS)
    assert (
        "- `final/` is the model of the best held-out eval, at step 2 (`--final-model best`" in card
    )
    assert "- `last/`: the model after the last step" in card
    assert f"--policy {tmp_path / 'run'} --episodes 100 --seed 20032 " in card  # past its seeds


def test_the_card_replaces_trl_s_in_the_run_folder(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    Path(cfg.output_dir).mkdir()
    trl_card = Path(cfg.output_dir) / "README.md"
    trl_card.write_text(
        "This model is a fine-tuned version of [None](https://huggingface.co/None)."
    )
    assert write_model_card(cfg, RECORD, ROWS) == trl_card
    assert (
        "[None]" not in trl_card.read_text()
        and "trained by `trl-env train`" in trl_card.read_text()
    )


@pytest.mark.parametrize("model", [None, "some/model"])
def test_the_card_says_how_the_run_learned(tmp_path: Path, model: str | None) -> None:
    cfg = config(tmp_path, model=model, credit="turn", warm_start="random", learning_rate=2e-4)
    card = model_card(cfg, RECORD, ROWS)
    assert "turn credit, warm start random, lr 0.0002" in card
