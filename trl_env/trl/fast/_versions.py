"""The library versions each fast path was tested with, checked where it is installed.

Several fast paths override private code of TRL, transformers, peft and torch (methods, module
attributes, cache internals). A new release may change that code without notice, and an
override that no longer matches would give wrong numbers, not an error. So each fast path names
the libraries it reaches into (:data:`LAYER_LIBRARIES`), each library has the range of versions a
test run exercised (:data:`TESTED`: from the version installed when the tests last passed up to
the next minor release), and a fast path outside its range refuses with
:class:`~trl_env.error.FastPathVersionError`, which names the layer, the version and
``--fast-paths off``. ``pyproject.toml`` allows the same ranges for trl, transformers and peft
(``tests/trl/test_fast_paths.py`` keeps the two in step); torch's private oneDNN ops are only
reached by ``onednn_prepack``, which also checks their numbers at install.

Torch-free: it reads installed versions from package metadata.
"""

from __future__ import annotations

import functools
from importlib import metadata

from trl_env.error import FastPathVersionError

__all__ = ["LAYER_LIBRARIES", "TESTED", "check_versions", "version_in_range"]

TESTED: dict[str, tuple[str, str]] = {
    "trl": ("1.16.0", "1.17"),
    "transformers": ("5.24.0", "5.25"),
    "peft": ("0.21.2", "0.22"),
    "torch": ("2.13.0", "2.14"),
}
"""``library -> (lowest tested version, first untested release)``."""

LAYER_LIBRARIES: dict[str, tuple[str, ...]] = {
    # peft: LoraLayer internals (_disable_adapters, get_delta_weight, lora_variant).
    "frozen_bf16": ("torch", "peft"),
    # the same LoraLayer internals, through frozen_bf16's copies.
    "merged_lora": ("torch", "peft"),
    # torch.ops.mkldnn._reorder_linear_weight / _linear_pointwise.
    "onednn_prepack": ("torch",),
    # transformers.cache_utils.DynamicLayer internals (lazy_initialization, keys, values).
    "reserved_kv_cache": ("transformers",),
    # GenerationMixin._prepare_generation_config and the order of its logits warpers.
    "inverse_cdf_sampling": ("transformers",),
    # the forward's cache keyword and position ids, as generate() derives them.
    "shared_prefill": ("transformers",),
    # peft's lora.Linear.forward, replaced on the instance.
    "lora_addmm": ("peft", "torch"),
    # GRPOTrainer._compute_loss, _get_per_token_logps_and_entropies, _generate (its tool_mask),
    # _generate_and_score_completions, trl.trainer.utils._use_triton.
    "model_token_scoring": ("trl",),
    # the same TRL methods; the model's position_ids and attention without a mask.
    "unpadded_training": ("trl", "transformers"),
}
"""The libraries whose private code each fast path overrides or calls."""


def _release(version: str) -> tuple[int, ...]:
    """``(5, 24, 0)`` for ``"5.24.0"``, ``"5.24.0.dev0"`` or ``"2.13.0+cpu"`` (a pre-release of
    5.25 is 5.25 here: it holds that release's changes)."""
    parts = []
    for part in version.split("+")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit()) if part[:1].isdigit() else ""
        if not digits:
            break
        parts.append(int(digits))
        if not part.isdigit():  # "0rc1", "0dev": the rest is a pre-release tag
            break
    return tuple(parts)


def version_in_range(version: str, low: str, high: str) -> bool:
    """Whether ``low <= version < high``, compared by release numbers.

    Example:
        >>> version_in_range("5.24.0", "5.24.0", "5.25"), version_in_range("5.25.0.dev0", "5.24.0", "5.25")
        (True, False)
        >>> version_in_range("2.13.0+cpu", "2.13.0", "2.14")
        True
    """
    return _release(low) <= _release(version) < _release(high)


@functools.cache
def installed_version(library: str) -> str | None:
    """The installed version of ``library``, or None when it is not installed."""
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return None


def check_versions(layer: str) -> None:
    """Refuse ``layer`` when a library it reaches into is outside its tested range.

    A library that is not installed is not checked (peft: without it there is no LoRA layer to
    change).

    Raises:
        trl_env.error.FastPathVersionError: Naming the layer, the library, the installed version,
            the tested range and ``--fast-paths off``.
    """
    for library in LAYER_LIBRARIES[layer]:
        version = installed_version(library)
        low, high = TESTED[library]
        if version is not None and not version_in_range(version, low, high):
            raise FastPathVersionError(
                f"the fast path {layer!r} overrides private code of {library}, and {library} "
                f"{version} is outside the versions it was tested with (>={low},<{high}): it "
                f"could compute wrong numbers. Run with --fast-paths off "
                f"(fast_paths='off'; or 'auto,-{layer}' to drop only this one), or install "
                f"{library}>={low},<{high}"
            )
