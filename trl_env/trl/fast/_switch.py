"""The switch: which fast paths are on (:class:`FastPaths`), from one setting.

The setting is ``"auto"`` (the default), ``"on"`` or ``"off"``, optionally followed by layer
names to add (``name``) or remove (``-name``), comma-separated: ``"auto,-inverse_cdf_sampling"``
is the default without inverse-CDF sampling; ``"off,reserved_kv_cache"`` is the stock path plus
the reserved cache; a list of names alone turns on exactly those. ``auto`` means every layer on
a CPU with bf16 units (AMX, AVX-512 bf16), every layer but :data:`NOT_ON_FLOAT32_CPUS` on a CPU
without them, and none elsewhere (a GPU or MPS run is then TRL's, transformers' and peft's own,
plus trl-env's rollout): the layers were measured on CPUs, and two of them draw other random
numbers than the stock path or need float64. On another device than a CPU no setting turns on
:data:`CPU_ONLY_LAYERS`.

Torch-free on purpose: :class:`~trl_env.trl.training.TrainConfig` checks the setting without
importing torch.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass
from typing import Any

from trl_env.error import UsageError

__all__ = [
    "BF16_LAYERS",
    "CPU_ONLY_LAYERS",
    "FLOAT32_LAYERS",
    "GENERATION_LAYERS",
    "LAYERS",
    "MODES",
    "NOT_ON_FLOAT32_CPUS",
    "TRAINING_LAYERS",
    "FastPaths",
    "check_fast_paths",
    "fast_paths_field",
]

GENERATION_LAYERS = (
    "frozen_bf16",
    "onednn_prepack",
    "merged_lora",
    "reserved_kv_cache",
    "inverse_cdf_sampling",
    "shared_prefill",
)
"""The layers the rollout's generator installs (each ``generate`` call, and only inside it)."""
TRAINING_LAYERS = (
    "lora_addmm",
    "model_token_scoring",
    "unpadded_training",
)
"""The layers trl-env's trainer installs (for the duration of ``train()``)."""
LAYERS = GENERATION_LAYERS + TRAINING_LAYERS
"""Every fast path, by name (see :mod:`trl_env.trl.fast`)."""
BF16_LAYERS = ("frozen_bf16", "onednn_prepack", "lora_addmm")
"""The layers that change anything only under bfloat16 autocast on a CPU (a float32 run, as on a
CPU without bf16 units, leaves them idle): the bf16 weight copies and their oneDNN packing, and
the fused LoRA additions that work on bf16 inputs."""
FLOAT32_LAYERS = ("merged_lora",)
"""The layers that change anything only without autocast (a float32 generation on a CPU): under
bf16 autocast ``frozen_bf16`` does their work, so a bf16 run leaves them idle."""
CPU_ONLY_LAYERS = ("frozen_bf16", "onednn_prepack", "merged_lora", "lora_addmm")
"""The layers that act only on a CPU (weight copies for CPU kernels, oneDNN packing, the fused
LoRA addmm of CPU bf16 autocast): a setting never turns them on for another device, so that
``on`` on a GPU checks and reports only the layers that run there (a torch release outside
their tested range is no reason to stop a GPU run)."""
MODES = ("auto", "on", "off")
NOT_ON_FLOAT32_CPUS = ("reserved_kv_cache", "inverse_cdf_sampling")
"""The layers ``auto`` leaves off on a CPU without bf16 units (a float32 run): there, turned off
one at a time in a SmolLM2 LoRA GRPO step (``benchmarks/grpo_step_profile.py --ablate`` on an AMD
EPYC with AVX2, ``benchmarks/results/grpo_step_ablation_amd_epyc.txt``), the reserved cache saved
0.6 s of a 108 s step, inside the 0.9 s run-to-run noise, and inverse-CDF sampling none (the
step was 3.0 s shorter without it, on other sampled episodes). Their gains were measured on a CPU
with AMX, where ``auto`` keeps them."""


