"""Chat-template processors: environment text in, token ids out; model text in, actions out.

:class:`ChatTemplateProcessor` implements the :class:`trl_env.Processor` protocol for any tokenizer
that has a chat template, using only that template: there are no hand-written per-model strings.
At construction it renders a few probe conversations with sentinel messages and reads off

* the **end-of-turn token** the template writes after an assistant message (``<|im_end|>`` for
  Qwen, ``<|eot_id|>`` for Llama 3, ``<end_of_turn>`` for Gemma, ``<|user|>`` for GLM-4, ...),
* the **environment chunk**: the exact text between that token and the next generation prompt,
  split into a fixed prefix (``"\\n<|im_start|>user\\n"``), the user message, and a fixed suffix
  (``"<|im_end|>\\n<|im_start|>assistant\\n"``), and
* how the template transforms a message (some ``trim`` it).

A multi-turn episode is then a token stream that is never re-tokenised::

    ids = processor.initial_prompt_ids(system, first_observation)
    ids += sampled_ids_1                     # ends with a stop token, e.g. <|im_end|>
    ids += processor.env_turn_ids(obs_2, last_token_id=sampled_ids_1[-1])
    ids += sampled_ids_2 ...

The chunk starts right after a special token, and its fixed parts are cut at special tokens, so
tokenising it on its own gives the same ids as tokenising it in context (checked at construction;
a tokenizer that fails the check gets the chunk tokenised whole, still without the history).
For prefix-preserving templates the stream decodes to exactly
``tokenizer.apply_chat_template(conversation, add_generation_prompt=True)`` and its ids equal the
ids of that text; for the others (templates that drop earlier ``<think>`` blocks, for example) the
stream is what the model actually saw, which is what training must use. See
``docs/token_exactness.md`` for the per-template results.

Example:
    >>> from trl_env.trl.tiny import build_tiny_tokenizer
    >>> processor = ChatTemplateProcessor(build_tiny_tokenizer("qwen3"))
    >>> processor.end_of_turn_token
    '<|im_end|>'
    >>> processor.append_user_input("Guess a word.")
    '\\n<|im_start|>user\\nGuess a word.<|im_end|>\\n<|im_start|>assistant\\n'
    >>> processor.parse_agent_output("<think>\\nFive letters.\\n</think>\\n\\ncrane<|im_end|>")
    ('Five letters.', 'crane')
"""

from __future__ import annotations

import collections
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from jinja2 import TemplateError
from transformers import PreTrainedTokenizerBase

__all__ = ["ChatTemplateProcessor", "split_reasoning"]

# Sentinels: plain ASCII words that no template rewrites and no BPE merges across.
_SYSTEM = "XSYSTEMPROBEX"
_USER_1 = "XUSERONEPROBEX"
_ASSISTANT_1 = "XASSISTANTONEPROBEX"
_USER_2 = "XUSERTWOPROBEX"
_ASSISTANT_2 = "XASSISTANTTWOPROBEX"
_USER_3 = "XUSERTHREEPROBEX"
_REASONING = "XREASONINGPROBEX"

# Messages that reveal how a template transforms user content (trim, strip, ...).
_CONTENT_PROBES = (
    "XPLAINX",
    "  XPADDEDX \n",
    "\nXLEADINGX",
    "XTRAILINGX\n\n",
    'X multi\nline "quoted" {braced} X',
)

# Ways templates transform message content; the first that explains every probe is used.
_TRANSFORMS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("identity", lambda s: s),
    ("strip", str.strip),
    ("lstrip", str.lstrip),
    ("rstrip", str.rstrip),
)


