"""Demonstrations: episodes played by an env's own policies, saved as a conversational dataset.

Every native env has an *oracle* (its solver) and a *random* policy. :func:`record_demos` plays
episodes with one of them through the same play loop as evaluation and training, and
:func:`write_demos` saves them in ``DIR/demos.jsonl`` (one episode per line) with a dataset card
``DIR/README.md`` whose YAML header points ``datasets`` at that file and records what made them
(``trl_env_demos``: the settings, as a JSON mapping): a folder that ``datasets.load_dataset(DIR)``
and TRL's ``SFTTrainer`` read directly. Each row has ``messages`` (the rollout's system prompt, the env's
turns as ``user``, the policy's replies as ``assistant``) and the episode's ``env_id``, ``seed``,
``episode_return``, ``success``, ``turns`` and ``policy``.

For a two-player game, ``seats=True`` (``trl-env demos --seats``; ``trl-env train --self-play``
and ``--opponent`` warm starts use it) has the policy play **both seats** of each game, as
self-play does, and keeps each seat's own conversation as a row (with its ``seat``): demos of
the game as the model will see it in self-play, from the first mover's side and the second's.

Oracle demos teach the game; random demos teach only the reply format (what a model learns
beyond them is GRPO's). An env's own scripted players (:func:`trl_env._policies.scripted_policies`,
such as Hangman's ``frequency``) play demos by name too. ``trl-env sft`` fine-tunes on them, tokenized exactly as the rollout
presents episodes.

Example:
    >>> import trl_env
    >>> rows = record_demos(["TextGuessNumber-v0"], policy="oracle", episodes=2)
    >>> [m["role"] for m in rows[0]["messages"]][:4]
    ['system', 'user', 'assistant', 'user']
    >>> rows[0]["success"], rows[0]["policy"]
    (True, 'oracle')
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from trl_env._configs import (
    env_ids_field,
    env_kwargs_field,
    max_turns_field,
    seed_field,
    system_prompt_field,
)
from trl_env.error import NoOracleError, UsageError

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "DEMO_SEED_OFFSET",
    "DemosConfig",
    "load_demos",
    "plays_demos",
    "record_demos",
    "write_demos",
]

DEFAULT_SYSTEM_PROMPT = (
    "You are playing a text game. Read each message from the game carefully and reply with your "
    "next move in exactly the format the game asks for."
)
"""The system message of every episode unless told otherwise (rollout, eval, demos, SFT)."""

DEMO_SEED_OFFSET = 1_000_000_000
"""Demo episode ``i`` plays ``reset(seed=DEMO_SEED_OFFSET + seed + i)``: far from the small seeds
that ``trl-env eval`` uses by default, so demos never replay a held-out evaluation game."""

POLICIES = ("oracle", "random")
"""The policies every env may have; an env's own scripted players are named by the env."""


def plays_demos(name: str, env_ids: Sequence[str]) -> bool:
    """Whether ``name`` is a policy that plays demos now (``oracle``, ``random``, or a scripted
    player of every env of ``env_ids``) rather than a folder of recorded demos. A policy's name
    wins over a folder of that name, as ``random`` and ``oracle`` do (``./frequency`` names the
    folder).

    Raises:
        UsageError: ``name`` is a scripted player of other envs (see
            :func:`trl_env._scripted.is_scripted_player`).

    Example:
        >>> plays_demos("frequency", ["TextHangman-v0"]), plays_demos("runs/demos", [])
        (True, False)
    """
    from trl_env._scripted import is_scripted_player

    return name in POLICIES or is_scripted_player(name, env_ids)


