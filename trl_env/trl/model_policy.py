"""The model policy: a language model choosing replies over token-exact episodes.

:class:`ModelPolicy` implements :class:`trl_env.policies.Policy` for a whole batch: each call
generates one turn for every episode still playing, in one call of its generation backend. It
builds each episode's token stream (``prompt_ids``, then the sampled ids exactly as sampled, then
each env reply's ids from the processor) in the :class:`~trl_env.episode.Episode` itself, which
is what ``GRPOTrainer`` trains on. The rollout (:func:`trl_env.trl.rollout.play_episodes`) and
``trl-env eval --policy MODEL`` (:func:`play_model`) both play with it through the one play loop,
:func:`trl_env.play.run_episodes`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from trl_env.core import TokenProcessor
from trl_env.episode import Episode
from trl_env.error import Error
from trl_env.policies import Reply, Turn
from trl_env.stepping import EnvOutcome
from trl_env.trl.models import Generator

if TYPE_CHECKING:
    from trl_env.eval import ModelOptions

__all__ = ["ModelPolicy", "load_model_policy", "play_model", "sampling_generator"]


class ModelPolicy:
    """Replies sampled from a model, one batched generation call per turn.

    Args:
        generator: The generation backend.
        processor: Renders prompts and env turns as token ids and parses actions.
        system_prompt: System message of every episode, or ``None``.
        max_completion_length: Token budget of each episode's completion (model and env tokens);
            an episode that runs out ends with ``ended_by="token_budget"``.
        max_new_tokens_per_turn: Tokens one turn may sample (default: the remaining budget).
        always_generate: Call the generator even with no episode to answer (distributed runs:
            every process must make the same number of calls).
    """

    def __init__(
        self,
        generator: Generator,
        processor: TokenProcessor,
        *,
        system_prompt: str | None,
        max_completion_length: int,
        max_new_tokens_per_turn: int | None = None,
        always_generate: bool = False,
    ) -> None:
        self.generator, self.processor = generator, processor
        self.system_prompt = system_prompt
        self.budget = max_completion_length
        self.per_turn = max_new_tokens_per_turn or max_completion_length
        self.always_generate = always_generate
        self._prompts: dict[str, list[int]] = {}  # copies of a task share their first message
        self._inputs: dict[int, list[int]] = {}  # the model's input so far, per episode

    def _extend(self, episode: Episode, ids: list[int], logprobs: list[float] | None) -> None:
        episode.completion_ids += ids
        episode.env_mask += [0 if logprobs is None else 1] * len(ids)
        if logprobs is None:
            episode.logprobs += [0.0] * len(ids)
        else:  # a backend that could not score some tokens gives fewer logprobs
            episode.logprobs += [float(lp) for lp in logprobs[: len(ids)]]
            episode.logprobs += [0.0] * (len(ids) - len(logprobs))
        self._inputs[id(episode)] += ids

    def _start(self, turn: Turn) -> None:
        """The episode's first turn: its prompt (copies of a task share one tokenisation)."""
        episode = turn.episode
        if turn.observation not in self._prompts:
            self._prompts[turn.observation] = self.processor.initial_prompt_ids(
                self.system_prompt, turn.observation
            )
        episode.prompt_ids = self._prompts[turn.observation]
        self._inputs[id(episode)] = list(episode.prompt_ids)

    def observe(self, episode: Episode, outcome: EnvOutcome) -> None:
        """Append the env's reply to the episode's stream, or end the episode when the reply
        leaves no room for the model to answer (``ended_by="token_budget"``)."""
        if episode.done:
            return
        last = episode.completion_ids[-1] if episode.completion_ids else None
        chunk = self.processor.env_turn_ids(outcome.observation, last_token_id=last)
        if len(episode.completion_ids) + len(chunk) >= self.budget:
            episode.ended_by = "token_budget"
            return
        self._extend(episode, chunk, None)

    def act(self, turns: Sequence[Turn]) -> list[str | Reply | None]:
        """Generate one turn for every episode in ``turns`` (one generation call)."""
        if not turns and not self.always_generate:
            return []
        episodes = [turn.episode for turn in turns]
        for turn in turns:
            if id(turn.episode) not in self._inputs:
                self._start(turn)
        max_new = max((min(self.per_turn, self.budget - len(e.completion_ids)) for e in episodes),
                      default=1)  # fmt: skip
        inputs = [self._inputs[id(e)] for e in episodes]
        samples, logprobs = self.generator.generate(inputs, max_new)
        replies: list[str | Reply | None] = []
        for episode, sample, scores in zip(episodes, samples, logprobs, strict=True):
            room = self.budget - len(episode.completion_ids)
            sample = list(sample[:room])
            self._extend(episode, sample, list(scores[:room]))
            text = self.processor.decode(sample)
            reasoning, action = self.processor.parse_agent_output(text)
            stopped = bool(sample) and sample[-1] in self.processor.eos_token_ids
            details = {"text": text, "reasoning": reasoning, "stopped": stopped}
            # Cut mid-turn by the budget: the turn is recorded but its action is not played.
            cut = len(episode.completion_ids) >= self.budget
            replies.append(Reply(action, details, ended_by="token_budget" if cut else None))
        return replies


