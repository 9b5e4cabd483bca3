"""Eval progress on stderr: it counts turns as well as episodes (a long batch shows it is alive
before any episode ends), and a log gets a line per tenth of the episodes and at most one line
every 30 s in between, never one per update."""

from __future__ import annotations

import doctest
from typing import Any

import pytest

import trl_env._progress
from trl_env._eval import evaluate
from trl_env._progress import _Progress, _TurnCounter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_lines_count_turns_and_are_rate_limited() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = _Progress(64, True, "episodes", terminal=False, write=lines.append, clock=clock)
    for _ in range(600):  # one long batch: 600 turn calls of 64 episodes, 1 s each, none done
        clock.now += 1.0
        progress.add_turns(64)
    assert len(lines) == 20  # a line every 30 s, not one per update
    assert lines[0] == "episodes: 0/64 episodes (0%), 1920 turns, 30 s"
    progress.advance(64)
    progress.close()
    assert lines[-1] == "episodes: 64/64 episodes (100%), 38400 turns, 600 s"


def test_progress_lines_per_tenth_when_episodes_end_fast() -> None:
    lines: list[str] = []
    clock = Clock()
    progress = _Progress(
        1000, True, "TextWordle-v0", terminal=False, write=lines.append, clock=clock
    )
    for _ in range(1000):
        clock.now += 0.001
        progress.advance(1, turns=4)
    progress.close()
    assert len(lines) == 10 and lines[-1].startswith("TextWordle-v0: 1000/1000 episodes (100%)")
    assert "4000 turns" in lines[-1]


def test_progress_bar_shows_turns(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    clock = Clock()
    progress = _Progress(8, True, "episodes", terminal=True, clock=clock)
    clock.now = 1.0
    progress.add_turns(8)
    progress.close()
    assert "8 turns" in capsys.readouterr().err


def test_turn_counter_reports_each_generation_call() -> None:
    counted: list[int] = []

    class Backend:
        reuse_kv_cache = True

        def generate(self, inputs: Any, max_new_tokens: int) -> Any:
            return [[1]] * len(inputs), [[0.0]] * len(inputs)

    counter = _TurnCounter(Backend(), counted.append)
    assert counter.generate([[1, 2], [3]], 4) == ([[1], [1]], [[0.0], [0.0]])
    assert counted == [2] and counter.reuse_kv_cache is True


def test_eval_counts_turns_in_its_progress(capsys: pytest.CaptureFixture[str]) -> None:
    report = evaluate(["TextGuessNumber-v0"], "oracle", episodes=10, progress=True)
    turns = sum(episode.turns for episode in report.episodes)
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith(f"TextGuessNumber-v0: 10/10 episodes (100%), {turns} turns")


def test_docstring_example() -> None:
    results = doctest.testmod(trl_env._progress)
    assert results.attempted > 0 and results.failed == 0
