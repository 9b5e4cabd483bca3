"""Shared fixtures for the TRL-bridge tests (tests/trl)."""

from __future__ import annotations

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
def silence_trl_experimental(monkeypatch: pytest.MonkeyPatch) -> None:
    """Set ``TRL_EXPERIMENTAL_SILENCE=1``: TRL warns that ``rollout_func`` and
    ``environment_factory`` are experimental, and the suite turns warnings into errors."""
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
