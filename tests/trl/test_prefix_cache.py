"""KV-cache reuse across turns (transformers backend): same tokens and log-probs as a full prefill."""

from __future__ import annotations

import random

import pytest
import torch
from transformers import GenerationConfig

from trl_env.trl import TransformersGenerator
from trl_env.trl.models import build_tiny_model, load_model_and_tokenizer
from trl_env.trl.models._prefix_cache import PrefixCache


@pytest.fixture(scope="module")
def model_and_tokenizer(tmp_path_factory):
    path = build_tiny_model(tmp_path_factory.mktemp("tiny-prefix-cache"))
    model, tokenizer = load_model_and_tokenizer(path)
    return model.eval(), tokenizer


def make_generator(model, tokenizer, *, reuse: bool, sample: bool = False) -> TransformersGenerator:
    eos = [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    settings = (
        {"do_sample": True, "temperature": 1.0, "top_k": 0} if sample else {"do_sample": False}
    )
    config = GenerationConfig(**settings, eos_token_id=eos, pad_token_id=tokenizer.pad_token_id)
    return TransformersGenerator(
        model,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_ids=eos,
        generation_config=config,
        reuse_kv_cache=reuse,
    )


def play_turns(generator, *, episodes: int = 6, turns: int = 4, seed: int = 0):
    """Multi-turn streams: each turn appends the reply and an 'env answer'; episodes drop out."""
    rng = random.Random(seed)
    streams = [
        [rng.randrange(10, 500) for _ in range(rng.randrange(15, 60))] for _ in range(episodes)
    ]
    playing = list(range(episodes))
    history = []
    for turn in range(turns):
        if turn >= 2:
            playing = [i for i in playing if i % (turn + 1)]  # some episodes end
        completions, logprobs = generator.generate([streams[i] for i in playing], 10)
        history.append((list(playing), completions, logprobs))
        for i, completion in zip(playing, completions, strict=True):
            streams[i] += completion + [rng.randrange(10, 500) for _ in range(rng.randrange(3, 12))]
    return history, streams


def test_reuse_gives_the_same_tokens_and_logprobs_as_full_prefill(model_and_tokenizer) -> None:
    model, tokenizer = model_and_tokenizer
    plain = make_generator(model, tokenizer, reuse=False)
    reusing = make_generator(model, tokenizer, reuse=True)
    expected, _ = play_turns(plain)
    got, _ = play_turns(reusing)
    assert reusing.prefix_cache.reused_tokens > reusing.prefix_cache.prefilled_tokens
    assert plain.prefix_cache.reused_tokens == 0
    for (rows_a, ids_a, lps_a), (rows_b, ids_b, lps_b) in zip(expected, got, strict=True):
        assert rows_a == rows_b
        assert ids_a == ids_b
        for a, b in zip(lps_a, lps_b, strict=True):
            assert a == pytest.approx(b, abs=1e-4)


def test_reused_logprobs_match_teacher_forcing_of_the_whole_stream(model_and_tokenizer) -> None:
    model, tokenizer = model_and_tokenizer
    torch.manual_seed(0)
    generator = make_generator(model, tokenizer, reuse=True, sample=True)
    first = [[11, 12, 13, 14, 15], [21, 22, 23]]
    completions, _ = generator.generate(first, 6)
    second = [ids + done + [31, 32] for ids, done in zip(first, completions, strict=True)]
    completions, logprobs = generator.generate(second, 6)
    assert generator.prefix_cache.reused_tokens > 0
    for prompt, ids, lps in zip(second, completions, logprobs, strict=True):
        full = torch.tensor([prompt + ids])
        with torch.no_grad():
            logits = model(full).logits[0, len(prompt) - 1 : -1].float()
        forced = torch.log_softmax(logits, -1).gather(1, torch.tensor(ids)[:, None])[:, 0]
        assert lps == pytest.approx(forced.tolist(), abs=1e-4)


def test_rows_match_their_own_prefix_in_any_order(model_and_tokenizer) -> None:
    model, tokenizer = model_and_tokenizer
    generator = make_generator(model, tokenizer, reuse=True)
    plain = make_generator(model, tokenizer, reuse=False)
    first = [[40 + i] * (5 + 3 * i) for i in range(4)]
    completions, _ = generator.generate(first, 4)
    # Reversed, one dropped, one new row without a stored prefix, and one input that is exactly
    # a stored row (its last token must still be fed).
    second = [first[3] + completions[3] + [7], first[1] + completions[1] + [8, 9]]
    second += [list(range(100, 130)), first[0] + completions[0]]
    assert generator.generate(second, 4)[0] == plain.generate(second, 4)[0]


@pytest.mark.parametrize(
    "update",
    ["in place", "fused AdamW step", "AdamW step", "through .data", "another dtype"],
)
def test_a_weight_update_drops_the_stored_states(model_and_tokenizer, update) -> None:
    model, tokenizer = model_and_tokenizer
    generator = make_generator(model, tokenizer, reuse=True)
    prompts = [[5, 6, 7, 8], [9, 10]]
    completions, _ = generator.generate(prompts, 4)
    saved = {name: p.detach().clone() for name, p in model.named_parameters()}
    try:
        if update == "in place":
            with torch.no_grad():
                next(model.parameters()).add_(0.5)
        elif update == "through .data":
            next(model.parameters()).data.add_(0.5)
        elif update == "another dtype":
            model.to(torch.float64)
        else:
            # Fused AdamW does not move the parameters' version counters.
            optimizer = torch.optim.AdamW(
                model.parameters(), lr=1e-2, fused=update.startswith("fused")
            )
            loss = model(torch.tensor([[5, 6, 7, 8]])).logits.float().square().mean()
            loss.backward()
            optimizer.step()
            model.zero_grad(set_to_none=True)
        follow_up = [p + c + [3] for p, c in zip(prompts, completions, strict=True)]
        before = generator.prefix_cache.reused_tokens
        got = generator.generate(follow_up, 4)[0]
        assert generator.prefix_cache.reused_tokens == before
        assert got == make_generator(model, tokenizer, reuse=False).generate(follow_up, 4)[0]
    finally:
        model.to(torch.float32)
        with torch.no_grad():
            for name, parameter in model.named_parameters():
                parameter.copy_(saved[name])


def test_clear_cache_and_unsupported_settings_prefill_everything(model_and_tokenizer) -> None:
    model, tokenizer = model_and_tokenizer
    generator = make_generator(model, tokenizer, reuse=True)
    prompts = [[5, 6, 7, 8, 9, 10]]
    completions, _ = generator.generate(prompts, 3)
    generator.clear_cache()
    generator.generate([prompts[0] + completions[0] + [4]], 3)
    assert generator.prefix_cache.reused_tokens == 0

    # Beam search, static caches and encoder-decoder models are left alone.
    for update in (
        {"num_beams": 2},
        {"cache_implementation": "static"},
        {"cache_implementation": "dynamic"},  # generate refuses a cache together with it
        {"use_cache": False},
        {"repetition_penalty": 1.2},  # reads every input id, padding included
        {"no_repeat_ngram_size": 3},
    ):
        config = GenerationConfig.from_dict({**generator.generation_config.to_dict(), **update})
        assert not PrefixCache.supported(model, config)
    assert PrefixCache.supported(model, generator.generation_config)


# peft reads transformers' deprecated is_gradient_checkpointing (a FutureWarning).
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_a_peft_model_reuses_the_cache_too(tiny_model_dir) -> None:
    peft = pytest.importorskip("peft")
    model, tokenizer = load_model_and_tokenizer(tiny_model_dir)
    config = peft.LoraConfig(r=4, target_modules="all-linear", task_type="CAUSAL_LM")
    lora = peft.get_peft_model(model, config).eval()
    reusing = make_generator(lora, tokenizer, reuse=True)
    expected, _ = play_turns(make_generator(lora, tokenizer, reuse=False), turns=3)
    got, _ = play_turns(reusing, turns=3)
    assert reusing.prefix_cache.reused_tokens > 0
    assert [ids for _, ids, _ in got] == [ids for _, ids, _ in expected]


def test_a_repeated_prompt_is_prefilled_once_with_the_same_tokens(model_and_tokenizer) -> None:
    """A GRPO group's rows share their prompt: the first call prefills each distinct prompt once
    (all but its last token) and every row reuses those states; the replies and log-probs are
    those of a full prefill of every row, over several turns."""
    model, tokenizer = model_and_tokenizer
    prompt, other = list(range(20, 60)), list(range(70, 95))
    inputs = [prompt, prompt, other, prompt]
    plain = make_generator(model, tokenizer, reuse=False)
    sharing = make_generator(model, tokenizer, reuse=True)
    for turn in range(3):
        expected, expected_logprobs = plain.generate(inputs, 6)
        got, logprobs = sharing.generate(inputs, 6)
        assert got == expected
        for row, want in zip(logprobs, expected_logprobs, strict=True):
            assert row == pytest.approx(want, abs=1e-5)
        if turn == 0:  # two prompts prefilled (39 + 24 tokens), every row's last token fed
            assert sharing.prefix_cache.prefilled_tokens == 39 + 24 + 4
            assert sharing.prefix_cache.reused_tokens == 3 * 39 + 24
        inputs = [ids + reply + [100 + turn] for ids, reply in zip(inputs, got, strict=True)]
