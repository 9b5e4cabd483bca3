"""Seeds: the protocol's string seeds as gymnasium's integer seeds, and fresh seeds.

A :class:`trl_env._episode.Task` holds an int seed; a string seed (the protocol's
``reset(seed: str)``, a dataset or record written before seeds were ints) is mapped with
:func:`seed_to_int` once, where it comes in.
"""

from __future__ import annotations

import hashlib

import numpy as np

__all__ = ["fresh_seed", "seed_to_int"]

_MAX_SEED = 2**63 - 1


def seed_to_int(seed: str | int) -> int:
    """Map a protocol seed to a non-negative integer seed, identically on every machine.

    Numeric strings (``"42"``) map to themselves so users can reason about them; any other
    string is hashed with BLAKE2b (Python's ``hash`` is salted per process, so it cannot be used).

    Args:
        seed: A string seed, or an int (returned unchanged if non-negative).

    Returns:
        An integer in ``[0, 2**63 - 1]``.

    Example:
        >>> seed_to_int("42")
        42
        >>> seed_to_int("wordle-day-1") == seed_to_int("wordle-day-1")
        True
    """
    if isinstance(seed, bool):
        raise TypeError(f"seed must be a str or int, got {seed!r}")
    if isinstance(seed, int):
        if 0 <= seed <= _MAX_SEED:
            return seed
        raise ValueError(f"integer seeds must be in [0, 2**63 - 1], got {seed}")
    if not isinstance(seed, str):
        raise TypeError(f"seed must be a str or int, got {type(seed).__name__}: {seed!r}")
    text = seed.strip()
    if text.isascii() and text.isdigit() and int(text) <= _MAX_SEED:
        return int(text)
    digest = hashlib.blake2b(seed.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") & _MAX_SEED


def fresh_seed() -> int:
    """A seed for a fresh game, from the operating system's entropy.

    For an episode asked to play "any game" (``seed=None``): it is reset with this seed, which
    its record keeps, so the game can be played again.

    Example:
        >>> 0 <= fresh_seed() < 2**31
        True
    """
    return int(np.random.SeedSequence().generate_state(1)[0] >> 1)  # 31 bits: short to read
