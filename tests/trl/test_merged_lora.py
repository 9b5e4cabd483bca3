"""The fast path ``merged_lora``: a float32 generation runs each LoRA-adapted layer on a float32
copy with its adapters folded in. Same greedy tokens and log-probabilities within float32
rounding, only adapted layers copied, the model as it was afterwards, copies rebuilt when the
adapters change, and nothing under bf16 autocast (``frozen_bf16``'s place) or when it is off."""

from __future__ import annotations

import pytest
import torch

from trl_env.trl.fast._merged_lora import MergedLoRAWeights
from trl_env.trl.models import build_tiny_model, load_model_and_tokenizer

from .test_bf16 import (  # noqa: F401
    assert_merged_samples_unmerged,
    frozen_linears,
    lora_layers,
    lora_model,
    tiny_lora,
)
from .test_generation import make_generator

peft = pytest.importorskip("peft")

PROMPTS = (
    "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nsomething longer<|im_end|>\n<|im_start|>assistant\n",
)


def adapter_calls(model) -> tuple[list[int], object]:
    calls: list[int] = []
    hook = lora_layers(model)[0].lora_A["default"].register_forward_hook(lambda *_: calls.append(1))
    return calls, hook


def test_merged_copies_give_the_adapted_logits_within_float32_rounding(lora_model) -> None:  # noqa: F811
    model, _ = lora_model
    ids = torch.randint(5, 200, (3, 17))
    with torch.no_grad():
        exact = model(input_ids=ids).logits
        with model.disable_adapter():
            base = model(input_ids=ids).logits
        with MergedLoRAWeights().swapped_in(model):
            merged = model(input_ids=ids).logits
    assert (exact - base).abs().max() > 0.05  # the adapters matter
    torch.testing.assert_close(merged, exact, atol=1e-4, rtol=1e-4)
    assert merged.dtype == torch.float32


def test_only_adapted_layers_are_copied_and_everything_is_restored(lora_model) -> None:  # noqa: F811
    model, _ = lora_model
    before = {name: p for name, p in model.named_parameters()}
    adapted = {id(layer.base_layer) for layer in lora_layers(model)}
    others = [m for m in frozen_linears(model) if id(m) not in adapted]
    assert others, "the tiny model's LM head is not adapted: the test needs a layer to leave"
    originals = {id(layer.base_layer): layer.base_layer.weight for layer in lora_layers(model)}
    others_before = {id(m): m.weight for m in others}
    weights = MergedLoRAWeights()
    with weights.swapped_in(model):
        layers = lora_layers(model)
        assert all(layer.disable_adapters for layer in layers)
        assert all(m.weight is others_before[id(m)] for m in others)  # not copied
        copies = {id(layer.base_layer): layer.base_layer.weight for layer in layers}
        assert all(
            copies[id(layer.base_layer)] is not originals[id(layer.base_layer)] for layer in layers
        )
    assert len(weights._copies) == len(adapted)  # no copy of a layer without adapters
    assert {name: p for name, p in model.named_parameters()} == before
    assert all(before[name] is p for name, p in model.named_parameters())
    assert not any(layer.disable_adapters for layer in lora_layers(model))
    for layer in lora_layers(model):
        with torch.no_grad():
            want = layer.base_layer.weight + layer.get_delta_weight("default")
        assert torch.equal(copies[id(layer.base_layer)], want)  # peft's merge, the same sum
    with pytest.raises(RuntimeError, match="boom"), weights.swapped_in(model):
        raise RuntimeError("boom")
    assert all(before[name] is p for name, p in model.named_parameters())
    assert not any(layer.disable_adapters for layer in lora_layers(model))


def test_a_copy_follows_its_adapters(lora_model) -> None:  # noqa: F811
    model, _ = lora_model
    layer = lora_layers(model)[0]
    weights = MergedLoRAWeights()
    with weights.swapped_in(model):
        first = layer.base_layer.weight
    with weights.swapped_in(model):
        assert layer.base_layer.weight is first  # merged once, not per call
    with torch.no_grad():
        layer.lora_B["default"].weight.add_(0.01)
    with weights.swapped_in(model):
        assert layer.base_layer.weight is not first
        rebuilt = layer.base_layer.weight.clone()
    with torch.no_grad():
        assert torch.equal(rebuilt, layer.base_layer.weight + layer.get_delta_weight("default"))


