"""The fast paths (``trl_env.trl.fast``): one switch, stock TRL with it off (and with ``auto`` on a
GPU), one warning and the stock path for a model a layer cannot serve, an error naming
``--fast-paths off`` outside the tested library versions, and a model left as it was found."""

from __future__ import annotations

import copy
import pickle
import tomllib
import warnings
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

import torch
from transformers import GenerationConfig, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

import trl_env
from trl_env.error import FastPathVersionError, FastPathWarning, UsageError
from trl_env.trl._credit import TurnCreditGRPOTrainer
from trl_env.trl.fast import (
    CPU_ONLY_LAYERS,
    LAYERS,
    TESTED,
    FastPaths,
    _versions,
    check_fast_paths,
)
from trl_env.trl.fast import _generation as fast_generation
from trl_env.trl.fast import _trainer as fast_trainer
from trl_env.trl.models import TransformersGenerator, build_tiny_model, load_model_and_tokenizer

from .test_credit import (  # noqa: F401
    THREE_TURNS_ID,
    fixed_rollout,
    make_trainer,
    one_torch_thread,
    pytestmark,
    scored,
    three_turns_env,
)

REWARDS = [[-0.1, 0.0, 1.0], [0.0, 0.0, 0.0]]
ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------- the switch


FLOAT32_CPU = tuple(n for n in LAYERS if n not in ("reserved_kv_cache", "inverse_cdf_sampling"))


@pytest.mark.parametrize("bf16_units", [True, False], ids=["amx", "avx2"])
@pytest.mark.parametrize(
    ("setting", "device", "enabled"),
    [
        ("auto", "cpu", LAYERS),
        ("auto", "cuda", ()),
        ("auto", "mps", ()),
        ("on", "cuda", tuple(n for n in LAYERS if n not in CPU_ONLY_LAYERS)),
        ("off", "cpu", ()),
        (
            "auto,-inverse_cdf_sampling",
            "cpu",
            tuple(n for n in LAYERS if n != "inverse_cdf_sampling"),
        ),
        ("auto,reserved_kv_cache", "cuda", ("reserved_kv_cache",)),
        ("lora_addmm, frozen_bf16", "cpu", ("frozen_bf16", "lora_addmm")),
        ("lora_addmm, frozen_bf16, shared_prefill", "cuda", ("shared_prefill",)),
    ],
)
def test_one_setting_resolves_to_one_flag_per_layer(
    setting: str, device: str, enabled: tuple[str, ...], bf16_units: bool
) -> None:
    """``auto`` on a CPU without bf16 units leaves off the two layers measured inside the noise
    there (NOT_ON_FLOAT32_CPUS); every other setting is the same on any CPU."""
    if not bf16_units and setting.startswith("auto") and device == "cpu":
        enabled = tuple(n for n in enabled if n in FLOAT32_CPU)
    assert FastPaths.resolve(setting, device, bf16_units=bf16_units).enabled == enabled


def test_a_fast_paths_object_is_taken_as_it_is_but_cpu_only_layers_stay_on_cpus() -> None:
    assert FastPaths.resolve(FastPaths.all(), "cpu") == FastPaths.all()
    on_gpu = tuple(n for n in LAYERS if n not in CPU_ONLY_LAYERS)
    assert FastPaths.resolve(FastPaths.all(), "cuda").enabled == on_gpu


def test_auto_reads_the_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from trl_env import _machine
    from trl_env.trl.fast import NOT_ON_FLOAT32_CPUS

    assert set(NOT_ON_FLOAT32_CPUS) == set(LAYERS) - set(FLOAT32_CPU)
    for units, enabled in ((True, LAYERS), (False, FLOAT32_CPU)):
        monkeypatch.setattr(_machine, "cpu_has_bf16_units", lambda units=units: units)
        assert FastPaths.resolve("auto", "cpu").enabled == enabled
        assert FastPaths.resolve("on", "cpu").enabled == LAYERS
        assert FastPaths.resolve("auto", "cuda").enabled == ()


def test_each_layer_can_be_turned_off_alone() -> None:
    for layer in LAYERS:
        assert FastPaths.all().without(layer).enabled == tuple(n for n in LAYERS if n != layer)
    assert str(FastPaths.all()) == "on" and str(FastPaths.none()) == "off"


