"""The key/value cache that appends into reserved room: the states DynamicLayer would hold, one
allocation per call, and the same tokens from generate."""

from __future__ import annotations

import torch
from transformers import GenerationConfig
from transformers.cache_utils import DynamicLayer

from trl_env.trl.fast._reserved_cache import ReservedLayer, reserved_cache
from trl_env.trl.models._generation import _CACHE_ARGUMENT

from .test_generation import model_and_tokenizer  # noqa: F401


def states(batch: int, columns: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return (
        torch.randn(batch, 2, columns, 4, generator=generator),
        torch.randn(batch, 2, columns, 3, generator=generator),
    )


def test_it_holds_what_a_dynamic_layer_holds_in_one_reservation() -> None:
    reserved, dynamic = ReservedLayer(capacity=12), DynamicLayer()
    pointers = set()
    for seed, columns in enumerate([5, 1, 1, 3]):
        got = reserved.update(*states(2, columns, seed))
        want = dynamic.update(*states(2, columns, seed))
        for a, b in zip(got, want, strict=True):
            assert torch.equal(a, b)
        pointers.add(reserved.keys.data_ptr())
    assert pointers == {reserved.keys.data_ptr()}  # never copied to grow
    assert reserved.get_seq_length() == 10


def test_it_grows_past_its_capacity_and_follows_crops_and_row_selection() -> None:
    reserved, dynamic = ReservedLayer(capacity=4), DynamicLayer()
    for layer in (reserved, dynamic):
        layer.update(*states(3, 3, 0))
        layer.update(*states(3, 2, 1))  # past the capacity
        layer.crop(-2)
        layer.update(*states(3, 1, 2))
        layer.batch_select_indices(torch.tensor([2, 0]))
        layer.update(*states(2, 2, 3))
    assert torch.equal(reserved.keys, dynamic.keys)
    assert torch.equal(reserved.values, dynamic.values)


def test_generate_gives_the_same_tokens_with_a_reserved_cache(model_and_tokenizer) -> None:  # noqa: F811
    model, tokenizer = model_and_tokenizer
    config = GenerationConfig(
        do_sample=False, max_new_tokens=7, pad_token_id=tokenizer.pad_token_id
    )
    ids = torch.tensor([[30, 31, 32, 33], [0, 34, 35, 36]])
    ids[1, 0] = tokenizer.pad_token_id
    mask = torch.tensor([[1, 1, 1, 1], [0, 1, 1, 1]])
    with torch.no_grad():
        plain = model.generate(input_ids=ids, attention_mask=mask, generation_config=config)
        cache = reserved_cache(ids.shape[1] + 7)
        reserved = model.generate(
            input_ids=ids, attention_mask=mask, generation_config=config, **{_CACHE_ARGUMENT: cache}
        )
    assert torch.equal(plain, reserved)
    assert all(type(layer) is ReservedLayer for layer in cache.layers)
