"""Moved to :mod:`trl_env.trl.models` (this path keeps working).

Example:
    >>> from trl_env.trl.tiny import build_tiny_model, load_model_and_tokenizer
"""

from __future__ import annotations

from trl_env.trl.models import (
    CHAT_TEMPLATES_DIR,
    available_chat_templates,
    build_tiny_model,
    build_tiny_tokenizer,
    load_chat_template,
    load_model_and_tokenizer,
)

__all__ = [
    "CHAT_TEMPLATES_DIR",
    "available_chat_templates",
    "build_tiny_model",
    "build_tiny_tokenizer",
    "load_chat_template",
    "load_model_and_tokenizer",
]
