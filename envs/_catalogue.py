"""The catalogue, read from ``gym.registry``: which IDs are trl-env's, and what each one is.

There is no table beside gymnasium's registry: :func:`env_specs` filters ``gym.registry`` the way
gymnasium's own tests do, and :func:`env_source`, :func:`env_description` and
:func:`env_has_oracle` answer from the spec and its entry point's class, without making the env
(so ``trl-env list`` imports neither reasoning-gym nor TextArena).

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> from trl_env.envs import env_description, env_has_oracle, env_source, env_specs
    >>> [spec.id for spec in env_specs("catalogue")][:2]
    ['TextWordle-v0', 'TextFrozenLake-v1']
    >>> spec = gym.spec("TextGuessNumberHard-v0")
    >>> env_source(spec), env_has_oracle(spec)
    ('catalogue', True)
    >>> env_description(spec)
    'Find a secret integer in 1-1000 from higher/lower hints in 10 guesses.'
    >>> env_source(gym.spec("TextArena/Bandit-v0")), env_has_oracle(gym.spec("TextArena/Bandit-v0"))
    ('textarena', False)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import EnvSpec, load_env_creator
from trl_env.envs.bridges import NAMESPACES

__all__ = [
    "SOURCES",
    "env_description",
    "env_has_oracle",
    "env_source",
    "env_specs",
    "registering_own_envs",
]

SOURCES: tuple[str, ...] = ("catalogue", *NAMESPACES, "registered")
"""Where a trl-env ID comes from, in the order ``trl-env list`` shows them: the native catalogue,
a bridged catalogue (named as its extra), or any other env with a trl-env entry point
(``OpenEnv-v0``, :func:`trl_env.register_protocol_env`'s, a user's variant of a catalogue game)."""

_SOURCE_OF_NAMESPACE = {namespace: source for source, namespace in NAMESPACES.items()}
_PROTOCOL_ADAPTER = "trl_env._adapters:ProtocolToGymnasium"
_OWN_IDS: set[str] = set()
"""The IDs that ``import trl_env`` registers (see :func:`registering_own_envs`)."""


@contextmanager
def registering_own_envs() -> Iterator[None]:
    """Note every ID registered inside the block as one of trl-env's own.

    ``gym.registry`` does not say who registered a spec; this is how :func:`env_source` tells
    the catalogue's ``TextGuessNumber-v0`` from a user's ``MyGuess-v0`` that registers the same
    class with other kwargs.
    """
    before = set(gym.registry)
    try:
        yield
    finally:
        _OWN_IDS.update(set(gym.registry) - before)


def _entry_point_module(spec: EnvSpec) -> str:
    entry_point = spec.entry_point
    if isinstance(entry_point, str):
        return entry_point.partition(":")[0]
    return getattr(entry_point, "__module__", None) or ""


def env_source(spec: EnvSpec) -> str:
    """Where ``spec`` comes from, one of :data:`SOURCES`.

    A bridged catalogue's IDs are those of its namespace (``reasoning_gym/``, ``TextArena/``);
    the native catalogue's are the other IDs that ``import trl_env`` registers with a game class
    of ``trl_env.envs``; any other env is ``"registered"``.
    """
    if spec.namespace in _SOURCE_OF_NAMESPACE:
        return _SOURCE_OF_NAMESPACE[spec.namespace]
    if spec.id in _OWN_IDS and _entry_point_module(spec).startswith("trl_env.envs."):
        return "catalogue"
    return "registered"


def env_specs(source: str | None = None) -> list[EnvSpec]:
    """The trl-env specs of ``gym.registry``, by source (:data:`SOURCES` order), then as registered.

    A trl-env spec is one whose entry point is in the ``trl_env`` package: every ID that
    ``import trl_env`` registers, and those of :func:`trl_env.register_protocol_env`.

    Args:
        source: One of :data:`SOURCES` for its specs only, ``None`` for all of them.

    Raises:
        ValueError: For an unknown ``source``, naming the known ones.

    Example:
        >>> import trl_env
        >>> len(env_specs("catalogue")), len(env_specs("textarena"))
        (19, 24)
    """
    if source is not None and source not in SOURCES:
        raise ValueError(f"unknown source {source!r}; choose one of {', '.join(SOURCES)}")
    specs = [
        spec
        for spec in gym.registry.values()
        if _entry_point_module(spec).split(".")[0] == "trl_env"
    ]
    specs.sort(key=lambda spec: SOURCES.index(env_source(spec)))  # stable: registration order
    return [spec for spec in specs if source in (None, env_source(spec))]


def _load(entry_point: Any) -> Any:
    return load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point


def _described(spec: EnvSpec) -> tuple[Any, Mapping[str, Any]]:
    """The class (or factory) that ``spec`` describes, and the keyword arguments it is made with.

    For :func:`trl_env.register_protocol_env`'s specs that is the protocol env inside the adapter.
    """
    kwargs = spec.kwargs or {}
    if spec.entry_point == _PROTOCOL_ADAPTER and "env" in kwargs:
        return _load(kwargs["env"]), kwargs.get("env_kwargs") or {}
    return _load(spec.entry_point), kwargs


def _arguments(target: Callable[..., Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor's defaults, updated with the spec's kwargs."""
    try:
        parameters = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):  # a builtin or C callable: only the kwargs are known
        parameters = []  # type: ignore[assignment]
    defaults = {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}
    return {**defaults, **kwargs}


def _first_doc_line(target: Any) -> str:
    lines = (inspect.getdoc(target) or "").strip().splitlines()
    return lines[0].strip() if lines else ""


def env_description(spec: EnvSpec) -> str:
    """One line on what ``spec``'s env is, from its class, without making the env.

    The class's ``description`` attribute, a one-line template formatted with the arguments the
    env is made with (constructor defaults updated with the spec's kwargs), so every variant
    registered with other kwargs gets a true line of its own; or a classmethod of those
    arguments, for a line that needs class-level data too (a bridged game's line from its table).
    A class without one is described by the first line of its docstring.

    A class that cannot be imported (a missing extra, a broken third-party module) is described
    by the error, so one bad entry point never breaks ``trl-env list``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env_description(gym.spec("TextFrozenLake8x8-v1"))
        "Gymnasium's FrozenLake as text, on the 8x8 map: reach the goal, avoid the holes."
    """
    try:
        target, kwargs = _described(spec)
    except Exception as error:  # an optional extra or a third-party module: say which
        return f"(cannot import {spec.entry_point}: {error})"
    template = getattr(target, "description", None)
    if callable(template):
        return str(template(_arguments(target, kwargs)))
    if isinstance(template, str):
        return template.format_map(_arguments(target, kwargs))
    return _first_doc_line(target) or "(registered with trl-env; no description)"


def env_has_oracle(spec: EnvSpec) -> bool:
    """Whether ``spec``'s env has an oracle, from its entry point's class, without making it.

    :func:`trl_env._policies.has_oracle` asked of the class (what ``gym.make`` would return
    unwrapped). A bridged task or game without a solver is registered with a class that has
    none, so the class answers for every kwargs. A factory that is not a class, or a class that
    cannot be imported, has no oracle to answer for.
    """
    from trl_env._policies import has_oracle  # the play side; imported when first asked

    try:
        target = _load(spec.entry_point)
    except Exception:  # cannot be made either: no oracle to play
        return False
    return isinstance(target, type) and has_oracle(target)
