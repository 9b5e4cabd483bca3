"""A gymnasium space for the text an LLM reads and writes.

Gymnasium's own :class:`gymnasium.spaces.Text` defaults to letters and digits, so ``"hello world"``
is outside it, the passive checker warns on every ordinary message, and ``AsyncVectorEnv`` with
shared memory crashes on characters outside its charset. :class:`TextSpace` accepts any printable
Unicode string (plus newlines and tabs) up to a maximum length, and registers gymnasium's
singledispatch hooks for it so it works wherever gymnasium's own spaces do:

* vector envs: ``batch_space`` and ``batch_differing_spaces`` (a :class:`BatchedTextSpace`, so
  text envs of different ``max_length`` mix in a vector env with ``observation_mode="different"``),
  ``is_space_dtype_shape_equiv``, ``create_empty_array`` and shared memory (a
  :class:`SharedTextBatch` live view when ``AsyncVectorEnv(copy=False)``);
* wrappers: ``create_zero_array`` (the shortest string in the space, ``""`` by default), which
  ``FrameStackObservation(..., padding_type="zero")`` and ``DelayObservation`` use.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Iterable, Iterator, Sequence
from copy import deepcopy
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.spaces.utils import is_space_dtype_shape_equiv
from gymnasium.vector.utils import (
    batch_differing_spaces,
    batch_space,
    create_empty_array,
    create_shared_memory,
    iterate,
    read_from_shared_memory,
    write_to_shared_memory,
)
from gymnasium.wrappers.utils import create_zero_array

from trl_env.error import InvalidSpaceError

__all__ = [
    "DEFAULT_MAX_LENGTH",
    "SAMPLE_ALPHABET",
    "BatchedTextSpace",
    "SharedTextBatch",
    "TextSpace",
]

DEFAULT_MAX_LENGTH = 65_536
"""Default upper bound on the length (in characters) of an observation or action."""

# Whitespace that LLM text is full of but that str.isprintable() rejects.
_ALLOWED_CONTROL = "\n\t\r"
_STRIP_ALLOWED_CONTROL = str.maketrans("", "", _ALLOWED_CONTROL)

SAMPLE_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    " \n\t.,;:!?'\"()[]{}<>-_+=*/\\|@#$%^&~`"
    "éèêàçñöüßøåÆŒ"
    "αβγδλπΩЖЯ中文字日本語한국어"
    "😀🎉🚀✅❌→…"
)
"""Characters :meth:`TextSpace.sample` draws from by default: ASCII, accents, scripts, emoji."""

_DEFAULT_SAMPLE_MAX_LENGTH = 64


class TextSpace(spaces.Space[str]):
    """Any printable Unicode string, newlines and tabs included, of bounded length.

    ``contains`` is exact: a ``str`` whose length is within ``[min_length, max_length]`` and whose
    characters are all printable (:meth:`str.isprintable`) or one of ``\\n``, ``\\t``, ``\\r``.

    Args:
        max_length: Longest string in the space, in characters.
        min_length: Shortest string in the space.
        seed: Seed for :meth:`sample`.

    Example:
        >>> space = TextSpace(max_length=100, seed=0)
        >>> space.contains("Guess 1/6: crane → 🟩⬛🟨⬛⬛\\nTry again.")
        True
        >>> space.contains("bell\\x07")
        False
        >>> isinstance(space.sample(), str)
        True
    """

    def __init__(
        self,
        max_length: int = DEFAULT_MAX_LENGTH,
        *,
        min_length: int = 0,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        if not isinstance(max_length, int | np.integer) or max_length < 1:
            raise ValueError(f"max_length must be a positive int, got {max_length!r}")
        if not isinstance(min_length, int | np.integer) or not 0 <= min_length <= max_length:
            raise ValueError(
                f"min_length must be in [0, max_length={max_length}], got {min_length!r}"
            )
        self.max_length = int(max_length)
        self.min_length = int(min_length)
        super().__init__(shape=None, dtype=None, seed=seed)

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is a string of allowed length made only of allowed characters."""
        if not isinstance(x, str) or not self.min_length <= len(x) <= self.max_length:
            return False
        # Fast path: most text is printable; only strings with whitespace controls need a copy.
        return x.isprintable() or x.translate(_STRIP_ALLOWED_CONTROL).isprintable()

    def sample(
        self, mask: tuple[int | None, str | None] | None = None, probability: None = None
    ) -> str:
        """Draw a random string from :data:`SAMPLE_ALPHABET` (seeded by :meth:`seed`).

        Args:
            mask: Optional ``(length, charset)``. ``length`` fixes the length (default: uniform in
                ``[min_length, min(max_length, max(min_length, 64))]``); ``charset`` replaces the
                default alphabet and must contain only allowed characters.
            probability: Not supported for text; must be ``None``.

        Returns:
            A string that :meth:`contains` accepts.
        """
        if probability is not None:
            raise ValueError("TextSpace.sample does not support `probability` masks")
        length, charset = mask if mask is not None else (None, None)
        if charset is None:
            charset = SAMPLE_ALPHABET
        elif not charset or not self.contains(charset[: self.max_length]):
            raise ValueError(f"charset must be non-empty allowed characters, got {charset!r}")
        if length is None:
            upper = min(self.max_length, max(self.min_length, _DEFAULT_SAMPLE_MAX_LENGTH))
            length = int(self.np_random.integers(self.min_length, upper + 1))
        elif not self.min_length <= length <= self.max_length:
            raise ValueError(
                f"length must be in [{self.min_length}, {self.max_length}], got {length}"
            )
        chars = list(charset)
        indices = self.np_random.integers(0, len(chars), size=length)
        return "".join(chars[i] for i in indices)

    @property
    def is_np_flattenable(self) -> bool:
        """Text has no fixed-size numpy representation."""
        return False

    def to_jsonable(self, sample_n: Iterable[str]) -> list[str]:
        """Strings are already JSON-serialisable."""
        return list(sample_n)

    def from_jsonable(self, sample_n: Sequence[str]) -> list[str]:
        """Inverse of :meth:`to_jsonable`."""
        return list(sample_n)

    def __repr__(self) -> str:
        return f"TextSpace(max_length={self.max_length}, min_length={self.min_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TextSpace)
            and self.max_length == other.max_length
            and self.min_length == other.min_length
        )

    def __hash__(self) -> int:
        return hash((TextSpace, self.max_length, self.min_length))


