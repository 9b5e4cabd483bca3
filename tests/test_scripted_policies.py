"""An env's own scripted players (Hangman's ``frequency``): the policy, ``trl-env eval --policy
NAME``, demos and the refusals for an env without the player."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from trl_env.envs.hangman import FREQUENCY_ORDER

import trl_env
from trl_env._demos import DemosConfig, plays_demos, record_demos
from trl_env._eval import evaluate, policy_kind
from trl_env._play import play_episode
from trl_env._policies import ScriptedPolicy, scripted_policies
from trl_env.cli import main
from trl_env.error import UsageError


def replies(episode: trl_env.Episode) -> list[str]:
    return [m["content"] for m in episode.messages() if m["role"] == "assistant"]


def test_hangman_names_its_frequency_player_and_other_envs_none() -> None:
    assert scripted_policies(gym.make("TextHangman-v0")) == ("frequency",)
    assert scripted_policies(gym.make("TextHangmanHard-v0")) == ("frequency",)
    assert scripted_policies(gym.make("TextWordle-v0")) == ()
    # A two-player game's scripted players are opponents (--opponent), not one-player policies.
    assert scripted_policies(gym.make("TextTicTacToe-v0")) == ()


def test_the_frequency_player_guesses_the_fixed_order_whatever_the_feedback() -> None:
    for seed in range(20):
        episode = play_episode(gym.make("TextHangman-v0"), ScriptedPolicy("frequency"), seed=seed)
        played = replies(episode)
        assert played == [f"[{c}]" for c in FREQUENCY_ORDER[: len(played)]]
        assert episode.invalid_actions == 0
    env = gym.make("TextHangman-v0")
    env.reset(seed=0, options={"secret": "garden"})
    for letter in "ea":  # guessed out of order by someone else: the player skips them
        env.step(f"[{letter}]")
    assert env.unwrapped.scripted_action("frequency") == "[s]"
    with pytest.raises(ValueError, match="no scripted player 'smart'"):
        env.unwrapped.scripted_action("smart")


def test_eval_of_the_frequency_player_is_the_documented_heuristic() -> None:
    # docs/multiturn.md: the fixed frequency order wins 45 of the 256 games of seeds 10000-10255.
    report = evaluate(["TextHangman-v0"], "frequency", episodes=256, seed=10000)
    summary = report.summaries["TextHangman-v0"]
    assert round(summary.success_rate * 256) == 45 and summary.invalid_action_rate == 0.0
    assert (round(summary.success_ci_low, 3), round(summary.success_ci_high, 3)) == (0.134, 0.227)


def test_eval_command_takes_a_scripted_player(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", "TextHangman-v0", "--policy", "frequency", "--episodes", "4", "--json"]
    assert main([*argv, "--no-progress", "--out", str(tmp_path / "e")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["policy"] == "frequency" and report["envs"]["TextHangman-v0"]["episodes"] == 4
    assert main(["eval", "TextHangman-v0", "TextWordle-v0", "--policy", "frequency"]) == 2
    assert "scripted player of TextHangman-v0, not of TextWordle-v0" in capsys.readouterr().err
    # Only other envs have it: a usage error that names them, not a model called "frequency".
    assert main(["eval", "TextWordle-v0", "--policy", "frequency"]) == 2
    err = capsys.readouterr().err
    assert "scripted player of TextHangman-v0, TextHangmanHard-v0, not of TextWordle-v0" in err
    # With --samples the deterministic player replays its games: pass@k = avg@k = success.
    assert main([*argv, "--no-progress", "--samples", "2", "--episodes", "8"]) == 0
    report = json.loads(capsys.readouterr().out)["envs"]["TextHangman-v0"]
    assert report["pass_at_k"] == report["avg_at_k"] == report["success_rate"]


def test_policy_kind_of_a_scripted_player(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert policy_kind("frequency", ["TextHangman-v0", "TextHangmanHard-v0"]) == "scripted"
    assert policy_kind("frequency", ["TextHangman-v0", "TextHangman-v0"]) == "scripted"
    with pytest.raises(UsageError, match="not of TextWordle-v0"):
        policy_kind("frequency", ["TextHangman-v0", "TextWordle-v0"])
    # Asked with no env (head to head), the name of another env's player is no Hub model.
    with pytest.raises(UsageError, match="scripted player of TextHangman-v0"):
        policy_kind("frequency")
    # A folder of the player's name: the player plays (as random and oracle do), with a warning,
    # and ./frequency names the folder.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "frequency").mkdir()
    with pytest.warns(UserWarning, match="give ./frequency for the path"):
        assert policy_kind("frequency", ["TextHangman-v0"]) == "scripted"
    assert policy_kind("./frequency", ["TextHangman-v0"]) == "model"
    assert policy_kind("frequency", ["TextWordle-v0"]) == "model"  # there, it is the folder


def test_demos_of_a_scripted_player(tmp_path: Path) -> None:
    rows = record_demos(["TextHangman-v0"], policy="frequency", episodes=3)
    assert [row["policy"] for row in rows] == ["frequency"] * 3
    for row in rows:
        said = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
        assert said == [f"[{c}]" for c in FREQUENCY_ORDER[: len(said)]]
    assert plays_demos("frequency", ["TextHangman-v0"]) and plays_demos("oracle", [])
    assert not plays_demos(str(tmp_path), ["TextHangman-v0"])  # a folder of recorded demos
    with pytest.raises(UsageError, match="not of TextWordle-v0"):
        plays_demos("frequency", ["TextWordle-v0"])
    with pytest.raises(UsageError, match="not of TextWordle-v0"):
        DemosConfig(env_ids=["TextWordle-v0"], policy="frequency")
    with pytest.raises(UsageError, match="policy must be oracle, random or a scripted player"):
        DemosConfig(env_ids=["TextWordle-v0"], policy="smart")


def test_sft_names_what_its_demos_need() -> None:
    pytest.importorskip("trl")
    from trl_env.trl._sft import SFTRunConfig

    with pytest.raises(UsageError, match="--demos frequency needs the environment IDs"):
        SFTRunConfig(model="m.gguf", demos="frequency")
    SFTRunConfig(env_ids=["TextHangman-v0"], model="m.gguf", demos="frequency")
