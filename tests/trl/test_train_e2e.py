"""End-to-end training on CPU: ``GRPOTrainer.train()`` with trl-env's rollout, a mixed-env dataset,
the ``environment_factory`` adapter, and two processes under ``accelerate launch`` (DDP over gloo).

Every run uses the session's tiny random Qwen3 model (``tiny_model_dir``) and 2 optimizer steps,
so each test takes seconds; they are marked ``slow`` only because they train (CI runs them).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("trl")

import torch
from trl import GRPOConfig, GRPOTrainer

import trl_env
from trl_env.trl import ChatTemplateProcessor, Episode

pytestmark = [
    pytest.mark.slow,
    pytest.mark.usefixtures("silence_trl_experimental"),
    # transformers 5.x deprecates the `gradient_checkpointing*` names in favour of
    # `activation_checkpointing*` and warns every time TRL's GRPOConfig / GRPOTrainer touch them.
    # A third-party deprecation we cannot act on; everything else still fails the test.
    pytest.mark.filterwarnings(r"ignore:`gradient_checkpointing\w*` is deprecated:FutureWarning"),
    pytest.mark.filterwarnings(r"ignore:`is_gradient_checkpointing` is deprecated:FutureWarning"),
]

TESTS_DIR = Path(__file__).resolve().parent
ONE_SHOT_ID = "TestE2EOneShot-v0"


class OneShot:
    """A protocol env that ends after one move and pays 1.0 for any move (so it is always won)."""

    last_step_reward = 0.0
    alive = False

    def reset(self, seed: str) -> str:
        self.alive, self.last_step_reward = True, 0.0
        return "Say anything at all; every answer wins."

    def step(self, action: str) -> str:
        self.alive, self.last_step_reward = False, 1.0
        return "You win."


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Any:
    """Train with one intra-op thread: for a 64-wide model, thread hand-offs cost more than they
    save, and on a shared 2-core machine spinning threads made steps ~10x slower (5 s vs 0.5 s)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def one_shot_id() -> Any:
    """A second registered env for mixed datasets: one turn long, always won (unregistered after)."""
    trl_env.register_protocol_env(ONE_SHOT_ID, OneShot, max_episode_steps=3)
    yield ONE_SHOT_ID
    del gym.registry[ONE_SHOT_ID]


def grpo_args(output_dir: Path, **overrides: Any) -> GRPOConfig:
    settings: dict[str, Any] = {
        "output_dir": str(output_dir),
        "use_cpu": True,
        "bf16": False,
        "per_device_train_batch_size": 4,
        "num_generations": 4,
        "max_completion_length": 128,
        "max_steps": 2,
        "logging_steps": 1,
        "report_to": "none",
        "save_strategy": "no",
        "disable_tqdm": True,
    }
    settings.update(overrides)
    return GRPOConfig(**settings)


def logged_keys(trainer: GRPOTrainer) -> set[str]:
    return {key for entry in trainer.state.log_history for key in entry}


def logged(trainer: GRPOTrainer, key: str) -> list[float]:
    return [entry[key] for entry in trainer.state.log_history if key in entry]


# ----------------------------------------------------------------------------- token exactness


