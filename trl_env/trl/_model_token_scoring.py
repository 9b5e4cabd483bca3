"""The training forward of GRPO scores only the model's own tokens.

TRL 1.16's loss (``GRPOTrainer._compute_loss``) reads a completion token's log-probability only
where ``completion_mask * tool_mask`` is 1; ``tool_mask`` is the rollout's ``env_mask``, 0 on the
env's tokens between model turns. Its fused LM head (``add_fused_lm_head``) still projects every
completion position through the whole vocabulary (49,152 columns for SmolLM2), and on devices
without Triton (CPUs) every position of the sequence, prompt and padding included: it skips
unlabelled positions only where the Triton kernels run.

In a multi-turn episode most of the completion is the env's: a ``TextTicTacToe-v0`` row of about
500 completion tokens holds about 130 of the model's, behind a 200-token prompt. On a CPU the LM
head (forward and backward) was a fifth of the training pass (``torch.profiler`` on the step of
``benchmarks/grpo_step_profile.py``). :class:`ModelTokenScoring` labels only the positions the
loss reads, and has TRL's fused head skip the rest on every device: the loss and its gradient are
the same up to float rounding (``tests/trl/test_model_token_scoring.py``); the log-probabilities
and entropies at the positions the loss does not read are 0 instead of computed, and so are the
old-policy, reference and sampling log-probabilities the loss compares them with there.

It applies to the training forward only (``_compute_loss``, and only for text inputs without MoE
auxiliary losses); the reference and old-policy passes run as in TRL.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["ModelTokenScoring"]

_COMPARED_LOGPS = ("old_per_token_logps", "ref_per_token_logps", "sampling_per_token_logps")
"""Per-token log-probabilities in TRL's inputs that the loss sets against the trained ones."""


@contextlib.contextmanager
def _fused_head_skips_unlabelled_positions() -> Iterator[None]:
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


class ModelTokenScoring:
    """Mixin for ``GRPOTrainer`` subclasses: the training forward scores only the model's tokens.

    Put it before ``GRPOTrainer`` in the bases. ``score_only_model_tokens = False`` (an instance or
    class attribute) turns it off.

    Example:
        >>> from trl import GRPOTrainer
        >>> class Trainer(ModelTokenScoring, GRPOTrainer):
        ...     pass
    """

    score_only_model_tokens: bool = True
    _scored_positions: torch.Tensor | None = None

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        scored = None
        if self.score_only_model_tokens:
            scored = inputs["completion_mask"]
            if "tool_mask" in inputs:
                scored = scored * inputs["tool_mask"]
            # The log-probabilities the loss compares with get the same 0 where none is computed:
            # a ratio exp(0 - old) there could overflow, and inf * 0 is NaN.
            inputs = {
                key: value.masked_fill(scored == 0, 0.0)
                if key in _COMPARED_LOGPS
                and isinstance(value, torch.Tensor)
                and value.shape == scored.shape
                else value
                for key, value in inputs.items()
            }
        self._scored_positions = scored
        try:
            return super()._compute_loss(model, inputs)  # type: ignore[misc]
        finally:
            self._scored_positions = None

    def _get_per_token_logps_and_entropies(
        self,
        model: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        logits_to_keep: int,
        batch_size: int | None = None,
        compute_entropy: bool = False,
        compute_aux_loss: bool = False,
        **inputs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        scored = self._scored_positions
        if (
            scored is None
            or compute_aux_loss
            or any(value is not None for value in inputs.values())  # images, token types
            or tuple(scored.shape) != (input_ids.size(0), logits_to_keep)
        ):
            return super()._get_per_token_logps_and_entropies(  # type: ignore[misc]
                model,
                input_ids,
                attention_mask,
                logits_to_keep,
                batch_size,
                compute_entropy=compute_entropy,
                compute_aux_loss=compute_aux_loss,
                **inputs,
            )
        # TRL's text path, with the positions the loss does not read left unlabelled.
        batch_size = batch_size or input_ids.size(0)
        logps, entropies = [], []
        with _fused_head_skips_unlabelled_positions():
            for start in range(0, input_ids.size(0), batch_size):
                ids = input_ids[start : start + batch_size]
                mask = attention_mask[start : start + batch_size]
                labels = ids.masked_fill(mask == 0, -100)
                labels[:, :-logits_to_keep] = -100
                completion = labels[:, -logits_to_keep:]
                completion.masked_fill_(scored[start : start + batch_size] == 0, -100)
                with self.accelerator.autocast():  # type: ignore[attr-defined]
                    outputs = model(
                        input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True
                    )
                logps.append(outputs.log_probs[:, -logits_to_keep:])
                if compute_entropy:
                    entropies.append(outputs.entropy[:, -logits_to_keep:])
        return torch.cat(logps), (torch.cat(entropies) if compute_entropy else None), None
