"""Fast path ``unpadded_training``: the training forward runs without the padding mask where that
is exact.

**Replaces**: the padded, masked training forward of TRL (``_get_per_token_logps_and_entropies``
called from ``_compute_loss``): rows are rotated so their tokens start at column 0 and run with
their own position ids and no mask.
**Gain**: a padding mask makes ``transformers`` build a dense ``(rows, 1, L, L)`` mask, and the
attention kernels then compute every score; without one PyTorch's CPU flash kernel runs causally
and skips the upper half: 8 rows of 720 tokens, 9 heads, forward 24 to 13 ms and backward 131 to
84 ms per layer (*ad hoc*, ``docs/real_models.md``; attention's backward was a fifth of the
training pass).
**Depends on**: a model whose forward takes ``position_ids``, whose layers all attend to their
whole past and whose rotary scaling does not read the batch's largest position (``dynamic``,
``longrope``): else the layer refuses; TRL's private ``_compute_loss`` and
``_get_per_token_logps_and_entropies`` and ``transformers``' masking at the tested versions
(:mod:`trl_env.trl.fast._versions`).

When every row's ones form one run (left padding, the tokens, right padding: how TRL lays out
prompt and completion), each row is rotated so that its tokens start at column 0, the model runs
without a mask and with each token's original position id (``position_ids``), and the outputs are
rotated back. Every token then sees exactly the tokens and positions it saw with the mask;
padding only ever comes after it. Rows with padding only on the right need no rotation and no
position ids. Either way, the columns after the longest row hold only padding, which no token
sees without a mask: they are cut before the forward (a micro-batch is padded to the longest row
of the whole batch, not its own) and their outputs are zero (on the reference step of
``benchmarks/grpo_step_profile.py``, whose episodes differ little in length, the cut measured no
gain: ``benchmarks/results/grpo_step_profile_trim_ab_amx.txt``). The mask stays, batch by batch, where that would not be exact: padding between
tokens, rotated positions past ``max_position_embeddings``, or a row whose first token is already
a scored one.
"""

from __future__ import annotations

from typing import Any

import torch

from trl_env.trl.fast._checks import accepts_position_ids, full_attention_only, model_config

__all__ = ["scored_forward", "unpadded_training_refusal"]


def _rope_type(model: Any) -> str | None:
    config = model_config(model)
    if config is not None and hasattr(config, "get_text_config"):
        config = config.get_text_config(decoder=True)
    rope: Any = getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None)
    return rope.get("rope_type", rope.get("type")) if isinstance(rope, dict) else None


def unpadded_training_refusal(model: Any) -> str | None:
    """Why running ``model`` without its padding mask could change its numbers, or None.

    Example:
        >>> unpadded_training_refusal(torch.nn.Linear(2, 2))
        'its forward takes no position_ids (rotated rows need their own positions)'
    """
    if not accepts_position_ids(model):
        return "its forward takes no position_ids (rotated rows need their own positions)"
    if not full_attention_only(model_config(model)):
        return "not every layer attends to its whole past (sliding window, chunked or linear)"
    if _rope_type(model) in ("dynamic", "longrope"):
        return f"its rotary scaling ({_rope_type(model)}) reads the batch's largest position"
    return None


def _position_limit(model: Any) -> int:
    """The largest position id a rotated row may use (its wrapped padding counts past the row)."""
    config = model_config(model)
    if config is not None and hasattr(config, "get_text_config"):
        config = config.get_text_config(decoder=True)
    limit = getattr(config, "max_position_embeddings", None)
    return int(limit) if isinstance(limit, int) else 1 << 62


def _unmasked_layout(
    mask: torch.Tensor, position_limit: int | None, first_scored: int | None = None
) -> torch.Tensor | None:
    """How to run ``mask``'s rows without a mask: each row's leading padding (all zeros: nothing
    to rotate), or None when a row's ones are not one run, or rotating is not exact: no
    ``position_limit``, rotated positions past it, or a row whose
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


def _pad_columns(values: torch.Tensor | None, width: int) -> torch.Tensor | None:
    """``values`` with zero columns appended up to ``width`` columns."""
    if values is None or values.size(1) == width:
        return values
    return torch.nn.functional.pad(values, (0, width - values.size(1)))


def scored_forward(
    trainer: Any,
    model: Any,
    ids: torch.Tensor,
    mask: torch.Tensor,
    labels: torch.Tensor,
    first_scored: int,
    unpadded: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """TRL's fused head on ``labels``: per-position log-probabilities and entropies (position
    ``j`` scores the token at column ``j + 1``), run without the padding mask where ``unpadded``
    and that is exact (see the module docstring), else as TRL runs it."""
    leading = None
    if unpadded:
        leading = _unmasked_layout(mask, _position_limit(model), first_scored)
    if leading is None:
        with trainer.accelerator.autocast():
            outputs = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
        return outputs.log_probs, outputs.entropy
    width = ids.size(1)
    # Without a mask every row's tokens fill columns 0 .. its length - 1 (after the rotation):
    # what lies beyond the longest row is padding that no token attends to.
    keep = min(width, max(2, int(mask.sum(dim=1).max())))
    if not bool(leading.any()):  # padding on the right only: nothing to move
        with trainer.accelerator.autocast():
            outputs = model(input_ids=ids[:, :keep], labels=labels[:, :keep], fused_lm_head=True)
        return _pad_columns(outputs.log_probs, width - 1), _pad_columns(outputs.entropy, width - 1)
    # TRL counts positions from column 0, padding included: each token keeps its own.
    positions = leading[:, None] + torch.arange(keep, device=ids.device)
    with trainer.accelerator.autocast():
        outputs = model(
            input_ids=_rotate(ids, leading)[:, :keep],
            labels=_rotate(labels, leading)[:, :keep],
            position_ids=positions,
            fused_lm_head=True,
        )

    def back(per_position: torch.Tensor | None) -> torch.Tensor | None:
        if per_position is None:
            return None
        # Re-align to the label columns (a zero for column 0), restore the cut columns, rotate
        # back, drop column 0.
        by_column = torch.cat([per_position.new_zeros(ids.size(0), 1), per_position], dim=1)
        return _rotate(_pad_columns(by_column, width), -leading)[:, 1:]

    return back(outputs.log_probs), back(outputs.entropy)  # type: ignore[return-value]
