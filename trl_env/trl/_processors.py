"""Chat-template processors: environment text in, token ids out; model text in, actions out.

:class:`ChatTemplateProcessor` implements the :class:`trl_env.protocol.Processor` protocol for any tokenizer
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
    >>> from trl_env.trl.models import build_tiny_tokenizer
    >>> processor = ChatTemplateProcessor(build_tiny_tokenizer("qwen3"))
    >>> processor.end_of_turn_token
    '<|im_end|>'
    >>> processor.append_user_input("Guess a word.")
    '\\n<|im_start|>user\\nGuess a word.<|im_end|>\\n<|im_start|>assistant\\n'
    >>> processor.parse_agent_output("<think>\\nFive letters.\\n</think>\\n\\ncrane<|im_end|>")
    ('Five letters.', 'crane')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from transformers import PreTrainedTokenizerBase

from trl_env.trl._reply_parsing import _ReplyParsing, split_reasoning
from trl_env.trl._template_probe import _USER_1, _TemplateProbe

__all__ = ["ChatTemplateProcessor", "split_reasoning"]


class ChatTemplateProcessor(_TemplateProbe, _ReplyParsing):
    """A :class:`trl_env.protocol.Processor` driven by a tokenizer's own chat template.

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
        >>> from trl_env.trl.models import build_tiny_tokenizer
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
                "or set tokenizer.chat_template (trl_env.trl.models.load_chat_template gives TRL's)."
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
            >>> from trl_env.trl.models import build_tiny_tokenizer
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
            >>> from trl_env.trl.models import build_tiny_tokenizer
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
