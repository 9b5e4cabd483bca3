"""Token exactness of :class:`ChatTemplateProcessor` on every chat template TRL ships.

For each ``trl/chat_templates/*.jinja`` a tiny tokenizer is built with that template, a 3-turn
episode is assembled as the rollout does (prompt ids, then the model's sampled ids, then
``env_turn_ids``, ...) and compared with ``apply_chat_template`` of the same conversation.
Prefix-preserving templates must match exactly, text and ids. The others must differ by exactly
the documented difference (see ``docs/token_exactness.md``), once per model turn.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import trl_env
from trl_env.trl._processors import ChatTemplateProcessor, split_reasoning
from trl_env.trl.models import (
    available_chat_templates,
    build_tiny_model,
    build_tiny_tokenizer,
    load_chat_template,
    load_model_and_tokenizer,
)

ALL_TEMPLATES = available_chat_templates()

# Templates whose rendering of a finished conversation is not the token stream the model saw.
# Each maps to (text in the stream, text in the template's rendering): the stream differs from
# the rendering by exactly this replacement, once per model turn and nowhere else.
KNOWN_DIFFERENCES: dict[str, tuple[str, str]] = {
    # Qwen3 renders an empty <think></think> block in the latest model turn only; once a user
    # message follows, earlier turns are re-rendered without it.
    "qwen3": ("<think>\n\n</think>\n\n", ""),
    # Qwen3.5/3.6 open <think> in the generation prompt; earlier turns lose the whole block.
    "qwen3_5_think": ("<think>\n\n</think>\n\n", ""),
    "qwen3_5_nothink": ("<think>\n\n</think>\n\n", ""),
    "qwen3_6": ("<think>\n\n</think>\n\n", ""),
    # DeepSeek-R1 prefills "<think>\n" and re-renders earlier turns from the text after </think>.
    "deepseek_r1_distill": ("<think>\n</think>", ""),
    "deepseek_r1_distill_training": ("<think>\n</think>", ""),
    "deepseekv3": ("<think>\n</think>", ""),
    "deepseekv3_training": ("<think>\n</think>", ""),
    # Nemotron 3 prefills "<think>\n" but renders earlier turns as "<think></think>".
    **{
        f"nemotron_3_{size}{suffix}": ("<think>\n</think>", "<think></think>")
        for size in ("nano", "super", "ultra", "5_lightning")
        for suffix in ("", "_training")
    },
    # GPT-OSS ends a final answer with <|return|> but renders it as <|end|> in the history.
    "gptoss": ("<|return|>", "<|end|>"),
    "gptoss_training": ("<|return|>", "<|end|>"),
}

# Templates where the text-level protocol (init_system_input + append_user_input) cannot equal
# the rendering: no separate system turn (Gemma 1-3 fold it into the first user message), or the
# system block does not end with the model's end-of-turn token (Llava-Next's <<SYS>>).
TEXT_PROTOCOL_INEXACT = {
    "gemma",
    "gemma_training",
    "gemma3",
    "gemma3_training",
    "llava_next",
    "llava_next_training",
}

SYSTEM = "You are playing Wordle."
USER_MESSAGES = ["Guess the word.", "G Y X X G", "X X Y G G", "You won."]
MODEL_ANSWERS = ["crane", "slate", "house"]


def make_processor(name: str, **kwargs: object) -> ChatTemplateProcessor:
    return ChatTemplateProcessor(build_tiny_tokenizer(name), **kwargs)  # type: ignore[arg-type]


@dataclass
class Episode:
    processor: ChatTemplateProcessor
    ids: list[int]
    model_turns: list[list[int]]
    messages: list[dict[str, str]]

    @property
    def text(self) -> str:
        return self.processor.tokenizer.decode(self.ids)

    @property
    def rendered(self) -> str:
        return self.processor.render_messages(self.messages)


def sampled_ids(processor: ChatTemplateProcessor, messages: list[dict[str, str]], answer: str):
    """The ids a model following the template would sample for ``answer``, stop token included.

    That is whatever the template writes after the generation prompt for a final assistant
    message (e.g. Qwen3's empty think block), tokenised the canonical way, then the stop token.
    """
    tokenizer = processor.tokenizer
    prompt = processor.render_messages(messages)
    final = processor.render_messages(
        [*messages, {"role": "assistant", "content": answer}], add_generation_prompt=False
    )
    rest = ""
    if final.startswith(prompt) and answer in final[len(prompt) :]:
        body = final[len(prompt) :]
        end = body.index(answer) + len(answer)
        text, rest = body[:end], body[end:]
    elif processor.generation_opens_thinking:
        assert processor.thinking_markers is not None
        text = processor.thinking_markers[1] + answer  # close the prefilled block, answer
    else:
        text = answer
    stop_tokens = tokenizer.convert_ids_to_tokens(sorted(processor.eos_token_ids))
    stop = next((s for s in sorted(stop_tokens, key=len, reverse=True) if rest.startswith(s)), None)
    if stop is None:
        stop = processor.end_of_turn_token
    return [
        *tokenizer.encode(text, add_special_tokens=False),
        tokenizer.convert_tokens_to_ids(stop),
    ]


def play(processor: ChatTemplateProcessor, answers=MODEL_ANSWERS, users=USER_MESSAGES) -> Episode:
    """Assemble a token stream the way the rollout does, and the conversation it represents."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": users[0]}]
    ids = processor.initial_prompt_ids(SYSTEM, users[0])
    model_turns = []
    for turn, answer in enumerate(answers):
        sampled = sampled_ids(processor, messages, answer)
        model_turns.append(sampled)
        ids += sampled
        ids += processor.env_turn_ids(users[turn + 1], last_token_id=sampled[-1])
        messages += [
            {"role": "assistant", "content": answer},
            {"role": "user", "content": users[turn + 1]},
        ]
    return Episode(processor, ids, model_turns, messages)


