"""How a step's batch is cut: whole GRPO groups, generated at once, trained in equal passes.

A step's ``per_device_train_batch_size`` episodes are ``num_generations``-episode groups, played
in one rollout call. With ``micro_batch_size`` below the batch, TRL trains them in passes of that
many episodes and sums the passes' gradients into one update (its gradient accumulation, with
``steps_per_generation`` passes per generated batch): the same update in smaller tensors.

Example:
    >>> micro_batch(16, None, CPU_MICRO_BATCH), micro_batch(7, None, 4)
    (4, 7)
    >>> trl_batch_settings(batch=16, micro=4, accumulation=1)
    {'per_device_train_batch_size': 4, 'steps_per_generation': 4, 'gradient_accumulation_steps': 4}
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CPU_MICRO_BATCH",
    "batch_settings",
    "check_groups",
    "micro_batch",
    "training_passes",
    "trl_batch_settings",
    "whole_groups",
]

CPU_MICRO_BATCH = 4
"""Episodes per training pass for a real model on a CPU (float32 or bf16). A pass over a whole
16-episode Hangman batch (16 rows of up to ~1,200 tokens) writes MLP activations of over 100 MB
each; glibc serves blocks over 32 MB with fresh pages from the kernel, which zeroes each page
before the op writes it, so where the elementwise arithmetic runs at memory speed each such
activation is written twice. Passes of 4 episodes keep the blocks under 32 MB, and freed ones are
reused: the training part of the default Hangman command's step took 174.8 s instead of 253.4 s
(1.45x) on an AMD EPYC with AVX2 only, with a peak RSS of 6.37 GB instead of 5.19 GB
(``benchmarks/training_micro_batches.py``; docs/real_models.md). In a bf16 run on an Intel Xeon
with AMX the same benchmark gave 54.1 s instead of 70.4 s (1.30x), with a peak RSS of 4.70 GB
instead of 6.18 GB."""


def check_groups(batch: int | None, accumulation: int, num_generations: int) -> None:
    """Raise ``ValueError`` unless a step's episodes hold whole groups."""
    if batch is not None and (batch * accumulation) % num_generations:
        raise ValueError(
            f"per_device_train_batch_size x gradient_accumulation_steps ({batch} x "
            f"{accumulation}) must be a multiple of num_generations ({num_generations}): each "
            f"task is played num_generations times within one batch. Set "
            f"per_device_train_batch_size to a multiple of {num_generations}, or change "
            "num_generations."
        )


def whole_groups(batch: int, num_generations: int) -> int:
    """``batch`` rounded up to whole groups (a default batch need not suit a custom group size)."""
    return -(-batch // num_generations) * num_generations


def batch_settings(
    values: dict[str, Any], num_generations: int, asked: int | None
) -> dict[str, int]:
    """The resolved ``per_device_train_batch_size`` and ``micro_batch_size`` of a config's values
    (its defaults filled in): the batch in whole groups, and the passes, which were measured in
    float32 and in bf16 on CPUs; the defaults set none elsewhere (a GPU, the tiny model)."""
    batch = whole_groups(values["per_device_train_batch_size"], num_generations)
    default = values.get("micro_batch_size")
    return {
        "per_device_train_batch_size": batch,
        "micro_batch_size": micro_batch(batch, asked, default),
    }


def micro_batch(batch: int, asked: int | None, default: int | None) -> int:
    """The episodes of one training pass: ``asked`` (which must divide the batch), else the
    largest divisor of the batch up to ``default`` (above 1), else the whole batch.

    Raises:
        ValueError: ``asked`` does not divide the batch (the message lists what does).
    """
    if asked is not None:
        if asked > batch or batch % asked:
            raise ValueError(
                f"micro_batch_size {asked} must divide the batch of {batch} episodes "
                f"(per_device_train_batch_size): each step's batch is trained in equal passes. "
                f"Pick one of {[n for n in range(1, batch + 1) if batch % n == 0]}"
            )
        return asked
    if default is None:
        return batch
    micro = max(n for n in range(1, min(batch, default) + 1) if batch % n == 0)
    return batch if micro == 1 else micro  # passes of one episode were never measured


def training_passes(batch: int | None, micro: int | None) -> int:
    """Training passes per generated batch (1 when it is trained at once)."""
    return 1 if batch is None or micro is None else max(1, batch // micro)


def trl_batch_settings(*, batch: int, micro: int, accumulation: int) -> dict[str, int]:
    """``GRPOConfig`` settings: one pass is TRL's per-device batch; the ``accumulation`` batches of
    a step are generated at once (TRL's own default without passes) and all their passes'
    gradients summed into one update."""
    steps = accumulation * training_passes(batch, micro)
    return {
        "per_device_train_batch_size": micro,
        "steps_per_generation": steps,
        "gradient_accumulation_steps": steps,
    }
