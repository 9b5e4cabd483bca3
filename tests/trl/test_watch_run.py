"""Watching a run while it learns: held-out evals during training, trackers, saved rollouts and
the signals of a stuck run (issue: "watch a run")."""

from __future__ import annotations

import csv
import glob
import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("trl")

from trl_env._rollout_records import read_rollouts, rollout_steps
from trl_env._summary import wilson_interval
from trl_env.cli import main as cli_main
from trl_env.trl._tasks import make_dataset
from trl_env.trl.training import train
from trl_env.trl.training._callbacks import (
    STUCK_STEPS,
    CsvLog,
    MetricsCallback,
)
from trl_env.trl.training._heldout import check_heldout_seeds

GUESS = "TextGuessNumber-v0"
LARGEST = "TextLargestNumber-v0"
FAST: dict[str, Any] = {
    "per_device_train_batch_size": 16,
    "num_tasks": 32,
    "warm_start_steps": 10,
    "plot": False,
}


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def multiturn_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A 3-step run on a multi-turn game with every watching feature on."""
    out = tmp_path_factory.mktemp("watch") / "run"
    lines: list[str] = []
    result = train(
        GUESS,
        output_dir=str(out),
        max_steps=3,
        max_completion_length=64,
        max_new_tokens_per_turn=8,
        credit="turn",
        eval_every=1,
        eval_episodes=8,
        eval_samples=2,
        report_to="tensorboard",
        log=lines.append,
        **{**FAST, "plot": True},
    )
    return SimpleNamespace(out=out, result=result, lines=lines)


# ---------------------------------------------------------------------------- held-out evals


def test_evals_before_the_first_step_and_after_each(multiturn_run: Any) -> None:
    rows = read_csv(multiturn_run.out / "metrics.csv")
    assert [row["step"] for row in rows] == ["0", "1", "2", "3"]
    for row in rows:
        rate, low, high = (float(row[f"eval_success_{k}"]) for k in ("rate", "ci_low", "ci_high"))
        assert 0.0 <= low <= rate <= high <= 1.0
        assert float(row["eval_pass_at_k"]) >= float(row["eval_avg_at_k"]) >= 0.0
        assert float(row["eval_samples"]) == 2
        assert float(row["eval_seconds"]) > 0
        assert float(row["eval_mean_turns"]) >= 1.0
        assert 0.0 <= float(row["eval_invalid_action_rate"]) <= 1.0
    eval_lines = [line for line in multiturn_run.lines if line.startswith("eval @ step")]
    assert [line.split(" | ")[0] for line in eval_lines] == [f"eval @ step {i}" for i in range(4)]
    assert "of 8" in eval_lines[0] and "pass@2" in eval_lines[0]
    assert any(line.startswith("held-out evals: 4 x 8 episodes") for line in multiturn_run.lines)
    # The plot gets the held-out panel (a taller figure than reward + success alone).
    assert (multiturn_run.out / "learning_curve.png").is_file()


def test_the_final_eval_is_what_trl_env_eval_reports(multiturn_run: Any, tmp_path: Path) -> None:
    """Same play loop, same seeds, same settings: the in-training eval after the last step and
    ``trl-env eval --policy RUN --temperature 0`` on the same seeds agree exactly."""
    final = read_csv(multiturn_run.out / "metrics.csv")[-1]
    out = tmp_path / "eval"
    argv = ["eval", GUESS, "--policy", str(multiturn_run.out), "--episodes", "8"]
    assert cli_main([*argv, "--seed", "10000", "--temperature", "0", "--out", str(out)]) == 0
    report = json.loads((out / "results.json").read_text())["envs"][GUESS]
    assert report["success_rate"] == pytest.approx(float(final["eval_success_rate"]))
    assert report["mean_return"] == pytest.approx(float(final["eval_mean_return"]), abs=1e-5)
    assert report["mean_turns"] == pytest.approx(float(final["eval_mean_turns"]))


def test_heldout_seeds_must_avoid_the_training_set() -> None:
    dataset = make_dataset(LARGEST, 64, seed=0)
    check_heldout_seeds(dataset, [LARGEST], range(10_000, 10_032))  # no clash
    taken = int(dataset[5]["seed"])
    with pytest.raises(ValueError, match="overlap the training dataset"):
        check_heldout_seeds(dataset, [LARGEST], range(taken - 3, taken + 3))
    # Another env's seed is not a clash.
    check_heldout_seeds(dataset, [GUESS], [taken])


# ---------------------------------------------------------------------------- trackers


def test_every_env_metric_reaches_tensorboard(multiturn_run: Any) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    files = glob.glob(str(multiturn_run.out / "runs" / "*" / "events.out.tfevents.*"))
    assert len(files) == 1, files
    events = EventAccumulator(files[0])
    events.Reload()
    tags = set(events.Tags()["scalars"])
    for name in (
        "train/reward",
        "train/env/success_rate",
        "train/env/mean_return",
        "train/env/invalid_action_rate",
        "train/env/mean_turns",
        "train/env/error_rate",
        "train/env/ended_by_limit_rate",
        "train/env/cut_turn_rate",
        "train/frac_reward_zero_std",
        "train/time/generation_s",
        "train/time/env_s",
        "eval/success_rate",
        "eval/success_ci_low",
        "eval/success_ci_high",
        "eval/mean_return",
        "eval/invalid_action_rate",
        "eval/mean_turns",
        "eval/pass_at_k",
        "eval/avg_at_k",
        "eval/seconds",
    ):
        assert name in tags, (name, sorted(tags))
    assert [event.step for event in events.Scalars("eval/success_rate")] == [0, 1, 2, 3]
    assert [event.step for event in events.Scalars("train/env/success_rate")] == [1, 2, 3]
    rows = read_csv(multiturn_run.out / "metrics.csv")
    logged = [event.value for event in events.Scalars("train/env/mean_turns")]
    assert logged == pytest.approx([float(row["env/mean_turns"]) for row in rows[1:]], rel=1e-5)


def test_per_env_metrics_of_a_mixed_run_reach_tensorboard(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "mixed"
    # Per-env training metrics start once the run has seen both envs (3 steps of 4 tasks).
    settings = {**FAST, "per_device_train_batch_size": 32}
    train([LARGEST, GUESS], output_dir=str(out), max_steps=3, eval_episodes=4,
          report_to="tensorboard", progress=False, save_rollouts=False, **settings)  # fmt: skip
    (events_file,) = glob.glob(str(out / "runs" / "*" / "events.out.tfevents.*"))
    events = EventAccumulator(events_file)
    events.Reload()
    tags = set(events.Tags()["scalars"])
    for env_id in (LARGEST, GUESS):
        for name in ("success_rate", "invalid_action_rate", "mean_turns", "error_rate"):
            assert f"train/env/{env_id}/{name}" in tags, (env_id, name, sorted(tags))
        assert f"eval/{env_id}/success_rate" in tags


# ---------------------------------------------------------------------------- saved rollouts


def test_every_step_is_saved_with_its_advantages(multiturn_run: Any) -> None:
    assert rollout_steps(multiturn_run.out) == [1, 2, 3]
    for step in (1, 2, 3):
        records = read_rollouts(multiturn_run.out, step)
        assert len(records) == 16
        assert [r["group"] for r in records] == [0] * 8 + [1] * 8
        for record in records:
            assert record["step"] == step and record["env_id"] == GUESS
            assert record["messages"][0]["role"] == "user"  # the tiny model: no system prompt
            replies = [m for m in record["messages"] if m["role"] == "assistant"]
            # credit="turn": one advantage per model turn.
            assert isinstance(record["advantage"], list)
            assert len(record["advantage"]) == len(replies) == len(record["cut"])
            assert len(record["rewards"]) == len(record["invalid"]) == len(record["actions"])
            assert record["episode_return"] == pytest.approx(sum(record["rewards"]))
            tokens = record["tokens"]
            assert tokens["model"] + tokens["env"] == tokens["completion"] > 0


def test_replay_rescore_of_a_real_run_finds_nothing_changed(
    multiturn_run: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["replay", str(multiturn_run.out), "--rescore"]) == 0
    assert "48 match" in capsys.readouterr().out
    assert (
        cli_main(["replay", str(multiturn_run.out), "--step", "2", "--worst", "--limit", "1"]) == 0
    )
    assert "step 2" in capsys.readouterr().out


def test_episode_credit_advantages_are_grpo_s(tmp_path: Path) -> None:
    """The saved advantage of each episode is TRL's: (return - group mean) / (group std + 1e-4)."""
    out = tmp_path / "run"
    train(LARGEST, output_dir=str(out), max_steps=2, eval_every=0, progress=False, **FAST)
    assert not any("eval_success_rate" in row for row in read_csv(out / "metrics.csv"))
    records = read_rollouts(out, 2)
    for group in (0, 1):
        members = [r for r in records if r["group"] == group]
        returns = [r["episode_return"] for r in members]
        mean = sum(returns) / len(returns)
        std = math.sqrt(sum((x - mean) ** 2 for x in returns) / (len(returns) - 1))
        for record, value in zip(members, returns, strict=True):
            assert record["advantage"] == pytest.approx((value - mean) / (std + 1e-4), abs=1e-4)


