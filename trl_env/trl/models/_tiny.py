"""Tiny local models and tokenizers, built from scratch for tests, demos and CI.

Nothing here downloads anything. :func:`build_tiny_tokenizer` trains a byte-level BPE tokenizer
on a few kilobytes of built-in English text (plus Wordle vocabulary), adds the special tokens a
chat template uses and attaches that template, read verbatim from the files TRL ships in
``trl/chat_templates/``. Because the template text is byte-identical to TRL's, TRL recognises it:
:func:`trl.chat_template_utils.add_response_schema` sets a ``response_template`` for the families it
knows, and :func:`trl.chat_template_utils.get_training_chat_template` finds the patched variant.

:func:`build_tiny_model` adds a randomly initialised 2-layer Qwen3 model (a few hundred thousand
parameters) and saves both to a directory, which :func:`trl_env.trl.models.load_model_and_tokenizer` then loads
through the very ``AutoTokenizer`` / ``AutoModelForCausalLM`` path that ``--model Qwen/Qwen3-0.6B``
takes:

    >>> from trl_env.trl.models import build_tiny_model, load_model_and_tokenizer
    >>> path = build_tiny_model("/tmp/tiny-qwen3")  # doctest: +SKIP
    >>> model, tokenizer = load_model_and_tokenizer(path)  # doctest: +SKIP
    >>> tokenizer.apply_chat_template(
    ...     [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    ... )  # doctest: +SKIP
    '<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from pathlib import Path
from typing import Any

import torch
import trl
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    GenerationConfig,
    PreTrainedTokenizerFast,
    Qwen3Config,
    Qwen3ForCausalLM,
)
from trl.chat_template_utils import add_response_schema

from trl_env.trl._processors import ChatTemplateProcessor

__all__ = [
    "CHAT_TEMPLATES_DIR",
    "available_chat_templates",
    "build_tiny_model",
    "build_tiny_tokenizer",
    "load_chat_template",
]

CHAT_TEMPLATES_DIR: Path = Path(trl.__file__).parent / "chat_templates"
"""Where the installed TRL keeps its chat templates (``<name>.jinja``)."""

DEFAULT_VOCAB_SIZE = 1024
"""Size of the trained BPE vocabulary, before the template's special tokens are added."""

# A few KB of plain English for the BPE merges: game instructions, feedback phrasing and chat
# boilerplate, so that the tiny tokenizer segments the texts our tests and demos use into
# word-sized pieces. Deterministic by construction (no file or network access).
_CORPUS = """\
You are a helpful assistant. You are playing a game of Wordle. Guess the secret five letter word.
After every guess you receive feedback for each letter. A green letter is in the word and in the
right place. A yellow letter is in the word but in the wrong place. A gray letter is not in the
word at all. You have six attempts. Think step by step, then answer with a single word.
Reply with your guess only. Your guess must be a valid English word of exactly five letters.
That is not a valid word, please try again. Invalid guess. Correct! You won the game.
You lost. The secret word was hidden. The episode is over. Game over. Well done.
Hello! How are you today? I am fine, thank you. What is the weather like? It is sunny and warm.
The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a step.
The user asks a question and the assistant answers it. The system message sets the rules.
Let me think about this. First, the word has no vowels in the second place. Second, the letter
E is yellow, so it appears somewhere else. Therefore the next guess should test new letters.
My guess is crane. My guess is slate. My answer is house. The answer is correct.
Feedback: G means green, Y means yellow and X means gray. Turn one of six. Turn two of six.
Please call a tool when you need to. The tool returned a result. The function name and its
arguments are given as JSON. Observation: the door is locked. Action: open the door.
You are in a small room. There is a key on the table. Take the key. You move north.
Numbers: 0 1 2 3 4 5 6 7 8 9 10 11 12 42 100 2024. Punctuation: , . ; : ! ? ' " ( ) [ ] { } < > /
Reward: 1.0 for a win, 0.0 otherwise. Score, step, reset, action, observation, reward, done.
"""

_WORDS = """\
crane slate house adieu audio raise arise stare tears later alert alter irate roast toast
blame flame frame plane plate grate crate trace react cater heart earth hater water wafer
pound round sound mound wound bound found hound mount count fount joint point moist hoist
quick brown jumps lazy words guess green yellow gray black white letter place wrong right
apple grape lemon melon peach mango berry olive onion bread pizza pasta salad sugar honey
system user assistant model tool developer human bot message content reasoning thinking answer
hello hello guess guess word word letter letter feedback feedback green yellow gray try again
"""

# Tokens that real tokenizers of these families register as (non-"special") added tokens, so
# that they are never split; they appear in the templates as plain tags.
_TAG_TOKENS = (
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<end_of_utterance>",
    "<start_of_image>",
    "<image>",
    "<sop>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "[INST]",
    "[/INST]",
    "[gMASK]",
)

