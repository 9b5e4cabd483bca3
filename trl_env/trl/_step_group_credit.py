"""Step-group credit (``credit="step-group"``): turn credit plus a step term that compares the
turns of a GRPO group that answered the same observation.

After GiGPO (Feng et al., "Group-in-Group Policy Optimization for LLM Agent Training", arXiv
2505.10978). Our games are deterministic per seed, so
the episodes of one group (one task) often reach the same state. A *step group* is the set of
model turns of one GRPO group, across all its episodes (and within one episode, if it comes back),
whose **observation** is the same text: the env message the model answered with that turn (the
reset observation for the first turn, then the env's reply to the previous turn). Each turn ``t``
of episode ``i``, with return-to-go ``G_it`` and step group ``S`` of ``k`` turns, gets

    A_it = A^turn_it + A^step_it
    A^step_it = (G_it - mean_S G) / (std_S G + 1e-4)     if k >= 2
    A^step_it = 0                                         if k == 1

where ``A^turn`` is the ``credit="turn"`` advantage of :mod:`trl_env.trl._credit` (same ``gamma``, same returns) and
``mean_S``/``std_S`` are the plain mean and Bessel-corrected std of the ``k`` returns-to-go of the
step group (each turn once; ``scale_rewards="none"``: no division, ``"group"`` and ``"batch"``:
the step group's std). A turn whose observation no other turn of its group saw gets exactly its
``credit="turn"`` advantage, so when no two turns share an observation the two modes are equal.

How it differs from the paper: GiGPO's episode part is GRPO's episode advantage, one value per
episode, from the undiscounted episode return; here it is the turn-credit advantage (each turn's
discounted return-to-go, normalized in the group), so that step-group credit is turn
credit plus a step term and reduces to it exactly when no observation is shared (with
terminal-only rewards and ``gamma=1`` the two episode parts are the same). One ``gamma`` serves
both parts (GiGPO discounts only its step returns, with 0.95). GiGPO's step weight ``omega`` is
1 here, with no option. It groups by the *anchor state*, the env's current state; here
observations are compared as exact text, so an env whose message echoes the last reply ("Yes, E
is in the word") groups by state and by that reply. As in GiGPO, the first turns of a group
always form one step group (same seed, same reset observation): with terminal-only rewards and
``gamma=1`` a first turn's step term equals its GRPO advantage, so it gets that advantage twice.

Nothing here imports torch: :mod:`trl_env.trl._credit` adds these terms to its turn advantages.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

__all__ = ["STD_EPS", "step_group_advantages", "turn_observations"]

STD_EPS = 1e-4
"""TRL's epsilon in ``(reward - mean) / (std + eps)``: the same in every credit mode, so that
the modes agree where they should."""
_EPS = STD_EPS  # the name the formulas use


def step_group_advantages(
    returns: Sequence[Sequence[float]],
    observations: Sequence[Sequence[Hashable]],
    group_size: int,
    scale: str = "group",
) -> list[list[float]]:
    """The step term of step-group credit: each turn's return-to-go, normalized in its step group.

    A step group is the set of turns of one group (``group_size`` consecutive episodes, as in
    :func:`normalize_returns`) that saw the same observation, across episodes and within one.
    For a step group of ``k >= 2`` turns, each gets ``(G - mean) / (std + 1e-4)`` with the plain
    mean and the Bessel-corrected std of its ``k`` returns; a turn alone in its step group gets 0.
    ``credit="step-group"`` adds this to :func:`normalize_returns`' advantages (see the module
    docstring).

    Args:
        returns: Per episode, the return-to-go of each turn.
        observations: Per episode, the observation of each model turn (any hashable: the text the
            model answered). An episode may have fewer observations than returns (one with no
            model turn has one return and none): the turns without one are in no step group.
        group_size: Episodes per group (``num_generations``).
        scale: ``"none"`` centres only; ``"group"`` and ``"batch"`` divide by the step group's std.

    Returns:
        The step terms, in the shape of ``returns``.

    Raises:
        ValueError: ``returns`` and ``observations`` do not have one entry per episode, an episode
            has more observations than returns, ``len(returns)`` is not a multiple of
            ``group_size``, or ``scale`` is unknown.

    Example:
        >>> # Two episodes whose first turns saw the same state "s0"; their second turns did not.
        >>> step_group_advantages([[1.0, 1.0], [0.0, 0.0]], [["s0", "a"], ["s0", "b"]], 2)
        [[0.707..., 0.0], [-0.707..., 0.0]]
    """
    _check_step_groups(returns, observations, group_size, scale)
    advantages = [[0.0] * len(values) for values in returns]
    for start in range(0, len(returns), group_size):
        members: dict[Hashable, list[tuple[int, int]]] = {}
        for episode in range(start, start + group_size):
            for turn, observation in enumerate(observations[episode]):
                members.setdefault(observation, []).append((episode, turn))
        for turns in members.values():
            if len(turns) < 2:
                continue
            values = [returns[i][t] for i, t in turns]
            mean = sum(values) / len(values)
            divisor = 1.0
            if scale != "none":
                variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
                divisor = math.sqrt(variance) + _EPS
            for (i, t), value in zip(turns, values, strict=True):
                advantages[i][t] = (value - mean) / divisor
    return advantages


def _check_step_groups(
    returns: Sequence[Sequence[float]],
    observations: Sequence[Sequence[Hashable]],
    group_size: int,
    scale: str,
) -> None:
    """The errors of :func:`step_group_advantages` (see its ``Raises``)."""
    if scale not in ("group", "batch", "none"):
        raise ValueError(f"scale must be 'group', 'batch' or 'none', got {scale!r}")
    if len(observations) != len(returns):
        raise ValueError(
            f"got observations for {len(observations)} episodes and returns for {len(returns)}"
        )
    if group_size < 1 or len(returns) % group_size:
        raise ValueError(
            f"{len(returns)} episodes do not make whole groups of {group_size} (num_generations)"
        )
    for index, (values, seen) in enumerate(zip(returns, observations, strict=True)):
        if len(seen) > len(values):
            raise ValueError(
                f"episode {index} has {len(seen)} observations but {len(values)} returns-to-go"
            )


def turn_observations(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The observation of each model turn of an episode: its env messages, in order.

    ``messages`` is the rollout's ``episode_messages`` column (:meth:`trl_env.Episode.messages`):
    the env's messages are its ``user`` messages (the reset observation, then the env's reply to
    each step), so model turn ``t`` answered the ``t``-th.

    Example:
        >>> turn_observations([{"role": "user", "content": "Guess."},
        ...     {"role": "assistant", "content": "[5]"}, {"role": "user", "content": "Higher."}])
        ['Guess.', 'Higher.']
    """
    return [str(m.get("content", "")) for m in messages if m.get("role") == "user"]
