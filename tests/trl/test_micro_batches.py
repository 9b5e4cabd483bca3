"""``micro_batch_size``: a step's batch generated at once and trained in equal passes, gradients
summed: the same update as one pass (tiny model), and the default of a float32 CPU run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

import torch

from trl_env.cli import build_parser, parse_command_line
from trl_env.cli._train import config_from_args
from trl_env.trl.models import _bf16
from trl_env.trl.training import TrainConfig
from trl_env.trl.training import _defaults as defaults_module

HANGMAN = "TextHangman-v0"


def _cpu(monkeypatch: pytest.MonkeyPatch, *, bf16_units: bool) -> None:
    monkeypatch.setattr(defaults_module, "_has_gpu", lambda: False)
    monkeypatch.setattr(_bf16, "default_bf16", lambda: bf16_units)


@pytest.mark.parametrize("bf16_units", [False, True])
def test_a_cpu_trains_a_real_models_batch_in_passes_of_4(
    bf16_units: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cpu(monkeypatch, bf16_units=bf16_units)
    hangman = TrainConfig([HANGMAN], model="m.gguf", lora=True).resolved()
    assert (hangman.per_device_train_batch_size, hangman.micro_batch_size) == (16, 4)
    one_turn = TrainConfig(["TextLargestNumber-v0"], model="m.gguf").resolved()
    assert (one_turn.per_device_train_batch_size, one_turn.micro_batch_size) == (8, 4)
    # The largest divisor of the batch up to 4: equal passes.
    six = TrainConfig([HANGMAN], model="m.gguf", num_generations=6, per_device_train_batch_size=6)
    assert six.resolved().micro_batch_size == 3
    # No divisor from 2 to 4: the whole batch (passes of one episode were never measured).
    seven = TrainConfig([HANGMAN], model="m.gguf", num_generations=7, per_device_train_batch_size=7)
    assert seven.resolved().micro_batch_size == 7


@pytest.mark.parametrize("bf16_units", [False, True])
@pytest.mark.parametrize("bf16", [False, True])
def test_either_dtype_on_either_cpu_trains_in_passes(
    bf16_units: bool, bf16: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Passes were measured faster in float32 (AMD EPYC) and in bf16 (Intel Xeon with AMX)."""
    _cpu(monkeypatch, bf16_units=bf16_units)
    config = TrainConfig([HANGMAN], model="m.gguf", bf16=bf16).resolved()
    assert (config.bf16, config.micro_batch_size) == (bf16, 4)


@pytest.mark.parametrize("machine", ["gpu", "tiny model"])
def test_elsewhere_the_batch_is_one_pass(machine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _cpu(monkeypatch, bf16_units=True)
    if machine == "gpu":
        monkeypatch.setattr(defaults_module, "_has_gpu", lambda: True)
    model = None if machine == "tiny model" else "m.gguf"
    config = TrainConfig([HANGMAN], model=model).resolved()
    assert config.micro_batch_size == config.per_device_train_batch_size


def test_a_given_micro_batch_must_divide_the_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    _cpu(monkeypatch, bf16_units=True)
    assert (
        TrainConfig([HANGMAN], model="m.gguf", micro_batch_size=2).resolved().micro_batch_size == 2
    )
    with pytest.raises(ValueError, match=r"must divide the batch of 16.*\[1, 2, 4, 8, 16\]"):
        TrainConfig([HANGMAN], model="m.gguf", micro_batch_size=3).resolved()
    with pytest.raises(ValueError, match="must divide the batch of 16"):
        TrainConfig([HANGMAN], model="m.gguf", micro_batch_size=32).resolved()
    with pytest.raises(ValueError, match="micro_batch_size must be"):
        TrainConfig([HANGMAN], micro_batch_size=0)
    argv = ["train", HANGMAN, "--micro-batch", "8"]
    assert config_from_args(parse_command_line(build_parser(), argv)).micro_batch_size == 8


def test_trls_config_generates_the_batch_once_and_sums_its_passes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from trl_env.trl.training._run import _quiet_third_party
    from trl_env.trl.training._trainer import _grpo_args

    _cpu(monkeypatch, bf16_units=False)
    config = TrainConfig(
        [HANGMAN], model="m.gguf", gradient_accumulation_steps=2, output_dir=str(tmp_path)
    ).resolved()
    with _quiet_third_party():  # as train() builds it
        args = _grpo_args(config)
    assert args.per_device_train_batch_size == 4  # one pass
    # One generation call for the step's 2 accumulated batches (TRL's default without passes),
    # and one update from their 8 passes.
    assert args.steps_per_generation == 8 and args.gradient_accumulation_steps == 8
    assert args.generation_batch_size == 32


@pytest.mark.slow
@pytest.mark.parametrize("credit", ["episode", "turn"])
def test_passes_give_the_update_of_one_pass(
    credit: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiny model's LoRA step with its 16 episodes in passes of 4 and in one pass: the same
    grad norm and adapters (up to float32 summation order), one generation call a step."""
    from safetensors.torch import load_file
    from trl import GRPOTrainer

    from trl_env.trl.training import train

    calls: list[int] = []
    generate = GRPOTrainer._generate_and_score_completions

    def counted(self: Any, inputs: list[Any]) -> Any:
        calls.append(len(inputs))
        return generate(self, inputs)

    monkeypatch.setattr(GRPOTrainer, "_generate_and_score_completions", counted)
    settings = dict(lora=True, max_steps=2, per_device_train_batch_size=16, num_tasks=16)
    settings |= dict(warm_start_steps=5, eval_every=0, plot=False, progress=False, save_steps=0)
    results = {}
    for micro in (16, 4):
        calls.clear()
        out = tmp_path / str(micro)
        result = train(
            "TextGuessNumber-v0", output_dir=str(out), micro_batch_size=micro, credit=credit,
            **settings,
        )  # fmt: skip
        assert calls == [16, 16]  # one generation call per step, for the whole batch
        adapter = load_file(out / "final" / "adapter_model.safetensors")
        results[micro] = ([row["grad_norm"] for row in result.history], adapter)
    (norms, adapter), (norms_whole, adapter_whole) = results[4], results[16]
    assert norms == pytest.approx(norms_whole, rel=1e-4) and min(norms) > 0
    assert adapter.keys() == adapter_whole.keys()
    for key in adapter:
        # atol 1e-5, 1% of one step's Adam update (lr 1e-3): where a gradient is near zero, Adam's
        # normalized step magnifies the float32 summation-order difference of passes (1.9e-6
        # seen on an AVX-512 CPU; under 1e-6 on AVX2).
        torch.testing.assert_close(adapter[key], adapter_whole[key], rtol=1e-4, atol=1e-5)
    assert any(k.endswith("lora_B.weight") and adapter[k].abs().sum() > 0 for k in adapter)
