"""Tasks: which environment, which seed, which kwargs; and the datasets that carry them.

``GRPOTrainer`` passes only the ``prompt`` column to a ``rollout_func``, so the prompt itself must
identify the task. :func:`make_dataset` writes each task into its prompt as a conversational
message with an extra ``trl_env_task`` field (JSON); chat templates ignore unknown message keys, so
the same dataset also works with TRL's ``environment_factory`` (which receives the ``env_id``,
``seed`` and ``env_kwargs`` columns in ``reset(**row)``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any

import numpy as np

from trl_env._checks import check_text_env
from trl_env._episode import TASK_KEY, Task
from trl_env.error import TaskSpecError, UsageError

__all__ = ["TASK_KEY", "Task", "make_dataset", "task_from_prompt"]


def task_from_prompt(prompt: Any) -> Task:
    """Recover the :class:`Task` from a prompt made by :func:`make_dataset`.

    Accepts the conversational prompt (a list of messages, one of which has a ``trl_env_task``
    field), a single such message, a task JSON string, or a mapping with ``env_id`` and ``seed``.

    Raises:
        TaskSpecError: If the prompt does not identify a task, with what to do instead.
    """
    payload: Any = None
    if isinstance(prompt, list):
        for message in reversed(prompt):
            if isinstance(message, Mapping) and message.get(TASK_KEY):
                payload = message[TASK_KEY]
                break
    elif isinstance(prompt, Mapping):
        payload = prompt.get(TASK_KEY, prompt)
    elif isinstance(prompt, str) and prompt.lstrip().startswith("{"):
        payload = prompt
    if isinstance(payload, str):
        try:
            payload = json.loads(payload)
        except json.JSONDecodeError as error:
            raise TaskSpecError(
                f"task JSON in the prompt is malformed ({error}): {payload!r:.200}"
            ) from None
    if not isinstance(payload, Mapping) or "env_id" not in payload or "seed" not in payload:
        raise TaskSpecError(
            f"the prompt {prompt!r:.200} does not identify a trl-env task. The rollout only sees the "
            "dataset's 'prompt' column, so build the dataset with "
            "trl_env.make_dataset(env_ids, num_tasks) (or put "
            f'{{"role": "user", "content": "", "{TASK_KEY}": Task(...).to_json()}} in each prompt).'
        )
    kwargs = payload.get("kwargs") or {}
    if not isinstance(kwargs, Mapping):
        raise TaskSpecError(f"task kwargs must be a mapping, got {kwargs!r:.200}")
    try:  # an int, or a string (datasets made before seeds were ints): hashed once, in Task
        return Task(str(payload["env_id"]), payload["seed"], dict(kwargs))
    except (TypeError, ValueError) as error:
        raise TaskSpecError(
            f"the task's seed must be an int in [0, 2**63 - 1] or a string ({error})"
        ) from None


def _weights(env_ids: Mapping[str, Any]) -> tuple[list[str], np.ndarray]:
    ids, weights = list(env_ids), list(env_ids.values())
    for env_id, weight in zip(ids, weights, strict=True):
        if isinstance(weight, bool) or not isinstance(weight, Real) or not math.isfinite(weight):
            raise UsageError(
                f"env_ids: the weight of {env_id!r} must be a finite number >= 0, got {weight!r}"
            )
        if weight < 0:
            raise UsageError(f"env_ids: the weight of {env_id!r} is negative ({weight})")
    total = float(sum(weights))
    if total <= 0:
        raise UsageError("env_ids: the weights sum to 0; give at least one env a positive weight")
    return ids, np.asarray(weights, dtype=float) / total


def _check_arguments(ids: Sequence[Any], num_tasks: Any, seed: Any, env_kwargs: Any) -> None:
    if not ids:
        raise UsageError("env_ids is empty: pass one registered ID, a list, or a dict of weights")
    if isinstance(num_tasks, bool) or not isinstance(num_tasks, int) or num_tasks < 1:
        raise UsageError(f"num_tasks must be a positive int, got {num_tasks!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UsageError(f"seed must be an int >= 0, got {seed!r}")
    if "env_kwargs" in env_kwargs:
        raise UsageError(
            "make_dataset takes the env's kwargs as keyword arguments, not as env_kwargs=...: "
            "write make_dataset(env_id, n, **{...}) (for example make_dataset('TextWordle-v0', "
            "8, max_guesses=6))"
        )


def make_dataset(
    env_ids: str | Sequence[str] | Mapping[str, float],
    num_tasks: int,
    seed: int = 0,
    **env_kwargs: Any,
) -> Any:
    """Build a ``datasets.Dataset`` of tasks for ``GRPOTrainer``.

    Each row is one task: its ``prompt`` identifies the env ID, the game's seed and the
    ``gym.make`` kwargs, so the rollout needs nothing else. With several IDs the tasks cycle through
    them (a mixed dataset, in a seeded shuffled order); with a dict ``{env_id: weight}`` each task's
    env is drawn with probability proportional to its weight (weight 0: never). Every row also has
    ``env_id``, ``seed`` and ``env_kwargs`` (JSON) columns, for reward functions and for
    ``environment_factory``.

    Every ID is checked now (registered, a text env, accepting ``env_kwargs``), so a mistake
    fails here and not at the first rollout.

    Args:
        env_ids: One registered ID, several, or a dict of weights.
        num_tasks: Number of rows (tasks).
        seed: Seed of the task seeds: the same arguments give the same dataset on any machine.
        **env_kwargs: Constructor kwargs applied to every task (for example ``max_guesses=6``).

    Returns:
        A ``datasets.Dataset`` with columns ``prompt``, ``env_id``, ``seed``, ``env_kwargs``.

    Raises:
        trl_env.error.UsageError: An unknown ID (with a "Did you mean" hint), a non-text env, a
            kwarg the env does not accept, bad weights, or a non-positive ``num_tasks``.

    Example:
        >>> import trl_env
        >>> dataset = trl_env.make_dataset(["TextWordle-v0", "TextWordle-v0"], num_tasks=4)
        >>> dataset.column_names
        ['prompt', 'env_id', 'seed', 'env_kwargs']
        >>> trl_env.trl.task_from_prompt(dataset[0]["prompt"]).env_id
        'TextWordle-v0'
    """
    try:
        import datasets
    except ImportError:  # pragma: no cover - exercised only without the extra
        from trl_env.error import MissingExtraError

        raise MissingExtraError("trl", "make_dataset", "datasets") from None

    ids, weights = _ids_and_weights(env_ids)
    _check_arguments(ids, num_tasks, seed, env_kwargs)
    for env_id in dict.fromkeys(ids):
        check_text_env(env_id, env_kwargs, argument="make_dataset's env kwargs")
    tasks = _draw_tasks(ids, weights, num_tasks, seed, env_kwargs)
    return datasets.Dataset.from_dict(
        {
            "prompt": [task.to_prompt() for task in tasks],
            "env_id": [task.env_id for task in tasks],
            "seed": [task.seed for task in tasks],
            "env_kwargs": [task.kwargs_key for task in tasks],
        }
    )


def _ids_and_weights(
    env_ids: str | Sequence[str] | Mapping[str, float],
) -> tuple[list[str], Any]:
    """The IDs to draw from and their probabilities (None: cycle through them)."""
    if not isinstance(env_ids, str | Mapping | Sequence):
        raise UsageError(
            f"env_ids must be a registered env ID (like 'TextWordle-v0'), a list of IDs or a "
            f"dict {{ID: weight}}, got {env_ids!r:.80}"
        )
    if isinstance(env_ids, Mapping):
        return _weights(env_ids) if env_ids else ([], None)
    return ([env_ids] if isinstance(env_ids, str) else list(env_ids)), None


def _draw_tasks(
    ids: Sequence[str], weights: Any, num_tasks: int, seed: int, env_kwargs: dict[str, Any]
) -> list[Task]:
    """``num_tasks`` tasks: envs in a seeded shuffled cycle (or drawn by ``weights``), each with a
    seed drawn from ``seed``'s generator (the same on any machine)."""
    rng = np.random.default_rng(seed)
    if weights is None:
        order = rng.permutation(num_tasks) % len(ids)
    else:
        order = rng.choice(len(ids), size=num_tasks, p=weights)
    task_seeds = rng.integers(0, 2**31 - 1, size=num_tasks)
    return [
        Task(ids[int(i)], int(s), dict(env_kwargs)) for i, s in zip(order, task_seeds, strict=True)
    ]
