"""Tasks: which environment, which seed, which kwargs; and the datasets that carry them.

``GRPOTrainer`` passes only the ``prompt`` column to a ``rollout_func``, so the prompt itself must
identify the task. :func:`make_dataset` writes each task into its prompt as a conversational
message with an extra ``trl_env_task`` field (JSON); chat templates ignore unknown message keys, so
the same dataset also works with TRL's ``environment_factory`` (which receives the ``env_id``,
``seed`` and ``env_kwargs`` columns in ``reset(**row)``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from trl_env.error import TaskSpecError

__all__ = ["TASK_KEY", "Task", "make_dataset", "task_from_prompt"]

TASK_KEY = "trl_env_task"
"""Message field of a dataset prompt that holds the task as JSON."""


@dataclass(frozen=True)
class Task:
    """One episode to play: a registered env ID, the seed of the game, and ``gym.make`` kwargs.

    Attributes:
        env_id: A registered gymnasium ID, e.g. ``"TextWordle-v0"``.
        seed: The protocol seed (a string; numeric strings are used as integer seeds).
        kwargs: Keyword arguments for ``gym.make``.
    """

    env_id: str
    seed: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """Serialise to the JSON stored in a prompt (keys sorted, so equal tasks are equal text)."""
        return json.dumps(
            {"env_id": self.env_id, "seed": self.seed, "kwargs": dict(self.kwargs)}, sort_keys=True
        )

    @property
    def kwargs_key(self) -> str:
        """A hashable key for the ``gym.make`` kwargs (envs are pooled per ID and kwargs)."""
        return json.dumps(dict(self.kwargs), sort_keys=True)

    def to_prompt(self) -> list[dict[str, str]]:
        """The conversational prompt that identifies this task (the content itself stays empty)."""
        return [{"role": "user", "content": "", TASK_KEY: self.to_json()}]


def _check_env_id(env_id: str) -> None:
    # gym.spec raises gymnasium's NameNotFound / VersionNotFound with its "Did you mean" hint.
    gym.spec(env_id)


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
    return Task(env_id=str(payload["env_id"]), seed=str(payload["seed"]), kwargs=dict(kwargs))


def make_dataset(
    env_ids: str | Sequence[str],
    num_tasks: int,
    seed: int = 0,
    **env_kwargs: Any,
) -> Any:
    """Build a ``datasets.Dataset`` of tasks for ``GRPOTrainer``.

    Each row is one task: its ``prompt`` identifies the env ID, the game's seed and the
    ``gym.make`` kwargs, so the rollout needs nothing else. With several IDs the tasks cycle through
    them (a mixed dataset, in a seeded shuffled order). Every row also has ``env_id``, ``seed`` and
    ``env_kwargs`` (JSON) columns, for reward functions and for ``environment_factory``.

    Args:
        env_ids: One registered ID or several.
        num_tasks: Number of rows (tasks).
        seed: Seed of the task seeds: the same arguments give the same dataset on any machine.
        **env_kwargs: ``gym.make`` kwargs applied to every task (for example ``max_guesses=6``).

    Returns:
        A ``datasets.Dataset`` with columns ``prompt``, ``env_id``, ``seed``, ``env_kwargs``.

    Raises:
        gymnasium.error.NameNotFound: For an unknown ID, with gymnasium's "Did you mean" hint.
        ValueError: If ``num_tasks`` is not positive or no ID is given.

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

    ids = [env_ids] if isinstance(env_ids, str) else list(env_ids)
    if not ids:
        raise ValueError("env_ids is empty: pass one registered ID or a list of them")
    if not isinstance(num_tasks, int) or num_tasks < 1:
        raise ValueError(f"num_tasks must be a positive int, got {num_tasks!r}")
    for env_id in dict.fromkeys(ids):
        _check_env_id(env_id)
    rng = np.random.default_rng(seed)
    order = rng.permutation(num_tasks) % len(ids)
    task_seeds = rng.integers(0, 2**31 - 1, size=num_tasks)
    tasks = [
        Task(env_id=ids[int(i)], seed=str(int(s)), kwargs=dict(env_kwargs))
        for i, s in zip(order, task_seeds, strict=True)
    ]
    return datasets.Dataset.from_dict(
        {
            "prompt": [task.to_prompt() for task in tasks],
            "env_id": [task.env_id for task in tasks],
            "seed": [task.seed for task in tasks],
            "env_kwargs": [task.kwargs_key for task in tasks],
        }
    )
