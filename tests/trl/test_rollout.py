"""The rollout engine with scripted generators: token exactness, batching, limits, failures."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from types import SimpleNamespace

import gymnasium as gym
import pytest

import trl_env
import trl_env.utils
from trl_env.trl import (
    ChatTemplateProcessor,
    EnvErrorWarning,
    Task,
    VLLMGenerator,
    make_dataset,
    make_rollout_func,
    task_from_prompt,
)
from trl_env.trl.models import build_tiny_tokenizer


@pytest.fixture(scope="module")
def tokenizer():
    return build_tiny_tokenizer("qwen3")


@pytest.fixture(scope="module")
def processor(tokenizer) -> ChatTemplateProcessor:
    return ChatTemplateProcessor(tokenizer)


class ScriptedGenerator:
    """Replies with text chosen by a policy of (episode index in the call, turn); records calls.

    Episodes are identified by their prompt ids (their input starts with them), so the policy sees
    which task it is playing.
    """

    def __init__(
        self,
        tokenizer,
        reply: Callable[[int], str] | str,
        *,
        eos: bool = True,
        logprob: float = -0.5,
    ) -> None:
        self.tokenizer = tokenizer
        self.reply = reply
        self.eos = eos
        self.logprob = logprob
        self.calls: list[tuple[int, int]] = []  # (batch size, max_new_tokens)
        self.input_lengths: list[list[int]] = []

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int):
        self.calls.append((len(inputs), max_new_tokens))
        self.input_lengths.append([len(x) for x in inputs])
        turn = len(self.calls)
        text = self.reply(turn) if callable(self.reply) else self.reply
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        if self.eos:
            ids = [*ids, self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        ids = ids[:max_new_tokens]
        return [list(ids) for _ in inputs], [[self.logprob] * len(ids) for _ in inputs]


def fake_trainer(tokenizer, max_completion_length: int = 512):
    return SimpleNamespace(
        processing_class=tokenizer,
        max_completion_length=max_completion_length,
        accelerator=None,
        _metrics_logged=[],
    )


def tasks_prompts(env_id: str = "TextWordle-v0", n: int = 2, copies: int = 2, **kwargs) -> list:
    dataset = make_dataset(env_id, n, seed=1, **kwargs)
    return [prompt for prompt in dataset["prompt"] for _ in range(copies)]


def rollout_with(tokenizer, reply, prompts, *, eos=True, budget=512, **options):
    generator = ScriptedGenerator(tokenizer, reply, eos=eos)
    rollout = make_rollout_func(generator=generator, **options)
    trainer = fake_trainer(tokenizer, budget)
    logged: list[tuple[str, float]] = []
    trainer._log_metric = lambda name, value: logged.append((name, value))
    output = rollout(prompts, trainer)
    return output, rollout, generator, logged


def test_output_contract(tokenizer) -> None:
    prompts = tasks_prompts(n=2, copies=3)
    output, rollout, _, _ = rollout_with(tokenizer, "[slate]", prompts)
    n = len(prompts)
    for key in ("prompt_ids", "completion_ids", "logprobs", "env_mask"):
        assert len(output[key]) == n
    for key, value in output.items():
        assert isinstance(value, list) and len(value) == n, key
    for ids, mask, logprobs in zip(
        output["completion_ids"], output["env_mask"], output["logprobs"], strict=True
    ):
        assert ids and len(ids) == len(mask) == len(logprobs)
        assert all(isinstance(t, int) for t in ids)
        assert set(mask) <= {0, 1} and mask[0] == 1
        # env tokens carry logprob 0.0; model tokens the sampled one
        assert all(lp == 0.0 for lp, m in zip(logprobs, mask, strict=True) if m == 0)
        assert all(lp == -0.5 for lp, m in zip(logprobs, mask, strict=True) if m == 1)
    assert all(json.loads(t)[0]["role"] == "env" for t in output["episode_transcript"])


def test_token_stream_is_exactly_the_chat_template_rendering(tokenizer, processor) -> None:
    prompts = tasks_prompts(n=1, copies=1)
    replies = ["[slate]", "I think [crane]", "no idea"]
    output, rollout, _, _ = rollout_with(
        tokenizer, lambda turn: replies[turn - 1], prompts, max_turns=3
    )
    episode = rollout.last_episodes[0]
    messages = [{"role": "system", "content": trl_env.trl.DEFAULT_SYSTEM_PROMPT}]
    for item in episode.transcript:
        if item["role"] == "env":
            messages.append({"role": "user", "content": item["text"]})
        else:
            messages.append({"role": "assistant", "content": item["action"]})
    messages = messages[:-1] if messages[-1]["role"] == "user" else messages  # final env reply
    # Compare up to the generation prompt of the last model turn: Qwen3's template adds an empty
    # <think> block to the final assistant message only (not prefix-preserving there; see
    # docs/token_exactness.md), while earlier turns render exactly as sampled.
    rendered = tokenizer.apply_chat_template(
        messages[:-1], tokenize=False, add_generation_prompt=True
    )
    stream = output["prompt_ids"][0] + output["completion_ids"][0]
    last_turn = len(stream) - (
        len(output["env_mask"][0]) - _last_env_index(output["env_mask"][0]) - 1
    )
    assert tokenizer.decode(stream[:last_turn]) == rendered
    assert stream[:last_turn] == tokenizer.encode(rendered, add_special_tokens=False)
    # ...and the model tokens are exactly what the generator sampled.
    model_ids = [
        t for t, m in zip(output["completion_ids"][0], output["env_mask"][0], strict=True) if m
    ]
    expected = []
    for reply in replies[: episode.turns]:
        expected += tokenizer.encode(reply, add_special_tokens=False) + [processor.end_of_turn_id]
    assert model_ids == expected


def _last_env_index(mask: list[int]) -> int:
    return len(mask) - 1 - mask[::-1].index(0)


def test_copies_of_a_task_play_the_same_game(tokenizer) -> None:
    prompts = tasks_prompts(n=3, copies=4)
    output, rollout, _, _ = rollout_with(tokenizer, "[slate]", prompts)
    episodes = rollout.last_episodes
    for group in range(3):
        copies = episodes[4 * group : 4 * group + 4]
        assert len({json.dumps(e.transcript) for e in copies}) == 1
        assert len({tuple(e.prompt_ids) for e in copies}) == 1
    assert (
        len({json.dumps(e.transcript) for e in episodes}) == 3
    )  # different tasks, different games


def test_one_generation_call_per_turn_and_finished_episodes_leave(tokenizer) -> None:
    # Episode 0 wins at once (its secret is fixed through the task kwargs? no: use a known word)
    prompts = tasks_prompts(n=2, copies=2)
    secrets = []
    for prompt in prompts[::2]:
        task = task_from_prompt(prompt)
        env = gym.make(task.env_id)
        env.reset(seed=trl_env.utils.seed_to_int(task.seed))
        secrets.append(env.unwrapped.secret)

    class WinnerOnSecondTurn(ScriptedGenerator):
        def generate(self, inputs, max_new_tokens):
            self.calls.append((len(inputs), max_new_tokens))
            outs = []
            for ids in inputs:
                text = self.tokenizer.decode(ids)
                # the first task's episodes guess the secret on turn 2, the others never win
                first_secret_task = secrets[0].upper() not in text and len(self.calls) == 2
                guess = secrets[0] if first_secret_task else "slate"
                outs.append(
                    self.tokenizer.encode(f"[{guess}]", add_special_tokens=False)
                    + [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
                )
            return outs, [[-1.0] * len(o) for o in outs]

    generator = WinnerOnSecondTurn(tokenizer, "")
    rollout = make_rollout_func(generator=generator)
    output = rollout(prompts, fake_trainer(tokenizer, 4096))
    assert rollout.generation_calls == len(generator.calls) == max(output["episode_turns"])
    sizes = [size for size, _ in generator.calls]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 4
    assert sizes[-1] < 4 or all(t == 6 for t in output["episode_turns"])


def test_wordle_rewards_and_extras(tokenizer) -> None:
    prompts = tasks_prompts(n=1, copies=1)
    task = task_from_prompt(prompts[0])
    env = gym.make(task.env_id)
    env.reset(seed=trl_env.utils.seed_to_int(task.seed))
    secret = env.unwrapped.secret
    replies = ["hmm", f"[{secret}]"]
    output, rollout, _, logged = rollout_with(tokenizer, lambda t: replies[t - 1], prompts)
    assert output["episode_return"] == [pytest.approx(1.0 - 0.1)]
    assert output["episode_success"] == [True]
    assert output["episode_turns"] == [2]
    assert output["episode_ended_by"] == ["terminated"]
    assert output["episode_ended_by_env"] == [True]
    assert output["episode_invalid_actions"] == [1]
    assert output["episode_error"] == [""]
    assert output["env_id"] == ["TextWordle-v0"]
    assert ("env/success_rate", 1.0) in logged and ("env/mean_turns", 2.0) in logged
    assert ("env/invalid_action_rate", 0.5) in logged
    assert trl_env.env_reward(["c"], episode_return=output["episode_return"]) == [
        pytest.approx(0.9)
    ]


@pytest.mark.parametrize(
    ("aggregation", "expected"),
    [("sum", -0.6), ("mean", -0.1), ("last", -0.1), ("max", -0.1), (lambda r: len(r), 6.0)],
)
def test_reward_aggregation(tokenizer, aggregation, expected) -> None:
    output, *_ = rollout_with(
        tokenizer, "nope", tasks_prompts(n=1, copies=1), reward_aggregation=aggregation
    )
    assert output["episode_return"] == [pytest.approx(expected)]
    assert output["episode_ended_by"] == ["truncated"]  # six invalid guesses: the TimeLimit


def test_max_turns_limit(tokenizer) -> None:
    output, *_ = rollout_with(tokenizer, "[slate]", tasks_prompts(n=1, copies=2), max_turns=2)
    assert output["episode_turns"] == [2, 2]
    assert output["episode_ended_by"] == ["max_turns", "max_turns"]
    assert output["episode_ended_by_env"] == [False, False]


def test_model_that_never_emits_eos_is_cut_at_the_budget(tokenizer, processor) -> None:
    output, rollout, generator, _ = rollout_with(
        tokenizer, "blah " * 50, tasks_prompts(n=1, copies=2), eos=False, budget=60
    )
    for ids, mask in zip(output["completion_ids"], output["env_mask"], strict=True):
        assert len(ids) <= 60
        assert ids[-1] not in processor.eos_token_ids  # TRL will count it as clipped
        assert mask[-1] == 1
    assert output["episode_ended_by"] == ["token_budget", "token_budget"]


def test_cut_turn_is_closed_with_env_masked_end_of_turn(tokenizer, processor) -> None:
    output, rollout, _, _ = rollout_with(
        tokenizer,
        "[slate] " * 10,
        tasks_prompts(n=1, copies=1),
        eos=False,
        budget=400,
        max_new_tokens_per_turn=8,
        max_turns=2,
    )
    ids, mask = output["completion_ids"][0], output["env_mask"][0]
    first_env = mask.index(0)
    assert first_env == 8  # the model's 8 tokens, then the env chunk
    assert ids[first_env] == processor.end_of_turn_id  # closes the cut turn, not sampled: mask 0


def test_empty_generation_is_handled(tokenizer) -> None:
    output, *_ = rollout_with(tokenizer, "", tasks_prompts(n=1, copies=2), eos=False)
    for ids in output["completion_ids"]:
        assert ids  # never an empty completion: TRL would crash
    assert all(n >= 1 for n in output["episode_invalid_actions"])


class ExplodingWordle(gym.Wrapper):
    def step(self, action):
        if "boom" in action:
            raise RuntimeError("kaboom")
        return super().step(action)


def test_env_that_raises_ends_only_its_episode(tokenizer) -> None:
    gym.register(
        "TextExplodingWordle-v0",
        entry_point=lambda **kw: ExplodingWordle(gym.make("TextWordle-v0", **kw)),
        max_episode_steps=6,
    )
    try:
        prompts = tasks_prompts("TextExplodingWordle-v0", n=1, copies=1) + tasks_prompts(
            n=1, copies=1
        )

        class BoomForFirst(ScriptedGenerator):
            def generate(self, inputs, max_new_tokens):
                self.calls.append((len(inputs), max_new_tokens))
                texts = [
                    "boom" if len(inputs) == 2 and i == 0 else "[slate]" for i in range(len(inputs))
                ]
                eos = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
                outs = [self.tokenizer.encode(t, add_special_tokens=False) + [eos] for t in texts]
                return outs, [[-1.0] * len(o) for o in outs]

        rollout = make_rollout_func(generator=BoomForFirst(tokenizer, ""), env_error_penalty=-2.0)
        with pytest.warns(EnvErrorWarning, match=r"TextExplodingWordle-v0 \(seed \d+\).*kaboom"):
            output = rollout(prompts, fake_trainer(tokenizer, 2048))
        assert output["episode_ended_by"][0] == "error"
        assert "kaboom" in output["episode_error"][0]
        assert output["episode_return"][0] == -2.0
        assert output["episode_ended_by"][1] == "truncated" and output["episode_error"][1] == ""
        assert output["episode_turns"][1] == 6
    finally:
        del gym.registry["TextExplodingWordle-v0"]


def test_env_that_raises_in_reset(tokenizer) -> None:
    class BrokenReset(gym.Wrapper):
        def reset(self, **kwargs):
            raise ValueError("no puzzles left")

    gym.register("TextBrokenReset-v0", entry_point=lambda: BrokenReset(gym.make("TextWordle-v0")))
    try:
        rollout = make_rollout_func(generator=ScriptedGenerator(tokenizer, "[slate]"))
        with pytest.warns(EnvErrorWarning, match="no puzzles left"):
            output = rollout(
                tasks_prompts("TextBrokenReset-v0", n=1, copies=2), fake_trainer(tokenizer)
            )
        assert output["episode_ended_by"] == ["error", "error"]
        assert all(len(ids) == 1 for ids in output["completion_ids"])
        assert output["env_mask"] == [[0], [0]]
    finally:
        del gym.registry["TextBrokenReset-v0"]


def test_mixed_dataset_logs_per_env_metrics(tokenizer) -> None:
    trl_env.register_protocol_env("TextEchoRollout-v0", f"{__name__}:EchoEnv", max_episode_steps=3)
    try:
        dataset = make_dataset(["TextWordle-v0", "TextEchoRollout-v0"], 4, seed=0)
        prompts = [p for p in dataset["prompt"] for _ in range(2)]
        output, _, _, logged = rollout_with(tokenizer, "[slate]", prompts)
        assert set(output["env_id"]) == {"TextWordle-v0", "TextEchoRollout-v0"}
        names = {name for name, _ in logged}
        assert {"env/TextWordle-v0/success_rate", "env/TextEchoRollout-v0/success_rate"} <= names
    finally:
        del gym.registry["TextEchoRollout-v0"]


class EchoEnv:
    last_step_reward = 0.0
    alive = False

    def reset(self, seed: str) -> str:
        self.alive = True
        return "Say anything."

    def step(self, action: str) -> str:
        self.alive = False
        self.last_step_reward = 1.0
        return "ok"


def test_bad_prompts_raise_task_spec_error(tokenizer) -> None:
    rollout = make_rollout_func(generator=ScriptedGenerator(tokenizer, "x"))
    with pytest.raises(trl_env.error.TaskSpecError, match="make_dataset"):
        rollout([[{"role": "user", "content": "Play wordle"}]], fake_trainer(tokenizer))


def test_unknown_option_and_bad_values() -> None:
    with pytest.raises(TypeError, match="max_turn"):
        make_rollout_func(max_turn=3)
    with pytest.raises(ValueError, match="max_turns"):
        make_rollout_func(max_turns=0)
    with pytest.raises(ValueError, match="reward_aggregation"):
        make_rollout_func(reward_aggregation="median")


class FakeVLLMGeneration:
    """Mimics trl's VLLMGeneration.generate: top-1 logprob lists, reads max_completion_length."""

    def __init__(self, tokenizer, reply: str) -> None:
        self.tokenizer = tokenizer
        self.reply = reply
        self.max_completion_length = 1024
        self.seen: list[tuple[int, int, int]] = []

    def generate(self, prompts, images, num_generations, profiler=None):
        assert images is None and num_generations == 1
        self.seen.append((len(prompts), self.max_completion_length, num_generations))
        eos = self.tokenizer.convert_tokens_to_ids("<|im_end|>")
        ids = (self.tokenizer.encode(self.reply, add_special_tokens=False) + [eos])[
            : self.max_completion_length
        ]
        completions = [list(ids) for _ in prompts]
        logprobs = [[[-0.25] for _ in ids] for _ in prompts]
        return prompts, completions, logprobs, [[[t] for t in ids] for _ in prompts]


