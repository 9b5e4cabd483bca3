"""``trl-env sft``: a warm start on demonstrations, tokenized exactly as the rollout plays episodes.

TRL's ``SFTTrainer`` renders conversations with the chat template as whole texts, and a chat
template need not be prefix-preserving (some drop earlier ``<think>`` blocks, some tokenize across
turn boundaries differently), so the ids it trains on can differ from the ids the rollout's model
will see. Here every demo episode is turned into ids by the rollout's own
:class:`~trl_env.trl._processors.ChatTemplateProcessor`, as the rollout builds an episode: the
prompt ids (system prompt and first observation), then for each turn the reply's ids and the
template's end-of-turn id (the tokens a model would sample), then the env turn's ids.
``SFTTrainer`` gets them pre-tokenized with an ``assistant_masks`` column, so the loss is on the
reply tokens only. :func:`demo_token_stream` is that conversion; a test checks it against the
rollout's stream of the same episode.

Its output is a run folder (``sft_config.json``, ``final/``: the model, or a LoRA adapter with
``--lora``) that ``trl-env train --model RUN`` and ``trl-env eval --policy RUN`` accept.

Example:
    >>> from trl_env.trl._sft import SFTRunConfig, run_sft
    >>> config = SFTRunConfig(env_ids=["TextGuessNumber-v0"], model="SmolLM2.gguf",
    ...                       lora=True, demos="oracle", output_dir="runs/sft")  # doctest: +SKIP
    >>> run_sft(config)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trl_env._configs import (
    env_ids_field,
    env_kwargs_field,
    max_turns_field,
    seed_field,
    system_prompt_field,
)
from trl_env._demos import (
    DEFAULT_SYSTEM_PROMPT,
    POLICIES,
    DemosConfig,
    load_demos,
    plays_demos,
    record_demos,
    write_demos,
)
from trl_env.error import UsageError

__all__ = ["SFTResult", "SFTRunConfig", "demo_token_stream", "run_sft"]


def _names_a_player(demos: str) -> bool:
    """Whether ``--demos`` names an env's scripted player (no folder of that name exists)."""
    from trl_env._scripted import envs_with_player

    return not Path(demos).exists() and bool(envs_with_player(demos))


