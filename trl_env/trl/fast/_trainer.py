"""The training fast paths, installed by the trainer for the duration of ``train()``:
:class:`FastPathsTrainer`.

A mixin for ``GRPOTrainer`` subclasses (trl-env's :class:`~trl_env.trl.TurnCreditGRPOTrainer`
is one). It takes the one ``fast_paths`` argument, resolves it on the trainer's device, checks
every layer's library versions and preconditions when the trainer is made (a refusal warns once
and leaves that layer off), and

* for ``train()``, installs the layer that changes the model (``lora_addmm``) and removes it
  when ``train()`` returns or raises: afterwards the model holds no patched forward, so ``copy.deepcopy`` and ``pickle`` see peft's and
  transformers' own modules;
* runs its training forward (``_compute_loss``), and the reference and old-policy passes of
  each batch, with ``model_token_scoring`` and ``unpadded_training`` where they are on, and as
  TRL's otherwise;
* hands the setting to the rollout's generator (``TransformersGenerator.from_trainer``), which
  installs the generation layers inside each ``generate`` call.

With every layer off (``fast_paths="off"``, or ``"auto"`` on a GPU or MPS) every method is TRL's.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import torch

from trl_env.trl.fast._checks import model_device_type, refuse
from trl_env.trl.fast._switch import TRAINING_LAYERS, FastPaths
from trl_env.trl.fast._versions import check_versions

__all__ = ["FastPathsTrainer", "training_device_type"]


def training_device_type(trainer: Any) -> str:
    """The device ``fast_paths="auto"`` decides from: the accelerator's (else the model's)."""
    accelerator = getattr(trainer, "accelerator", None)
    device = getattr(accelerator, "device", None)
    if isinstance(device, torch.device):
        return device.type
    return model_device_type(trainer.model)


def _training_refusal(layer: str, model: Any, bf16: bool, device_type: str) -> str | None:
    """Why ``layer`` cannot serve this model exactly; ``""`` where it does not apply (silent)."""
    from trl_env.trl.fast._lora_addmm import lora_addmm_refusal
    from trl_env.trl.fast._unpadded_training import unpadded_training_refusal

    if layer == "lora_addmm":
        return lora_addmm_refusal(model) if bf16 and device_type == "cpu" else ""
    if layer == "unpadded_training":
        return unpadded_training_refusal(model)
    return None


class FastPathsTrainer:
    """Mixin for ``GRPOTrainer`` subclasses: the fast paths, from one argument (see the module
    docstring). Put it before ``GRPOTrainer`` in the bases.

    Args:
        fast_paths: ``"auto"`` (default: every layer on a CPU, less
            :data:`~trl_env.trl.fast.NOT_ON_FLOAT32_CPUS` on one without bf16 units; none
            elsewhere), ``"on"``,
            ``"off"``, a setting with layer names (``"auto,-lora_addmm"``), or a
            :class:`~trl_env.trl.fast.FastPaths`.

    Raises:
        trl_env.error.FastPathVersionError: A layer that is on meets a library outside its
            tested versions (the message names ``--fast-paths off``).

    Example:
        >>> from trl import GRPOTrainer
        >>> class Trainer(FastPathsTrainer, GRPOTrainer):
        ...     pass
    """

    _scored_positions: torch.Tensor | None = None
    _batch_model_tokens: list[list[int]] | None = None

    def __init__(self, *args: Any, fast_paths: str | FastPaths | None = "auto", **kwargs: Any):
        FastPaths.resolve(fast_paths, "cpu")  # a bad setting fails before the model loads
        super().__init__(*args, **kwargs)
        self.fast_paths = FastPaths.resolve(fast_paths, training_device_type(self))
        """The layers the setting turns on here (generation and training)."""
        for layer in self.fast_paths.enabled:
            check_versions(layer)
        self._training = self._check_training_layers()
        self._installed: contextlib.ExitStack | None = None

    def _check_training_layers(self) -> FastPaths:
        """The training layers on for this trainer's model (refusals said once)."""
        model = self.model  # type: ignore[attr-defined]
        bf16 = bool(getattr(self.args, "bf16", False))  # type: ignore[attr-defined]
        device_type = training_device_type(self)
        flags = {}
        for layer in TRAINING_LAYERS:
            if not getattr(self.fast_paths, layer):
                continue
            reason = _training_refusal(layer, model, bf16, device_type)
            if reason:
                refuse(model, layer, reason)
            flags[layer] = reason is None
        return dataclasses.replace(FastPaths.none(), **flags)

    # --- the switches of the training forward (tests and benchmarks flip them) ---------------

    @property
    def score_only_model_tokens(self) -> bool:
        """Whether ``model_token_scoring`` is on for the training forward."""
        return self._training.model_token_scoring

    @score_only_model_tokens.setter
    def score_only_model_tokens(self, on: bool) -> None:
        self._training = dataclasses.replace(self._training, model_token_scoring=bool(on))

    @property
    def attend_without_padding_mask(self) -> bool:
        """Whether ``unpadded_training`` is on for the training forward."""
        return self._training.unpadded_training

    @attend_without_padding_mask.setter
    def attend_without_padding_mask(self, on: bool) -> None:
        self._training = dataclasses.replace(self._training, unpadded_training=bool(on))

    # --- install and remove -------------------------------------------------------------------

    def train(self, *args: Any, **kwargs: Any) -> Any:
        """``Trainer.train`` with the model's training fast paths installed for its duration."""
        with self.fast_paths_installed():
            return super().train(*args, **kwargs)  # type: ignore[misc]

    @contextlib.contextmanager
    def fast_paths_installed(self) -> Iterator[None]:
        """Inside: the layer that changes the model (``lora_addmm``) is installed; on the way
        out it is removed, also after an error."""
        if self._installed is not None:  # nested (train() inside train()): already there
            yield
            return
        stack = contextlib.ExitStack()
        self._installed = stack
        try:
            with stack:
                self._install(stack)
                yield
        finally:
            self._installed = None

    @contextlib.contextmanager
    def fast_paths_removed(self) -> Iterator[None]:
        """Inside: the model as it is outside ``train()`` (the held-out eval plays it, so that its
        figures are ``trl-env eval``'s); the layers come back on the way out."""
        stack = self._installed
        if stack is None:
            yield
            return
        stack.close()
        try:
            yield
        finally:
            self._install(stack)

    def _install(self, stack: contextlib.ExitStack) -> None:
        model = self.model  # type: ignore[attr-defined]
        if self._training.lora_addmm:
            from trl_env.trl.fast._lora_addmm import fuse_lora_additions, unfuse_lora_additions

            stack.callback(unfuse_lora_additions, model)
            fuse_lora_additions(model)

    # --- the scoring passes of a batch (reference, old policy) ---------------------------------

    def _generate(self, prompts: list) -> Any:
        """TRL's, keeping the rollout's ``env_mask`` (TRL's ``tool_mask``: 1 on the model's
        tokens) for the reference and old-policy passes of the batch (``model_token_scoring``)."""
        result = super()._generate(prompts)  # type: ignore[misc]
        self._batch_model_tokens = result[2] if self.score_only_model_tokens else None
        return result

    def _generate_and_score_completions(self, inputs: Any) -> Any:
        try:
            return super()._generate_and_score_completions(inputs)  # type: ignore[misc]
        finally:
            self._batch_model_tokens = None  # the passes of this batch are over

    def _batch_scored_positions(
        self, rows: int, width: int, device: torch.device
    ) -> torch.Tensor | None:
        """The model's tokens of the batch being scored, as the positions to score; ``None``
        outside ``_generate_and_score_completions`` or where the rows do not match.

        Past a row's ``env_mask`` the positions are scored, as TRL pads ``tool_mask`` with 1: a
        rollout whose ``env_mask`` is shorter than its completion still gets every position the
        loss reads (padding is never scored: its labels come from the attention mask)."""
        masks = self._batch_model_tokens
        if masks is None or len(masks) != rows or any(len(mask) > width for mask in masks):
            return None
        scored = torch.ones(rows, width, dtype=torch.long)
        for row, mask in enumerate(masks):
            scored[row, : len(mask)] = torch.as_tensor(mask, dtype=torch.long)
        return scored.to(device)

    # --- the training forward ------------------------------------------------------------------

    def _compute_loss(self, model: Any, inputs: dict[str, Any]) -> torch.Tensor:
        from trl_env.trl.fast._model_token_scoring import model_token_labels, set_aside_unscored

        scored = None
        if self.score_only_model_tokens:
            scored = model_token_labels(inputs)
            inputs = set_aside_unscored(inputs, scored)
        elif self.attend_without_padding_mask:
            scored = inputs["completion_mask"]  # the positions TRL labels: the same labels
        self._scored_positions = scored
        try:
            return super()._compute_loss(model, inputs)  # type: ignore[misc]
        finally:
            self._scored_positions = None

    def _get_per_token_logps_and_entropies(
        self,
        model: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        logits_to_keep: int,
        batch_size: int | None = None,
        compute_entropy: bool = False,
        compute_aux_loss: bool = False,
        **inputs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        scored = self._scored_positions
        if scored is None:  # a reference or old-policy pass: the loss reads the same positions
            scored = self._batch_scored_positions(
                input_ids.size(0), logits_to_keep, input_ids.device
            )
        if (
            scored is None
            or compute_aux_loss
            or any(value is not None for value in inputs.values())  # images, token types
            or tuple(scored.shape) != (input_ids.size(0), logits_to_keep)
        ):
            return super()._get_per_token_logps_and_entropies(  # type: ignore[misc]
                model,
                input_ids,
                attention_mask,
                logits_to_keep,
                batch_size,
                compute_entropy=compute_entropy,
                compute_aux_loss=compute_aux_loss,
                **inputs,
            )
        logps, entropies = self._training_forward(
            model, input_ids, attention_mask, logits_to_keep, batch_size, compute_entropy, scored
        )
        return logps, entropies, None

    def _training_forward(
        self,
        model: Any,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        logits_to_keep: int,
        batch_size: int | None,
        compute_entropy: bool,
        scored: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """TRL's text path, with the positions the loss does not read left unlabelled
        (``model_token_scoring``) and without the padding mask where exact
        (``unpadded_training``)."""
        from trl_env.trl.fast._model_token_scoring import fused_head_skips_unlabelled_positions
        from trl_env.trl.fast._unpadded_training import scored_forward

        batch_size = batch_size or input_ids.size(0)
        skip = self.score_only_model_tokens
        logps, entropies = [], []
        with fused_head_skips_unlabelled_positions() if skip else contextlib.nullcontext():
            for start in range(0, input_ids.size(0), batch_size):
                ids = input_ids[start : start + batch_size]
                mask = attention_mask[start : start + batch_size]
                labels = ids.masked_fill(mask == 0, -100)
                labels[:, :-logits_to_keep] = -100
                completion = labels[:, -logits_to_keep:]
                completion.masked_fill_(scored[start : start + batch_size] == 0, -100)
                log_probs, entropy = scored_forward(
                    self,
                    model,
                    ids,
                    mask,
                    labels,
                    ids.size(1) - logits_to_keep,
                    self.attend_without_padding_mask,
                )
                logps.append(log_probs[:, -logits_to_keep:])
                if compute_entropy:
                    entropies.append(entropy[:, -logits_to_keep:])  # type: ignore[index]
        return torch.cat(logps), (torch.cat(entropies) if compute_entropy else None)
