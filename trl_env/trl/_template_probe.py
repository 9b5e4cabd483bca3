"""How :class:`trl_env.trl.ChatTemplateProcessor` reads a chat template: it renders probe
conversations with sentinel messages and derives the end-of-turn token, the environment chunk
around a user message, what the template does to message text, and the token pieces that make
tokenising a chunk on its own match tokenising it in context."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from jinja2 import TemplateError

from trl_env.trl._processor_state import _ProcessorState

__all__: list[str] = []

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


class _TemplateProbe(_ProcessorState):
    """The derivation half of :class:`~trl_env.trl.ChatTemplateProcessor` (a mixin: it reads
    and sets the processor's attributes)."""

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
        self._structural_tokens = frozenset(
            self._added_pattern.findall(body) if self._added_pattern is not None else ()
        )
        if self._added_pattern is not None:
            body = self._added_pattern.sub(" ", body)
        self._structural_text = sorted(set(body.split()), key=len, reverse=True)
