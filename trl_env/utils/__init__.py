"""Utilities for checking and inspecting text environments."""

from __future__ import annotations

__all__: list[str] = []