@dataclass
class SFTRunConfig:
    """Settings of ``trl-env sft`` (every option of the command is one field)."""

    env_ids: list[str] = env_ids_field(
        "environment IDs the demos come from (none with --demos DIR)", optional=True
    )
    model: str = field(
        default="",
        metadata={
            "help": "model to fine-tune: a .gguf file, a model directory, a run folder or a Hub id"
        },
    )
    demos: str = field(
        default="oracle",
        metadata={
            "help": "oracle, random or a scripted player of the env such as Hangman's frequency "
            "(played now, --episodes per env), or a folder written by `trl-env demos`"
        },
    )
    episodes: int = field(default=32, metadata={"help": "demo episodes per env when played now"})
    output_dir: str = field(
        default="runs/sft", metadata={"help": "the run folder to write", "aliases": ["--out"]}
    )
    lora: bool = field(
        default=False, metadata={"help": "train LoRA adapters (peft) instead of all weights"}
    )
    lora_r: int = field(default=16, metadata={"help": "LoRA rank"})
    lora_alpha: int = field(default=32, metadata={"help": "LoRA alpha"})
    learning_rate: float = field(
        default=2e-4, metadata={"help": "AdamW learning rate", "aliases": ["--lr"]}
    )
    epochs: float = field(default=2.0, metadata={"help": "passes over the demos"})
    max_steps: int | None = field(
        default=None, metadata={"help": "stop after this many optimizer steps (overrides --epochs)"}
    )
    batch_size: int = field(default=8, metadata={"help": "episodes per optimizer step"})
    micro_batch_size: int | None = field(
        default=None,
        metadata={
            "help": "episodes per forward pass, accumulated into --batch-size per step (default: "
            "all of them); smaller saves memory, the optimizer steps stay the same"
        },
    )
    gradient_checkpointing: bool = field(
        default=True,
        metadata={
            "help": "recompute activations in the backward pass: one more forward pass for a "
            "fraction of the memory, as trl-env train's warm start does; "
            "--no-gradient-checkpointing trades the memory back for the pass"
        },
    )
    bf16: bool | None = field(
        default=None,
        metadata={
            "help": "bfloat16 autocast (default: on with a CUDA GPU that supports it, and on CPUs "
            "with AMX/AVX-512 bf16 units; off elsewhere)"
        },
    )
    seed: int = seed_field("seed of the demos and of training")
    system_prompt: str | None = system_prompt_field(
        DEFAULT_SYSTEM_PROMPT, "system message of every episode (the same as the GRPO run's)"
    )
    max_turns: int | None = max_turns_field("end a demo episode after this many turns")
    env_kwargs: dict[str, Any] = env_kwargs_field("gym.make keyword arguments, as JSON")
    seats: bool = field(
        default=False,
        metadata={
            "help": "with --demos oracle|random|NAME on a two-player game: play both seats of each "
            "game and learn each seat's conversation (as self-play sees the game)"
        },
    )

    def __post_init__(self) -> None:
        if self.system_prompt == "":  # --system-prompt "" means no system message
            self.system_prompt = None
        if not self.env_ids and (self.demos in POLICIES or _names_a_player(self.demos)):
            raise UsageError(
                f"--demos {self.demos} needs the environment IDs to play demos of (its policy: "
                "oracle, random or a scripted player of the envs), or give a folder written by "
                "`trl-env demos` as --demos DIR"
            )
        if not self.model:
            raise UsageError("--model is required: a .gguf file, a model directory or a Hub id")
        micro = self.micro_batch_size
        if micro is not None and (micro < 1 or self.batch_size % micro):
            raise UsageError(
                f"micro-batch-size must divide batch-size ({self.batch_size}), got {micro}"
            )
        if self.episodes < 1 or self.batch_size < 1 or self.learning_rate <= 0 or self.epochs <= 0:
            raise UsageError("episodes, batch-size, lr and epochs must be positive")


@dataclass
class SFTResult:
    """What :func:`run_sft` did: the run folder, the demos' size and the loss."""

    output_dir: Path
    episodes: int
    tokens_trained: int
    first_loss: float
    last_loss: float
    seconds: float
    losses: tuple[float, ...] = ()  # every logged optimizer step's loss, in order


def demo_token_stream(processor: Any, messages: Sequence[dict[str, str]]) -> dict[str, list[int]]:
    """One demo episode as the rollout would hold it: ``input_ids`` and ``assistant_masks``.

    Args:
        processor: The rollout's :class:`~trl_env.trl._processors.ChatTemplateProcessor`.
        messages: ``[system?, user, assistant, user, assistant, ...]`` (a demos row).

    Returns:
        ``input_ids`` (prompt, then reply and env-turn ids in order, up to the last reply) and
        ``assistant_masks`` (1 on each reply's tokens and its end-of-turn token, 0 elsewhere).
    """
    messages = list(messages)
    system = None
    if messages and messages[0]["role"] == "system":
        system, messages = messages[0]["content"], messages[1:]
    if not messages or messages[0]["role"] != "user":
        raise ValueError("a demo conversation starts with the env's message (role 'user')")
    ids = list(processor.initial_prompt_ids(system, messages[0]["content"]))
    mask = [0] * len(ids)
    # The env's last message (after the episode ended) never reaches the model: the rollout's
    # stream ends with the last reply, and so does this one.
    last_reply = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=0)
    for message in messages[1 : last_reply + 1]:
        if message["role"] == "assistant":
            reply = processor.tokenizer.encode(message["content"], add_special_tokens=False)
            reply = [*reply, processor.end_of_turn_id]
            ids += reply
            mask += [1] * len(reply)
        else:
            chunk = processor.env_turn_ids(message["content"], last_token_id=ids[-1])
            ids += chunk
            mask += [0] * len(chunk)
    return {"input_ids": ids, "assistant_masks": mask}


