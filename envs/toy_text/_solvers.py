"""Optimal play in gymnasium's toy-text games (private): value iteration, Blackjack strategy."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["basic_strategy", "cached_policy", "value_iteration"]


def value_iteration(
    P: Mapping[int, Mapping[int, Sequence[tuple[float, int, float, bool]]]],
    *,
    gamma: float = 0.99,
    tol: float = 1e-10,
    max_iterations: int = 100_000,
) -> np.ndarray:
    """Optimal greedy policy of a tabular model in gymnasium's toy-text ``P`` format.

    Args:
        P: ``P[state][action] = [(probability, next_state, reward, terminated), ...]``.
        gamma: Discount; below 1 so that, among policies that succeed, shorter ones win.
        tol: Stop when no state value changes by more than this.
        max_iterations: Safety bound on the number of sweeps.

    Returns:
        ``policy[state]``: the best action index (the lowest one among ties).

    Example:
        >>> from gymnasium.envs.toy_text import FrozenLakeEnv
        >>> policy = value_iteration(FrozenLakeEnv(is_slippery=False).P)
        >>> [int(a) for a in policy[:4]]  # 0 left, 1 down, 2 right, 3 up
        [1, 2, 1, 0]
    """
    n_states = len(P)
    n_actions = len(P[0])
    rows = [
        (s, a, p, s2, r, done)
        for s in range(n_states)
        for a in range(n_actions)
        for p, s2, r, done in P[s][a]
    ]
    s, a, p, s2, r, done = (np.array(column) for column in zip(*rows, strict=True))
    index = s * n_actions + a
    expected_reward = np.bincount(index, weights=p * r, minlength=n_states * n_actions)
    keep = p * gamma * (1.0 - done.astype(float))
    values = np.zeros(n_states)
    q = expected_reward
    for _ in range(max_iterations):
        q = expected_reward + np.bincount(
            index, weights=keep * values[s2], minlength=n_states * n_actions
        )
        new_values = q.reshape(n_states, n_actions).max(axis=1)
        if np.max(np.abs(new_values - values)) <= tol:
            values = new_values
            break
        values = new_values
    return q.reshape(n_states, n_actions).argmax(axis=1)


_POLICIES: dict[Hashable, np.ndarray] = {}


def cached_policy(key: Hashable, P: Any) -> np.ndarray:
    """The value-iteration policy of ``P``, computed once per process and ``key``."""
    # Computed once per process and game configuration (never in reset).
    if key not in _POLICIES:
        _POLICIES[key] = value_iteration(P)
    return _POLICIES[key]


def basic_strategy(player_sum: int, dealer_card: int, usable_ace: bool) -> int:
    """Blackjack basic strategy for hit/stick only (infinite deck, dealer stands on 17).

    Args:
        player_sum: The player's total (an usable ace counted as 11).
        dealer_card: The dealer's face-up card, 1 (ace) to 10.
        usable_ace: Whether the player's total counts an ace as 11.

    Returns:
        1 to hit, 0 to stick.

    Example:
        >>> basic_strategy(16, 10, False), basic_strategy(16, 6, False), basic_strategy(18, 9, True)
        (1, 0, 1)
    """
    dealer = 11 if dealer_card == 1 else dealer_card
    if usable_ace:
        if player_sum >= 19:
            return 0
        return int(player_sum <= 17 or dealer >= 9)
    if player_sum >= 17:
        return 0
    if player_sum >= 13:
        return int(dealer >= 7)
    if player_sum == 12:
        return int(not 4 <= dealer <= 6)
    return 1
