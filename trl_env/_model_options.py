"""How a model policy generates: :class:`ModelOptions` (``trl-env eval --policy MODEL``).

Its own module, below both :mod:`trl_env._eval` (which takes it from the command line) and
:mod:`trl_env.trl._model_policy` (which plays with it), so that neither imports the other upward.
"""

from __future__ import annotations

import warnings
from dataclasses import InitVar, dataclass

from trl_env._configs import MAX_NEW_TOKENS_PER_TURN

__all__ = ["ModelOptions"]


@dataclass
class ModelOptions:
    """How a model policy generates (``trl-env eval --policy <model>``)."""

    max_new_tokens_per_turn: int = MAX_NEW_TOKENS_PER_TURN
    """Tokens one model turn may sample (the rollout's own name for it)."""
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
    fast_paths: str = "auto"
    """The generation fast paths (``trl_env.trl.fast``): ``auto`` (on a CPU only), ``on``,
    ``off`` or layer names; a ``trl-env train`` run's held-out evals use the run's setting."""
    max_new_tokens: InitVar[int | None] = None
    """Deprecated spelling of ``max_new_tokens_per_turn`` (removed in 0.3.0)."""

    def __post_init__(self, max_new_tokens: int | None) -> None:
        if max_new_tokens is not None:
            _warn_old_name()
            self.max_new_tokens_per_turn = max_new_tokens


def _warn_old_name() -> None:
    warnings.warn(
        "ModelOptions.max_new_tokens is deprecated and will be removed in trl-env 0.3.0; "
        "use max_new_tokens_per_turn (the rollout's name for the same setting)",
        DeprecationWarning,
        stacklevel=3,
    )


def _old_max_new_tokens(self: ModelOptions) -> int:
    _warn_old_name()
    return self.max_new_tokens_per_turn


# Reading the old name answers too (the InitVar above keeps the old keyword working). Set after
# the class is made, so that the dataclass still sees a field with a None default; mypy knows the
# InitVar only as an __init__ argument, not a class attribute, hence the ignore.
ModelOptions.max_new_tokens = property(_old_max_new_tokens)  # type: ignore[attr-defined]