def _demo_rows(cfg: SFTRunConfig, say: Callable[[str], None]) -> list[dict[str, Any]]:
    output = Path(cfg.output_dir)
    if plays_demos(cfg.demos, cfg.env_ids):
        rows = record_demos(
            cfg.env_ids,
            policy=cfg.demos,
            episodes=cfg.episodes,
            seed=cfg.seed,
            max_turns=cfg.max_turns,
            system_prompt=cfg.system_prompt,
            env_kwargs=cfg.env_kwargs,
            seats=cfg.seats,
        )
        demos_config = DemosConfig(
            env_ids=list(cfg.env_ids), policy=cfg.demos, episodes=cfg.episodes, seed=cfg.seed,
            max_turns=cfg.max_turns, system_prompt=cfg.system_prompt, env_kwargs=cfg.env_kwargs,
            seats=cfg.seats,
        )  # fmt: skip
        write_demos(rows, output / "demos", demos_config)
        say(f"played {len(rows)} {cfg.demos} demo episodes; saved to {output / 'demos'}")
        return rows
    rows, settings = load_demos(cfg.demos)
    if settings.get("system_prompt") != cfg.system_prompt:
        raise UsageError(
            f"the demos in {cfg.demos} were played with the system prompt "
            f"{settings.get('system_prompt')!r}, but this run uses {cfg.system_prompt!r}: the warm "
            "start must see episodes as training will; pass the same --system-prompt, or make "
            "the demos again"
        )
    if cfg.env_ids:
        rows = [row for row in rows if row["env_id"] in set(cfg.env_ids)]
        if not rows:
            raise UsageError(f"the demos in {cfg.demos} hold no episode of {cfg.env_ids}")
    return rows


