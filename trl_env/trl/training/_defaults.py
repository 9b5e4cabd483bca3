"""The defaults of a ``trl-env train`` run, by model kind (the built-in tiny model or a real
one) and machine (a CUDA GPU or a CPU): what :meth:`TrainConfig.resolved
<trl_env.trl.training.TrainConfig.resolved>` fills in for the fields left at ``None``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trl_env._configs import MAX_NEW_TOKENS_PER_TURN
from trl_env._demos import DEFAULT_SYSTEM_PROMPT
from trl_env.trl.training._passes import CPU_MICRO_BATCH

__all__ = ["SHAPED_PARTIAL_CREDIT", "multi_turn_defaults", "run_defaults", "with_partial_credit"]

_TINY_DEFAULTS: dict[str, Any] = {
    "learning_rate": 1e-3,
    "per_device_train_batch_size": 64,
    "max_completion_length": 16,
    "max_new_tokens_per_turn": 8,
    "warm_start_steps": 600,
    "max_steps": 400,
    # A 2-layer model reads a prompt as little more than a bag of tokens: a long fixed system
    # message only dilutes the few tokens that matter (and slows every step).
    "system_prompt": None,
}
"""Settings of the built-in tiny model (no ``--model``), tuned on TextLargestNumber-v0 on a
2-core CPU (see ``docs/learning.md``)."""

_MODEL_DEFAULTS: dict[str, Any] = {
    "learning_rate": 1e-6,
    "per_device_train_batch_size": 8,
    "max_completion_length": 1024,
    "max_new_tokens_per_turn": MAX_NEW_TOKENS_PER_TURN,
    "warm_start_steps": 0,
    "max_steps": 500,
    "system_prompt": DEFAULT_SYSTEM_PROMPT,
}
"""Settings of a real model (``--model``): TRL's GRPO learning rate, room for reasoning."""

_CPU_MODEL_DEFAULTS: dict[str, Any] = {
    "max_completion_length": 256,
    "max_new_tokens_per_turn": 32,
    "max_steps": 100,
}
"""A real model without a GPU: a run that ends in about an hour (``benchmarks/grpo_step_profile.py``;
at 256 tokens per turn, 1024 per episode, 500 steps SmolLM2-135M took ~17 hours on 2 cores).
Short replies, the format every catalogue env asks for, fit in 32 tokens."""

_LORA_LEARNING_RATE = 1e-5
_CPU_LORA_LEARNING_RATE = 2e-4
"""LoRA on a CPU: the learning rate of the recipe that learned (docs/real_models.md); with few
steps, 1e-5 barely moves the adapters."""


_MULTI_TURN_CPU_DEFAULTS: dict[str, Any] = {
    "per_device_train_batch_size": 16,
    "max_new_tokens_per_turn": 16,
    "epsilon_high": 0.28,
}
"""A real model without a GPU on a multi-turn env: the batch and clip of the recorded Hangman
recipe that learned (groups of 8, two groups a step, clip-higher 0.28; ``benchmarks/results/
learning_multiturn_oneshot``; its partial credit and gamma 0 are defaults on win-only games,
:data:`SHAPED_PARTIAL_CREDIT`; its 8 lives and 8 tokens per reply are the recipe's). Replies of
the catalogue's games (``[e]``, ``[crane]``) fit in 16 tokens."""

SHAPED_PARTIAL_CREDIT = 0.5
"""The ``partial_credit`` a real model on a CPU trains with on a multi-turn env that takes one and
gives no reward before the end, unless the run chooses its credit, gamma or partial credit
(success is unchanged: a win is a win). With a win-only reward a near-random policy rarely wins,
so GRPO's groups carry almost no signal in the steps an hour holds on a CPU. The evidence is
Hangman's (8 lives, docs/multiturn.md): the recorded runs that learned it trained on partial
credit 0.5 with each turn judged by its own reward (gamma 0: 30/256 and 38/256 held-out wins),
and the same recipe with gamma 1 won 3/256. On FrozenLake, where a move against the edge earns
the same 0 as a fall into a hole, gamma 0 collapsed onto one move in 21 steps (docs/multiturn.md)."""

