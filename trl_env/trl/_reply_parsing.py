"""Reading the agent's action out of a model completion: :func:`split_reasoning` and the
parsing half of :class:`trl_env.trl.ChatTemplateProcessor`."""

from __future__ import annotations

import collections

from trl_env.trl._processor_state import _ProcessorState

__all__ = ["split_reasoning"]


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


class _ReplyParsing(_ProcessorState):
    """The parsing half of :class:`~trl_env.trl.ChatTemplateProcessor` (a mixin: it reads the
    processor's attributes)."""

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
