"""Sampling by inverse CDF inside the generator's logits processor: the right distribution, the
settings transformers would apply, and transformers' own sampling where it must stay."""

from __future__ import annotations

import pytest
import torch
from transformers import GenerationConfig
from transformers.generation.logits_process import (
    MinPLogitsWarper,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from trl_env.trl.fast._inverse_cdf import sample_inverse_cdf, sampling_plan
from trl_env.trl.models._sampling import TurnSampler

from .test_generation import make_generator, model_and_tokenizer  # noqa: F401


def test_inverse_cdf_draws_the_softmax_distribution() -> None:
    torch.manual_seed(0)
    probabilities = torch.tensor([0.1, 0.0, 0.6, 0.3])
    scores = probabilities.log().expand(20_000, 4)  # log(0) = -inf: never drawn
    counts = torch.bincount(sample_inverse_cdf(scores), minlength=4).float() / 20_000
    assert counts[1] == 0
    # 20,000 draws: a standard error of at most 0.0035 per entry.
    torch.testing.assert_close(counts, probabilities, atol=0.015, rtol=0)


def test_inverse_cdf_never_draws_past_the_last_possible_token(monkeypatch) -> None:
    """A uniform number that rounds up to the total picks the last token that has probability."""
    monkeypatch.setattr(torch, "rand", lambda *shape, **kw: torch.ones(*shape, **kw))
    scores = torch.tensor([[0.0, 1.0, float("-inf"), float("-inf")]])
    assert sample_inverse_cdf(scores).tolist() == [1]


def test_plain_sampling_moves_into_the_processor_in_transformers_order() -> None:
    config = GenerationConfig(do_sample=True, temperature=0.7, top_k=20, top_p=0.9, min_p=0.05)
    plan = sampling_plan(config)
    assert plan.generation_config.do_sample is False
    assert [type(w) for w in plan.warpers] == [
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
        MinPLogitsWarper,
    ]
    assert config.do_sample is True  # the given config is left alone


@pytest.mark.parametrize(
    "settings",
    [
        {"do_sample": False},
        {"do_sample": True, "typical_p": 0.9},
        {"do_sample": True, "num_beams": 2},
    ],
)
def test_other_settings_keep_transformers_selection(settings) -> None:
    config = GenerationConfig(**settings)
    plan = sampling_plan(config)
    assert plan.warpers is None and plan.generation_config is config


def test_the_models_own_generation_config_fills_unset_fields(
    model_and_tokenizer,  # noqa: F811
    monkeypatch,
) -> None:
    """generate() takes top_k from the model's config when the call leaves it unset (and
    transformers' default, 50, when neither sets it); the plan applies the same top-k."""
    model, _ = model_and_tokenizer
    monkeypatch.setattr(model.generation_config, "top_k", 5)
    plan = sampling_plan(GenerationConfig(do_sample=True, temperature=0.5), model)
    top_k = [w for w in plan.warpers if isinstance(w, TopKLogitsWarper)]
    assert len(top_k) == 1 and top_k[0].top_k == 5
    monkeypatch.setattr(model.generation_config, "top_k", None)
    plan = sampling_plan(GenerationConfig(do_sample=True, temperature=0.5), model)
    assert [w.top_k for w in plan.warpers if isinstance(w, TopKLogitsWarper)] == [50]


def test_the_sampler_leaves_one_token_and_records_the_unwarped_log_probability() -> None:
    torch.manual_seed(0)
    scores = torch.randn(3, 10)
    sampler = TurnSampler(prompt_length=4, temperature=0.5, warpers=[TopKLogitsWarper(top_k=2)])
    chosen = sampler(torch.zeros(3, 4, dtype=torch.long), scores)
    finite = torch.isfinite(chosen)
    assert finite.sum(dim=1).tolist() == [1, 1, 1]
    tokens = chosen.argmax(dim=1)
    top2 = scores.topk(2, dim=1).indices
    assert all(t in row for t, row in zip(tokens.tolist(), top2.tolist(), strict=True))
    sampler.collect(tokens)
    expected = torch.log_softmax(scores / 0.5, dim=-1).gather(1, tokens[:, None])[:, 0]
    torch.testing.assert_close(sampler.steps[0], expected)


def test_top_k_of_one_samples_the_greedy_reply(model_and_tokenizer) -> None:  # noqa: F811
    """The warpers reach the tokens: sampling with top_k=1 is greedy decoding."""
    model, tokenizer = model_and_tokenizer
    prompt = [tokenizer.convert_tokens_to_ids("<|im_start|>"), 30, 31, 32]
    greedy = make_generator(model, tokenizer)
    greedy.generation_config = GenerationConfig(
        do_sample=False, eos_token_id=list(greedy.eos_token_ids), pad_token_id=greedy.pad_token_id
    )
    expected, _ = greedy.generate([prompt, prompt[:3]], 6)
    top1 = make_generator(model, tokenizer, temperature=1.3)
    top1.generation_config.top_k = 1
    torch.manual_seed(1)
    got, logprobs = top1.generate([prompt, prompt[:3]], 6)
    assert got == expected
    assert all(lp <= 0 for row in logprobs for lp in row)
