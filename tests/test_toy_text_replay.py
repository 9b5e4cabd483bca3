"""Recorded toy-text episodes replay bit-identically (observations, rewards, flags, info, oracle).

``tests/data/replays_toy_text.json`` was recorded from ``envs/toy_text.py`` before it was split
into a package; any change in what a seeded episode shows, pays or reports fails here. Regenerate
(only for an intended behaviour change, and say so in the commit) with::

    python tests/test_toy_text_replay.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import trl_env

DATA = Path(__file__).parent / "data" / "replays_toy_text.json"

# (ID, make kwargs): every registered toy-text ID plus the difficulty kwargs.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("TextFrozenLake-v1", {}),
    ("TextFrozenLake-v1", {"is_slippery": False}),
    ("TextFrozenLake8x8-v1", {}),
    ("TextFrozenLake-v1", {"desc": ["SFH", "FFF", "HFG"], "success_rate": 0.5}),
    ("TextTaxi-v3", {}),
    ("TextTaxi-v3", {"is_rainy": True, "fickle_passenger": True}),
    ("TextCliffWalking-v1", {}),
    ("TextCliffWalking-v1", {"is_slippery": True}),
    ("TextBlackjack-v1", {}),
    ("TextBlackjack-v1", {"sab": False, "natural": True}),
]
SEEDS = (0, 7, 123)
STEPS = 14
# Replies the model might write: legal moves, synonyms, words, junk, nothing.
NOISE = ["", "I am not sure.", "[fly]", "🎉 中文", "move: west", "[pick up]", "stand", "x" * 5000]


def _plain(value: Any) -> Any:
    """A JSON-comparable form of an info value that keeps its type name."""
    if isinstance(value, np.ndarray):
        return {"ndarray": str(value.dtype), "values": value.tolist()}
    if isinstance(value, np.generic):
        return {type(value).__name__: value.item()}
    if isinstance(value, bool | int | float | str) or value is None:
        return {type(value).__name__: value}
    return {type(value).__name__: repr(value)}


def _info(info: dict[str, Any]) -> dict[str, Any]:
    return {key: _plain(value) for key, value in sorted(info.items())}


def record_episode(env_id: str, kwargs: dict[str, Any], seed: int) -> dict[str, Any]:
    """Play one seeded episode with a seeded mix of legal, synonym and invalid replies."""
    env = gym.make(env_id, render_mode="ansi", **kwargs)
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=seed)
    steps: list[dict[str, Any]] = []
    trace = {"reset": observation, "info": _info(info), "render": env.render(), "steps": steps}
    actions = list(env.unwrapped.actions)
    for _ in range(STEPS):
        oracle = trl_env.envs.toy_text.oracle_action(env)
        roll = rng.random()
        if roll < 0.4:
            reply = oracle
        elif roll < 0.7:
            reply = f"Let me think... [{actions[int(rng.integers(len(actions)))]}]"
        else:
            reply = NOISE[int(rng.integers(len(NOISE)))]
        observation, reward, terminated, truncated, info = env.step(reply)
        steps.append(
            {
                "oracle": oracle,
                "reply": reply[:100],
                "observation": observation,
                "reward": _plain(reward),
                "terminated": terminated,
                "truncated": truncated,
                "info": _info(info),
                "render": env.render(),
            }
        )
        if terminated or truncated:
            break
    env.close()
    return trace


def record_all() -> list[dict[str, Any]]:
    return [
        {
            "id": env_id,
            "kwargs": kwargs,
            "seed": seed,
            "episode": record_episode(env_id, kwargs, seed),
        }
        for env_id, kwargs in CASES
        for seed in SEEDS
    ]


def _recorded() -> list[dict[str, Any]]:
    return json.loads(DATA.read_text("utf-8"))


@pytest.mark.parametrize(
    "index", range(len(CASES) * len(SEEDS)), ids=lambda i: f"{CASES[i // 3][0]}-{i}"
)
def test_seeded_episode_replays_bit_identically(index: int) -> None:
    recorded = _recorded()[index]
    got = record_episode(recorded["id"], recorded["kwargs"], recorded["seed"])
    assert json.loads(json.dumps(got)) == recorded["episode"]


def test_recordings_cover_every_toy_text_id_and_both_endings() -> None:
    recorded = _recorded()
    ids = {
        spec.id
        for spec in trl_env.envs.env_specs("catalogue")
        if ".toy_text:" in str(spec.entry_point)
    }
    assert ids == {row["id"] for row in recorded}
    last_steps = [row["episode"]["steps"][-1] for row in recorded]
    assert any(step["terminated"] for step in last_steps)
    invalid = [s for row in recorded for s in row["episode"]["steps"] if "error" in s["info"]]
    assert len(invalid) > 20  # invalid replies are part of the replays


if __name__ == "__main__":
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(record_all(), ensure_ascii=False, indent=1) + "\n", "utf-8")
    print(f"wrote {DATA}")
