"""Format-only warm start: teach a model the reply *format* of an env, not how to play it.

A randomly initialised model (such as the built-in tiny one, see :mod:`trl_env.trl.models`) samples
gibberish: every reply is an invalid action, every reward the same, and GRPO has no signal to
learn from. :func:`warm_start` fixes that with a few hundred steps of supervised fine-tuning on
*format-only* data: the prompts are real first observations of the env, rendered exactly as the
rollout renders them, and each target is a **random** well-formed reply that carries no
information about which reply is right: the env's own ``random_action(rng)`` (one of the shown
numbers for ``TextLargestNumber``, a random answer word in brackets for ``TextWordle``, a random
number of the range for ``TextGuessNumber``, ...), so every env that defines it can be
warm-started.

The model learns to answer in the right format, not which answer is right: its reward after the
warm start is at (or below) chance level, and whatever it gains above chance during RL it learned
from the reward. Add other envs with :func:`register_format_example`.

Example:
    >>> from trl_env.trl.models import load_model_and_tokenizer
    >>> model, tokenizer = load_model_and_tokenizer("/tmp/tiny-qwen3")  # doctest: +SKIP
    >>> stats = warm_start(model, tokenizer, ["TextLargestNumber-v0"], steps=200)  # doctest: +SKIP
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from trl_env._policies import has_random_action, random_action
from trl_env.trl._processors import ChatTemplateProcessor
from trl_env.trl._rollout import DEFAULT_SYSTEM_PROMPT

__all__ = [
    "FormatExample",
    "WarmStartStats",
    "format_example_for",
    "register_format_example",
    "warm_start",
]

FormatExample = Callable[[gym.Env, np.random.Generator], str]
"""``f(env, rng) -> reply``: a random well-formed reply for ``env`` (reset, not yet stepped)."""


# Overrides registered by users (keyed by entry point, so every variant of an env shares one);
# every other env uses its own random_action(rng).
_FORMAT_EXAMPLES: dict[str, FormatExample] = {}


def _own_random_action(env: gym.Env, rng: np.random.Generator) -> str:
    # The env's own uniformly random legal-looking reply: the format of a move, nothing about
    # which move is right (for LargestNumber, one of the numbers shown).
    return random_action(env, {}, rng)


def register_format_example(entry_point_or_id: str, example: FormatExample) -> None:
    """Teach :func:`warm_start` the reply format of another env.

    Args:
        entry_point_or_id: A registered ID (its entry point is used) or an entry point string
            (``"package.module:Class"``).
        example: ``f(env, rng) -> reply``, a random well-formed reply that does not depend on the
            observation (so the warm start teaches the format only).
    """
    key = entry_point_or_id
    if ":" not in key:
        key = str(gym.spec(key).entry_point)
    _FORMAT_EXAMPLES[key] = example


def format_example_for(env_id: str) -> FormatExample:
    """The random-reply function for ``env_id``.

    Raises:
        ValueError: If no reply format is known for the env (the message says how to add one).
    """
    entry_point = str(gym.spec(env_id).entry_point)
    if entry_point in _FORMAT_EXAMPLES:
        return _FORMAT_EXAMPLES[entry_point]
    env = gym.make(env_id)
    try:
        if has_random_action(env):
            return _own_random_action
    finally:
        env.close()
    raise ValueError(
        f"no reply format is known for {env_id} ({entry_point}), so it cannot be "
        "warm-started: its env defines no random_action(rng). Set warm_start_steps=0 "
        "(--warm-start-steps 0), define random_action on the env, or register one with "
        "trl_env.trl._warm_start.register_format_example(env_id, fn)."
    )


@dataclass
class WarmStartStats:
    """What :func:`warm_start` did.

    Attributes:
        steps: Optimizer steps taken.
        first_loss: Mean loss of the first 10 steps.
        last_loss: Mean loss of the last 10 steps.
        seconds: Wall time.
    """

    steps: int
    first_loss: float
    last_loss: float
    seconds: float


def _check_settings(ids: Sequence[str], steps: int, batch_size: int, learning_rate: float) -> None:
    """Fail before any training: no env, a non-positive setting, or an env with no known format."""
    if not ids:
        raise ValueError("env_ids is empty: pass one registered ID or a list of them")
    if steps < 1 or batch_size < 1 or learning_rate <= 0:
        raise ValueError(
            f"steps, batch_size and learning_rate must be positive; got {steps}, {batch_size}, "
            f"{learning_rate}"
        )
    for env_id in dict.fromkeys(ids):
        format_example_for(env_id)


_Example = tuple[list[int], list[int]]  # (prompt token ids, target token ids)


class _FormatExamples:
    """Draws format-only examples: an env's first observation, rendered as the rollout renders it,
    and a random well-formed reply ending the turn. Every choice (the env, its seed, the reply)
    comes from one generator seeded with ``seed``; each env is made once and kept."""

    def __init__(
        self,
        env_ids: Sequence[str],
        processor: ChatTemplateProcessor,
        system_prompt: str | None,
        env_kwargs: dict[str, Any],
        seed: int,
    ) -> None:
        self.env_ids, self.processor = env_ids, processor
        self.system_prompt, self.env_kwargs = system_prompt, env_kwargs
        self.rng = np.random.default_rng(seed)
        self.envs: dict[str, gym.Env] = {}

    def draw(self, count: int) -> list[_Example]:
        """``count`` examples ``(prompt_ids, target_ids)``."""
        rng, tokenizer = self.rng, self.processor.tokenizer
        batch = []
        for _ in range(count):
            env_id = self.env_ids[int(rng.integers(len(self.env_ids)))]
            if env_id not in self.envs:
                self.envs[env_id] = gym.make(env_id, **self.env_kwargs)
            env = self.envs[env_id]
            observation, _ = env.reset(seed=int(rng.integers(2**31 - 1)))
            prompt = self.processor.initial_prompt_ids(self.system_prompt, observation)
            reply = format_example_for(env_id)(env, rng)
            target = tokenizer.encode(reply, add_special_tokens=False)
            batch.append((prompt, target + [self.processor.end_of_turn_id]))
        return batch

    def close(self) -> None:
        """Close the envs made so far."""
        for env in self.envs.values():
            env.close()


def _padded(
    batch: Sequence[_Example], pad_id: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(input_ids, attention_mask, labels)`` of the rows ``prompt + target``, padded on the
    right; the labels are the target tokens, ``-100`` (no loss) everywhere else."""
    width = max(len(p) + len(t) for p, t in batch)
    input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(batch), width), dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    for row, (prompt, target) in enumerate(batch):
        ids_row = prompt + target
        input_ids[row, : len(ids_row)] = torch.tensor(ids_row)
        attention[row, : len(ids_row)] = 1
        labels[row, len(prompt) : len(ids_row)] = torch.tensor(target)
    return input_ids, attention, labels


