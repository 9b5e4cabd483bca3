"""Generation with an offline ``vllm.LLM`` engine for ``trl-env eval --use-vllm``.

Kept apart on purpose: at the merge it moves next to the other generation backends (the module
that loads and runs models); nothing else here depends on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from trl_env.error import Error

__all__: list[str] = []


def check_vllm() -> None:
    import torch

    if not torch.cuda.is_available():
        raise Error(
            "--use-vllm needs a CUDA GPU and none is available (torch.cuda.is_available() is "
            "False); drop --use-vllm to generate with transformers instead"
        )
    try:
        import vllm  # noqa: F401
    except ImportError:
        raise Error("--use-vllm needs the vllm package: pip install vllm") from None


class VLLMEngineGenerator:
    """Batched turns from an offline ``vllm.LLM`` (the rollout's ``Generator`` protocol)."""

    def __init__(self, model: str, eos_token_ids: Iterable[int], temperature: float) -> None:
        from vllm import LLM

        self.llm = LLM(model=model)
        self.eos_token_ids = sorted(int(i) for i in eos_token_ids)
        self.temperature = temperature

    def generate(
        self, inputs: Sequence[Sequence[int]], max_new_tokens: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        if not inputs:
            return [], []
        params = SamplingParams(
            max_tokens=max_new_tokens,
            temperature=self.temperature,
            logprobs=0,
            stop_token_ids=self.eos_token_ids,
        )
        outputs = self.llm.generate(
            [TokensPrompt(prompt_token_ids=list(ids)) for ids in inputs], params, use_tqdm=False
        )
        completions, logprobs = [], []
        for output in outputs:
            sample = output.outputs[0]
            ids = list(sample.token_ids)
            completions.append(ids)
            steps = sample.logprobs or []  # one {token id: Logprob} dict per sampled token
            logprobs.append(
                [float(step[token].logprob) for step, token in zip(steps, ids, strict=False)]
            )
        return completions, logprobs
