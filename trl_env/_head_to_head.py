"""Head-to-head evaluation: two policies play a two-player game against each other, the logic of
``trl-env eval ENV --policy A --opponent B``.

Episode ``i`` of an env plays seed ``seed + i``, and the seats alternate over the seeds: the
policy A moves first when ``i`` is even and second when it is odd (so with an even number of
episodes each policy moves first equally often). Both seats are played from outside the env
(:func:`trl_env._seats.play_matches`), ``batch_size`` games at a time with one ``act`` call per
distinct policy per round: a model against itself answers both seats of every game in one
generation call. Each seat has its own conversation (what that seat was told), recorded in its
own transcript.

A policy is one of the env's scripted players by name (``random``; ``greedy`` and ``perfect``
for tic-tac-toe), ``oracle`` (the env's own solver, for the seat to move), or a model (whatever
``trl-env eval --policy`` takes: a model directory, a Hub id, a ``.gguf`` file, a LoRA adapter
or a run folder), which plays greedily unless a temperature is given. The report
(:class:`~trl_env._head_to_head_report.HeadToHeadReport`) has A's wins, draws and losses and its
score ``(wins + draws/2) / N``, each with a 95% Wilson interval, per seat and in total.

Example:
    >>> report = head_to_head("TextTicTacToe-v0", "perfect", "perfect", episodes=4)
    >>> report.total.draws, report.total.score
    (4, 0.5)
"""

from __future__ import annotations

import difflib
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from trl_env._checks import check_env_id, env_class, make_text_env
from trl_env._episode import Task
from trl_env._head_to_head_report import EnvHeadToHead, HeadToHeadReport, PlayedMatch
from trl_env._model_options import ModelOptions
from trl_env._policies import OraclePolicy, Policy, has_oracle
from trl_env._progress import _Progress
from trl_env._seats import play_matches
from trl_env._two_player import ScriptedPolicy, is_two_player, two_player_env_ids
from trl_env.error import NoOracleError, UsageError

__all__ = ["check_two_player_envs", "head_to_head", "resolve_seat_policy"]

_DEFAULT_TURN_CAP = 1000  # replies per seat, for an env registered without max_episode_steps


def check_two_player_envs(env_ids: Sequence[str]) -> dict[str, Any]:
    """The classes of ``env_ids``; a :class:`UsageError` naming the two-player envs if one is not.

    Answered from the registered classes, without making an env.
    """
    classes = {env_id: env_class(env_id) for env_id in env_ids}
    one_player = [
        e for e, cls in classes.items() if not (isinstance(cls, type) and is_two_player(cls))
    ]
    if one_player:
        one = len(one_player) == 1
        raise UsageError(
            f"--opponent needs a two-player env, and {', '.join(one_player)} "
            f"{'is a one-player env' if one else 'are one-player envs'}. Two-player envs: "
            f"{', '.join(two_player_env_ids())} (drop --opponent to evaluate a one-player env)"
        )
    return classes


def _scripted_players() -> set[str]:
    """The scripted players' names of every registered two-player env."""
    return {
        name for env_id in two_player_env_ids() for name in env_class(env_id).scripted_opponents
    }


def resolve_seat_policy(
    name: str,
    classes: Mapping[str, Any],
    options: ModelOptions,
    temperature: float | None,
    loaded: dict[tuple[str, float, str], Policy],
) -> Policy:
    """The policy ``name`` names for a seat of the envs of ``classes``.

    Args:
        name: A scripted player of every env, ``oracle``, or a model.
        classes: The envs' classes (from :func:`check_two_player_envs`).
        options: How a model generates (token limits, system prompt, batch size).
        temperature: A model's temperature (``None`` or 0: greedy).
        loaded: Models already loaded, by name, temperature and options: the same model with the
            same settings is one policy object, so it answers both seats in one call.

    Raises:
        UsageError: An unknown name (with a "Did you mean" hint), or a scripted player that
            some of the envs lack.
        NoOracleError: ``oracle`` for an env without one.
    """
    scripted = {env_id: tuple(cls.scripted_opponents) for env_id, cls in classes.items()}
    if all(name in players for players in scripted.values()):
        return ScriptedPolicy(name)
    if name == "oracle":
        missing = [env_id for env_id, cls in classes.items() if not has_oracle(cls)]
        if missing:
            raise NoOracleError(
                f"{', '.join(missing)} has no oracle to play a seat; use one of its scripted "
                f"players ({', '.join(scripted[missing[0]])}) or a model"
            )
        return OraclePolicy()
    lacking = [env_id for env_id, players in scripted.items() if name not in players]
    anywhere = _scripted_players()  # of every two-player env: "greedy" is no model's name
    if name in anywhere and not os.path.exists(name):
        players = ", ".join(f"{e}: {', '.join(scripted[e])}" for e in lacking)
        raise UsageError(
            f"{name!r} is not a scripted player of {', '.join(lacking)} ({players}); give one of "
            "those, oracle (where the env has a solver) or a model"
        )
    if not os.path.exists(name):
        close = difflib.get_close_matches(
            name.lower(), sorted(anywhere | {"oracle"}), n=1, cutoff=0.7
        )
        if close:
            raise UsageError(f"unknown policy {name!r}. Did you mean {close[0]!r}?")
    from trl_env._eval import policy_kind

    policy_kind(name)  # a path or a Hub id, else a UsageError that says what --policy takes
    key = (name, temperature or 0.0, repr(options))
    if key not in loaded:
        from trl_env.trl._lazy import require_trl

        require_trl("evaluating a model")
        from trl_env.trl._model_play import model_policy

        loaded[key] = model_policy(name, options, temperature=temperature or 0.0)
    return loaded[key]


