"""Up-front checks of env IDs and kwargs, shared by ``trl-env eval``/``play``, ``make_dataset``,
``make_rollout_func`` and the registration helpers, so a mistake fails at once with a message
that names the argument and the fix, not at the first rollout."""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from trl_env._adapters import is_text_space
from trl_env.error import TaskSpecError, UsageError

__all__: list[str] = []


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def _load(path: str) -> Any:
    """The object a ``"module:attr"`` path names."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def env_class(env_id: str) -> Any:
    """The class (or creator) ``env_id`` is registered with, without making an env: what a
    question about the env's kind or its own policies is answered from."""
    from gymnasium.envs.registration import load_env_creator

    entry_point = check_env_id(env_id).entry_point
    return load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point


def check_env_id(env_id: str) -> gym.envs.registration.EnvSpec:
    """The spec of ``env_id``, or a :class:`UsageError` with gymnasium's "Did you mean" hint."""
    if not isinstance(env_id, str):
        raise UsageError(f"an environment ID must be a string like 'TextWordle-v0', got {env_id!r}")
    try:
        return gym.spec(env_id)
    except gym.error.Error as error:
        message = _one_line(str(error))
        suggested = re.search(r"Did you mean: `([^`]+)`\?", message)
        if suggested:  # gymnasium names the env without its version: add the full IDs
            ids = [i for i, spec in gym.registry.items() if spec.name == suggested.group(1)]
            if ids:
                message = message.replace(
                    suggested.group(0), f"Did you mean: `{suggested.group(1)}` ({', '.join(ids)})?"
                )
        else:
            close = difflib.get_close_matches(env_id, list(gym.registry), n=1, cutoff=0.6)
            if close:
                message = message.rstrip(".") + f". Did you mean: {close[0]}?"
        raise UsageError(
            f"unknown environment ID {env_id!r}: {message} "
            "Run 'trl-env list' to see the registered IDs."
        ) from None


def make_text_env(
    env_id: str, env_kwargs: Mapping[str, Any], *, argument: str = "--env-kwargs"
) -> gym.Env[str, str]:
    """``gym.make(env_id, **env_kwargs)``, checked to be a text env (string spaces).

    Raises:
        UsageError: Bad kwargs (naming ``argument``) or an env that is not a text env.
    """
    try:
        env = gym.make(env_id, **env_kwargs)
    except TypeError as error:
        raise UsageError(f"bad {argument} for {env_id}: {_one_line(str(error))}") from None
    if not (is_text_space(env.observation_space) and is_text_space(env.action_space)):
        env.close()
        raise UsageError(
            f"{env_id} is not a text environment (its spaces are {env.observation_space} and "
            f"{env.action_space}); trl-env plays envs with string observations and actions. "
            "Wrap it first (trl_env.wrappers.DescribeObservation and ParseAction, see "
            "docs/wrapping_your_env.md) or register a text env."
        )
    return env


def check_text_env(env_id: str, env_kwargs: Mapping[str, Any], *, argument: str) -> None:
    """Check that ``env_id`` is a registered text env that accepts ``env_kwargs`` (makes it once)."""
    check_env_id(env_id)
    check_env_kwargs(env_id, env_kwargs, argument=argument)
    make_text_env(env_id, env_kwargs, argument=argument).close()


def _constructor(spec: gym.envs.registration.EnvSpec) -> Any:
    entry: Any = spec.entry_point
    if isinstance(entry, str):
        try:
            entry = _load(entry)
        except (ImportError, AttributeError):
            return None
    return entry


def accepted_kwargs(env_id: str) -> frozenset[str] | None:
    """The keyword arguments the constructor of ``env_id`` accepts; ``None`` if it takes any
    (``**kwargs``) or cannot be inspected."""
    constructor = _constructor(gym.spec(env_id))
    try:
        parameters = inspect.signature(constructor).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    )


def check_env_kwargs(
    env_id: str,
    env_kwargs: Mapping[str, Any],
    *,
    argument: str,
    error: type[Exception] = UsageError,
) -> None:
    """Raise ``error`` naming ``argument`` if ``env_kwargs`` has a key the env's constructor does
    not accept (with a "Did you mean" hint)."""
    if not isinstance(env_kwargs, Mapping) or not all(isinstance(k, str) for k in env_kwargs):
        raise error(f"{argument} must be a dict of keyword arguments, got {env_kwargs!r:.200}")
    accepted = accepted_kwargs(env_id)
    if accepted is None:
        return
    unknown = sorted(set(env_kwargs) - accepted)
    if unknown:
        hints = []
        for name in unknown:
            close = difflib.get_close_matches(name, sorted(accepted), n=1)
            hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise error(
            f"{argument}: {env_id} does not accept {', '.join(hints)}; its constructor takes "
            f"{', '.join(sorted(accepted)) or 'no keyword arguments'}"
        )


def check_task_source(env_id: str, env_kwargs: Mapping[str, Any], *, trust: bool) -> None:
    """Check a dataset row's task before ``gym.make`` sees it: a registered ID (no
    ``module:ID`` import) and only the kwargs its env accepts, unless ``trust``.

    Raises:
        TaskSpecError: A row that names a module, an unknown ID or a kwarg the env rejects.
    """
    if trust:
        return
    if ":" in env_id:
        raise TaskSpecError(
            f"dataset row names {env_id!r}, which would import the module "
            f"{env_id.partition(':')[0]!r}; rows may only name registered IDs. Import and "
            "register the env yourself, or pass make_rollout_func(trust_tasks=True) if you "
            "trust the dataset"
        )
    try:
        gym.spec(env_id)
    except gym.error.Error as bad:
        raise TaskSpecError(f"dataset row names an unknown env: {_one_line(str(bad))}") from None
    check_env_kwargs(
        env_id,
        env_kwargs,
        argument=f"the dataset row's kwargs for {env_id}",
        error=TaskSpecError,
    )
