"""Names of models on the Hugging Face Hub: the one pattern trl-env checks them against."""

from __future__ import annotations

import re

__all__ = ["HUB_ID_PATTERN", "is_hub_id"]

HUB_ID_PATTERN = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")
"""``org/name`` or ``name``: the shapes of a Hugging Face Hub repository id."""


def is_hub_id(name: str) -> bool:
    """Whether ``name`` is shaped like a Hub repository id (it may still not exist); a name
    ending in ``.gguf`` is a model file, not a Hub id.

    Example:
        >>> is_hub_id("Qwen/Qwen3-0.6B"), is_hub_id("not a/model/id"), is_hub_id("m.gguf")
        (True, False, False)
    """
    return bool(HUB_ID_PATTERN.match(name)) and not name.lower().endswith(".gguf")
