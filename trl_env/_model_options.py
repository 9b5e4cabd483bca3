"""How a model policy generates: :class:`ModelOptions` (``trl-env eval --policy MODEL``).

Its own module, below both :mod:`trl_env.eval` (which takes it from the command line) and
:mod:`trl_env.trl.model_policy` (which plays with it), so that neither imports the other upward.
"""

from __future__ import annotations

from dataclasses import dataclass

from trl_env._configs import MAX_NEW_TOKENS_PER_TURN

__all__ = ["ModelOptions"]


@dataclass
class ModelOptions:
    """How a model policy generates (``trl-env eval --policy <model>``)."""

    max_new_tokens: int = MAX_NEW_TOKENS_PER_TURN
    """Tokens one model turn may sample."""
    max_completion_length: int = 4096
    """Tokens of a whole episode after the prompt (model and environment turns)."""
    temperature: float | None = None
    """Sampling temperature; 0 is greedy; ``None`` keeps the model's generation config."""
    batch_size: int = 16
    """Episodes played together (one batched generation call per turn)."""
    system_prompt: str | None = None
    """System message of every episode; ``None`` for the rollout's default."""
    use_vllm: bool = False
    """Generate with vLLM (needs a CUDA GPU and ``pip install vllm``)."""