@dataclass(frozen=True)
class FastPaths:
    """Which fast paths are on: one flag per layer of :data:`LAYERS`.

    A layer that is on still checks its preconditions where it is installed (model, attention
    kind, device, dtype, library versions) and may refuse: see :mod:`trl_env.trl.fast`.

    Example:
        >>> FastPaths.resolve("auto", "cpu", bf16_units=True) == FastPaths.all()
        True
        >>> FastPaths.resolve("auto", "cpu", bf16_units=False).inverse_cdf_sampling
        False
        >>> FastPaths.resolve("auto", "cuda").enabled
        ()
        >>> FastPaths.resolve("on,-inverse_cdf_sampling", "cuda").inverse_cdf_sampling
        False
        >>> FastPaths.resolve("on", "cuda").frozen_bf16  # a CPU-only layer
        False
        >>> str(FastPaths.resolve("off,reserved_kv_cache", "cpu"))
        'reserved_kv_cache'
    """

    frozen_bf16: bool = True
    onednn_prepack: bool = True
    merged_lora: bool = True
    reserved_kv_cache: bool = True
    inverse_cdf_sampling: bool = True
    shared_prefill: bool = True
    lora_addmm: bool = True
    model_token_scoring: bool = True
    unpadded_training: bool = True

    @classmethod
    def all(cls) -> FastPaths:
        """Every layer on."""
        return cls()

    @classmethod
    def none(cls) -> FastPaths:
        """Every layer off: the stock path."""
        return cls(**dict.fromkeys(LAYERS, False))

    @classmethod
    def resolve(
        cls, setting: str | FastPaths | None, device_type: str, *, bf16_units: bool | None = None
    ) -> FastPaths:
        """The layers a setting turns on for a model on ``device_type`` (``"cpu"``, ``"cuda"``,
        ``"mps"``, ...). A :class:`FastPaths` is taken as it is (less :data:`CPU_ONLY_LAYERS`
        on another device); ``None`` is ``"auto"``.

        Args:
            setting: See the module docstring.
            device_type: Where the model runs.
            bf16_units: Whether this CPU has bf16 units (``auto`` on a CPU without them leaves
                :data:`NOT_ON_FLOAT32_CPUS` off); ``None``: read from this machine's CPU.

        Raises:
            trl_env.error.UsageError: A setting that :func:`check_fast_paths` refuses.
        """
        if isinstance(setting, FastPaths):
            paths = setting
        else:
            paths = cls._from_setting(setting, device_type, bf16_units)
        return paths if device_type == "cpu" else paths.without(*CPU_ONLY_LAYERS)

    @classmethod
    def _from_setting(
        cls, setting: str | None, device_type: str, bf16_units: bool | None
    ) -> FastPaths:
        """The flags a setting string gives on ``device_type`` (see :meth:`resolve`)."""
        mode, changes = _parse(setting if setting is not None else "auto")
        if mode == "on" or (mode == "auto" and device_type == "cpu"):
            flags = dict.fromkeys(LAYERS, True)
        else:
            flags = dict.fromkeys(LAYERS, False)
        if mode == "auto" and device_type == "cpu":
            if bf16_units is None:
                from trl_env._machine import cpu_has_bf16_units

                bf16_units = cpu_has_bf16_units()
            if not bf16_units:
                flags.update(dict.fromkeys(NOT_ON_FLOAT32_CPUS, False))
        for name, on in changes:
            flags[name] = on
        return cls(**flags)

    @property
    def enabled(self) -> tuple[str, ...]:
        """The names of the layers that are on, in :data:`LAYERS` order."""
        return tuple(name for name in LAYERS if getattr(self, name))

    def without(self, *names: str) -> FastPaths:
        """A copy with ``names`` off (how a benchmark ablates one layer at a time).

        Raises:
            trl_env.error.UsageError: An unknown layer name.
        """
        for name in names:
            _check_layer(name)
        return dataclasses.replace(self, **dict.fromkeys(names, False))

    def __str__(self) -> str:
        if self == FastPaths.all():
            return "on"
        return ",".join(self.enabled) or "off"


def check_fast_paths(setting: str) -> None:
    """Refuse a fast-paths setting that is not ``auto``/``on``/``off`` and layer names.

    Raises:
        trl_env.error.UsageError: The setting, with what it may hold.

    Example:
        >>> check_fast_paths("auto,-lora_addmm")
        >>> check_fast_paths("fast")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        trl_env.error.UsageError: unknown fast path 'fast' in --fast-paths 'fast'...
    """
    _parse(setting)


def _parse(setting: str) -> tuple[str, list[tuple[str, bool]]]:
    """``(mode, [(layer, on), ...])`` of a setting (see the module docstring)."""
    if not isinstance(setting, str) or not setting.strip():
        raise UsageError(f"fast_paths must be 'auto', 'on', 'off' or layer names, got {setting!r}")
    items = [item.strip() for item in setting.split(",") if item.strip()]
    mode = "off"  # names alone: exactly those
    if items[0] in MODES:
        mode, items = items[0], items[1:]
    changes = []
    for item in items:
        name = item.removeprefix("-")
        _check_layer(name, setting)
        changes.append((name, not item.startswith("-")))
    return mode, changes


def _check_layer(name: str, setting: str | None = None) -> None:
    if name in LAYERS:
        return
    close = difflib.get_close_matches(name, LAYERS + MODES, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    where = f" in --fast-paths {setting!r}" if setting is not None else ""
    raise UsageError(
        f"unknown fast path {name!r}{where}.{hint} Give auto, on or off, then layer names to add "
        f"(name) or remove (-name), comma-separated; the layers: {', '.join(LAYERS)}"
    )


def fast_paths_field() -> Any:
    """The ``fast_paths`` setting of :class:`~trl_env.trl.training.TrainConfig` (``--fast-paths``)."""
    return dataclasses.field(
        default="auto",
        metadata={
            "help": "trl-env's fast paths, which replace parts of TRL, transformers and peft (see "
            "docs/real_models.md): auto (on a CPU, less the reserved KV cache and inverse-CDF "
            "sampling on one without bf16 units, where they measured inside the noise; off on a "
            "GPU or MPS, where the run is then TRL's own plus the rollout), on (on a GPU or MPS: "
            "the layers that run there), off (the stock path), or layer names to add (name) or remove (-name), comma-separated, e.g. "
            "auto,-inverse_cdf_sampling.",
            "metavar": "auto|on|off",
        },
    )