# ---------------------------------------------------------------------------- signals


def test_time_split_and_cut_turns_per_step(multiturn_run: Any) -> None:
    # Every step's row has the split (what each part measures: the test below, on a known clock).
    for row in read_csv(multiturn_run.out / "metrics.csv")[1:]:
        parts = [float(row[k]) for k in ("time/generation_s", "time/env_s", "time/train_s")]
        assert all(part >= 0 for part in parts) and parts[0] > 0
        assert sum(parts) == pytest.approx(float(row["step_time"]), rel=1e-3, abs=1e-3)
        assert 0.0 <= float(row["env/cut_turn_rate"]) <= 1.0
        assert 0.0 <= float(row["frac_reward_zero_std"]) <= 1.0


class _Clock:
    """A stand-in for ``time.perf_counter`` that moves only when a fake call says it took time."""

    now = 0.0

    @classmethod
    def perf_counter(cls) -> float:
        return cls.now


CLOCKED = "TextClockedWatch-v0"


class ClockedEnv:
    """A protocol env whose reset takes 0.25 s and each of its 3 steps 1 s, on the fake clock."""

    RESET_S, STEP_S, TURNS = 0.25, 1.0, 3
    resets = steps = 0
    last_step_reward = 0.0
    alive = False

    def reset(self, seed: str) -> str:
        _Clock.now += self.RESET_S
        ClockedEnv.resets += 1
        self.alive, self.turn = True, 0
        return "Say anything."

    def step(self, action: str) -> str:
        _Clock.now += self.STEP_S
        ClockedEnv.steps += 1
        self.turn += 1
        self.alive, self.last_step_reward = self.turn < self.TURNS, 1.0
        return "ok"