# --- trl-env eval --policy MODEL ------------------------------------------------------------------


def _load_model(name: str, options: ModelOptions) -> tuple[Any, Any]:
    """The model and tokenizer of ``name``: a Hub id, a model directory, a ``.gguf`` file, a LoRA
    adapter or a ``trl-env train`` run folder (see :mod:`trl_env.trl.models`)."""
    from trl_env.trl.models import load_model_and_tokenizer

    try:
        return load_model_and_tokenizer(name)
    except (OSError, ValueError) as error:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        raise Error(f"could not load model {name!r}: {lines[0] if lines else error!r}") from error


def _transformers_generator(model: Any, tokenizer: Any, processor: Any, temperature: Any) -> Any:
    import torch

    from trl_env.trl.models import TransformersGenerator

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
        # generate() fills unset fields from the model's own config: keep the two the same.
        model.generation_config = config
    pad = tokenizer.pad_token_id
    return TransformersGenerator(
        model,
        pad_token_id=processor.end_of_turn_id if pad is None else pad,
        eos_token_ids=sorted(processor.eos_token_ids),
        generation_config=config,
        temperature=temperature or getattr(config, "temperature", None) or 1.0,
    )


def load_model_policy(name: str, options: ModelOptions) -> tuple[TokenProcessor, Generator]:
    """Load the model ``name`` with its processor and generation backend.

    Raises:
        trl_env.error.Error: The model cannot be loaded, or ``use_vllm`` without a GPU or vllm.
    """
    from trl_env.trl.models import VLLMEngineGenerator
    from trl_env.trl.processors import ChatTemplateProcessor

    if options.use_vllm:
        VLLMEngineGenerator.check_available()  # before spending time on loading the model
    model, tokenizer = _load_model(name, options)
    processor = ChatTemplateProcessor(tokenizer)
    if options.use_vllm:
        del model
        temperature = 1.0 if options.temperature is None else options.temperature
        return processor, VLLMEngineGenerator(name, processor.eos_token_ids, temperature)
    return processor, _transformers_generator(model, tokenizer, processor, options.temperature)


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
    ``batch_size`` at a time, with the training rollout (:func:`trl_env.trl.rollout.play_episodes`).
    """
    from trl_env.episode import Task
    from trl_env.trl.rollout import RolloutConfig, play_episodes

    processor, generator = model
    settings: dict[str, Any] = {
        "max_new_tokens_per_turn": options.max_new_tokens,
        "max_turns": max_turns,
        "log_metrics": False,
    }
    if options.system_prompt is not None:
        settings["system_prompt"] = options.system_prompt or None
    config = RolloutConfig(**settings)
    tasks = [Task(env_id, str(seed), dict(env_kwargs)) for env_id in env_ids for seed in seeds]
    episodes: list[Episode] = []
    for start in range(0, len(tasks), options.batch_size):
        batch = tasks[start : start + options.batch_size]
        episodes += play_episodes(
            batch, generator, processor, config, max_completion_length=options.max_completion_length
        )
        if on_batch is not None:
            on_batch(len(batch))
    return episodes
