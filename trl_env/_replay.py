"""Replay a training run: read the episodes it saved, print them, and score them again.

``trl-env train --save-rollouts`` saves every episode of every GRPO step in the run folder
(:mod:`trl_env._rollout_records`). This module reads them back: :func:`load_run` opens a run,
:func:`select_episodes` picks episodes (a step, the worst or best ones), :func:`format_episode`
turns one into a readable transcript, and :func:`rescore` plays every saved episode's actions
again in a fresh env and compares the rewards: the check to run after changing an env or its
reward function (do the runs you trained still score the same?). ``trl-env replay`` is the
command line of all four.

Example:
    >>> record = {"step": 1, "env_id": "TextGuessNumber-v0", "seed": 7, "env_kwargs": {},
    ...     "actions": ["[50]"], "rewards": [0.0], "ended_by": "max_turns", "error": None}
    >>> rescore([record]).matching
    1
    >>> report = rescore([{**record, "rewards": [1.0]}])
    >>> report.differing[0].index, report.differing[0].new_rewards
    (0, [0.0])
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trl_env._configs import env_kwargs_field
from trl_env._rescore import TOLERANCE, EpisodeDifference, RescoreReport, rescore
from trl_env._rollout_records import ROLLOUTS_DIR, read_rollouts, rollout_steps
from trl_env.error import UsageError

__all__ = [
    "TOLERANCE",
    "EpisodeDifference",
    "ReplayConfig",
    "RescoreReport",
    "Run",
    "format_episode",
    "load_run",
    "rescore",
    "select_episodes",
]

CONFIG_FILE = "train_config.json"
"""The file that marks a folder as a ``trl-env train`` run (every resolved setting)."""

DEFAULT_LIMIT = 4
"""Transcripts ``trl-env replay`` prints unless told otherwise."""

_ENV_ERROR_PREFIX = "[environment error"


@dataclass
class ReplayConfig:
    """Settings of ``trl-env replay`` (every option of the command is one field)."""

    run: str = field(
        default="",
        metadata={"help": "a run folder of `trl-env train --save-rollouts`", "positional": "RUN"},
    )
    step: int | None = field(
        default=None,
        metadata={
            "help": "the saved step to show or rescore (default: the last one; --rescore: all)"
        },
    )
    all_steps: bool = field(
        default=False, metadata={"help": "pick transcripts from every saved step, not one"}
    )
    worst: bool = field(default=False, metadata={"help": "the episodes of lowest return"})
    best: bool = field(default=False, metadata={"help": "the episodes of highest return"})
    limit: int | None = field(
        default=None, metadata={"help": f"transcripts to print (default: {DEFAULT_LIMIT})"}
    )
    rescore: bool = field(
        default=False,
        metadata={
            "help": "play every saved episode's actions again and compare the rewards; exit 1 "
            "if any differ"
        },
    )
    env_kwargs: dict[str, Any] = env_kwargs_field(
        "gym.make keyword arguments over the saved ones, as JSON (--rescore)"
    )
    step_timeout: float | None = field(
        default=None,
        metadata={"help": "seconds one reset or step may take under --rescore (default: no limit)"},
    )
    as_json: bool = field(
        default=False,
        metadata={
            "help": "print JSON (the episodes as JSON Lines, or the rescore report)",
            "flag": "--json",
        },
    )

    def __post_init__(self) -> None:
        if not self.run:
            raise UsageError("name the run folder to replay (the --out folder of `trl-env train`)")
        if self.worst and self.best:
            raise UsageError("pass --worst or --best, not both")
        if self.step is not None and self.step < 0:
            raise UsageError(f"--step must be >= 0, got {self.step}")
        if self.step is not None and self.all_steps:
            raise UsageError("pass --step N or --all-steps, not both")
        if self.limit is not None and self.limit < 1:
            raise UsageError(f"--limit must be >= 1, got {self.limit}")
        if self.step_timeout is not None and not self.step_timeout > 0:
            raise UsageError(f"--step-timeout must be a positive number, got {self.step_timeout}")
        if self.rescore and (self.worst or self.best or self.all_steps or self.limit):
            raise UsageError(
                "--worst, --best, --all-steps and --limit pick transcripts to print; --rescore "
                "checks every saved episode (or those of --step N): drop one or the other"
            )
        if self.env_kwargs and not self.rescore:
            raise UsageError("--env-kwargs applies to --rescore: add --rescore")


@dataclass(frozen=True)
class Run:
    """A training run folder that saved its rollouts.

    Attributes:
        path: The run folder.
        config: Its ``train_config.json`` (every setting of the run); empty for a folder
            that holds only rollouts (saved by ``RecordingGRPOTrainer(save_rollouts_to=...)``).
        steps: The steps whose rollouts it saved, in order.
    """

    path: Path
    config: dict[str, Any]
    steps: list[int]


def load_run(path: str | os.PathLike[str]) -> Run:
    """Open the run folder ``path`` of ``trl-env train --save-rollouts``.

    Raises:
        UsageError: ``path`` is not a folder, not a trl-env run (no ``train_config.json``), or
            a run that saved no rollouts; the message says what to do.
    """
    folder = Path(path)
    if not folder.exists():
        raise UsageError(
            f"{folder} does not exist: pass the folder of a training run (the --out of "
            "`trl-env train --save-rollouts`)"
        )
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder: pass the --out folder of `trl-env train`")
    config_path = folder / CONFIG_FILE
    if not config_path.is_file():
        if rollout_steps(folder):
            # Saved by a RecordingGRPOTrainer of the user's own (the library, not the CLI).
            return Run(folder, {}, rollout_steps(folder))
        raise UsageError(
            f"{folder} is not a trl-env run (no {CONFIG_FILE}): pass the --out folder of "
            "`trl-env train`"
        )
    try:
        config = json.loads(config_path.read_text("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UsageError(
            f"{config_path} is not valid JSON ({error}): is it a trl-env run?"
        ) from None
    steps = rollout_steps(folder)
    if not steps:
        raise UsageError(
            f"{folder} saved no rollouts (no {ROLLOUTS_DIR}/step-N.jsonl "
            "files): train with --save-rollouts to save every episode"
        )
    return Run(folder, config if isinstance(config, dict) else {}, steps)


def _steps_text(steps: Sequence[int]) -> str:
    if len(steps) <= 10:
        return ", ".join(map(str, steps))
    return f"{steps[0]}, {steps[1]}, ..., {steps[-1]} ({len(steps)} steps)"


def _read(run: Run, step: int | None) -> list[dict[str, Any]]:
    if step is not None and step not in run.steps:
        raise UsageError(
            f"{run.path} saved no rollouts for step {step}; the saved steps are "
            f"{_steps_text(run.steps)}"
        )
    try:
        return read_rollouts(run.path, step)
    except json.JSONDecodeError as error:
        raise UsageError(
            f"a rollouts file of {run.path} is not valid JSON Lines: {error}"
        ) from None


def select_episodes(
    run: Run,
    step: int | None = None,
    *,
    all_steps: bool = False,
    order: str = "saved",
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """The saved records of ``run`` to look at.

    Args:
        run: The run (:func:`load_run`).
        step: The step to read (default: the last saved one).
        all_steps: Read every saved step instead.
        order: ``"saved"`` (as played), ``"worst"`` (lowest return first) or ``"best"``
            (highest first); equal returns keep the saved order (by step, then as played).
        limit: At most this many records (``None``: all).

    Raises:
        UsageError: The run saved no rollouts for ``step`` (the message lists those it saved),
            or a bad ``order``.
    """
    if order not in ("saved", "worst", "best"):
        raise UsageError(f"order must be 'saved', 'worst' or 'best', got {order!r}")
    records = _read(run, None if all_steps else (run.steps[-1] if step is None else step))
    if order != "saved":
        sign = 1.0 if order == "worst" else -1.0
        ranked = sorted(
            enumerate(records),
            key=lambda item: (
                sign * float(item[1].get("episode_return", 0.0)),
                item[1].get("step", 0),
                item[0],
            ),
        )
        records = [record for _, record in ranked]
    return records if limit is None else records[:limit]


# --- transcripts --------------------------------------------------------------------------------


def _number(value: float) -> str:
    return f"{value:+.4g}" if value else "0"


def _indented(text: str) -> str:
    return "\n".join("    " + line for line in str(text).splitlines() or [""])


def _header(record: Mapping[str, Any]) -> list[str]:
    tokens = record.get("tokens") or {}
    advantage = record.get("advantage")
    if isinstance(advantage, list):
        advantage_text = "[" + ", ".join(_number(a) for a in advantage) + "] per turn"
    else:
        advantage_text = "none" if advantage is None else _number(advantage)
    first = (
        f"step {record.get('step')} | {record.get('env_id')} | seed {record.get('seed')} | "
        f"group {record.get('group')}" + (f" | rank {record['rank']}" if record.get("rank") else "")
    )
    second = (
        f"return {float(record.get('episode_return', 0.0)):.4g} | "
        f"{'success' if record.get('success') else 'no success'} | "
        f"{record.get('turns', 0)} turns, ended by {record.get('ended_by')} | "
        f"advantage {advantage_text}"
    )
    if tokens:
        second += (
            f" | tokens: {tokens.get('prompt', 0)} prompt, {tokens.get('completion', 0)} "
            f"completion ({tokens.get('model', 0)} model, {tokens.get('env', 0)} env)"
        )
    lines = [first, second]
    seat = record.get("seat")
    if seat:
        lines.append(
            f"seat {seat.get('seat')} ({'first' if seat.get('role') == 0 else 'second'} mover) "
            f"of game {seat.get('game')} | result {seat.get('result')} | opponent "
            f"{seat.get('opponent')}"
        )
    if record.get("env_kwargs"):
        lines.append(f"env kwargs: {json.dumps(record['env_kwargs'], sort_keys=True)}")
    if record.get("error"):
        lines.append(f"error: {record['error']}")
    return lines


def format_episode(record: Mapping[str, Any]) -> str:
    """A saved episode as readable text: a header, then every message with its role.

    The header gives the step, env, seed, group, return, success, how it ended, the advantage and
    the token counts. Each env message after the first shows the reward of the step it answers
    (and ``invalid`` when the env flagged the action); a model reply cut at the token limit is
    marked so, and the action the env received is shown when it is not the whole reply.

    Example:
        >>> print(format_episode({"step": 2, "env_id": "TextGuessNumber-v0", "seed": 7,
        ...     "group": 0, "episode_return": 0.0, "success": False, "turns": 1,
        ...     "ended_by": "max_turns", "advantage": -0.5, "rewards": [0.0],
        ...     "invalid": [False], "cut": [False], "messages": [
        ...     {"role": "user", "content": "Guess a number from 1 to 100."},
        ...     {"role": "assistant", "content": "Let me see. [50]", "action": "[50]"},
        ...     {"role": "user", "content": "Higher."}]}))
        step 2 | TextGuessNumber-v0 | seed 7 | group 0
        return 0 | no success | 1 turns, ended by max_turns | advantage -0.5
        [env]
            Guess a number from 1 to 100.
        [model]
            Let me see. [50]
          action: [50]
        [env] reward 0
            Higher.
    """
    rewards = list(record.get("rewards") or [])
    invalid = list(record.get("invalid") or [])
    cut = list(record.get("cut") or [])
    lines = _header(record)
    env_turn = model_turn = 0
    for message in record.get("messages") or []:
        role, content = message.get("role"), str(message.get("content", ""))
        if role == "system":
            lines.append("[system]")
        elif role == "assistant":
            marks = " cut at the token limit" if model_turn < len(cut) and cut[model_turn] else ""
            lines.append(f"[model]{marks}")
            model_turn += 1
        else:
            notes = []
            if content.startswith(_ENV_ERROR_PREFIX):
                notes.append("env error")
                if record.get("error") and len(rewards) > max(env_turn - 1, 0):
                    notes.append(f"penalty {_number(float(rewards[-1]))}")
            elif env_turn >= 1 and env_turn - 1 < len(rewards):
                notes.append(f"reward {_number(float(rewards[env_turn - 1]))}")
                if env_turn - 1 < len(invalid) and invalid[env_turn - 1]:
                    notes.append("invalid")
            lines.append("[env]" + (" " + ", ".join(notes) if notes else ""))
            env_turn += 1
        lines.append(_indented(content))
        action = message.get("action")
        if role == "assistant" and action is not None and str(action) != content:
            lines.append(f"  action: {action}")
    return "\n".join(lines)