class ClockedGenerator:
    """Replies ``[hi]``; each (batched) call takes 8 s on the fake clock."""

    SECONDS = 8.0

    def __init__(self, tokenizer: Any) -> None:
        eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
        self.ids = [*tokenizer.encode("[hi]", add_special_tokens=False), eos]
        self.calls = 0

    def generate(self, inputs: Any, max_new_tokens: int) -> Any:
        self.calls += 1
        _Clock.now += self.SECONDS
        ids = self.ids[:max_new_tokens]
        return [list(ids) for _ in inputs], [[-0.5] * len(ids) for _ in inputs]


def test_time_split_is_the_time_generating_and_in_the_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a clock that only the generator and the env move, the split is exactly their time:
    generation calls x 8 s, and resets x 0.25 s + steps x 1 s; train_s is the rest of the step."""
    import gymnasium as gym

    import trl_env
    from trl_env.trl import _rollout, make_rollout_func
    from trl_env.trl.models import build_tiny_tokenizer

    tokenizer = build_tiny_tokenizer("qwen3")
    trl_env.register_protocol_env(CLOCKED, f"{__name__}:ClockedEnv", max_episode_steps=5)
    try:
        prompts = [p for p in make_dataset(CLOCKED, 2, seed=0)["prompt"] for _ in range(2)]
        monkeypatch.setattr(_rollout, "time", SimpleNamespace(perf_counter=_Clock.perf_counter))
        _Clock.now, ClockedEnv.resets, ClockedEnv.steps = 100.0, 0, 0
        generator = ClockedGenerator(tokenizer)
        rollout = make_rollout_func(generator=generator)
        logged: dict[str, float] = {}
        trainer = SimpleNamespace(
            processing_class=tokenizer,
            max_completion_length=512,
            accelerator=None,
            _log_metric=logged.__setitem__,
        )
        rollout(prompts, trainer)
    finally:
        del gym.registry[CLOCKED]
    # 4 episodes of 3 turns, played in lockstep: 3 batched generation calls, 4 resets, 12 steps.
    assert (generator.calls, ClockedEnv.resets, ClockedEnv.steps) == (3, 4, 12)
    assert rollout.generation_seconds == logged["time/generation_s"] == 3 * 8.0
    assert rollout.env_seconds == logged["time/env_s"] == 4 * 0.25 + 12 * 1.0
    # The trainer's callback: the step's time (TRL's step_time) less the rollout's is training.
    callback = MetricsCallback(CsvLog(tmp_path / "metrics.csv"), progress=False, started=0.0)
    logs = {"reward": 0.0, **logged, "step_time": 40.0}
    callback.on_log(None, _state(1), None, logs=logs)
    [row] = read_csv(tmp_path / "metrics.csv")
    assert float(row["time/train_s"]) == pytest.approx(40.0 - 24.0 - 13.0)


def test_evals_do_not_change_training(tmp_path: Path) -> None:
    """Greedy evals draw no random numbers: the same seed trains the same with or without them."""
    runs = []
    for every in (0, 1):
        out = tmp_path / f"every{every}"
        train(LARGEST, output_dir=str(out), max_steps=2, eval_every=every, progress=False,
              save_rollouts=False, **FAST)  # fmt: skip
        runs.append([row["reward"] for row in read_csv(out / "metrics.csv") if row["reward"]])
    assert runs[0] == runs[1]


def test_sampled_evals_do_not_change_training_and_repeated_ids_play_once(tmp_path: Path) -> None:
    runs = []
    # The same training mix both times (LARGEST listed twice), with and without sampled evals.
    for every, env_ids in ((0, [LARGEST, LARGEST]), (1, [LARGEST, LARGEST])):
        out = tmp_path / f"every{every}"
        train(env_ids, output_dir=str(out), max_steps=2, eval_every=every, eval_episodes=4,
              eval_samples=2, progress=False, save_rollouts=False, **FAST)  # fmt: skip
        rows = read_csv(out / "metrics.csv")
        runs.append([row["reward"] for row in rows if row["reward"]])
    assert runs[0] == runs[1]
    # LARGEST listed twice weights the training mix; the eval plays its 4 seeds once each.
    wins = round(4 * float(rows[0]["eval_success_rate"]))
    assert float(rows[0]["eval_success_ci_high"]) == pytest.approx(wilson_interval(wins, 4)[1])
    assert "eval_TextLargestNumber-v0/success_rate" not in rows[0]


def test_overwrite_clears_the_saved_rollouts(tmp_path: Path) -> None:
    out = tmp_path / "run"
    train(LARGEST, output_dir=str(out), max_steps=2, eval_every=0, progress=False, **FAST)
    assert rollout_steps(out) == [1, 2]
    train(LARGEST, output_dir=str(out), max_steps=1, eval_every=0, progress=False,
          overwrite=True, **FAST)  # fmt: skip
    assert rollout_steps(out) == [1]


def _state(step: int) -> Any:
    return SimpleNamespace(global_step=step, max_steps=100, is_world_process_zero=True)


def test_a_stuck_run_is_warned_about_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    callback = MetricsCallback(CsvLog(tmp_path / "metrics.csv"), progress=True, started=0.0)
    for step in range(1, STUCK_STEPS):
        callback.on_log(None, _state(step), None, logs={"reward": 0.0, "frac_reward_zero_std": 1.0})
    # A varied step resets the count.
    callback.on_log(None, _state(50), None, logs={"reward": 0.0, "frac_reward_zero_std": 0.5})
    for step in range(51, 51 + STUCK_STEPS - 1):
        callback.on_log(None, _state(step), None, logs={"reward": 0.0, "frac_reward_zero_std": 1.0})
    assert "warning" not in capsys.readouterr().err
    for step in range(100, 110):
        callback.on_log(
            None, _state(step), None, logs={"reward": 0.0, "frac_reward_zero_std": 0.95}
        )
    err = capsys.readouterr().err
    assert err.count("warning: over 90% of GRPO groups") == 1
    assert "--num-generations" in err and "trl-env sft" in err


def test_the_best_held_out_eval_s_model_is_kept_in_run_best(
    multiturn_run: Any, tmp_path: Path
) -> None:
    """``RUN/best`` holds the model of the best held-out eval (success, then mean return, the
    earlier on a tie), ``best.json`` says which; ``trl-env eval --policy RUN/best`` replays that
    eval exactly."""
    rows = read_csv(multiturn_run.out / "metrics.csv")
    best = json.loads((multiturn_run.out / "best" / "best.json").read_text())
    scores = [(float(r["eval_success_rate"]), float(r["eval_mean_return"])) for r in rows]
    top = max(scores)
    assert best["step"] == int(rows[scores.index(top)]["step"])  # the first eval with the top score
    assert (best["eval_success_rate"], best["eval_mean_return"]) == pytest.approx(top)
    # A whole model with its tokenizer (what --final-model best copies into final/), and the
    # seeds and envs that chose it.
    for name in ("config.json", "model.safetensors", "tokenizer_config.json"):
        assert (multiturn_run.out / "best" / name).is_file(), name
    assert (best["eval_seed"], best["eval_episodes"], best["env_ids"]) == (10_000, 8, [GUESS])
    out = tmp_path / "eval"
    argv = ["eval", GUESS, "--policy", str(multiturn_run.out / "best"), "--episodes", "8"]
    assert cli_main([*argv, "--seed", "10000", "--temperature", "0", "--out", str(out)]) == 0
    report = json.loads((out / "results.json").read_text())["envs"][GUESS]
    assert (report["success_rate"], report["mean_return"]) == pytest.approx(top, abs=1e-5)


def test_a_better_eval_replaces_run_best_and_a_worse_one_does_not(tmp_path: Path) -> None:
    from trl_env.trl.training._best import BestHeldOutModel

    saved: list[str] = []
    trainer = SimpleNamespace(args=SimpleNamespace(output_dir=str(tmp_path)))
    trainer.save_model = lambda folder: saved.append(folder) or Path(folder).mkdir(exist_ok=True)
    keep = BestHeldOutModel(trainer)
    state = SimpleNamespace(global_step=0, is_world_process_zero=True)
    for step, rate, mean_return in ((0, 0.25, 0.1), (10, 0.5, -0.2), (20, 0.5, -0.3),
                                    (30, 0.5, -0.2), (40, 0.25, 0.9), (50, 0.5, 0.0)):  # fmt: skip
        state.global_step = step
        keep.on_log(
            None, state, None, logs={"eval_success_rate": rate, "eval_mean_return": mean_return}
        )
        keep.on_log(None, state, None, logs={"loss": 0.1})  # a training log: ignored
    assert keep.best_so_far() == {"step": 50, "eval_success_rate": 0.5, "eval_mean_return": 0.0}
    assert len(saved) == 3  # steps 0, 10 and 50: a tie (30) or a worse eval saves nothing


@pytest.mark.parametrize(
    ("resumed_at", "chosen_on", "kept"),
    [
        (40, {"eval_seed": 20_000, "eval_episodes": 32}, True),  # the same evals, step 30 <= 40
        (30, {"eval_seed": 20_000, "eval_episodes": 32}, True),
        (20, {"eval_seed": 20_000, "eval_episodes": 32}, False),  # kept on an abandoned stretch
        (40, {"eval_seed": 10_000, "eval_episodes": 32}, False),  # chosen on other seeds
        (40, {"eval_seed": 20_000, "eval_episodes": 64}, False),
        (40, {"eval_seed": 20_000, "eval_episodes": 32, "env_ids": ["TextWordle-v0"]}, False),
    ],
)
def test_a_resumed_run_drops_a_stale_best_model(
    tmp_path: Path, resumed_at: int, chosen_on: dict[str, Any], kept: bool
) -> None:
    """``best/`` from a step past the checkpoint resumed, or chosen by evals that played other
    seeds or envs, would win over the resumed run's evals: it is dropped so that they choose."""
    from trl_env.trl.training._best import BestHeldOutModel

    (tmp_path / "best").mkdir()
    record = {"step": 30, "eval_success_rate": 0.5, "eval_mean_return": 0.0, "eval_seed": 20_000,
              "eval_episodes": 32, "env_ids": [LARGEST]}  # fmt: skip
    (tmp_path / "best" / "best.json").write_text(json.dumps(record))
    trainer = SimpleNamespace(args=SimpleNamespace(output_dir=str(tmp_path)))
    keep = BestHeldOutModel(trainer, {"env_ids": [LARGEST], **chosen_on})
    state = SimpleNamespace(global_step=resumed_at, is_world_process_zero=True)
    keep.on_train_begin(None, state, None)
    assert (keep.best_so_far() == record) is kept
    assert (tmp_path / "best").exists() is kept