def assert_token_exact(
    episode: Episode, processor: ChatTemplateProcessor, system: str | None
) -> bool:
    """Check one episode's token stream against the processor and the chat template.

    Returns whether the whole-conversation chat-template comparison applied (it does not when the
    random model sampled a ``</think>``, which the Qwen3 template moves out of earlier turns).
    """
    tokenizer = processor.tokenizer
    ids = episode.prompt_ids + episode.completion_ids
    assert len(episode.env_mask) == len(episode.completion_ids)
    assert len(episode.logprobs) == len(episode.completion_ids)
    assert set(episode.env_mask) <= {0, 1}

    # The stream splits into alternating model (mask 1) and environment (mask 0) runs.
    runs: list[tuple[int, list[int], list[float]]] = []
    for token, mask, logprob in zip(
        episode.completion_ids, episode.env_mask, episode.logprobs, strict=True
    ):
        if runs and runs[-1][0] == mask:
            runs[-1][1].append(token)
            runs[-1][2].append(logprob)
        else:
            runs.append((mask, [token], [logprob]))
    assert runs[0][0] == 1, "a completion starts with the model's first turn"

    agent_turns = [m for m in episode.transcript if m["role"] == "agent"]
    env_messages = [m["text"] for m in episode.transcript if m["role"] == "env"]
    model_runs = [run for run in runs if run[0] == 1]
    env_runs = [run for run in runs if run[0] == 0]
    assert len(model_runs) == len(agent_turns) == episode.turns
    # An env chunk follows every model turn but the last (after it the episode ended).
    assert len(env_runs) == len(agent_turns) - 1

    for (_, tokens, logprobs), turn in zip(model_runs, agent_turns, strict=True):
        # Model tokens are the sampled ids, with the sampled log-probabilities.
        assert tokenizer.decode(tokens, skip_special_tokens=False) == turn["text"]
        assert all(lp <= 0.0 for lp in logprobs) and any(lp < 0.0 for lp in logprobs)
        assert turn["stopped"] == (tokens[-1] in processor.eos_token_ids)
    for i, (_, tokens, logprobs) in enumerate(env_runs):
        # Env tokens: exactly the processor's environment turn (closing a cut-off model turn
        # first), tokenised on their own, carrying no log-probability.
        expected = processor.env_turn_text(
            env_messages[i + 1], close_turn=not agent_turns[i]["stopped"]
        )
        assert tokenizer.decode(tokens, skip_special_tokens=False) == expected
        assert tokens == processor.env_turn_ids(
            env_messages[i + 1], last_token_id=model_runs[i][1][-1]
        )
        assert logprobs == [0.0] * len(tokens)

    # The whole stream decodes to the processor's rendering of the episode, piece by piece ...
    text = tokenizer.decode(ids, skip_special_tokens=False)
    expected = processor.initial_prompt_text(system, env_messages[0])
    for i, turn in enumerate(agent_turns):
        expected += turn["text"]
        if i + 1 < len(agent_turns):
            expected += processor.env_turn_text(env_messages[i + 1], close_turn=not turn["stopped"])
    assert text == expected
    assert episode.prompt_ids == processor.initial_prompt_ids(system, env_messages[0])

    # ... and to the chat template's rendering of the conversation (Qwen3 is prefix-preserving
    # for turns without a `</think>`).
    if any("</think>" in turn["text"] for turn in agent_turns):
        return False
    messages: list[dict[str, str]] = (
        [] if system is None else [{"role": "system", "content": system}]
    )
    messages.append({"role": "user", "content": env_messages[0]})
    for i, turn in enumerate(agent_turns[:-1]):
        content = turn["text"]
        if turn["stopped"]:
            content = content[: -len(processor.end_of_turn_token)]
        messages += [
            {"role": "assistant", "content": content},
            {"role": "user", "content": env_messages[i + 1]},
        ]
    assert (
        text
        == processor.render_messages(messages, add_generation_prompt=True) + agent_turns[-1]["text"]
    )
    return True


# ----------------------------------------------------------------------------- a. rollout_func

ROLLOUT_EXTRAS = (
    "episode_return",
    "episode_success",
    "episode_turns",
    "episode_ended_by",
    "episode_ended_by_env",
    "episode_invalid_actions",
    "episode_error",
    "episode_transcript",
    "env_id",
)


