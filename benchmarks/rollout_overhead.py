"""What the rollout costs outside generation, and how it compares with TRL's own tool loop.

Three measurements, printed in one run:

1. Tiny model on CPU, 64 TextWordle-v0 episodes x up to 6 turns: total rollout time, time inside
   generation, and the share outside it. Target: at most 5% outside generation.
   Also the number of generation calls (target: one per turn played, not episodes x turns).
2. A generator stub that returns instantly (long replies, so the conversation grows to thousands
   of tokens): per-turn bookkeeping time by turn. Target: turn 6 within 1.5x of turn 1 (no
   re-tokenising or re-rendering of history).
3. The same tiny model, env and number of episodes through TRL's ``environment_factory`` tool
   loop (``GRPOTrainer._generate_and_score_completions``), side by side with this library's
   ``rollout_func`` through the same trainer method: model tokens per second of both.
   Target: ours at least as fast. The tiny model is first fine-tuned for a few seconds to always
   answer with the same tool call, so both loops play the same multi-turn episodes.

With ``--model PATH`` (a real model directory or ``.gguf`` file, for example SmolLM2-135M-Instruct;
see ``docs/real_models.md``) measurement 1 uses that model (target there: under 0.5% outside
generation) and measurement 2 its tokenizer; measurement 3, which fine-tunes the model in place to
always call a tool, is skipped; and a 4th measurement runs:

4. Prefill share at turn 6 of a TextWordle-v0 episode: generation re-encodes the whole history
   every turn. The turn-6 inputs of a batch of episodes are generated again twice: with the turn's
   token budget, and with one new token (prefill plus one decoding step). Their time ratio is the
   share of that turn's generation time spent re-reading the history; over 25% would justify
   reusing the KV cache across turns.
5. The same greedy 6-turn TextWordle-v0 episodes played twice, re-reading the history every turn
   and reusing the KV cache across turns (``TransformersGenerator(reuse_kv_cache=...)``):
   generation time per turn and in total, their ratio, and whether the token streams are the same.

Run:
    python benchmarks/rollout_overhead.py [--episodes 64] [--quick] [--model PATH]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
warnings.filterwarnings("ignore", category=FutureWarning)

import torch  # noqa: E402
from transformers import GenerationConfig  # noqa: E402

import trl_env  # noqa: E402
from trl_env.trl import ChatTemplateProcessor, RolloutConfig, Task, TransformersGenerator  # noqa: E402
from trl_env.trl._rollout import play_episodes  # noqa: E402
from trl_env.trl.models import build_tiny_model, load_model_and_tokenizer  # noqa: E402


class TimedGenerator:
    """Wraps a generator; records the time spent inside each call."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.spans: list[tuple[float, float]] = []

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int):
        start = time.perf_counter()
        result = self.inner.generate(inputs, max_new_tokens)
        self.spans.append((start, time.perf_counter()))
        return result


class InstantGenerator:
    """Returns the same long reply for every episode, instantly."""

    def __init__(self, reply_ids: list[int]) -> None:
        self.reply_ids = reply_ids

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int):
        ids = self.reply_ids[:max_new_tokens]
        return [ids for _ in inputs], [[-1.0] * len(ids) for _ in inputs]


