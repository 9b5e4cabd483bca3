"""Generation backends for the rollout: one batched call per turn, token ids in, token ids out.

A backend takes the token ids of every episode still playing and returns, for each, the sampled
token ids of the model's next turn and the log-probability of each sampled token. Nothing is
re-rendered from text: the rollout owns the token stream.

* :class:`TransformersGenerator`: ``model.generate`` (``GRPOConfig(use_vllm=False)``), with the
  trainer's sampling settings; also usable on a bare model for evaluation. It reuses each
  episode's KV cache from one turn to the next (``reuse_kv_cache``, see ``_prefix_cache``), so a
  turn does not re-read the whole history. Its ``fast_paths`` argument installs the generation
  fast paths of :mod:`trl_env.trl.fast` inside each call.
* :class:`VLLMGenerator`: ``trainer.vllm_generation`` (vLLM colocate or server mode).
* :class:`VLLMEngineGenerator`: an offline ``vllm.LLM`` engine of its own (evaluation on a GPU).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import torch
from transformers import GenerationConfig, LogitsProcessorList
from transformers.generation.utils import GenerateDecoderOnlyOutput

from trl_env.trl.fast._generation import GenerationFastPaths
from trl_env.trl.fast._switch import FastPaths
from trl_env.trl.models._prefix_cache import PrefixCache, ReuseLayout
from trl_env.trl.models._sampling import TurnSampler

__all__ = [
    "Generator",
    "TransformersGenerator",
    "VLLMEngineGenerator",
    "VLLMGenerator",
    "generator_from_trainer",
]


# transformers 5.24 renamed generate's ``past_key_values`` argument (and output field) to ``cache``.
_CACHE_ARGUMENT = (
    "cache" if "cache" in GenerateDecoderOnlyOutput.__dataclass_fields__ else "past_key_values"
)


@runtime_checkable
class Generator(Protocol):
    """What the rollout needs from a generation backend."""

    def generate(
        self, inputs: Sequence[Sequence[int]], max_new_tokens: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Sample one turn for each input.

        Args:
            inputs: Token ids of each episode so far (prompt, then the completion so far).
            max_new_tokens: Upper bound on the tokens sampled for each input.

        Returns:
            ``(completion_ids, logprobs)``: per input, the sampled ids (ending with an EOS id if the
            model stopped by itself, and never containing anything after it) and one log-probability
            per sampled id.
        """
        ...


def trainer_model_for_generation(
    trainer: Any, generation_kwargs: dict[str, Any] | None = None
) -> Callable[[], contextlib.AbstractContextManager[Any]]:
    """A context manager factory yielding the trainer's model ready to generate, unwrapped as TRL
    unwraps it (DDP/FSDP/DeepSpeed, gradient checkpointing off; ``generation_kwargs`` set on the
    model's generation config while inside)."""
    from trl.models import unwrap_model_for_generation

    @contextlib.contextmanager
    def unwrapped() -> Iterator[Any]:
        with (
            unwrap_model_for_generation(
                trainer.model_wrapped,
                trainer.accelerator,
                gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
                generation_kwargs=generation_kwargs,
                gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs,
            ) as model,
            trainer._dist.summon_full_params(trainer.model_wrapped, recurse=False),
        ):
            yield model

    return unwrapped


@dataclass
class _Call:
    """One ``generate`` call, laid out: what :meth:`TransformersGenerator.generate` runs."""

    layout: ReuseLayout
    config: GenerationConfig
    cache: Any
    reuse: bool
    recorder: TurnSampler
    active: FastPaths


