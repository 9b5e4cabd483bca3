"""Utilities for checking and inspecting text environments."""

from __future__ import annotations

from trl_env.utils.checker import NASTY_ACTIONS, TextEnvCheckError, check_text_env

__all__ = ["NASTY_ACTIONS", "TextEnvCheckError", "check_text_env"]
