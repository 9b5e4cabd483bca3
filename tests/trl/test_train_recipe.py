"""``trl-env train``'s recipe in the product: ``--warm-start``, ``--minutes``, ``--recipe``, the
defaults a real model gets on a multi-turn env, the machine the run names (tiny model)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

import torch
import yaml

from trl_env._configs import config_to_yaml
from trl_env._env_traits import env_traits
from trl_env._machine import SPEED_FLAGS, cpu_summary, machine_record
from trl_env.cli import build_parser, main, parse_command_line
from trl_env.cli._train import config_from_args
from trl_env.error import UsageError
from trl_env.trl.training import TrainConfig
from trl_env.trl.training import _defaults as defaults_module
from trl_env.trl.training import _recipes as recipes_module
from trl_env.trl.training._recipes import describe_recipes, load_recipe, recipe_names

ENV = "TextGuessNumber-v0"
FAST = ["--batch-size", "16", "--num-tasks", "16", "--no-progress", "--no-plot", "--threads", "1"]


def parsed(argv: list[str]) -> TrainConfig:
    return config_from_args(parse_command_line(build_parser(), ["train", *argv]))


# --- recipes -------------------------------------------------------------------------------------


def test_recipe_list_prints_every_shipped_recipe(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--recipe", "list"]) == 0
    out = capsys.readouterr().out
    assert recipe_names() and all(name in out for name in recipe_names())
    assert out.strip() == describe_recipes()


def test_every_shipped_recipe_is_a_valid_config() -> None:
    for name in recipe_names():
        values = load_recipe(name)
        assert "bf16" not in values  # the machine decides
        config = TrainConfig(**{**values, "model": "m.gguf"})
        assert config.env_ids and config.recipe is None


def test_unknown_recipe_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", ENV, "--recipe", "multiturn-hangmn"]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'multiturn-hangman'" in err and "--recipe list" in err


def test_recipe_settings_are_defaults_that_flags_and_config_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(defaults_module, "_has_gpu", lambda: False)
    recipe = load_recipe("multiturn-hangman")
    config = parsed(["--recipe", "multiturn-hangman", "--model", "m.gguf"])
    assert config.recipe == "multiturn-hangman"
    assert config.env_ids == recipe["env_ids"]  # the recipe may give the env too
    assert config.gamma == recipe["gamma"] == 0.0 and config.env_kwargs == recipe["env_kwargs"]
    # A flag equal to the dataclass default still wins over the recipe.
    config = parsed(["TextHangman-v0", "--recipe", "multiturn-hangman", "--gamma", "1.0"])
    assert config.gamma == 1.0 and config.max_turns == recipe["max_turns"]
    # --config beats the recipe; flags beat both.
    file = tmp_path / "c.yaml"
    file.write_text(yaml.safe_dump({"max_turns": 9, "lora_r": 4}))
    config = parsed(["--recipe", "multiturn-hangman", "--config", str(file), "--lora-r", "8"])
    assert config.max_turns == 9 and config.lora_r == 8 and config.warm_start == "random"
    # --partial-credit beats the recipe's env_kwargs (and a run's config.yaml feeds back as it is).
    config = parsed(["--recipe", "multiturn-hangman", "--model", "m.gguf", "--partial-credit", "0"])
    assert config.partial_credit == 0
    assert config.resolved().env_kwargs == {"lives": 8, "partial_credit": 0.0}
    again = tmp_path / "again.yaml"
    again.write_text(config_to_yaml(parsed(["TextHangman-v0", "--model", "m.gguf"]).resolved()))
    resolved = parsed(["--config", str(again)]).resolved()
    assert (resolved.partial_credit, resolved.gamma, resolved.credit) == (0.5, 0, "turn")
    assert resolved.env_kwargs == {"partial_credit": 0.5}


def test_a_recipe_may_not_set_the_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "fast.yaml").write_text(
        "# forces bf16\nenv_ids: [TextGuessNumber-v0]\nbf16: true\n"
    )
    (tmp_path / "typo.yaml").write_text("env_ids: [TextGuessNumber-v0]\nlearnin_rate: 0.1\n")
    files = {path.stem: path for path in tmp_path.glob("*.yaml")}
    monkeypatch.setattr(recipes_module, "_files", lambda: files)
    assert main(["train", "--recipe", "fast"]) == 2
    assert "the CPU or GPU decides bf16" in capsys.readouterr().err
    assert main(["train", "--recipe", "typo"]) == 2
    assert "learnin_rate" in capsys.readouterr().err


def test_the_python_api_takes_a_recipe_under_its_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    from trl_env.trl.training import _run

    seen: dict[str, Any] = {}

    def stop(cfg: TrainConfig) -> None:
        seen["cfg"] = cfg
        raise RuntimeError("stop before work")

    monkeypatch.setattr(_run, "check_before_work", stop)
    with pytest.raises(RuntimeError, match="stop before work"):
        _run.train("TextHangman-v0", model="m.gguf", recipe="multiturn-hangman", gamma=1.0)
    cfg = seen["cfg"]
    assert cfg.gamma == 1.0 and cfg.env_kwargs == {"lives": 8, "partial_credit": 0.5}
    assert cfg.recipe == "multiturn-hangman" and cfg.max_completion_length == 896


# --- warm start and time budget (tiny model) ------------------------------------------------------


@pytest.mark.slow
def test_warm_start_random_then_rl_within_minutes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    out = tmp_path / "run"
    argv = [ENV, "--warm-start", "random", "--warm-start-episodes", "4", "--max-steps", "50"]
    # A budget the warm start alone spends: GRPO still runs one step, then evaluates and saves.
    argv += ["--minutes", "0.001", "--eval-episodes", "2", "--out", str(out), *FAST]
    assert main(["train", *argv]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["steps"] == 1 and summary["stopped_by"] == "minutes"
    warm = out / "warm_start"
    demos = [json.loads(line) for line in (warm / "demos" / "demos.jsonl").read_text().splitlines()]
    assert len(demos) == 4 and {row["policy"] for row in demos} == {"random"}
    assert (warm / "sft_config.json").is_file() and (warm / "final").is_dir()
    assert not (out / "warm_start_format").exists()  # demos replace the format warm start
    record = json.loads((out / "run.json").read_text())
    assert record["stopped_by"] == "minutes" and record["peak_rss_gb"] > 0
    assert record["machine"]["summary"] == cpu_summary(1) and summary["cpu"] == cpu_summary(1)
    assert yaml.safe_load((out / "config.yaml").read_text())["warm_start"] == "random"
    card = (out / "README.md").read_text()  # trl-env's card, not TRL's "version of [None]"
    assert "[None]" not in card and "- Steps: 1 (stopped by the time budget)." in card
    # The eval at the end of the run ran (step 1), and the final model was saved.
    import csv

    with (out / "metrics.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    # Step 0 holds the eval before training; step 1 the step and the eval after it.
    assert [row["step"] for row in rows] == ["0", "1"] and rows[1]["eval_success_rate"] != ""
    assert (out / "final" / "config.json").is_file()
    # The warm start is a policy of its own.
    code = main(["eval", ENV, "--policy", str(warm), "--episodes", "2", "--json", "--no-progress"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["envs"][ENV]["episodes"] == 2


def test_beta_keeps_lora_grpo_near_the_warm_start_not_the_base(tmp_path: Path) -> None:
    """``--beta`` with ``--lora`` after a warm start: TRL's reference is the model with the
    adapter off, and the warm start is merged into it, so the KL term pulls toward the warm
    start. Its KL is 0 before the first update (the fresh adapter is zero) although the warm start
    moved the weights away from the base; then it moves."""
    pytest.importorskip("peft")
    import csv

    from safetensors.torch import load_file

    out = tmp_path / "run"
    argv = [ENV, "--lora", "--beta", "0.1", "--learning-rate", "1e-2", "--max-steps", "3"]
    argv += ["--warm-start", "random", "--warm-start-episodes", "32", "--out", str(out), *FAST]
    assert main(["train", *argv]) == 0
    with (out / "metrics.csv").open(newline="") as handle:
        kl = [float(row["kl"]) for row in csv.DictReader(handle) if row["kl"] != ""]
    # Before the first update the policy is the reference up to float rounding (two passes of
    # other shapes); a reference on the base weights would be far from it.
    assert len(kl) == 3 and abs(kl[0]) < 1e-6 and kl[1] > 1e-5 and kl[2] > 1e-5
    base = load_file(out / "base-model" / "model.safetensors")
    warm = load_file(out / "warm_start" / "merged" / "model.safetensors")
    moved = max((warm[name].float() - base[name].float()).abs().max().item() for name in base)
    assert moved > 1e-3  # a reference on the base weights would not give a KL of 0


def test_warm_start_must_name_a_policy_or_demos(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [ENV, "--warm-start", str(tmp_path / "nothing"), "--out", str(tmp_path / "r"), *FAST]
    assert main(["train", *argv]) == 2
    assert "is neither random, oracle, a scripted player" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_warm_start_takes_a_scripted_player_of_every_env() -> None:
    from trl_env.trl.training._checks import _check_warm_start

    _check_warm_start(TrainConfig(["TextHangman-v0"], model="m.gguf", warm_start="frequency"))
    with pytest.raises(UsageError, match=r"scripted player of TextHangman-v0.*not of TextWordle"):
        _check_warm_start(TrainConfig(["TextWordle-v0"], model="m.gguf", warm_start="frequency"))


# --- defaults from the env's traits -------------------------------------------------------------


def test_env_traits_tell_multi_turn_games_and_step_rewards() -> None:
    hangman = env_traits("TextHangman-v0")
    assert hangman.multi_turn and hangman.has_random_policy and not hangman.step_rewards
    assert env_traits("TextHangman-v0", {"partial_credit": 0.5}).step_rewards
    one_turn = env_traits("TextLargestNumber-v0")
    assert not one_turn.multi_turn and one_turn.mean_turns == 1.0
    assert env_traits("TextSudoku-v0").step_rewards  # each right digit scores
    assert hangman.takes_partial_credit and not env_traits("TextTicTacToe-v0").takes_partial_credit
    lake = env_traits("TextFrozenLake-v1", {"is_slippery": False})
    assert lake.takes_partial_credit and not lake.step_rewards  # shaped only when asked


def test_a_trl_env_run_folder_as_model_gets_no_second_warm_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`trl-env train ENV --model runs/sft` (the documented oracle warm start, then GRPO) must not
    run a random-demo warm start on top of it; a plain model still gets one."""
    monkeypatch.setattr(defaults_module, "_has_gpu", lambda: False)
    sft, train_run, plain = tmp_path / "sft", tmp_path / "run", tmp_path / "plain"
    for folder, config in ((sft, "sft_config.json"), (train_run, "train_config.json"), (plain, "")):
        (folder / "final").mkdir(parents=True)
        if config:
            (folder / config).write_text("{}")
    resolve = lambda model: TrainConfig(["TextTicTacToe-v0"], model=model, lora=True).resolved()  # noqa: E731
    assert resolve(str(sft)).warm_start == "none"
    assert resolve(str(sft / "final")).warm_start == "none"  # a run's model folder, too
    assert resolve(str(train_run)).warm_start == "none"
    assert resolve(str(plain)).warm_start == "random"
    assert resolve("m.gguf").warm_start == "random"
    given = TrainConfig(["TextTicTacToe-v0"], model=str(sft), warm_start="oracle").resolved()
    assert given.warm_start == "oracle"  # an explicit choice still wins


