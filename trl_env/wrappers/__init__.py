"""Gymnasium wrappers for text environments; they compose with gymnasium's own wrappers.

Make any env with ``Discrete`` actions a text env (observation -> text, free text -> action)::

    env = gym.make("FrozenLake-v1", is_slippery=False)
    env = DescribeObservation(env, describe)            # observation -> text
    env = ParseAction(env, ["left", "down", "right", "up"])  # "[left]" -> 0, feedback otherwise
    env = PrefixFirstObservation(env, "Reach the goal without falling in a hole.")

The two halves are separate wrappers, named like gymnasium's (``<Verb><Target>``), because they
are useful apart: :class:`DescribeObservation` alone gives an LLM a view of any env, and
:class:`ParseAction` alone fits an env that already speaks text but takes discrete actions.

Then, on top of ``gym.make`` (outside ``TimeLimit``), like gymnasium's ``RecordEpisodeStatistics``:
:class:`RecordTranscript`, :class:`PenalizeInvalidActions`, :class:`LimitInvalidActions`,
:class:`CapObservationLength`. Every wrapper records its constructor arguments
(``gymnasium.utils.RecordConstructorArgs``), so ``gym.make(env.spec)`` rebuilds the whole stack.
See ``docs/wrapping_your_env.md``.
"""

from __future__ import annotations

from trl_env.wrappers._cap_observation_length import CapObservationLength
from trl_env.wrappers._describe_observation import DescribeObservation
from trl_env.wrappers._limit_invalid_actions import LimitInvalidActions
from trl_env.wrappers._parse_action import ParseAction
from trl_env.wrappers._penalize_invalid_actions import PenalizeInvalidActions
from trl_env.wrappers._prefix_first_observation import PrefixFirstObservation
from trl_env.wrappers._record_transcript import RecordTranscript, Turn

__all__ = [
    "CapObservationLength",
    "DescribeObservation",
    "LimitInvalidActions",
    "ParseAction",
    "PenalizeInvalidActions",
    "PrefixFirstObservation",
    "RecordTranscript",
    "Turn",
]
