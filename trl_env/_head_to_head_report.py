"""The result of a head-to-head eval (``trl-env eval ENV --policy A --opponent B``): wins, draws
and losses of A, its score, each with a 95% Wilson interval, per seat and in total; the table and
the files.

The score is ``(wins + draws / 2) / N`` over the N games that ended with a result. Its interval
is the Wilson interval of that share (draws count half a success): exact for games without
draws, and conservative (wider than needed) with them. A game the env itself broke has no result:
it is counted in ``errors`` and left out of N.

The intervals treat the N games as independent. Two policies that both choose deterministically
(greedy models, deterministic scripts) on a game whose start does not depend on the seed replay
the same game on every seed of a seating: tic-tac-toe greedy against greedy is 2 distinct games
however large N is. ``distinct_games`` counts the games that differ in a move (the seed is not
part of a game's identity: two games with the same moves are one, which undercounts a game whose
hidden state depends on the seed), and the table says so for each env with one per seating.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trl_env._seats import Match
from trl_env._summary import wilson_interval

__all__ = [
    "SEATING",
    "EnvHeadToHead",
    "HeadToHeadReport",
    "PlayedMatch",
    "Tally",
    "distinct_games",
    "format_head_to_head",
    "write_head_to_head",
]

SEATING = "the policy moves first in even episodes (seed+0, seed+2, ...) and second in odd ones"
"""How ``trl-env eval --opponent`` seats the two policies, as results.json says it."""


@dataclass
class Tally:
    """Games of the policy against the opponent: wins, draws, losses (its own), and errors."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    errors: int = 0

    @property
    def games(self) -> int:
        """Games with a result (errors left out)."""
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """``(wins + draws / 2) / games`` (0 with no games)."""
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0

    def add(self, result: str | None) -> None:
        """Count one game by the policy's result (``None``: the game failed)."""
        if result is None:
            self.errors += 1
        else:
            name = {"win": "wins", "draw": "draws", "loss": "losses"}[result]
            setattr(self, name, getattr(self, name) + 1)

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.wins + other.wins,
            self.draws + other.draws,
            self.losses + other.losses,
            self.errors + other.errors,
        )

    def to_json(self) -> dict[str, Any]:
        """The counts, the score, and the 95% Wilson interval of every rate."""
        n = self.games
        record: dict[str, Any] = {
            "games": n,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "errors": self.errors,
        }
        low, high = wilson_interval(self.wins + self.draws / 2, n)  # type: ignore[arg-type]
        record.update(score=self.score, score_ci_low=low, score_ci_high=high)
        for name, count in (("win", self.wins), ("draw", self.draws), ("loss", self.losses)):
            low, high = wilson_interval(count, n)
            record.update({f"{name}_rate": count / n if n else 0.0,
                           f"{name}_ci_low": low, f"{name}_ci_high": high})  # fmt: skip
        return record


@dataclass
class EnvHeadToHead:
    """One env's games, split by the policy's seat: ``first`` (it moved first) and ``second``."""

    env_id: str
    first: Tally = field(default_factory=Tally)
    second: Tally = field(default_factory=Tally)

    @property
    def total(self) -> Tally:
        """Both seats together."""
        return self.first + self.second

    def to_json(self) -> dict[str, Any]:
        """Totals at the top, then ``first`` and ``second`` (the policy's seat)."""
        return {**self.total.to_json(), "first": self.first.to_json(),
                "second": self.second.to_json()}  # fmt: skip


@dataclass
class PlayedMatch:
    """One game of the eval: its index, whether the policy moved first, and the match."""

    episode: int
    policy_first: bool
    match: Match

    @property
    def policy_seat(self) -> int:
        """The seat the policy played."""
        first = self.match.first_seat
        return first if self.policy_first else 1 - first

    @property
    def result(self) -> str | None:
        """The policy's result (``None`` if the game failed)."""
        if self.match.error is not None:
            return None
        return self.match.players[self.policy_seat].result


def distinct_games(matches: Sequence[PlayedMatch]) -> int:
    """How many of ``matches`` differ in a move (or in who moved first).

    Example:
        >>> distinct_games([])
        0
    """
    keys = {
        (
            played.match.task.env_id,
            played.policy_first,
            *(tuple(player.actions) for player in played.match.players),
        )
        for played in matches
    }
    return len(keys)