# ---------------------------------------------------------------------------- LoRA


def test_evals_saved_rollouts_and_the_best_model_as_final_with_lora(
    tiny_model_dir: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("peft")
    out = tmp_path / "lora"
    train(LARGEST, model=tiny_model_dir, lora=True, output_dir=str(out), max_steps=2,
          eval_every=1, eval_episodes=4, progress=False, final_model="best", **FAST)  # fmt: skip
    rows = read_csv(out / "metrics.csv")
    assert [row["step"] for row in rows] == ["0", "1", "2"]
    assert all(row["eval_success_rate"] != "" for row in rows)
    assert rollout_steps(out) == [1, 2]
    # RUN/best is a LoRA adapter too, and a policy of its own.
    assert (out / "best" / "adapter_config.json").is_file()
    argv = ["eval", LARGEST, "--policy", str(out / "best"), "--episodes", "4", "--seed", "10000"]
    assert cli_main([*argv, "--temperature", "0", "--out", str(tmp_path / "eval")]) == 0
    report = json.loads((tmp_path / "eval" / "results.json").read_text())["envs"][LARGEST]
    best = json.loads((out / "best" / "best.json").read_text())
    assert report["success_rate"] == pytest.approx(best["eval_success_rate"])
    # --final-model best: final/ is best/'s adapter, the last step's is in last/, run.json says
    # which step; `trl-env eval --policy RUN` plays it, warning that its seeds chose it.
    adapter = "adapter_model.safetensors"
    assert (out / "final" / adapter).read_bytes() == (out / "best" / adapter).read_bytes()
    assert (out / "last" / "adapter_config.json").is_file()
    assert json.loads((out / "run.json").read_text())["final_model_step"] == best["step"]
    capsys.readouterr()
    argv = ["eval", LARGEST, "--policy", str(out), "--episodes", "4", "--seed", "10000"]
    assert cli_main([*argv, "--temperature", "0", "--out", str(tmp_path / "eval_run")]) == 0
    assert "seeds 10000-10003; 4 of this eval's seeds are among them" in capsys.readouterr().err
    report = json.loads((tmp_path / "eval_run" / "results.json").read_text())["envs"][LARGEST]
    assert report["success_rate"] == pytest.approx(best["eval_success_rate"])


# ---------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-steps", "2", "--eval-every", "5"], "larger than the run"),
        (["--eval-episodes", "0"], "--eval-every 0"),
        (["--eval-every", "-1"], "eval_every must be an int >= 0"),
        (["--report-to", "nonsense"], "not a tracker transformers knows"),
        (["--eval-temperature", "0"], "eval_temperature must be > 0"),
    ],
)
def test_bad_watch_options_fail_before_training(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert cli_main(["train", LARGEST, "--output-dir", str(out), "--no-progress", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_an_overlapping_eval_seed_fails_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = int(make_dataset(LARGEST, 64, seed=0)[0]["seed"])
    out = tmp_path / "run"
    argv = ["train", LARGEST, "--num-tasks", "64", "--eval-seed", str(taken - 1)]
    assert cli_main([*argv, "--output-dir", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "overlap the training dataset" in err and f"--eval-seed (e.g. {taken + 1})" in err
    assert not out.exists()


def test_a_tracker_without_its_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wandb" else real(name, *a)
    )
    out = tmp_path / "run"
    argv = ["train", LARGEST, "--report-to", "tensorboard,wandb", "--output-dir", str(out)]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "--report-to wandb needs the 'wandb' package" in err and "pip install wandb" in err
    assert not out.exists()
