"""What a model name points at: a Hub id, a local directory, a ``.gguf`` file, a LoRA adapter or a
``trl-env train`` run folder. Pure path logic (no torch), so that it is cheap to call up front."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from trl_env.utils._hub import HUB_ID_PATTERN, is_hub_id

__all__ = [
    "HUB_ID",
    "adapter_base",
    "is_adapter_dir",
    "is_hub_id",
    "is_run_dir",
    "run_config",
    "run_model_dir",
]

HUB_ID = HUB_ID_PATTERN
"""The shapes of a Hugging Face Hub repository id: ``org/name`` or ``name``."""

RUN_CONFIG = "train_config.json"
"""The file every ``trl-env train`` run folder holds (its resolved settings)."""

SFT_RUN_CONFIG = "sft_config.json"
"""The file every ``trl-env sft`` run folder holds (its resolved settings)."""

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")


def is_run_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a ``trl-env train`` or ``trl-env sft`` output folder (it holds
    ``train_config.json`` or ``sft_config.json``)."""
    return any((Path(path) / name).is_file() for name in (RUN_CONFIG, SFT_RUN_CONFIG))


def is_adapter_dir(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds a PEFT (LoRA) adapter rather than a whole model."""
    folder = Path(path)
    return (folder / "adapter_config.json").is_file() and not (folder / "config.json").is_file()


def adapter_base(path: str | os.PathLike[str]) -> str:
    """The base model an adapter directory was trained on (``base_model_name_or_path``)."""
    config = json.loads((Path(path) / "adapter_config.json").read_text(encoding="utf-8"))
    base = config.get("base_model_name_or_path")
    if not base:
        raise ValueError(
            f"the LoRA adapter in {os.fspath(path)!r} does not name its base model "
            "(adapter_config.json has no base_model_name_or_path): load the base model and apply "
            "the adapter with peft.PeftModel.from_pretrained(base, adapter_dir)"
        )
    return str(base)


def run_model_dir(run: str | os.PathLike[str]) -> Path:
    """The model a run folder stands for: ``final/``, else its latest checkpoint, else the model
    saved on Ctrl-C (``interrupted/``).

    Raises:
        FileNotFoundError: If the run saved no model yet (the message says how to continue it).
    """
    folder = Path(run)
    if (folder / "final").is_dir():
        return folder / "final"
    checkpoints = sorted(
        (int(match.group(1)), child)
        for child in folder.iterdir()
        if child.is_dir() and (match := _CHECKPOINT.match(child.name))
    )
    if checkpoints:
        return checkpoints[-1][1]
    if (folder / "interrupted").is_dir():
        return folder / "interrupted"
    raise FileNotFoundError(
        f"the run folder {os.fspath(run)!r} holds no model yet (no final/, checkpoint-N/ or "
        f"interrupted/): continue it with `trl-env train ... --output-dir {os.fspath(run)} "
        "--resume`, or name a model directory"
    )


WARM_START_DIR = "warm_start"
"""The folder of a ``trl-env train`` run that holds its warm start: ``trl-env sft``'s run folder
(demos, ``final/``), or the tiny model's format warm start; either way a policy ``trl-env eval
--policy`` takes."""

_ROLLOUT_LIMITS = ("max_new_tokens_per_turn", "max_completion_length", "max_turns")
"""The settings a warm start lends from the ``trl-env train`` run it belongs to."""


def _read_config(file: Path) -> dict[str, object] | None:
    data = json.loads(file.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else None


def run_config(path: str | os.PathLike[str]) -> dict[str, object] | None:
    """The ``train_config.json`` (or ``sft_config.json``) of the run that ``path`` (a run folder,
    or its ``final/`` or ``checkpoint-N/`` folder) belongs to; ``None`` if it belongs to no run.

    A ``trl-env train`` run's warm start (``RUN/warm_start``, an SFT run inside the train run)
    takes the token and turn limits its SFT config leaves unset from the train run's config: the
    warm start was trained to play under them, so ``trl-env eval --policy RUN/warm_start`` plays
    the games as the run played them.
    """
    folder = Path(path)
    for candidate in (folder, folder.parent):
        if (candidate / RUN_CONFIG).is_file():
            return _read_config(candidate / RUN_CONFIG)
        if (candidate / SFT_RUN_CONFIG).is_file():
            data = _read_config(candidate / SFT_RUN_CONFIG)
            enclosing = candidate.parent / RUN_CONFIG
            if data is None or candidate.name != WARM_START_DIR or not enclosing.is_file():
                return data
            train = _read_config(enclosing) or {}
            for name in _ROLLOUT_LIMITS:
                if data.get(name) is None and train.get(name) is not None:
                    data[name] = train[name]
            return data
    return None
