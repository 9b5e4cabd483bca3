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

The same forward also drops the padding mask where it can. A padding mask makes ``transformers``
build a dense ``(rows, 1, L, L)`` mask, and the attention kernels then compute every one of the
``L x L`` scores; without a mask they run causally and skip the upper half (on a CPU, PyTorch's
flash kernel: about 1.5x faster forward and backward at ``L = 720``, and attention's backward was a
fifth of the training pass). When every row's ones form one run (left padding, the tokens, right
padding: how TRL lays out prompt and completion), each row is rotated so that its tokens start at
column 0, the model runs without a mask and with each token's original position id
(``position_ids``), and the outputs are rotated back. Every token then sees exactly the tokens and
positions it saw with the mask; padding only ever comes after it. Rows with padding only on the
right need no rotation and no position ids. The mask stays where that would not be exact: padding
between tokens, a rotary scaling that reads the batch's largest position (``dynamic``,
``longrope``), rotated positions past ``max_position_embeddings``, a model without
``position_ids``, or a row whose first token is already a scored one.

It applies to the training forward only (``_compute_loss``, and only for text inputs without MoE
auxiliary losses); the reference and old-policy passes run as in TRL.
"""

from __future__ import annotations

import contextlib
import inspect
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


def _accepts_position_ids(model: Any) -> bool:
    """Whether ``model``'s forward (under DDP and PEFT wrappers) takes ``position_ids``."""
    model = getattr(model, "module", model)  # DDP / accelerate wrappers
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    try:
        return "position_ids" in inspect.signature(base.forward).parameters
    except (TypeError, ValueError, AttributeError):
        return False


def _rotation_limit(model: Any) -> int | None:
    """The largest position id a rotated row may use (its wrapped padding counts past the row),
    or None where rotating could change the numbers: rotary scalings that read the largest
    position of the batch (``dynamic``, ``longrope``) or a model without ``position_ids``."""
    if not _accepts_position_ids(model):
        return None
    config = getattr(getattr(model, "module", model), "config", None)
    if config is not None and hasattr(config, "get_text_config"):
        config = config.get_text_config(decoder=True)
    rope: Any = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None)
    if isinstance(rope, dict) and rope.get("rope_type", rope.get("type")) in (
        "dynamic",
        "longrope",
    ):
        return None
    limit = getattr(config, "max_position_embeddings", None)
    return int(limit) if isinstance(limit, int) else 1 << 62


def _unmasked_layout(
    mask: torch.Tensor, position_limit: int | None, first_scored: int | None = None
) -> torch.Tensor | None:
    """How to run ``mask``'s rows without a mask: each row's leading padding (all zeros: nothing
    to rotate), or None when a row's ones are not one run, or rotating is not exact: no
    ``position_limit`` (see :func:`_rotation_limit`), rotated positions past it, or a row whose
    first token is at or after column ``first_scored`` (its score would come from padding;
    None: no such check)."""
    columns = torch.arange(mask.size(1), device=mask.device)
    lengths = mask.sum(dim=1)
    # Each row's first one (an all-zero row counts as starting at 0).
    leading = torch.where(mask.bool(), columns, mask.size(1)).amin(dim=1).clamp(max=mask.size(1))
    leading = torch.where(lengths > 0, leading, torch.zeros_like(leading))
    run = (columns >= leading[:, None]) & (columns < (leading + lengths)[:, None])
    if not torch.equal(run, mask.bool()):
        return None  # padding between tokens
    if bool(leading.any()):
        if position_limit is None or int(leading.max()) + mask.size(1) > position_limit:
            return None
        if first_scored is not None and bool(((leading >= first_scored) & (lengths > 0)).any()):
            return None
    return leading


def _rotate(values: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """Row ``r`` of ``values`` rotated left by ``shift[r]`` columns (negative: right)."""
    width = values.size(1)
    index = (torch.arange(width, device=values.device) + shift[:, None]) % width
    return values.gather(1, index)


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
    attend_without_padding_mask: bool = True
    """Run the training forward without a padding mask where that is exact (see the module
    docstring). Off: TRL's mask, as ``score_only_model_tokens`` alone does."""
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
                log_probs, entropy = self._scored_forward(
                    model, ids, mask, labels, ids.size(1) - logits_to_keep
                )
                logps.append(log_probs[:, -logits_to_keep:])
                if compute_entropy:
                    entropies.append(entropy[:, -logits_to_keep:])
        return torch.cat(logps), (torch.cat(entropies) if compute_entropy else None), None

    def _scored_forward(
        self,
        model: Any,
        ids: torch.Tensor,
        mask: torch.Tensor,
        labels: torch.Tensor,
        first_scored: int,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """TRL's fused head on ``labels``: per-position log-probabilities and entropies (position
        ``j`` scores the token at column ``j + 1``), run without the padding mask where that is
        exact (see the module docstring)."""
        leading = None
        if self.attend_without_padding_mask:
            leading = _unmasked_layout(mask, _rotation_limit(model), first_scored)
        if leading is None:
            with self.accelerator.autocast():  # type: ignore[attr-defined]
                outputs = model(
                    input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True
                )
            return outputs.log_probs, outputs.entropy
        if not bool(leading.any()):  # padding on the right only: nothing to move
            with self.accelerator.autocast():  # type: ignore[attr-defined]
                outputs = model(input_ids=ids, labels=labels, fused_lm_head=True)
            return outputs.log_probs, outputs.entropy
        # TRL counts positions from column 0, padding included: each token keeps its own.
        positions = leading[:, None] + torch.arange(ids.size(1), device=ids.device)
        with self.accelerator.autocast():  # type: ignore[attr-defined]
            outputs = model(
                input_ids=_rotate(ids, leading),
                labels=_rotate(labels, leading),
                position_ids=positions,
                fused_lm_head=True,
            )

        def back(per_position: torch.Tensor | None) -> torch.Tensor | None:
            if per_position is None:
                return None
            # Re-align to the label columns (a zero for column 0), rotate back, drop column 0.
            by_column = torch.cat([per_position.new_zeros(ids.size(0), 1), per_position], dim=1)
            return _rotate(by_column, -leading)[:, 1:]

        return back(outputs.log_probs), back(outputs.entropy)  # type: ignore[return-value]