def test_train_wordle_with_rollout_func(tiny_model_dir: str, tmp_path: Path) -> None:
    rollout = trl_env.make_rollout_func(max_new_tokens_per_turn=16)
    seen_extras: list[dict[str, Any]] = []

    def brevity(completions: list, completion_ids: list[list[int]], **kwargs: Any) -> list[float]:
        # A reward that differs inside a group (env_reward alone is the same for every random
        # episode), so the GRPO advantages, hence the gradients, are not all zero.
        seen_extras.append(kwargs)
        return [-len(ids) / 100 for ids in completion_ids]

    trainer = GRPOTrainer(
        model=tiny_model_dir,
        reward_funcs=[trl_env.env_reward, brevity],
        train_dataset=trl_env.make_dataset("TextWordle-v0", num_tasks=8),
        rollout_func=rollout,
        args=grpo_args(tmp_path),
    )
    # Make the random model end some turns by itself: scale the (tied) embedding of <|im_end|>
    # so its logit is large at many positions. Both kinds of model turns (stopped on EOS, cut at
    # the turn budget) then occur, and the token-exactness checks cover both.
    processor = rollout.processor_for(trainer.processing_class)
    with torch.no_grad():
        trainer.model.get_input_embeddings().weight[processor.end_of_turn_id] *= 30.0
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    trainer.train()

    assert trainer.state.global_step == 2
    keys = logged_keys(trainer)
    for key in (
        "env/success_rate",
        "env/mean_turns",
        "env/invalid_action_rate",
        "env/mean_return",
        "rewards/env_reward/mean",
    ):
        assert key in keys, f"{key} not logged; got {sorted(keys)}"
    assert all(turns >= 1 for turns in logged(trainer, "env/mean_turns"))
    # The update really happened, through the token stream the rollout returned.
    assert any(norm > 0 for norm in logged(trainer, "grad_norm"))
    assert any(not torch.equal(before[n], p) for n, p in trainer.model.named_parameters())

    episodes = rollout.last_episodes
    assert len(episodes) == 4
    # The reward column is the rollout's episode return.
    assert logged(trainer, "env/mean_return")[-1] == pytest.approx(
        sum(e.episode_return for e in episodes) / len(episodes), abs=1e-6
    )
    assert logged(trainer, "rewards/env_reward/mean")[-1] == pytest.approx(
        logged(trainer, "env/mean_return")[-1], abs=1e-6
    )
    # Reward functions receive every extra, one entry per completion.
    for kwargs in seen_extras:
        for name in ROLLOUT_EXTRAS:
            assert len(kwargs[name]) == 4, name
    last = seen_extras[-1]
    assert last["episode_turns"] == [e.turns for e in episodes]
    assert [json.loads(t) for t in last["episode_transcript"]] == [e.transcript for e in episodes]
    assert set(last["env_id"]) == {"TextWordle-v0"}

    # One batched generation call per turn, for the whole batch.
    assert rollout.generation_calls == max(e.turns for e in episodes)
    # All num_generations copies of a task play the same game: same prompt ids.
    assert len({tuple(e.prompt_ids) for e in episodes}) == 1
    checked = [assert_token_exact(e, processor, rollout.config.system_prompt) for e in episodes]
    assert any(checked), "no episode could be compared with the chat template"
    turns = [m for e in episodes for m in e.transcript if m["role"] == "agent"]
    assert any(turn["stopped"] for turn in turns), "no model turn ended on EOS"
    # Multi-turn episodes really happened (the env answered at least once); an episode whose
    # first reply leaves no room for the env's answer in max_completion_length ends there.
    assert any(0 in e.env_mask for e in episodes)
    assert all(0 in e.env_mask or e.ended_by == "token_budget" for e in episodes)


# ----------------------------------------------------------------------------- b. mixed dataset


def test_train_mixed_dataset_logs_per_env_metrics(
    tiny_model_dir: str, tmp_path: Path, one_shot_id: str
) -> None:
    ids = ["TextWordle-v0", one_shot_id]
    rollout = trl_env.make_rollout_func(max_new_tokens_per_turn=16)
    # Two tasks, one per env; 2 generations each, so every rollout call plays both envs.
    trainer = GRPOTrainer(
        model=tiny_model_dir,
        reward_funcs=[trl_env.env_reward, trl_env.env_success],
        train_dataset=trl_env.make_dataset(ids, num_tasks=2),
        rollout_func=rollout,
        args=grpo_args(tmp_path, num_generations=2),
    )
    trainer.train()

    keys = logged_keys(trainer)
    for env_id in ids:
        for metric in ("success_rate", "mean_turns", "invalid_action_rate", "mean_return"):
            assert f"env/{env_id}/{metric}" in keys, f"env/{env_id}/{metric} not logged"
    assert {"env/success_rate", "rewards/env_reward/mean", "rewards/env_success/mean"} <= keys
    # The one-shot env is won in one turn every time; the random model never solves a Wordle.
    assert logged(trainer, f"env/{one_shot_id}/success_rate") == [1.0, 1.0]
    assert logged(trainer, f"env/{one_shot_id}/mean_turns") == [1.0, 1.0]
    assert logged(trainer, "env/TextWordle-v0/success_rate") == [0.0, 0.0]
    assert logged(trainer, "env/success_rate") == [0.5, 0.5]

    episodes = rollout.last_episodes
    assert sorted(e.task.env_id for e in episodes) == sorted(ids * 2)
    processor = rollout.processor_for(trainer.processing_class)
    for episode in episodes:
        assert_token_exact(episode, processor, rollout.config.system_prompt)
    # Episodes of different lengths shared the batched calls: the one-shot games left after turn 1.
    assert rollout.generation_calls == max(e.turns for e in episodes) > 1


# ----------------------------------------------------------------------------- c. environment_factory


