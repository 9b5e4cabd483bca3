"""LoRA layers that add their adapter term inside one matmul: peft's outputs and gradients up to
rounding, peft's own forward wherever it is not plain LoRA."""

from __future__ import annotations

import pytest
import torch

from trl_env.trl.models._lora_addmm import fuse_lora_additions

from .test_bf16 import bf16_autocast, lora_model, tiny_lora  # noqa: F401

peft = pytest.importorskip("peft")


def outputs_and_grads(model, ids: torch.Tensor, autocast: bool) -> tuple[torch.Tensor, list]:
    model.zero_grad()
    with bf16_autocast() if autocast else torch.autocast("cpu", enabled=False):
        logits = model(ids).logits.float()
    logits.pow(2).mean().backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    return logits.detach(), grads


@pytest.mark.parametrize("autocast", [False, True])
def test_outputs_and_gradients_are_peft_s(lora_model, autocast: bool) -> None:  # noqa: F811
    model, _ = lora_model
    ids = torch.tensor([[5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16]])
    want, want_grads = outputs_and_grads(model, ids, autocast)
    layers = sum(isinstance(m, peft.tuners.lora.layer.Linear) for m in model.modules())
    assert fuse_lora_additions(model) == layers > 0
    assert fuse_lora_additions(model) == 0  # already fused
    got, grads = outputs_and_grads(model, ids, autocast)
    # float32: the same sum; bfloat16: rounded once instead of three times.
    tolerance = {"rtol": 2e-2, "atol": 2e-2} if autocast else {"rtol": 1e-5, "atol": 1e-6}
    torch.testing.assert_close(got, want, **tolerance)
    assert len(grads) == len(want_grads) > 0
    for value, expected in zip(grads, want_grads, strict=True):
        torch.testing.assert_close(value, expected, **tolerance)


def test_disabled_adapters_and_merged_copies_take_peft_s_path(lora_model) -> None:  # noqa: F811
    model, _ = lora_model
    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad(), model.disable_adapter():
        base = model(ids).logits
    fuse_lora_additions(model)
    with torch.no_grad():
        with model.disable_adapter():
            assert torch.equal(model(ids).logits, base)
        adapted = model(ids).logits
    assert not torch.equal(adapted, base)


def test_layers_with_dropout_keep_peft_s_forward(tmp_path) -> None:
    model, _ = tiny_lora(tmp_path, lora_dropout=0.1)
    assert fuse_lora_additions(model) == 0


def test_one_shared_cast_is_bitwise_autocasts_casts(lora_model, monkeypatch) -> None:  # noqa: F811
    """The fused layers cast a float32 input to bfloat16 once for all its readers; outputs and
    gradients are bitwise those of each layer casting its own (the gradients still reach the
    input in float32, one edge per reader)."""
    from trl_env.trl.models import _lora_addmm

    model, _ = lora_model
    fuse_lora_additions(model)
    ids = torch.tensor([[5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16]])
    shared, shared_grads = outputs_and_grads(model, ids, autocast=True)
    monkeypatch.setattr(_lora_addmm._SharedInputCast, "__call__", lambda self, x: x)
    own, own_grads = outputs_and_grads(model, ids, autocast=True)
    assert torch.equal(shared, own)
    for a, b in zip(shared_grads, own_grads, strict=True):
        assert torch.equal(a, b)
