"""TEMPORARY fallback: per-env oracle and random-policy tables from before env-owned policies.

DELETE THIS MODULE after the merge that gives every catalogue env ``oracle_action()`` and
``random_action(rng)`` methods (the shared contract of trl_env/policies.py); then drop the three
calls of :func:`_legacy_policy` in :mod:`trl_env.policies` and the ``ORACLES`` /
``RANDOM_ACTIONS`` re-exports in :mod:`trl_env.eval`. Nothing else uses it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

__all__: list[str] = []

PolicyFn = Callable[[gym.Env[str, str], dict[str, Any], np.random.Generator], str]


def _legacy_policy(
    env: gym.Env[str, str], kind: str, info: Mapping[str, Any] | None = None
) -> PolicyFn | None:
    """The old table entry for ``env``: ``kind`` is ``"oracle"`` or ``"random"``; ``None`` if
    the tables know nothing for it."""
    spec = env.spec
    if spec is None:
        return None
    if kind == "oracle":
        oracle = find_oracle(spec.id)
        return None if oracle is None else (lambda e, i, rng: oracle(e))
    special = _by_prefix(RANDOM_ACTIONS, spec.name)
    if special is not None:
        return special
    legal = (info or {}).get("legal_moves")
    if legal:
        return lambda e, i, rng: f"[{legal[int(rng.integers(len(legal)))]}]"
    actions = getattr(env.unwrapped, "actions", None)
    if isinstance(actions, Sequence) and actions and all(isinstance(a, str) for a in actions):
        return lambda e, i, rng: f"[{actions[int(rng.integers(len(actions)))]}]"
    return None


ORACLES: dict[str, str | Callable[[gym.Env[str, str]], str]] = {
    "TextWordle": "trl_env.envs.wordle_solver:oracle_action",
}
"""Oracles by env-name prefix (``"TextWordle"`` matches ``TextWordle-v0``): a
``function(env) -> action text`` or its ``"module:function"`` path (imported on first use).
Consulted before the ``oracle_action`` of the env's own module; the longest matching prefix
wins."""


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def _entry_module(spec: gym.envs.registration.EnvSpec) -> str | None:
    """The module that defines the env of ``spec`` (looking through ``register_protocol_env``)."""
    entry: Any = spec.entry_point
    if entry == "trl_env.adapters:ProtocolToGymnasium":
        entry = (spec.kwargs or {}).get("env", entry)
    if isinstance(entry, str):
        return entry.partition(":")[0] or None
    return getattr(entry, "__module__", None)


def _by_prefix(table: Mapping[str, Any], name: str) -> Any:
    matches = [prefix for prefix in table if name.startswith(prefix)]
    return table[max(matches, key=len)] if matches else None


def find_oracle(env_id: str) -> Callable[[gym.Env[str, str]], str] | None:
    """The oracle of ``env_id`` (``function(env) -> action text``), or ``None`` if it has none.

    Looks in :data:`ORACLES` by ID prefix first, then for an ``oracle_action`` that the module
    defining the env defines itself (or lists in its ``__all__``).
    """
    spec = gym.spec(env_id)
    entry = _by_prefix(ORACLES, spec.name)
    if entry is not None:
        return _load(entry) if isinstance(entry, str) else entry
    module_name = _entry_module(spec)
    if module_name is None:
        return None
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return None
    oracle = getattr(module, "oracle_action", None)
    if not callable(oracle):
        return None
    # Defined there, or re-exported on purpose (in __all__): not merely imported for use.
    if getattr(oracle, "__module__", None) == module.__name__:
        return oracle
    return oracle if "oracle_action" in getattr(module, "__all__", ()) else None


# --- random legal-looking actions ---------------------------------------------------------------


def _wordle_random(env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator) -> str:
    from trl_env.envs.wordle import answer_words

    words = answer_words()
    return f"[{words[int(rng.integers(len(words)))]}]"


def _guess_number_random(
    env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator
) -> str:
    game: Any = env.unwrapped
    return f"[{int(rng.integers(game.low, game.high + 1))}]"


def _mastermind_random(
    env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator
) -> str:
    game: Any = env.unwrapped
    code = rng.integers(1, game.num_colors + 1, size=game.code_length).tolist()
    return "[" + " ".join(map(str, code)) + "]"


def _sudoku_random(env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator) -> str:
    game: Any = env.unwrapped
    blanks = [i for i, value in enumerate(game.grid) if value == 0] or [0]
    cell = blanks[int(rng.integers(len(blanks)))]
    digit = int(rng.integers(1, game.size + 1))
    return f"[{cell // game.size + 1} {cell % game.size + 1} {digit}]"


def _countdown_random(
    env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator
) -> str:
    game: Any = env.unwrapped
    numbers = list(game.numbers)
    a, b = rng.choice(len(numbers), size=2, replace=False)
    operator = "+-*/"[int(rng.integers(4))]
    return f"[{numbers[int(a)]} {operator} {numbers[int(b)]}]"


def _hangman_random(env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator) -> str:
    game: Any = env.unwrapped
    tried = set(game.guessed)
    letters = [c for c in "abcdefghijklmnopqrstuvwxyz" if c not in tried] or ["e"]
    return f"[{letters[int(rng.integers(len(letters)))]}]"


RANDOM_ACTIONS: dict[str, PolicyFn] = {
    "TextWordle": _wordle_random,
    "TextGuessNumber": _guess_number_random,
    "TextMastermind": _mastermind_random,
    "TextSudoku": _sudoku_random,
    "TextCountdown": _countdown_random,
    "TextHangman": _hangman_random,
}
"""Random legal-looking replies by env-name prefix, ``function(env, info, rng) -> action text``.
Envs not listed here fall back to the generic rules of :func:`_legacy_policy`."""
