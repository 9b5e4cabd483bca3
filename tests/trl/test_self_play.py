"""Self-play in the rollout (issue 32, item 2): both seats from one generation call per round,
each seat its own token-exact sample with a +1/-1 return, and per-role advantages."""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import SimpleNamespace

import pytest
import torch

import trl_env  # noqa: F401 (registers the envs)
from trl_env.error import EnvErrorWarning, UsageError
from trl_env.trl import make_dataset, make_rollout_func
from trl_env.trl._credit import normalize_returns, turn_advantages
from trl_env.trl.models import build_tiny_tokenizer

CELLS = [f"{c}{r}" for r in "123" for c in "abc"]


@pytest.fixture(scope="module")
def tokenizer():
    return build_tiny_tokenizer("qwen3")


class BoardReader:
    """A generator that reads the last board in each input and names its first free cell; it
    records each call's inputs."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.calls: list[list[list[int]]] = []
        self.samples: dict[int, list[list[int]]] = {}  # per call, what it sampled

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int):
        self.calls.append([list(x) for x in inputs])
        end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        samples = []
        for ids in inputs:
            text = self.tokenizer.decode(ids)
            rows = re.findall(r"^([123])  ([.XO]) ([.XO]) ([.XO])$", text, re.M)[-3:]
            marks = [mark for row in rows for mark in row[1:]]
            cell = CELLS[marks.index(".")]
            samples.append([*self.tokenizer.encode(f"[{cell}]", add_special_tokens=False), end])
        self.samples[len(self.calls)] = samples
        return samples, [[-0.25] * len(s) for s in samples]


def trainer_for(tokenizer, budget: int = 1024):
    logged: list[tuple[str, float]] = []
    return SimpleNamespace(
        processing_class=tokenizer,
        max_completion_length=budget,
        accelerator=None,
        _log_metric=lambda name, value: logged.append((name, value)),
        logged=logged,
    )


def prompts(env_id: str = "TextTicTacToe-v0", tasks: int = 2, copies: int = 4) -> list:
    dataset = make_dataset(env_id, tasks, seed=1)
    return [prompt for prompt in dataset["prompt"] for _ in range(copies)]


def test_self_play_one_call_per_round_both_seats_token_exact(tokenizer) -> None:
    generator = BoardReader(tokenizer)
    rollout = make_rollout_func(generator=generator, self_play=True, max_new_tokens_per_turn=8)
    trainer = trainer_for(tokenizer)
    output = rollout(prompts(tasks=2, copies=4), trainer)
    # 8 rows = 4 games; first free cell each move: X a1, O b1, X c1, O a2, X b2, O c2, X a3
    # (c1-b2-a3): 7 rounds, each one generation call for the seat to move of all 4 games.
    assert [len(call) for call in generator.calls] == [4] * 7
    assert output["episode_role"] == [0, 1] * 4
    assert output["episode_seat"] == ["X", "O"] * 4
    assert output["episode_result"] == ["win", "loss"] * 4
    assert output["episode_game"] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert output["episode_opponent"] == ["self"] * 8
    assert output["episode_return"] == [1.0, -1.0] * 4
    assert output["episode_turns"] == [4, 3] * 4
    # Each seat's sample is its own conversation, token-exact: prompt = its first observation;
    # completion = what it sampled, and between its turns the ids of what it was told.
    processor = rollout.processor_for(tokenizer)
    for row, episode in enumerate(rollout.last_episodes):
        told = [e["text"] for e in episode.transcript if e["role"] == "env"]
        mark = "X" if row % 2 == 0 else "O"
        assert f"You are {mark}" in told[0]
        assert not any(f"You are {'O' if mark == 'X' else 'X'}" in text for text in told)
        assert output["prompt_ids"][row] == processor.initial_prompt_ids(
            rollout.config.system_prompt, told[0]
        )
        game = row // 2
        calls = range(1, 8, 2) if mark == "X" else range(2, 8, 2)
        sampled = [generator.samples[c][game] for c in calls]
        expected, mask = [], []
        for turn, ids in enumerate(sampled):
            if turn:
                chunk = processor.env_turn_ids(told[turn], last_token_id=expected[-1])
                expected += chunk
                mask += [0] * len(chunk)
            expected += ids
            mask += [1] * len(ids)
        assert output["completion_ids"][row] == expected
        assert output["env_mask"][row] == mask
        assert output["logprobs"][row] == [-0.25 if m else 0.0 for m in mask]
    # The model's input of each call is that seat's stream so far.
    assert (
        generator.calls[2][0]
        == output["prompt_ids"][0]
        + output["completion_ids"][0][: len(generator.calls[2][0]) - len(output["prompt_ids"][0])]
    )
    logged = dict(trainer.logged)
    assert logged["seats/first_mover_score"] == 1.0 and logged["seats/second_mover_score"] == 0.0


def test_a_fixed_opponent_plays_the_other_seat_and_seats_alternate(tokenizer) -> None:
    generator = BoardReader(tokenizer)
    rollout = make_rollout_func(generator=generator, opponent="perfect", max_new_tokens_per_turn=8)
    output = rollout(prompts(tasks=1, copies=4), trainer_for(tokenizer))
    # One game per row: the model moves first in even rows, second in odd rows.
    assert output["episode_role"] == [0, 1, 0, 1]
    assert output["episode_seat"] == ["X", "O", "X", "O"]
    assert output["episode_opponent"] == ["perfect"] * 4
    # The perfect player never loses: first-free-cell draws or loses against it.
    assert all(result in ("draw", "loss") for result in output["episode_result"])
    assert all(r in (0.0, -1.0) for r in output["episode_return"])
    # One call per round for the model's seats to move: the games where it moves first in odd
    # rounds, the others in even ones.
    assert {len(call) for call in generator.calls} == {2}


def test_self_play_refuses_one_player_envs_and_unpaired_batches(tokenizer) -> None:
    rollout = make_rollout_func(generator=BoardReader(tokenizer), self_play=True)
    with pytest.raises(UsageError, match=r"two-player envs.*TextWordle-v0 is a one-player"):
        rollout(prompts("TextWordle-v0", tasks=1, copies=2), trainer_for(tokenizer))
    with pytest.raises(UsageError, match="does not pair up: use an even num_generations"):
        rollout(prompts(tasks=1, copies=3), trainer_for(tokenizer))
    with pytest.raises(UsageError, match="does not pair up"):
        rollout(prompts(tasks=2, copies=1), trainer_for(tokenizer))


class HangingTicTacToe:
    """TextTicTacToe-v0 whose seat O hangs on its moves in the games of seed ``hang_seed``."""

    hang_seed: int | None = None

    @staticmethod
    def register() -> str:
        import time

        import gymnasium as gym
        from trl_env.envs.tictactoe import TextTicTacToeEnv

        class Env(TextTicTacToeEnv):
            def start_seats(self, seed=None):
                self.hangs = seed == HangingTicTacToe.hang_seed
                return super().start_seats(seed)

            def seat_step(self, seat, action):
                if self.hangs and seat == 1:
                    time.sleep(3.0)
                return super().seat_step(seat, action)

        env_id = "test/HangingTicTacToe-v0"
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=Env, max_episode_steps=10)
        return env_id


def test_a_hanging_seat_step_ends_its_game_under_env_step_timeout(tokenizer) -> None:
    env_id = HangingTicTacToe.register()
    rollout = make_rollout_func(
        generator=BoardReader(tokenizer), self_play=True, max_new_tokens_per_turn=8,
        env_step_timeout=0.5,
    )  # fmt: skip
    trainer = trainer_for(tokenizer)
    dataset = make_dataset(env_id, 2, seed=1)
    HangingTicTacToe.hang_seed = json_seed(dataset["prompt"][1])  # the second task's games hang
    rows = [prompt for prompt in dataset["prompt"] for _ in range(4)]
    with pytest.warns(EnvErrorWarning, match="the game failed") as said:  # said, not silent
        output = rollout(rows, trainer)
    assert len(said) == 2  # once per failed game
    episodes = rollout.last_episodes
    # The first task's games play on; both seats of each game of the second end with the
    # timeout and the env error penalty (-1 by default) on top of what they had earned.
    assert output["episode_result"][:4] == ["win", "loss"] * 2
    for episode in episodes[4:]:
        assert episode.ended_by == "error" and "StepTimeoutError" in episode.error
        assert episode.rewards[-1] == -1.0
    assert all(episode.error is None for episode in episodes[:4])
    assert dict(trainer.logged)["env/error_rate"] == 0.5


def json_seed(prompt) -> int:
    from trl_env.trl import task_from_prompt

    return task_from_prompt(prompt).seed


def test_per_role_normalization_by_hand() -> None:
    # One group of 4: first movers returned 1 and 0 (mean 0.5, std 0.7071), second movers -1
    # and 0.5 (mean -0.25, std 1.0607); each is normalized within its own role.
    advantages = normalize_returns([[1.0], [-1.0], [0.0], [0.5]], 4, roles=[0, 1, 0, 1])
    assert advantages[0][0] == pytest.approx(0.5 / (0.70711 + 1e-4), rel=1e-4)
    assert advantages[2][0] == pytest.approx(-0.5 / (0.70711 + 1e-4), rel=1e-4)
    assert advantages[1][0] == pytest.approx(-0.75 / (1.06066 + 1e-4), rel=1e-4)
    assert advantages[3][0] == pytest.approx(0.75 / (1.06066 + 1e-4), rel=1e-4)
    # Without roles the same returns share one baseline: another answer.
    assert normalize_returns([[1.0], [-1.0], [0.0], [0.5]], 4)[0][0] != advantages[0][0]
    # A role alone in its group has no baseline: 0. "none" centres without dividing.
    assert normalize_returns([[1.0], [0.0], [0.5]], 3, roles=[0, 1, 1])[0] == [0.0]
    assert normalize_returns([[1.0], [-1.0], [0.0], [0.5]], 4, "none", [0, 1, 0, 1]) == [
        [0.5], [-0.75], [-0.5], [0.75]
    ]  # fmt: skip


def test_per_role_token_advantages_for_episode_and_turn_credit() -> None:
    mask = torch.tensor([[1, 0, 1], [1, 0, 1], [1, 0, 0], [1, 0, 0]])
    rewards = [[0.0, 1.0], [-0.1, -1.0], [-1.0], [1.0]]
    roles = [0, 1, 0, 1]
    episode = turn_advantages(
        rewards, mask, num_generations=4, roles=roles, episode_returns=[1.0, -1.1, -1.0, 1.0]
    )
    # Episode credit: every model token of an episode gets its per-role GRPO advantage.
    a = 1.0 / (2**0.5 + 1e-4)
    b = 1.05 / (((2.1**2) / 2) ** 0.5 + 1e-4)
    assert episode[0].tolist() == pytest.approx([a, 0.0, a], rel=1e-4)
    assert episode[2].tolist() == pytest.approx([-a, 0.0, 0.0], rel=1e-4)
    assert episode[1].tolist() == pytest.approx([-b, 0.0, -b], rel=1e-4)
    assert episode[3].tolist() == pytest.approx([b, 0.0, 0.0], rel=1e-4)
    # Turn credit: each turn its return-to-go, normalized among its role's episodes.
    turn = turn_advantages(rewards, mask, num_generations=4, roles=roles)
    by_hand = normalize_returns([[1.0, 1.0], [-1.1, -1.0], [-1.0], [1.0]], 4, roles=roles)
    assert turn[1].tolist() == pytest.approx([by_hand[1][0], 0.0, by_hand[1][1]], rel=1e-5)


def test_scripted_games_are_unchanged_by_the_zero_sum_option() -> None:
    import gymnasium as gym

    from trl_env._episode import Task
    from trl_env._seats import play_matches
    from trl_env._two_player import ScriptedPolicy

    def play(zero_sum: bool):
        envs = [gym.make("TextTicTacToe-v0") for _ in range(3)]
        tasks = [Task("TextTicTacToe-v0", seed) for seed in range(3)]
        movers = [(ScriptedPolicy("random"), ScriptedPolicy("greedy"))] * 3
        matches = play_matches(envs, tasks, movers, zero_sum=zero_sum)
        return [[(p.result, p.episode.transcript, p.episode.rewards) for p in m.players]
                for m in matches]  # fmt: skip

    plain, zero_sum = play(False), play(True)
    for game_plain, game_zero in zip(plain, zero_sum, strict=True):
        for (result, transcript, rewards), (result2, _, rewards2) in zip(
            game_plain, game_zero, strict=True
        ):
            assert result == result2  # the same moves, the same game
            moves = [e for e in transcript if e["role"] == "agent"]
            assert moves and len(rewards) == len(rewards2)
            assert rewards2[-1] - rewards[-1] == {"win": 0.0, "draw": -0.5, "loss": -1.0}[result]


def test_train_self_play_with_a_pool_lora_saved_rollouts_replay_and_resume(
    tiny_model_dir: str, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from trl_env._rollout_records import read_rollouts
    from trl_env.cli import main

    out = tmp_path / "run"
    argv = ["train", "TextTicTacToe-v0", "--model", tiny_model_dir, "--lora", "--self-play"]
    argv += ["--opponent", "pool", "--opponent-refresh-steps", "1", "--opponent-pool-size", "2"]
    argv += ["--max-steps", "2", "--num-generations", "4", "--batch-size", "8", "--num-tasks", "8"]
    argv += ["--max-new-tokens-per-turn", "4", "--max-completion-length", "128"]
    argv += ["--warm-start", "none", "--eval-every", "0", "--save-steps", "1", "--no-progress"]
    argv += ["--no-plot", "--threads", "1", "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    # The pool: a snapshot (a LoRA adapter) at steps 0 and 1, the last 2 kept.
    pool = sorted(p.name for p in (out / "opponent_pool").iterdir())
    assert pool == ["step-0", "step-1"]
    assert (out / "opponent_pool" / "step-1" / "adapter_config.json").is_file()
    records = read_rollouts(out, step=2)
    assert len(records) == 8
    assert [r["seat"]["role"] for r in records] == [0, 1] * 4
    assert {r["seat"]["opponent"] for r in records} <= {"pool:step-0", "pool:step-1"}
    assert all(r["seat"]["result"] in ("win", "draw", "loss") for r in records)
    metrics = (out / "metrics.csv").read_text()
    assert "seats/first_mover_score" in metrics
    # replay shows the seat of each episode.
    assert main(["replay", str(out), "--step", "2", "--limit", "2"]) == 0
    shown = capsys.readouterr().out
    assert "seat X (first mover) of game 0" in shown and "seat O (second mover) of game 1" in shown
    assert "opponent pool:step-" in shown
    # --rescore skips seats (their rewards depend on the other seat's moves) and says so.
    assert main(["replay", str(out), "--rescore"]) == 0
    assert "skipped" in capsys.readouterr().out
    # Resume finds the pool again and goes on.
    assert main([*argv[:argv.index("--max-steps") + 1], "3", *argv[argv.index("--max-steps") + 2:],
                 "--resume"]) == 0  # fmt: skip
    capsys.readouterr()
    pool = sorted(p.name for p in (out / "opponent_pool").iterdir())
    assert pool == ["step-1", "step-2"]
    record = json.loads((out / "run.json").read_text())
    assert record["steps"] == 3


def test_train_self_play_pairs_the_seats_of_each_game(
    tiny_model_dir: str, tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    from trl_env._rollout_records import read_rollouts
    from trl_env.cli import main

    out = tmp_path / "run"
    argv = ["train", "TextTicTacToe-v0", "--model", tiny_model_dir, "--self-play", "--credit"]
    argv += ["turn", "--max-steps", "1", "--num-generations", "4", "--batch-size", "8"]
    argv += ["--num-tasks", "8", "--max-new-tokens-per-turn", "4", "--max-completion-length"]
    argv += ["256", "--warm-start", "none", "--eval-every", "1", "--eval-episodes", "2"]
    assert main([*argv, "--no-progress", "--no-plot", "--threads", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    # The held-out evals ran (against the env's own opponent), before and after the step.
    import csv

    with (out / "metrics.csv").open(newline="") as handle:
        rows = [row for row in csv.DictReader(handle) if row.get("eval_success_rate")]
    assert [int(float(row["step"])) for row in rows] == [0, 1]
    records = read_rollouts(out, step=1)
    outcome = {"win": "loss", "loss": "win", "draw": "draw"}
    for first, second in zip(records[::2], records[1::2], strict=True):
        assert first["seat"]["game"] == second["seat"]["game"]
        assert (first["seat"]["role"], second["seat"]["role"]) == (0, 1)
        assert first["seat"]["opponent"] == "self"
        assert outcome[first["seat"]["result"]] == second["seat"]["result"]
        assert first["seed"] == second["seed"] and first["group"] == second["group"]


def test_train_self_play_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from trl_env.cli import main

    assert main(["train", "TextWordle-v0", "--self-play", "--max-steps", "1"]) == 2
    err = capsys.readouterr().err
    assert "TextWordle-v0 is a one-player env" in err and "TextTicTacToe-v0" in err
    assert main(["train", "TextTicTacToe-v0", "--opponent", "pool", "--num-generations", "2"]) == 2
    assert "even num_generations of at least 4" in capsys.readouterr().err


def test_the_self_play_benchmark_runs_the_product_end_to_end(
    tiny_model_dir: str, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """benchmarks/self_play.py: one train command, four head-to-head evals, one JSON line."""
    import json
    import sys
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    sys.modules.pop("self_play", None)
    import self_play

    out = tmp_path / "bench"
    argv = [
        "--model",
        tiny_model_dir,
        "--max-steps",
        "1",
        "--eval-episodes",
        "4",
        "--out",
        str(out),
    ]
    for arg in (
        "--num-generations",
        "4",
        "--batch-size",
        "8",
        "--num-tasks",
        "8",
        "--warm-start-episodes",
        "4",
        "--max-new-tokens-per-turn",
        "4",
        "--max-completion-length",
        "128",
        "--eval-every",
        "0",
        "--threads",
        "1",
    ):
        argv.append(f"--train-arg={arg}")  # fmt: skip
    result = self_play.main(argv)
    assert result["env"] == "TextTicTacToe-v0" and result["steps"] == 1
    assert "--self-play --warm-start random" in result["command"]
    for name in ("vs_warm_start", "vs_random_trained", "vs_random_warm_start",
                 "vs_warm_start_sampled"):  # fmt: skip
        played = result[name]
        assert played["games"] == 4 and played["wins"] + played["draws"] + played["losses"] == 4
        assert 1 <= played["distinct_games"] <= 4
        assert played["score_ci_low"] <= played["score"] <= played["score_ci_high"]
        assert (out / "eval" / name / "results.json").is_file()
    low = result["vs_warm_start"]["score_ci_low"]
    assert result["beats_warm_start"] == (low > 0.5)
    sampled = result["vs_warm_start_sampled"]["score_ci_low"]
    assert result["beats_warm_start_sampled"] == (sampled > 0.5)
    sampled_command = result["eval_commands"]["vs_warm_start_sampled"]
    assert "--temperature 1 " in sampled_command and "--opponent-temperature 1 " in sampled_command
    assert json.loads((out / "result.json").read_text()) == result
    # The self-play run's warm start played its demos in both seats.
    demos = [json.loads(line) for line in (out / "run" / "warm_start" / "demos" / "demos.jsonl")
             .read_text().splitlines()]  # fmt: skip
    assert len(demos) == 8 and [row["seat"] for row in demos] == ["X", "O"] * 4


def test_seat_demos_play_both_seats_each_in_its_own_conversation() -> None:
    from trl_env._demos import record_demos

    rows = record_demos("TextTicTacToe-v0", policy="random", episodes=3, seats=True)
    assert [row["seat"] for row in rows] == ["X", "O"] * 3
    for first, second in zip(rows[::2], rows[1::2], strict=True):
        assert first["seed"] == second["seed"]
        assert "You are X" in first["messages"][1]["content"]
        assert "You are O" in second["messages"][1]["content"]
        assert not any("You are O" in m["content"] for m in first["messages"])
        # One game: at most one seat won it.
        assert not (first["success"] and second["success"])
        assert [m["role"] for m in first["messages"][:3]] == ["system", "user", "assistant"]
    # The same seeds replay the same games; one-player envs refuse seats.
    assert record_demos("TextTicTacToe-v0", policy="random", episodes=3, seats=True) == rows
    with pytest.raises(UsageError, match="TextWordle-v0 is a one-player env: drop --seats"):
        record_demos("TextWordle-v0", policy="random", episodes=1, seats=True)
