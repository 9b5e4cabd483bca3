"""Returns-to-go and their normalization within GRPO groups: the arithmetic of turn credit
(:mod:`trl_env.trl._credit`, whose docstring gives the formulas and why), without torch.

Example:
    >>> returns_to_go([-0.1, 0.0, 1.0], gamma=0.5)
    [0.15, 0.5, 1.0]
    >>> normalize_returns([[1.0], [0.0]], group_size=2)
    [[0.707...], [-0.707...]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from trl_env.trl._step_group_credit import STD_EPS as _EPS

__all__ = ["normalize_returns", "returns_to_go"]


def returns_to_go(
    rewards: Sequence[float], gamma: float = 1.0, turns: int | None = None
) -> list[float]:
    """The discounted return-to-go of each turn: ``G_t = sum_{j >= t} gamma^(j - t) * r_j``.

    Args:
        rewards: The step rewards of one episode, in order (one per env step).
        gamma: The discount, in ``[0, 1]`` (0: each turn's own reward only).
        turns: How many turns to return (default ``len(rewards)``). A turn with no reward of its
            own (the last turn, when the token budget cut it before the env could answer) gets
            0; rewards after the last turn still count in the returns of earlier turns.

    Returns:
        One return per turn.

    Example:
        >>> returns_to_go([-0.1, 0.0, 1.0], gamma=0.5)
        [0.15, 0.5, 1.0]
        >>> returns_to_go([0.0, 1.0], turns=3)
        [1.0, 1.0, 0.0]
    """
    count = len(rewards) if turns is None else turns
    returns = [0.0] * count
    running = 0.0
    for step in reversed(range(len(rewards))):
        running = float(rewards[step]) + gamma * running
        if step < count:
            returns[step] = running
    return returns


def normalize_returns(
    returns: Sequence[Sequence[float]],
    group_size: int,
    scale: str = "group",
    roles: Sequence[int] | None = None,
) -> list[list[float]]:
    """Normalize each turn's return-to-go within its group, each episode weighted once.

    See the module docstring for the formulas and why. ``returns`` holds the returns of whole
    groups, one group being ``group_size`` consecutive episodes (the order ``GRPOTrainer`` uses).

    Args:
        returns: Per episode, the return-to-go of each turn (at least one value per episode).
        group_size: Episodes per group (``num_generations``).
        scale: ``"group"``: divide by the group's std; ``"batch"``: by the std of all episodes
            around the batch mean; ``"none"``: do not divide (``GRPOConfig.scale_rewards``).
        roles: Per episode, its role in a two-player game (0: moved first, 1: moved second):
            each role of a group is normalized on its own, with its own mean and std (with
            ``"batch"``, the std of that role's episodes in the batch), so the first and the
            second player each get their own baseline. ``None``: one role.

    Returns:
        The advantages, in the shape of ``returns``. Groups of one episode get 0 (no baseline),
        like TRL's; so does a role that has one episode in its group.

    Raises:
        ValueError: ``len(returns)`` is not a multiple of ``group_size``, an episode has no value,
            or ``scale`` is unknown.

    Example:
        >>> # Terminal reward only, gamma 1: exactly GRPO's advantages, on every turn.
        >>> normalize_returns([[1.0, 1.0, 1.0], [0.0, 0.0]], group_size=2)
        [[0.707..., 0.707..., 0.707...], [-0.707..., -0.707...]]
        >>> # Self-play: the first movers (role 0) won 1 and 0, the second movers lost.
        >>> normalize_returns([[1.0], [-1.0], [0.0], [0.0]], group_size=4, roles=[0, 1, 0, 1])
        [[0.707...], [-0.707...], [-0.707...], [0.707...]]
    """
    if roles is not None:
        return _normalize_per_role(returns, group_size, scale, roles)
    if scale not in ("group", "batch", "none"):
        raise ValueError(f"scale must be 'group', 'batch' or 'none', got {scale!r}")
    if group_size < 1 or len(returns) % group_size:
        raise ValueError(
            f"{len(returns)} episodes do not make whole groups of {group_size} (num_generations)"
        )
    if any(len(episode) == 0 for episode in returns):
        raise ValueError("every episode needs at least one return-to-go")
    if group_size < 2:
        return [[0.0] * len(episode) for episode in returns]
    batch_std = _weighted_std(returns, _weighted_mean(returns)) if scale == "batch" else 0.0
    advantages: list[list[float]] = []
    for start in range(0, len(returns), group_size):
        group = returns[start : start + group_size]
        mean = _weighted_mean(group)
        std = None  # scale == "none"
        if scale == "group":
            std = _weighted_std(group, mean)
        elif scale == "batch":
            std = batch_std
        for episode in group:
            centred = [value - mean for value in episode]
            advantages.append(centred if std is None else [c / (std + _EPS) for c in centred])
    return advantages


def _normalize_per_role(
    returns: Sequence[Sequence[float]], group_size: int, scale: str, roles: Sequence[int]
) -> list[list[float]]:
    """:func:`normalize_returns` of each role of each group on its own (same checks)."""
    if len(roles) != len(returns):
        raise ValueError(f"got roles for {len(roles)} episodes, returns for {len(returns)}")
    normalize_returns(returns, group_size, scale)  # the same checks, on the whole batch
    advantages: list[list[float]] = [[0.0] * len(episode) for episode in returns]
    for role in sorted(set(roles)):
        mine = [i for i, r in enumerate(roles) if r == role]
        batch_std = 0.0
        if scale == "batch":
            played = [returns[i] for i in mine]
            batch_std = _weighted_std(played, _weighted_mean(played))
        for start in range(0, len(returns), group_size):
            members = [i for i in mine if start <= i < start + group_size]
            if len(members) < 2:  # no baseline for a lone episode: 0, as for a group of one
                continue
            group = [returns[i] for i in members]
            mean = _weighted_mean(group)
            std = {"group": _weighted_std(group, mean), "batch": batch_std}.get(scale)
            for i in members:
                centred = [value - mean for value in returns[i]]
                advantages[i] = centred if std is None else [c / (std + _EPS) for c in centred]
    return advantages


def _weighted_mean(episodes: Sequence[Sequence[float]]) -> float:
    return sum(sum(e) / len(e) for e in episodes) / len(episodes)


def _weighted_std(episodes: Sequence[Sequence[float]], mean: float) -> float:
    if len(episodes) < 2:
        return 0.0
    squares = sum(sum((v - mean) ** 2 for v in e) / len(e) for e in episodes)
    return math.sqrt(squares / (len(episodes) - 1))  # Bessel-corrected, like TRL's nanstd