# --------------------------------------------------------------------------- every template


def test_every_shipped_template_is_tested():
    assert len(ALL_TEMPLATES) > 40  # sanity: TRL ships ~70, the glob found them
    assert set(KNOWN_DIFFERENCES) <= set(ALL_TEMPLATES)
    assert set(ALL_TEMPLATES) >= TEXT_PROTOCOL_INEXACT


@pytest.mark.parametrize("name", ALL_TEMPLATES)
def test_token_stream_matches_chat_template(name: str):
    processor = make_processor(name)
    episode = play(processor)
    tokenizer = processor.tokenizer
    text, rendered = episode.text, episode.rendered
    # Whatever the template, the stream is the canonical tokenisation of its own text: no
    # boundary between a sampled turn and an environment chunk tokenises differently in context.
    assert episode.ids == tokenizer.encode(text, add_special_tokens=False)
    # The prompt is the template's rendering of the opening, and the stream ends with the
    # generation prompt.
    opening = episode.messages[:2]
    assert tokenizer.decode(processor.initial_prompt_ids(SYSTEM, USER_MESSAGES[0])) == (
        processor.render_messages(opening)
    )
    assert text.endswith(processor.turn_suffix)
    if name not in KNOWN_DIFFERENCES:
        assert text == rendered
        assert episode.ids == tokenizer.encode(rendered, add_special_tokens=False)
    else:
        in_stream, in_template = KNOWN_DIFFERENCES[name]
        assert text != rendered
        # Compare the turns, not the final generation prompt (which may contain the piece too).
        suffix = processor.turn_suffix
        assert rendered.endswith(suffix)
        turns, rendered_turns = text[: -len(suffix)], rendered[: -len(suffix)]
        assert turns.count(in_stream) == len(MODEL_ANSWERS)
        assert turns.replace(in_stream, in_template) == rendered_turns


@pytest.mark.parametrize("name", ALL_TEMPLATES)
def test_model_turns_end_on_a_stop_token_and_parse_back(name: str):
    processor = make_processor(name)
    episode = play(processor)
    for sampled, answer in zip(episode.model_turns, MODEL_ANSWERS, strict=True):
        assert sampled[-1] in processor.eos_token_ids
        completion = processor.tokenizer.decode(sampled)
        assert processor.parse_agent_output(completion) == ("", answer)


@pytest.mark.parametrize("name", ALL_TEMPLATES)
def test_text_protocol_matches_token_protocol(name: str):
    processor = make_processor(name)
    assert isinstance(processor, trl_env.protocol.Processor)
    for user in USER_MESSAGES[1:]:
        assert processor.tokenizer.decode(processor.env_turn_ids(user)) == (
            processor.append_user_input(user)
        )
    opening = processor.init_system_input(SYSTEM) + processor.append_user_input(USER_MESSAGES[0])
    if name in TEXT_PROTOCOL_INEXACT:
        assert opening != processor.initial_prompt_text(SYSTEM, USER_MESSAGES[0])
    else:
        assert opening == processor.initial_prompt_text(SYSTEM, USER_MESSAGES[0])


