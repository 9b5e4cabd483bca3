"""The transformers backend: sampled ids and their log-probabilities, on a real (tiny) model."""

from __future__ import annotations

import pytest
import torch
from transformers import GenerationConfig

from trl_env.trl import TransformersGenerator
from trl_env.trl.models import build_tiny_model, load_model_and_tokenizer


@pytest.fixture(scope="module")
def model_and_tokenizer(tmp_path_factory):
    path = build_tiny_model(tmp_path_factory.mktemp("tiny-generation"))
    model, tokenizer = load_model_and_tokenizer(path)
    return model.eval(), tokenizer


def make_generator(
    model, tokenizer, temperature: float = 0.7, autocast=None, fast_paths="auto"
) -> TransformersGenerator:
    eos = [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    config = GenerationConfig(
        do_sample=True,
        temperature=temperature,
        top_k=0,
        top_p=1.0,
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
    )
    return TransformersGenerator(
        model,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_ids=eos,
        generation_config=config,
        temperature=temperature,
        autocast=autocast,
        fast_paths=fast_paths,
    )


def teacher_forced_logprobs(model, prompt: list[int], completion: list[int], temperature: float):
    ids = torch.tensor([prompt + completion])
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1 : -1].float() / temperature
    logprobs = torch.log_softmax(logits, dim=-1)
    return logprobs.gather(1, torch.tensor(completion).unsqueeze(1)).squeeze(1).tolist()


def test_sampled_logprobs_match_teacher_forcing(model_and_tokenizer) -> None:
    model, tokenizer = model_and_tokenizer
    torch.manual_seed(0)
    generator = make_generator(model, tokenizer)
    # Different lengths: the batch is left-padded, which must not change anything.
    prompts = [
        tokenizer.encode("<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"),
        tokenizer.encode(
            "<|im_start|>user\na much longer opening message here<|im_end|>\n<|im_start|>assistant\n"
        ),
    ]
    completions, logprobs = generator.generate(prompts, max_new_tokens=12)
    assert len(completions) == 2
    for prompt, ids, lps in zip(prompts, completions, logprobs, strict=True):
        assert 1 <= len(ids) <= 12 and len(lps) == len(ids)
        eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
        assert eos not in ids[:-1]  # nothing after an EOS
        expected = teacher_forced_logprobs(model, prompt, ids, 0.7)
        assert lps == pytest.approx(expected, abs=1e-4)


def test_empty_batch_and_generation_config_untouched(model_and_tokenizer) -> None:
    model, tokenizer = model_and_tokenizer
    generator = make_generator(model, tokenizer)
    assert generator.generate([], 5) == ([], [])
    generator.generate([tokenizer.encode("hi")], 3)
    assert generator.generation_config.max_new_tokens != 3  # per-call limit is not sticky


def test_for_model_sets_device_mode_and_sampling_once(model_and_tokenizer) -> None:
    """Playing a model outside training: the generator owns device placement and the
    generation config (greedy at temperature 0, the model's own config at None)."""
    model, tokenizer = model_and_tokenizer
    model.train()
    greedy = TransformersGenerator.for_model(
        model, pad_token_id=tokenizer.pad_token_id, eos_token_ids={3, 1}, temperature=0
    )
    assert not model.training
    assert greedy.generation_config.do_sample is False
    assert model.generation_config.do_sample is False  # generate() reads the model's config too
    assert greedy.eos_token_ids == frozenset({1, 3}) and greedy.temperature == 1.0
    sampled = TransformersGenerator.for_model(
        model, pad_token_id=tokenizer.pad_token_id, eos_token_ids=[1], temperature=0.5
    )
    assert sampled.generation_config.do_sample is True and sampled.temperature == 0.5
    prompt = tokenizer("hello", add_special_tokens=False)["input_ids"]
    first, _ = greedy.generate([prompt], max_new_tokens=4)
    again, _ = greedy.generate([prompt], max_new_tokens=4)
    assert first == again  # greedy is deterministic


def test_generation_runs_under_the_given_autocast(model_and_tokenizer) -> None:
    """``autocast`` (the trainer's ``accelerator.autocast`` in training) wraps every generate
    call: with bf16 on the CPU the model computes in bfloat16, and the recorded log-probs are
    those of the bfloat16 forward (teacher forcing under the same autocast gives them back)."""
    model, tokenizer = model_and_tokenizer
    entered: list[torch.dtype | None] = []

    class Bf16Autocast(torch.autocast):
        def __enter__(self):
            entered.append(self.fast_dtype)
            return super().__enter__()

    generator = make_generator(
        model, tokenizer, autocast=lambda: Bf16Autocast("cpu", dtype=torch.bfloat16)
    )
    dtypes: list[torch.dtype] = []
    hook = model.lm_head.register_forward_hook(lambda m, i, out: dtypes.append(out.dtype))
    try:
        torch.manual_seed(0)
        prompt = tokenizer.encode("<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n")
        (ids,), (lps,) = generator.generate([prompt], max_new_tokens=6)
    finally:
        hook.remove()
    assert entered == [torch.bfloat16]
    assert dtypes and all(d == torch.bfloat16 for d in dtypes)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        expected = teacher_forced_logprobs(model, prompt, ids, 0.7)
    assert lps == pytest.approx(expected, abs=0.05)  # bf16 rounding of two different batchings


def test_from_trainer_takes_the_trainers_autocast(model_and_tokenizer) -> None:
    """The generator GRPOTrainer's rollout uses runs in the trainer's mixed-precision context."""
    from types import SimpleNamespace

    _, tokenizer = model_and_tokenizer
    autocast = object()
    trainer = SimpleNamespace(
        generation_kwargs={},
        processing_class=tokenizer,
        eos_token_ids=[tokenizer.convert_tokens_to_ids("<|im_end|>")],
        generation_config=GenerationConfig(do_sample=True),
        temperature=1.0,
        accelerator=SimpleNamespace(autocast=autocast),
    )
    assert TransformersGenerator.from_trainer(trainer)._autocast is autocast
