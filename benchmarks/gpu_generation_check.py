"""GPU check of the transformers generation path and the unmasked training layout (no trl needed).

Runs on a CUDA machine that has torch and transformers but not trl-env's other dependencies: the
modules under test are loaded without ``trl_env/__init__`` (which imports gymnasium). On a small
random Llama model on the GPU, it checks that:

* ``TransformersGenerator`` with ``fast_paths="on"`` (inverse-CDF sampling, reserved KV cache, a
  repeated prompt prefilled once; ``auto`` would turn them off on a GPU) and KV reuse across turns
  records log-probabilities equal to a teacher-forced pass, and greedy decoding gives the same
  tokens with and without KV reuse;
* ``sample_inverse_cdf`` draws the softmax distribution on the GPU;
* rows rotated as the fast path ``unpadded_training`` rotates them (no padding mask, their own
  position ids) give the log-probabilities of the masked forward at every token.

Prints one line per check and, last, one JSON object with ``ok`` and the measured gaps.

Run:
    python benchmarks/gpu_generation_check.py [--device cpu]
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_without_package_init() -> None:
    """Register trl_env, trl_env.trl, trl_env.trl.models and trl_env.trl.fast as bare packages (no
    __init__ run); trl_env.error imports gymnasium only for one base class, stood in for here
    when gymnasium is not installed."""
    try:
        import gymnasium  # noqa: F401
    except ImportError:
        stand_in = types.ModuleType("gymnasium")
        stand_in.error = types.SimpleNamespace(ResetNeeded=type("ResetNeeded", (Exception,), {}))  # type: ignore[attr-defined]
        sys.modules["gymnasium"] = stand_in
    for name, folder in (
        ("trl_env", ROOT / "trl_env"),
        ("trl_env.trl", ROOT / "trl_env" / "trl"),
        ("trl_env.trl.models", ROOT / "trl_env" / "trl" / "models"),
        ("trl_env.trl.fast", ROOT / "trl_env" / "trl" / "fast"),
    ):
        if name not in sys.modules:
            module = types.ModuleType(name)
            module.__path__ = [str(folder)]
            sys.modules[name] = module


def main() -> None:
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    load_without_package_init()
    generation = importlib.import_module("trl_env.trl.models._generation")
    sampling = importlib.import_module("trl_env.trl.fast._inverse_cdf")
    scoring = importlib.import_module("trl_env.trl.fast._unpadded_training")
    device = torch.device(
        sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else "cuda"
    )
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU (or --device cpu)")
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        attn_implementation="sdpa",
    )  # fmt: skip
    model = LlamaForCausalLM(config).to(device).eval()
    model.generation_config.pad_token_id = 0
    results: dict[str, float] = {}

    def generator(sample: bool, reuse: bool):
        settings = {"do_sample": True, "temperature": 0.7, "top_k": 0} if sample else {
            "do_sample": False}  # fmt: skip
        return generation.TransformersGenerator(
            model, pad_token_id=0, eos_token_ids=[1], reuse_kv_cache=reuse,
            generation_config=GenerationConfig(**settings, eos_token_id=[1], pad_token_id=0),
            temperature=0.7 if sample else 1.0, fast_paths="on",
        )  # fmt: skip

    # 1. Sampled log-probabilities against teacher forcing, over 3 turns with a repeated prompt.
    prompt, other = list(range(10, 60)), list(range(100, 130))
    inputs = [prompt, prompt, other, prompt]
    sampled = generator(sample=True, reuse=True)
    worst = 0.0
    for turn in range(3):
        replies, logprobs = sampled.generate(inputs, 12)
        for ids, reply, lps in zip(inputs, replies, logprobs, strict=True):
            if not reply:
                continue
            full = torch.tensor([ids + reply], device=device)
            with torch.no_grad():
                logits = model(full).logits[0, len(ids) - 1 : -1].float() / 0.7
            want = torch.log_softmax(logits, -1).gather(1, full[0, len(ids) :, None])[:, 0]
            worst = max(worst, (want.cpu() - torch.tensor(lps)).abs().max().item())
        inputs = [ids + reply + [200 + turn] for ids, reply in zip(inputs, replies, strict=True)]
    results["sampled_vs_teacher_forced_max_gap"] = worst
    print(f"sampled log-probs vs teacher forcing: max gap {worst:.2e}")
    shared = sampled.prefix_cache

    # 2. Greedy: the same tokens with and without reuse (and the shared-prompt prefill).
    same = True
    plain, reusing = generator(sample=False, reuse=False), generator(sample=False, reuse=True)
    inputs = [prompt, prompt, other]
    for turn in range(3):
        a, _ = plain.generate(inputs, 10)
        b, _ = reusing.generate(inputs, 10)
        same &= a == b
        inputs = [ids + r + [300 + turn] for ids, r in zip(inputs, a, strict=True)]
    results["greedy_same_tokens"] = float(same)
    print(f"greedy tokens equal with and without KV reuse: {same}; "
          f"reused {shared.reused_tokens}, prefilled {shared.prefilled_tokens} tokens (sampled run)")  # fmt: skip

    # 3. Inverse-CDF sampling on the GPU.
    probabilities = torch.tensor([0.1, 0.0, 0.6, 0.3], device=device)
    draws = sampling.sample_inverse_cdf(probabilities.log().expand(200_000, 4))
    frequencies = torch.bincount(draws, minlength=4).float().cpu() / 200_000
    error = (frequencies - probabilities.cpu()).abs().max().item()
    results["inverse_cdf_max_frequency_error"] = error
    print(f"inverse-CDF frequencies {frequencies.tolist()} (max error {error:.4f})")

    # 4. Rows rotated without a padding mask against the masked forward.
    ids = torch.tensor([[0, 0, 0, 5, 6, 7, 8, 9, 10, 0], [11, 12, 13, 14, 15, 16, 17, 18, 0, 0]])
    mask = (ids != 0).long()
    ids, mask = ids.to(device), mask.to(device)
    with torch.no_grad():
        want = torch.log_softmax(model(input_ids=ids, attention_mask=mask).logits.float(), -1)
        leading = scoring._unmasked_layout(mask, position_limit=config.max_position_embeddings)
        positions = leading[:, None] + torch.arange(ids.size(1), device=device)
        rotated = model(input_ids=scoring._rotate(ids, leading), position_ids=positions).logits
        got = torch.log_softmax(rotated.float(), -1)
        got = torch.stack([scoring._rotate(got[..., v], -leading) for v in range(got.size(-1))], -1)
    gap = (got - want)[mask.bool()].abs().max().item()
    results["unmasked_layout_max_gap"] = gap
    print(f"rotated rows without a mask vs the masked forward: max log-prob gap {gap:.2e}")

    ok = worst < 2e-3 and same and error < 0.01 and gap < 1e-3
    name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    print(json.dumps({"ok": ok, "device": name, **results}))


if __name__ == "__main__":
    main()
