"""Frozen linear weights cast once per generate call under autocast: same outputs, restored after."""

from __future__ import annotations

import pytest
import torch

from tests.trl.test_generation import make_generator
from trl_env.trl.models import build_tiny_model, load_model_and_tokenizer
from trl_env.trl.models._frozen_weights import frozen_weights_cast_for_autocast

# peft reads transformers' deprecated is_gradient_checkpointing (a FutureWarning).
pytestmark = pytest.mark.filterwarnings(
    r"ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"
)


@pytest.fixture(scope="module")
def lora_model_and_tokenizer(tmp_path_factory):
    from peft import LoraConfig, get_peft_model

    path = build_tiny_model(tmp_path_factory.mktemp("tiny-frozen"))
    model, tokenizer = load_model_and_tokenizer(path)
    config = LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM")
    model = get_peft_model(model, config).eval()
    torch.manual_seed(0)
    for name, parameter in model.named_parameters():
        if "lora_B" in name:  # non-zero adapters, so that they take part in the outputs
            torch.nn.init.normal_(parameter, std=0.02)
    return model, tokenizer


def dtypes(model: torch.nn.Module) -> dict[str, torch.dtype]:
    return {name: p.dtype for name, p in model.named_parameters()}


def test_frozen_linear_weights_are_cast_inside_and_restored_after(lora_model_and_tokenizer):
    model, _ = lora_model_and_tokenizer
    before = {name: p.data_ptr() for name, p in model.named_parameters()}
    with (
        torch.autocast("cpu", dtype=torch.bfloat16),
        frozen_weights_cast_for_autocast(model) as cast,
    ):
        inside = dtypes(model)
    assert cast > 0
    frozen_linear = [n for n in inside if "base_layer" in n]
    assert frozen_linear and all(inside[n] == torch.bfloat16 for n in frozen_linear)
    # Adapters (trainable) and embeddings (not autocast) keep float32.
    assert all(inside[n] == torch.float32 for n in inside if "lora_" in n)
    assert all(inside[n] == torch.float32 for n in inside if "embed" in n)
    # The very float32 tensors are back afterwards, not a round trip through bfloat16.
    assert all(p.data_ptr() == before[name] for name, p in model.named_parameters())
    assert set(dtypes(model).values()) == {torch.float32}


def test_outputs_are_bitwise_those_of_plain_autocast(lora_model_and_tokenizer):
    model, tokenizer = lora_model_and_tokenizer
    ids = torch.tensor([tokenizer.encode("<|im_start|>user\nhello there<|im_end|>\n")])
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        plain = model(ids).logits
        with frozen_weights_cast_for_autocast(model):
            cast = model(ids).logits
    assert torch.equal(plain, cast)


def test_nothing_is_cast_outside_autocast_or_for_trainable_weights(lora_model_and_tokenizer):
    model, _ = lora_model_and_tokenizer
    with frozen_weights_cast_for_autocast(model) as cast:
        assert cast == 0 and set(dtypes(model).values()) == {torch.float32}
    trainable = torch.nn.Linear(3, 3)  # requires grad: autocast caches its cast itself
    with torch.autocast("cpu", dtype=torch.bfloat16), frozen_weights_cast_for_autocast(trainable):
        assert trainable.weight.dtype == torch.float32


def test_weights_are_restored_when_the_block_raises(lora_model_and_tokenizer):
    model, _ = lora_model_and_tokenizer
    with (
        pytest.raises(RuntimeError, match="boom"),
        torch.autocast("cpu", dtype=torch.bfloat16),
        frozen_weights_cast_for_autocast(model),
    ):
        raise RuntimeError("boom")
    assert set(dtypes(model).values()) == {torch.float32}


def test_generate_under_autocast_runs_the_cast_weights(lora_model_and_tokenizer):
    """The generator casts the frozen weights for its call: a base layer sees bfloat16 weights
    during ``generate`` and float32 ones after it."""
    model, tokenizer = lora_model_and_tokenizer
    generator = make_generator(
        model, tokenizer, autocast=lambda: torch.autocast("cpu", dtype=torch.bfloat16)
    )
    layer = next(m for n, m in model.named_modules() if n.endswith("q_proj.base_layer"))
    seen: list[torch.dtype] = []
    hook = layer.register_forward_hook(lambda m, i, out: seen.append(m.weight.dtype))
    try:
        prompt = tokenizer.encode("<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n")
        generator.generate([prompt], max_new_tokens=3)
    finally:
        hook.remove()
    assert seen and set(seen) == {torch.bfloat16}
    assert layer.weight.dtype == torch.float32