def test_a_wrong_setting_says_what_it_may_hold() -> None:
    with pytest.raises(UsageError, match="Did you mean 'lora_addmm'"):
        check_fast_paths("auto,-lora_adddmm")
    with pytest.raises(UsageError, match="auto, on or off"):
        check_fast_paths("fast")
    from trl_env.trl.training import TrainConfig

    with pytest.raises(UsageError, match="unknown fast path"):
        TrainConfig(["TextLargestNumber-v0"], fast_paths="of")
    assert TrainConfig(["TextLargestNumber-v0"]).resolved().fast_paths == "auto"


def test_the_command_line_has_the_switch() -> None:
    import argparse

    from trl_env.cli._arguments import add_config_arguments, config_from_namespace
    from trl_env.cli._eval_config import EvalConfig
    from trl_env.trl.training import TrainConfig

    parser = argparse.ArgumentParser()
    add_config_arguments(parser, TrainConfig)
    args = parser.parse_args(["TextLargestNumber-v0", "--fast-paths", "off"])
    assert config_from_namespace(TrainConfig, args).fast_paths == "off"
    parser = argparse.ArgumentParser()
    add_config_arguments(parser, EvalConfig)
    args = parser.parse_args(["TextWordle-v0", "--policy", "x", "--fast-paths", "off"])
    assert config_from_namespace(EvalConfig, args).model_options().fast_paths == "off"


# ------------------------------------------------------------------------ versions we allow


def test_pyproject_allows_exactly_the_tested_versions() -> None:
    """Both ends of each range of a library whose private code a fast path overrides: the lower
    is the version the tests run on, the upper the next minor release."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    requirements = project["optional-dependencies"]["trl"]
    for library in ("trl", "transformers", "peft"):
        low, high = TESTED[library]
        assert f"{library}>={low},<{high}" in requirements, library
    for library, (low, high) in TESTED.items():
        installed = _versions.installed_version(library)
        assert installed is not None and _versions.version_in_range(installed, low, high)
        assert _versions._release(installed)[:3] == _versions._release(low), (
            f"the tests run on {library} {installed}: make it the lower bound of TESTED"
        )


def newer(library: str, version: str) -> Any:
    real = _versions.installed_version

    def installed_version(name: str) -> str | None:
        return version if name == library else real(name)

    return installed_version


def test_a_newer_library_fails_naming_the_layer_and_the_switch(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_versions, "installed_version", newer("trl", "1.17.0"))
    with pytest.raises(FastPathVersionError, match=r"'model_token_scoring'.*--fast-paths off"):
        make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    # Off: TRL's own code runs, whatever its version.
    make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS, fast_paths="off")
    # A layer that does not reach into trl is not concerned.
    _versions.check_versions("frozen_bf16")

    monkeypatch.setattr(_versions, "installed_version", newer("transformers", "5.25.0.dev0"))
    model, tokenizer = load_model_and_tokenizer(tiny_model_dir)
    with pytest.raises(
        FastPathVersionError, match=r"transformers 5\.25\.0\.dev0.*--fast-paths off"
    ):
        generator(model, tokenizer, "on").generate([[5, 6, 7]], 2)
    assert generator(model, tokenizer, "off").generate([[5, 6, 7]], 2)[0]


def test_on_a_gpu_the_cpu_only_layers_neither_run_nor_stop_the_run(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As on the lent H200 (torch 2.11, outside torch's tested range): ``on`` on a GPU turns on
    and version-checks only the layers that act there; on a CPU the same torch refuses."""
    monkeypatch.setattr(_versions, "installed_version", newer("torch", "2.11.0"))
    model, tokenizer = load_model_and_tokenizer(tiny_model_dir)
    with pytest.raises(FastPathVersionError, match=r"'frozen_bf16'.*torch 2\.11\.0"):
        generator(model, tokenizer, "on").generate([[5, 6, 7]], 2)
    monkeypatch.setattr(fast_generation, "model_device_type", lambda model: "cuda")
    active = fast_generation.GenerationFastPaths("on").active(model)
    assert active.enabled == ("reserved_kv_cache", "inverse_cdf_sampling", "shared_prefill")
    monkeypatch.setattr(fast_trainer, "training_device_type", lambda trainer: "cuda")
    trainer = make_trainer(
        TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS, fast_paths="on"
    )
    assert not set(trainer.fast_paths.enabled) & set(CPU_ONLY_LAYERS)
    assert trainer.score_only_model_tokens and trainer.attend_without_padding_mask


