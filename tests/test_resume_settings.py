"""``--resume`` keeps the model a checkpoint belongs to and names every other change
(:mod:`trl_env.trl.training._resume`); the end-to-end resume runs are in tests/trl/."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from trl_env.trl.training._config import TrainConfig
from trl_env.trl.training._resume import MODEL_SETTINGS, changed_settings, check_resumable


def started_run(folder: Path, **settings: object) -> TrainConfig:
    """A run folder as ``train`` leaves it (its ``train_config.json``); the run's settings."""
    cfg = TrainConfig(
        ["TextHangman-v0"], model=str(folder / "m.gguf"), output_dir=str(folder), lora=True,
        **settings,  # type: ignore[arg-type]
    ).resolved()  # fmt: skip
    (folder / "m.gguf").write_bytes(b"")
    (folder / "train_config.json").write_text(json.dumps(asdict(cfg), default=str))
    return cfg


def test_the_run_s_own_settings_resume_with_nothing_reported(tmp_path: Path) -> None:
    run = started_run(tmp_path, minutes=30.0)
    assert check_resumable(replace(run, resume=True, progress=False)) == []


def test_every_other_setting_may_change_and_is_named(tmp_path: Path) -> None:
    run = started_run(tmp_path, max_steps=50)
    longer = replace(run, max_steps=103, eval_every=20, env_ids=["TextWordle-v0"])
    assert check_resumable(longer) == [
        'env_ids ["TextHangman-v0"] -> ["TextWordle-v0"]',
        "max_steps 50 -> 103",
        "eval_every 10 -> 20",
    ]
    long_prompt = changed_settings({"system_prompt": "a"}, {"system_prompt": "b" * 100})
    assert long_prompt == ['system_prompt "a" -> "' + "b" * 55 + '..."']  # cut to 60 characters


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("model", "other.gguf"),
        ("lora", False),
        ("lora_r", 64),
        ("lora_alpha", 7),
        ("warm_start", "none"),
        ("warm_start_steps", 5),
    ],
)
def test_a_checkpoint_is_not_resumed_onto_another_model(
    tmp_path: Path, setting: str, value: object
) -> None:
    run = started_run(tmp_path)
    assert setting in MODEL_SETTINGS
    with pytest.raises(ValueError, match=rf"other model settings \({setting} ") as error:
        check_resumable(replace(run, **{setting: value}))
    assert f"trl-env train --out {tmp_path} --resume" in str(error.value)


def test_the_same_model_named_another_way_is_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = started_run(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert check_resumable(replace(run, model="m.gguf")) == []  # relative, from the run's folder
    (tmp_path / "n.gguf").write_bytes(b"")
    with pytest.raises(ValueError, match="model"):
        check_resumable(replace(run, model="n.gguf"))  # another file


def test_a_folder_without_saved_settings_has_nothing_to_compare(tmp_path: Path) -> None:
    cfg = TrainConfig(["TextHangman-v0"], output_dir=str(tmp_path)).resolved()
    assert check_resumable(cfg) == []  # no train_config.json (a run of an older version)
    (tmp_path / "train_config.json").write_text("not json")
    assert check_resumable(cfg) == []
