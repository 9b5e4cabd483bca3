"""pass@k and avg@k (``trl-env eval --samples K``), the Wilson interval of the success rate, and the
estimator behind pass@k, checked against hand-computed values and brute-force enumeration."""

from __future__ import annotations

import doctest
import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

import trl_env._summary
from trl_env._episode import Episode, Task
from trl_env._eval import evaluate, format_table
from trl_env._summary import (
    add_samples,
    pass_at_k,
    summarize,
    summarize_samples,
    wilson_interval,
)
from trl_env.cli import main
from trl_env.error import UsageError

CHEAP = "TextLargestNumber-v0"  # one turn per episode


# --- pass_at_k -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (10, 1, 1, 0.1),  # one sample: the success rate
        (10, 2, 5, 1 - 56 / 252),  # 1 - C(8, 5) / C(10, 5)
        (10, 3, 2, 1 - 21 / 45),  # 1 - C(7, 2) / C(10, 2)
        (5, 0, 3, 0.0),  # no success: never
        (5, 3, 3, 1.0),  # n - c = 2 < k: every 3-subset holds a success
        (4, 1, 4, 1.0),  # n == k: won at least once
        (4, 0, 4, 0.0),
        (100, 10, 1, 0.1),
        (20, 20, 7, 1.0),
    ],
)
def test_pass_at_k_hand_computed(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("n", range(1, 8))
def test_pass_at_k_is_the_mean_over_every_k_subset(n: int) -> None:
    for c in range(n + 1):
        outcomes = [True] * c + [False] * (n - c)
        for k in range(1, n + 1):
            subsets = list(itertools.combinations(outcomes, k))
            brute = sum(any(subset) for subset in subsets) / len(subsets)
            assert pass_at_k(n, c, k) == pytest.approx(brute, abs=1e-12), (n, c, k)


def test_pass_at_k_is_stable_for_large_n() -> None:
    # C(10000, 100) overflows a float; the product form does not.
    n, c, k = 10_000, 37, 100
    exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    assert pass_at_k(n, c, k) == pytest.approx(float(exact), rel=1e-9)


@pytest.mark.parametrize(("n", "c", "k"), [(5, 1, 0), (5, 1, -1), (5, 1, 6), (5, 6, 2), (5, -1, 2)])
def test_pass_at_k_rejects_impossible_counts(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


# --- wilson_interval -----------------------------------------------------------------------------


def test_wilson_interval_values() -> None:
    low, high = wilson_interval(8, 10)  # the textbook example: 8/10 -> [0.490, 0.943]
    assert (round(low, 3), round(high, 3)) == (0.490, 0.943)
    low, high = wilson_interval(0, 32)
    assert low == 0.0 and high == pytest.approx(0.1072, abs=1e-4)
    low, high = wilson_interval(16, 32)
    assert low < 0.5 < high and (0.5 - low) == pytest.approx(high - 0.5)
    assert wilson_interval(32, 32)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    narrow, wide = wilson_interval(5, 10, z=1.0), wilson_interval(5, 10, z=2.576)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


@pytest.mark.parametrize(("successes", "n"), [(3, 2), (-1, 5), (0, -1)])
def test_wilson_interval_rejects_impossible_counts(successes: int, n: int) -> None:
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(successes, n)


def test_benchmarks_use_the_library_interval() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        import _real_model
    finally:
        sys.path.pop(0)
    assert _real_model.wilson_interval is wilson_interval


# --- summaries -----------------------------------------------------------------------------------


def _episode(seed: int, won: bool, env_id: str = "TextWordle-v0") -> Episode:
    return Episode(Task(env_id, seed), success=won, episode_return=2.0 * won, turns=1)


def test_summary_has_the_wilson_interval_of_its_success_rate() -> None:
    summary = summarize("TextWordle-v0", [_episode(i, i < 3) for i in range(10)])
    assert summary.success_rate == 0.3
    assert (summary.success_ci_low, summary.success_ci_high) == wilson_interval(3, 10)
    assert summary.samples == 0 and summary.pass_at_k is None and summary.avg_at_k is None
    empty = summarize("TextWordle-v0", [])
    assert (empty.success_ci_low, empty.success_ci_high) == (0.0, 1.0)


def test_summarize_samples_groups_by_seed() -> None:
    # seed 0: 2 of 4 won; seed 1: 0 of 4; seed 2: 4 of 4 (in any order)
    wins = {0: [True, False, True, False], 1: [False] * 4, 2: [True] * 4}
    episodes = [
        _episode(seed, won) for i in range(4) for seed, won in ((s, w[i]) for s, w in wins.items())
    ]
    figures = summarize_samples("TextWordle-v0", episodes, 4)
    assert figures["samples"] == 4
    assert figures["pass_at_k"] == pytest.approx(2 / 3)
    assert figures["avg_at_k"] == pytest.approx((0.5 + 0.0 + 1.0) / 3)
    assert figures["avg_return_at_k"] == pytest.approx(2.0 * (0.5 + 0.0 + 1.0) / 3)
    summary = add_samples(summarize("TextWordle-v0", episodes[:3]), episodes, 4)
    assert summary.to_json() | figures == summary.to_json()
    assert summary.episodes == 3  # the main figures are untouched


def test_summarize_samples_errors() -> None:
    episodes = [_episode(0, True), _episode(0, False), _episode(1, True)]
    with pytest.raises(ValueError, match=r"exactly k=2 .* \{1: 1\}"):
        summarize_samples("TextWordle-v0", episodes, 2)
    with pytest.raises(ValueError, match="an episode of TextOther-v0"):
        summarize_samples("TextWordle-v0", [_episode(0, True, "TextOther-v0")], 1)
    with pytest.raises(ValueError, match="no sampled episodes"):
        summarize_samples("TextWordle-v0", [], 2)
    with pytest.raises(ValueError, match="positive"):
        summarize_samples("TextWordle-v0", episodes, 0)


def test_summary_module_doctests_pass() -> None:
    results = doctest.testmod(trl_env._summary, optionflags=doctest.ELLIPSIS)
    assert results.attempted >= 8 and results.failed == 0


# --- evaluate(samples=k) -------------------------------------------------------------------------


def test_random_policy_samples() -> None:
    report = evaluate([CHEAP, "TextGuessNumber-v0"], "random", episodes=30, seed=5, samples=4)
    assert report.samples == 4 and report.sample_temperature is None
    assert len(report.sampled_episodes) == 4
    for env_id, summary in report.summaries.items():
        assert summary.episodes == 30 and summary.samples == 4
        per_sample = [[e for e in group if e.env_id == env_id] for group in report.sampled_episodes]
        assert all([e.seed for e in group] == list(range(5, 35)) for group in per_sample)
        assert summary.pass_at_k is not None and summary.avg_at_k is not None
        assert summary.pass_at_k >= summary.avg_at_k
        sampled = [e for group in per_sample for e in group]
        assert summary.avg_at_k == pytest.approx(sum(e.success for e in sampled) / 120)
        won = {e.seed for e in sampled if e.success}
        assert summary.pass_at_k == pytest.approx(len(won) / 30)
    # The k random policies differ from each other and from the main run's, reproducibly.
    largest = report.summaries[CHEAP]
    assert 0 < largest.avg_at_k < largest.pass_at_k < 1
    actions = [
        tuple(e.transcript[1]["action"] for e in group if e.env_id == CHEAP)
        for group in [report.episodes, *report.sampled_episodes]
    ]
    assert len(set(actions)) == 5
    again = evaluate([CHEAP, "TextGuessNumber-v0"], "random", episodes=30, seed=5, samples=4)
    assert again.to_json()["envs"] == report.to_json()["envs"]


def test_oracle_samples_are_the_same_game() -> None:
    report = evaluate(["TextWordle-v0"], "oracle", episodes=5, samples=2)
    summary = report.summaries["TextWordle-v0"]
    assert (summary.pass_at_k, summary.avg_at_k, summary.avg_return_at_k) == (1.0, 1.0, 1.0)
    for group in report.sampled_episodes:
        assert [e.transcript for e in group] == [e.transcript for e in report.episodes]


def test_no_samples_by_default() -> None:
    report = evaluate([CHEAP], "random", episodes=3)
    assert report.samples == 0 and report.sampled_episodes == []
    data = report.to_json()
    assert data["samples"] == 0 and data["sample_temperature"] is None
    assert data["envs"][CHEAP]["pass_at_k"] is None
    assert "pass@" not in format_table(report)


def test_transcripts_can_be_left_out_of_the_samples_too() -> None:
    report = evaluate([CHEAP], "random", episodes=3, samples=2, record_transcripts=False)
    assert all(e.transcript is None for group in report.sampled_episodes for e in group)


def test_table_shows_the_interval_and_the_sampled_columns() -> None:
    report = evaluate([CHEAP], "random", episodes=20, samples=3)
    lines = format_table(report).splitlines()
    assert lines[0] == "policy: random   seeds: 0..19   samples: 3 per seed"
    assert lines[1].split()[:7] == ["env", "episodes", "success", "(95%", "CI)", "pass@3", "avg@3"]
    s = report.summaries[CHEAP]
    row = lines[3].split()
    assert row[:3] == [CHEAP, "20", f"{100 * s.success_rate:.1f}%"]
    assert row[3] == f"[{100 * s.success_ci_low:.1f}-{100 * s.success_ci_high:.1f}]"
    assert row[4:6] == [f"{100 * s.pass_at_k:.1f}%", f"{100 * s.avg_at_k:.1f}%"]


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"samples": -1}, "samples must be an integer >= 0"),
        ({"samples": 1.5}, "samples must be an integer >= 0"),
        ({"samples": True}, "samples must be an integer >= 0"),
        ({"samples": "4"}, "samples must be an integer >= 0"),
        (
            {"samples": 2, "sample_temperature": 0},
            "sample_temperature must be a finite number above 0",
        ),
        ({"samples": 2, "sample_temperature": float("inf")}, "above 0"),
        ({"samples": 2, "sample_temperature": -1.0}, "above 0"),
        ({"samples": 2, "sample_temperature": float("nan")}, "above 0"),
    ],
)
def test_bad_samples_are_usage_errors(options: dict, needle: str) -> None:
    with pytest.raises(UsageError, match=needle):
        evaluate([CHEAP], "random", episodes=2, **options)