@dataclass
class DemosConfig:
    """Settings of ``trl-env demos`` (every option of the command is one field)."""

    env_ids: list[str] = env_ids_field("environment IDs (see `trl-env list --oracles`)")
    policy: str = field(
        default="oracle",
        metadata={
            "help": "who plays: the env's solver (oracle), random well-formed replies (random), "
            "or a scripted player of the env (Hangman: frequency)"
        },
    )
    episodes: int = field(default=32, metadata={"help": "episodes per environment"})
    out: str = field(
        default="demos", metadata={"help": "output folder", "aliases": ["--output-dir"]}
    )
    seed: int = seed_field(
        "seed of the demos: episode i plays reset(seed=1e9 + seed + i), away from eval's seeds"
    )
    max_turns: int | None = max_turns_field("end an episode after this many turns")
    system_prompt: str | None = system_prompt_field(
        DEFAULT_SYSTEM_PROMPT,
        "system message of every episode (the training run must use the same)",
    )
    env_kwargs: dict[str, Any] = env_kwargs_field("gym.make keyword arguments, as JSON")
    seats: bool = field(
        default=False,
        metadata={
            "help": "two-player games: the policy plays both seats of each game and each seat's "
            "conversation is a demo (as self-play sees the game); episodes counts games"
        },
    )

    def __post_init__(self) -> None:
        if self.system_prompt == "":  # --system-prompt "" means no system message
            self.system_prompt = None
        if not self.env_ids:
            raise UsageError("name at least one environment ID (see `trl-env list --oracles`)")
        if not plays_demos(self.policy, self.env_ids):
            raise UsageError(
                f"policy must be oracle, random or a scripted player of every env (Hangman: "
                f"frequency), got {self.policy!r}"
            )
        if self.episodes < 1:
            raise UsageError(f"episodes must be >= 1, got {self.episodes}")
        if self.seed < 0:
            raise UsageError(f"seed must be >= 0, got {self.seed}")


def _check_policy(env_id: str, env: gym.Env[str, str], policy: str) -> None:
    from trl_env._policies import has_oracle

    if policy == "oracle" and not has_oracle(env):
        raise NoOracleError(
            f"{env_id} has no oracle, so it has no oracle demos; use --policy random (format "
            "only), or pick an env from `trl-env list --oracles`"
        )


def record_demos(
    env_ids: str | Sequence[str],
    *,
    policy: str = "oracle",
    episodes: int = 32,
    seed: int = 0,
    max_turns: int | None = None,
    system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
    env_kwargs: dict[str, Any] | None = None,
    seats: bool = False,
) -> list[dict[str, Any]]:
    """Play ``episodes`` episodes of each env with its ``policy``; one dataset row per episode.

    Args:
        env_ids: One registered ID or several.
        policy: ``"oracle"`` (the env's solver), ``"random"`` (random well-formed replies) or
            the name of a scripted player of every env (Hangman's ``"frequency"``).
        episodes: Episodes per env.
        seed: Episode ``i`` plays ``reset(seed=DEMO_SEED_OFFSET + seed + i)``; the random
            policy's generator is seeded with ``seed`` too.
        max_turns: End an episode after this many turns.
        system_prompt: The first message of every conversation, or ``None`` for none.
        env_kwargs: ``gym.make`` keyword arguments for every env.
        seats: Two-player envs only: ``episodes`` games with the policy in both seats, one row
            per seat (first mover first), each with its ``seat``.

    Returns:
        Rows with ``messages``, ``env_id``, ``seed``, ``episode_return``, ``success``,
        ``turns``, ``policy`` (and ``seat`` with ``seats``).

    Raises:
        NoOracleError: ``policy="oracle"`` for an env without an oracle.
        UsageError: A bad argument (the message says what to pass), or ``seats`` with a
            one-player env.
    """
    from trl_env._episode import Episode, Task
    from trl_env._play import run_episodes
    from trl_env._policies import OraclePolicy, RandomPolicy, ScriptedPolicy

    config = DemosConfig(
        env_ids=[env_ids] if isinstance(env_ids, str) else list(env_ids),
        policy=policy,
        episodes=episodes,
        seed=seed,
        max_turns=max_turns,
        system_prompt=system_prompt,
        env_kwargs=dict(env_kwargs or {}),
        seats=seats,
    )
    rows: list[dict[str, Any]] = []
    for env_id in config.env_ids:
        seeds = [DEMO_SEED_OFFSET + seed + i for i in range(episodes)]
        envs = [gym.make(env_id, **config.env_kwargs) for _ in seeds]
        chooser = (
            OraclePolicy() if policy == "oracle"
            else RandomPolicy(seed) if policy == "random"
            else ScriptedPolicy(policy)
        )  # fmt: skip
        tasks = [Task(env_id, s, dict(config.env_kwargs)) for s in seeds]
        try:
            _check_policy(env_id, envs[0], policy)
            if seats:
                played = _seat_episodes(env_id, envs, tasks, chooser, max_turns)
            else:
                played = run_episodes(
                    [Episode(task) for task in tasks], envs, chooser, max_turns=max_turns
                )
        finally:
            for env in envs:
                env.close()
        for episode in played:
            opening = [{"role": "system", "content": system_prompt}] if system_prompt else []
            messages = [*opening, *({"role": m["role"], "content": m["content"]}
                                    for m in episode.messages())]  # fmt: skip
            rows.append({
                "messages": messages,
                "env_id": env_id,
                "seed": episode.seed,
                "episode_return": float(episode.episode_return),
                "success": bool(episode.success),
                "turns": int(episode.turns),
                "policy": policy,
                **({"seat": episode.seat["seat"]} if seats else {}),
            })  # fmt: skip
    return rows