@dataclass
class HeadToHeadReport:
    """The result of :func:`trl_env._head_to_head.head_to_head`."""

    policy: str
    opponent: str
    seed: int
    episodes_per_env: int
    envs: dict[str, EnvHeadToHead]
    matches: list[PlayedMatch]
    elapsed_s: float
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> Tally:
        """Every env and both seats together."""
        total = Tally()
        for env in self.envs.values():
            total = total + env.total
        return total

    def distinct_games(self, env_id: str | None = None) -> int:
        """Games that differ in a move (:func:`distinct_games`), of one env or all."""
        return distinct_games(
            [m for m in self.matches if env_id is None or m.match.task.env_id == env_id]
        )

    def to_json(self) -> dict[str, Any]:
        """``results.json``: settings, the totals, and per env the totals and each seat's."""
        from trl_env._machine import machine_record
        from trl_env._version import __version__

        threads = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else None
        return {
            "trl_env_version": __version__,
            "machine": machine_record(threads),
            "mode": "head_to_head",
            "policy": self.policy,
            "opponent": self.opponent,
            "seed": self.seed,
            "episodes_per_env": self.episodes_per_env,
            "seating": SEATING,
            **self.settings,
            "env_kwargs": self.env_kwargs,
            "elapsed_s": round(self.elapsed_s, 4),
            **self.total.to_json(),
            "distinct_games": self.distinct_games(),
            "envs": {
                env_id: {**env.to_json(), "distinct_games": self.distinct_games(env_id)}
                for env_id, env in self.envs.items()
            },
        }


def _cell(count: int, n: int) -> str:
    if not n:
        return f"{count}"
    low, high = wilson_interval(count, n)
    return f"{count} ({100 * count / n:.0f}% [{100 * low:.0f}-{100 * high:.0f}])"


def _row(env_id: str, seat: str, tally: Tally) -> tuple[str, ...]:
    record = tally.to_json()
    n = tally.games
    score = f"{record['score']:.3f} [{record['score_ci_low']:.3f}-{record['score_ci_high']:.3f}]"
    return (env_id, seat, str(n), _cell(tally.wins, n), _cell(tally.draws, n),
            _cell(tally.losses, n), score, str(tally.errors))  # fmt: skip


def format_head_to_head(report: HeadToHeadReport) -> str:
    """The result as a plain-text table: per env, the policy's seat (first, second, both)."""
    header = ("env", "policy moves", "games", "wins (95% CI)", "draws", "losses",
              "score (95% CI)", "errors")  # fmt: skip
    rows = []
    for env_id, env in report.envs.items():
        rows += [_row(env_id, "first", env.first), _row("", "second", env.second),
                 _row("", "both", env.total)]  # fmt: skip
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        left = [cells[0].ljust(widths[0]), cells[1].ljust(widths[1])]
        rest = (c.rjust(w) for c, w in zip(cells[2:], widths[2:], strict=True))
        return "  ".join([*left, *rest]).rstrip()

    last = report.seed + report.episodes_per_env - 1
    title = (
        f"policy: {report.policy}   opponent: {report.opponent}   seeds: {report.seed}..{last}"
        "   (the policy moves first in even episodes; score = (wins + draws/2) / games)"
    )
    rule = "-" * len(line(header))
    lines = [title, line(header), rule, *(line(row) for row in rows)]
    # One game per seating is what two deterministic sides give (a randomizing side repeats a
    # game now and then too, but those repeats are independent draws).
    for env_id, env in report.envs.items():
        games, distinct = env.total.games, report.distinct_games(env_id)
        if distinct <= 2 < games + env.total.errors:
            lines.append(
                f"note: {env_id}: only {distinct} of the {games + env.total.errors} games differ "
                "in a move (both sides chose the same moves on every seed, as greedy against "
                f"greedy does): the intervals count them as {games} independent games. For "
                "independent games sample (--temperature and --opponent-temperature above 0) or "
                "play an opponent that randomizes."
            )
    return "\n".join(lines)


def _seat_record(played: PlayedMatch, seat: int, names: tuple[str, str]) -> dict[str, Any]:
    player = played.match.players[seat]
    episode = player.episode
    return {
        "seat": seat,
        "seat_name": player.game.seat_names[seat],
        "player": "policy" if seat == played.policy_seat else "opponent",
        "policy": names[0] if seat == played.policy_seat else names[1],
        "moved_first": seat == played.match.first_seat,
        "result": player.result,
        "episode_return": episode.episode_return,
        "turns": episode.turns,
        "invalid_actions": episode.invalid_actions,
        "ended_by": episode.ended_by or "error",
        "error": episode.error,
        "transcript": episode.transcript,
    }


def write_head_to_head(
    report: HeadToHeadReport, out_dir: str | os.PathLike[str]
) -> tuple[Path, Path]:
    """Write ``results.json`` and ``transcripts.jsonl`` (one line per game, with both seats'
    transcripts, each seat's own conversation) to ``out_dir``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results, transcripts = out / "results.json", out / "transcripts.jsonl"
    results.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    names = (report.policy, report.opponent)
    with transcripts.open("w", encoding="utf-8") as file:
        for played in report.matches:
            task = played.match.task
            record = {
                "env_id": task.env_id,
                "seed": task.seed,
                "episode": played.episode,
                "policy_first": played.policy_first,
                "result": played.result,
                "error": played.match.error,
                "seats": [_seat_record(played, seat, names) for seat in (0, 1)],
            }
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
    return results, transcripts