# `<|im_start|>`, `<｜User｜>` (DeepSeek's full-width bars) and Gemma 4's `<|turn>` / `<turn|>`.
_PIPE_TOKEN = re.compile(r"<[|｜][^<>\s'\"|｜]{1,40}[|｜]>|<\|[A-Za-z_]{1,40}>|<[A-Za-z_]{1,40}\|>")

# The BOS / EOS / PAD strings the real tokenizers of each family use (the template may refer to
# `bos_token` / `eos_token`, and the model's stop tokens come from these). Matched by name prefix,
# first match wins; families not listed get no BOS and the template's own end-of-turn as EOS.
_FAMILY_TOKENS: tuple[tuple[str, dict[str, str]], ...] = (
    ("qwen", {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}),
    ("nemotron", {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}),
    ("lfm2", {"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>", "pad_token": "<|pad|>"}),
    (
        "llama3",
        {
            "bos_token": "<|begin_of_text|>",
            "eos_token": "<|eot_id|>",
            "pad_token": "<|finetune_right_pad_id|>",
        },
    ),
    ("gemma", {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>"}),
    ("diffusion_gemma", {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>"}),
    ("phi3", {"bos_token": "<s>", "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}),
    ("llava_next", {"bos_token": "<s>", "eos_token": "</s>", "pad_token": "<unk>"}),
    (
        "deepseek",
        {
            "bos_token": "<｜begin▁of▁sentence｜>",
            "eos_token": "<｜end▁of▁sentence｜>",
            "pad_token": "<｜end▁of▁sentence｜>",
        },
    ),
    (
        "cohere",
        {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>", "pad_token": "<PAD>"},
    ),
    (
        "gptoss",
        {"bos_token": "<|startoftext|>", "eos_token": "<|return|>", "pad_token": "<|endoftext|>"},
    ),
    ("glm4moe", {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}),
    (
        "idefics3",
        {
            "bos_token": "<|begin_of_text|>",
            "eos_token": "<end_of_utterance>",
            "pad_token": "<|pad|>",
        },
    ),
    (
        "smolvlm",
        {"bos_token": "<|im_start|>", "eos_token": "<end_of_utterance>", "pad_token": "<|pad|>"},
    ),
    (
        "muse_glimmer",
        {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot|>", "pad_token": "<|pad|>"},
    ),
)
_DEFAULT_FAMILY_TOKENS = {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}


def available_chat_templates() -> list[str]:
    """Names of every chat template the installed TRL ships, sorted.

    Example:
        >>> "qwen3" in available_chat_templates()
        True
    """
    return sorted(path.stem for path in CHAT_TEMPLATES_DIR.glob("*.jinja"))


def load_chat_template(name: str) -> str:
    """Return the text of TRL's ``trl/chat_templates/<name>.jinja``, byte for byte.

    Args:
        name: A template name such as ``"qwen3"`` or ``"llama3_training"``.

    Raises:
        ValueError: If TRL ships no template of that name (the message lists those it ships).
    """
    path = CHAT_TEMPLATES_DIR / f"{name}.jinja"
    if not path.is_file():
        raise ValueError(
            f"TRL {trl.__version__} ships no chat template named {name!r}; "
            f"choose one of: {', '.join(available_chat_templates())}"
        )
    return path.read_text(encoding="utf-8")


def _family_tokens(name: str) -> dict[str, str]:
    for prefix, tokens in _FAMILY_TOKENS:
        if name.startswith(prefix):
            return dict(tokens)
    return dict(_DEFAULT_FAMILY_TOKENS)


def _template_tokens(template: str) -> tuple[list[str], list[str]]:
    """The ``(special, tag)`` tokens a template uses, each in order of first appearance."""
    special = list(dict.fromkeys(_PIPE_TOKEN.findall(template)))
    tags = [tag for tag in _TAG_TOKENS if tag in template]
    return special, tags


@functools.lru_cache(maxsize=4)
def _trained_bpe_json(vocab_size: int) -> str:
    """Train the byte-level BPE once per vocabulary size; return it serialised (immutable)."""
    tokenizer = Tokenizer(models.BPE())
    # GPT-2 style byte-level pre-tokenisation: every string is encodable, no <unk> ever.
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    # The word list twice (and once capitalised) so its words become single tokens.
    tokenizer.train_from_iterator([_CORPUS, _WORDS, _WORDS, _WORDS.upper()], trainer=trainer)
    return tokenizer.to_str()


@functools.lru_cache(maxsize=128)
def _tokenizer_json(chat_template: str, vocab_size: int) -> tuple[str, dict[str, str]]:
    """The serialised tokenizer with the template's tokens added, and its named special tokens."""
    template = load_chat_template(chat_template)
    tokenizer = Tokenizer.from_str(_trained_bpe_json(vocab_size))
    named = _family_tokens(chat_template)
    special, tags = _template_tokens(template)
    # Named tokens first so that their ids are small and stable across templates of one family.
    ordered_special = list(dict.fromkeys([*named.values(), *special]))
    tokenizer.add_special_tokens(ordered_special)
    tokenizer.add_tokens([tag for tag in tags if tag not in ordered_special])
    return tokenizer.to_str(), named


def build_tiny_tokenizer(
    chat_template: str = "qwen3",
    *,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    response_template: bool = True,
) -> PreTrainedTokenizerFast:
    """Build a small tokenizer that renders with one of TRL's shipped chat templates.

    The BPE training and the per-template token set are cached, so repeated calls are cheap
    (milliseconds); every call still returns a new, independent tokenizer object.

    Args:
        chat_template: Name of a template in ``trl/chat_templates/`` (see
            :func:`available_chat_templates`).
        vocab_size: Size of the trained BPE vocabulary (special tokens come on top).
        response_template: If ``True``, let TRL's ``add_response_schema`` set a
            ``response_template`` on the tokenizer when it knows the template (so
            ``tokenizer.parse_response`` works); templates it does not know get none.

    Returns:
        A :class:`~transformers.PreTrainedTokenizerFast` with ``chat_template``, BOS/EOS/PAD set.

    Example:
        >>> tok = build_tiny_tokenizer("llama3")
        >>> tok.eos_token, tok.bos_token
        ('<|eot_id|>', '<|begin_of_text|>')
    """
    serialized, named = _tokenizer_json(chat_template, vocab_size)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer.from_str(serialized),
        # No BOS/EOS added by `encode`: the chat template writes them where the model expects.
        model_max_length=2048,
        padding_side="left",
        clean_up_tokenization_spaces=False,
        **named,
    )
    tokenizer.chat_template = load_chat_template(chat_template)
    if response_template:
        # ValueError: TRL knows no response format for this template; parsing falls back.
        with contextlib.suppress(ValueError):
            add_response_schema(tokenizer)
    return tokenizer


def build_tiny_model(
    output_dir: str | os.PathLike[str],
    *,
    chat_template: str = "qwen3",
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    seed: int = 0,
    **config_overrides: Any,
) -> str:
    """Build a randomly initialised 2-layer Qwen3 model and its tokenizer, and save both.

    The model is tiny (hidden size 64) and untrained: it samples gibberish, but it has the
    architecture, config, generation config and tokenizer files of a real checkpoint, so every
    code path that takes ``--model <path>`` can be exercised on CPU in seconds.

    Args:
        output_dir: Directory to write to (created if needed; existing files are overwritten).
        chat_template: Name of a template in ``trl/chat_templates/``.
        vocab_size: Size of the trained BPE vocabulary (special tokens come on top).
        seed: Seed of the weight initialisation; the global torch RNG is left untouched.
        **config_overrides: Extra :class:`~transformers.Qwen3Config` fields (for example
            ``num_hidden_layers=1``).

    Returns:
        ``output_dir`` as a string, ready for :func:`load_model_and_tokenizer`.

    Example:
        >>> path = build_tiny_model("/tmp/tiny-llama3", chat_template="llama3")  # doctest: +SKIP
    """
    tokenizer = build_tiny_tokenizer(chat_template, vocab_size=vocab_size)
    eos_ids = _turn_end_ids(tokenizer)
    config = _tiny_config(tokenizer, eos_ids[0], config_overrides)
    # fork_rng: seed the initialisation without changing the caller's global RNG state.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen3ForCausalLM(config)
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=eos_ids if len(eos_ids) > 1 else eos_ids[0],
        pad_token_id=tokenizer.pad_token_id,
        do_sample=True,
        temperature=1.0,
        top_p=1.0,
        top_k=0,
    )
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(output)
    tokenizer.save_pretrained(output)
    return str(output)


def _turn_end_ids(tokenizer: Any) -> list[int]:
    """Every token that ends a model turn (for Qwen: ``<|im_end|>``, plus ``<|endoftext|>`` like
    the real generation_config), end-of-turn first so it is the one ``generate`` pads after."""
    processor = ChatTemplateProcessor(tokenizer)
    others = sorted(processor.eos_token_ids - {processor.end_of_turn_id})
    if processor.end_of_turn_id in processor.eos_token_ids:
        return [processor.end_of_turn_id, *others]
    return others


def _tiny_config(tokenizer: Any, eos_id: int, overrides: dict[str, Any]) -> Any:
    """The tiny model's ``Qwen3Config`` (2 layers of width 64), with ``overrides``."""
    settings: dict[str, Any] = {
        "vocab_size": len(tokenizer),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": True,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": eos_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    return Qwen3Config(**{**settings, **overrides})