# --- batching ---------------------------------------------------------------------------------


class BatchedTextSpace(spaces.Tuple):
    """The space of a batch of strings: one :class:`TextSpace` per sub-env.

    What ``batch_space`` and ``batch_differing_spaces`` return for :class:`TextSpace`: a
    gymnasium :class:`~gymnasium.spaces.Tuple` (every hook registered for ``Tuple`` applies, and
    it compares equal to a ``Tuple`` of the same spaces) whose :meth:`contains` also accepts the
    :class:`SharedTextBatch` that ``AsyncVectorEnv(shared_memory=True, copy=False)`` returns.

    Example:
        >>> from gymnasium.vector.utils import batch_differing_spaces
        >>> batch = batch_differing_spaces([TextSpace(4), TextSpace(8)])
        >>> ("four", "eight ok") in batch, ("eight ok", "four") in batch
        (True, False)
    """

    def contains(self, x: Any) -> bool:
        """Whether ``x`` (a tuple, list or :class:`SharedTextBatch`) holds one string per space."""
        if isinstance(x, SharedTextBatch):
            x = tuple(x)
        return super().contains(x)

    def __repr__(self) -> str:
        return f"BatchedTextSpace({', '.join(map(repr, self.spaces))})"


# Gymnasium looks some hooks up by exact type (``type(space) in registry``), where a Tuple subclass
# does not inherit Tuple's: register those for the batched space too.
# mypy rejects any class registered on a singledispatch whose first argument is generic
# (``Space[_T]`` here; python/mypy#13040), hence the ignore (here and on create_zero_array below).
@iterate.register(BatchedTextSpace)
def _iterate_text_batch(  # type: ignore[misc]
    space: BatchedTextSpace, items: Sequence[str]
) -> Iterator[str]:
    return iter(items)


batch_differing_spaces.register(BatchedTextSpace, batch_differing_spaces.dispatch(spaces.Tuple))


@batch_space.register(TextSpace)
def _batch_text_space(space: TextSpace, n: int = 1) -> BatchedTextSpace:
    # Seeded exactly as gymnasium batches any other space (its `_batch_space_custom`), so that
    # `envs.action_space.sample()` draws what it drew before this registration.
    batched = BatchedTextSpace(
        tuple(deepcopy(space) for _ in range(n)), seed=deepcopy(space.np_random)
    )
    space_rng = deepcopy(space.np_random)
    batched.seed(list(map(int, space_rng.integers(0, int(1e8), n))))
    return batched


# The fallback's first argument is a sequence of spaces, which gymnasium dispatches by hand on the
# type of its first item (``dispatch(type(spaces[0]))``); mypy checks it as an ordinary
# singledispatch on the sequence's own type, hence the ignore.
@batch_differing_spaces.register(TextSpace)
def _batch_differing_text_spaces(  # type: ignore[misc]
    text_spaces: Sequence[TextSpace],
) -> BatchedTextSpace:
    return BatchedTextSpace(
        [deepcopy(space) for space in text_spaces], seed=deepcopy(text_spaces[0].np_random)
    )


