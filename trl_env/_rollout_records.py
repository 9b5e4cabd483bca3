"""Saved rollouts of a training run: every episode of every step, as JSON Lines in the run folder.

``trl-env train --save-rollouts`` writes ``<run>/rollouts/step-000001.jsonl`` (one file per GRPO
step, one line per episode); ``trl-env replay`` reads them back. A record is plain JSON, so any
tool can read it too (``datasets.load_dataset("json", data_files="run/rollouts/*.jsonl")``).

The format of a record is in :func:`read_rollouts` (public as ``trl_env.utils.read_rollouts``).

Example:
    >>> from trl_env._episode import Episode, Task
    >>> episode = Episode(Task("TextGuessNumber-v0", 7), rewards=[0.0, 1.0], turns=2,
    ...     success=True, ended_by="terminated", episode_return=1.0, transcript=[
    ...     {"role": "env", "text": "Guess."},
    ...     {"role": "agent", "text": "[50]", "action": "[50]", "stopped": True},
    ...     {"role": "env", "text": "Higher.", "reward": 0.0},
    ...     {"role": "agent", "text": "[75]", "action": "[75]", "stopped": True},
    ...     {"role": "env", "text": "Right!", "reward": 1.0}])
    >>> record = episode_record(episode, step=3, group=0, advantage=0.5, system_prompt=None)
    >>> record["actions"], record["rewards"], record["cut"]
    (['[50]', '[75]'], [0.0, 1.0], [False, False])
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trl_env._episode import Episode
from trl_env._seeding import seed_to_int
from trl_env.error import UsageError

__all__ = [
    "ROLLOUTS_DIR",
    "episode_record",
    "read_rollouts",
    "record_seed",
    "rollout_steps",
    "step_file",
    "write_step",
]

ROLLOUTS_DIR = "rollouts"
"""The folder of a run that holds its saved rollouts."""

_PREFIX, _SUFFIX = "step-", ".jsonl"


def step_file(run_dir: str | os.PathLike[str], step: int) -> Path:
    """The file of ``step``'s rollouts in a run folder (``rollouts/step-000042.jsonl``)."""
    return Path(run_dir) / ROLLOUTS_DIR / f"{_PREFIX}{step:06d}{_SUFFIX}"


def _played_actions(transcript: Sequence[Mapping[str, Any]]) -> list[str]:
    """The actions the env stepped: agent entries followed by an env entry (a reply cut by the
    episode's token budget is recorded but was never played)."""
    actions = []
    for entry, following in itertools.pairwise(transcript):
        if entry["role"] == "agent" and following["role"] == "env" and "reward" in following:
            actions.append(str(entry.get("action", "")))
    return actions


def _messages(transcript: Sequence[Mapping[str, Any]], system_prompt: str | None) -> list[dict]:
    messages: list[dict[str, Any]] = []
    if system_prompt:
        messages.append({"role": "system", "content": system_prompt})
    for entry in transcript:
        if entry["role"] == "env":
            messages.append({"role": "user", "content": str(entry.get("text", ""))})
        else:
            text = entry.get("text", entry.get("action", ""))
            messages.append(
                {"role": "assistant", "content": str(text), "action": str(entry.get("action", ""))}
            )
    return messages


def episode_record(
    episode: Episode,
    *,
    step: int,
    group: int,
    advantage: float | Sequence[float] | None,
    system_prompt: str | None,
    rank: int = 0,
) -> dict[str, Any]:
    """The saved record of one training episode (see the module docstring for its fields).

    Args:
        episode: A played episode (with its transcript and token stream).
        step: The GRPO step it was played for.
        group: Its GRPO group within the step (the index of its task).
        advantage: The advantage it got (one number, or one per model turn).
        system_prompt: The system message the model saw (``None``: none).
        rank: The process that played it.
    """
    transcript = episode.transcript or []
    env_entries = [e for e in transcript[1:] if e["role"] == "env" and "reward" in e]
    model_tokens = int(sum(episode.env_mask))
    if isinstance(advantage, Sequence):
        advantage = [round(float(a), 6) for a in advantage]
    elif advantage is not None:
        advantage = round(float(advantage), 6)
    return {
        "step": step,
        "env_id": episode.env_id,
        "seed": episode.seed,
        "env_kwargs": dict(episode.task.kwargs),
        "group": group,
        "rank": rank,
        "messages": _messages(transcript, system_prompt),
        "actions": _played_actions(transcript),
        "rewards": [float(r) for r in episode.rewards],
        "invalid": [bool(e.get("invalid_action", False)) for e in env_entries],
        "cut": [not e.get("stopped", True) for e in transcript if e["role"] == "agent"],
        "episode_return": float(episode.episode_return),
        "success": bool(episode.success),
        "turns": episode.turns,
        "ended_by": episode.ended_by or "error",
        "error": episode.error,
        "tokens": {
            "prompt": len(episode.prompt_ids),
            "completion": len(episode.completion_ids),
            "model": model_tokens,
            "env": len(episode.completion_ids) - model_tokens,
        },
        "advantage": advantage,
        **({"seat": dict(episode.seat)} if episode.seat is not None else {}),
    }


