"""Shared fixtures for the TRL-bridge tests (tests/trl)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny random Qwen3 model and its tokenizer (TRL's qwen3 chat template), built once.

    Saved to a directory so that it loads through the same ``from_pretrained`` path as a real
    ``model="Qwen/Qwen3-0.6B"`` (and so that ``GRPOTrainer`` can reload it). Treat it as read-only:
    it is shared by every test of the session.
    """
    from trl_env.trl.models import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-qwen3"))


@pytest.fixture
def tiny_lora_adapter(tiny_model_dir: str, tmp_path: Path) -> tuple[Any, Path]:
    """A LoRA adapter with random (non-zero) weights on the tiny model, saved to
    ``tmp_path / "adapter"``: returns ``(the peft model, the adapter directory)``."""
    peft = pytest.importorskip("peft")
    from trl_env.trl.models import load_model_and_tokenizer

    base, _ = load_model_and_tokenizer(tiny_model_dir)
    config = peft.LoraConfig(
        r=4, lora_alpha=8, target_modules="all-linear", init_lora_weights=False
    )
    adapted = peft.get_peft_model(base, config)
    adapted.save_pretrained(tmp_path / "adapter")
    return adapted, tmp_path / "adapter"


@pytest.fixture
def silence_trl_experimental(monkeypatch: pytest.MonkeyPatch) -> None:
    """Set ``TRL_EXPERIMENTAL_SILENCE=1``: TRL warns that ``rollout_func`` and
    ``environment_factory`` are experimental, and the suite turns warnings into errors."""
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
