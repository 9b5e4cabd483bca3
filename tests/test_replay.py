"""``trl-env replay`` and :mod:`trl_env._replay`: a run's saved rollouts printed and rescored.

The run folders here are made of real played episodes (the play loop, the env's random and
oracle policies, a scripted policy with invalid replies, an env that fails mid-episode), saved
with :mod:`trl_env._rollout_records` exactly as ``trl-env train --save-rollouts`` saves them.
"""

from __future__ import annotations

import doctest
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import trl_env
import trl_env._replay
from trl_env._episode import Episode, Task
from trl_env._play import run_episodes
from trl_env._policies import FunctionPolicy, OraclePolicy, RandomPolicy, Reply
from trl_env._replay import (
    ReplayConfig,
    format_episode,
    load_run,
    rescore,
    select_episodes,
)
from trl_env._rollout_records import episode_record, read_rollouts, write_step
from trl_env._stepping import EnvOutcome, step_envs
from trl_env.cli import main
from trl_env.error import UsageError

GUESS, WORDLE = "TextGuessNumber-v0", "TextWordle-v0"
SHAPED = {"partial_credit": 0.5}
STEPS = (1, 2, 3)
PER_STEP = 8
PENALTY = -1.0


def _play(
    env_id: str,
    seeds: Sequence[int],
    policy: Any,
    kwargs: dict[str, Any] | None = None,
    **options: Any,
) -> list[Episode]:
    episodes = [Episode(Task(env_id, str(seed), dict(kwargs or {}))) for seed in seeds]
    envs = [gym.make(env_id, **(kwargs or {})) for _ in seeds]
    return run_episodes(episodes, envs, policy, **options)


def _invalid_then_give_up(turn: Any) -> Reply:
    return Reply("nonsense", {"text": "Let me think... nonsense", "stopped": True})


def _failing_second_step(calls: Sequence[tuple[Any, str]]) -> list[EnvOutcome]:
    """Steps the envs, except that an env's second step fails (as a broken env would)."""
    outcomes = step_envs(calls)
    return [
        EnvOutcome(error="RuntimeError: the game server went away")
        if env.unwrapped.turn >= 2
        else outcome
        for (env, _), outcome in zip(calls, outcomes, strict=True)
    ]


def _step_episodes(step: int) -> list[Episode]:
    """The 8 episodes of one step: 3 shaped random, 1 oracle, 2 Wordle random, 1 invalid, 1 error."""
    seed = 100 * step
    return [
        *_play(GUESS, [seed, seed + 1, seed + 2], RandomPolicy(step), SHAPED),
        *_play(GUESS, [seed + 3], OraclePolicy()),
        *_play(WORDLE, [seed + 4, seed + 5], RandomPolicy(step)),
        *_play(GUESS, [seed + 6], FunctionPolicy(_invalid_then_give_up), max_turns=2),
        *_play(GUESS, [seed + 7], OraclePolicy(), error_penalty=PENALTY, step=_failing_second_step),
    ]


