"""Rescoring saved episodes: their actions played again in a fresh env, the rewards compared
(private; the public names are in :mod:`trl_env._replay`)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from trl_env.error import UsageError

__all__ = ["TOLERANCE", "EpisodeDifference", "RescoreReport", "rescore"]

TOLERANCE = 1e-9
"""Two rewards differ when they are further apart than this."""


@dataclass(frozen=True)
class EpisodeDifference:
    """A saved episode that the env scores differently now.

    Attributes:
        step: The GRPO step of the episode.
        env_id: Its env.
        seed: Its seed.
        group: Its GRPO group.
        index: 0-based index of the first env step whose reward, or whether the env ended the
            episode there, differs (``0`` also when ``reset`` failed).
        saved_rewards: The rewards the run saved.
        new_rewards: The rewards of the env now (up to where it ended or failed).
        reason: What differs, in words.
    """

    step: int
    env_id: str
    seed: int | str
    group: int | None
    index: int
    saved_rewards: list[float]
    new_rewards: list[float]
    reason: str


@dataclass
class RescoreReport:
    """What :func:`rescore` found.

    Attributes:
        episodes: Saved episodes looked at (skipped ones included).
        steps: Distinct GRPO steps they came from.
        matching: Episodes the env scores the same now.
        differing: The episodes it scores differently, in saved order.
        skipped: Episodes that ended with an env error: not comparable, not replayed.
    """

    episodes: int = 0
    steps: int = 0
    matching: int = 0
    differing: list[EpisodeDifference] = field(default_factory=list)
    skipped: int = 0

    @property
    def ok(self) -> bool:
        """Whether every comparable episode matched."""
        return not self.differing

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON-ready data."""
        return {**dataclasses.asdict(self), "ok": self.ok}

    def summary(self, show: int = 20) -> str:
        """One line, then the first ``show`` differing episodes (one line each)."""
        line = (
            f"rescored {self.episodes} episodes of {self.steps} step{'s' * (self.steps != 1)}: "
            f"{self.matching} match"
        )
        if self.differing:
            line += f", {len(self.differing)} differ"
        if self.skipped:
            line += f", {self.skipped} skipped (ended with an env error: not comparable)"
        lines = [line]
        for difference in self.differing[:show]:
            lines.append(
                f"  step {difference.step} {difference.env_id} seed {difference.seed} "
                f"(group {difference.group}): {difference.reason}"
            )
        if len(self.differing) > show:
            lines.append(f"  ... and {len(self.differing) - show} more (--json lists them all)")
        return "\n".join(lines)


class _Envs:
    """One env per (ID, kwargs), made on first use, reused across episodes."""

    def __init__(self, step_timeout: float | None) -> None:
        from trl_env._stepping import make_stepper

        self.stepper = make_stepper(0, step_timeout)
        self._envs: dict[tuple[str, str], Any] = {}

    def get(self, env_id: str, kwargs: Mapping[str, Any], argument: str) -> Any:
        key = (env_id, json.dumps(dict(kwargs), sort_keys=True))
        if key not in self._envs:
            from trl_env._checks import check_env_id, make_text_env

            check_env_id(env_id)
            try:
                self._envs[key] = make_text_env(env_id, kwargs, argument=argument)
            except ValueError as error:  # a kwarg value the env refuses (UsageError is one too)
                if isinstance(error, UsageError):
                    raise
                raise UsageError(f"bad {argument} for {env_id}: {error}") from None
        return self._envs[key]

    def drop(self, env_id: str, kwargs: Mapping[str, Any]) -> None:
        """Forget an env that failed (it may hold a hung call): the next episode makes a new one."""
        env = self._envs.pop((env_id, json.dumps(dict(kwargs), sort_keys=True)), None)
        if env is not None:
            self.stepper.close_env(env)

    def close(self) -> None:
        for env in self._envs.values():
            self.stepper.close_env(env)
        self._envs.clear()
        self.stepper.shutdown()


def _differs(a: float, b: float) -> bool:
    return not math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE)