# --------------------------------------------------------------------------- chunk details

PREFIX_PRESERVING = ["qwen3_training", "llama3", "gemma3", "phi3", "glm4moe", "smolvlm", "cohere"]


@pytest.mark.parametrize("name", PREFIX_PRESERVING)
@settings(max_examples=25, deadline=None)
@given(
    message=st.text(
        alphabet=st.characters(blacklist_categories=("Cs",)),
        max_size=40,
    )
)
def test_any_env_message_tokenises_as_in_context(name: str, message: str):
    """Leading/trailing whitespace, newlines, punctuation, non-ASCII: ids are still canonical."""
    processor = make_processor(name)
    episode = play(processor, users=[USER_MESSAGES[0], message, "ok", "bye"])
    assert episode.ids == processor.tokenizer.encode(episode.rendered, add_special_tokens=False)


def test_content_transform_follows_the_template():
    # Llama 3 trims message text, Qwen2.5 does not; both are read off the template.
    llama, qwen = make_processor("llama3"), make_processor("qwen2_5")
    assert (llama.content_transform, qwen.content_transform) == ("strip", "identity")
    assert llama.append_user_input("  hi \n").startswith(
        "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
    )
    assert "\n  hi \n<|im_end|>" in qwen.append_user_input("  hi \n")


def test_truncated_turn_is_closed_with_the_end_of_turn_token():
    processor = make_processor("qwen3_training")
    tokenizer = processor.tokenizer
    ids = processor.initial_prompt_ids(SYSTEM, USER_MESSAGES[0])
    cut_off = tokenizer.encode("<think>\n\n</think>\n\ncra", add_special_tokens=False)
    ids += cut_off + processor.env_turn_ids("Answer in time.", last_token_id=cut_off[-1])
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": USER_MESSAGES[0]},
        {"role": "assistant", "content": "cra"},
        {"role": "user", "content": "Answer in time."},
    ]
    assert ids[len(ids) - len(processor.env_turn_ids("Answer in time.")) - 1] == (
        processor.end_of_turn_id
    )
    assert tokenizer.decode(ids) == processor.render_messages(messages)
    assert processor.env_turn_text("x", close_turn=True) == (
        processor.end_of_turn_token + processor.env_turn_text("x")
    )


def test_env_turn_cost_does_not_depend_on_history(monkeypatch: pytest.MonkeyPatch):
    processor = make_processor("qwen3")
    tokenizer = processor.tokenizer

    def no_rendering(*args: object, **kwargs: object):
        raise AssertionError("env_turn_ids must not render the chat template")

    encoded: list[str] = []
    original_encode = tokenizer.encode

    def recording_encode(text: str, *args: object, **kwargs: object):
        encoded.append(text)
        return original_encode(text, *args, **kwargs)

    monkeypatch.setattr(tokenizer, "apply_chat_template", no_rendering)
    monkeypatch.setattr(tokenizer, "encode", recording_encode)
    message = "G Y X X G"
    for _ in range(20):
        processor.env_turn_ids(message)
    # Only the message plus the few non-special characters around it ("user\n") are tokenised.
    assert {len(text) for text in encoded} == {len("user\n" + message)}


def test_stop_tokens_and_end_of_turn_are_derived_from_the_template():
    gemma = make_processor("gemma3")
    # Gemma's EOS is <eos>, but turns end with <end_of_turn>: both stop generation.
    assert gemma.end_of_turn_token == "<end_of_turn>"
    assert gemma.eos_token_ids == {
        gemma.tokenizer.convert_tokens_to_ids("<end_of_turn>"),
        gemma.tokenizer.eos_token_id,
    }
    # GLM-4 has no end-of-turn token: the model ends its turn by writing the next role token.
    assert make_processor("glm4moe").end_of_turn_token == "<|user|>"
    # GPT-OSS writes <|end|> inside a turn (after the analysis channel): it must not stop.
    gptoss = make_processor("gptoss")
    assert gptoss.end_of_turn_token == "<|end|>"
    assert gptoss.end_of_turn_id not in gptoss.eos_token_ids
    assert gptoss.tokenizer.convert_tokens_to_ids("<|return|>") in gptoss.eos_token_ids
    extra = gptoss.tokenizer.convert_tokens_to_ids("<|call|>")
    assert extra in make_processor("gptoss", stop_token_ids=[extra]).eos_token_ids