def _train_step(
    model: Any,
    optimizer: torch.optim.Optimizer,
    batch: Sequence[_Example],
    pad_id: int,
) -> float:
    """One optimizer step on ``batch`` (gradients clipped to norm 1); the step's loss."""
    device = next(model.parameters()).device
    input_ids, attention, labels = _padded(batch, pad_id)
    output = model(
        input_ids=input_ids.to(device),
        attention_mask=attention.to(device),
        labels=labels.to(device),
    )
    optimizer.zero_grad(set_to_none=True)
    output.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return float(output.loss.detach())


def _train(
    model: Any,
    next_batch: Callable[[], list[_Example]],
    steps: int,
    learning_rate: float,
    pad_id: int,
    callback: Callable[[int, float], None] | None,
) -> list[float]:
    """``steps`` AdamW steps, each on ``next_batch()``, in train mode (eval mode after, whatever
    happens); the losses of the steps."""
    trainable = (p for p in model.parameters() if p.requires_grad)
    optimizer = torch.optim.AdamW(trainable, lr=learning_rate, weight_decay=0.0)
    losses: list[float] = []
    model.train()
    try:
        for step in range(1, steps + 1):
            losses.append(_train_step(model, optimizer, next_batch(), pad_id))
            if callback is not None:
                callback(step, losses[-1])
    finally:
        model.eval()
    return losses


def warm_start(
    model: Any,
    tokenizer: Any,
    env_ids: str | Sequence[str],
    *,
    steps: int = 300,
    batch_size: int = 32,
    learning_rate: float = 3e-3,
    seed: int = 0,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    env_kwargs: dict[str, Any] | None = None,
    callback: Callable[[int, float], None] | None = None,
) -> WarmStartStats:
    """Fine-tune ``model`` in place on format-only replies to the envs' first observations.

    Prompts are rendered with :class:`ChatTemplateProcessor` exactly as the rollout renders
    them (same system prompt), and each target is a random well-formed reply followed by the
    template's end-of-turn token; the loss is on the target tokens only.

    Args:
        model: A causal LM (trained in place, left in eval mode).
        tokenizer: Its tokenizer (with a chat template).
        env_ids: One registered ID or several; each needs a known format (see
            :func:`register_format_example`).
        steps: Optimizer steps.
        batch_size: Examples per step.
        learning_rate: AdamW learning rate.
        seed: Seed of the examples (the observations and the random replies).
        system_prompt: System message, as given to the rollout.
        env_kwargs: ``gym.make`` kwargs for every env.
        callback: Called as ``callback(step, loss)`` after every step.

    Returns:
        A :class:`WarmStartStats`.

    Raises:
        ValueError: For an env with no known reply format, or non-positive settings.
    """
    ids = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    _check_settings(ids, steps, batch_size, learning_rate)
    processor = ChatTemplateProcessor(tokenizer)
    examples = _FormatExamples(ids, processor, system_prompt, env_kwargs or {}, seed)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    start = time.perf_counter()
    try:
        next_batch = functools.partial(examples.draw, batch_size)
        losses = _train(model, next_batch, steps, learning_rate, pad_id, callback)
    finally:
        examples.close()
    return WarmStartStats(
        steps=steps,
        first_loss=float(np.mean(losses[:10])),
        last_loss=float(np.mean(losses[-10:])),
        seconds=time.perf_counter() - start,
    )