def test_real_model_cpu_defaults_fit_a_multi_turn_game(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(defaults_module, "_has_gpu", lambda: False)
    hangman = TrainConfig(["TextHangman-v0"], model="m.gguf", lora=True).resolved()
    # 16 turns of the 16-token replies and the env's observations fit (256 held 3 turns).
    assert hangman.max_new_tokens_per_turn == 16
    assert hangman.max_completion_length == 1024  # the CPU cap: 16 turns would need ~1,070
    assert hangman.warm_start == "random" and hangman.credit == "turn" and hangman.gamma == 0
    # A win-only game that takes partial credit trains on it (each guess judged by its own).
    assert hangman.partial_credit == 0.5 and hangman.env_kwargs == {"partial_credit": 0.5}
    assert hangman.per_device_train_batch_size == 16 and hangman.epsilon_high == 0.28
    shaped = TrainConfig(
        ["TextHangman-v0"], model="m.gguf", env_kwargs={"partial_credit": 0.5}
    ).resolved()
    assert shaped.credit == "turn" and shaped.gamma == 1 and shaped.partial_credit is None
    win_only = TrainConfig(["TextHangman-v0"], model="m.gguf", partial_credit=0).resolved()
    assert win_only.credit == "episode" and win_only.gamma == 1
    assert win_only.env_kwargs == {"partial_credit": 0.0}
    given = TrainConfig(["TextHangman-v0"], model="m.gguf", partial_credit=0.3).resolved()
    assert (given.credit, given.gamma, given.env_kwargs) == ("turn", 0, {"partial_credit": 0.3})
    # The setting overrides env_kwargs' (a recipe's, a --config file's): a flag wins.
    over = TrainConfig(
        ["TextHangman-v0"], model="m.gguf", partial_credit=0.3, env_kwargs={"partial_credit": 1}
    ).resolved()
    assert over.env_kwargs == {"partial_credit": 0.3}
    # A run that chooses its credit or gamma (an older run's config.yaml does) trains on the
    # env's own reward, as before.
    for chosen in ({"credit": "episode"}, {"credit": "episode", "gamma": 1.0}, {"gamma": 1.0}):
        plain = TrainConfig(["TextHangman-v0"], model="m.gguf", **chosen).resolved()
        assert plain.credit == "episode" and plain.gamma == 1
        assert plain.partial_credit is None and plain.env_kwargs == {}
    two_player = TrainConfig(["TextTicTacToe-v0"], model="m.gguf").resolved()
    assert two_player.partial_credit is None and two_player.env_kwargs == {}
    with pytest.raises(ValueError, match="TextTicTacToe-v0 takes no partial_credit"):
        TrainConfig(["TextTicTacToe-v0"], model="m.gguf", partial_credit=0.5).resolved()
    for bad in (-1, "0.5", True, float("nan")):
        with pytest.raises(ValueError, match="partial_credit must be a number >= 0"):
            TrainConfig(["TextHangman-v0"], partial_credit=bad)
    one_turn = TrainConfig(["TextLargestNumber-v0"], model="m.gguf").resolved()
    assert one_turn.max_completion_length == 256 and one_turn.warm_start == "none"
    assert one_turn.credit == "episode" and one_turn.epsilon_high is None
    # Given settings stay as given.
    given = TrainConfig(
        ["TextHangman-v0"], model="m.gguf", warm_start="none", credit="episode"
    ).resolved()
    assert given.warm_start == "none" and given.credit == "episode"
    # A GPU run is TRL's with the rollout: no warm start, no multi-turn CPU settings.
    monkeypatch.setattr(defaults_module, "_has_gpu", lambda: True)
    gpu = TrainConfig(["TextHangman-v0"], model="m.gguf").resolved()
    assert gpu.warm_start == "none" and gpu.max_completion_length == 1024


def test_minutes_without_max_steps_lets_the_clock_decide() -> None:
    config = TrainConfig([ENV], minutes=5).resolved()
    assert config.max_steps == 10_000 and config.save_steps == 10 and config.eval_every == 10
    assert TrainConfig([ENV], minutes=5, max_steps=7).resolved().max_steps == 7
    with pytest.raises(ValueError, match="minutes must be a number >= 0"):
        TrainConfig([ENV], minutes=-1)


# --- the machine --------------------------------------------------------------------------------


def test_bf16_on_a_cpu_without_bf16_units_warns_with_its_cost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import trl_env._machine as machine
    from trl_env.trl.training import _run

    monkeypatch.setattr(machine, "cpu_has_bf16_units", lambda: False)
    with pytest.warns(UserWarning, match="bfloat16 is emulated"):
        _run._warn_if_bf16_is_emulated(TrainConfig([ENV], bf16=True))
    monkeypatch.setattr(machine, "cpu_has_bf16_units", lambda: True)
    _run._warn_if_bf16_is_emulated(TrainConfig([ENV], bf16=True))  # filterwarnings=error: none


def test_the_machine_record_names_the_cpu_and_its_speed_flags() -> None:
    record = machine_record(3)
    assert record["torch_threads"] == 3 and set(record["cpu_flags"]) <= set(SPEED_FLAGS)
    assert str(record["cpu"]) in str(record["summary"]) and "3 torch threads" in cpu_summary(3)


ZEN4_CPUINFO = (
    "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
    "model name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n\n"
    "processor\t: 1\ncpu family\t: 99\nmodel\t\t: 98\nmodel name\t: other\n"
)


@pytest.mark.parametrize(
    ("cap", "bf16_units", "named"),
    [
        (None, True, None),
        ("avx2", False, "oneDNN capped at AVX2 by ONEDNN_MAX_CPU_ISA (bf16 in a loop, no oneDNN)"),
        ("AVX2_VNNI_2", False, "capped at AVX2_VNNI_2 by ONEDNN_MAX_CPU_ISA (bf16 in a loop"),
        (
            "AVX512_CORE",
            False,
            "oneDNN capped at AVX512_CORE by ONEDNN_MAX_CPU_ISA (bf16 emulated)",
        ),
        ("AVX512_CORE_BF16", True, "capped at AVX512_CORE_BF16 by ONEDNN_MAX_CPU_ISA (bf16 as"),
        ("all", True, None),
        ("default", True, None),
    ],
)
def test_a_onednn_isa_cap_below_bf16_counts_as_no_bf16_units(
    monkeypatch: pytest.MonkeyPatch, cap: str | None, bf16_units: bool, named: str | None
) -> None:
    """On an AMD EPYC with avx512_bf16, ``ONEDNN_MAX_CPU_ISA=AVX2`` made a bf16 matmul 179x
    slower (torch loops instead of oneDNN): the default must not pick bf16 there."""
    import trl_env._machine as machine

    monkeypatch.setattr(machine, "_cpuinfo", lambda: ZEN4_CPUINFO)
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    if cap is None:
        monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    else:
        monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", cap)
    record = machine.machine_record(2)
    assert machine.cpu_has_bf16_units() is bf16_units and record["bf16_units"] is bf16_units
    assert record["cpu"] == "AMD EPYC (family 25 model 17)"  # the first CPU's numbers
    summary = str(record["summary"])
    assert summary.startswith("AMD EPYC (family 25 model 17), flags: avx512_bf16 avx512f avx2")
    if named is None:
        assert "capped" not in summary and "onednn_max_cpu_isa" not in record
    else:
        assert named in summary and record["onednn_max_cpu_isa"] == cap.upper()


def test_the_older_dnnl_name_of_the_cap_is_read_too(monkeypatch: pytest.MonkeyPatch) -> None:
    import trl_env._machine as machine

    monkeypatch.setattr(machine, "_cpuinfo", lambda: ZEN4_CPUINFO)
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "AVX2")
    assert machine.onednn_isa_cap() == "AVX2" and not machine.cpu_has_bf16_units()
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "ALL")  # the new name wins where both are set
    assert machine.onednn_isa_cap() is None and machine.cpu_has_bf16_units()


