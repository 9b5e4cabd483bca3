"""Moved to :mod:`trl_env.trl.models.generation` (this path keeps working)."""

from __future__ import annotations

from trl_env.trl.models.generation import (
    Generator,
    GeneratorFactory,
    TransformersGenerator,
    VLLMEngineGenerator,
    VLLMGenerator,
    generator_from_trainer,
)

__all__ = [
    "Generator",
    "GeneratorFactory",
    "TransformersGenerator",
    "VLLMEngineGenerator",
    "VLLMGenerator",
    "generator_from_trainer",
]