# ---------------------------------------------------------------- off is TRL's, bit for bit


def loss_and_grads(trainer: GRPOTrainer, inputs: dict[str, Any]) -> tuple[torch.Tensor, list]:
    trainer.model.zero_grad()
    loss = trainer.compute_loss(trainer.model, inputs)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in trainer.model.parameters() if p.grad is not None]


def assert_trainer_is_stock_trl(ours: GRPOTrainer, stock: GRPOTrainer) -> None:
    torch.manual_seed(0)
    expected = scored(stock)
    torch.manual_seed(0)
    got = scored(ours)
    for key, value in expected.items():
        if isinstance(value, torch.Tensor):
            assert torch.equal(got[key], value), key
    want_loss, want_grads = loss_and_grads(stock, expected)
    loss, grads = loss_and_grads(ours, got)
    assert torch.equal(loss, want_loss)
    assert len(grads) == len(want_grads) > 0
    assert all(torch.equal(a, b) for a, b in zip(grads, want_grads, strict=True))


def test_off_is_stock_trl_bitwise(tiny_model_dir: str, tmp_path: Path) -> None:
    stock = make_trainer(GRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    ours = make_trainer(
        TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS, credit="episode", fast_paths="off"
    )
    assert ours.fast_paths == FastPaths.none()
    assert_trainer_is_stock_trl(ours, stock)


def test_auto_on_a_gpu_is_off(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The device check faked: ``auto`` on a GPU gives TRL's loss bit for bit, and generation as
    ``transformers`` runs it."""
    monkeypatch.setattr(fast_trainer, "training_device_type", lambda trainer: "cuda")
    stock = make_trainer(GRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    ours = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS, credit="episode")
    assert ours.fast_paths == FastPaths.none()
    assert not ours.score_only_model_tokens and not ours.attend_without_padding_mask
    assert_trainer_is_stock_trl(ours, stock)

    model, tokenizer = load_model_and_tokenizer(tiny_model_dir)
    monkeypatch.setattr(fast_generation, "model_device_type", lambda model: "cuda")
    assert fast_generation.GenerationFastPaths("auto").active(model) == FastPaths.none()
    assert sampled(generator(model, tokenizer, "auto")) == transformers_tokens(model, tokenizer)


def test_auto_on_a_cpu_is_every_layer(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trl_env import _machine

    monkeypatch.setattr(_machine, "cpu_has_bf16_units", lambda: True)
    ours = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    assert ours.fast_paths == FastPaths.all()
    assert ours.score_only_model_tokens and ours.attend_without_padding_mask


PROMPTS = [[5, 6, 7, 8, 9], [5, 6, 7, 8, 9], [10, 11, 12]]


def generator(model: Any, tokenizer: Any, fast_paths: Any, **settings: Any) -> Any:
    eos = [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    config = GenerationConfig(
        **{"do_sample": True, "temperature": 0.7, "top_k": 0, "top_p": 1.0, **settings},
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
    )
    return TransformersGenerator(
        model.eval(),
        pad_token_id=tokenizer.pad_token_id,
        eos_token_ids=eos,
        generation_config=config,
        temperature=config.temperature if config.do_sample else 1.0,
        fast_paths=fast_paths,
    )


def sampled(gen: Any, seed: int = 3) -> list[list[int]]:
    torch.manual_seed(seed)
    return gen.generate(PROMPTS, 6)[0]


def transformers_tokens(model: Any, tokenizer: Any, seed: int = 3) -> list[list[int]]:
    """What ``model.generate`` samples for :data:`PROMPTS` (left-padded), up to the first EOS."""
    pad, eos = tokenizer.pad_token_id, tokenizer.convert_tokens_to_ids("<|im_end|>")
    width = max(map(len, PROMPTS))
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in PROMPTS])
    config = GenerationConfig(
        do_sample=True, temperature=0.7, top_k=0, top_p=1.0, max_new_tokens=6,
        eos_token_id=[eos], pad_token_id=pad,
    )  # fmt: skip
    torch.manual_seed(seed)
    with torch.no_grad():
        out = model.generate(
            input_ids=ids, attention_mask=(ids != pad).long(), generation_config=config
        )
    rows = out[:, width:].tolist()
    return [row[: row.index(eos) + 1] if eos in row else row for row in rows]


def test_off_samples_transformers_tokens(tiny_model_dir: str) -> None:
    model, tokenizer = load_model_and_tokenizer(tiny_model_dir)
    assert sampled(generator(model, tokenizer, "off")) == transformers_tokens(model, tokenizer)
    # Inverse-CDF sampling alone draws another random stream (same distribution: test_sampling).
    alone = "off,inverse_cdf_sampling"
    assert sampled(generator(model, tokenizer, alone)) == sampled(generator(model, tokenizer, "on"))


# ---------------------------------------------------------------- refusals: the stock path


def test_a_sliding_window_model_is_refused_with_one_warning(tmp_path: Path) -> None:
    path = build_tiny_model(
        tmp_path / "sliding", use_sliding_window=True, sliding_window=4, max_window_layers=0
    )
    model, tokenizer = load_model_and_tokenizer(path)
    greedy = {"do_sample": False, "temperature": None, "top_k": None, "top_p": None}
    fast = generator(model, tokenizer, "on", **greedy)
    with pytest.warns(FastPathWarning) as caught:
        got = fast.generate(PROMPTS, 6)[0]
    said = sorted(str(w.message).split("'")[1] for w in caught)
    assert said == ["reserved_kv_cache", "shared_prefill"]
    assert all("sliding window" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per model: not again
        assert fast.generate(PROMPTS, 6)[0] == got
    assert got == generator(model, tokenizer, "off", **greedy).generate(PROMPTS, 6)[0]

    from trl_env.trl.fast._unpadded_training import unpadded_training_refusal

    assert "sliding window" in unpadded_training_refusal(model)


def test_a_model_without_position_ids_is_refused(tmp_path: Path) -> None:
    from transformers import BloomConfig, BloomForCausalLM

    from trl_env.trl.fast._unpadded_training import unpadded_training_refusal

    _, tokenizer = load_model_and_tokenizer(build_tiny_model(tmp_path / "tiny"))
    torch.manual_seed(0)
    config = BloomConfig(vocab_size=len(tokenizer), hidden_size=32, n_layer=2, n_head=2)
    model = BloomForCausalLM(config).eval()
    assert "position_ids" in unpadded_training_refusal(model)
    greedy = {"do_sample": False, "temperature": None, "top_k": None, "top_p": None}
    with pytest.warns(FastPathWarning, match=r"'shared_prefill'.*no position_ids"):
        got = generator(model, tokenizer, "on", **greedy).generate(PROMPTS, 6)[0]
    assert got == generator(model, tokenizer, "off", **greedy).generate(PROMPTS, 6)[0]


def test_mps_refuses_inverse_cdf_sampling() -> None:
    reason = fast_generation._refusal("inverse_cdf_sampling", torch.nn.Linear(2, 2), "mps")
    assert "float64" in reason


def test_a_sliding_window_model_trains_with_the_padding_mask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = build_tiny_model(
        tmp_path / "sliding", use_sliding_window=True, sliding_window=4, max_window_layers=0
    )
    with pytest.warns(FastPathWarning, match=r"'unpadded_training'.*sliding window"):
        trainer = make_trainer(TurnCreditGRPOTrainer, path, tmp_path, REWARDS)
    assert not trainer.attend_without_padding_mask and trainer.score_only_model_tokens


# ---------------------------------------------------------------- the model as it was found


def lora_trainer(tmp_path: Path, model_dir: str, cls: type = TurnCreditGRPOTrainer, **kwargs: Any):
    from peft import LoraConfig

    model, tokenizer = load_model_and_tokenizer(model_dir)
    args = GRPOConfig(
        output_dir=str(tmp_path / cls.__name__), use_cpu=True, bf16=True,
        per_device_train_batch_size=2, num_generations=2, max_completion_length=16, max_steps=2,
        report_to="none", save_strategy="no", disable_tqdm=True, seed=0,
    )  # fmt: skip
    return cls(
        model=model,
        args=args,
        train_dataset=trl_env.make_dataset(THREE_TURNS_ID, 4),
        processing_class=tokenizer,
        rollout_func=fixed_rollout(tokenizer, REWARDS, THREE_TURNS_ID),
        reward_funcs=trl_env.env_reward,
        peft_config=LoraConfig(
            r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM"
        ),
        **kwargs,
    )


def lora_layers(model: Any) -> list[Any]:
    from peft.tuners.lora.layer import LoraLayer

    return [m for m in model.modules() if isinstance(m, LoraLayer)]


def patched(model: Any) -> list[str]:
    """What of ours the model holds: LoRA layers with a forward of their own, casts turned off."""
    return [
        f"{type(m).__name__} {what}"
        for m in lora_layers(model)
        for what, yes in (
            ("forward", "forward" in m.__dict__),
            ("casts", not m.cast_input_dtype_enabled),
        )
        if yes
    ]


def residue(model: Any) -> list[str]:
    """What stock TRL leaves on a trained model too: instance forwards and forward hooks."""
    return sorted(
        [f"{name} forward {getattr(m.__dict__['forward'], '__qualname__', '')}"
         for name, m in model.named_modules() if "forward" in m.__dict__]
        + [f"{name} hook" for name, m in model.named_modules() for _ in m._forward_hooks]
    )  # fmt: skip


class Watch(TrainerCallback):
    def __init__(self, model: Any, fail: bool = False) -> None:
        self.model, self.fail, self.seen = model, fail, []

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.seen.append(patched(self.model))
        if self.fail:
            raise RuntimeError("boom")


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_after_train_the_model_is_restored_and_copies(tiny_model_dir: str, tmp_path: Path) -> None:
    trainer = lora_trainer(tmp_path, tiny_model_dir)
    assert trainer._training.lora_addmm
    layers = len(lora_layers(trainer.model))
    watch = Watch(trainer.model)
    trainer.add_callback(watch)
    assert patched(trainer.model) == []  # nothing before train()
    trainer.train()
    # During training: every LoRA layer fused (peft's input casts left on); afterwards: nothing.
    assert all(entry.endswith(" forward") for seen in watch.seen for entry in seen)
    assert [len(seen) for seen in watch.seen] == [layers] * 2
    assert patched(trainer.model) == []
    stock = lora_trainer(tmp_path, tiny_model_dir, cls=GRPOTrainer)
    stock.train()
    assert residue(trainer.model) == residue(stock.model)  # accelerate's and transformers' own
    copy.deepcopy(trainer.model)
    # Pickling needs what stock TRL leaves removed too: accelerate's autocast wrapper and
    # transformers' input-grad hooks (local functions); nothing of ours is in the way.
    model = trainer.accelerator.unwrap_model(trainer.model, keep_fp32_wrapper=False)
    model.get_input_embeddings()._forward_hooks.clear()
    restored = pickle.loads(pickle.dumps(model))
    ids = torch.tensor([[5, 6, 7, 8]])
    with torch.no_grad():
        assert torch.equal(restored(ids).logits, model(ids).logits)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_the_model_is_restored_when_training_fails(tiny_model_dir: str, tmp_path: Path) -> None:
    trainer = lora_trainer(tmp_path, tiny_model_dir)
    watch = Watch(trainer.model, fail=True)
    trainer.add_callback(watch)
    with pytest.raises(RuntimeError, match="boom"):
        trainer.train()
    assert watch.seen[0] and patched(trainer.model) == []


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_held_out_evals_run_the_model_without_the_training_layers(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """During ``train()`` the held-out eval plays the model as it is outside: the figures (and
    the very episodes) of the eval after the last step are those of the same eval run after
    ``train()``, with the model restored."""
    from trl_env.trl import _model_episodes
    from trl_env.trl.training._heldout import HeldOutEvalCallback

    trainer = lora_trainer(tmp_path, tiny_model_dir)
    evals = HeldOutEvalCallback(trainer, "TextLargestNumber-v0", every=1, episodes=4, log=print)
    evals.log = lambda line: None
    states: list[list[str]] = []
    played: list[Any] = []
    play = _model_episodes.play_episodes

    def recording_play(*args: Any, **kwargs: Any) -> Any:
        states.append(patched(trainer.model))
        episodes = play(*args, **kwargs)
        played.append([(e.transcript, e.episode_return) for e in episodes])
        return episodes

    monkeypatch.setattr(_model_episodes, "play_episodes", recording_play)
    watch = Watch(trainer.model)
    trainer.add_callback(watch)
    trainer.add_callback(evals)
    trainer.train()
    assert all(watch.seen)  # the layers were installed for the training steps
    assert len(states) == 3 and all(state == [] for state in states)  # never in an eval
    evals._done.discard(trainer.state.global_step)
    evals.evaluate(trainer.state)
    assert played[-1] == played[-2]


def final_held_out_and_eval(
    env_id: str, monkeypatch: pytest.MonkeyPatch, **train_kwargs: Any
) -> tuple[list[Any], list[Any]]:
    """Train with a held-out eval after the last step; return that eval's episodes and those
    ``trl-env eval`` plays with the saved run on the same seeds and settings, each as
    ``(transcript, return, turns, completion_ids, logprobs)``."""
    from trl_env._eval import evaluate
    from trl_env._model_options import ModelOptions
    from trl_env.trl import _model_episodes
    from trl_env.trl.training import train

    def facts(episodes: Any) -> list[Any]:
        return [(e.transcript, e.episode_return, e.turns, e.completion_ids, e.logprobs)
                for e in episodes]  # fmt: skip

    played: list[Any] = []
    play = _model_episodes.play_episodes

    def recording_play(*args: Any, **kwargs: Any) -> Any:
        episodes = play(*args, **kwargs)
        played.append(facts(episodes))
        return episodes

    monkeypatch.setattr(_model_episodes, "play_episodes", recording_play)
    result = train(
        env_id, max_steps=1, eval_every=1, plot=False, progress=False, save_rollouts=False,
        log=lambda line: None, **train_kwargs,
    )  # fmt: skip
    cfg = result.config
    if cfg.lora:  # the adapter moved the model (lora_B starts at 0): merging would round it
        from safetensors.torch import load_file

        adapter = load_file(str(result.model_dir / "adapter_model.safetensors"))
        assert any(w.abs().max() > 0 for name, w in adapter.items() if "lora_B" in name)
    options = ModelOptions(
        temperature=0, batch_size=32, max_new_tokens_per_turn=cfg.max_new_tokens_per_turn,
        max_completion_length=cfg.max_completion_length, system_prompt=cfg.system_prompt or "",
    )  # fmt: skip
    report = evaluate(
        env_id, str(result.output_dir), episodes=cfg.eval_episodes, seed=cfg.eval_seed,
        model_options=options, max_turns=cfg.max_turns,
    )  # fmt: skip
    return played[-1], facts(report.episodes)


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_the_final_held_out_eval_is_trl_env_eval_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lora: bool
) -> None:
    """The tiny model's run, full fine-tuning and LoRA: the episodes of the held-out eval after
    the last step are, token for token and log-probability for log-probability, those
    ``trl-env eval`` plays with the saved run on the same seeds and settings."""
    if lora:
        pytest.importorskip("peft")
    held_out, evaluated = final_held_out_and_eval(
        "TextGuessNumber-v0", monkeypatch, output_dir=str(tmp_path / "run"), num_generations=4,
        per_device_train_batch_size=8, num_tasks=8, warm_start_steps=20 if lora else 0,
        max_completion_length=256, max_new_tokens_per_turn=8, eval_episodes=6, lora=lora,
        # LoRA: a format warm start, so that rewards differ within groups and the step moves
        # the adapter; a high rate, so that the move shows in the replies.
        learning_rate=0.05 if lora else None,
    )  # fmt: skip
    assert evaluated == held_out
    assert any(turns > 1 for _, _, turns, _, _ in held_out)  # multi-turn: KV reuse ran


@pytest.mark.parametrize(
    "name",
    [
        "trl_env.trl.fast",
        "trl_env.trl.fast._switch",
        "trl_env.trl.fast._versions",
        "trl_env.trl.fast._checks",
        "trl_env.trl.fast._generation",
        "trl_env.trl.fast._trainer",
        "trl_env.trl.fast._frozen_bf16",
        "trl_env.trl.fast._merged_lora",
        "trl_env.trl.fast._onednn_linear",
        "trl_env.trl.fast._reserved_cache",
        "trl_env.trl.fast._inverse_cdf",
        "trl_env.trl.fast._lora_addmm",
        "trl_env.trl.fast._unpadded_training",
    ],
)
def test_docstring_examples_pass(name: str) -> None:
    import doctest
    import importlib

    results = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert results.attempted > 0 and results.failed == 0
