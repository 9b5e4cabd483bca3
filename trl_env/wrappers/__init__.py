"""Gymnasium wrappers for text environments; they compose with gymnasium's own wrappers."""

from __future__ import annotations

__all__: list[str] = []