class TransformersGenerator:
    """Batched turn generation with ``transformers``' ``generate``.

    Args:
        model: A causal LM (unwrapped), or a callable returning a context manager that yields one
            (how the trainer unwraps DDP/FSDP/DeepSpeed models for generation).
        pad_token_id: Id used to left-pad the batch.
        eos_token_ids: Ids that end a model turn.
        generation_config: Sampling settings; ``max_new_tokens`` is set per call.
        temperature: Temperature used for the returned log-probabilities (the sampling one).
        reuse_kv_cache: Keep each call's key/value states and, in the next call, feed only the
            tokens after a row's stored prefix (the previous turn's input and reply) instead of
            re-reading the whole history. Off: every call prefills everything. The states of the
            last call stay in memory until :meth:`clear_cache` or the next call.
        autocast: A callable returning the context manager every ``generate`` call runs in (the
            trainer's ``accelerator.autocast``: with ``bf16=True`` generation then runs under
            the same bfloat16 autocast as TRL's training forward). Accelerate already wraps a
            prepared model's ``forward`` in it, but a PEFT model's ``generate`` calls the base
            model's own ``forward``, so without this LoRA runs sampled in float32. ``None``: no
            autocast.
        fast_paths: The generation fast paths (:mod:`trl_env.trl.fast`): ``"auto"`` (every one
            on a CPU, none on a GPU or MPS: ``generate`` as ``transformers`` runs it), ``"on"``,
            ``"off"``, layer names, or a :class:`~trl_env.trl.fast.FastPaths`. They exist only
            inside a ``generate`` call.
    """

    def __init__(
        self,
        model: Any,
        *,
        pad_token_id: int,
        eos_token_ids: Sequence[int],
        generation_config: GenerationConfig,
        temperature: float = 1.0,
        reuse_kv_cache: bool = True,
        autocast: Callable[[], contextlib.AbstractContextManager[Any]] | None = None,
        fast_paths: str | FastPaths | None = "auto",
    ) -> None:
        self._model = model
        self._autocast = autocast or contextlib.nullcontext
        self.pad_token_id = pad_token_id
        self.eos_token_ids = frozenset(int(i) for i in eos_token_ids)
        self.generation_config = generation_config
        self.temperature = temperature
        self.reuse_kv_cache = reuse_kv_cache
        self.prefix_cache = PrefixCache()
        self.fast = GenerationFastPaths(fast_paths)

    @property
    def fast_paths(self) -> str | FastPaths | None:
        """The fast-paths setting this generator was made with."""
        return self.fast.setting

    @property
    def frozen_bf16(self) -> Any:
        """The bfloat16 copies of the fast path ``frozen_bf16`` (a ``FrozenBF16Weights``)."""
        return self.fast.frozen_bf16

    @frozen_bf16.setter
    def frozen_bf16(self, weights: Any) -> None:
        self.fast.frozen_bf16 = weights

    def clear_cache(self) -> None:
        """Free the key/value states kept for the next call (see ``reuse_kv_cache``) and the
        fast paths' weight copies (``frozen_bf16``'s bfloat16 ones, ``merged_lora``'s float32
        ones; call it after changing weights through ``.data``)."""
        self.prefix_cache.clear()
        self.fast.clear()

    @classmethod
    def from_trainer(cls, trainer: Any) -> TransformersGenerator:
        """The generator ``GRPOTrainer`` itself would use (same model unwrapping and sampling),
        with the trainer's fast paths (``"auto"`` for a trainer without them)."""
        unwrapped = trainer_model_for_generation(trainer, trainer.generation_kwargs)
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        return cls(
            unwrapped,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_ids=trainer.eos_token_ids,
            generation_config=trainer.generation_config,
            temperature=trainer.temperature,
            autocast=trainer.accelerator.autocast,
            fast_paths=getattr(trainer, "fast_paths", "auto"),
        )

    @classmethod
    def for_model(
        cls,
        model: Any,
        *,
        pad_token_id: int,
        eos_token_ids: Iterable[int],
        temperature: float | None = None,
        fast_paths: str | FastPaths | None = "auto",
    ) -> TransformersGenerator:
        """A generator that plays ``model`` outside training (``trl-env eval``, a ``ModelPolicy``).

        The model moves to the GPU when there is one and to eval mode. ``temperature`` 0 is greedy,
        another value samples at it, ``None`` keeps the model's own generation config; the model's
        ``generation_config`` is updated to match, because ``generate()`` fills unset fields
        from it and the two must agree.
        """
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = model.to(device).eval()
        config = model.generation_config
        updates: dict[str, Any] = {}
        if temperature == 0:
            updates = {"do_sample": False, "temperature": None, "top_p": None, "top_k": None}
        elif temperature is not None:
            updates = {"do_sample": True, "temperature": temperature}
        if updates:
            config = type(config).from_dict({**config.to_dict(), **updates})
            model.generation_config = config
        return cls(
            model,
            pad_token_id=pad_token_id,
            eos_token_ids=sorted(eos_token_ids),
            generation_config=config,
            temperature=temperature or getattr(config, "temperature", None) or 1.0,
            fast_paths=fast_paths,
        )

    @contextlib.contextmanager
    def _model_context(self) -> Iterator[Any]:
        if callable(self._model) and not isinstance(self._model, torch.nn.Module):
            with self._model() as model:
                yield model
        else:
            yield self._model

    def generate(
        self, inputs: Sequence[Sequence[int]], max_new_tokens: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Sample one turn for every input in one ``generate`` call (see :class:`Generator`)."""
        with self._model_context() as model, torch.no_grad(), self._autocast():
            if not inputs:
                # Entering the context still matters in distributed runs (sharded weights are
                # gathered there), so a process with nothing to generate still takes part.
                return [], []
            call = self._prepare(model, inputs, max_new_tokens)
            output = self._run(model, call)
            sequences = output.sequences if hasattr(output, "sequences") else output
            completions, logprobs = self._completions(
                sequences[:, call.layout.input_ids.shape[1] :].cpu(), call.recorder, len(inputs)
            )
            if call.reuse:
                # Inside the model context: sharded weights are still gathered here.
                states = getattr(output, "cache", None)
                if states is None:
                    states = getattr(output, "past_key_values", None)
                self.prefix_cache.remember(inputs, completions, call.layout, states)
        return completions, logprobs

    def _prepare(self, model: Any, inputs: Sequence[Sequence[int]], max_new_tokens: int) -> _Call:
        """The call's settings, fast paths, row layout (reusing stored states) and sampler."""
        config = GenerationConfig.from_dict(
            {**self.generation_config.to_dict(), "max_new_tokens": max_new_tokens}
        )
        active = self.fast.active(model)
        reuse = self.reuse_kv_cache and PrefixCache.supported(model, config)
        if reuse:
            config.return_dict_in_generate = True  # to get the cache back
            self.fast.share_prompt(self.prefix_cache, model, inputs, self.pad_token_id, active)
        else:
            self.prefix_cache.clear()
        new_cache = self.fast.cache_factory(active)
        layout = self.prefix_cache.layout(
            model,
            inputs,
            self.pad_token_id,
            reuse=reuse,
            max_new_tokens=max_new_tokens,
            new_cache=new_cache,
        )
        width = layout.input_ids.shape[1]
        cache = layout.cache
        if reuse and cache is None:  # a reserved cache: room for the whole call up front
            cache = new_cache(width + max_new_tokens, None)
        plan = self.fast.sampling(config, model, active)
        recorder = TurnSampler(width, self.temperature, plan.warpers)
        return _Call(layout, plan.generation_config, cache, reuse, recorder, active)

    def _run(self, model: Any, call: _Call) -> Any:
        """``model.generate`` on the call's layout, with the fast paths' weights."""
        device = next(model.parameters()).device
        cache_kwargs = {_CACHE_ARGUMENT: call.cache} if call.cache is not None else {}
        with self.fast.weights(model, call.active):
            return model.generate(
                input_ids=call.layout.input_ids.to(device),
                attention_mask=call.layout.attention_mask.to(device),
                generation_config=call.config,
                logits_processor=LogitsProcessorList([call.recorder]),
                **cache_kwargs,
            )

    def _completions(
        self, sampled: torch.Tensor, recorder: TurnSampler, rows: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Each row's sampled ids up to and including its first EOS, and their log-probs."""
        if sampled.shape[1]:
            recorder.collect(sampled[:, -1])  # the last sampled token's
        logprobs = torch.stack(recorder.steps, dim=1).cpu() if recorder.steps else None
        completions: list[list[int]] = []
        completion_logprobs: list[list[float]] = []
        for row in range(rows):
            ids = sampled[row].tolist()
            end = next((i + 1 for i, t in enumerate(ids) if t in self.eos_token_ids), len(ids))
            completions.append(ids[:end])
            completion_logprobs.append(logprobs[row, :end].tolist() if logprobs is not None else [])
        return completions, completion_logprobs


class VLLMGenerator:
    """Batched turn generation through ``trainer.vllm_generation`` (colocate or server mode).

    ``vllm_generation.generate`` reads its per-call token limit from ``max_completion_length``; it is
    set to the turn's budget for the duration of the call and restored afterwards. Prompts are sent
    with ``num_generations=1``: in server mode TRL de-duplicates by ``num_generations``, and the
    rollout already holds one entry per episode.
    """

    def __init__(self, vllm_generation: Any, *, eos_token_ids: Sequence[int]) -> None:
        self.vllm_generation = vllm_generation
        self.eos_token_ids = frozenset(int(i) for i in eos_token_ids)

    @classmethod
    def from_trainer(cls, trainer: Any) -> VLLMGenerator:
        """The trainer's vLLM backend (requires ``GRPOConfig(use_vllm=True)``)."""
        return cls(trainer.vllm_generation, eos_token_ids=trainer.eos_token_ids)

    def generate(
        self, inputs: Sequence[Sequence[int]], max_new_tokens: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Sample one turn for every input (see :class:`Generator`)."""
        backend = self.vllm_generation
        previous_limit = backend.max_completion_length
        backend.max_completion_length = max_new_tokens
        try:
            _, completion_ids, logprobs, _ = backend.generate(
                prompts=[list(ids) for ids in inputs], images=None, num_generations=1
            )
        finally:
            backend.max_completion_length = previous_limit
        completions, completion_logprobs = [], []
        for ids, token_logprobs in zip(completion_ids, logprobs, strict=True):
            ids = list(ids)
            end = next((i + 1 for i, t in enumerate(ids) if t in self.eos_token_ids), len(ids))
            # vLLM gives top-k lists per token with the sampled token first; None means unscored.
            values = [_first_logprob(lp) for lp in token_logprobs[:end]]
            completions.append(ids[:end])
            completion_logprobs.append(values)
        return completions, completion_logprobs


class VLLMEngineGenerator:
    """Batched turns from an offline ``vllm.LLM`` engine (for evaluation; needs a CUDA GPU).

    The model is named as anywhere else in trl-env (a ``.gguf`` file or a run folder resolves to
    its model directory first; a LoRA adapter must be merged into a model directory first).
    """

    def __init__(self, model: str, eos_token_ids: Iterable[int], temperature: float) -> None:
        self.check_available()
        from vllm import LLM

        from trl_env.trl.models._loading import resolve_model_path

        self.llm = LLM(model=resolve_model_path(model))
        self.eos_token_ids = sorted(int(i) for i in eos_token_ids)
        self.temperature = temperature

    @staticmethod
    def check_available() -> None:
        """Raise a clear :class:`trl_env.error.Error` unless a CUDA GPU and vllm are present."""
        import torch

        from trl_env.error import Error

        if not torch.cuda.is_available():
            raise Error(
                "--use-vllm needs a CUDA GPU and none is available (torch.cuda.is_available() "
                "is False); drop --use-vllm to generate with transformers instead"
            )
        try:
            import vllm  # noqa: F401
        except ImportError:
            raise Error("--use-vllm needs the vllm package: pip install vllm") from None

    def generate(
        self, inputs: Sequence[Sequence[int]], max_new_tokens: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        """Sample one turn for every input (see :class:`Generator`)."""
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


def _first_logprob(value: Any) -> float:
    if isinstance(value, list | tuple):
        value = value[0] if value else None
    return float("nan") if value is None else float(value)


def generator_from_trainer(trainer: Any) -> Generator:
    """Pick the backend the trainer is configured for (``use_vllm`` or not)."""
    if getattr(trainer, "use_vllm", False):
        return VLLMGenerator.from_trainer(trainer)
    return TransformersGenerator.from_trainer(trainer)


GeneratorFactory = Callable[[Any], Generator]