def test_enable_thinking_reaches_the_template():
    on = make_processor("qwen3", enable_thinking=True)
    off = make_processor("qwen3", enable_thinking=False)
    assert on.turn_suffix == "<|im_end|>\n<|im_start|>assistant\n"
    assert off.turn_suffix == "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert not on.generation_opens_thinking and not off.generation_opens_thinking
    assert make_processor("qwen3_5_think").generation_opens_thinking


@pytest.mark.parametrize(("name", "exact"), [("qwen3", False), ("qwen3_training", True)])
def test_reasoning_in_the_history(name: str, exact: bool):
    """TRL's training template keeps earlier reasoning; the original Qwen3 template drops it."""
    processor = make_processor(name)
    tokenizer = processor.tokenizer
    completion = "<think>\nE is yellow.\n</think>\n\ncrane"
    messages = [{"role": "user", "content": USER_MESSAGES[0]}]
    ids = processor.initial_prompt_ids(None, USER_MESSAGES[0])
    ids += [*tokenizer.encode(completion, add_special_tokens=False), processor.end_of_turn_id]
    ids += processor.env_turn_ids(USER_MESSAGES[1])
    messages += [
        {"role": "assistant", "content": completion},
        {"role": "user", "content": USER_MESSAGES[1]},
    ]
    text, rendered = tokenizer.decode(ids), processor.render_messages(messages)
    if exact:
        assert text == rendered
    else:
        assert text.replace("<think>\nE is yellow.\n</think>\n\n", "") == rendered