def _progress_lines(say: Callable[[str], None]) -> Any:
    """A ``TrainerCallback`` that says ``sft: step 8/76 (loss 1.23) | 4m left`` ten times a run."""
    from transformers import TrainerCallback

    from trl_env.trl.training._callbacks import _duration

    class ProgressLines(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.started = time.perf_counter()

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kw: Any) -> None:
            step, total = state.global_step, state.max_steps
            if not logs or "loss" not in logs or not state.is_world_process_zero:
                return
            if step % max(1, total // 10) and step != total:
                return
            left = (time.perf_counter() - self.started) / max(step, 1) * (total - step)
            say(f"sft: step {step}/{total} (loss {float(logs['loss']):.3f}) | "
                f"{_duration(left)} left")  # fmt: skip

    return ProgressLines()


def _sft_args(cfg: SFTRunConfig, output: Path) -> Any:
    """The ``SFTConfig`` of a run: its batch, bf16 and checkpointing settings."""
    import torch
    from trl import SFTConfig

    from trl_env.trl._checkpointing import lora_checkpointing_kwargs
    from trl_env.trl.models._bf16 import default_bf16

    on_cpu = not torch.cuda.is_available()
    return SFTConfig(
        output_dir=str(output / "trainer"),
        use_cpu=on_cpu,
        bf16=default_bf16() if cfg.bf16 is None else cfg.bf16,
        learning_rate=cfg.learning_rate,
        num_train_epochs=cfg.epochs,
        max_steps=cfg.max_steps or -1,
        per_device_train_batch_size=cfg.micro_batch_size or cfg.batch_size,
        gradient_accumulation_steps=cfg.batch_size // (cfg.micro_batch_size or cfg.batch_size),
        seed=cfg.seed,
        data_seed=cfg.seed,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        max_length=None,
        # On by default, as in trl-env train's warm start: recomputing costs a forward pass, but
        # without it the warm-start table's SFT (608 demos of 19 envs, SmolLM2-135M LoRA) peaked
        # at 20.8 GB of RSS, and 64 Hangman demos in float32 near 19 GB.
        activation_checkpointing=cfg.gradient_checkpointing,
        activation_checkpointing_kwargs=(
            lora_checkpointing_kwargs(cfg.lora, on_cpu) if cfg.gradient_checkpointing else None
        ),
        # Demos of different envs differ 8x in length (79 to 776 tokens for the 19 native envs):
        # batches of similar lengths cut the padding from 40% of the tokens trained to ~2%.
        train_sampling_strategy="group_by_length",
    )


def _sft_trainer(
    cfg: SFTRunConfig,
    model: Any,
    tokenizer: Any,
    dataset: Any,
    args: Any,
    say: Callable[[str], None],
) -> Any:
    """TRL's ``SFTTrainer`` on the pre-tokenized demos (LoRA adapters with ``cfg.lora``)."""
    from transformers.trainer_callback import PrinterCallback
    from trl import SFTTrainer

    peft_config = None
    if cfg.lora:
        from peft import LoraConfig

        peft_config = LoraConfig(
            r=cfg.lora_r,
            lora_alpha=cfg.lora_alpha,
            target_modules="all-linear",
            task_type="CAUSAL_LM",
        )
    with warnings.catch_warnings():
        # peft reads transformers' deprecated `is_gradient_checkpointing`; nothing to act on.
        warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated")
        trainer = SFTTrainer(
            model=model,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=peft_config,
        )
    trainer.remove_callback(PrinterCallback)  # one compact line per tenth of the run instead
    trainer.add_callback(_progress_lines(say))
    return trainer


def _save_run(
    cfg: SFTRunConfig,
    trainer: Any,
    tokenizer: Any,
    base: str,
    rows: int,
    streams: Sequence[dict[str, list[int]]],
    started: float,
) -> SFTResult:
    """Save ``final/`` and the run's settings; what the run did."""
    from trl_env.trl.models._paths import SFT_RUN_CONFIG

    output = Path(cfg.output_dir)
    losses = [row["loss"] for row in trainer.state.log_history if "loss" in row]
    final = output / "final"
    trainer.save_model(str(final))
    tokenizer.save_pretrained(str(final))
    settings = {**asdict(cfg), "model": base, "rows": rows, "bf16": bool(trainer.args.bf16)}
    (output / SFT_RUN_CONFIG).write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return SFTResult(
        output_dir=output,
        episodes=rows,
        tokens_trained=sum(sum(s["assistant_masks"]) for s in streams),
        first_loss=float(sum(losses[:5]) / max(len(losses[:5]), 1)),
        last_loss=float(sum(losses[-5:]) / max(len(losses[-5:]), 1)),
        seconds=time.perf_counter() - started,
        losses=tuple(float(loss) for loss in losses),
    )


def run_sft(cfg: SFTRunConfig, say: Callable[[str], None] = print) -> SFTResult:
    """Fine-tune ``cfg.model`` on demos and save a run folder (see the module docstring): resolve
    the model, play or read the demos, tokenize them as the rollout would, train, save.

    Returns:
        An :class:`SFTResult`.
    """
    import datasets

    from trl_env.trl._processors import ChatTemplateProcessor
    from trl_env.trl.models import load_model_and_tokenizer, resolve_model_path

    started = time.perf_counter()
    output = Path(cfg.output_dir)
    output.mkdir(parents=True, exist_ok=True)
    # The model is resolved first: a wrong --model fails at once, not after the demos are played.
    name = resolve_model_path(cfg.model, log=say)
    rows = _demo_rows(cfg, say)
    base = str(Path(name).resolve()) if Path(name).exists() else name
    model, tokenizer = load_model_and_tokenizer(base, require_chat_template=True, log=say)
    processor = ChatTemplateProcessor(tokenizer)
    streams = [demo_token_stream(processor, row["messages"]) for row in rows]
    dataset = datasets.Dataset.from_list(streams)
    trainer = _sft_trainer(cfg, model, tokenizer, dataset, _sft_args(cfg, output), say)
    trainer.train()
    result = _save_run(cfg, trainer, tokenizer, base, len(rows), streams, started)
    say(
        f"sft: {result.episodes} episodes ({result.tokens_trained} reply tokens), loss "
        f"{result.first_loss:.3f} -> {result.last_loss:.3f} in {result.seconds:.0f} s; "
        f"the run folder {output} works as `trl-env train --model {output}` and "
        f"`trl-env eval --policy {output}`"
    )
    return result
