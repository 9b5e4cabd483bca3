"""What the halves of :class:`trl_env.trl.ChatTemplateProcessor` share: the attributes and helper
methods the processor defines, declared once for the type checker."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

__all__: list[str] = []


class _ProcessorState:
    """Base of the processor's mixins (template probing, reply parsing)."""

    tokenizer: Any
    thinking_markers: tuple[str, str] | None

    if TYPE_CHECKING:  # set or defined by ChatTemplateProcessor, which this mixin is part of
        _added_pattern: re.Pattern[str] | None
        _assistant_body: str
        _content_prefix: str
        _structural_text: list[str]
        _structural_tokens: frozenset[str]
        end_of_turn_token: str
        eos_token_ids: frozenset[int]
        turn_prefix: str
        turn_suffix: str

        def _message(self, role: str, content: str, **extra: Any) -> dict[str, Any]: ...
        def _render_raw(
            self, messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool
        ) -> str: ...
        def _opening(self, system: str | None, first_user_message: str) -> list[dict[str, Any]]: ...
        def _chunk_text(self, message: str) -> str: ...
        def _chunk_ids(self, message: str) -> list[int]: ...