def test_train_with_environment_factory(tiny_model_dir: str, tmp_path: Path) -> None:
    factory = trl_env.make_environment_factory()
    trainer = GRPOTrainer(
        model=tiny_model_dir,
        reward_funcs=None,  # the environments' get_reward() is the reward
        train_dataset=trl_env.make_dataset("TextWordle-v0", num_tasks=8),
        environment_factory=factory,
        args=grpo_args(tmp_path, max_completion_length=256),
    )
    # The tiny model's chat template is TRL's qwen3, so the tokenizer can parse tool calls.
    assert getattr(trainer.processing_class, "response_template", None) is not None
    tokenizer = trainer.processing_class
    end = ChatTemplateProcessor(tokenizer).end_of_turn_token

    # A random model never writes a well-formed tool call, so script the model's turns through
    # TRL's own single-turn generation hook: turn 1 calls `act` with the secret word (read from
    # the env TRL reset for that sample), any later turn ends the conversation. Everything else
    # (prompt rendering with the tool schema, tool-call parsing, the tool loop, get_reward, the
    # GRPO update) is TRL's.
    seen_prompts: list[str] = []
    acted: list[str] = []

    def scripted_turn(
        prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False
    ):
        texts = []
        for ids in prompt_ids:
            text = tokenizer.decode(ids, skip_special_tokens=False)
            if "<tool_response>" not in text:
                seen_prompts.append(text)
                index = len(texts)  # the first call covers the whole batch, in order
                secret = trainer.environments[index]._env.unwrapped.secret
                acted.append(secret)
                call = json.dumps({"name": "act", "arguments": {"move": f"[{secret}]"}})
                texts.append(f"<tool_call>\n{call}\n</tool_call>{end}")
            else:
                texts.append(f"I won.{end}")
        completions = [tokenizer.encode(t, add_special_tokens=False) for t in texts]
        return completions, None

    trainer._generate_single_turn = scripted_turn
    trainer.train()

    assert trainer.state.global_step == 2
    # TRL rendered the row's first observation after the adapter's instructions, with the tool.
    assert len(seen_prompts) == 8
    assert all(factory.instructions in p and "Let's play Wordle" in p for p in seen_prompts)
    assert all('"name": "act"' in p for p in seen_prompts)
    # Every sample called the tool once, without failures, and won (get_reward = 1.0).
    reward_name = f"rewards/{factory.__name__}/mean"
    assert logged(trainer, "tools/call_frequency") == [1.0, 1.0]
    assert logged(trainer, "tools/failure_frequency") == [0.0, 0.0]
    assert logged(trainer, reward_name) == [1.0, 1.0]
    for environment in trainer.environments:
        assert environment.done and environment.info.get("won") is True
        assert environment.get_reward() == 1.0


# ----------------------------------------------------------------------------- d. accelerate / DDP


def test_train_under_accelerate_launch_two_processes(tiny_model_dir: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "TRL_EXPERIMENTAL_SILENCE": "1",
        "OMP_NUM_THREADS": "1",  # two processes on a small machine: no thread oversubscription
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONWARNINGS": "ignore::FutureWarning",
    }
    # `--multi_gpu` starts the processes (torchrun); the script's GRPOConfig(use_cpu=True) makes
    # them a MULTI_CPU/gloo group. (`accelerate launch --cpu --num_processes 2` would start a
    # single process: accelerate 1.x only fans out CPU processes through an MPI hostfile.)
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--main_process_port",
        "0",  # a free port: parallel test runs must not collide
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        str(TESTS_DIR / "ddp_train.py"),
        str(tmp_path),
        "--model",
        tiny_model_dir,
    ]
    result = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=240, cwd=tmp_path
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    match = re.search(r"^DDP_TRAIN_OK (.*)$", result.stdout, flags=re.MULTILINE)
    assert match, output[-6000:]
    summary = json.loads(match.group(1))
    assert summary["world_size"] == 2
    assert summary["global_step"] == 2
    assert summary["distributed_type"] == "MULTI_CPU"
    # Each step: one process played the one-turn game, the other Wordle, and both made the same
    # number of generation calls (the script asserts the details; this is the gist).
    calls = summary["calls"]
    assert {tuple(c["env_ids"]) for c in calls} == {("TestDDPOneShot-v0",), ("TextWordle-v0",)}
    assert any(c["local_turns"] < c["generation_calls"] for c in calls)
    assert summary["success_rate"] == [0.5, 0.5]