def make_run(folder: Path, steps: Sequence[int] = STEPS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = {"env_ids": [GUESS, WORDLE], "env_kwargs": {}, "max_turns": None, "seed": 0}
    (folder / "train_config.json").write_text(json.dumps({**config, "save_rollouts": True}))
    for step in steps:
        episodes = _step_episodes(step)
        mean = sum(e.episode_return for e in episodes) / len(episodes)
        write_step(
            folder,
            step,
            [
                episode_record(
                    e,
                    step=step,
                    group=i // 2,
                    advantage=e.episode_return - mean,
                    system_prompt="Play.",
                )
                for i, e in enumerate(episodes)
            ],
        )
    return folder


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("runs") / "run")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["replay", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("trl-env replay: error: "), err
    for needle in needles:
        assert needle in lines[0], lines[0]


def edit_step(folder: Path, step: int, edit: Any) -> None:
    records = read_rollouts(folder, step)
    write_step(folder, step, [edit(r) or r for r in records])


# --- the fixture itself ---------------------------------------------------------------------------


def test_the_fake_run_holds_what_the_tests_need(run_dir: Path) -> None:
    records = read_rollouts(run_dir)
    assert len(records) == len(STEPS) * PER_STEP
    ended = {r["ended_by"] for r in records}
    assert {"terminated", "truncated", "max_turns", "error"} <= ended
    assert len({r["episode_return"] for r in records if r["step"] == 3}) >= 4
    errors = [r for r in records if r["error"]]
    assert len(errors) == len(STEPS) and all(r["rewards"][-1] == PENALTY for r in errors)
    assert any(any(r["invalid"]) for r in records)


def test_module_doctests_pass() -> None:
    results = doctest.testmod(trl_env._replay, optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0


# --- loading and picking --------------------------------------------------------------------------


def test_load_run(run_dir: Path) -> None:
    run = load_run(run_dir)
    assert run.steps == list(STEPS)
    assert run.config["save_rollouts"] is True


def test_select_defaults_to_the_last_step_in_saved_order(run_dir: Path) -> None:
    run = load_run(run_dir)
    records = select_episodes(run)
    assert [r["step"] for r in records] == [3] * PER_STEP
    assert records == read_rollouts(run_dir, 3)
    assert select_episodes(run, 2, limit=3) == read_rollouts(run_dir, 2)[:3]
    assert len(select_episodes(run, all_steps=True)) == len(STEPS) * PER_STEP


def test_worst_and_best_order_by_return_then_step_then_saved_order(run_dir: Path) -> None:
    run = load_run(run_dir)
    every = read_rollouts(run_dir)
    worst = select_episodes(run, all_steps=True, order="worst")
    best = select_episodes(run, all_steps=True, order="best")
    assert [r["episode_return"] for r in worst] == sorted(r["episode_return"] for r in every)
    assert [r["episode_return"] for r in best] == sorted(
        (r["episode_return"] for r in every), reverse=True
    )
    for ranked, sign in ((worst, 1), (best, -1)):
        keys = [(sign * r["episode_return"], r["step"]) for r in ranked]
        assert keys == sorted(keys)
    # Ties keep the saved order: the Wordle episodes (return 0) of step 3, as saved.
    ties = [r for r in select_episodes(run, order="best") if r["episode_return"] == 0.0]
    saved = [r for r in read_rollouts(run_dir, 3) if r["episode_return"] == 0.0]
    assert ties == saved and len(ties) >= 2
    assert select_episodes(run, order="worst", limit=1)[0]["episode_return"] == min(
        r["episode_return"] for r in read_rollouts(run_dir, 3)
    )


def test_bad_order_and_unknown_step(run_dir: Path) -> None:
    run = load_run(run_dir)
    with pytest.raises(UsageError, match="order must be"):
        select_episodes(run, order="median")
    with pytest.raises(UsageError, match=r"no rollouts for step 7; the saved steps are 1, 2, 3"):
        select_episodes(run, 7)


# --- transcripts ----------------------------------------------------------------------------------


def test_format_episode_marks_rewards_invalid_steps_cut_replies_and_errors(run_dir: Path) -> None:
    records = read_rollouts(run_dir, 1)
    invalid = next(r for r in records if r["ended_by"] == "max_turns")
    text = format_episode(invalid)
    assert text.splitlines()[0] == (
        f"step 1 | {GUESS} | seed {invalid['seed']} | group {invalid['group']}"
    )
    assert "return -0.2 | no success | 2 turns, ended by max_turns | advantage " in text
    assert "tokens: 0 prompt, 0 completion (0 model, 0 env)" in text
    assert "[system]\n    Play." in text
    assert text.count("[env] reward -0.1, invalid") == 2
    assert "[model]\n    Let me think... nonsense\n  action: nonsense" in text

    shaped = records[0]
    text = format_episode(shaped)
    assert 'env kwargs: {"partial_credit": 0.5}' in text
    for reward in shaped["rewards"]:
        assert f"reward {reward:+.4g}" in text or (reward == 0 and "reward 0" in text)

    failed = next(r for r in records if r["error"])
    text = format_episode(failed)
    assert "error: step: RuntimeError: the game server went away" in text
    assert "[env] env error, penalty -1" in text
    assert "ended by error" in text

    cut = {**shaped, "cut": [True] + shaped["cut"][1:]}
    assert format_episode(cut).count("[model] cut at the token limit") == 1
    per_turn = {**shaped, "advantage": [0.5, -0.25]}
    assert "advantage [+0.5, -0.25] per turn" in format_episode(per_turn)


def test_cli_prints_the_first_episodes_of_the_last_step(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, str(run_dir))
    assert code == 0 and not err
    assert out.splitlines()[0].endswith(f"the first 4 of {PER_STEP} episodes of step 3")
    headers = [line for line in out.splitlines() if line.startswith("step ")]
    seeds = [r["seed"] for r in read_rollouts(run_dir, 3)[:4]]
    assert headers == [
        f"step 3 | {r['env_id']} | seed {s} | group {r['group']}"
        for r, s in zip(read_rollouts(run_dir, 3), seeds, strict=False)
    ]


def test_cli_worst_best_step_limit(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = load_run(run_dir)
    code, out, _ = cli(capsys, str(run_dir), "--worst", "--limit", "2", "--step", "2")
    assert code == 0
    expected = select_episodes(run, 2, order="worst", limit=2)
    assert [line for line in out.splitlines() if line.startswith("step ")] == [
        format_episode(r).splitlines()[0] for r in expected
    ]
    assert "the worst 2 of 8 episodes of step 2" in out

    code, out, _ = cli(capsys, str(run_dir), "--best", "--all-steps", "--limit", "3")
    assert code == 0 and "of every saved step" in out
    expected = select_episodes(run, all_steps=True, order="best", limit=3)
    assert [line for line in out.splitlines() if line.startswith("step ")] == [
        format_episode(r).splitlines()[0] for r in expected
    ]
    assert all(r["episode_return"] == 1.0 for r in expected)

    code, out, _ = cli(capsys, str(run_dir), "--step", "1", "--limit", "2", "--json")
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == read_rollouts(run_dir, 1)[:2]


# --- rescoring ------------------------------------------------------------------------------------


def test_rescore_untouched_records_all_match(run_dir: Path) -> None:
    report = rescore(read_rollouts(run_dir))
    assert report.episodes == len(STEPS) * PER_STEP and report.steps == len(STEPS)
    assert report.skipped == len(STEPS)  # the env-error episodes are not comparable
    assert report.matching == report.episodes - report.skipped
    assert report.ok and not report.differing


def test_cli_rescore_all_match_exits_0(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, str(run_dir), "--rescore")
    assert (code, err) == (0, "")
    assert out.strip() == (
        "rescored 24 episodes of 3 steps: 21 match, 3 skipped (ended with an env error: not "
        "comparable)"
    )
    code, out, _ = cli(capsys, str(run_dir), "--rescore", "--step", "2", "--json")
    assert code == 0
    assert json.loads(out) == {
        "episodes": 8, "steps": 1, "matching": 7, "differing": [], "skipped": 1, "ok": True,
    }  # fmt: skip


def test_rescore_finds_an_edited_reward(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A reward function that changed since training: the saved rewards no longer match."""
    folder = make_run(tmp_path / "run", steps=(1, 2))

    def edit(record: dict[str, Any]) -> None:
        if record["env_id"] == WORDLE and record["seed"] == 204:
            record["rewards"][3] = 0.25

    edit_step(folder, 2, edit)
    code, out, err = cli(capsys, str(folder), "--rescore")
    assert code == 1 and not err
    lines = out.splitlines()
    assert lines[0] == (
        "rescored 16 episodes of 2 steps: 13 match, 1 differ, 2 skipped (ended with an env "
        "error: not comparable)"
    )
    assert lines[1] == (f"  step 2 {WORDLE} seed 204 (group 2): turn 4: reward 0.25 saved, 0 now")
    [difference] = rescore(read_rollouts(folder)).differing
    assert (difference.step, difference.env_id, difference.seed, difference.index) == (
        2, WORDLE, 204, 3,
    )  # fmt: skip
    assert difference.saved_rewards[3] == 0.25 and difference.new_rewards[3] == 0.0
    assert len(difference.new_rewards) == len(difference.saved_rewards)

    code, out, _ = cli(capsys, str(folder), "--rescore", "--json")
    report = json.loads(out)
    assert code == 1 and report["ok"] is False
    assert report["differing"][0]["index"] == 3 and report["differing"][0]["seed"] == 204
    # Step 1 alone still matches.
    assert cli(capsys, str(folder), "--rescore", "--step", "1")[0] == 0


def test_rescore_with_env_kwargs_that_change_the_rewards(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """partial_credit=0 takes the shaped reward away: every shaped episode differs at its first
    rewarded guess, the others still match."""
    records = [r for r in read_rollouts(run_dir) if r["env_id"] == GUESS and not r["error"]]
    report = rescore(records, env_kwargs={"partial_credit": 0.0})
    shaped = [r for r in records if r["env_kwargs"] == SHAPED]
    assert len(report.differing) == len(shaped)
    for difference, record in zip(report.differing, shaped, strict=True):
        assert (difference.step, difference.seed) == (record["step"], record["seed"])
        first = next(i for i, r in enumerate(record["rewards"]) if r != 0.0)
        assert difference.index == first
        assert difference.new_rewards == [0.0] * len(record["rewards"])
        assert difference.reason.startswith(f"turn {first + 1}: reward ")

    code, out, err = cli(capsys, str(run_dir), "--rescore", "--env-kwargs", '{"high": 50}')
    assert_one_line_error(code, err, "high", WORDLE)  # Wordle has no such argument
    code, out, _ = cli(capsys, str(run_dir), "--rescore", "--step", "3", "--env-kwargs", "{}")
    assert code == 0


def test_rescore_finds_an_episode_that_ends_elsewhere(run_dir: Path) -> None:
    record = next(r for r in read_rollouts(run_dir, 1) if r["ended_by"] == "truncated")
    # A shorter game: the env now ends the episode after 3 guesses; the saved one went on.
    [difference] = rescore([record], env_kwargs={"max_guesses": 3}).differing
    assert difference.index == 2 and "ends the episode here now" in difference.reason
    # Saved as ended by the env at its last step, but the env goes on now.
    record = {**record, "actions": record["actions"][:-1], "rewards": record["rewards"][:-1]}
    [difference] = rescore([record]).differing
    assert difference.index == len(record["actions"]) - 1
    assert "the env goes on now" in difference.reason
    # Ended by max_turns: the env must not end it there.
    invalid = next(r for r in read_rollouts(run_dir, 1) if r["ended_by"] == "max_turns")
    assert rescore([invalid]).ok
    assert not rescore([invalid], env_kwargs={"max_guesses": 2}).ok


def test_rescore_reuses_one_env_per_id_and_kwargs(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[tuple[str, dict[str, Any]]] = []
    real_make = gym.make

    def counting_make(env_id: str, **kwargs: Any) -> Any:
        made.append((env_id, kwargs))
        return real_make(env_id, **kwargs)

    monkeypatch.setattr(gym, "make", counting_make)
    assert rescore(read_rollouts(run_dir)).ok
    assert sorted(made, key=str) == sorted([(GUESS, SHAPED), (GUESS, {}), (WORDLE, {})], key=str)


SLEEPY = "TextSleepyReplay-v0"


class _SleepsOnSecondStep(gym.Wrapper):
    """GuessNumber, but its second step sleeps until the test wakes it (or 30 s pass)."""

    wake = threading.Event()
    closed = threading.Event()

    def __init__(self, env: gym.Env[str, str]) -> None:
        super().__init__(env)
        self.turn = 0

    def reset(self, **kwargs: Any) -> Any:
        self.turn = 0
        return self.env.reset(**kwargs)

    def step(self, action: str) -> Any:
        self.turn += 1
        if self.turn == 2:
            self.wake.wait(30)
        return self.env.step(action)

    def close(self) -> None:
        type(self).closed.set()
        super().close()


@pytest.fixture
def sleepy_env() -> Any:
    """SLEEPY registered; its sleeping step woken (and the ID removed) at the end."""
    gym.register(SLEEPY, entry_point=lambda **kw: _SleepsOnSecondStep(gym.make(GUESS, **kw)))
    _SleepsOnSecondStep.wake.clear()
    _SleepsOnSecondStep.closed.clear()
    yield _SleepsOnSecondStep
    _SleepsOnSecondStep.wake.set()
    del gym.registry[SLEEPY]


def _long_guess_record(run_dir: Path) -> dict[str, Any]:
    records = read_rollouts(run_dir, 1)
    return next(
        r for r in records if r["env_id"] == GUESS and not r["error"] and len(r["actions"]) >= 3
    )


def test_rescore_step_timeout(run_dir: Path, sleepy_env: Any) -> None:
    assert rescore(read_rollouts(run_dir, 1), step_timeout=30.0).ok  # a generous limit: no change
    long = _long_guess_record(run_dir)
    # The env sleeps in the episode's second step, far past the 0.2 s limit.
    report = rescore([{**long, "env_id": SLEEPY}], step_timeout=0.2)
    assert not sleepy_env.closed.is_set()  # its call still runs: the env is closed once it returns
    [difference] = report.differing
    assert difference.env_id == SLEEPY and difference.index == 1
    assert difference.reason.startswith("turn 2: the env failed: ")
    assert "did not return within env_step_timeout=0.2 s" in difference.reason
    assert difference.new_rewards == long["rewards"][:1]  # the first step still scored
    sleepy_env.wake.set()
    assert sleepy_env.closed.wait(10)  # the abandoned env is closed after its call returned


def test_rescore_goes_on_while_a_timed_out_step_still_runs(run_dir: Path, sleepy_env: Any) -> None:
    long = _long_guess_record(run_dir)
    # Woken after 5 s at the latest: a rescore that waited for the hung call returns after it.
    threading.Timer(5.0, sleepy_env.wake.set).start()
    report = rescore([{**long, "env_id": SLEEPY}, long], step_timeout=0.2)
    assert report.episodes == 2 and report.matching == 1
    assert not sleepy_env.wake.is_set()  # the next episode did not wait for the hung call


# --- errors ---------------------------------------------------------------------------------------


def test_load_run_errors_say_what_to_do(tmp_path: Path, run_dir: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_run(tmp_path / "nowhere")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(UsageError, match="not a folder"):
        load_run(tmp_path / "file.txt")
    with pytest.raises(UsageError, match=r"not a trl-env run \(no train_config.json\)"):
        load_run(tmp_path)
    (tmp_path / "train_config.json").write_text("{}")
    with pytest.raises(UsageError, match="train with --save-rollouts"):
        load_run(tmp_path)


def test_cli_errors_are_one_line_and_exit_2(
    tmp_path: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_one_line_error(*cli(capsys, str(tmp_path / "nowhere"))[::2], "does not exist")
    assert_one_line_error(*cli(capsys, str(tmp_path))[::2], "not a trl-env run")
    (tmp_path / "train_config.json").write_text("{}")
    assert_one_line_error(*cli(capsys, str(tmp_path))[::2], "train with --save-rollouts")
    assert_one_line_error(*cli(capsys, str(run_dir), "--step", "9")[::2], "saved steps are 1, 2, 3")
    assert_one_line_error(
        *cli(capsys, str(run_dir), "--rescore", "--step", "9")[::2], "saved steps are 1, 2, 3"
    )
    assert_one_line_error(*cli(capsys, str(run_dir), "--worst", "--best")[::2], "not both")
    assert_one_line_error(*cli(capsys, str(run_dir), "--rescore", "--worst")[::2], "--rescore")
    assert_one_line_error(*cli(capsys, str(run_dir), "--limit", "0")[::2], "--limit must be >= 1")
    assert_one_line_error(*cli(capsys, str(run_dir), "--env-kwargs", '{"a": 1}')[::2], "--rescore")
    assert_one_line_error(
        *cli(capsys, str(run_dir), "--rescore", "--env-kwargs", "[1]")[::2], "JSON object"
    )
    assert_one_line_error(
        *cli(capsys, str(run_dir), "--rescore", "--env-kwargs", '{"bogus": 1}')[::2], "bogus"
    )
    assert_one_line_error(*cli(capsys)[::2], "RUN")


def test_replay_is_listed_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "replay" in capsys.readouterr().out
    assert main(["replay", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--step", "--worst", "--best", "--limit", "--rescore", "--env-kwargs", "--json"):
        assert option in out


def test_replay_config_checks() -> None:
    assert ReplayConfig(run="r").limit is None
    with pytest.raises(UsageError, match="name the run folder"):
        ReplayConfig()
    with pytest.raises(UsageError, match="--all-steps, not both"):
        ReplayConfig(run="r", step=1, all_steps=True)
