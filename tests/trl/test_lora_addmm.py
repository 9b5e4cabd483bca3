"""LoRA layers that add their adapter term inside one matmul: peft's outputs and gradients up to
rounding, peft's own forward wherever it is not plain LoRA."""

from __future__ import annotations

import pytest
import torch

from trl_env.trl.fast._lora_addmm import fuse_lora_additions

from .test_bf16 import bf16_autocast, lora_model, tiny_lora  # noqa: F401

peft = pytest.importorskip("peft")


@pytest.fixture
def fused_calls(monkeypatch) -> list[tuple[int, ...]]:
    """The ``torch.addmm`` calls made (the fused path's one op; peft's path makes none): the
    shape of each call's adapter input."""
    calls: list[tuple[int, ...]] = []
    addmm = torch.addmm

    def counting_addmm(input, mat1, mat2, *args, **kwargs):
        calls.append(tuple(mat1.shape))
        return addmm(input, mat1, mat2, *args, **kwargs)

    monkeypatch.setattr(torch, "addmm", counting_addmm)
    return calls


def lora_layer_count(model) -> int:
    return sum(isinstance(m, peft.tuners.lora.layer.Linear) for m in model.modules())


def outputs_and_grads(model, ids: torch.Tensor, autocast: bool) -> tuple[torch.Tensor, list]:
    model.zero_grad()
    with bf16_autocast() if autocast else torch.autocast("cpu", enabled=False):
        logits = model(ids).logits.float()
    logits.pow(2).mean().backward()
    grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
    return logits.detach(), grads


@pytest.mark.parametrize("autocast", [False, True])
def test_outputs_and_gradients_are_peft_s(
    lora_model,  # noqa: F811
    fused_calls,
    autocast: bool,
) -> None:
    model, _ = lora_model
    ids = torch.tensor([[5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16]])
    want, want_grads = outputs_and_grads(model, ids, autocast)
    assert fused_calls == []  # peft's own forward: no addmm
    layers = lora_layer_count(model)
    assert fuse_lora_additions(model) == layers > 0
    assert fuse_lora_additions(model) == 0  # already fused
    got, grads = outputs_and_grads(model, ids, autocast)
    # The fused path ran: one addmm per LoRA layer, on the rank-4 adapter input of all 12 rows.
    assert fused_calls == [(12, 4)] * layers
    # float32: the same sum; bfloat16: rounded once instead of three times.
    tolerance = {"rtol": 2e-2, "atol": 2e-2} if autocast else {"rtol": 1e-5, "atol": 1e-6}
    torch.testing.assert_close(got, want, **tolerance)
    assert len(grads) == len(want_grads) > 0
    for value, expected in zip(grads, want_grads, strict=True):
        torch.testing.assert_close(value, expected, **tolerance)


def test_disabled_adapters_and_merged_copies_take_peft_s_path(
    lora_model,  # noqa: F811
    fused_calls,
) -> None:
    model, _ = lora_model
    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad(), model.disable_adapter():
        base = model(ids).logits
    fuse_lora_additions(model)
    with torch.no_grad():
        with model.disable_adapter():
            assert torch.equal(model(ids).logits, base)
        assert fused_calls == []  # disabled: peft's forward
        adapted = model(ids).logits
        assert len(fused_calls) == lora_layer_count(model)  # enabled again: the fused path
        model.merge_adapter()
        try:
            merged = model(ids).logits
        finally:
            model.unmerge_adapter()
        assert len(fused_calls) == lora_layer_count(model)  # merged: peft's forward
    assert not torch.equal(adapted, base)
    torch.testing.assert_close(merged, adapted, rtol=1e-4, atol=1e-5)


def test_layers_with_dropout_keep_peft_s_forward(tmp_path, fused_calls) -> None:
    model, _ = tiny_lora(tmp_path, lora_dropout=0.1)
    assert fuse_lora_additions(model) == 0
    model(torch.tensor([[5, 6, 7, 8]]))
    assert fused_calls == []


def test_one_shared_cast_is_bitwise_autocasts_casts(lora_model, monkeypatch) -> None:  # noqa: F811
    """The fused layers cast a float32 input to bfloat16 once for all its readers; outputs and
    gradients are bitwise those of each layer casting its own (the gradients still reach the
    input in float32, one edge per reader)."""
    from trl_env.trl.fast._input_cast import SharedInputCast

    model, _ = lora_model
    fuse_lora_additions(model)
    ids = torch.tensor([[5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16]])
    calls = []
    real_call = SharedInputCast.__call__

    def counting_call(self, x):
        calls.append(x.dtype)
        return real_call(self, x)

    monkeypatch.setattr(SharedInputCast, "__call__", counting_call)
    shared, shared_grads = outputs_and_grads(model, ids, autocast=True)
    assert len(calls) == 2 * lora_layer_count(model)  # the shared cast ran: base and adapter
    monkeypatch.setattr(SharedInputCast, "__call__", lambda self, x: x)
    own, own_grads = outputs_and_grads(model, ids, autocast=True)
    assert torch.equal(shared, own)
    for a, b in zip(shared_grads, own_grads, strict=True):
        assert torch.equal(a, b)