def test_bf16_under_a_cap_warns_with_the_caps_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CPU with bf16 units whose oneDNN is capped: the warning names the cap and its measured
    cost, not "this CPU has no bfloat16 units"."""
    import trl_env._machine as machine
    from trl_env.trl.training import _run

    monkeypatch.setattr(machine, "_cpuinfo", lambda: ZEN4_CPUINFO)
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    with pytest.warns(UserWarning, match=r"ONEDNN_MAX_CPU_ISA=AVX2 keeps oneDNN .* 76-80x capped"):
        _run._warn_if_bf16_is_emulated(TrainConfig([ENV], bf16=True))
    monkeypatch.setattr(machine, "_cpuinfo", lambda: ZEN4_CPUINFO.replace(" avx512_bf16", ""))
    assert machine.bf16_emulated_cost() == machine.BF16_EMULATED_COST  # no units to keep from


def test_a_run_on_a_gpu_names_it_beside_the_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run line and ``run.json`` name the GPU (as on the lent H200, whose run line named only
    its 16-core CPU); without one, the line names the CPU alone and ``run.json`` has no ``gpu``."""
    import torch

    from trl_env.trl.training import _run

    cfg = TrainConfig([ENV], output_dir=str(tmp_path), bf16=False).resolved()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert "GPU" not in _run._run_line(cfg, None) and _run._gpu_name() is None
    result = _run.TrainResult(tmp_path, tmp_path, tmp_path, None, [], 1.0, 1.0, cfg)
    record = _run._write_run_record(cfg, result, [{"step": 1}], "max_steps")
    assert "gpu" not in record["machine"]  # a CPU run's record is as before (reruns compare it)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA H200")
    line = _run._run_line(cfg, None)
    assert f"fast paths off (auto); GPU NVIDIA H200; {cpu_summary(torch.get_num_threads())}" in line
    record = _run._write_run_record(cfg, result, [{"step": 1}], "max_steps")
    assert record["machine"]["gpu"] == "NVIDIA H200"
    assert json.loads((tmp_path / "run.json").read_text())["machine"]["gpu"] == "NVIDIA H200"


