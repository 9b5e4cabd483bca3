"""Let an LLM choose a ``Discrete`` action by name, in free text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, SupportsFloat, cast

import gymnasium as gym
from gymnasium import spaces
from gymnasium.core import ActType

from trl_env._parsing import has_whitespace, last_bracketed, quote
from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace
from trl_env.wrappers._text import require_text_observations, widen

__all__ = ["ParseAction"]

# A bare reply may carry the punctuation people (and models) put around a word.
_BARE_STRIP = " \t\r\n.,;:!?'\"`*_"
_MAX_NAME = 200  # longer candidates are not looked up: no action name is that long


def _normalize(name: str) -> str:
    """Case-insensitive, ``-``/``_`` read as spaces, runs of whitespace collapsed."""
    return " ".join(name.casefold().replace("-", " ").replace("_", " ").split())


class ParseAction(gym.Wrapper[str, str, str, ActType], gym.utils.RecordConstructorArgs):
    """Makes a ``Discrete`` action space a free-text one: the reply names the action.

    The action is the last ``[bracketed]`` word of the reply, or the whole reply when it has no
    brackets, matched case-insensitively against ``actions`` (one name per discrete action, in
    index order) and their ``synonyms``; ``-`` and ``_`` count as spaces, so ``[Pick-Up]`` matches
    ``"pick up"``.

    A reply that names no legal action is an *invalid action*. It never raises: the wrapper
    returns, **without stepping the inner env**, an observation that says what was wrong and lists
    the legal actions, a reward of ``-invalid_action_penalty``, ``terminated=truncated=False`` and
    ``info["invalid_action"]=True`` (with ``info["error"]``). Valid steps set
    ``info["invalid_action"]=False`` and ``info["action"]`` (the canonical name). Each key keeps
    one type: ``action`` is left out of invalid steps and ``error`` out of valid ones (so a vector
    env batches them, with its ``_action``/``_error`` masks saying which sub-envs have them). Because
    gymnasium's ``TimeLimit`` sits outside this wrapper (``gym.make`` puts it there), an invalid
    reply still uses up one step of ``max_episode_steps``: a model cannot stall forever, and the
    turn budget is what the model actually spent.

    ``step`` after the episode ended raises :class:`gymnasium.error.ResetNeeded`.

    The inner env must already produce text: wrap it with
    :class:`~trl_env.wrappers.DescribeObservation` first.

    Example:
        >>> import gymnasium as gym
        >>> from trl_env.wrappers import DescribeObservation, ParseAction
        >>> env = gym.make("FrozenLake-v1", is_slippery=False)
        >>> env = DescribeObservation(env, lambda s: f"You are on square {s}.")
        >>> env = ParseAction(env, ["left", "down", "right", "up"], synonyms={"left": ["west"]})
        >>> print(env.reset(seed=0)[0])
        You are on square 0.
        Reply with one action in square brackets: [left], [down], [right] or [up].
        >>> env.step("I will go [Down]")[0]
        'You are on square 4.'
        >>> observation, reward, terminated, truncated, info = env.step("jump")
        >>> print(observation)
        Invalid action: 'jump' is not a legal action. Legal actions: [left], [down], [right], [up]. Reply with one of them in square brackets, like [left].
        >>> reward, info["invalid_action"]
        (-0.1, True)

    Args:
        env: An env with a ``Discrete`` action space and text observations.
        actions: One name per discrete action, in index order (``action_space.start + i``).
        synonyms: Other accepted spellings per name, e.g. ``{"left": ["west", "l"]}``.
        invalid_action_penalty: Reward of an invalid reply is ``-invalid_action_penalty``.
        announce_actions: Append the reply format and legal actions to the first observation.
        max_action_length: ``max_length`` of the action :class:`~trl_env.TextSpace`.
    """

    def __init__(
        self,
        env: gym.Env[str, ActType],
        actions: Sequence[str],
        *,
        synonyms: Mapping[str, Sequence[str]] | None = None,
        invalid_action_penalty: float = 0.1,
        announce_actions: bool = True,
        max_action_length: int = DEFAULT_MAX_LENGTH,
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(
            self,
            actions=actions,
            synonyms=synonyms,
            invalid_action_penalty=invalid_action_penalty,
            announce_actions=announce_actions,
            max_action_length=max_action_length,
        )
        # gymnasium 1.4 types Wrapper.__init__'s env with the wrapper's own types (text actions);
        # this inner env takes ActType, the index of its Discrete action space.
        gym.Wrapper.__init__(self, env)  # type: ignore[misc]
        if not isinstance(env.action_space, spaces.Discrete):
            raise TypeError(
                f"ParseAction needs a Discrete action space, got {env.action_space}; "
                "only envs with a finite set of actions can be played by name"
            )
        require_text_observations(env.observation_space, "ParseAction")
        if isinstance(actions, str) or len(actions) != env.action_space.n:
            raise ValueError(
                f"actions must name each of the {env.action_space.n} discrete actions in "
                f"index order, got {actions!r}"
            )
        if invalid_action_penalty < 0:
            raise ValueError(f"invalid_action_penalty must be >= 0, got {invalid_action_penalty}")
        self.actions: tuple[str, ...] = tuple(actions)
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.announce_actions = announce_actions
        self._start = int(env.action_space.start)
        self._lookup: dict[str, int] = {}
        for index, name in enumerate(self.actions):
            self._add_spelling(name, index)
        for name, others in (synonyms or {}).items():
            if name not in self.actions:
                raise ValueError(
                    f"synonyms for unknown action {name!r}; actions are {self.actions}"
                )
            if isinstance(others, str):
                raise TypeError(f"synonyms[{name!r}] must be a list of strings, not a string")
            for other in others:
                self._add_spelling(other, self.actions.index(name))
        self.legal_actions = ", ".join(f"[{name}]" for name in self.actions)
        """The legal actions as the model should write them: ``"[left], [down], ..."``."""
        self._example = f"[{self.actions[0]}]"
        self._announcement = (
            "Reply with one action in square brackets: "
            + (
                ", ".join(f"[{name}]" for name in self.actions[:-1]) + f" or [{self.actions[-1]}]"
                if len(self.actions) > 1
                else self._example
            )
            + "."
        )
        self.action_space = TextSpace(max_action_length)
        longest_feedback = len(self._feedback("x" * 80))
        extra = len(self._announcement) + 1 if announce_actions else 0
        self.observation_space = widen(env.observation_space, max(extra, longest_feedback))
        self._needs_reset = True

    def _add_spelling(self, spelling: str, index: int) -> None:
        key = _normalize(spelling)
        if not key or len(key) > _MAX_NAME:
            raise ValueError(
                f"action names and synonyms must be 1 to {_MAX_NAME} characters, got {spelling!r}"
            )
        if self._lookup.get(key, index) != index:
            raise ValueError(
                f"{spelling!r} would name two actions ({self.actions[self._lookup[key]]!r} and "
                f"{self.actions[index]!r}); make names and synonyms unique"
            )
        self._lookup[key] = index

    def parse(self, text: Any) -> tuple[int | None, str | None]:
        """Read an action index from a reply.

        Returns:
            ``(index, None)`` with the index into :attr:`actions` (add ``action_space.start`` of
            the inner env for its action), or ``(None, problem)`` saying why nothing was read.
        """
        if not isinstance(text, str):
            return None, f"your reply must be text, not {type(text).__name__}"
        bracketed = last_bracketed(text)
        if bracketed is not None:
            candidate = bracketed.strip()
            if not candidate:
                return None, "the brackets were empty"
        else:
            candidate = text.strip(_BARE_STRIP)
            if not candidate:
                return None, "your reply was empty"
        index = self._lookup.get(_normalize(candidate)) if len(candidate) <= _MAX_NAME else None
        if index is not None:
            return index, None
        if bracketed is None and has_whitespace(candidate):
            return None, "no action found: put one action in square brackets"
        return None, f"{quote(candidate)} is not a legal action"

    def _feedback(self, problem: str) -> str:
        return (
            f"Invalid action: {problem}. Legal actions: {self.legal_actions}. "
            f"Reply with one of them in square brackets, like {self._example}."
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Reset the inner env; the first observation also states the reply format."""
        observation, info = self.env.reset(seed=seed, options=options)
        self._needs_reset = False
        if self.announce_actions:
            observation = f"{observation}\n{self._announcement}"
        return observation, info

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Parse ``action`` and step the inner env, or answer with feedback if it is invalid."""
        if self._needs_reset:
            raise gym.error.ResetNeeded(
                "step() called before reset() or after the episode ended (terminated or "
                "truncated); call reset() to start a new episode"
            )
        index, problem = self.parse(action)
        if problem is not None:
            info = {"invalid_action": True, "error": problem}
            return self._feedback(problem), 0.0 - self.invalid_action_penalty, False, False, info
        assert index is not None
        # The inner env takes the index of its Discrete action space (checked in __init__), which
        # gymnasium 1.4's Wrapper.env annotation gives the wrapper's own (text) action type.
        inner = cast(gym.Env[str, int], self.env)
        observation, reward, terminated, truncated, info = inner.step(self._start + index)
        self._needs_reset = bool(terminated or truncated)
        info = {**info, "invalid_action": False, "action": self.actions[index]}
        return observation, reward, terminated, truncated, info
