"""Resuming a run: what ``--resume`` may change and what it may not.

A run folder records its settings in ``train_config.json`` (and ``config.yaml``, which
``trl-env train --out DIR --resume`` reads back, so a plain ``--resume`` keeps them). A resumed
run loads its last checkpoint onto the model the folder's settings name, so the settings that
decide *which* model that is (the base model, LoRA and its shape, the warm start) must be the
run's own: with another one the checkpoint's weights would land on the wrong model without an
error. Every other setting may change (a longer run, another eval interval); the run's first line
lists what changed, so that nothing changes silently.

Example:
    >>> saved = {"model": "m.gguf", "lora": True, "max_steps": 50}
    >>> changed_settings(saved, {"model": "m.gguf", "lora": True, "max_steps": 103})
    ['max_steps 50 -> 103']
    >>> changed_settings({"model": "a.gguf"}, {"model": "b.gguf"})
    ['model "a.gguf" -> "b.gguf"']
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from trl_env.trl.training._config import TrainConfig

__all__ = ["MODEL_SETTINGS", "changed_settings", "check_resumable", "saved_settings"]

MODEL_SETTINGS = ("model", "lora", "lora_r", "lora_alpha", "warm_start", "warm_start_steps")
"""The settings that decide which model a checkpoint's weights belong to: fixed on resume."""

_NOT_SETTINGS = ("resume", "overwrite", "progress")
"""Fields that say how to open the folder or print, not how to train: never reported."""


def saved_settings(output_dir: str | Path) -> dict[str, Any] | None:
    """The settings the run in ``output_dir`` was started with (its ``train_config.json``), or
    ``None`` for a folder without one (a run made before it was written, or no run)."""
    path = Path(output_dir) / "train_config.json"
    if not path.is_file():
        return None
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # unreadable: nothing to compare against (the checkpoint still loads)
    return loaded if isinstance(loaded, dict) else None


def _as_saved(cfg: TrainConfig) -> dict[str, Any]:
    """``cfg`` as ``train_config.json`` holds it (JSON types: lists, not tuples)."""
    return json.loads(json.dumps(asdict(cfg), default=str))  # type: ignore[no-any-return]


def _same(name: str, before: Any, now: Any) -> bool:
    if before == now:
        return True
    if name == "model" and isinstance(before, str) and isinstance(now, str):
        # The same file or folder named another way (a relative path from another directory).
        first, second = Path(before).expanduser(), Path(now).expanduser()
        return first.exists() and second.exists() and first.resolve() == second.resolve()
    return False


def _shown(value: Any, width: int = 60) -> str:
    """A setting's value as the run line prints it (JSON, long texts cut)."""
    text = json.dumps(value)
    return text if len(text) <= width else text[: width - 4] + '..."'


def changed_settings(saved: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """``"name before -> now"`` for each setting ``now`` gives another value than ``saved``.

    Args:
        saved: The run's settings as started (:func:`saved_settings`).
        now: The resumed run's settings, by field name.

    Returns:
        One entry per changed setting, in ``now``'s order (settings ``saved`` lacks, from an
        older version, are not reported).
    """
    return [
        f"{name} {_shown(saved[name])} -> {_shown(value)}"
        for name, value in now.items()
        if name in saved and name not in _NOT_SETTINGS and not _same(name, saved[name], value)
    ]


def check_resumable(cfg: TrainConfig) -> list[str]:
    """Refuse to resume the run in ``cfg.output_dir`` onto another model; what else changed.

    Returns:
        :func:`changed_settings` between the run's saved settings and ``cfg`` (empty when the
        folder has no ``train_config.json``).

    Raises:
        ValueError: A setting of :data:`MODEL_SETTINGS` differs from the run's; the message names
            it and the command that keeps the run's settings.
    """
    output = Path(cfg.output_dir or ".")
    saved = saved_settings(output)
    if saved is None:
        return []
    now = _as_saved(cfg)
    fixed = [
        name for name in MODEL_SETTINGS if name in saved and not _same(name, saved[name], now[name])
    ]
    if fixed:
        differences = "; ".join(changed_settings({n: saved[n] for n in fixed}, now))
        raise ValueError(
            f"--resume: the run in {output} was trained with other model settings ({differences}); "
            "its checkpoints hold weights for that model. Resume with the run's own settings "
            f"(`trl-env train --out {output} --resume` reads {output / 'config.yaml'}), or start a "
            "new run in another folder"
        )
    return changed_settings(saved, now)