def split_reasoning(
    completion: str,
    markers: tuple[str, str] | None = ("<think>", "</think>"),
    *,
    starts_in_reasoning: bool = False,
) -> tuple[str, str]:
    """Split a completion into ``(reasoning, action)`` with plain thinking markers.

    This is the fallback of :meth:`ChatTemplateProcessor.parse_agent_output` for tokenizers with
    no ``response_template``. No text is dropped: everything outside the thinking block is the
    action, everything inside it the reasoning; both are stripped of surrounding whitespace.

    * ``"<think>r</think>a"`` gives ``("r", "a")``; text before the opener joins the action.
    * A closer with no opener (the opener was in the generation prompt, or the model skipped it)
      ends the reasoning: ``"r</think>a"`` gives ``("r", "a")``.
    * An unterminated block is all reasoning and the action is empty, so the caller can tell the
      agent in-band that it never answered: ``"<think>r"`` gives ``("r", "")``.
    * With ``starts_in_reasoning=True`` (the generation prompt opened the block), the completion
      starts inside it.

    Args:
        completion: The model's text, stop tokens already removed.
        markers: ``(open, close)`` thinking markers, or ``None`` to treat all text as the action.
        starts_in_reasoning: Whether the generation prompt already opened a thinking block.

    Returns:
        ``(reasoning, action)``.

    Example:
        >>> split_reasoning("<think>E is yellow.</think> slate")
        ('E is yellow.', 'slate')
        >>> split_reasoning("<think>Still thinking")
        ('Still thinking', '')
    """
    if markers is None:
        return "", completion.strip()
    open_marker, close_marker = markers
    text = completion
    if starts_in_reasoning:
        # A model may repeat the opener the prompt already wrote; it is not part of the reasoning.
        stripped = text.lstrip()
        if stripped.startswith(open_marker):
            text = stripped[len(open_marker) :]
        end = text.find(close_marker)
        if end == -1:
            return text.strip(), ""
        return text[:end].strip(), text[end + len(close_marker) :].strip()
    start = text.find(open_marker)
    end = text.find(close_marker)
    if start == -1 or (end != -1 and end < start):
        if end == -1:
            return "", text.strip()
        # Closer without (or before) an opener: everything up to it is reasoning.
        return text[:end].strip(), text[end + len(close_marker) :].strip()
    before, inside = text[:start], text[start + len(open_marker) :]
    end = inside.find(close_marker)
    if end == -1:
        return (before + inside).strip(), ""
    return inside[:end].strip(), (before + inside[end + len(close_marker) :]).strip()


