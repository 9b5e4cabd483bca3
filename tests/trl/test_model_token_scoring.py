"""The training forward scores only the model's own tokens: the loss and its gradient are TRL's
(up to float rounding), and TRL's fused LM head projects only those positions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl")

import torch
from trl import GRPOTrainer
from trl.trainer import utils as trl_utils

from trl_env.trl._credit import TurnCreditGRPOTrainer
from trl_env.trl.fast._model_token_scoring import fused_head_skips_unlabelled_positions
from trl_env.trl.fast._trainer import FastPathsTrainer

from .test_credit import (  # noqa: F401
    make_trainer,
    one_torch_thread,
    pytestmark,
    scored,
    three_turns_env,
)

REWARDS = [[-0.1, 0.0, 1.0], [0.0, 0.0, 0.0]]


def loss_and_grads(trainer: GRPOTrainer, inputs: dict[str, Any]) -> tuple[torch.Tensor, list]:
    trainer.model.zero_grad()
    loss = trainer.compute_loss(trainer.model, inputs)
    loss.backward()
    grads = [p.grad.clone() for p in trainer.model.parameters() if p.grad is not None]
    return loss.detach(), grads


def head_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Records how many positions each call of TRL's fused LM head projects."""
    seen: list[int] = []
    function = trl_utils._ChunkedLogProbFunction
    original = function.apply

    def apply(hidden: torch.Tensor, *args: Any) -> Any:
        seen.append(hidden.shape[0])
        return original(hidden, *args)

    monkeypatch.setattr(function, "apply", apply)
    return seen


@pytest.mark.parametrize("credit", ["episode", "turn"])
def test_loss_and_gradient_are_trls(
    tiny_model_dir: str, tmp_path: Path, credit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    gamma = 0.9 if credit == "turn" else 1.0
    trainer = make_trainer(
        TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS, credit=credit, gamma=gamma
    )
    inputs = scored(trainer)
    trainer.score_only_model_tokens = False
    rows = head_rows(monkeypatch)
    expected_loss, expected_grads = loss_and_grads(trainer, inputs)
    trainer.score_only_model_tokens = True
    loss, grads = loss_and_grads(trainer, inputs)
    torch.testing.assert_close(loss, expected_loss, rtol=1e-5, atol=1e-6)
    assert len(grads) == len(expected_grads) > 0
    for got, want in zip(grads, expected_grads, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)
    # Every position of the two rows (prompt and padding included) on a CPU before; only the
    # model's own tokens (the env_mask's ones, 6 and 4 of them) after.
    model_tokens = int((inputs["completion_mask"] * inputs["tool_mask"]).sum())
    assert model_tokens == 10
    rows_, width = inputs["prompt_ids"].shape[0], inputs["prompt_ids"].shape[1]
    assert rows == [rows_ * (width + inputs["completion_ids"].shape[1] - 1), 10]


def test_old_log_probs_where_none_is_computed_do_not_reach_the_loss(
    tiny_model_dir: str, tmp_path: Path
) -> None:
    """With old-policy log-probabilities (several iterations per batch), the ratio at an env
    token would be exp(0 - old): the old value there is set aside as well, so even an old
    log-probability of -1000 leaves the loss TRL's."""
    trainer = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    inputs = scored(trainer)
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
    attention = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
    read = (inputs["completion_mask"] * inputs["tool_mask"]).bool()
    with torch.no_grad():
        current, _, _ = GRPOTrainer._get_per_token_logps_and_entropies(
            trainer, trainer.model, ids, attention, inputs["completion_ids"].size(1)
        )
    old = current + 0.3 * read  # off-policy by 0.3 nats on the model's tokens
    trainer.score_only_model_tokens = False
    expected = trainer.compute_loss(trainer.model, {**inputs, "old_per_token_logps": old})
    trainer.score_only_model_tokens = True
    extreme = old.masked_fill(~read, -1000.0)
    loss = trainer.compute_loss(trainer.model, {**inputs, "old_per_token_logps": extreme})
    assert torch.isfinite(loss)
    torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-6)