# --- review follow-ups -------------------------------------------------------------------------


def test_an_abbreviated_recipe_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", ENV, "--rec", "multiturn-hangman"]) == 2
    assert "write --recipe in full" in capsys.readouterr().err


def test_a_recipe_named_in_a_config_file_is_loaded_under_it(tmp_path: Path) -> None:
    file = tmp_path / "run.yaml"
    file.write_text(yaml.safe_dump({"recipe": "multiturn-hangman", "max_turns": 9}))
    config = parsed(["--config", str(file)])
    assert config.recipe == "multiturn-hangman" and config.warm_start == "random"
    assert config.max_turns == 9 and config.env_ids == ["TextHangman-v0"]


def test_recipe_with_a_config_object_is_an_error() -> None:
    from trl_env.trl.training import train

    with pytest.raises(ValueError, match="a TrainConfig is taken as complete"):
        train(ENV, config=TrainConfig([ENV]), recipe="multiturn-hangman")


def test_minutes_zero_turns_a_budget_off_and_minutes_keep_rollouts() -> None:
    assert TrainConfig([ENV], minutes=0).minutes is None
    assert TrainConfig(["TextHangman-v0"], model="m.gguf", minutes=55).resolved().save_rollouts
    # A discount asks for credit per turn when the credit was left to the run.
    assert TrainConfig([ENV], gamma=0.5).resolved().credit == "turn"
    with pytest.raises(ValueError, match="has no effect with credit='episode'"):
        TrainConfig([ENV], credit="episode", gamma=0.5)


