"""KV-cache reuse across turns for the transformers backend: a prefix cache of the last call.

Every turn re-sends an episode's whole token stream: the previous turn's input, the sampled reply
and the env's answer. Without reuse, ``generate`` re-reads (prefills) all of it every turn; at
turn 6 of a TextWordle-v0 episode that was about 80% of SmolLM2-135M's generation time on CPU. This
store keeps the key/value states of every row of the last call; in the next call a row whose
input starts with a stored row's tokens feeds only the tokens after them.

Layout of a call that reuses the cache (one line per row; ``.`` is padding, masked out)::

    cache (L columns)          input_ids (S new columns)
    . . [cached prefix of 0]   . [new tokens of 0]
    [cached prefix of 1   ]    [new tokens of 1   ]

``generate`` derives positions from the cumulative sum of the attention mask, so the padding in
the middle of a row does not shift them, and it feeds only the columns after the cache.

Rows that repeat an input (the episodes of a GRPO group start from the same prompt) need its
states only once: the fast path ``shared_prefill`` (:mod:`trl_env.trl.fast._shared_prefill`)
prefills each distinct input of the first call once and stores the states here; every repeat
then reuses them. The caches this store assembles are ``transformers``' ``DynamicCache``, or,
with the fast path ``reserved_kv_cache``, one that reserves the call's room up front
(:mod:`trl_env.trl.fast._reserved_cache`).

It is a cache, never a source of truth: a row without a stored prefix is prefilled in full, and
a call where reuse would not save at least half of the prefill columns runs without it. States
computed with other weights must never be reused: the rollout clears the store after every
``rollout_func`` call (before the training step), and as a second guard the store is dropped
when the model's weights look different (another model object; a parameter moved to another
device or dtype, reallocated, modified in place per its version counter, or with a different
value at a few sampled elements, which catches fused optimizer steps that bypass the counter).
Anyone who keeps a :class:`~trl_env.trl.models.TransformersGenerator` across weight updates, or
switches PEFT adapters, should call ``clear_cache()``.

Reuse is off (everything is prefilled, as without it) for settings where it would not give the
same tokens or cannot work: beam search, several return sequences, ``use_cache=False``, any
``cache_implementation`` (static, sliding-window, quantized, ...), repetition penalties and
no-repeat n-grams (they read every input id, and reuse moves padding into the middle of a row),
encoder-decoder models, models whose ``forward`` takes no ``position_ids`` (positions would then
count the padding), models with other than full-attention layers (sliding-window, chunked, linear
attention, shared KV; per the config), and caches whose layers are not plain full-attention
``DynamicLayer`` s.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from trl_env.trl.fast._checks import full_attention_only
from trl_env.trl.fast._reserved_cache import ReservedLayer

CacheFactory = Callable[[int, "list[tuple[torch.Tensor, torch.Tensor]] | None"], Any]
"""``(capacity, layers) -> cache``: builds the cache of a call holding ``layers`` (``(keys,
values)`` per model layer) with room for ``capacity`` columns, or an empty one for ``None``."""


def dynamic_cache(
    capacity: int, layers: list[tuple[torch.Tensor, torch.Tensor]] | None = None
) -> Any:
    """``transformers``' own ``DynamicCache`` holding ``layers`` (``capacity`` is not used: it
    grows as it goes), or None for no layers (``generate`` then builds its own)."""
    from transformers import DynamicCache

    return DynamicCache(ddp_cache_data=layers) if layers else None


__all__ = ["PrefixCache", "ReuseLayout"]


@dataclass
class _Entry:
    """One stored row: its tokens and where their states sit in the stored layers."""

    tokens: list[int]
    # Index of each token's states in the stored layers flattened to (rows * columns).
    flat_index: torch.Tensor


@dataclass
class ReuseLayout:
    """How one call lays out its rows (see the module docstring).

    Attributes:
        cached: Per row, how many of its first tokens come from the cache (0: none).
        cache_width: ``L``, columns taken by the cache (0 when nothing is reused).
        input_ids: ``(rows, L + S)`` token ids, padding where ``attention_mask`` is 0.
        attention_mask: ``(rows, L + S)``.
        cache: The assembled cache to pass to ``generate``, or None.
        columns: Per row, the columns of its input tokens, in order.
    """

    cached: list[int]
    cache_width: int
    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    cache: Any
    columns: list[torch.Tensor]


class PrefixCache:
    """The key/value states of the last ``generate`` call, reused by the next one.

    Args:
        min_saving: Reuse only when it removes at least this share of the prefill columns.
    """

    def __init__(self, min_saving: float = 0.5) -> None:
        self.min_saving = min_saving
        self._layers: list[tuple[torch.Tensor, torch.Tensor]] | None = None
        self._entries: list[_Entry] = []
        self._weights_key: tuple[Any, ...] | None = None
        self._call_key: tuple[Any, ...] | None = None  # the weights of the call under way
        self.reused_tokens = 0
        self.prefilled_tokens = 0

    def clear(self) -> None:
        """Forget the stored states (frees their memory)."""
        self._layers = None
        self._entries = []
        self._weights_key = None

    @staticmethod
    def supported(model: Any, generation_config: Any) -> bool:
        """Whether this model and these settings produce a cache that can be reused.

        ``generate`` fills unset fields from the model's own generation config, so both are read.
        """
        config = getattr(model, "config", None)
        if config is None or getattr(config, "is_encoder_decoder", False):
            return False
        # A PEFT model's forward takes **kwargs; its generate runs the base model's.
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        forward = getattr(base, "forward", None)
        try:
            if forward is None or "position_ids" not in inspect.signature(forward).parameters:
                return False
        except (TypeError, ValueError):
            return False

        def setting(name: str, default: Any) -> Any:
            for settings in (generation_config, getattr(model, "generation_config", None)):
                value = getattr(settings, name, None)
                if value is not None:
                    return value
            return default

        return (
            full_attention_only(config)
            and setting("use_cache", True) is not False
            and setting("cache_implementation", None) is None
            and setting("num_beams", 1) == 1
            and setting("num_return_sequences", 1) == 1
            and setting("repetition_penalty", 1.0) == 1.0
            and setting("encoder_repetition_penalty", 1.0) == 1.0
            and not setting("no_repeat_ngram_size", 0)
            and not setting("encoder_no_repeat_ngram_size", 0)
        )

    def layout(
        self,
        model: Any,
        inputs: Sequence[Sequence[int]],
        pad_token_id: int,
        reuse: bool = True,
        max_new_tokens: int = 0,
        new_cache: CacheFactory = dynamic_cache,
    ) -> ReuseLayout:
        """Lay out ``inputs`` for one ``generate`` call, reusing stored prefixes where it pays.

        With ``reuse=False`` (or nothing stored) this is plain left padding and ``cache`` is
        None. With reuse, ``cache`` is ``new_cache(capacity, layers)``: the reused states, with
        room for the call's input and ``max_new_tokens`` sampled tokens.
        """
        self._call_key = _weights_key(model)  # the weights do not change during the call
        if self._weights_key is not None and self._weights_key != self._call_key:
            self.clear()
        matches: list[tuple[_Entry, int] | None] = (
            self._match(inputs) if reuse else [None] * len(inputs)
        )
        cached = [0 if match is None else match[1] for match in matches]
        full_width = max(len(ids) for ids in inputs)
        new_width = max(len(ids) - n for ids, n in zip(inputs, cached, strict=True))
        if not any(cached) or new_width > (1 - self.min_saving) * full_width:
            cached = [0] * len(inputs)
        cache_width = max(cached)
        if not cache_width:
            self._layers, self._entries = None, []  # free the old states before this call's
        new_width = max(len(ids) - n for ids, n in zip(inputs, cached, strict=True))
        width = cache_width + new_width
        input_ids = torch.full((len(inputs), width), pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(inputs), width), dtype=torch.long)
        columns = []
        for row, (ids, n) in enumerate(zip(inputs, cached, strict=True)):
            prefix = torch.arange(cache_width - n, cache_width)
            rest = torch.arange(width - (len(ids) - n), width)
            row_columns = torch.cat([prefix, rest])
            input_ids[row, row_columns] = torch.as_tensor(list(ids), dtype=torch.long)
            attention_mask[row, row_columns] = 1
            columns.append(row_columns)
        self.reused_tokens += sum(cached)
        self.prefilled_tokens += sum(len(ids) for ids in inputs) - sum(cached)
        capacity = width + max_new_tokens
        cache = self._assemble(matches, cache_width, capacity, new_cache) if cache_width else None
        return ReuseLayout(cached, cache_width, input_ids, attention_mask, cache, columns)

    def remember(
        self,
        inputs: Sequence[Sequence[int]],
        completions: Sequence[Sequence[int]],
        layout: ReuseLayout,
        cache: Any,
    ) -> None:
        """Store the states ``generate`` returned for the next call (or clear if unusable)."""
        layers = _plain_layers(cache)
        if layers is None:
            self.clear()
            return
        columns = layers[0][0].shape[2]
        width = layout.input_ids.shape[1]
        # The last sampled token is never fed back, so fewer sampled states than tokens may exist.
        sampled_states = max(columns - width, 0)
        entries = []
        for row, (ids, completion) in enumerate(zip(inputs, completions, strict=True)):
            kept = min(len(completion), sampled_states)
            row_columns = torch.cat([layout.columns[row], torch.arange(width, width + kept)])
            entries.append(_Entry(list(ids) + list(completion[:kept]), row * columns + row_columns))
        self._layers, self._entries = layers, entries
        self._weights_key = self._call_key

    def _match(self, inputs: Sequence[Sequence[int]]) -> list[tuple[_Entry, int] | None]:
        """Per input, the stored row that starts it and how many of its tokens to reuse (at most
        all but the input's last: ``generate`` needs one new token), or None."""
        matches: list[tuple[_Entry, int] | None] = [None] * len(inputs)
        entries, start = self._entries, 0
        for row, ids in enumerate(inputs):
            # The rollout sends the rows still playing in their previous order: try the entry
            # after the last match first, so a turn costs one comparison per row.
            for offset in range(len(entries)):
                index = (start + offset) % len(entries)
                tokens = entries[index].tokens
                n = len(tokens)
                if n and n <= len(ids) and ids[n - 1] == tokens[-1] and list(ids[:n]) == tokens:
                    matches[row] = (entries[index], min(n, len(ids) - 1))
                    start = index + 1
                    break
        return matches

    @property
    def is_empty(self) -> bool:
        """Whether no row's states are stored."""
        return not self._entries

    def _assemble(
        self,
        matches: list[tuple[_Entry, int] | None],
        width: int,
        capacity: int,
        new_cache: CacheFactory,
    ) -> Any:
        """The cache for this call: each row's reused states, right-aligned in ``width`` columns,
        with room for ``capacity`` in all."""
        assert self._layers is not None
        device = self._layers[0][0].device
        gather = torch.zeros((len(matches), width), dtype=torch.long)
        for row, match in enumerate(matches):
            if match is not None and match[1]:
                entry, n = match
                gather[row, width - n :] = entry.flat_index[:n]
        gather = gather.view(-1).to(device)
        layers = []
        old_layers, self._layers = self._layers, None
        for index in range(len(old_layers)):
            keys, values = old_layers[index]
            old_layers[index] = None  # type: ignore[call-overload]  # free as we go
            layers.append(
                (_gather(keys, gather, len(matches)), _gather(values, gather, len(matches)))
            )
        self._entries = []
        return new_cache(capacity, layers)


def _gather(states: torch.Tensor, flat_index: torch.Tensor, rows: int) -> torch.Tensor:
    """Pick ``(row, column)`` states of a ``[rows, heads, columns, dim]`` tensor into a new one."""
    columns = states.shape[2]
    index = flat_index.view(rows, -1)
    # Advanced indexing on dims 0 and 2 only copies the picked states: [rows, width, heads, dim]
    # (the cache copies them once more, into its reserved room).
    picked = states[index // columns, :, index % columns]
    return picked.transpose(1, 2)


def _plain_layers(cache: Any) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
    """The (keys, values) of every layer, or None unless all are full-attention dynamic layers."""
    from transformers.cache_utils import DynamicCache, DynamicLayer

    if type(cache) is not DynamicCache:
        return None
    layers = []
    for layer in cache.layers:
        keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
        plain = type(layer) in (DynamicLayer, ReservedLayer)
        if not plain or not isinstance(keys, torch.Tensor):
            return None
        if not isinstance(values, torch.Tensor) or keys.dim() != 4:
            return None
        layers.append((keys, values))
    return layers or None


def _weights_key(model: Any) -> tuple[Any, ...]:
    """Changes whenever the weights may have changed (see the module docstring).

    Per parameter: where it lives, its dtype, its in-place version counter and a few sampled
    values (fused optimizers update in place without moving the counter). One small reduction
    per parameter: milliseconds, against seconds for a ``generate`` call.
    """
    parameters = list(model.parameters())
    if not parameters:
        return (id(model),)
    layout = tuple(
        (p.data_ptr(), p.dtype, p.device, p._version, tuple(p.shape)) for p in parameters
    )
    with torch.no_grad():
        samples = [
            p.detach().reshape(-1)[:: max(1, p.numel() // 8)][:8].float() for p in parameters
        ]
        checksum = torch.stack([sample.sum() for sample in samples]).cpu().tolist()
    return (id(model), layout, tuple(checksum))