# --- the command line ----------------------------------------------------------------------------


def test_cli_samples_write_the_json_fields(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    argv = ["eval", CHEAP, "--policy", "random", "--episodes", "5", "--samples", "2",
            "--no-progress", "--out", str(out), "--json"]  # fmt: skip
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    results = json.loads((out / "results.json").read_text("utf-8"))
    assert printed == results
    assert results["samples"] == 2 and results["sample_temperature"] is None
    summary = results["envs"][CHEAP]
    assert summary["samples"] == 2
    assert {"pass_at_k", "avg_at_k", "avg_return_at_k", "success_ci_low", "success_ci_high"} <= set(
        summary
    )
    assert summary["pass_at_k"] >= summary["avg_at_k"]
    lines = [
        json.loads(line) for line in (out / "transcripts.jsonl").read_text("utf-8").splitlines()
    ]
    assert [line.get("sample") for line in lines] == [None] * 5 + [0] * 5 + [1] * 5
    assert [line["seed"] for line in lines] == list(range(5)) * 3
    assert all(line["transcript"] for line in lines)


def test_cli_table_with_samples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", CHEAP, "--policy", "random", "--episodes", "4", "--samples", "3",
                 "--no-progress"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "pass@3" in out and "avg@3" in out and "samples: 3 per seed" in out


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--samples", "-1"], "--samples"),
        (["--samples", "two"], "--samples"),
        (["--samples", "2", "--sample-temperature", "0"], "--sample-temperature"),
        (["--samples", "2", "--sample-temperature", "nan"], "--sample-temperature"),
        (["--sample-temperature", "0.5"], "only applies with --samples"),
        (
            ["--samples", "2", "--sample-temperature", "0.5"],
            "only applies when --policy is a model",
        ),
    ],
)
def test_cli_bad_samples(capsys: pytest.CaptureFixture[str], extra: list[str], needle: str) -> None:
    code = main(["eval", CHEAP, "--policy", "random", "--episodes", "2", "--no-progress", *extra])
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2 and captured.out == ""
    assert len(lines) == 1 and lines[0].startswith("trl-env eval: error: ")
    assert needle in lines[0]


def test_cli_help_explains_samples(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--samples K" in text and "pass@K" in text and "avg@K" in text
    assert "unbiased estimator" in text
