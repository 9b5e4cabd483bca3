"""Fast path ``reserved_kv_cache``: a key/value cache that writes each decode step into room
reserved up front.

**Replaces**: ``transformers``' ``DynamicLayer`` in the caches the rollout's generator builds
when it reuses key/value states across turns (without reuse, ``generate`` builds its own cache
and this layer does nothing).
**Gain**: the ``torch.cat`` growth was 13% of a ``generate`` call (*ad hoc*); with inverse-CDF
sampling, 5 turns of 32 tokens for 8 rows went from 12.8 to 10.8 s (*ad hoc*,
``docs/real_models.md``). The rollout's generation on equal work took 4.8-7.7 s longer without it
over Hangman's 14 turns of 8 tokens (16 rows), 0.3-0.6 s over TicTacToe's 6 turns of 32 (8
rows) (AMD EPYC Zen 4, bf16, ``benchmarks/results/generation_fast_paths_zen4/``).
**Depends on**: full-attention layers only (a sliding-window or chunked layer keeps its own
cache class: the layer refuses such a model); ``DynamicLayer`` internals (``lazy_initialization``,
``is_initialized``, ``keys``, ``values``) at the tested transformers versions
(:mod:`trl_env.trl.fast._versions`).

``transformers``' ``DynamicLayer`` grows the keys and values of every layer by ``torch.cat``: each
decode step copies the whole cache of every layer to append one column. A turn of 32 tokens
after a 600-token history copies each layer's cache 32 times; on a CPU that was about a tenth of
SmolLM2-135M's generation time (``torch.profiler`` on the generation of
``benchmarks/grpo_step_profile.py``). :class:`ReservedLayer` is a ``DynamicLayer`` that allocates
the call's whole width once (``capacity``: the input and every token the call may sample) and
writes each step into it; ``keys`` and ``values`` are views of the filled columns, so attention
reads exactly what it read before.

Anything that replaces ``keys`` or ``values`` (cropping, beam reordering) is honoured: the next
update starts a new reservation from what it finds there.
"""

from __future__ import annotations

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

__all__ = ["ReservedLayer", "reserved_cache"]


class ReservedLayer(DynamicLayer):
    """A ``DynamicLayer`` that appends into storage of ``capacity`` columns (see the module
    docstring); past ``capacity`` it reserves again, twice as wide.

    Args:
        capacity: Columns to reserve at the first update (at least what that update brings).

    Example:
        >>> layer = ReservedLayer(capacity=8)
        >>> keys, _ = layer.update(torch.zeros(1, 2, 5, 4), torch.zeros(1, 2, 5, 4))
        >>> keys, _ = layer.update(torch.ones(1, 2, 1, 4), torch.ones(1, 2, 1, 4))
        >>> keys.shape[2], layer.get_seq_length(), keys[0, 0, 5, 0].item()
        (6, 6, 1.0)
    """

    def __init__(self, capacity: int = 0) -> None:
        super().__init__()
        self.capacity = capacity
        self._key_storage: torch.Tensor | None = None
        self._value_storage: torch.Tensor | None = None

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: object, **kwargs: object
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Append ``key_states``/``value_states`` (``[batch, heads, new, dim]``); return the views
        of all keys and values so far."""
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        used = self.get_seq_length()
        width = used + key_states.shape[-2]
        storage = self._key_storage
        if not self._holds_the_cache(key_states) or storage is None or width > storage.shape[-2]:
            self._reserve(key_states, value_states, used, max(width, self.capacity, 2 * used))
        assert self._key_storage is not None and self._value_storage is not None
        self._key_storage[:, :, used:width] = key_states
        self._value_storage[:, :, used:width] = value_states
        self.keys = self._key_storage[:, :, :width]
        self.values = self._value_storage[:, :, :width]
        return self.keys, self.values

    def _holds_the_cache(self, key_states: torch.Tensor) -> bool:
        """Whether the storage fits ``key_states`` and ``keys`` still starts it (nothing
        replaced it; cropping keeps a view of it)."""
        storage = self._key_storage
        if storage is None or storage.shape[0] != key_states.shape[0]:
            return False
        if (storage.dtype, storage.device) != (key_states.dtype, key_states.device):
            return False
        return self.keys.numel() == 0 or self.keys.data_ptr() == storage.data_ptr()

    def _reserve(
        self, key_states: torch.Tensor, value_states: torch.Tensor, used: int, columns: int
    ) -> None:
        batch, heads, _, key_dim = key_states.shape
        keys = key_states.new_empty(batch, heads, columns, key_dim)
        values = value_states.new_empty(
            batch, value_states.shape[1], columns, value_states.shape[-1]
        )
        if used:
            keys[:, :, :used] = self.keys
            values[:, :, :used] = self.values
        self._key_storage, self._value_storage = keys, values


def reserved_cache(
    capacity: int, layers: list[tuple[torch.Tensor, torch.Tensor]] | None = None
) -> DynamicCache:
    """A ``DynamicCache`` of :class:`ReservedLayer` s reserving ``capacity`` columns each, holding
    ``layers`` (``(keys, values)`` per model layer) when given, else empty (one layer is added
    per model layer at its first update).

    Example:
        >>> cache = reserved_cache(16, [(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))])
        >>> cache.get_seq_length(), type(cache.layers[0]).__name__
        (3, 'ReservedLayer')
    """
    cache = DynamicCache()
    cache.layer_class_to_replicate = lambda: ReservedLayer(capacity)  # type: ignore[assignment]
    for keys, values in layers or []:
        layer = ReservedLayer(capacity)
        layer.update(keys, values)
        cache.layers.append(layer)
    return cache