_EPISODE_BUDGET_TURNS = 16
"""Model turns an episode's default token budget holds on a CPU (Hangman with 6 lives needs at
most 11 valid guesses plus misses; longer games are cut, and ``ended_by`` says so)."""
_EPISODE_BUDGET_LIMITS = (256, 1024)
_TEMPLATE_TOKENS_PER_TURN = 10
"""Chat-template tokens around one env turn (role markers, end of turn)."""
_CHARS_PER_TOKEN = 3.0
"""A low estimate of characters per token for the catalogue's English observations, so the
budget errs on the long side."""

_BUDGET_STEPS = 10_000
_BUDGET_EVERY = 10
"""With ``--minutes`` and no ``--max-steps`` the clock ends the run: the step limit is out of the
way, and checkpoints and held-out evals come every 10 steps instead of every tenth of it."""


def _has_gpu() -> bool:
    """Whether training will run on a CUDA GPU (the CPU defaults apply otherwise)."""
    import torch

    return bool(torch.cuda.is_available())


def _episode_budget(
    traits: Sequence[Any], max_new_tokens_per_turn: int, max_turns: int | None
) -> int:
    """Completion tokens that hold :data:`_EPISODE_BUDGET_TURNS` turns of the longest env (or
    ``max_turns``, if fewer)."""
    need = 0
    for trait in traits:
        limits = (trait.turn_limit, max_turns, _EPISODE_BUDGET_TURNS)
        turns = min(limit for limit in limits if limit)
        per_turn = max_new_tokens_per_turn + _TEMPLATE_TOKENS_PER_TURN
        per_turn += math.ceil(trait.mean_observation_chars / _CHARS_PER_TOKEN)
        need = max(need, turns * per_turn)
    low, high = _EPISODE_BUDGET_LIMITS
    return min(high, max(low, 64 * math.ceil(need / 64)))


def multi_turn_defaults(
    env_ids: Sequence[str],
    env_kwargs: Mapping[str, Any],
    max_new_tokens_per_turn: int | None,
    max_turns: int | None = None,
    partial_credit: float | None = None,
    credit_chosen: bool = False,
) -> dict[str, Any]:
    """The CPU defaults of a real model that depend on the envs' traits (empty for one-turn envs).

    Read from :func:`trl_env._env_traits.env_traits` (a few seeded episodes of each env's random
    policy): the episode budget fits 16 turns of the longest game; turn credit where steps give
    rewards before the end; where none do but every env takes a ``partial_credit`` and the run
    chose neither its credit nor gamma (``credit_chosen``), that shaped reward
    (``partial_credit``, else :data:`SHAPED_PARTIAL_CREDIT`) with turn credit at gamma 0; a warm
    start on the env's random demos where every env has a random policy.
    """
    from trl_env._env_traits import env_traits

    traits = [env_traits(env_id, env_kwargs) for env_id in dict.fromkeys(env_ids)]
    if not any(trait.multi_turn for trait in traits):
        return {}
    defaults = dict(_MULTI_TURN_CPU_DEFAULTS)
    if not all(trait.has_random_policy for trait in traits):
        # An env of unknown reply length (no random policy to read it from): the CPU's 32 tokens.
        del defaults["max_new_tokens_per_turn"]
    tokens = max_new_tokens_per_turn or defaults.get(
        "max_new_tokens_per_turn", _CPU_MODEL_DEFAULTS["max_new_tokens_per_turn"]
    )
    defaults["max_completion_length"] = _episode_budget(traits, tokens, max_turns)
    step_rewards = any(trait.step_rewards for trait in traits)
    shapeable = not step_rewards and "partial_credit" not in env_kwargs
    shapeable = shapeable and all(trait.takes_partial_credit for trait in traits)
    if shapeable and not credit_chosen:
        # Train on the env's shaped reward, each guess judged by its own (see the constant).
        shaped = SHAPED_PARTIAL_CREDIT if partial_credit is None else partial_credit
        defaults["partial_credit"] = shaped
        if shaped > 0:
            defaults.update(credit="turn", gamma=0.0)
    elif step_rewards or (shapeable and (partial_credit or 0) > 0):
        defaults["credit"] = "turn"
    if all(trait.has_random_policy for trait in traits):
        defaults["warm_start"] = "random"
    return defaults