def wordle_tasks(episodes: int, group: int = 4) -> list[Task]:
    # Groups of `group` copies, as GRPOTrainer sends them (num_generations copies per task).
    return [Task("TextWordle-v0", i // group) for i in range(episodes)]


def sampling_generator(
    model, tokenizer, *, reuse_kv_cache: bool = True, greedy: bool = False
) -> TransformersGenerator:
    """The rollout's transformers backend, sampling at temperature 1 (as GRPO does) or greedy."""
    eos = sorted(ChatTemplateProcessor(tokenizer).eos_token_ids)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos[0]
    sampling = (
        {"do_sample": False}
        if greedy
        else {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0}
    )
    return TransformersGenerator(
        model,
        pad_token_id=pad,
        eos_token_ids=eos,
        generation_config=GenerationConfig(**sampling, eos_token_id=eos, pad_token_id=pad),
        reuse_kv_cache=reuse_kv_cache,
    )


def measure_overhead(model, tokenizer, episodes: int, per_turn: int, target: float = 0.05) -> None:
    processor = ChatTemplateProcessor(tokenizer)
    generator = TimedGenerator(sampling_generator(model, tokenizer))
    config = RolloutConfig(max_new_tokens_per_turn=per_turn)
    torch.manual_seed(0)
    start = time.perf_counter()
    played = play_episodes(
        wordle_tasks(episodes), generator, processor, config, max_completion_length=4096
    )
    total = time.perf_counter() - start
    inside = sum(end - begin for begin, end in generator.spans)
    turns = max(e.turns for e in played)
    print(f"1) {'tiny model' if target == 0.05 else 'real model'}, CPU, transformers backend")
    print(
        f"   episodes: {episodes}, turns played: {turns}, generation calls: {len(generator.spans)}"
        f" ({'one per turn' if len(generator.spans) == turns else 'MISMATCH'};"
        f" episodes x turns would be {sum(e.turns for e in played)})"
    )
    print(
        f"   rollout {total:.3f} s, inside generation {inside:.3f} s, outside {total - inside:.3f} s"
    )
    share = (total - inside) / total
    print(
        f"   outside generation: {100 * share:.2f}% of rollout time "
        f"(target <= {100 * target:g}%: {'met' if share <= target else 'MISSED'};"
        f" ratio to target {share / target:.2f})"
    )


def measure_bookkeeping(tokenizer, episodes: int, repeats: int) -> None:
    processor = ChatTemplateProcessor(tokenizer)
    eos = processor.end_of_turn_id
    reply = tokenizer.encode("let me think about this word " * 40, add_special_tokens=False)
    reply = [*reply[:300], *tokenizer.encode("[slate]", add_special_tokens=False), eos]
    per_turn: dict[int, list[float]] = {}
    lengths: dict[int, int] = {}
    for _ in range(repeats):
        generator = TimedGenerator(InstantGenerator(reply))
        start = time.perf_counter()
        played = play_episodes(
            wordle_tasks(episodes),
            generator,
            processor,
            RolloutConfig(),
            max_completion_length=8192,
        )
        end = time.perf_counter()
        marks = [span[1] for span in generator.spans] + [end]
        begins = [span[0] for span in generator.spans[1:]] + [end]
        for turn, (done, nxt) in enumerate(zip(marks, begins, strict=False), start=1):
            per_turn.setdefault(turn, []).append((nxt - done) / episodes)
        for turn in range(1, len(generator.spans) + 1):
            lengths[turn] = len(played[0].prompt_ids) + turn * len(reply)
        del start
    print("2) instant generator stub: bookkeeping per turn (per episode, median of repeats)")
    first = statistics.median(per_turn[1])
    for turn, samples in sorted(per_turn.items()):
        median = statistics.median(samples)
        print(
            f"   turn {turn}: {1e6 * median:7.1f} us  (input ~{lengths.get(turn, 0)} tokens)"
            f"  {median / first:4.2f}x turn 1"
        )
    worst = max(statistics.median(s) for s in per_turn.values()) / first
    last = statistics.median(per_turn[max(per_turn)]) / first
    print(
        f"   turn 6 / turn 1 = {last:.2f}x, worst turn / turn 1 = {worst:.2f}x "
        f"(target <= 1.5x: {'met' if worst <= 1.5 else 'MISSED'})"
    )


TOOL_CALL_REPLY = '<tool_call>\n{"name": "act", "arguments": {"move": "[crane]"}}\n</tool_call>'


def teach_fixed_reply(model_dir: str, steps: int) -> str:
    """Fine-tune the tiny model to always answer with one tool call, and save it in place.

    Both loops then play the same multi-turn episodes with the same model: TRL's tool loop
    executes the call (``act(move="[crane]")``); our rollout parses ``[crane]`` out of the same
    text. Without this, the untrained model writes no tool call and TRL's loop stops after one turn.
    """
    model, tokenizer = load_model_and_tokenizer(model_dir)
    processor = ChatTemplateProcessor(tokenizer)
    target = tokenizer.encode(TOOL_CALL_REPLY, add_special_tokens=False) + [
        processor.end_of_turn_id
    ]
    env = trl_env.GymnasiumToProtocol("TextWordle-v0")
    prompts = [processor.initial_prompt_ids(None, env.reset(str(i))) for i in range(4)]
    prompts.append(processor.initial_prompt_ids(None, env.step("[crane]")))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        prompt = prompts[step % len(prompts)]
        ids = torch.tensor([prompt + target])
        labels = ids.clone()
        labels[0, : len(prompt)] = -100
        loss = model(input_ids=ids, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(model_dir)
    return model_dir


def measure_against_tool_loop(model_dir: str, episodes: int, sft_steps: int) -> None:
    from trl import GRPOConfig, GRPOTrainer

    teach_fixed_reply(model_dir, sft_steps)

    def trainer_for(**kwargs):
        args = GRPOConfig(
            output_dir=tempfile.mkdtemp(),
            use_cpu=True,
            bf16=False,
            report_to="none",
            per_device_train_batch_size=episodes,
            num_generations=4,
            max_completion_length=1024,
            logging_steps=1,
            save_strategy="no",
            temperature=1.0,
            max_tool_calling_iterations=5,
        )
        return GRPOTrainer(model=model_dir, args=args, **kwargs)

    dataset = trl_env.make_dataset("TextWordle-v0", episodes // 4, seed=0)
    inputs = [row for row in dataset for _ in range(4)]
    ours = trl_env.make_rollout_func(max_new_tokens_per_turn=64, system_prompt=None)
    setups = {
        "trl-env rollout_func": trainer_for(
            reward_funcs=trl_env.env_reward, train_dataset=dataset, rollout_func=ours
        ),
        "TRL environment_factory": trainer_for(
            reward_funcs=None,
            train_dataset=dataset,
            environment_factory=trl_env.make_environment_factory(instructions=""),
        ),
    }
    print("3) same tiny model (taught to always call the tool), env and episodes, through")
    print("   GRPOTrainer._generate_and_score_completions (generation + scoring)")
    rates = {}
    for name, trainer in setups.items():
        torch.manual_seed(0)
        start = time.perf_counter()
        batch = trainer._generate_and_score_completions([dict(x) for x in inputs])
        elapsed = time.perf_counter() - start
        mask = batch["completion_mask"]
        if "tool_mask" in batch:
            mask = mask * batch["tool_mask"]
        tokens = int(mask.sum())
        rates[name] = tokens / elapsed
        print(
            f"   {name:26s} {tokens:6d} model tokens in {elapsed:6.2f} s -> {rates[name]:8.1f} tok/s"
        )
    ratio = rates["trl-env rollout_func"] / rates["TRL environment_factory"]
    print(
        f"   ours / TRL tool loop = {ratio:.2f}x (target >= 1.0: {'met' if ratio >= 1.0 else 'MISSED'})"
    )
    turns = [e.turns for e in ours.last_episodes]
    print(f"   turns per episode (ours): mean {sum(turns) / len(turns):.1f}, max {max(turns)}")


class CapturingGenerator(TimedGenerator):
    """A timed generator that also keeps the inputs and budget of every call."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.calls: list[tuple[list[list[int]], int]] = []

    def generate(self, inputs: Sequence[Sequence[int]], max_new_tokens: int):
        self.calls.append(([list(ids) for ids in inputs], max_new_tokens))
        return super().generate(inputs, max_new_tokens)


def measure_prefill_share(model, tokenizer, episodes: int, per_turn: int, repeats: int) -> None:
    """Share of turn-6 generation time spent on the prefill of the whole history (Wordle)."""
    processor = ChatTemplateProcessor(tokenizer)
    generator = CapturingGenerator(sampling_generator(model, tokenizer, reuse_kv_cache=False))
    torch.manual_seed(0)
    tasks = [Task("TextWordle-v0", 10_000 + i) for i in range(episodes)]
    config = RolloutConfig(max_new_tokens_per_turn=per_turn, max_turns=6)
    play_episodes(tasks, generator, processor, config, max_completion_length=8192)
    if len(generator.calls) < 6:
        print(f"4) prefill share: episodes ended after {len(generator.calls)} turns; no turn 6")
        return
    inputs, budget = generator.calls[5]
    played = generator.spans[5][1] - generator.spans[5][0]
    lengths = sorted(len(ids) for ids in inputs)

    def timed(new_tokens: int) -> float:
        samples = []
        for _ in range(repeats):
            torch.manual_seed(0)
            start = time.perf_counter()
            generator.inner.generate(inputs, new_tokens)
            samples.append(time.perf_counter() - start)
        return statistics.median(samples)

    full, prefill = timed(budget), timed(1)
    share = prefill / full
    print("4) prefill share of generation time at turn 6 of TextWordle-v0 (transformers backend)")
    print(
        f"   {len(inputs)} episodes in the batch, input {lengths[0]}..{lengths[-1]} tokens, "
        f"budget {budget} new tokens; turn 6 as played: {played:.2f} s"
    )
    print(
        f"   whole turn {full:.2f} s, prefill + 1 token {prefill:.2f} s (medians of {repeats}) -> "
        f"prefill share {100 * share:.1f}% (threshold 25%: "
        f"{'crossed: KV-cache reuse would pay' if share > 0.25 else 'not crossed'};"
        f" ratio to threshold {share / 0.25:.2f})"
    )


def measure_kv_reuse(model, tokenizer, episodes: int, per_turn: int) -> None:
    """The same greedy 6-turn TextWordle-v0 episodes with and without KV-cache reuse: time ratio."""
    processor = ChatTemplateProcessor(tokenizer)
    tasks = [Task("TextWordle-v0", 10_000 + i) for i in range(episodes)]
    config = RolloutConfig(max_new_tokens_per_turn=per_turn, max_turns=6)
    sampling_generator(model, tokenizer).generate([[1, 2, 3]], 2)  # warm-up
    runs = {}
    for reuse in (False, True):
        generator = TimedGenerator(
            sampling_generator(model, tokenizer, reuse_kv_cache=reuse, greedy=True)
        )
        played = play_episodes(tasks, generator, processor, config, max_completion_length=8192)
        per_turn_s = [end - begin for begin, end in generator.spans]
        runs[reuse] = (played, per_turn_s, generator.inner.prefix_cache)
    (plain, plain_s, _), (reused, reused_s, cache) = runs[False], runs[True]
    same = sum(a.completion_ids == b.completion_ids for a, b in zip(plain, reused, strict=True))
    print("5) KV-cache reuse across turns (transformers backend), greedy TextWordle-v0")
    print(f"   {episodes} episodes x {len(plain_s)} turns, {per_turn} new tokens per turn at most")
    for turn, (a, b) in enumerate(zip(plain_s, reused_s, strict=False), start=1):
        print(
            f"   turn {turn}: full prefill {a:6.2f} s, reusing the cache {b:6.2f} s -> {a / b:.2f}x"
        )
    total_plain, total_reused = sum(plain_s), sum(reused_s)
    reused_share = cache.reused_tokens / max(1, cache.reused_tokens + cache.prefilled_tokens)
    print(
        f"   generation total: {total_plain:.2f} s -> {total_reused:.2f} s: "
        f"{total_plain / total_reused:.2f}x faster; turn 6: {plain_s[-1] / reused_s[-1]:.2f}x"
    )
    print(
        f"   {100 * reused_share:.0f}% of input tokens came from the cache; "
        f"identical token streams in {same}/{len(plain)} episodes (greedy)"
    )


def measure_real_model(model_path: str, episodes: int, quick: bool) -> None:
    """Measurements 1, 2 and 4 with a real model (3 would fine-tune it in place: skipped)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _real_model import resolve_model

    model, tokenizer = load_model_and_tokenizer(resolve_model(model_path))
    model.eval()
    per_turn = 16 if quick else 32
    measure_overhead(model, tokenizer, episodes, per_turn=per_turn, target=0.005)
    measure_bookkeeping(tokenizer, episodes, repeats=3 if quick else 7)
    print("3) skipped with --model (it fine-tunes the model in place to always call a tool)")
    measure_prefill_share(model, tokenizer, min(episodes, 16), per_turn, repeats=1 if quick else 3)
    measure_kv_reuse(model, tokenizer, min(episodes, 16), per_turn)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, shorter turns")
    parser.add_argument(
        "--model",
        default=None,
        help="also measure a real model: a .gguf file, model directory or run folder "
        "(for SmolLM2, see docs/real_models.md; default: the tiny model only)",
    )
    args = parser.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    if args.model is not None:
        measure_real_model(args.model, args.episodes, args.quick)
        return
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = build_tiny_model(tmp)
        model, tokenizer = load_model_and_tokenizer(model_dir)
        model.eval()
        measure_overhead(model, tokenizer, args.episodes, per_turn=16 if args.quick else 32)
        measure_bookkeeping(tokenizer, args.episodes, repeats=3 if args.quick else 7)
        measure_against_tool_loop(model_dir, args.episodes, sft_steps=60 if args.quick else 150)


if __name__ == "__main__":
    main()