# A ChatML variant that upper-cases user messages: no simple transform explains it, so the
# chunk is rendered by the template each turn (still from a fixed-size probe, not the history).
UPPER_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{{ m.content | upper if m.role == 'user' else m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# A template that writes no special token after the model's message: the model still has to stop
# on EOS, which the template does not render.
PLAIN_TEMPLATE = (
    "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)


def test_template_that_rewrites_messages_is_rendered_each_turn():
    tokenizer = build_tiny_tokenizer("qwen3")
    tokenizer.chat_template = UPPER_TEMPLATE
    processor = ChatTemplateProcessor(tokenizer)
    assert processor.content_transform == "render"
    assert processor.append_user_input("g y x") == (
        "\n<|im_start|>user\nG Y X<|im_end|>\n<|im_start|>assistant\n"
    )
    episode = play(processor)
    assert episode.text == episode.rendered
    assert episode.ids == tokenizer.encode(episode.rendered, add_special_tokens=False)


def test_template_without_end_of_turn_token_stops_on_eos():
    tokenizer = build_tiny_tokenizer("qwen3")
    tokenizer.chat_template = PLAIN_TEMPLATE
    processor = ChatTemplateProcessor(tokenizer)
    assert processor.end_of_turn_token == tokenizer.eos_token
    assert processor.turn_prefix == "\nuser: "
    episode = play(processor)
    # The only difference: the EOS the model stopped on, which the template does not write.
    assert episode.text.count(tokenizer.eos_token) == len(MODEL_ANSWERS)
    assert episode.text.replace(tokenizer.eos_token, "") == episode.rendered
    # A cut-off turn needs no closing token here: there is none to write.
    assert processor.env_turn_ids("hi", last_token_id=-1) == processor.env_turn_ids("hi")


def test_system_prompt_without_system_role_is_folded_into_the_first_turn():
    processor = make_processor("gemma")
    assert not processor.supports_system
    text = processor.initial_prompt_text(SYSTEM, "hi")
    assert text == f"<bos><start_of_turn>user\n{SYSTEM}\n\nhi<end_of_turn>\n<start_of_turn>model\n"


def test_template_without_chat_template_is_rejected():
    tokenizer = build_tiny_tokenizer("qwen3")
    tokenizer.chat_template = None
    with pytest.raises(ValueError, match="no chat_template"):
        ChatTemplateProcessor(tokenizer)


# --------------------------------------------------------------------------- parsing

# (completion, expected (reasoning, action)) for a template whose generation prompt does not
# open a thinking block. Both parsers (response_template and fallback) must agree.
PARSE_CASES = [
    ("<think>\nE is yellow.\n</think>\n\ncrane<|im_end|>", ("E is yellow.", "crane")),
    ("crane<|im_end|>", ("", "crane")),
    ("crane", ("", "crane")),
    ("  crane \n", ("", "crane")),
    ("<think>\nStill thinking about", ("Still thinking about", "")),  # unterminated
    ("<think>\nStill thinking<|im_end|>", ("Still thinking", "")),
    ("", ("", "")),
    ("<|im_end|>", ("", "")),
    ("<think></think>crane", ("", "crane")),
    ("I reason</think>crane", ("I reason", "crane")),  # opener skipped
    ("Sure. <think>hmm</think> crane", ("hmm", "Sure.  crane")),  # text before the block kept
]


@pytest.mark.parametrize("response_template", [True, False], ids=["template", "fallback"])
@pytest.mark.parametrize(("completion", "expected"), PARSE_CASES)
def test_parse_agent_output(completion: str, expected: tuple[str, str], response_template: bool):
    tokenizer = build_tiny_tokenizer("qwen3", response_template=response_template)
    assert (getattr(tokenizer, "response_template", None) is not None) is response_template
    processor = ChatTemplateProcessor(tokenizer)
    assert processor.parse_agent_output(completion) == expected


def test_parse_keeps_tool_call_text_as_the_action():
    processor = make_processor("qwen3")
    call = '<tool_call>\n{"name": "guess", "arguments": {"word": "crane"}}\n</tool_call>'
    reasoning, action = processor.parse_agent_output(f"<think>use the tool</think>{call}<|im_end|>")
    assert (reasoning, action) == ("use the tool", call)


@pytest.mark.parametrize("name", ["qwen3_5_think", "deepseek_r1_distill", "nemotron_3_nano"])
def test_parse_when_the_prompt_opens_the_thinking_block(name: str):
    processor = make_processor(name)
    assert processor.generation_opens_thinking
    eot = processor.end_of_turn_token
    assert processor.parse_agent_output(f"E is yellow.\n</think>\n\ncrane{eot}") == (
        "E is yellow.",
        "crane",
    )
    assert processor.parse_agent_output(f"<think>E is yellow.</think>crane{eot}") == (
        "E is yellow.",
        "crane",
    )
    assert processor.parse_agent_output("E is yellow, so") == ("E is yellow, so", "")
    assert processor.parse_agent_output("") == ("", "")


def test_parse_gpt_oss_channels():
    processor = make_processor("gptoss")
    assert getattr(processor.tokenizer, "response_template", None) is not None
    completion = (
        "<|channel|>analysis<|message|>E is yellow.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>crane<|return|>"
    )
    assert processor.parse_agent_output(completion) == ("E is yellow.", "crane")
    # The response parser finds nothing in a completion without channels; the text is kept.
    assert processor.parse_agent_output("crane") == ("", "crane")


def test_parse_with_custom_or_no_thinking_markers():
    tokenizer = build_tiny_tokenizer("llama3")
    custom = ChatTemplateProcessor(tokenizer, thinking_markers=("<reasoning>", "</reasoning>"))
    assert custom.parse_agent_output("<reasoning>hm</reasoning>crane<|eot_id|>") == ("hm", "crane")
    plain = ChatTemplateProcessor(tokenizer, thinking_markers=None)
    assert plain.parse_agent_output("<think>hm</think>crane") == ("", "<think>hm</think>crane")


_QWEN3_TEMPLATE = ChatTemplateProcessor(build_tiny_tokenizer("qwen3"))
_QWEN3_FALLBACK = ChatTemplateProcessor(build_tiny_tokenizer("qwen3", response_template=False))
_PIECES = ["<think>", "</think>", "<|im_end|>", "crane", "E", " ", "\n", "<tool_call>"]


@settings(max_examples=200, deadline=None)
@given(completion=st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_parse_never_raises_and_never_loses_text(completion: str):
    visible = completion
    for marker in ("<think>", "</think>", "<|im_end|>"):
        visible = visible.replace(marker, "")
    letters = collections.Counter("".join(visible.split()))
    for processor in (_QWEN3_TEMPLATE, _QWEN3_FALLBACK):
        reasoning, action = processor.parse_agent_output(completion)
        # Every character outside the markers is in the reasoning or the action.
        kept = collections.Counter("".join((reasoning + action).split()))
        assert not letters - kept


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("<think>r</think>a", ("r", "a")),
        ("r</think>a", ("r", "a")),
        ("<think>r", ("r", "")),
        ("pre<think>r</think>post", ("r", "prepost")),
        ("a", ("", "a")),
        ("", ("", "")),
    ],
)
def test_split_reasoning(completion: str, expected: tuple[str, str]):
    assert split_reasoning(completion) == expected


def test_split_reasoning_inside_a_prefilled_block():
    assert split_reasoning("r</think>a", starts_in_reasoning=True) == ("r", "a")
    assert split_reasoning("<think>r</think>a", starts_in_reasoning=True) == ("r", "a")
    assert split_reasoning("r", starts_in_reasoning=True) == ("r", "")
    assert split_reasoning("<think>r</think>a", None) == ("", "<think>r</think>a")


# --------------------------------------------------------------------------- tiny models


def test_tiny_tokenizer_uses_trl_template_verbatim():
    tokenizer = build_tiny_tokenizer("qwen3")
    assert tokenizer.chat_template == load_chat_template("qwen3")
    assert (tokenizer.eos_token, tokenizer.pad_token) == ("<|im_end|>", "<|endoftext|>")
    for token in ("<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>"):
        assert len(tokenizer.encode(token, add_special_tokens=False)) == 1
    # Independent objects: mutating one does not leak into the next.
    tokenizer.chat_template = "changed"
    assert build_tiny_tokenizer("qwen3").chat_template == load_chat_template("qwen3")


def test_unknown_template_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="qwen3"):
        load_chat_template("no-such-template")


def test_tiny_model_round_trip_and_generate(tmp_path):
    path = build_tiny_model(tmp_path / "tiny", seed=0)
    model, tokenizer = load_model_and_tokenizer(path)
    assert type(model).__name__ == "Qwen3ForCausalLM"
    assert model.config.num_hidden_layers == 2 and model.config.hidden_size == 64
    assert tokenizer.chat_template == load_chat_template("qwen3")
    assert getattr(tokenizer, "response_template", None) is not None
    processor = ChatTemplateProcessor(tokenizer)
    stop = model.generation_config.eos_token_id
    stop_ids = {stop} if isinstance(stop, int) else set(stop)
    assert processor.eos_token_ids <= stop_ids

    prompt = processor.initial_prompt_ids(SYSTEM, USER_MESSAGES[0])
    input_ids = torch.tensor([prompt])
    with torch.no_grad():
        out = model.generate(
            input_ids,
            attention_mask=torch.ones_like(input_ids),
            max_new_tokens=8,
            do_sample=True,
            generation_config=model.generation_config,
        )
    assert out.shape[0] == 1 and prompt == out[0, : len(prompt)].tolist()
    assert 0 < out.shape[1] - len(prompt) <= 8

    # Same seed, same weights; the global RNG is not touched by building.
    state = torch.random.get_rng_state()
    again = build_tiny_model(tmp_path / "again", seed=0)
    assert torch.equal(torch.random.get_rng_state(), state)
    model_again, _ = load_model_and_tokenizer(again)
    for a, b in zip(model.state_dict().values(), model_again.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_tiny_model_with_another_template(tmp_path):
    path = build_tiny_model(tmp_path / "llama", chat_template="llama3", num_hidden_layers=1)
    model, tokenizer = load_model_and_tokenizer(path)
    assert model.config.num_hidden_layers == 1
    assert tokenizer.chat_template == load_chat_template("llama3")
    assert model.generation_config.eos_token_id == tokenizer.convert_tokens_to_ids("<|eot_id|>")


def test_load_rejects_a_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="build_tiny_model"):
        load_model_and_tokenizer(tmp_path / "does" / "not" / "exist")


def test_chat_template_processor_implements_the_token_processor_protocol() -> None:
    """The rollout is typed on trl_env.protocol.TokenProcessor; the concrete processor satisfies it, and a
    processor without the token-level methods does not."""
    import trl_env
    from trl_env.trl.models import build_tiny_tokenizer

    processor = ChatTemplateProcessor(build_tiny_tokenizer("qwen3"))
    assert isinstance(processor, trl_env.protocol.TokenProcessor)
    ids = processor.env_turn_ids("hi", last_token_id=processor.end_of_turn_id)
    assert processor.decode(ids) == processor.tokenizer.decode(ids, skip_special_tokens=False)

    class TextOnly:
        def init_system_input(self, prompt: str) -> str:
            return prompt

        def append_user_input(self, prompt: str) -> str:
            return prompt

        def parse_agent_output(self, completion: str) -> tuple[str, str]:
            return "", completion

    assert isinstance(TextOnly(), trl_env.protocol.Processor)
    assert not isinstance(TextOnly(), trl_env.protocol.TokenProcessor)
