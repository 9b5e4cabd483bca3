"""Fast path ``merged_lora``: LoRA adapters folded into float32 copies of their frozen weights
while generating (CPUs, without bf16 autocast).

**Replaces**: peft's ``lora.Linear.forward`` at every decode step of a float32 generation: the
base layer's matmul plus the adapter's two small ones (``lora_B(lora_A(dropout(x)))``), with
their Python and dispatch overhead, in every adapted layer (all linear layers with
``trl-env train --lora``). Inside a ``generate`` call each adapted layer runs as its base layer on
a float32 copy ``W + scaling * B @ A`` (the sum as peft's own ``merge`` takes it), made once per
change of the adapters: at most once per GRPO step.
**Gain**: SmolLM2-135M-Instruct with LoRA r16 on all linear layers, float32, on an AMD EPYC with
AVX2 only (no bf16 units), 2 threads, the rollout's generator (``benchmarks/generation_fast_paths.py``,
medians of 3 alternated rounds): 16 rows, 14 turns of 8 tokens (Hangman's recipe) 71.5 -> 60.2 s;
8 rows, 6 turns of 32 tokens (TicTacToe's) 48.9 -> 42.9 s; every round without it slower than
every round with it (a rerun of the TicTacToe shape was noisier and did not separate them) (``benchmarks/results/generation_fast_paths_amd_epyc/``, ``docs/real_models.md``).
The cost: a float32 copy of every adapted weight while the rollout generates (about 425 MB for
SmolLM2-135M; the rollout and the held-out eval drop them after each batch, through
``TransformersGenerator.clear_cache``).
**Depends on**: peft's LoRA layer internals (``_disable_adapters``, ``get_delta_weight``,
``lora_variant``), shared with ``frozen_bf16`` (:class:`~trl_env.trl.fast._frozen_bf16.FrozenBF16Weights`
does the copying, rebuilding and restoring); the tested torch and peft versions
(:mod:`trl_env.trl.fast._versions`).

Under CPU bfloat16 autocast ``frozen_bf16`` already folds the adapters into its bfloat16 copies,
so this layer acts only where that one does not: a float32 generation on a CPU (a CPU without
bf16 units, where ``trl-env train`` runs in float32, or ``--no-bf16``). Layers whose forward
merging would change (DoRA, a LoRA bias, active dropout, nested wrappers, already merged or
disabled adapters) run unmerged, as under ``frozen_bf16``. It is not bitwise the unmerged
computation: ``x @ (W + s B A)^T`` rounds differently from ``x @ W^T + s (x @ A^T) @ B^T``, by
float32 rounding (``tests/trl/test_merged_lora.py`` bounds it); ``trl-env eval`` of a saved LoRA
run loads the adapter merged the same way.
"""

from __future__ import annotations

import torch

from trl_env.trl.fast._frozen_bf16 import FrozenBF16Weights

__all__ = ["MergedLoRAWeights"]


class MergedLoRAWeights(FrozenBF16Weights):
    """Float32 copies of a model's LoRA-adapted frozen linear weights with the adapters folded
    in, swapped in on request (see the module docstring); no other layer is copied.

    Example:
        >>> from peft import LoraConfig, get_peft_model
        >>> class Tiny(torch.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.proj = torch.nn.Linear(4, 4)
        ...     def forward(self, x):
        ...         return self.proj(x)
        >>> model = get_peft_model(Tiny(), LoraConfig(r=2, target_modules=["proj"])).eval()
        >>> torch.nn.init.ones_(model.base_model.model.proj.lora_B["default"].weight)  # doctest: +ELLIPSIS
        Parameter containing:...
        >>> x = torch.randn(3, 4)
        >>> expected = model(x)
        >>> with MergedLoRAWeights().swapped_in(model):
        ...     merged = model(x)
        >>> torch.allclose(merged, expected, atol=1e-5), model.base_model.model.proj.merged
        (True, False)
    """

    dtype: torch.dtype = torch.float32
    """float32: the dtype of a generation without autocast."""
    only_adapted: bool = True
    """A copy of a layer without adapters, in its own dtype, would change nothing."""

    def __init__(self) -> None:
        """Copies with the adapters folded in, never packed (the oneDNN packing is bfloat16's)."""
        super().__init__(merge_lora=True, prepack=False)
