"""Utilities for checking and inspecting text environments."""

from __future__ import annotations

from trl_env.utils.checker import NASTY_ACTIONS, TextEnvCheckError, check_text_env
from trl_env.utils.hostile import HostileReport, check_hostile_replies, hostile_replies

__all__ = [
    "NASTY_ACTIONS",
    "HostileReport",
    "TextEnvCheckError",
    "check_hostile_replies",
    "check_text_env",
    "hostile_replies",
]
