"""Demos and the SFT warm start: the dataset, the token stream, the run folder."""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import datasets
import gymnasium as gym
import pytest
import torch

from trl_env._demos import (
    DEFAULT_SYSTEM_PROMPT,
    DemosConfig,
    load_demos,
    record_demos,
    write_demos,
)
from trl_env._episode import Episode, Task
from trl_env._play import run_episodes
from trl_env.cli import main
from trl_env.error import NoOracleError, UsageError
from trl_env.trl._model_policy import ModelPolicy
from trl_env.trl._processors import ChatTemplateProcessor
from trl_env.trl._sft import SFTRunConfig, demo_token_stream, run_sft
from trl_env.trl.models import load_model_and_tokenizer


class ScriptedGenerator:
    """Samples exactly the canonical tokens of the given replies, one per turn."""

    def __init__(self, processor: ChatTemplateProcessor, replies: Sequence[str]) -> None:
        self.processor, self.replies = processor, list(replies)

    def generate(
        self, inputs: Sequence[Sequence[int]], max_new_tokens: int
    ) -> tuple[list[list[int]], list[list[float]]]:
        reply = self.replies.pop(0)
        ids = self.processor.tokenizer.encode(reply, add_special_tokens=False)
        ids = [*ids, self.processor.end_of_turn_id]
        return [ids for _ in inputs], [[0.0] * len(ids) for _ in inputs]


def test_demos_are_a_conversational_dataset(tmp_path: Path) -> None:
    assert main(["demos", "TextGuessNumber-v0", "TextTicTacToe-v0", "--episodes", "4",
                 "--out", str(tmp_path)]) == 0  # fmt: skip
    dataset = datasets.load_dataset(str(tmp_path), split="train")
    assert len(dataset) == 8
    assert {"messages", "env_id", "seed", "episode_return", "success", "turns"} <= set(
        dataset.column_names
    )
    row = dataset[0]
    assert row["messages"][0] == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
    roles = [m["role"] for m in row["messages"][1:]]
    assert roles[0] == "user" and roles[1] == "assistant"
    assert all(a != b for a, b in itertools.pairwise(roles))  # turns alternate
    rows, settings = load_demos(tmp_path)
    assert all(r["success"] for r in rows) and settings["policy"] == "oracle"
    assert min(r["seed"] for r in rows) >= 1_000_000_000  # away from eval's seeds


def test_random_demos_and_envs_without_an_oracle() -> None:
    rows = record_demos("TextWordle-v0", policy="random", episodes=3, seed=1)
    assert len(rows) == 3 and all(r["policy"] == "random" for r in rows)
    with pytest.raises(NoOracleError, match="--policy random"):
        record_demos("TextArena/Minesweeper-v0", policy="oracle", episodes=1)
    with pytest.raises(UsageError, match="episodes"):
        record_demos("TextWordle-v0", episodes=0)


def test_sft_token_stream_is_the_rollouts(tiny_model_dir: str) -> None:
    _, tokenizer = load_model_and_tokenizer(tiny_model_dir)
    processor = ChatTemplateProcessor(tokenizer)
    for env_id in ("TextGuessNumber-v0", "TextTicTacToe-v0", "TextWordle-v0"):
        policy = "random" if env_id == "TextWordle-v0" else "oracle"
        row = record_demos(env_id, policy=policy, episodes=1, seed=3)[0]
        stream = demo_token_stream(processor, row["messages"])
        replies = [m["content"] for m in row["messages"] if m["role"] == "assistant"]
        model_policy = ModelPolicy(
            ScriptedGenerator(processor, replies),
            processor,
            system_prompt=DEFAULT_SYSTEM_PROMPT,
            max_completion_length=100_000,
        )
        episode = Episode(Task(env_id, str(row["seed"])))
        run_episodes([episode], [gym.make(env_id)], model_policy)
        assert episode.rewards and episode.episode_return == row["episode_return"]
        assert stream["input_ids"] == episode.prompt_ids + episode.completion_ids
        assert stream["assistant_masks"] == [0] * len(episode.prompt_ids) + episode.env_mask


