"""Gymnasium's toy-text games (FrozenLake, Taxi, CliffWalking, Blackjack) as text environments.

Each env here is the gymnasium game, unchanged, seen through this library's wrappers:
:class:`~trl_env.wrappers.DescribeObservation` (state -> text),
:class:`~trl_env.wrappers.ParseAction` (``"[left]"`` -> action, feedback for anything else) and
:class:`~trl_env.wrappers.PrefixFirstObservation` (the rules). The registered class adds one
sentence per step saying what just happened ("You tried to move right but slipped down.") and
shares its ``np_random`` with the game, so everything is seeded by ``reset(seed=...)``.

The game itself is ``env.unwrapped.game`` (a gymnasium ``FrozenLakeEnv``, ``TaxiEnv``, ...), so
its state and transition table ``P`` are at hand. Each env owns its policies:
``env.unwrapped.oracle_action()`` plays optimally (value iteration on ``P`` for the grid games,
:func:`basic_strategy` for Blackjack) and ``env.unwrapped.random_action(rng)`` plays a uniformly
random legal move; :func:`oracle_action` is the function form of the first.

Layout: ``_adapter`` (the shared text stack and life cycle), ``_solvers`` (value iteration, basic
strategy), and one module per game: ``frozen_lake``, ``cliff_walking``, ``taxi``, ``blackjack``.
"""

from __future__ import annotations

from trl_env.envs.toy_text._adapter import ToyTextEnv, oracle_action
from trl_env.envs.toy_text._solvers import basic_strategy, value_iteration
from trl_env.envs.toy_text.blackjack import TextBlackjackEnv
from trl_env.envs.toy_text.cliff_walking import TextCliffWalkingEnv
from trl_env.envs.toy_text.frozen_lake import TextFrozenLakeEnv
from trl_env.envs.toy_text.taxi import TextTaxiEnv

__all__ = [
    "TextBlackjackEnv",
    "TextCliffWalkingEnv",
    "TextFrozenLakeEnv",
    "TextTaxiEnv",
    "ToyTextEnv",
    "basic_strategy",
    "oracle_action",
    "value_iteration",
]