def test_demos_of_another_system_prompt_fail_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demos = tmp_path / "demos"
    # trl-env demos plays with trl-env's default system prompt; the tiny model runs with none.
    argv = ["demos", ENV, "--policy", "random", "--episodes", "2", "--out", str(demos)]
    assert main(argv) == 0
    capsys.readouterr()
    out = tmp_path / "run"
    assert main(["train", ENV, "--warm-start", str(demos), "--out", str(out), *FAST]) == 2
    assert "system prompt" in capsys.readouterr().err and not out.exists()


@pytest.mark.slow
def test_reentrant_checkpointing_of_lora_on_a_cpu_trains_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LoRA on a CPU checkpoints reentrantly (a third of the memory with peft's layers): the same
    step as the libraries' non-reentrant default, bitwise."""
    from safetensors.torch import load_file

    import trl_env.trl._checkpointing as checkpointing
    from trl_env.trl.training import train

    assert checkpointing.lora_checkpointing_kwargs(True, True) == {"use_reentrant": True}
    assert checkpointing.lora_checkpointing_kwargs(False, True) is None
    settings = dict(lora=True, max_steps=1, per_device_train_batch_size=16, num_tasks=16)
    settings |= dict(warm_start_steps=5, eval_every=0, plot=False, progress=False, save_steps=0)
    results = {}
    for reentrant in (True, False):
        monkeypatch.setattr(
            checkpointing,
            "lora_checkpointing_kwargs",
            lambda lora, cpu, r=reentrant: {"use_reentrant": r},
        )
        out = tmp_path / str(reentrant)
        result = train("TextLargestNumber-v0", output_dir=str(out), **settings)
        adapter = load_file(out / "final" / "adapter_model.safetensors")
        results[reentrant] = (result.history[-1]["grad_norm"], adapter)
    (norm, adapter), (norm_default, adapter_default) = results[True], results[False]
    assert norm == norm_default > 0
    assert adapter.keys() == adapter_default.keys()
    assert all(torch.equal(adapter[k], adapter_default[k]) for k in adapter)
    assert any(k.endswith("lora_B.weight") and adapter[k].abs().sum() > 0 for k in adapter)