@is_space_dtype_shape_equiv.register(TextSpace)
def _text_spaces_batch_together(space_1: TextSpace, space_2: Any) -> bool:
    # Text has no shape or dtype, and the shared-memory layout below does not depend on the
    # writer's max_length, so any two text spaces can share a vector env.
    return isinstance(space_2, TextSpace)


@create_empty_array.register(TextSpace)
def _create_empty_text(space: TextSpace, n: int = 1, fn: Any = np.zeros) -> tuple[str, ...]:
    return tuple(" " * space.min_length for _ in range(n))


# The fallback's first argument is generic (``Space[_T]``), as for iterate above: mypy's false error.
@create_zero_array.register(TextSpace)
def _create_zero_text(space: TextSpace) -> str:  # type: ignore[misc]
    # The "zero" observation (padding of FrameStackObservation, the first DelayObservation
    # observations): the shortest string in the space, as gymnasium's Text does.
    return " " * space.min_length


# --- shared memory ----------------------------------------------------------------------------
# A fixed-size int32 buffer: a header holding the row width, then one row per sub-env with the
# string's Unicode code points, zero-padded (NUL is not printable, so it is never part of a string
# in the space). The width comes from the space that created the buffer and is read back from the
# header by every writer and reader, so sub-envs whose spaces have other max_lengths
# (observation_mode="different") still write to the right row.

_HEADER = 1


def _rows(shared_memory: Any) -> tuple[np.ndarray, int]:
    buffer = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
    return buffer[_HEADER:], int(buffer[0])


@create_shared_memory.register(TextSpace)
def _create_text_shared_memory(space: TextSpace, n: int = 1, ctx: ModuleType = mp) -> Any:
    shared_memory = ctx.Array(np.dtype(np.int32).char, _HEADER + n * space.max_length)
    np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[0] = space.max_length
    return shared_memory


class SharedTextBatch(Sequence[str]):
    """A live, read-only view of ``n`` strings stored in a shared-memory buffer.

    ``AsyncVectorEnv(shared_memory=True)`` calls ``read_from_shared_memory`` once, at construction,
    and then returns that same object after every ``reset``/``step`` while the workers rewrite the
    buffer (numpy views make this work for ``Box``). A tuple of strings would be frozen at the
    empty initial values (gymnasium's own ``Text`` has exactly this bug), so the batch is decoded
    on access instead. ``copy.deepcopy``, ``copy.copy`` and pickling give a plain ``tuple`` of the
    current strings, so ``AsyncVectorEnv(copy=True)`` (the default) hands out ordinary tuples.
    The vector env's :class:`BatchedTextSpace` contains it.
    """

    __slots__ = ("_data",)

    def __init__(self, data: np.ndarray) -> None:
        self._data = data

    def __len__(self) -> int:
        return self._data.shape[0]

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(_decode_codepoints(row) for row in self._data[index])
        return _decode_codepoints(self._data[index])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SharedTextBatch | tuple | list):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable view

    def __copy__(self) -> tuple[str, ...]:
        return tuple(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (tuple(self),))

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"


@read_from_shared_memory.register(TextSpace)
def _read_text_shared_memory(space: TextSpace, shared_memory: Any, n: int = 1) -> SharedTextBatch:
    rows, width = _rows(shared_memory)
    return SharedTextBatch(rows.reshape((n, width)))


@write_to_shared_memory.register(TextSpace)
def _write_text_shared_memory(space: TextSpace, index: int, value: str, shared_memory: Any) -> None:
    rows, width = _rows(shared_memory)
    if not isinstance(value, str) or len(value) > width:
        length = len(value) if isinstance(value, str) else "?"
        raise InvalidSpaceError(
            f"cannot store {type(value).__name__} of length {length} in a shared-memory text "
            f"buffer of width {width} (the max_length of the vector env's "
            "single_observation_space: the first sub-env's); raise that max_length, list the "
            "sub-env with the longest max_length first, or pass "
            "vector_kwargs={'shared_memory': False}"
        )
    row = rows[index * width : (index + 1) * width]
    codes = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype=np.int32)
    row[: len(codes)] = codes
    row[len(codes) :] = 0


def _decode_codepoints(row: Iterable[int]) -> str:
    codes = np.asarray(row, dtype=np.int32)
    nonzero = np.flatnonzero(codes == 0)
    end = int(nonzero[0]) if nonzero.size else codes.size
    return codes[:end].tobytes().decode("utf-32-le", "surrogatepass")