def _seat_episodes(
    env_id: str, envs: Sequence[Any], tasks: Sequence[Any], policy: Any, max_turns: int | None
) -> list[Any]:
    """Each game played by ``policy`` in both seats; each seat's episode (first mover first),
    with its :attr:`~trl_env._episode.Episode.seat`."""
    from trl_env._seats import play_matches
    from trl_env._two_player import is_two_player

    if not is_two_player(envs[0]):
        raise UsageError(
            f"seats=True (--seats) plays both seats of a two-player game, and {env_id} is a "
            "one-player env: drop --seats"
        )
    matches = play_matches(envs, tasks, [(policy, policy)] * len(tasks), max_turns=max_turns)
    episodes = []
    for game, match in enumerate(matches):
        if match.error is not None:
            raise RuntimeError(f"a demo game of {env_id} failed: {match.error}")
        for role, seat in enumerate((match.first_seat, 1 - match.first_seat)):
            player = match.players[seat]
            player.episode.seat = {"role": role, "seat": player.game.seat_names[seat],
                                   "result": player.result, "opponent": "self", "game": game}  # fmt: skip
            episodes.append(player.episode)
    return episodes


_CARD = """---
configs:
- config_name: default
  data_files: demos.jsonl
trl_env_demos: {settings}
---
# {policy} demos of {envs}

{rows} episodes played by `trl-env demos` (success rate {success_rate:.3f}, mean return
{mean_return:.3f}). Each line of `demos.jsonl` is one episode: `messages` (the system prompt, the
env's turns as `user`, the policy's replies as `assistant`), `env_id`, `seed`, `episode_return`,
`success`, `turns`, `policy`. Read it with `datasets.load_dataset("<this folder>")`; warm-start a
model on it with `trl-env sft --model M --demos <this folder>`.
"""
_SETTINGS_KEY = "trl_env_demos: "


def write_demos(rows: Sequence[dict[str, Any]], out: str | Path, config: DemosConfig) -> Path:
    """Write ``rows`` to ``out/demos.jsonl`` and a dataset card with the settings to ``out/README.md``.

    Returns:
        The folder (``datasets.load_dataset(str(folder))`` reads it).
    """
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "demos.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    count = max(len(rows), 1)
    settings = {
        **asdict(config),
        "rows": len(rows),
        "success_rate": sum(r["success"] for r in rows) / count,
        "mean_return": sum(r["episode_return"] for r in rows) / count,
    }
    card = _CARD.format(
        settings=json.dumps(settings),  # JSON is a YAML flow mapping: one line, any characters
        policy=config.policy.capitalize(),
        envs=", ".join(config.env_ids),
        rows=len(rows),
        success_rate=settings["success_rate"],
        mean_return=settings["mean_return"],
    )
    (folder / "README.md").write_text(card, encoding="utf-8")
    return folder


def load_demos(folder: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The rows and settings of a folder written by :func:`write_demos`.

    Raises:
        UsageError: The folder holds no demos (the message says how to make them).
    """
    path = Path(folder)
    card = path / "README.md"
    settings = None
    if card.is_file():
        for line in card.read_text("utf-8").splitlines():
            if line.startswith(_SETTINGS_KEY):
                settings = json.loads(line[len(_SETTINGS_KEY) :])
                break
    if not (path / "demos.jsonl").is_file() or settings is None:
        raise UsageError(
            f"{path} holds no demos (demos.jsonl and a README.md written by trl-env demos); make "
            "them with `trl-env demos ENV --policy oracle --out DIR`"
        )
    rows = [json.loads(line) for line in (path / "demos.jsonl").read_text("utf-8").splitlines()]
    return rows, settings
