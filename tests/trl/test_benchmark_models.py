"""The real-model benchmarks take a LoRA run's model: ``resolve_model`` merges the adapter."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from trl_env.trl import models

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from _real_model import resolve_model


@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
def test_resolve_model_merges_a_lora_adapter_into_a_model_directory(
    tiny_model_dir: str, tiny_lora_adapter: tuple[Any, Path]
) -> None:
    from transformers import AutoModelForCausalLM

    adapted, adapter = tiny_lora_adapter
    ids = torch.tensor([[1, 2, 3, 4]])

    merged = resolve_model(adapter)

    assert Path(merged, "config.json").is_file() and not models.is_adapter_dir(merged)
    assert Path(merged, "tokenizer_config.json").is_file()
    with torch.no_grad():
        expected = adapted(input_ids=ids).logits
        got = AutoModelForCausalLM.from_pretrained(merged)(input_ids=ids).logits
        unmerged = AutoModelForCausalLM.from_pretrained(tiny_model_dir)(input_ids=ids).logits
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)
    assert not torch.allclose(got, unmerged, atol=1e-3)  # the adapter's change is in it
    assert resolve_model(tiny_model_dir) == tiny_model_dir  # a whole model passes through
