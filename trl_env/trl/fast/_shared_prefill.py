"""Fast path ``shared_prefill``: a GRPO group's prompt is prefilled once, not once per episode.

**Replaces**: the full prefill of the first turn's rows in the rollout's ``generate`` call: the
``num_generations`` episodes of a task start from the same prompt, and ``generate`` would read
it once per row.
**Gain**: a 200-token prompt for 8 rows took 0.50-0.66 s to prefill, for one row 0.09-0.11 s
(*ad hoc*, ``docs/real_models.md``). The rollout's generation, rows in groups of 8 from one
prompt, on equal work: longer without it in every round, by a median gain of 5.2 s over
Hangman's 14 turns and 0.9 s over TicTacToe's 6 (AMD EPYC Zen 4, bf16,
``benchmarks/results/generation_fast_paths_zen4/``).
**Depends on**: the rollout's key/value reuse across turns being on (it stores the states; the
layer does nothing without it); a model whose forward takes ``position_ids`` and whose layers all
attend to their whole past (else it refuses); the forward's cache keyword (``cache`` from
transformers 5.24, ``past_key_values`` before) and positions as ``generate`` derives them, at the
tested transformers versions (:mod:`trl_env.trl.fast._versions`).

:func:`share_repeated_inputs` prefills each distinct input once (all but its last token) and
stores the states in the generator's :class:`~trl_env.trl.models._prefix_cache.PrefixCache`, so
that the call's layout gives each row its input's states and feeds one token. Same tokens and
log-probabilities as a full prefill (``tests/trl/test_prefix_cache.py``); the states of a batch
of distinct prompts instead of the repeated ones may round differently in the last bit.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trl_env.trl.models._prefix_cache import CacheFactory, PrefixCache

__all__ = ["share_repeated_inputs"]


def share_repeated_inputs(
    store: PrefixCache,
    model: Any,
    inputs: Sequence[Sequence[int]],
    pad_token_id: int,
    *,
    new_cache: CacheFactory,
    weights: contextlib.AbstractContextManager[Any] | None = None,
) -> bool:
    """Prefill each distinct input once when rows repeat one and nothing is stored yet.

    Args:
        store: The generator's prefix cache (where the states go).
        model: The model ``generate`` runs.
        inputs: The call's rows.
        pad_token_id: The padding id.
        new_cache: Builds the empty cache the prefill writes into.
        weights: A context manager to run the prefill in (the generator's bfloat16 copies), so
            the states are those ``generate`` would compute.

    Returns:
        Whether it prefilled (False: nothing stored yet is repeated, or rows are too short).
    """
    distinct = list(dict.fromkeys(tuple(ids) for ids in inputs))
    if not store.is_empty or len(distinct) == len(inputs) or min(map(len, distinct)) < 2:
        return False
    trimmed = [list(ids[:-1]) for ids in distinct]
    layout = store.layout(model, trimmed, pad_token_id, reuse=False)
    device = next(model.parameters()).device
    mask = layout.attention_mask.to(device)
    cache = new_cache(layout.input_ids.shape[1], None)
    if cache is None:  # transformers' own cache, built here because forward() is called here
        from transformers import DynamicCache

        cache = DynamicCache()
    # The forward generate() runs: a PEFT model generates through its base model's (not its
    # own, which accelerate may have wrapped in the trainer's autocast).
    forward = model.get_base_model() if hasattr(model, "get_base_model") else model
    with weights if weights is not None else contextlib.nullcontext():
        forward(
            input_ids=layout.input_ids.to(device),
            attention_mask=mask,
            # As generate derives them: padding does not count.
            position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
            use_cache=True,
            logits_to_keep=1,
            **{_forward_cache_keyword(model): cache},
        )
    store.remember(trimmed, [[] for _ in trimmed], layout, cache)
    return True


def _forward_cache_keyword(model: Any) -> str:
    """The name ``model``'s forward takes its cache by (``cache`` since transformers 5.24)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    try:
        parameters = inspect.signature(base.forward).parameters
    except (TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in parameters else "past_key_values"