def test_vllm_backend_through_trainer(tokenizer) -> None:
    fake = FakeVLLMGeneration(tokenizer, "[slate]")
    trainer = fake_trainer(tokenizer, 2048)
    trainer.use_vllm = True
    trainer.vllm_generation = fake
    trainer.eos_token_ids = [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    rollout = make_rollout_func(max_new_tokens_per_turn=32)
    output = rollout(tasks_prompts(n=2, copies=2), trainer)
    assert [size for size, _, _ in fake.seen] == [4] * 6  # one call per turn, whole batch
    assert all(limit == 32 for _, limit, _ in fake.seen)
    assert fake.max_completion_length == 1024  # restored after each call
    for logprobs, mask in zip(output["logprobs"], output["env_mask"], strict=True):
        assert [lp for lp, m in zip(logprobs, mask, strict=True) if m] == [-0.25] * sum(mask)
    assert isinstance(rollout._generator_for(trainer), VLLMGenerator)


def test_task_round_trip_and_dataset() -> None:
    task = Task("TextWordle-v0", "17", {"max_guesses": 4})
    assert task_from_prompt(task.to_prompt()) == task
    assert task_from_prompt(task.to_json()) == task
    dataset = make_dataset("TextWordle-v0", 6, seed=3, max_guesses=4)
    again = make_dataset("TextWordle-v0", 6, seed=3, max_guesses=4)
    assert dataset["prompt"] == again["prompt"]
    assert json.loads(dataset["env_kwargs"][0]) == {"max_guesses": 4}
    assert len(set(dataset["seed"])) == 6


def test_make_dataset_errors() -> None:
    with pytest.raises(trl_env.error.UsageError, match="Did you mean"):
        make_dataset("TextWordel-v0", 2)
    with pytest.raises(ValueError, match="num_tasks"):
        make_dataset("TextWordle-v0", 0)
    with pytest.raises(ValueError, match="env_ids"):
        make_dataset([], 2)


def test_mixed_dataset_is_balanced() -> None:
    dataset = make_dataset(["TextWordle-v0", "TextWordle-v0"], 10)
    assert len(dataset) == 10


def test_trainer_chat_template_kwargs_reach_the_processor(tokenizer) -> None:
    trainer = fake_trainer(tokenizer)
    trainer.chat_template_kwargs = {"enable_thinking": False}
    rollout = make_rollout_func(generator=ScriptedGenerator(tokenizer, "[slate]"), max_turns=1)
    output = rollout(tasks_prompts(n=1, copies=1), trainer)
    processor = rollout.processor_for(tokenizer)
    assert processor.chat_template_kwargs == {"enable_thinking": False}
    rendered = tokenizer.apply_chat_template(
        [
            {"role": "system", "content": trl_env.trl.DEFAULT_SYSTEM_PROMPT},
            {"role": "user", "content": rollout.last_episodes[0].transcript[0]["text"]},
        ],
        tokenize=False,
        add_generation_prompt=True,
        enable_thinking=False,
    )
    assert tokenizer.decode(output["prompt_ids"][0]) == rendered


def test_per_env_metrics_once_a_run_has_seen_several_envs(tokenizer) -> None:
    trl_env.register_protocol_env("TextEchoSeen-v0", f"{__name__}:EchoEnv", max_episode_steps=3)
    try:
        rollout = make_rollout_func(generator=ScriptedGenerator(tokenizer, "[slate]"))
        logged: list[tuple[str, float]] = []
        trainer = fake_trainer(tokenizer, 2048)
        trainer._log_metric = lambda name, value: logged.append((name, value))
        rollout(tasks_prompts(n=1, copies=2), trainer)  # only Wordle so far
        assert not any(name.startswith("env/TextWordle") for name, _ in logged)
        rollout(tasks_prompts("TextEchoSeen-v0", n=1, copies=2), trainer)
        logged.clear()
        rollout(tasks_prompts(n=1, copies=2), trainer)  # a Wordle-only batch, in a mixed run
        assert any(name == "env/TextWordle-v0/success_rate" for name, _ in logged)
    finally:
        del gym.registry["TextEchoSeen-v0"]
