"""What the rollout hands back to ``GRPOTrainer``: the rollout dict with its per-episode extras
(the reward functions' keyword arguments) and the ``env/...`` training metrics."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from trl_env._episode import Episode
from trl_env._summary import summarize

__all__ = ["episodes_to_rollout_output"]

_SCORE = {"win": 1.0, "draw": 0.5, "loss": 0.0}


def episodes_to_rollout_output(episodes: Sequence[Episode]) -> dict[str, list[Any]]:
    """The dict ``GRPOTrainer`` expects from a ``rollout_func``, plus per-episode extras.

    Extras (one entry per episode, passed to reward functions as keyword arguments):
    ``episode_return``, ``step_rewards`` (the reward of each env step, in order: one per model
    turn, what :class:`~trl_env.trl._credit.TurnCreditGRPOTrainer` turns into per-turn
    advantages), ``episode_success``, ``episode_turns``, ``episode_ended_by``,
    ``episode_ended_by_env``, ``episode_invalid_actions``, ``episode_error`` (``""`` if none),
    ``episode_transcript`` (JSON), ``episode_messages`` (the conversation as chat messages:
    env turns as ``user``, the model's replies as ``assistant``), ``env_id``. A self-play or
    opponent rollout adds, per sample, ``episode_role`` (0: its seat moved first, 1: second; the
    trainer normalizes advantages per role), ``episode_seat``, ``episode_result`` (``"win"``,
    ``"draw"``, ``"loss"``, ``""`` after a game error), ``episode_opponent`` and ``episode_game``.

    Reward functions should read a multi-turn episode from ``episode_messages`` (or
    ``episode_transcript``): TRL's own ``completions`` argument is the whole completion decoded
    as one assistant message (with a ``response_template``, parsed as one reply), so
    ``completions[i][-1]["content"]`` holds at most the last reply plus template markup.
    """
    output: dict[str, list[Any]] = {
        "prompt_ids": [e.prompt_ids for e in episodes],
        "completion_ids": [e.completion_ids for e in episodes],
        "logprobs": [e.logprobs for e in episodes],
        "env_mask": [e.env_mask for e in episodes],
        "episode_return": [e.episode_return for e in episodes],
        "step_rewards": [[float(r) for r in e.rewards] for e in episodes],
        "episode_success": [e.success for e in episodes],
        "episode_turns": [e.turns for e in episodes],
        "episode_ended_by": [e.ended_by or "" for e in episodes],
        "episode_ended_by_env": [e.ended_by_env for e in episodes],
        "episode_invalid_actions": [e.invalid_actions for e in episodes],
        "episode_error": [e.error or "" for e in episodes],
        "episode_transcript": [json.dumps(e.transcript, ensure_ascii=False) for e in episodes],
        "episode_messages": [e.messages() for e in episodes],
        "env_id": [e.env_id for e in episodes],
    }
    if any(e.seat is not None for e in episodes):
        seats = [e.seat or {} for e in episodes]
        output["episode_role"] = [int(seat.get("role", 0)) for seat in seats]
        output["episode_seat"] = [seat.get("seat") or "" for seat in seats]
        output["episode_result"] = [seat.get("result") or "" for seat in seats]
        output["episode_opponent"] = [seat.get("opponent") or "" for seat in seats]
        output["episode_game"] = [int(seat.get("game", -1)) for seat in seats]
    return output


def _log_metrics(trainer: Any, episodes: Sequence[Episode], *, per_env: bool) -> None:
    log_metric = getattr(trainer, "_log_metric", None)
    if log_metric is None or not episodes:
        return
    groups: dict[str, list[Episode]] = {"env": list(episodes)}
    if per_env:
        for env_id in sorted({e.env_id for e in episodes}):
            groups[f"env/{env_id}"] = [e for e in episodes if e.env_id == env_id]
    for prefix, group in groups.items():
        summary = summarize(prefix, group)
        log_metric(f"{prefix}/success_rate", summary.success_rate)
        log_metric(f"{prefix}/mean_return", summary.mean_return)
        log_metric(f"{prefix}/mean_turns", summary.mean_turns)
        log_metric(f"{prefix}/invalid_action_rate", summary.invalid_action_rate)
        log_metric(f"{prefix}/ended_by_limit_rate", summary.ended_by_limit_rate)
        log_metric(f"{prefix}/error_rate", summary.error_rate)
    seated = [e for e in episodes if e.seat is not None and e.seat.get("result")]
    if seated:
        # Self-play scores 0.5 by construction; what moves is who wins: the first or second mover.
        for role, name in ((0, "first"), (1, "second")):
            played = [e for e in seated if e.seat and e.seat["role"] == role]
            if played:
                score = sum(_SCORE[e.seat["result"]] for e in played if e.seat) / len(played)
                log_metric(f"seats/{name}_mover_score", score)
        draws = sum(e.seat["result"] == "draw" for e in seated if e.seat)
        log_metric("seats/draw_rate", draws / len(seated))
    # Replies that hit the per-turn token limit instead of ending themselves: a model that
    # rambles (or a limit too small for the reply format) shows here first.
    replies = [e for episode in episodes for e in episode.transcript or () if e["role"] == "agent"]
    if replies:
        cut = sum(not reply.get("stopped", True) for reply in replies)
        log_metric("env/cut_turn_rate", cut / len(replies))