def _first_difference(
    record: Mapping[str, Any], index: int, reward: float, ended: bool
) -> str | None:
    """What differs at env step ``index`` of ``record`` now that it gave ``reward`` and
    ``ended`` (``None``: nothing)."""
    saved = record.get("rewards") or []
    last = len(record.get("actions") or []) - 1
    turn = index + 1
    if index >= len(saved) or _differs(float(saved[index]), reward):
        was = f"{float(saved[index]):g}" if index < len(saved) else "none"
        return f"turn {turn}: reward {was} saved, {reward:g} now"
    saved_end = record.get("ended_by") in ("terminated", "truncated")
    if ended and index < last:
        return f"turn {turn}: the env ends the episode here now; it went on to turn {last + 1}"
    if index == last and ended != saved_end:
        ended_by = record.get("ended_by")
        if ended:
            return f"turn {turn}: the env ends the episode here now; it ended by {ended_by}"
        return f"turn {turn}: the episode ended here ({ended_by}); the env goes on now"
    return None


def _replay(
    record: Mapping[str, Any], env: Any, stepper: Any
) -> tuple[list[float], tuple[str, int] | None, bool]:
    """Step ``record``'s actions in ``env``: the new rewards, the first difference (what and
    at which step index) and whether the env failed."""
    from trl_env._rollout_records import record_seed
    from trl_env._stepping import reset_envs, step_envs

    [reset] = reset_envs([(env, record_seed(record))], stepper)
    if reset.error is not None:
        return [], (f"reset failed: {reset.error}", 0), True
    actions = [str(a) for a in record.get("actions") or []]
    new: list[float] = []
    difference: tuple[str, int] | None = None
    for index, action in enumerate(actions):
        [outcome] = step_envs([(env, action)], stepper)
        if outcome.error is not None:
            failed = (f"turn {index + 1}: the env failed: {outcome.error}", index)
            return new, difference or failed, True
        new.append(float(outcome.reward))
        ended = outcome.terminated or outcome.truncated
        if difference is None:
            reason = _first_difference(record, index, float(outcome.reward), ended)
            difference = None if reason is None else (reason, index)
        if ended:
            break
    saved = record.get("rewards") or []
    if difference is None and len(saved) != len(new):
        difference = (f"{len(saved)} rewards saved for {len(actions)} actions", len(new))
    return new, difference, False


def rescore(
    records: Iterable[Mapping[str, Any]],
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    step_timeout: float | None = None,
) -> RescoreReport:
    """Play each saved episode's actions again and compare the rewards with the saved ones.

    Each episode is replayed in ``gym.make(env_id, **record_kwargs, **env_kwargs)`` (one env per
    ID and kwargs, reused), reset with the episode's seed. It matches when every step's reward is
    the same (within :data:`TOLERANCE`) and the env ends the episode (terminated or truncated) at
    the same step as it did (``ended_by`` ``"terminated"`` or ``"truncated"``). An episode that
    ended with an env error is skipped: it is not comparable; so is a seat of a two-player game
    (self-play, an opponent), whose rewards depend on the other seat's moves too.

    Args:
        records: Saved records (:func:`trl_env._replay.select_episodes`, or
            :func:`trl_env._rollout_records.read_rollouts`).
        env_kwargs: ``gym.make`` keyword arguments over each record's own (a changed setting: do
            the saved episodes still score the same under it?).
        step_timeout: Seconds one ``reset`` or ``step`` may take (``None``: no limit); a call
            past it makes the episode differ.

    Returns:
        The report: how many matched, and each differing episode with its first difference.

    Raises:
        UsageError: An env ID that is not registered, or kwargs its env does not accept.
    """
    import trl_env.envs  # noqa: F401  (registers the env IDs)

    report = RescoreReport()
    steps: set[int] = set()
    envs = _Envs(step_timeout)
    argument = "env_kwargs (saved, or from --env-kwargs)"
    try:
        for record in records:
            report.episodes += 1
            steps.add(int(record.get("step", 0)))
            # A seat of a two-player game: its rewards depend on the other seat's moves, which
            # its own actions do not replay.
            if record.get("error") or record.get("seat"):
                report.skipped += 1
                continue
            env_id = str(record["env_id"])
            kwargs = {**(record.get("env_kwargs") or {}), **(env_kwargs or {})}
            env = envs.get(env_id, kwargs, argument)
            new, difference, failed = _replay(record, env, envs.stepper)
            if failed:
                envs.drop(env_id, kwargs)
            if difference is None:
                report.matching += 1
                continue
            reason, index = difference
            report.differing.append(
                EpisodeDifference(
                    step=int(record.get("step", 0)),
                    env_id=env_id,
                    seed=record["seed"],
                    group=record.get("group"),
                    index=index,
                    saved_rewards=[float(r) for r in record.get("rewards") or []],
                    new_rewards=new,
                    reason=reason,
                )
            )
    finally:
        envs.close()
    report.steps = len(steps)
    return report
