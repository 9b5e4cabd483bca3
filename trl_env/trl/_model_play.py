"""A model as a policy of ``trl-env eval --policy MODEL``: load it, set how it generates, and
play episodes with it through the training rollout (:func:`trl_env.trl._model_episodes.play_episodes`).

:class:`~trl_env.trl._model_policy.ModelPolicy` is the policy itself; this module loads and plays.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from trl_env._episode import Episode
from trl_env._model_options import ModelOptions
from trl_env.error import Error
from trl_env.protocol import TokenProcessor
from trl_env.trl._model_policy import ModelPolicy
from trl_env.trl.models import Generator

__all__ = ["load_model_policy", "model_policy", "play_model", "sampling_generator"]


def _load_model(name: str, options: ModelOptions) -> tuple[Any, Any]:
    """The model and tokenizer of ``name``: a Hub id, a model directory, a ``.gguf`` file, a LoRA
    adapter or a ``trl-env train`` run folder (see :mod:`trl_env.trl.models`)."""
    from trl_env.trl.models import load_model_and_tokenizer

    try:
        # A .gguf file is converted once (seconds to a minute): say so, as `train` does.
        return load_model_and_tokenizer(name, log=lambda line: print(line, file=sys.stderr))
    except (OSError, ValueError) as error:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        raise Error(f"could not load model {name!r}: {lines[0] if lines else error!r}") from error


def _transformers_generator(
    model: Any, tokenizer: Any, processor: Any, options: ModelOptions
) -> Any:
    from trl_env.trl.models import TransformersGenerator

    pad = tokenizer.pad_token_id
    return TransformersGenerator.for_model(
        model,
        pad_token_id=processor.end_of_turn_id if pad is None else pad,
        eos_token_ids=processor.eos_token_ids,
        temperature=options.temperature,
        fast_paths=options.fast_paths,
    )


def load_model_policy(name: str, options: ModelOptions) -> tuple[TokenProcessor, Generator]:
    """Load the model ``name`` with its processor and generation backend.

    Raises:
        trl_env.error.Error: The model cannot be loaded, or ``use_vllm`` without a GPU or vllm.
    """
    from trl_env.trl._processors import ChatTemplateProcessor
    from trl_env.trl.models import VLLMEngineGenerator

    if options.use_vllm:
        VLLMEngineGenerator.check_available()  # before spending time on loading the model
    model, tokenizer = _load_model(name, options)
    processor = ChatTemplateProcessor(tokenizer)
    if options.use_vllm:
        del model
        temperature = 1.0 if options.temperature is None else options.temperature
        return processor, VLLMEngineGenerator(name, processor.eos_token_ids, temperature)
    return processor, _transformers_generator(model, tokenizer, processor, options)


def model_policy(
    name: str,
    options: ModelOptions | None = None,
    *,
    temperature: float | None = 0.0,
    model: tuple[TokenProcessor, Generator] | None = None,
) -> ModelPolicy:
    """A model as a :class:`~trl_env._policies.Policy` object: an env's ``opponent=``, a seat of a
    head-to-head eval (``trl-env eval --opponent MODEL``), or any caller of ``act(turns)``.

    It is loaded the way ``trl-env eval --policy MODEL`` loads one (a model directory, a Hub id,
    a ``.gguf`` file, a LoRA adapter or a ``trl-env train``/``sft`` run folder, whose system
    prompt and token limits it takes unless ``options`` gives them) and plays **greedily**
    unless ``temperature`` says otherwise.

    Args:
        name: The model.
        options: Token limits, system prompt, ``use_vllm`` (default :class:`ModelOptions`).
        temperature: Sampling temperature; 0 is greedy; ``None`` keeps the model's generation
            config (``options.temperature`` is not used).
        model: An already loaded ``(processor, generator)`` (from :func:`load_model_policy`) to
            play with instead of loading ``name`` again.

    Example:
        >>> import gymnasium as gym  # doctest: +SKIP
        >>> from trl_env.trl import model_policy  # doctest: +SKIP
        >>> env = gym.make("TextTicTacToe-v0", opponent=model_policy("runs/ttt"))  # doctest: +SKIP
    """
    options = _replace(_with_run_settings(name, options or ModelOptions()), temperature=temperature)
    processor, generator = model if model is not None else load_model_policy(name, options)
    if options.system_prompt is None:
        from trl_env._demos import DEFAULT_SYSTEM_PROMPT

        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT
    else:
        system_prompt = options.system_prompt or None
    return ModelPolicy(
        generator,
        processor,
        system_prompt=system_prompt,
        max_completion_length=options.max_completion_length,
        max_new_tokens_per_turn=options.max_new_tokens_per_turn,
    )


def _with_run_settings(name: str, options: ModelOptions) -> ModelOptions:
    """``options`` with the system prompt and token limits of the run ``name`` is a folder of
    (those ``options`` leaves at their defaults)."""
    import os

    from trl_env.trl.models import run_config

    run = run_config(name) if os.path.isdir(name) else None
    if not run:
        return options
    defaults, changes = ModelOptions(), {}
    for field in ("max_new_tokens_per_turn", "max_completion_length", "system_prompt"):
        value = run.get(field)
        if value is not None and getattr(options, field) == getattr(defaults, field):
            changes[field] = value
    if options.system_prompt is None and "system_prompt" not in changes:
        changes["system_prompt"] = ""  # the run trained without one
    return _replace(options, **changes)


def _replace(options: ModelOptions, **changes: Any) -> ModelOptions:
    """A copy of ``options`` with ``changes`` (``dataclasses.replace`` would read the deprecated
    ``max_new_tokens`` and warn)."""
    import dataclasses

    fields = {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}
    return ModelOptions(**{**fields, **changes})


def sampling_generator(generator: Generator, temperature: float) -> Generator:
    """A generator that samples at ``temperature`` from the model ``generator`` already holds.

    Nothing is loaded again: a :class:`~trl_env.trl.models.TransformersGenerator` gets a twin on
    the same model (its generation config with ``do_sample=True`` and ``temperature``, a key/value
    cache of its own), a :class:`~trl_env.trl.models.VLLMEngineGenerator` a copy on the same
    engine. ``generator`` itself is left as it was, so the two can take turns. This is how
    ``trl-env eval --samples K`` plays its sampled episodes after the main (often greedy) ones.

    Args:
        generator: A generator from :func:`load_model_policy` (or any ``TransformersGenerator``).
        temperature: The sampling temperature, above 0.

    Raises:
        trl_env.error.UsageError: ``temperature`` is not above 0.
        trl_env.error.Error: ``generator`` is a backend whose temperature is not set here (the
            trainer's vLLM, whose sampling settings are the trainer's).
    """
    from trl_env.error import UsageError
    from trl_env.trl.models import TransformersGenerator, VLLMEngineGenerator

    if not 0 < temperature < float("inf"):
        raise UsageError(
            f"the sampling temperature must be a finite number above 0, got {temperature}; use 1.0 to sample from "
            "the model's own distribution"
        )
    if isinstance(generator, TransformersGenerator):
        config = generator.generation_config
        config = type(config).from_dict(
            {**config.to_dict(), "do_sample": True, "temperature": temperature}
        )
        return TransformersGenerator(
            generator._model,
            pad_token_id=generator.pad_token_id,
            eos_token_ids=sorted(generator.eos_token_ids),
            generation_config=config,
            temperature=temperature,
            reuse_kv_cache=generator.reuse_kv_cache,
            fast_paths=generator.fast_paths,
        )
    if isinstance(generator, VLLMEngineGenerator):
        sampler = copy.copy(generator)  # the same engine
        sampler.temperature = temperature
        return sampler
    raise Error(
        f"cannot make a sampling twin of a {type(generator).__name__}: only a "
        "TransformersGenerator or a VLLMEngineGenerator (trl-env eval's backends) can sample at "
        "another temperature"
    )


def play_model(
    model: tuple[TokenProcessor, Generator],
    env_ids: Sequence[str],
    seeds: Sequence[int],
    options: ModelOptions,
    *,
    env_kwargs: Mapping[str, Any],
    max_turns: int | None,
    on_batch: Callable[[int], None] | None = None,
) -> list[Episode]:
    """Play every (env, seed) episode with a model from :func:`load_model_policy`,
    ``batch_size`` at a time, with the training rollout (:func:`trl_env.trl._model_episodes.play_episodes`).
    """
    from trl_env._episode import Task
    from trl_env.trl._model_episodes import play_episodes
    from trl_env.trl._rollout_config import RolloutConfig

    processor, generator = model
    settings: dict[str, Any] = {
        "max_new_tokens_per_turn": options.max_new_tokens_per_turn,
        "max_turns": max_turns,
        "log_metrics": False,
    }
    if options.system_prompt is not None:
        settings["system_prompt"] = options.system_prompt or None
    config = RolloutConfig(**settings)
    tasks = [Task(env_id, seed, dict(env_kwargs)) for env_id in env_ids for seed in seeds]
    episodes: list[Episode] = []
    for start in range(0, len(tasks), options.batch_size):
        batch = tasks[start : start + options.batch_size]
        episodes += play_episodes(
            batch, generator, processor, config, max_completion_length=options.max_completion_length
        )
        if on_batch is not None:
            on_batch(len(batch))
    return episodes
