"""The fast paths: every speed-up that replaces TRL's, transformers' or peft's own code, in one
place, switched by one setting.

A CPU GRPO step of SmolLM2-135M with LoRA went from 63.8 s (TRL's trainer, float32) to 24.0 s
(``trl-env train``'s CPU default: bf16 autocast and these layers; ``docs/real_models.md``). Each
layer is one module here whose docstring says what it replaces, what it gained, and what it
depends on:

=======================  =========================================================  ==========
layer                    replaces                                                   where
=======================  =========================================================  ==========
``frozen_bf16``          autocast's per-call cast of frozen weights; LoRA adapters  generation
                         as separate matmuls (merged into the bf16 copy)
``onednn_prepack``       ``F.linear``'s per-call oneDNN weight packing              generation
``merged_lora``          LoRA adapters as separate matmuls in a float32 generation  generation
``reserved_kv_cache``    ``DynamicLayer``'s ``torch.cat`` growth per decode step    generation
``inverse_cdf_sampling`` ``torch.multinomial`` (another random stream)              generation
``shared_prefill``       one prefill per row of a group's shared prompt             generation
``lora_addmm``           peft's ``lora.Linear.forward`` (adapter term in one addmm) training
``model_token_scoring``  TRL's labels and LM-head positions (env tokens skipped)    training
``unpadded_training``    the padded, masked training forward                        training
=======================  =========================================================  ==========

**One switch.** ``trl-env train --fast-paths auto|on|off`` (:class:`~trl_env.trl.training.TrainConfig`
``fast_paths``), ``FastPathsTrainer(fast_paths=...)`` (trl-env's trainer) and
``TransformersGenerator(fast_paths=...)`` (the rollout's and ``trl-env eval``'s generator) take
the same setting: ``auto`` (every layer on a CPU with bf16 units, all but
:data:`NOT_ON_FLOAT32_CPUS` on one without, none on a GPU or MPS, where a run is then TRL's
own plus trl-env's rollout), ``on``, ``off``, and layer names to add or remove
(``"auto,-inverse_cdf_sampling"``; on a GPU or MPS no setting turns on the CPU-only layers,
:data:`CPU_ONLY_LAYERS`; :class:`FastPaths` holds one flag per layer, so a benchmark can
turn off one layer at a time).

**Safe by construction.** Each layer checks its preconditions where it is installed (model,
attention kind, device, dtype) and refuses with one :class:`~trl_env.error.FastPathWarning`,
leaving the stock path; each checks the versions of the libraries whose private code it reaches
(:data:`TESTED`) and raises :class:`~trl_env.error.FastPathVersionError` outside them. The
generation layers exist only inside a ``generate`` call; the training layers that change the
model only inside ``train()`` (the held-out eval runs the model without them).

Importing this package needs no torch (the settings are checked by ``TrainConfig``); its other
names load on first use.

Example:
    >>> from trl_env.trl.fast import FastPaths
    >>> FastPaths.resolve("auto", "cuda") == FastPaths.none()
    True
    >>> FastPaths.resolve("auto", "cpu", bf16_units=True).without("inverse_cdf_sampling").enabled[:3]
    ('frozen_bf16', 'onednn_prepack', 'merged_lora')
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from trl_env.trl._lazy import lazy_exports as _lazy_exports

_import_structure: dict[str, list[str]] = {
    "_switch": [
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
    ],
    "_versions": ["LAYER_LIBRARIES", "TESTED", "check_versions"],
    "_generation": ["GenerationFastPaths"],
    "_trainer": ["FastPathsTrainer"],
}

__all__ = [
    "BF16_LAYERS",
    "CPU_ONLY_LAYERS",
    "FLOAT32_LAYERS",
    "GENERATION_LAYERS",
    "LAYERS",
    "LAYER_LIBRARIES",
    "MODES",
    "NOT_ON_FLOAT32_CPUS",
    "TESTED",
    "TRAINING_LAYERS",
    "FastPaths",
    "FastPathsTrainer",
    "GenerationFastPaths",
    "check_fast_paths",
    "check_versions",
]

if _TYPE_CHECKING:  # what the names are, for type checkers and readers
    from trl_env.trl.fast._generation import GenerationFastPaths
    from trl_env.trl.fast._switch import (
        BF16_LAYERS,
        CPU_ONLY_LAYERS,
        FLOAT32_LAYERS,
        GENERATION_LAYERS,
        LAYERS,
        MODES,
        NOT_ON_FLOAT32_CPUS,
        TRAINING_LAYERS,
        FastPaths,
        check_fast_paths,
    )
    from trl_env.trl.fast._trainer import FastPathsTrainer
    from trl_env.trl.fast._versions import LAYER_LIBRARIES, TESTED, check_versions

__getattr__, __dir__ = _lazy_exports(
    __name__, _import_structure, torch_free={"_switch", "_versions"}
)
