"""Record seeded episodes of every native game, to replay them after a change of the games' code.

    python scripts/record_replays.py            # (re)write tests/data/replays/*.json
    python scripts/record_replays.py --check    # exit 1 if a recording no longer replays

Each episode is played through ``gym.make(ID, render_mode="ansi")`` with a fixed, scripted mix
of replies: the env's oracle move, a random legal-looking move (drawn from a generator seeded by
``(seed, episode, step)``, so a replay can check that a policy still draws the same one), and
invalid replies (garbage, empty, empty brackets, out-of-range, non-text). Every observation,
reward, ``terminated``/``truncated`` flag, rendered frame and the JSON-able ``info`` is stored.
``tests/test_replays.py`` replays the actions and asserts the results are identical.
"""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import trl_env  # noqa: F401  (registers the catalogue)

ROOT = Path(__file__).resolve().parent.parent
REPLAY_DIR = ROOT / "tests" / "data" / "replays"

NATIVE_IDS = (
    "TextWordle-v0",
    "TextMastermind-v0",
    "TextMastermindHard-v0",
    "TextHangman-v0",
    "TextHangmanHard-v0",
    "TextGuessNumber-v0",
    "TextGuessNumberHard-v0",
    "TextTicTacToe-v0",
    "TextTicTacToePerfect-v0",
    "TextSudoku-v0",
    "TextSudoku9x9-v0",
    "TextCountdown-v0",
    "TextCountdownEasy-v0",
    "TextLargestNumber-v0",
)
SEEDS = (0, 1, 7)
EPISODES_PER_SEED = 2  # the second episode starts from reset() without a seed
MAX_STEPS = 14  # per episode: long games (9x9 Sudoku) are cut here to keep the files small

INVALID_REPLIES: tuple[Any, ...] = (
    "",
    "   ",
    "[]",
    "I am not sure what to do here, sorry!",
    "[99999]",
    "[-3]",
    "[zzzzz]",
    "[1 2 3 4 5 6 7 8 9]",
    "[a9]",
    "]][[",
    "[9 9 9]",
    "[(1 + ]",
    "\u00e9\u00e8\u4e2d",
    None,
)

# The scripted mix, cycled through by step: o = oracle, r = random, i = invalid.
SCRIPT = "oriorrioiroo"


def policy_rng(seed: int, episode: int, step: int) -> np.random.Generator:
    """The generator the random move of a step is drawn from (the replay test rebuilds it)."""
    return np.random.default_rng([seed, episode, step])


def jsonable(value: Any) -> Any:
    """``value`` as JSON data (tuples as lists, numpy scalars as numbers, Fractions as text)."""
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Fraction):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"cannot store {type(value).__name__} {value!r} in a replay")


def oracle_move(env: gym.Env[str, str], env_id: str) -> str:
    from trl_env._eval import find_oracle

    oracle = find_oracle(env_id)
    assert oracle is not None, env_id
    return oracle(env)


def random_move(env: gym.Env[str, str], info: dict[str, Any], rng: np.random.Generator) -> str:
    from trl_env._eval import random_action

    return random_action(env, info, rng)


def play_episode(env: gym.Env[str, str], env_id: str, seed: int, episode: int) -> dict[str, Any]:
    """Play one scripted episode and return its record."""
    reset_seed = seed if episode == 0 else None
    observation, info = env.reset(seed=reset_seed)
    record: dict[str, Any] = {
        "seed": reset_seed,
        "observation": observation,
        "info": jsonable(info),
        "render": env.render(),
        "steps": [],
    }
    for step in range(MAX_STEPS):
        kind = SCRIPT[(step + seed + episode) % len(SCRIPT)]
        if kind == "o":
            action = oracle_move(env, env_id)
        elif kind == "r":
            action = random_move(env, info, policy_rng(seed, episode, step))
        else:
            action = INVALID_REPLIES[(step * 5 + seed + episode) % len(INVALID_REPLIES)]
        observation, reward, terminated, truncated, info = env.step(action)
        record["steps"].append(
            {
                "kind": kind,
                "action": action,
                "observation": observation,
                "reward": float(reward),
                "terminated": bool(terminated),
                "truncated": bool(truncated),
                "info": jsonable(info),
                "render": env.render(),
            }
        )
        if terminated or truncated:
            break
    return record


def record(env_id: str) -> dict[str, Any]:
    """Every scripted episode of ``env_id``, as one JSON-able record."""
    episodes = []
    for seed in SEEDS:
        env = gym.make(env_id, render_mode="ansi")
        for episode in range(EPISODES_PER_SEED):
            episodes.append(play_episode(env, env_id, seed, episode))
        env.close()
    return {"env_id": env_id, "episodes": episodes}


def path_for(env_id: str) -> Path:
    return REPLAY_DIR / f"{env_id}.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    REPLAY_DIR.mkdir(parents=True, exist_ok=True)
    stale = []
    for env_id in NATIVE_IDS:
        data = record(env_id)
        text = json.dumps(data, ensure_ascii=True, separators=(",", ":")) + "\n"
        if args.check:
            if not path_for(env_id).exists() or path_for(env_id).read_text() != text:
                stale.append(env_id)
        else:
            path_for(env_id).write_text(text)
    if stale:
        print("replays differ for: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
