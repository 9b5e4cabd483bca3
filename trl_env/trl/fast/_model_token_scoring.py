"""Fast path ``model_token_scoring``: the training forward of GRPO scores only the model's own
tokens.

**Replaces**: the labels of TRL's training forward (``GRPOTrainer._get_per_token_logps_and_entropies``
called from ``_compute_loss``) and, for that forward only, TRL's choice to compact the labelled
positions of its fused LM head on Triton devices alone (``trl.trainer.utils._use_triton``).
**Gain**: the LM head (forward and backward) was a fifth of the training pass of a SmolLM2 LoRA
step on a CPU (*ad hoc*); with peft's LoRA input casts skipped (a layer since removed: inside
the noise once ``lora_addmm`` was in), the training part went from 21.3 s to 14.1 s between two
runs (``docs/real_models.md``).
**Depends on**: the rollout's ``env_mask`` (TRL's ``tool_mask``) and text inputs without MoE
auxiliary losses (otherwise TRL's forward runs); TRL's private ``_compute_loss``,
``_get_per_token_logps_and_entropies``, ``_generate`` (its third result, the ``tool_mask``),
``_generate_and_score_completions`` and ``trl.trainer.utils._use_triton`` at the tested TRL
versions (:mod:`trl_env.trl.fast._versions`).

TRL 1.16's loss (``GRPOTrainer._compute_loss``) reads a completion token's log-probability only
where ``completion_mask * tool_mask`` is 1; ``tool_mask`` is the rollout's ``env_mask``, 0 on the
env's tokens between model turns. Its fused LM head (``add_fused_lm_head``) still projects every
completion position through the whole vocabulary (49,152 columns for SmolLM2), and on devices
without Triton (CPUs) every position of the sequence, prompt and padding included: it skips
unlabelled positions only where the Triton kernels run.

In a multi-turn episode most of the completion is the env's: a ``TextTicTacToe-v0`` row of about
500 completion tokens holds about 130 of the model's, behind a 200-token prompt. This layer labels
only the positions the loss reads, and has TRL's fused head skip the rest on every device: the
loss and its gradient are the same up to float rounding (``tests/trl/test_model_token_scoring.py``);
the log-probabilities and entropies at the positions the loss does not read are 0 instead of
computed, and so are the old-policy, reference and sampling log-probabilities the loss compares
them with there.

The reference pass (a KL term, ``beta > 0``) and the old-policy pass of a batch score the same
positions: the trainer keeps the rollout's ``env_mask`` from ``_generate`` until the batch is
scored, so those passes project only the model's tokens too, and the values the loss reads are
TRL's (``test_the_reference_pass_scores_the_model_tokens_too``). Through TRL's path, the
reference pass had added 21.6 s to the training part of a SmolLM2 LoRA step of 16 Hangman
episodes (53.5 s against 31.9 s on the same episodes, AMX CPU; ``docs/multiturn.md``). On the
ablation's TicTacToe step (8 episodes, about 5 turns) the KL term cost about 1.7 s of the
training part with this layer and 3.3 s without it (one run each, not idle:
``benchmarks/results/grpo_step_kl_reference_amx.txt``); the Hangman step was not rerun.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["fused_head_skips_unlabelled_positions", "model_token_labels", "set_aside_unscored"]

_COMPARED_LOGPS = ("old_per_token_logps", "ref_per_token_logps", "sampling_per_token_logps")
"""Per-token log-probabilities in TRL's inputs that the loss sets against the trained ones."""


def model_token_labels(inputs: dict[str, Any]) -> torch.Tensor:
    """The completion positions the loss reads: ``completion_mask * tool_mask``."""
    scored = inputs["completion_mask"]
    if "tool_mask" in inputs:
        scored = scored * inputs["tool_mask"]
    return scored


def set_aside_unscored(inputs: dict[str, Any], scored: torch.Tensor) -> dict[str, Any]:
    """``inputs`` with the log-probabilities the loss compares set to 0 where none is computed
    (a ratio ``exp(0 - old)`` there could overflow, and ``inf * 0`` is NaN)."""
    return {
        key: value.masked_fill(scored == 0, 0.0)
        if key in _COMPARED_LOGPS
        and isinstance(value, torch.Tensor)
        and value.shape == scored.shape
        else value
        for key, value in inputs.items()
    }


@contextlib.contextmanager
def fused_head_skips_unlabelled_positions() -> Iterator[None]:
    """Inside: TRL's fused LM head projects only the labelled positions, on any device.

    ``trl.trainer.utils`` decides whether to compact the positions with ``_use_triton(device)``
    (read there for that alone; the kernel module keeps its own binding, so CPUs still fold
    the tiles in torch). Compacting is what it does on GPUs; it stays off elsewhere because a
    changing number of positions would recompile Neuron graphs, which eager CPUs do not have.
    """
    try:
        from trl.trainer import utils as trl_utils
    except ImportError:  # pragma: no cover - trl is a dependency of this module's callers
        yield
        return
    original = getattr(trl_utils, "_use_triton", None)
    if original is None:  # a TRL without the hook: every position is projected, as before
        yield
        return
    # CPUs too; other devices as TRL decides (Neuron recompiles for every new position count).
    trl_utils._use_triton = lambda device: device.type == "cpu" or original(device)
    try:
        yield
    finally:
        trl_utils._use_triton = original