def test_sft_writes_a_run_folder_that_eval_and_train_accept(
    tiny_model_dir: str, tmp_path: Path
) -> None:
    out = tmp_path / "sft"
    result = run_sft(
        SFTRunConfig(
            env_ids=["TextGuessNumber-v0"],
            model=tiny_model_dir,
            demos="oracle",
            episodes=8,
            output_dir=str(out),
            lora=True,
            max_steps=3,
            batch_size=4,
            system_prompt=None,
        ),
        say=lambda line: None,
    )
    assert result.tokens_trained > 0 and (out / "sft_config.json").is_file()
    assert (out / "final" / "adapter_config.json").is_file()
    assert datasets.load_dataset(str(out / "demos"), split="train").num_rows == 8
    assert main(["eval", "TextGuessNumber-v0", "--policy", str(out), "--episodes", "2",
                 "--max-turns", "2", "--max-new-tokens", "8", "--system-prompt", "",
                 "--out", str(tmp_path / "eval")]) == 0  # fmt: skip
    assert (tmp_path / "eval" / "results.json").is_file()


def test_a_missing_model_fails_before_any_demo_is_played(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        run_sft(
            SFTRunConfig(
                env_ids=["TextGuessNumber-v0"], model=str(tmp_path / "no.gguf"),
                demos="random", episodes=4, output_dir=str(tmp_path / "s"),
            )
        )  # fmt: skip
    assert not (tmp_path / "s" / "demos").exists()


def test_demos_with_another_system_prompt_are_refused(tiny_model_dir: str, tmp_path: Path) -> None:
    assert main(["demos", "TextGuessNumber-v0", "--episodes", "2", "--out", str(tmp_path / "d"),
                 "--system-prompt", "Play well."]) == 0  # fmt: skip
    with pytest.raises(UsageError, match=r"'Play well\.'.*this run uses"):
        run_sft(
            SFTRunConfig(
                model=tiny_model_dir, demos=str(tmp_path / "d"), output_dir=str(tmp_path / "s")
            )
        )
    assert load_demos(tmp_path / "d")[1]["system_prompt"] == "Play well."


def test_train_starts_from_an_sft_run_with_its_prompt(tiny_model_dir: str, tmp_path: Path) -> None:
    out = tmp_path / "sft"
    run_sft(
        SFTRunConfig(
            env_ids=["TextGuessNumber-v0"],
            model=tiny_model_dir,
            episodes=4,
            output_dir=str(out),
            lora=True,
            max_steps=1,
            batch_size=4,
            system_prompt="Guess well.",
        ),
        say=lambda line: None,
    )
    fast = ["--max-steps", "1", "--max-new-tokens-per-turn", "8", "--max-completion-length", "32",
            "--batch-size", "4", "--num-generations", "4", "--num-tasks", "4", "--no-progress",
            "--no-plot"]  # fmt: skip
    train = ["train", "TextGuessNumber-v0", "--model", str(out), *fast]
    with pytest.raises(UsageError, match=r"'Guess well\.'"):
        from trl_env.trl.training import train as train_api

        train_api("TextGuessNumber-v0", model=str(out), max_steps=1, log=lambda line: None)
    assert main([*train, "--system-prompt", "Guess well.", "--lora",
                 "--output-dir", str(tmp_path / "grpo")]) == 0  # fmt: skip
    assert (tmp_path / "grpo" / "final" / "adapter_config.json").is_file()


def same_logits_everywhere(hidden_size: int, vocab_size: int) -> torch.nn.Linear:
    """An LM head that ignores the hidden states (a zero weight, an uneven bias): the same logits
    at every position, so a token's loss depends on that token alone, not on the context before
    it. A change to a prompt or env token then moves the loss only if that token is a target."""
    head = torch.nn.Linear(hidden_size, vocab_size, bias=True)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        head.weight.zero_()
        head.bias.copy_(3 * torch.randn(vocab_size, generator=generator))
    return head


def test_the_sft_loss_is_on_reply_tokens_only(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first step's loss (every demo in one batch, before any update) through ``run_sft``'s
    own trainer: a reply-only change of the demos moves it; a change to the first observation or
    to an env message between replies does not."""
    import trl_env.trl.models as models

    real_load = models.load_model_and_tokenizer

    def load_with_context_free_head(*args: Any, **kwargs: Any) -> Any:
        model, tokenizer = real_load(*args, **kwargs)
        model.lm_head = same_logits_everywhere(model.config.hidden_size, model.config.vocab_size)
        return model, tokenizer

    monkeypatch.setattr(models, "load_model_and_tokenizer", load_with_context_free_head)
    rows = record_demos("TextGuessNumber-v0", episodes=2, seed=0, system_prompt=None)
    assert all(r["turns"] >= 2 for r in rows)  # an env message lies between two replies

    def first_loss(name: str, edit: Callable[[list[dict[str, str]]], None]) -> float:
        edited = copy.deepcopy(rows)
        edit(edited[0]["messages"])
        folder = tmp_path / name / "demos"
        write_demos(edited, folder, DemosConfig(env_ids=["TextGuessNumber-v0"], system_prompt=None))
        config = SFTRunConfig(model=tiny_model_dir, demos=str(folder), max_steps=1,
                              batch_size=len(rows), system_prompt=None, bf16=False,
                              output_dir=str(tmp_path / name / "run"))  # fmt: skip
        return run_sft(config, say=lambda line: None).first_loss

    def reply(messages: list[dict[str, str]]) -> None:
        first = next(m for m in messages if m["role"] == "assistant")
        first["content"] = "Let me think. " * 10 + first["content"]

    def prompt(messages: list[dict[str, str]]) -> None:
        assert messages[0]["role"] == "user"
        messages[0]["content"] = "A different opening, of other words: " + messages[0]["content"]

    def env_message(messages: list[dict[str, str]]) -> None:
        first_reply = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
        between = messages[first_reply + 1]
        assert between["role"] == "user" and any(m["role"] == "assistant" for m in
                                                 messages[first_reply + 2 :])  # fmt: skip
        between["content"] = "Other feedback, much longer than before. " + between["content"]

    base = first_loss("base", lambda messages: None)
    losses = {name: first_loss(name, edit) for name, edit in
              (("reply", reply), ("prompt", prompt), ("env", env_message))}  # fmt: skip
    assert abs(losses["reply"] - base) > 0.05, (base, losses)
    assert losses["prompt"] == pytest.approx(base, rel=1e-6)
    assert losses["env"] == pytest.approx(base, rel=1e-6)


def test_micro_batches_must_divide_the_batch() -> None:
    from trl_env.error import UsageError
    from trl_env.trl._sft import SFTRunConfig

    config = SFTRunConfig(
        env_ids=["TextGuessNumber-v0"], model="m", batch_size=8, micro_batch_size=4
    )
    assert config.micro_batch_size == 4
    with pytest.raises(UsageError, match="micro-batch-size must divide batch-size"):
        SFTRunConfig(env_ids=["TextGuessNumber-v0"], model="m", batch_size=8, micro_batch_size=3)


def test_checkpointing_is_on_by_default_and_leaves_the_losses_as_they_are(
    tiny_model_dir: str, tmp_path: Path
) -> None:
    """On by default (the warm-start table's SFT peaked at 20.8 GB without it); the same losses."""
    import argparse

    from trl_env.cli._arguments import add_config_arguments, config_from_namespace
    from trl_env.trl._sft import _sft_args

    parser = argparse.ArgumentParser()
    add_config_arguments(parser, SFTRunConfig)
    given = ["TextGuessNumber-v0", "--model", tiny_model_dir]
    default = config_from_namespace(SFTRunConfig, parser.parse_args(given))
    off = config_from_namespace(
        SFTRunConfig, parser.parse_args([*given, "--no-gradient-checkpointing"])
    )
    assert default.gradient_checkpointing and not off.gradient_checkpointing
    assert _sft_args(default, tmp_path).activation_checkpointing is True
    assert _sft_args(off, tmp_path).activation_checkpointing is False

    import transformers.modeling_utils

    recomputed = []
    checkpoint = transformers.modeling_utils.checkpoint

    def counted(*args: Any, **kwargs: Any) -> Any:
        recomputed.append(1)
        return checkpoint(*args, **kwargs)

    def losses(config: SFTRunConfig, name: str) -> tuple[tuple[float, ...], int]:
        settings = {"demos": "oracle", "episodes": 8, "lora": True, "max_steps": 3}
        run = dataclasses.replace(
            config, **settings, batch_size=4, system_prompt=None, output_dir=str(tmp_path / name)
        )
        recomputed.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(transformers.modeling_utils, "checkpoint", counted)
            result = run_sft(run, say=lambda line: None)
        return result.losses, len(recomputed)

    (with_it, layers_checkpointed), (without, none) = losses(default, "on"), losses(off, "off")
    assert layers_checkpointed > 0 and none == 0  # the setting reached the model's layers
    # Recomputing the forward pass in the backward gives the same gradients, so the same steps.
    assert len(with_it) == 3 and with_it == without