@pytest.mark.parametrize(
    ("without", "setting"), [("on,-merged_lora", "on"), ("off", "off,merged_lora")]
)
def test_the_generator_samples_the_merged_model_in_float32(lora_model, without, setting) -> None:  # noqa: F811
    """The same seed samples the unmerged model's tokens, with log-probabilities within float32
    rounding; the adapters' own matmuls do not run, and the model is as it was afterwards."""
    model, tokenizer = lora_model
    prompts = [tokenizer.encode(text) for text in PROMPTS]
    runs = []
    for fast_paths in (without, setting):
        torch.manual_seed(11)
        generator = make_generator(model, tokenizer, temperature=1.0, fast_paths=fast_paths)
        calls, hook = adapter_calls(model)
        try:
            runs.append((generator.generate(prompts, max_new_tokens=8), len(calls)))
        finally:
            hook.remove()
    assert_merged_samples_unmerged(model, runs, atol=1e-4)


@pytest.mark.parametrize(
    ("fast_paths", "autocast"),
    [
        ("auto,-merged_lora", None),
        ("on", lambda: torch.autocast("cpu", dtype=torch.bfloat16)),
        ("on", lambda: torch.autocast("cpu", dtype=torch.float16)),
    ],
    ids=["layer-removed", "under-bf16-autocast", "under-fp16-autocast"],
)
def test_removed_or_under_autocast_the_float32_copies_are_not_used(
    lora_model,  # noqa: F811
    fast_paths,
    autocast,
) -> None:
    model, tokenizer = lora_model
    generator = make_generator(model, tokenizer, fast_paths=fast_paths, autocast=autocast)
    generator.generate([tokenizer.encode(PROMPTS[0])], max_new_tokens=4)
    assert generator.fast.merged_lora._copies == {}


def test_dropout_in_train_mode_keeps_the_adapters_unmerged(tmp_path) -> None:
    model, _ = tiny_lora(tmp_path, lora_dropout=0.1)
    weights = MergedLoRAWeights()
    with weights.swapped_in(model.train()):
        assert not any(layer.disable_adapters for layer in lora_layers(model))
    assert weights._copies == {}


def test_the_copies_live_inside_a_call_and_clear_cache_drops_them(lora_model) -> None:  # noqa: F811
    model, tokenizer = lora_model
    generator = make_generator(model, tokenizer, fast_paths="on")
    generator.generate([tokenizer.encode(PROMPTS[0])], max_new_tokens=4)
    assert len(generator.fast.merged_lora._copies) == len(lora_layers(model))
    generator.clear_cache()  # what the rollout does before the training step
    assert generator.fast.merged_lora._copies == {}


def test_a_model_without_lora_gets_no_copies(tmp_path) -> None:
    model, tokenizer = load_model_and_tokenizer(build_tiny_model(tmp_path / "tiny"))
    generator = make_generator(model, tokenizer, fast_paths="on")
    generator.generate([tokenizer.encode(PROMPTS[0])], max_new_tokens=4)
    assert generator.fast.merged_lora._copies == {}


def test_off_the_cpu_the_model_s_own_weights_run(lora_model, monkeypatch) -> None:  # noqa: F811
    from trl_env.trl.fast import _generation as fast_generation

    model, _ = lora_model
    fast = fast_generation.GenerationFastPaths("on")
    monkeypatch.setattr(fast_generation, "model_device_type", lambda model: "cuda")
    with fast.weights(model, fast.active(model)):
        assert not any(layer.disable_adapters for layer in lora_layers(model))
    assert fast.merged_lora._copies == {}


@pytest.mark.parametrize(
    ("autocast", "layer"),
    [(None, "merged_lora"), (lambda: torch.autocast("cpu", dtype=torch.bfloat16), "frozen_bf16")],
    ids=["float32", "bf16"],
)
def test_a_dora_model_is_refused_once_by_the_layer_that_would_act(
    tmp_path, autocast, layer
) -> None:
    """DoRA reads its base weight's norm from the weight: neither copy may serve it. One warning,
    from the layer of the run's dtype (the other is idle there)."""
    from trl_env.error import FastPathWarning

    model, tokenizer = tiny_lora(tmp_path, use_dora=True)
    generator = make_generator(model.eval(), tokenizer, fast_paths="on", autocast=autocast)
    with pytest.warns(FastPathWarning) as caught:
        generator.generate([tokenizer.encode(PROMPTS[0])], max_new_tokens=2)
    refusals = [str(w.message) for w in caught if issubclass(w.category, FastPathWarning)]
    assert len(refusals) == 1 and layer in refusals[0] and "DoRA" in refusals[0]
    assert generator.fast.merged_lora._copies == {} and generator.fast.frozen_bf16._copies == {}