def test_log_probs_at_the_model_tokens_are_trls_and_zero_elsewhere(
    tiny_model_dir: str, tmp_path: Path
) -> None:
    trainer = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    inputs = scored(trainer)
    ids = torch.cat([inputs["prompt_ids"], inputs["completion_ids"]], dim=1)
    attention = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
    keep = inputs["completion_ids"].size(1)
    with torch.no_grad():
        want, want_entropy, _ = GRPOTrainer._get_per_token_logps_and_entropies(
            trainer, trainer.model, ids, attention, keep, compute_entropy=True
        )
        trainer._scored_positions = inputs["completion_mask"] * inputs["tool_mask"]
        try:
            got, entropy, _ = trainer._get_per_token_logps_and_entropies(
                trainer.model, ids, attention, keep, batch_size=1, compute_entropy=True
            )
        finally:
            trainer._scored_positions = None
    read = trainer_mask = (inputs["completion_mask"] * inputs["tool_mask"]).bool()
    torch.testing.assert_close(got[read], want[read], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(entropy[read], want_entropy[read], rtol=1e-5, atol=1e-6)
    assert torch.all(got[~trainer_mask] == 0) and torch.all(entropy[~trainer_mask] == 0)


def test_the_reference_pass_scores_the_model_tokens_too(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a KL term (``beta``), the reference pass of a batch projects only the model's tokens
    (the rollout's ``env_mask``), and the loss reads the same values there as TRL's."""
    import copy

    trainer = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    trainer.beta, trainer.ref_model = 0.1, copy.deepcopy(trainer.model).eval()
    with torch.no_grad():  # a reference unlike the policy, so that the KL term is not zero
        for parameter in trainer.ref_model.parameters():
            parameter.mul_(0.9)
    trainer.score_only_model_tokens = False
    stock = scored(trainer)
    trainer.score_only_model_tokens = True
    rows = head_rows(monkeypatch)
    fast = scored(trainer)
    read = (fast["completion_mask"] * fast["tool_mask"]).bool()
    assert int(read.sum()) == 10 and rows == [10]  # the reference pass: the model's 10 tokens
    torch.testing.assert_close(
        fast["ref_per_token_logps"][read], stock["ref_per_token_logps"][read], rtol=1e-5, atol=1e-6
    )
    assert torch.all(fast["ref_per_token_logps"][~read] == 0)
    assert trainer._batch_model_tokens is None  # kept for the batch's passes only
    assert stock["ref_per_token_logps"][read].abs().sum() > 0
    expected = trainer.compute_loss(trainer.model, stock)
    torch.testing.assert_close(trainer.compute_loss(trainer.model, fast), expected)
    trainer.score_only_model_tokens = False
    torch.testing.assert_close(trainer.compute_loss(trainer.model, stock), expected)


def test_positions_past_a_short_env_mask_are_scored_as_trl_pads_it() -> None:
    """TRL pads ``tool_mask`` with 1, so the loss reads a completion's positions past a short
    ``env_mask``: the scoring passes compute them too; rows that do not match get TRL's path."""
    trainer = object.__new__(TurnCreditGRPOTrainer)
    trainer._batch_model_tokens = [[1, 0, 1], [1, 1]]
    scored = trainer._batch_scored_positions(2, 4, torch.device("cpu"))
    assert scored.tolist() == [[1, 0, 1, 1], [1, 1, 1, 1]]
    assert trainer._batch_scored_positions(3, 4, torch.device("cpu")) is None
    assert trainer._batch_scored_positions(2, 2, torch.device("cpu")) is None
    trainer._batch_model_tokens = None
    assert trainer._batch_scored_positions(2, 4, torch.device("cpu")) is None


def test_other_passes_and_non_text_inputs_run_as_in_trl(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside ``_compute_loss`` and the scoring of a batch (where the rollout's ``env_mask``
    says which tokens are the model's), and with extra model inputs, TRL's own method runs."""
    trainer = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    calls: list[str] = []
    original = GRPOTrainer._get_per_token_logps_and_entropies

    def trl_method(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append("trl")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(GRPOTrainer, "_get_per_token_logps_and_entropies", trl_method)
    ids = torch.tensor([[30, 31, 32, 20, 21]])
    attention = torch.ones_like(ids)
    with torch.no_grad():
        trainer._get_per_token_logps_and_entropies(trainer.model, ids, attention, 2)
        trainer._scored_positions = torch.ones(1, 2)
        try:
            trainer._get_per_token_logps_and_entropies(
                trainer.model, ids, attention, 2, token_type_ids=torch.zeros_like(ids)
            )
            trainer._get_per_token_logps_and_entropies(trainer.model, ids, attention, 2)
        finally:
            trainer._scored_positions = None
    assert calls == ["trl", "trl"]


def test_trls_switch_is_put_back_even_after_an_error() -> None:
    original = trl_utils._use_triton
    with pytest.raises(RuntimeError, match="boom"), fused_head_skips_unlabelled_positions():
        assert trl_utils._use_triton(torch.device("cpu"))
        raise RuntimeError("boom")
    assert trl_utils._use_triton is original
    assert not trl_utils._use_triton(torch.device("cpu"))


def test_the_mixin_goes_before_grpo_trainer() -> None:
    assert TurnCreditGRPOTrainer.__mro__.index(FastPathsTrainer) < (
        TurnCreditGRPOTrainer.__mro__.index(GRPOTrainer)
    )


def padded_rows(trainer: GRPOTrainer) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Two rows laid out as TRL lays them out: prompts of different lengths (left padding), and
    completions of different lengths (right padding); the model's tokens to score."""
    pad = trainer.processing_class.pad_token_id
    prompt = torch.tensor([[pad, pad, 30, 31, 32], [33, 34, 35, 36, 37]])
    prompt_mask = (prompt != pad).long()
    completion = torch.tensor([[20, 21, 22, 23, pad], [24, 25, pad, pad, pad]])
    completion_mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]])
    scored_ = completion_mask * torch.tensor([[1, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    ids = torch.cat([prompt, completion], dim=1)
    attention = torch.cat([prompt_mask, completion_mask], dim=1)
    return ids, attention, scored_, completion.size(1)


def scored_log_probs(
    trainer: GRPOTrainer, ids: torch.Tensor, attention: torch.Tensor, scored_: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    trainer._scored_positions = scored_
    try:
        got, entropy, _ = trainer._get_per_token_logps_and_entropies(
            trainer.model, ids, attention, scored_.size(1), compute_entropy=True
        )
    finally:
        trainer._scored_positions = None
    return got, entropy


def model_calls(trainer: GRPOTrainer, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Records the keyword arguments of each call of the trainer's model."""
    calls: list[dict[str, Any]] = []
    model = trainer.model
    original = type(model).__call__

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self is model:
            calls.append(kwargs)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(model), "__call__", call)
    return calls


@pytest.mark.parametrize("left_padding", [True, False])
def test_without_the_padding_mask_every_token_sees_what_it_saw_with_it(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, left_padding: bool
) -> None:
    """Rows of one run of tokens are scored without a padding mask (causal attention): rotated so
    their tokens start at column 0 and given their original position ids when they are
    left-padded, as they are when only right-padded. Log-probabilities, entropies and gradients
    at the model's tokens are those with the mask; the model never sees the mask."""
    trainer = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    ids, attention, scored_, keep = padded_rows(trainer)
    if not left_padding:
        ids, attention = ids[:, 2:], attention[:, 2:]
    read = scored_.bool()
    trainer.attend_without_padding_mask = False
    want, want_entropy = scored_log_probs(trainer, ids, attention, scored_)
    want[read].sum().backward()
    want_grads = [p.grad.clone() for p in trainer.model.parameters() if p.grad is not None]
    trainer.model.zero_grad()
    trainer.attend_without_padding_mask = True
    calls = model_calls(trainer, monkeypatch)
    got, entropy = scored_log_probs(trainer, ids, attention, scored_)
    got[read].sum().backward()
    grads = [p.grad.clone() for p in trainer.model.parameters() if p.grad is not None]
    assert len(calls) == 1 and "attention_mask" not in calls[0]
    assert ("position_ids" in calls[0]) is left_padding
    # The columns after the longest row (7 tokens) are cut: no token sees them without a mask.
    assert calls[0]["input_ids"].size(1) == int(attention.sum(dim=1).max()) < ids.size(1)
    if left_padding:  # the first row's tokens start at column 0 and keep positions 2, 3, ...
        assert calls[0]["input_ids"][0, :3].tolist() == [30, 31, 32]
        assert calls[0]["position_ids"][0, :3].tolist() == [2, 3, 4]
    torch.testing.assert_close(got[read], want[read], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(entropy[read], want_entropy[read], rtol=1e-5, atol=1e-6)
    assert torch.all(got[~read] == 0)
    assert len(grads) == len(want_grads) > 0
    for value, expected in zip(grads, want_grads, strict=True):
        torch.testing.assert_close(value, expected, rtol=1e-4, atol=1e-6)


def test_padding_between_tokens_keeps_the_mask(
    tiny_model_dir: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trainer = make_trainer(TurnCreditGRPOTrainer, tiny_model_dir, tmp_path, REWARDS)
    ids, attention, scored_, _ = padded_rows(trainer)
    attention[1, 3] = 0  # a hole inside the second row
    calls = model_calls(trainer, monkeypatch)
    with torch.no_grad():
        got, _ = scored_log_probs(trainer, ids, attention, scored_)
    assert len(calls) == 1 and torch.equal(calls[0]["attention_mask"], attention)
    assert torch.isfinite(got).all()


def test_unmasked_layout() -> None:
    from trl_env.trl.fast._unpadded_training import _rotate, _unmasked_layout

    mask = torch.tensor([[0, 0, 1, 1, 0], [1, 1, 1, 0, 0], [0, 0, 0, 0, 0]])
    assert _unmasked_layout(mask, position_limit=100).tolist() == [2, 0, 0]
    assert _unmasked_layout(mask, position_limit=None) is None  # rotating needs position ids
    assert _unmasked_layout(mask, position_limit=6) is None  # rotated positions up to 2 + 5
    assert _unmasked_layout(mask, position_limit=7).tolist() == [2, 0, 0]
    assert _unmasked_layout(mask[1:], position_limit=None).tolist() == [0, 0]
    assert _unmasked_layout(torch.tensor([[1, 0, 1]]), position_limit=100) is None
    # A row whose first token is scored (no prompt before it) keeps the mask.
    assert _unmasked_layout(mask, position_limit=100, first_scored=2) is None
    assert _unmasked_layout(mask, position_limit=100, first_scored=3).tolist() == [2, 0, 0]
    values = torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]])
    shift = torch.tensor([1, 3])
    assert _rotate(values, shift).tolist() == [[2, 3, 4, 1], [8, 5, 6, 7]]
    assert torch.equal(_rotate(_rotate(values, shift), -shift), values)