class ChatTemplateProcessor:
    """A :class:`trl_env.Processor` driven by a tokenizer's own chat template.

    Args:
        tokenizer: A tokenizer with a ``chat_template`` (any model's; nothing is hard-coded).
        system_prompt: The system prompt episodes start with by default (the rollout passes it to
            :meth:`initial_prompt_ids`); ``None`` for none.
        thinking_markers: ``(open, close)`` markers of a reasoning block, used by the fallback
            parser when the tokenizer has no ``response_template``; ``None`` disables it.
        enable_thinking: Passed to the chat template as ``enable_thinking`` (Qwen3 and others
            read it); ``None`` leaves the template's default.
        chat_template_kwargs: Other variables for the chat template (e.g. ``reasoning_effort``).
        stop_token_ids: Extra token ids that end a model turn, on top of those derived from the
            template (e.g. a tool-call stop token such as GPT-OSS's ``<|call|>``).

    Attributes:
        tokenizer: The tokenizer.
        system_prompt: The default system prompt.
        end_of_turn_token: The text the template writes right after an assistant message's
            content (a special token such as ``"<|im_end|>"``; the tokenizer's EOS when the
            template writes no special token there).
        end_of_turn_id: Its token id.
        eos_token_ids: Ids that end a model turn (stop generation on any of them).
        turn_prefix: Fixed text of an environment turn between the end-of-turn token and the
            message (``"\\n<|im_start|>user\\n"`` for Qwen).
        turn_suffix: Fixed text after the message, ending with the generation prompt.
        supports_system: Whether the template renders a system message (if not, the system
            prompt is prepended to the first user message, separated by a blank line).
        content_transform: Name of what the template does to message text (``"identity"``,
            ``"strip"``, ...; ``"render"`` if the chunk is rendered by the template every turn).

    Example:
        >>> from trl_env.trl.tiny import build_tiny_tokenizer
        >>> p = ChatTemplateProcessor(build_tiny_tokenizer("llama3"))
        >>> p.end_of_turn_token, p.turn_prefix
        ('<|eot_id|>', '<|start_header_id|>user<|end_header_id|>\\n\\n')
    """

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        *,
        system_prompt: str | None = None,
        thinking_markers: tuple[str, str] | None = ("<think>", "</think>"),
        enable_thinking: bool | None = None,
        chat_template_kwargs: Mapping[str, Any] | None = None,
        stop_token_ids: Iterable[int] = (),
    ) -> None:
        if getattr(tokenizer, "chat_template", None) is None:
            raise ValueError(
                "The tokenizer has no chat_template. Load the tokenizer of an instruct/chat model, "
                "or set tokenizer.chat_template (trl_env.trl.tiny.load_chat_template gives TRL's)."
            )
        self.tokenizer = tokenizer
        self.system_prompt = system_prompt
        self.thinking_markers = thinking_markers
        self.chat_template_kwargs: dict[str, Any] = dict(chat_template_kwargs or {})
        if enable_thinking is not None:
            self.chat_template_kwargs["enable_thinking"] = enable_thinking

        # Added tokens (special or not) split the text before BPE runs, so cutting at them is the
        # one place where tokenising pieces separately is guaranteed to match the whole.
        added = sorted(tokenizer.get_added_vocab(), key=len, reverse=True)
        self._added_pattern = re.compile("|".join(map(re.escape, added))) if added else None

        self._structured_content = self._needs_structured_content()
        self.supports_system = self._renders_system()
        self._derive_turn_format()
        self._assistant_body = self._render_assistant_body()
        self._derive_stop_tokens(stop_token_ids)
        self._derive_content_transform()
        self._derive_token_pieces()
        self._derive_structural_text()
        self._derive_content_prefix()

    # ------------------------------------------------------------------ rendering

    def _message(self, role: str, content: str, **extra: Any) -> dict[str, Any]:
        if self._structured_content:
            # Vision-language templates (Idefics3, SmolVLM, Llava-Next) only read typed blocks.
            return {"role": role, "content": [{"type": "text", "text": content}], **extra}
        return {"role": role, "content": content, **extra}

    def _render_raw(
        self, messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool
    ) -> str:
        text = self.tokenizer.apply_chat_template(
            list(messages),
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
            **self.chat_template_kwargs,
        )
        assert isinstance(text, str)
        return text

    def _opening(self, system: str | None, first_user_message: str) -> list[dict[str, Any]]:
        if system is None:
            return [self._message("user", first_user_message)]
        if self.supports_system:
            return [self._message("system", system), self._message("user", first_user_message)]
        # No system role (Gemma 1/2): the common convention is to prepend it to the first turn.
        return [self._message("user", f"{system}\n\n{first_user_message}")]

    def render_messages(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        add_generation_prompt: bool = True,
    ) -> str:
        """Render ``[{"role": ..., "content": str}, ...]`` with the chat template.

        Plain string contents are wrapped in text blocks for templates that need them, a system
        message is folded into the first user message for templates without a system role, and
        the processor's template variables (``enable_thinking``, ...) are applied. This is the
        reference text a token stream built with this processor is compared against.

        Args:
            messages: The conversation, contents as strings.
            add_generation_prompt: Whether to end with the generation prompt.

        Returns:
            The rendered text.
        """
        converted: list[dict[str, Any]] = []
        pending_system: str | None = None
        for message in messages:
            role, content = message["role"], message["content"]
            extra = {k: v for k, v in message.items() if k not in ("role", "content")}
            if role == "system" and not self.supports_system:
                pending_system = content
                continue
            if pending_system is not None and role == "user":
                content, pending_system = f"{pending_system}\n\n{content}", None
            converted.append(self._message(role, content, **extra))
        return self._render_raw(converted, add_generation_prompt)

    # ------------------------------------------------------------------ derivation

    def _needs_structured_content(self) -> bool:
        plain = self._render_raw([{"role": "user", "content": _USER_1}], True)
        if _USER_1 in plain:
            return False
        typed = [{"role": "user", "content": [{"type": "text", "text": _USER_1}]}]
        if _USER_1 in self._render_raw(typed, True):
            return True
        raise ValueError("The chat template renders neither plain nor typed-block user content.")

    def _renders_system(self) -> bool:
        messages = [self._message("system", _SYSTEM), self._message("user", _USER_1)]
        try:
            return _SYSTEM in self._render_raw(messages, True)
        except (TemplateError, TypeError):  # Gemma: raise_exception('System role not supported')
            return False

    def _probe(self, last_user: str, *, second_exchange: bool = False) -> str:
        messages = self._opening(_SYSTEM, _USER_1)
        messages.append(self._message("assistant", _ASSISTANT_1))
        if second_exchange:
            messages.append(self._message("user", _USER_2))
            messages.append(self._message("assistant", _ASSISTANT_2))
        messages.append(self._message("user", last_user))
        return self._render_raw(messages, True)

    def _derive_turn_format(self) -> None:
        rendered = self._probe(_USER_2)
        start = rendered.find(_ASSISTANT_1)
        user = rendered.find(_USER_2, start)
        if start == -1 or user == -1:
            raise ValueError(
                "The chat template does not render a plain user/assistant/user conversation, so "
                "no environment turn format can be derived from it."
            )
        between = rendered[start + len(_ASSISTANT_1) : user]
        self.turn_suffix: str = rendered[user + len(_USER_2) :]
        # Everything before the probe's last user message, through the end of the assistant turn:
        # the reference context the per-turn chunk is checked against.
        self._probe_context = rendered[: start + len(_ASSISTANT_1)]

        match = self._added_pattern.match(between) if self._added_pattern else None
        if match is not None:
            self.end_of_turn_token: str = match.group(0)
            self.turn_prefix: str = between[match.end() :]
            self._end_of_turn_rendered = True
        else:
            # The template writes no special token after the content: the model's turn ends on
            # its EOS, which the template does not render (documented as a known difference).
            if self.tokenizer.eos_token is None:
                raise ValueError(
                    "The chat template writes no special token after an assistant message and the "
                    "tokenizer has no eos_token, so nothing can end a model turn."
                )
            self.end_of_turn_token = str(self.tokenizer.eos_token)
            self.turn_prefix = between
            self._end_of_turn_rendered = False
        self.end_of_turn_id: int = self.tokenizer.convert_tokens_to_ids(self.end_of_turn_token)
        self._probe_context += self.end_of_turn_token if self._end_of_turn_rendered else ""

        # The turn format must not depend on the position in the conversation.
        again = self._probe(_USER_3, second_exchange=True)
        expected_tail = _ASSISTANT_2 + between + _USER_3 + self.turn_suffix
        self._position_independent = again.endswith(expected_tail)

    def _derive_stop_tokens(self, extra: Iterable[int]) -> None:
        stop = {int(i) for i in extra}
        eos_id = self.tokenizer.eos_token_id
        if eos_id is not None:
            stop.add(int(eos_id))
        # The end-of-turn token is a stop token unless the template also writes it *inside* an
        # assistant turn: GPT-OSS closes its analysis channel with <|end|> and keeps going.
        body = self._assistant_body
        inside = ""
        if _REASONING in body and _ASSISTANT_1 in body:
            inside = body[body.find(_REASONING) : body.find(_ASSISTANT_1)]
        if self.end_of_turn_token not in inside:
            stop.add(self.end_of_turn_id)
        self.eos_token_ids: frozenset[int] = frozenset(stop)

    def _chunk_by_rendering(self, message: str) -> str:
        rendered = self._probe(message)
        if not rendered.startswith(self._probe_context):
            raise ValueError(
                "The chat template re-renders earlier turns when a user turn is added."
            )
        return rendered[len(self._probe_context) :]

    def _derive_content_transform(self) -> None:
        self._transform: Callable[[str], str] | None = None
        self.content_transform = "render"
        if not self._position_independent:
            return
        chunks = {probe: self._chunk_by_rendering(probe) for probe in _CONTENT_PROBES}
        for name, transform in _TRANSFORMS:
            if all(
                chunk == self.turn_prefix + transform(probe) + self.turn_suffix
                for probe, chunk in chunks.items()
            ):
                self._transform, self.content_transform = transform, name
                return

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def _split_at_added(self, text: str, *, last: bool) -> tuple[str, str]:
        """Cut ``text`` right after its last added token (``last``) or before its first one."""
        matches = list(self._added_pattern.finditer(text)) if self._added_pattern else []
        if not matches:
            return ("", text) if last else (text, "")
        cut = matches[-1].end() if last else matches[0].start()
        return text[:cut], text[cut:]

    def _derive_token_pieces(self) -> None:
        # turn_prefix = head + tail, cut after its last added token; turn_suffix = head + tail,
        # cut before its first. The outer parts never merge with anything (they end/start at an
        # added token), so their ids are computed once; the inner parts are encoded together with
        # the message, so that BPE sees exactly the text it would see in context.
        prefix_head, self._prefix_tail = self._split_at_added(self.turn_prefix, last=True)
        self._suffix_head, suffix_tail = self._split_at_added(self.turn_suffix, last=False)
        self._prefix_head_ids = self._encode(prefix_head)
        self._suffix_tail_ids = self._encode(suffix_tail)
        # Closing a cut-off turn writes the end-of-turn token, if the template writes one.
        self._end_of_turn_ids = [self.end_of_turn_id] if self._end_of_turn_rendered else []
        # Check context-freedom once: chunk ids + context ids == ids of the whole rendering.
        self._split_tokenization = True
        context_ids = self._encode(self._probe_context)
        for probe in _CONTENT_PROBES:
            whole = self._encode(self._probe_context + self._chunk_text(probe))
            if context_ids + self._chunk_ids(probe) != whole:
                self._split_tokenization = False
                break

    def _render_assistant_body(self, *, with_reasoning: bool = True) -> str:
        """What the template writes after the generation prompt for a final assistant message
        with reasoning ``_REASONING`` and content ``_ASSISTANT_1`` ("" if it cannot render it)."""
        opening = self._opening(None, _USER_1)
        # Templates read reasoning from different fields; set the common ones.
        reasoning = (
            {"reasoning_content": _REASONING, "thinking": _REASONING} if with_reasoning else {}
        )
        final = [*opening, self._message("assistant", _ASSISTANT_1, **reasoning)]
        try:
            prompt = self._render_raw(opening, True)
            full = self._render_raw(final, False)
        except (TemplateError, TypeError):
            return ""
        shared = 0
        while shared < min(len(prompt), len(full)) and prompt[shared] == full[shared]:
            shared += 1
        return full[shared:]

    def _derive_content_prefix(self) -> None:
        # What the template writes between the generation prompt and a plain answer, e.g.
        # "<|channel|>final<|message|>" (GPT-OSS) or "to=user<|message|>" (Muse Glimmer).
        body = self._render_assistant_body(with_reasoning=False)
        prefix = body[: body.find(_ASSISTANT_1)].strip() if _ASSISTANT_1 in body else ""
        if self.thinking_markers is not None:
            open_marker, close_marker = self.thinking_markers
            if prefix.replace(open_marker, "").replace(close_marker, "").strip() == "":
                prefix = ""  # An empty thinking block: split_reasoning already handles it.
        self._content_prefix = prefix

    def _derive_structural_text(self) -> None:
        # The words a template writes around an assistant message's reasoning and content (e.g.
        # GPT-OSS's channel names "analysis" and "final"): a response parser may drop these, and
        # only these, without losing any of the model's text.
        body = self._assistant_body.replace(_REASONING, " ").replace(_ASSISTANT_1, " ")
        # ...and the added tokens it writes there (GPT-OSS's <|channel|>, <|message|>, ...).
        self._structural_tokens: frozenset[str] = frozenset(
            self._added_pattern.findall(body) if self._added_pattern is not None else ()
        )
        if self._added_pattern is not None:
            body = self._added_pattern.sub(" ", body)
        self._structural_text = sorted(set(body.split()), key=len, reverse=True)

    # ------------------------------------------------------------------ environment turns

    def _chunk_text(self, message: str) -> str:
        if self._transform is None:
            return self._chunk_by_rendering(message)
        return self.turn_prefix + self._transform(message) + self.turn_suffix

    def _chunk_ids(self, message: str) -> list[int]:
        if self._transform is None or not self._split_tokenization:
            return self._encode(self._chunk_text(message))
        middle = self._prefix_tail + self._transform(message) + self._suffix_head
        return self._prefix_head_ids + self._encode(middle) + self._suffix_tail_ids

    def env_turn_text(self, user_message: str, *, close_turn: bool = False) -> str:
        """The text of an environment turn, following the model's end-of-turn token exactly.

        Args:
            user_message: The environment's message (the delta).
            close_turn: Also write the end-of-turn token first (for a model turn that did not
                end on a stop token, e.g. one cut off at the token budget).

        Returns:
            The chunk's text, ending with the generation prompt.

        Example:
            >>> from trl_env.trl.tiny import build_tiny_tokenizer
            >>> ChatTemplateProcessor(build_tiny_tokenizer("gemma3")).env_turn_text("hi")
            '\\n<start_of_turn>user\\nhi<end_of_turn>\\n<start_of_turn>model\\n'
        """
        text = self._chunk_text(user_message)
        if close_turn and self._end_of_turn_rendered:
            return self.end_of_turn_token + text
        return text

    def env_turn_ids(self, user_message: str, *, last_token_id: int | None = None) -> list[int]:
        """Token ids of an environment turn, to append right after the model's sampled ids.

        The cost depends on the message only, never on the history.

        Args:
            user_message: The environment's message (the delta).
            last_token_id: The last token id the model sampled. ``None`` or any id in
                :attr:`eos_token_ids` means the model closed its turn, so the chunk starts right
                after it. Anything else (a turn cut off by the token budget) gets the template's
                end-of-turn token first, closing the turn the way the template does.

        Returns:
            The ids, ending with the generation prompt.

        Example:
            >>> from trl_env.trl.tiny import build_tiny_tokenizer
            >>> p = ChatTemplateProcessor(build_tiny_tokenizer("qwen3"))
            >>> ids = p.env_turn_ids("G Y X X G", last_token_id=p.end_of_turn_id)
            >>> p.tokenizer.decode(ids)
            '\\n<|im_start|>user\\nG Y X X G<|im_end|>\\n<|im_start|>assistant\\n'
        """
        ids = self._chunk_ids(user_message)
        if last_token_id is None or last_token_id in self.eos_token_ids:
            return ids
        return [*self._end_of_turn_ids, *ids]

    def initial_prompt_text(self, system: str | None, first_user_message: str) -> str:
        """The text of an episode's prompt: optional system message, first message, generation prompt."""
        return self._render_raw(self._opening(system, first_user_message), True)

    def initial_prompt_ids(self, system: str | None, first_user_message: str) -> list[int]:
        """Token ids of an episode's prompt (see :meth:`initial_prompt_text`).

        Args:
            system: The system prompt, or ``None`` for none (pass :attr:`system_prompt` for the
                processor's default).
            first_user_message: The environment's first message (from ``reset``).

        Returns:
            The ids, ending with the generation prompt. BOS comes from the template, if it
            writes one; the tokenizer adds nothing.
        """
        return self._encode(self.initial_prompt_text(system, first_user_message))

    def decode(self, token_ids: Sequence[int]) -> str:
        """The text of sampled ids, special tokens kept (the input of :meth:`parse_agent_output`)."""
        return self.tokenizer.decode(list(token_ids), skip_special_tokens=False)

    # ------------------------------------------------------------------ Processor protocol

    def init_system_input(self, prompt: str) -> str:
        """Render the opening of a conversation whose system message is ``prompt``.

        The opening ends right after the system turn's end-of-turn token, so that
        ``init_system_input(s) + append_user_input(u)`` is the template's rendering of
        ``[system s, user u]`` with the generation prompt whenever the template renders the
        system turn like any other (true of every ChatML, Llama 3 and Gemma 4 template). The
        token-level :meth:`initial_prompt_ids` is exact for every template.

        Args:
            prompt: The system prompt.

        Returns:
            The opening text.
        """
        full = self.initial_prompt_text(prompt, _USER_1)
        tail = self.append_user_input(_USER_1)
        if full.endswith(tail):
            return full[: len(full) - len(tail)]
        # The system turn does not end like a model turn (or there is no system role): cut before
        # the longest part of the environment-turn prefix that the rendering shares.
        position = full.find(_USER_1)
        head = tail[: tail.find(_USER_1)]
        for size in range(len(head), -1, -1):
            if full[:position].endswith(head[len(head) - size :]):
                return full[: position - size]
        return full[:position]  # pragma: no cover - size 0 always matches

    def append_user_input(self, prompt: str) -> str:
        """Render a user turn plus the generation prompt, following the end-of-turn token exactly."""
        return self.env_turn_text(prompt)

    def parse_agent_output(self, completion: str) -> tuple[str, str]:
        """Split a model completion into ``(reasoning, action)``. Never raises.

        With a ``response_template`` on the tokenizer (TRL's ``add_response_schema`` sets one for
        the families it knows), ``tokenizer.parse_response`` does the parsing. Otherwise, or if it
        fails, drops text, or finds tool calls (whose text is then kept as the action),
        :func:`split_reasoning` splits on :attr:`thinking_markers`. Trailing stop tokens are
        removed first. An unterminated thinking block gives an empty action.

        Args:
            completion: The decoded completion (with or without special tokens).

        Returns:
            ``(reasoning, action)``, both stripped of surrounding whitespace.
        """
        text = self._strip_stop_tokens(completion)
        if not text.strip():
            return "", ""
        opens = self.generation_opens_thinking
        if opens and self.thinking_markers is not None and self.thinking_markers[1] not in text:
            # The prompt opened a thinking block the model never closed: all of it is reasoning
            # (some response templates would call it content instead).
            return split_reasoning(text, self.thinking_markers, starts_in_reasoning=True)
        parsed = self._parse_with_template(completion)
        if parsed is not None:
            return parsed
        reasoning, action = split_reasoning(text, self.thinking_markers, starts_in_reasoning=opens)
        # The template's own opening of a message (GPT-OSS's "<|channel|>final<|message|>") is
        # structure, not the agent's action.
        if self._content_prefix and action.startswith(self._content_prefix):
            action = action[len(self._content_prefix) :].strip()
        return reasoning, action

    # ------------------------------------------------------------------ parsing helpers

    def _stop_texts(self) -> list[str]:
        texts = {self.end_of_turn_token}
        texts.update(self.tokenizer.convert_ids_to_tokens(sorted(self.eos_token_ids)))
        return sorted((t for t in texts if t), key=len, reverse=True)

    def _strip_stop_tokens(self, text: str) -> str:
        stops = self._stop_texts()
        changed = True
        while changed:
            changed = False
            stripped = text.rstrip()
            for stop in stops:
                if stripped.endswith(stop):
                    text, changed = stripped[: -len(stop)], True
                    break
        return text

    @property
    def generation_opens_thinking(self) -> bool:
        """Whether the generation prompt leaves a thinking block open (DeepSeek-R1, Qwen3.5).

        The model's completion then starts inside its reasoning.
        """
        if self.thinking_markers is None:
            return False
        open_marker, close_marker = self.thinking_markers
        return self.turn_suffix.rfind(open_marker) > self.turn_suffix.rfind(close_marker)

    def _parse_with_template(self, completion: str) -> tuple[str, str] | None:
        if getattr(self.tokenizer, "response_template", None) is None:
            return None
        try:
            parsed = self.tokenizer.parse_response(completion, prefix=self.turn_suffix)
        except Exception:  # any parser failure means: use the fallback
            return None
        if not isinstance(parsed, dict) or parsed.get("tool_calls"):
            return None
        reasoning = parsed.get("reasoning_content") or parsed.get("thinking") or ""
        action = parsed.get("content") or ""
        if not isinstance(reasoning, str) or not isinstance(action, str):
            return None
        reasoning = self._strip_stop_tokens(reasoning).strip()
        action = self._strip_stop_tokens(action).strip()
        if self.thinking_markers is not None and any(
            marker in part for marker in self.thinking_markers for part in (reasoning, action)
        ):
            return None  # A marker the parser did not understand; split on the markers instead.
        # Never lose text silently: apart from the template's own structural words, the parse
        # must account for every visible character of the completion.
        rest = self._visible(completion)
        for part in (reasoning, action):
            seen = self._visible(part)
            if seen and seen not in rest:
                return None
            rest = rest.replace(seen, "", 1) if seen else rest
        for word in self._structural_text:
            rest = rest.replace(word, "")
        if rest or self._drops_added_tokens(completion, reasoning + action):
            return None
        return reasoning, action

    def _drops_added_tokens(self, completion: str, kept: str) -> bool:
        """Whether the parse lost an added token other than a thinking marker or a stop token.

        :meth:`_visible` ignores added tokens (the template writes some around every turn), so a
        token the model wrote as text (``<tool_call>`` inside its reasoning, say) is checked here.
        """
        if self._added_pattern is None:
            return False
        # Tokens the template itself writes in or around an assistant turn are structure.
        ignorable = set(self._stop_texts()) | set(self.thinking_markers or ())
        ignorable |= self._structural_tokens
        ignorable.update(self._added_pattern.findall(self.turn_prefix + self.turn_suffix))
        wrote = collections.Counter(self._added_pattern.findall(completion))
        still = collections.Counter(self._added_pattern.findall(kept))
        return any(still[token] < n for token, n in wrote.items() if token not in ignorable)

    def _visible(self, text: str) -> str:
        """``text`` without special/added tokens and whitespace: what a parse must keep."""
        if self._added_pattern is not None:
            text = self._added_pattern.sub("", text)
        return "".join(text.split())
