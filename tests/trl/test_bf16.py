"""Frozen weights held in bfloat16 during generation under CPU bf16 autocast: same numbers (LoRA
adapters folded in: within bfloat16 rounding), the model left as it was, and copies rebuilt when a
frozen weight or an adapter changes."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import pytest
import torch

from trl_env.trl.fast._checks import bf16_autocast_active
from trl_env.trl.fast._frozen_bf16 import FrozenBF16Weights
from trl_env.trl.models import build_tiny_model, load_model_and_tokenizer

from .test_generation import make_generator

peft = pytest.importorskip("peft")


def bf16_autocast() -> torch.autocast:
    return torch.autocast("cpu", dtype=torch.bfloat16)


def tiny_lora(tmp_path, **config: Any) -> tuple[Any, Any]:
    """The tiny model with fresh LoRA adapters (``config``: more ``LoraConfig`` fields)."""
    model, tokenizer = load_model_and_tokenizer(build_tiny_model(tmp_path / "tiny"))
    config = peft.LoraConfig(
        r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM", **config
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated")
        return peft.get_peft_model(model, config), tokenizer


@pytest.fixture
def lora_model(tmp_path):
    """The tiny model with LoRA adapters (frozen float32 base, trainable adapters) and its
    tokenizer; the adapters are nudged off zero so they change the output."""
    model, tokenizer = tiny_lora(tmp_path)
    torch.manual_seed(0)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "lora_B" in name:
                parameter.normal_(std=0.05)
    return model.eval(), tokenizer


def frozen_linears(model) -> list[torch.nn.Linear]:
    return [
        m for m in model.modules() if isinstance(m, torch.nn.Linear) and not m.weight.requires_grad
    ]


def test_autocast_probe() -> None:
    assert not bf16_autocast_active()
    with bf16_autocast():
        assert bf16_autocast_active()
    with torch.autocast("cpu", dtype=torch.float16):
        assert not bf16_autocast_active()


def lora_layers(model) -> list:
    return [m for m in model.modules() if hasattr(m, "lora_A") and hasattr(m, "base_layer")]


def test_logits_are_bitwise_those_of_plain_autocast(lora_model) -> None:
    """Without merging, only the repeated cast goes: bitwise the same logits."""
    model, _ = lora_model
    ids = torch.randint(5, 200, (3, 17))
    weights = FrozenBF16Weights(merge_lora=False)
    with torch.no_grad(), bf16_autocast():
        expected = model(input_ids=ids).logits
        with weights.swapped_in(model):
            swapped = model(input_ids=ids).logits
    assert torch.equal(expected, swapped)


def test_merged_adapters_give_the_adapted_logits_within_bf16_rounding(lora_model) -> None:
    """Folding the adapters into the bfloat16 weight moves the logits by about bfloat16's own
    rounding: far less than the adapters' effect, and no more than plain autocast's distance
    from float32."""
    model, _ = lora_model
    ids = torch.randint(5, 200, (3, 17))
    with torch.no_grad():
        exact = model(input_ids=ids).logits.float()  # float32, adapters unmerged
        with model.disable_adapter():
            base = model(input_ids=ids).logits.float()
        with bf16_autocast():
            autocast = model(input_ids=ids).logits.float()
            with FrozenBF16Weights().swapped_in(model):
                merged = model(input_ids=ids).logits.float()
    adapter_effect = (exact - base).abs().max()
    assert adapter_effect > 0.05
    assert (merged - exact).abs().max() < adapter_effect / 4
    assert (merged - exact).abs().mean() <= 2 * (autocast - exact).abs().mean()


def test_merged_layers_skip_their_adapters_and_are_restored(lora_model) -> None:
    model, _ = lora_model
    calls: list[str] = []
    layers = lora_layers(model)
    hooks = [
        layer.lora_A["default"].register_forward_hook(lambda *_: calls.append("A"))
        for layer in layers
    ]
    ids = torch.randint(5, 200, (2, 9))
    try:
        with torch.no_grad(), bf16_autocast():
            with FrozenBF16Weights().swapped_in(model):
                assert all(layer.disable_adapters for layer in layers)
                model(input_ids=ids)
            assert calls == []
            with pytest.raises(RuntimeError, match="boom"), FrozenBF16Weights().swapped_in(model):
                raise RuntimeError("boom")
            assert not any(layer.disable_adapters for layer in layers)
            model(input_ids=ids)
    finally:
        for hook in hooks:
            hook.remove()
    assert len(calls) == len(layers)  # unmerged again after the context


def test_a_merged_copy_follows_its_adapters_through_a_fused_optimizer_step(lora_model) -> None:
    """Fused AdamW (transformers' default optimizer) updates in place without moving the version
    counter, by amounts far below a bfloat16 step of the base weight: the copy still follows."""
    model, _ = lora_model
    layer = lora_layers(model)[0]
    adapters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(adapters, lr=1e-6, fused=True)
    weights = FrozenBF16Weights()
    with weights.swapped_in(model):
        first = layer.base_layer.weight
    with weights.swapped_in(model):
        assert layer.base_layer.weight is first  # merged once, not per call
    version = layer.lora_B["default"].weight._version
    before = layer.lora_B["default"].weight.detach().clone()
    model(input_ids=torch.randint(5, 200, (2, 9))).logits.float().logsumexp(-1).mean().backward()
    optimizer.step()
    assert layer.lora_B["default"].weight._version == version  # no counter moved
    assert not torch.equal(layer.lora_B["default"].weight, before)
    with weights.swapped_in(model):
        assert layer.base_layer.weight is not first
        rebuilt = layer.base_layer.weight.float()
    with torch.no_grad():
        merged = layer.base_layer.weight + layer.get_delta_weight("default")
    assert torch.equal(rebuilt, merged.to(torch.bfloat16).float())


def test_the_generator_samples_the_merged_model(lora_model) -> None:
    """The generator's default path (adapters folded in): the greedy tokens of the unmerged
    model, log-probabilities within bfloat16 rounding, and the model as it was afterwards."""
    model, tokenizer = lora_model
    prompts = [
        tokenizer.encode("<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"),
        tokenizer.encode("<|im_start|>user\nsomething longer<|im_end|>\n<|im_start|>assistant\n"),
    ]
    runs = []
    for frozen in (FrozenBF16Weights(merge_lora=False), None):
        generator = make_generator(model, tokenizer, temperature=1e-3, autocast=bf16_autocast)
        if frozen is not None:
            generator.frozen_bf16 = frozen
        calls: list[int] = []
        hook = (
            lora_layers(model)[0]
            .lora_A["default"]
            .register_forward_hook(lambda *_, calls=calls: calls.append(1))
        )
        try:
            runs.append((generator.generate(prompts, max_new_tokens=8), len(calls)))
        finally:
            hook.remove()
    assert_merged_samples_unmerged(model, runs, atol=0.05)


def assert_merged_samples_unmerged(model, runs, atol: float) -> None:
    """``runs``: ``((tokens, logprobs), adapter calls)`` of an unmerged then a merged generation
    of 8 tokens. The same tokens, log-probabilities within ``atol``, the adapters run only in
    the unmerged one, and the model as it was afterwards."""
    ((unmerged_tokens, unmerged_logps), unmerged_calls), ((tokens, logps), calls) = runs
    assert tokens == unmerged_tokens and all(len(row) == 8 for row in tokens)
    for got, want in zip(logps, unmerged_logps, strict=True):
        torch.testing.assert_close(torch.tensor(got), torch.tensor(want), atol=atol, rtol=0)
    assert unmerged_calls > 0 and calls == 0  # the adapters ran only in the unmerged run
    assert all(m.weight.dtype == torch.float32 for m in frozen_linears(model))
    assert not any(layer.disable_adapters for layer in lora_layers(model))


def test_layers_with_active_dropout_run_unmerged(tmp_path) -> None:
    """In train mode a LoRA dropout draws a mask per call: folding the adapter in would drop it."""
    model, _ = tiny_lora(tmp_path, lora_dropout=0.1)
    with FrozenBF16Weights().swapped_in(model.train()):
        assert not any(layer.disable_adapters for layer in lora_layers(model))
    with FrozenBF16Weights().swapped_in(model.eval()):
        assert all(layer.disable_adapters for layer in lora_layers(model))


def test_model_is_restored_and_only_frozen_linears_are_swapped(lora_model) -> None:
    model, _ = lora_model
    base = model.get_base_model()
    before = {name: (p, p.dtype) for name, p in model.named_parameters()}
    tied = base.lm_head.weight is base.get_input_embeddings().weight
    weights = FrozenBF16Weights()
    with bf16_autocast(), weights.swapped_in(model):
        swapped = frozen_linears(model)
        assert swapped and all(m.weight.dtype == torch.bfloat16 for m in swapped)
        trainable = [p for p in model.parameters() if p.requires_grad]
        assert trainable and all(p.dtype == torch.float32 for p in trainable)
        # A tied lm_head gets its own copy: the input embedding stays float32.
        assert base.get_input_embeddings().weight.dtype == torch.float32
    after = {name: (p, p.dtype) for name, p in model.named_parameters()}
    assert after.keys() == before.keys()
    assert all(after[name][0] is before[name][0] for name in before)  # the same tensors
    assert all(after[name][1] == before[name][1] for name in before)
    assert (base.lm_head.weight is base.get_input_embeddings().weight) == tied


def test_model_is_restored_when_the_body_raises(lora_model) -> None:
    model, _ = lora_model
    originals = [m.weight for m in frozen_linears(model)]
    with pytest.raises(RuntimeError, match="boom"), FrozenBF16Weights().swapped_in(model):
        raise RuntimeError("boom")
    assert [m.weight for m in frozen_linears(model)] == originals


def test_copies_are_reused_and_rebuilt_when_a_frozen_weight_changes(lora_model) -> None:
    model, _ = lora_model
    layer = frozen_linears(model)[0]
    weights = FrozenBF16Weights(merge_lora=False)  # the plain cast (merged copies: below)
    with weights.swapped_in(model):
        first = layer.weight
    with weights.swapped_in(model):
        assert layer.weight is first  # cast once, not per call
    with torch.no_grad():
        layer.weight.add_(1.0)  # an in-place edit moves the version counter
    with weights.swapped_in(model):
        assert layer.weight is not first
        assert torch.equal(layer.weight, layer.weight.float().to(torch.bfloat16))
        rebuilt = layer.weight
    with torch.no_grad():
        assert torch.equal(rebuilt.float(), layer.weight.to(torch.bfloat16).float())
    weights.clear()
    with weights.swapped_in(model):
        assert layer.weight is not rebuilt


def test_generator_samples_the_same_under_bf16_autocast(lora_model, monkeypatch) -> None:
    """The generator swaps the copies in under CPU bf16 autocast; tokens and log-probs are those
    of plain autocast (the swap disabled), and the model is float32 again afterwards."""
    model, tokenizer = lora_model
    prompts = [
        tokenizer.encode("<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"),
        tokenizer.encode(
            "<|im_start|>user\nsomething longer here<|im_end|>\n<|im_start|>assistant\n"
        ),
    ]
    runs = []
    for swap in (True, False):
        generator = make_generator(model, tokenizer, autocast=bf16_autocast)
        generator.frozen_bf16 = FrozenBF16Weights(merge_lora=False)  # bitwise; merging: above
        seen: list[torch.dtype] = []
        hook = frozen_linears(model)[0].register_forward_pre_hook(
            lambda module, args, seen=seen: seen.append(module.weight.dtype)
        )
        if not swap:
            monkeypatch.setattr(
                generator.frozen_bf16, "swapped_in", lambda model: contextlib.nullcontext()
            )
        try:
            torch.manual_seed(1)
            runs.append(generator.generate(prompts, max_new_tokens=8))
        finally:
            hook.remove()
        assert set(seen) == {torch.bfloat16 if swap else torch.float32}
    assert runs[0] == runs[1]
    assert all(m.weight.dtype == torch.float32 for m in frozen_linears(model))


def test_sharded_weights_are_left_alone(lora_model) -> None:
    """DeepSpeed ZeRO-3 marks its partitioned parameters with ``ds_id``; their storage is not
    ours to swap, so nothing in such a model is."""
    model, _ = lora_model
    frozen_linears(model)[0].weight.ds_id = 0
    originals = [m.weight for m in frozen_linears(model)]
    with bf16_autocast(), FrozenBF16Weights().swapped_in(model):
        assert [m.weight for m in frozen_linears(model)] == originals


def test_parametrized_weights_are_left_alone(lora_model) -> None:
    """A parametrized weight (``nn.utils.parametrize``) is computed, not stored: not swapped."""
    model, _ = lora_model
    layer = frozen_linears(model)[0]
    torch.nn.utils.parametrize.register_parametrization(layer, "weight", torch.nn.Identity())
    with bf16_autocast(), FrozenBF16Weights().swapped_in(model):
        assert layer.weight.dtype == torch.float32
        assert any(m.weight.dtype == torch.bfloat16 for m in frozen_linears(model))


def test_a_dora_model_is_left_alone(tmp_path) -> None:
    """DoRA reads its base weight's norm from the weight itself: a copy would change it."""
    model, _ = tiny_lora(tmp_path, use_dora=True)
    with bf16_autocast(), FrozenBF16Weights().swapped_in(model):
        assert all(m.weight.dtype == torch.float32 for m in frozen_linears(model))


def test_clear_cache_drops_the_copies(lora_model) -> None:
    """An edit through ``.data`` (peft's merge_adapter) moves no version counter: the generator's
    clear_cache() is the way to drop the copies, as after any weight change."""
    model, tokenizer = lora_model
    generator = make_generator(model, tokenizer, autocast=bf16_autocast)
    layer = frozen_linears(model)[0]
    with generator.frozen_bf16.swapped_in(model):
        first = layer.weight
    generator.clear_cache()
    with generator.frozen_bf16.swapped_in(model):
        assert layer.weight is not first


def cpu_has_onednn_bf16() -> bool:
    """Whether this CPU and PyTorch build have oneDNN's bfloat16 kernels (a feature check only:
    unlike ``onednn_packing_available``, it compares no numbers)."""
    try:
        return bool(
            torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
        )
    except (AttributeError, RuntimeError):
        return False


def test_packed_weights_give_bitwise_the_same_logits(lora_model) -> None:
    """oneDNN-packed copies: the same numbers as F.linear on the bfloat16 copies, bit for bit
    (and float32's up to the output's bfloat16 rounding); the layers' own forward is back
    afterwards. Skipped only on a CPU without the feature: a packing that gives other numbers
    (which turns ``onednn_packing_available`` off) fails here."""
    from trl_env.trl.fast._onednn_linear import PackedLinearForward, onednn_packing_available

    if not cpu_has_onednn_bf16():
        pytest.skip("this CPU has no oneDNN bfloat16 kernels (AVX-512 BW/VL/DQ or AVX-NE-CONVERT)")
    assert onednn_packing_available(), "the CPU has the kernels, but packed layers are off"
    generator = torch.Generator().manual_seed(1)
    for rows, width, out, with_bias in ((1, 576, 1536, False), (5, 64, 96, True)):
        weight = torch.randn(out, width, generator=generator).to(torch.bfloat16)
        bias = torch.randn(out, generator=generator).to(torch.bfloat16) if with_bias else None
        x = torch.randn(2, rows, width, generator=generator)
        with bf16_autocast():
            packed = PackedLinearForward(weight, bias)(x)
        x16 = x.to(torch.bfloat16)
        unpacked = torch.nn.functional.linear(x16, weight, bias)  # autocast's own matmul
        exact = torch.nn.functional.linear(
            x16.float(), weight.float(), None if bias is None else bias.float()
        )
        assert packed.dtype == torch.bfloat16 and packed.shape == unpacked.shape
        assert torch.equal(packed, unpacked), (packed.float() - unpacked.float()).abs().max()
        torch.testing.assert_close(packed.float(), exact, rtol=1e-2, atol=1e-2)
    model, _ = lora_model
    ids = torch.tensor([[5, 6, 7, 8, 9, 10]])
    logits = {}
    for prepack in (False, True):
        weights = FrozenBF16Weights(prepack=prepack)
        with torch.no_grad(), bf16_autocast(), weights.swapped_in(model):
            logits[prepack] = model(ids).logits
            packed = [m for m in frozen_linears(model) if "forward" in m.__dict__]
        assert bool(packed) is prepack
    assert torch.equal(logits[True], logits[False])
    assert not [m for m in model.modules() if "forward" in m.__dict__]