def record_seed(record: Mapping[str, Any]) -> int:
    """The seed a saved record's episode was reset with.

    Records hold an int. Records saved before seeds were ints hold the task's seed as it was
    given: a numeric string's number (a negative one stood for its string, which was hashed), or
    any other string; those are mapped as the play loop mapped them then
    (:func:`trl_env._seeding.seed_to_int` of the string).

    Example:
        >>> record_seed({"seed": 7}), record_seed({"seed": "7"})
        (7, 7)
        >>> record_seed({"seed": -3}) == record_seed({"seed": "-3"}) == seed_to_int("-3")
        True
    """
    seed = record["seed"]
    if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0:
        return seed_to_int(seed)
    return seed_to_int(str(seed))


def write_step(run_dir: str | os.PathLike[str], step: int, records: Iterable[Mapping]) -> Path:
    """Write one step's records (replacing that step's file: a resumed run plays it again)."""
    path = step_file(run_dir, step)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def rollout_steps(run_dir: str | os.PathLike[str]) -> list[int]:
    """The steps whose rollouts a run saved, in order (empty if it saved none)."""
    folder = Path(run_dir) / ROLLOUTS_DIR
    if not folder.is_dir():
        return []
    steps = []
    for path in folder.glob(f"{_PREFIX}*{_SUFFIX}"):
        number = path.name[len(_PREFIX) : -len(_SUFFIX)]
        if number.isdigit():
            steps.append(int(number))
    return sorted(steps)


def read_rollouts(run_dir: str | os.PathLike[str], step: int | None = None) -> list[dict]:
    """The saved records of one step (``None``: every step, in order).

    A record holds:

    * ``step``, ``env_id``, ``seed`` (the int the env was reset with; :func:`record_seed` also reads
      the string seeds of records saved by earlier versions), ``env_kwargs``, ``group`` (episodes of
      one GRPO group, that is of one task, share it) and ``rank`` (the process that played it);
    * ``messages``: the conversation as the model saw it: the system prompt, the env's turns as
      ``user`` messages, and the model's replies as ``assistant`` messages whose ``content`` is the
      whole reply text (reasoning and markup included) and whose ``action`` is what the env received;
    * ``actions``: the actions the env stepped, in order (what :func:`replay_actions` plays again);
    * ``rewards`` (one per env step), ``invalid`` (per step: the env flagged the action invalid),
      ``cut`` (per model turn: the reply was cut at the token limit instead of ending itself);
    * ``episode_return``, ``success``, ``turns``, ``ended_by``, ``error``;
    * ``tokens``: ``prompt``, ``completion``, ``model`` (sampled) and ``env`` token counts;
    * ``advantage``: what the trainer gave the episode: one number (``credit="episode"``) or one per
      model turn (``credit="turn"``);
    * ``seat`` (self-play and opponent runs only): ``role`` (0: moved first, 1: second), ``seat``
      (its name, such as ``"X"``), ``result``, ``opponent`` and ``game`` (the two seats of one
      self-play game share their step, group and game).

    Raises:
        trl_env.error.UsageError: The run saved no rollouts, or none for ``step``.
    """
    steps = rollout_steps(run_dir)
    if not steps:
        raise UsageError(
            f"{run_dir} holds no saved rollouts (no {ROLLOUTS_DIR}/{_PREFIX}N{_SUFFIX} files): "
            "train with --save-rollouts to save them"
        )
    if step is not None and step not in steps:
        raise UsageError(
            f"{run_dir} saved no rollouts for step {step}: saved steps are "
            f"{steps[0]}..{steps[-1]} ({len(steps)} files)"
        )
    records = []
    for number in steps if step is None else [step]:
        with step_file(run_dir, number).open(encoding="utf-8") as handle:
            records += [json.loads(line) for line in handle if line.strip()]
    return records