def head_to_head(
    env_ids: str | Sequence[str],
    policy: str,
    opponent: str,
    episodes: int,
    seed: int = 0,
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    max_turns: int | None = None,
    model_options: ModelOptions | None = None,
    opponent_options: ModelOptions | None = None,
    opponent_temperature: float | None = None,
    record_transcripts: bool = True,
    progress: bool = False,
) -> HeadToHeadReport:
    """Play ``episodes`` games of each two-player env between ``policy`` and ``opponent``.

    Args:
        env_ids: One registered two-player ID or several.
        policy: The policy evaluated (A): a scripted player's name, ``oracle`` or a model.
        opponent: The policy it plays against (B), the same kinds.
        episodes: Games per env; game ``i`` plays seed ``seed + i``, A moving first when ``i``
            is even.
        seed: Seed of the first game.
        env_kwargs: ``gym.make`` keyword arguments applied to every env.
        max_turns: Replies per seat after which it forfeits (default: the env's
            ``max_episode_steps``, else 1000).
        model_options: How a model policy generates; its ``temperature`` is A's (default 0,
            greedy).
        opponent_options: How a model opponent generates (default: ``model_options``).
        opponent_temperature: B's temperature (default 0, greedy).
        record_transcripts: Keep both seats' transcripts.
        progress: Show progress on stderr.

    Raises:
        UsageError: An unknown or one-player env, a bad policy, bad kwargs or counts.
        MissingExtraError: A model policy without the ``[trl]`` extra.
    """
    ids = [env_ids] if isinstance(env_ids, str) else list(dict.fromkeys(env_ids))
    if not ids:
        raise UsageError("give at least one environment ID")
    if episodes < 1:
        raise UsageError(f"episodes must be a positive integer, got {episodes}")
    if seed < 0:
        raise UsageError(f"seed must be >= 0, got {seed}")
    classes = check_two_player_envs(ids)
    kwargs = dict(env_kwargs or {})
    for env_id in ids:
        make_text_env(env_id, kwargs).close()  # bad kwargs fail before any model loads
    options = model_options or ModelOptions()
    loaded: dict[tuple[str, float, str], Policy] = {}
    first = resolve_seat_policy(policy, classes, options, options.temperature, loaded)
    second = resolve_seat_policy(
        opponent, classes, opponent_options or options, opponent_temperature, loaded
    )
    bar = _Progress(len(ids) * episodes, progress, ids[0])
    start = time.perf_counter()
    played: list[PlayedMatch] = []
    try:
        for env_id in ids:
            bar.describe(env_id)
            steps = check_env_id(env_id).max_episode_steps
            cap = max_turns or steps or _DEFAULT_TURN_CAP
            for begin in range(0, episodes, options.batch_size):
                batch = list(range(begin, min(begin + options.batch_size, episodes)))
                envs = [make_text_env(env_id, kwargs) for _ in batch]
                tasks = [Task(env_id, seed + i, kwargs) for i in batch]
                movers = [(first, second) if i % 2 == 0 else (second, first) for i in batch]
                matches = play_matches(
                    envs, tasks, movers, max_turns=cap, record_transcripts=record_transcripts
                )
                for env in envs:
                    env.close()
                played += [
                    PlayedMatch(i, i % 2 == 0, m) for i, m in zip(batch, matches, strict=True)
                ]
                turns = sum(p.episode.turns for m in matches for p in m.players)
                bar.advance(len(batch), turns=turns)
    finally:
        bar.close()
    results = {env_id: EnvHeadToHead(env_id) for env_id in ids}
    for game in played:
        tally = results[game.match.task.env_id]
        (tally.first if game.policy_first else tally.second).add(game.result)
    settings = {
        "max_turns": max_turns,
        "temperature": options.temperature or 0.0,
        "opponent_temperature": opponent_temperature or 0.0,
    }
    return HeadToHeadReport(
        policy=policy,
        opponent=opponent,
        seed=seed,
        episodes_per_env=episodes,
        envs=results,
        matches=played,
        elapsed_s=time.perf_counter() - start,
        env_kwargs=kwargs,
        settings=settings,
    )