def run_defaults(
    *,
    model: str | None,
    lora: bool,
    env_ids: Sequence[str] = (),
    env_kwargs: Mapping[str, Any] | None = None,
    max_new_tokens_per_turn: int | None = None,
    max_turns: int | None = None,
    budget_in_minutes: bool = False,
    partial_credit: float | None = None,
    credit_chosen: bool = False,
) -> dict[str, Any]:
    """The value of each defaulted ``TrainConfig`` field for this model kind, envs and machine.

    Args:
        model: The run's ``--model``; ``None`` for the built-in tiny model. A trl-env run folder
            (``trl-env sft`` or ``train``) gets no warm start by default: its run already taught
            the games' reply format.
        lora: LoRA adapters are trained.
        env_ids: The run's envs (a real model on a CPU gets multi-turn defaults for multi-turn
            envs, :func:`multi_turn_defaults`).
        env_kwargs: Their ``gym.make`` kwargs.
        max_new_tokens_per_turn: The run's, if given (the episode budget is sized from it).
        max_turns: The run's turn limit, if given (likewise).
        budget_in_minutes: ``--minutes`` without ``--max-steps``: the clock ends the run.
        partial_credit: The run's ``partial_credit``, if given.
        credit_chosen: The run gives its ``credit`` or ``gamma`` (no partial credit by default).

    Example:
        >>> run_defaults(model=None, lora=False)["learning_rate"]
        0.001
    """
    if model is None:
        # Tuned in float32 (the tiny model's speed is overhead, not matmuls).
        defaults = {**_TINY_DEFAULTS, "bf16": False, "credit": "episode", "warm_start": "none"}
        defaults["gamma"] = 1.0
    else:
        defaults = _model_defaults()
        if env_ids and not _has_gpu():
            defaults.update(
                multi_turn_defaults(
                    env_ids,
                    env_kwargs or {},
                    max_new_tokens_per_turn,
                    max_turns,
                    partial_credit,
                    credit_chosen,
                )
            )
            # (Imported here: the models package pulls in torch, and --help must not.)
            from trl_env.trl.models._paths import run_config

            if Path(model).is_dir() and run_config(model) is not None:
                # A second format warm start would only dilute the first (an oracle's demos).
                defaults["warm_start"] = "none"
        if lora:
            defaults["learning_rate"] = (
                _LORA_LEARNING_RATE if _has_gpu() else _CPU_LORA_LEARNING_RATE
            )
    if budget_in_minutes:
        defaults.update(max_steps=_BUDGET_STEPS, save_steps=_BUDGET_EVERY, eval_every=_BUDGET_EVERY)
    return defaults


def _model_defaults() -> dict[str, Any]:
    """A real model's defaults on this machine, before the envs' and LoRA's."""
    from trl_env.trl.models._bf16 import default_bf16

    on_cpu = not _has_gpu()
    # bf16: a GPU's TRL default where it supports bf16; on a CPU only with bf16 units (AMX), where
    # LoRA SmolLM2's step ran 2.66x faster (benchmarks/grpo_step_profile.py; docs/real_models.md);
    # elsewhere it is emulated and several times slower.
    defaults = {
        **_MODEL_DEFAULTS,
        "bf16": default_bf16(),
        "credit": "episode",
        "gamma": 1.0,
        "warm_start": "none",
    }
    if on_cpu:
        defaults.update(_CPU_MODEL_DEFAULTS)
        # The training passes of a CPU run (float32 or bf16: both measured faster in passes).
        defaults["micro_batch_size"] = CPU_MICRO_BATCH
    return defaults


def with_partial_credit(
    env_ids: Sequence[str], env_kwargs: Mapping[str, Any], partial_credit: float | None
) -> dict[str, Any]:
    """``env_kwargs`` with the run's ``partial_credit`` in it (as given where it is ``None``): the
    setting overrides a ``partial_credit`` in ``env_kwargs`` (a recipe's, a ``--config`` file's).

    Raises:
        ValueError: An env that takes no ``partial_credit``.

    Example:
        >>> import trl_env
        >>> with_partial_credit(["TextHangman-v0"], {"lives": 8, "partial_credit": 0.2}, 0.5)
        {'lives': 8, 'partial_credit': 0.5}
    """
    from trl_env._env_traits import env_traits

    if partial_credit is None:
        return dict(env_kwargs)
    others = {key: value for key, value in env_kwargs.items() if key != "partial_credit"}
    for env_id in dict.fromkeys(env_ids):
        if not env_traits(env_id, others).takes_partial_credit:
            raise ValueError(
                f"{env_id} takes no partial_credit (a catalogue game's shaped reward): drop "
                "--partial-credit"
            )
    return {**others, "partial_credit": float(partial_credit)}
