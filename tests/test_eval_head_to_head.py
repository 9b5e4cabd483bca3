"""``trl-env eval ENV --policy A --opponent B`` (issue 32, item 3): two policies play a two-player
game head to head, seats alternating over the seeds; W/D/L and the score with 95% Wilson
intervals, per seat and in total, in the table, ``--json``, ``results.json`` and, with both seats'
transcripts, ``transcripts.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trl_env._head_to_head import head_to_head
from trl_env._summary import wilson_interval
from trl_env.cli import main

KEYS = ("wins", "draws", "losses", "score", "score_ci_low", "score_ci_high")


def _eval(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["eval", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _results(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = _eval(capsys, *argv, "--json", "--no-progress")
    assert code == 0, err
    return json.loads(out)


def test_perfect_against_perfect_draws_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    results = _results(
        capsys, "TextTicTacToe-v0", "--policy", "perfect", "--opponent", "perfect",
        "--episodes", "40", "--seed", "3",
    )  # fmt: skip
    low, high = wilson_interval(20, 40)
    assert {k: results[k] for k in KEYS} == {
        "wins": 0, "draws": 40, "losses": 0, "score": 0.5, "score_ci_low": low,
        "score_ci_high": high,
    }  # fmt: skip
    assert low < 0.5 < high and high - 0.5 == pytest.approx(0.5 - low)  # around it
    env = results["envs"]["TextTicTacToe-v0"]
    assert {k: env[k] for k in KEYS} == {k: results[k] for k in KEYS}
    for seat in ("first", "second"):  # each seat: 20 games, every one a draw
        assert (env[seat]["games"], env[seat]["draws"], env[seat]["score"]) == (20, 20, 0.5)
        assert env[seat]["score_ci_low"] < 0.5 < env[seat]["score_ci_high"]
    assert results["mode"] == "head_to_head" and "first in even episodes" in results["seating"]


def test_perfect_never_loses_to_random(capsys: pytest.CaptureFixture[str]) -> None:
    results = _results(
        capsys, "TextTicTacToe-v0", "--policy", "perfect", "--opponent", "random",
        "--episodes", "60",
    )  # fmt: skip
    env = results["envs"]["TextTicTacToe-v0"]
    assert results["losses"] == env["first"]["losses"] == env["second"]["losses"] == 0
    assert results["wins"] > 40 and results["score_ci_low"] > 0.5
    assert results["wins"] + results["draws"] == results["games"] == 60
    low, high = wilson_interval(results["wins"], 60)
    assert (results["win_ci_low"], results["win_ci_high"]) == (low, high)
    reverse = head_to_head("TextTicTacToe-v0", "random", "perfect", 60)  # the other way round
    assert reverse.total.wins == 0 and reverse.total.score < 0.5


def test_seats_alternate_and_both_seats_transcripts_are_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "h2h"
    code, table, err = _eval(
        capsys, "TextTicTacToe-v0", "--policy", "greedy", "--opponent", "random",
        "--episodes", "6", "--seed", "10", "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    lines = table.splitlines()
    assert lines[0].startswith("policy: greedy   opponent: random   seeds: 10..15")
    assert [line.split()[1 if i == 0 else 0] for i, line in enumerate(lines[3:6])] == [
        "first", "second", "both",
    ]  # fmt: skip
    results = json.loads((out / "results.json").read_text("utf-8"))
    assert all(key in results for key in KEYS)
    games = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    assert [g["seed"] for g in games] == list(range(10, 16))
    assert [g["policy_first"] for g in games] == [True, False] * 3
    for game in games:
        seats = game["seats"]
        policy = next(s for s in seats if s["player"] == "policy")
        assert policy["moved_first"] == game["policy_first"] and policy["policy"] == "greedy"
        assert game["result"] == policy["result"] and game["error"] is None
        assert {s["result"] for s in seats} in ({"win", "loss"}, {"draw"})
        for seat in seats:  # each seat's own conversation, from its own side
            mark = seat["seat_name"]
            assert f"You are {mark}" in seat["transcript"][0]["text"]
            assert all(f"Your move ({mark})" in e["text"] for e in seat["transcript"][:-1]
                       if e["role"] == "env")  # fmt: skip
    seat_of = {
        g["policy_first"]: next(s for s in g["seats"] if s["player"] == "policy") for g in games
    }
    assert seat_of[True]["moved_first"] and not seat_of[False]["moved_first"]
    env = results["envs"]["TextTicTacToe-v0"]
    wins = sum(g["result"] == "win" for g in games if g["policy_first"])
    assert env["first"]["wins"] == wins and env["first"]["games"] == 3
    assert (out / "config.yaml").read_text().count("opponent: random") == 1


def test_opponent_on_a_one_player_env_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "not-made"
    code, _, err = _eval(
        capsys, "TextWordle-v0", "--policy", "random", "--opponent", "random", "--out", str(out)
    )
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err
    assert "TextWordle-v0 is a one-player env" in lines[0]
    for env_id in ("TextTicTacToe-v0", "TextArena/TicTacToe-v0", "TextArena/ConnectFour-v0"):
        assert env_id in lines[0]
    assert not out.exists()  # refused before anything was written


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--policy", "perfct", "--opponent", "random"], "Did you mean 'perfect'?"),
        (["--policy", "random", "--opponent", "random", "--samples", "2"], "--samples"),
        (["--policy", "random", "--opponent-temperature", "0.5"], "--opponent-temperature"),
        (["--policy", "perfect"], "scripted player of the two-player envs"),  # not a model name
    ],
)
def test_head_to_head_usage_errors(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code, _, err = _eval(capsys, "TextTicTacToe-v0", *argv)
    assert code == 2 and needle in err and "Traceback" not in err


def test_a_scripted_player_that_only_other_envs_have_is_refused() -> None:
    pytest.importorskip("textarena")
    from trl_env.error import UsageError

    with pytest.raises(UsageError, match="'greedy' is not a scripted player of TextArena"):
        head_to_head("TextArena/TicTacToe-v0", "greedy", "random", 2)
    report = head_to_head(["TextArena/ConnectFour-v0"], "random", "random", 4, seed=1)
    assert report.total.games + report.total.errors == 4 and report.total.errors == 0


def test_deterministic_pairs_are_counted_as_the_few_games_they_are(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The oracle takes the first optimal cell: oracle against oracle replays one game per seating
    # on every seed, so 12 games are 2 distinct ones, and the table says the intervals overcount.
    code, table, err = _eval(
        capsys, "TextTicTacToe-v0", "--policy", "oracle", "--opponent", "oracle",
        "--episodes", "12", "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    assert "note: TextTicTacToe-v0: only 2 of the 12 games differ in a move" in table
    results = _results(
        capsys, "TextTicTacToe-v0", "--policy", "oracle", "--opponent", "oracle", "--episodes", "12"
    )
    assert results["draws"] == 12 and results["distinct_games"] == 2
    assert results["envs"]["TextTicTacToe-v0"]["distinct_games"] == 2
    # A randomizing opponent plays other games on other seeds: no note.
    code, table, err = _eval(
        capsys, "TextTicTacToe-v0", "--policy", "oracle", "--opponent", "random",
        "--episodes", "12", "--no-progress",
    )  # fmt: skip
    report = head_to_head("TextTicTacToe-v0", "oracle", "random", 12)
    assert code == 0 and "note:" not in table
    assert report.distinct_games() == report.to_json()["distinct_games"] > 2
