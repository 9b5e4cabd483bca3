"""Turn-level credit: each model turn of an episode gets its own advantage.

GRPO gives every token of an episode the same advantage: the episode's return, normalized within
its group (the ``num_generations`` episodes of one task). In a multi-turn game that blames a good
opening move for a later blunder as much as the blunder itself. With turn-level credit, the
rollout's per-step rewards (``step_rewards``: one per env step, that is one per model turn,
invalid-reply penalties included) give each model turn ``t`` its discounted **return-to-go**

    G_t = r_t + gamma * r_{t+1} + gamma^2 * r_{t+2} + ...

which is normalized within the group and becomes the advantage of every token of that turn; env
tokens (``env_mask == 0``) get 0 and stay masked out of the loss.

**Normalization** (:func:`normalize_returns`): the group's returns-to-go are pooled, each
episode weighted equally (each of its ``T`` turns with weight ``1/T``):

    mean = (1/n) * sum_i mean_t G_it
    std  = sqrt( sum_i mean_t (G_it - mean)^2 / (n - 1) )
    A_it = (G_it - mean) / (std + 1e-4)

Why this scheme:

* **It generalizes GRPO exactly.** When only the final step is rewarded and ``gamma=1``, every
  turn of episode ``i`` has ``G_it = R_i`` and the formulas are TRL's (group mean, Bessel-corrected
  group std, the same epsilon): ``credit="turn"`` then trains exactly like ``credit="episode"``, so
  what changes a run is only what per-step rewards and ``gamma`` add.
* **Episodes of different lengths are fine.** Normalizing per turn index (all first turns
  together, all second turns together, ...) breaks when episodes have different lengths: late
  indices hold one or two episodes (a zero or noisy std), and a turn index means different game
  states in different episodes anyway. Pooling all turns of the group gives one baseline from
  every sample the group has.
* **Long episodes do not outvote short ones.** Pooling every turn with the same weight (GEM's
  return batch norm) lets a 9-turn loss count nine times as much as a 3-turn win in the baseline;
  weighting each episode once keeps GRPO's "one sample per episode" baseline.

``scale_rewards`` of ``GRPOConfig`` is honoured: ``"group"`` (default) divides by the group's std
as above, ``"batch"`` by the std of the whole batch (every episode of every process, each weighted
once, around the batch mean, as TRL does), ``"none"`` does not divide. Reward functions are
computed and logged by TRL as usual but do not enter turn-level advantages: the step rewards
carry the signal (``trl_env.env_reward`` sums the same rewards for the logged ``reward``).
**Step-group credit** (``credit="step-group"``, after GiGPO) adds a step term to each turn's
advantage (:mod:`trl_env.trl._step_group_credit`).
Use :class:`TurnCreditGRPOTrainer` in place of ``GRPOTrainer``, with trl-env's rollout (or any
``rollout_func`` that returns ``env_mask`` and ``step_rewards``, and, for step-group credit,
``episode_messages``):

Example:
    >>> returns_to_go([-0.1, 0.0, 1.0], gamma=0.5)
    [0.15, 0.5, 1.0]
    >>> trainer = TurnCreditGRPOTrainer(
    ...     model="Qwen/Qwen3-0.6B",
    ...     reward_funcs=trl_env.env_reward,
    ...     train_dataset=trl_env.make_dataset("TextTicTacToe-v0", num_tasks=512),
    ...     rollout_func=trl_env.make_rollout_func(max_new_tokens_per_turn=64),
    ...     credit="turn", gamma=0.9,
    ... )  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import torch
from accelerate.utils import gather_object
from trl import GRPOTrainer

from trl_env.trl._credit_modes import CREDITS, check_credit
from trl_env.trl._returns import normalize_returns, returns_to_go
from trl_env.trl._step_group_credit import step_group_advantages, turn_observations
from trl_env.trl.fast._trainer import FastPathsTrainer

__all__ = [
    "CREDITS",
    "TurnCreditGRPOTrainer",
    "check_credit",
    "normalize_returns",
    "returns_to_go",
    "step_group_advantages",
    "turn_advantages",
    "turn_observations",
]

logger = logging.getLogger(__name__)


def _model_turn_spans(mask: Sequence[int]) -> list[tuple[int, int]]:
    """The ``[start, end)`` token spans of the model turns: the runs of 1s in a loss mask."""
    spans: list[tuple[int, int]] = []
    start = None
    for position, value in enumerate(mask):
        if value and start is None:
            start = position
        elif not value and start is not None:
            spans.append((start, position))
            start = None
    if start is not None:
        spans.append((start, len(mask)))
    return spans


def turn_advantages(
    step_rewards: Sequence[Sequence[float]],
    loss_mask: torch.Tensor,
    *,
    num_generations: int,
    gamma: float = 1.0,
    scale_rewards: str = "group",
    gather: Callable[[list[Any]], list[Any]] | None = None,
    offset: int = 0,
    observations: Sequence[Sequence[Hashable]] | None = None,
    roles: Sequence[int] | None = None,
    episode_returns: Sequence[float] | None = None,
) -> torch.Tensor:
    """Token-level advantages of a batch: each model turn's normalized return-to-go (``credit=
    "turn"``), plus, given ``observations``, its step-group term (``credit="step-group"``).

    The model turns of a completion are the runs of 1s in its row of ``loss_mask`` (the
    completion mask times the env mask), in order: trl-env's rollout puts at least one env token
    (the chat template's turn markup) between two model turns, and ``step_rewards[i][t]`` is the
    reward of the env step that answered turn ``t``. An episode whose completion has no trainable
    token (a failed reset, or one masked by ``mask_truncated_completions``) still takes part in its
    group's baseline with its whole discounted return.

    Args:
        step_rewards: Per episode of this process, its step rewards.
        loss_mask: ``(B, T)``, 1 on the model tokens that are trained (padding and env tokens 0).
        num_generations: The group size.
        gamma: The discount, in ``[0, 1]`` (0: each turn's own reward only).
        scale_rewards: ``GRPOConfig.scale_rewards`` (see :func:`normalize_returns`).
        gather: In distributed runs, returns every process's per-episode returns concatenated in
            process order (``accelerate.utils.gather_object``), since a group may span processes.
        offset: Where this process's episodes start in the gathered list.
        observations: For step-group credit, per episode of this process, the observation of
            each model turn (at least one per model turn; extra ones, such as the env's message
            after the last turn, are ignored): :func:`step_group_advantages` is added.
        roles: Per episode of this process, its role in a two-player game (0: moved first, 1:
            moved second): each role is normalized on its own in its group (see
            :func:`normalize_returns`).
        episode_returns: Per episode of this process, its return: episode credit (every turn
            of an episode gets its normalized return, GRPO's advantage) instead of per-turn
            returns-to-go; for self-play, whose per-role baselines TRL's own advantages lack.

    Returns:
        A float ``(B, T)`` tensor on ``loss_mask``'s device: each token of model turn ``t`` of
        episode ``i`` holds that turn's advantage; every other position 0.

    Raises:
        ValueError: ``step_rewards`` does not have one entry per row, or a completion has more
            model turns than its rewards can explain (more than ``len(rewards) + 1``: the env
            mask does not separate the turns), or fewer observations than model turns.

    Example:
        >>> mask = torch.tensor([[1, 1, 0, 1, 0, 1], [1, 0, 1, 0, 0, 0]])
        >>> turn_advantages([[0.0, 0.0, 1.0], [0.0, 0.0]], mask, num_generations=2)
        tensor([[ 0.7070,  0.7070,  0.0000,  0.7070,  0.0000,  0.7070],
                [-0.7070,  0.0000, -0.7070,  0.0000,  0.0000,  0.0000]])
        >>> # Step-group credit: both first turns saw "start", so they also get the step term.
        >>> seen = [["start", "x", "y"], ["start", "z"]]
        >>> turn_advantages([[0.0, 0.0, 1.0], [0.0, 0.0]], mask, num_generations=2,
        ...                 observations=seen)
        tensor([[ 1.4140,  1.4140,  0.0000,  0.7070,  0.0000,  0.7070],
                [-1.4140,  0.0000, -0.7070,  0.0000,  0.0000,  0.0000]])
    """
    rows = loss_mask.tolist()
    if len(step_rewards) != len(rows):
        raise ValueError(f"got step rewards for {len(step_rewards)} episodes, {len(rows)} rows")
    spans = [_model_turn_spans(row) for row in rows]
    local = _turn_values(step_rewards, spans, gamma, episode_returns)
    everyone = gather(local) if gather is not None else local
    all_roles = None
    if roles is not None:
        if len(roles) != len(rows):
            raise ValueError(f"got roles for {len(roles)} episodes, {len(rows)} rows")
        mine_roles = [int(role) for role in roles]
        all_roles = gather(mine_roles) if gather is not None else mine_roles
    normalized = normalize_returns(everyone, num_generations, scale_rewards, all_roles)
    if observations is not None:
        if len(observations) != len(rows):
            raise ValueError(f"got observations for {len(observations)} episodes, {len(rows)} rows")
        seen: list[list[Hashable]] = []
        for index, (turns, episode) in enumerate(zip(spans, observations, strict=True)):
            if len(episode) < len(turns):
                raise ValueError(
                    f"episode {index} has {len(turns)} model turns in its token stream but "
                    f"{len(episode)} observations: step-group credit needs the observation each "
                    "model turn answered"
                )
            seen.append(list(episode[: len(turns)]))
        everyone_seen = gather(seen) if gather is not None else seen
        steps = step_group_advantages(everyone, everyone_seen, num_generations, scale_rewards)
        normalized = [
            [a + b for a, b in zip(turn, step, strict=True)]
            for turn, step in zip(normalized, steps, strict=True)
        ]
    advantages = torch.zeros(loss_mask.shape, dtype=torch.float32)
    for row, (values, turns) in enumerate(
        zip(normalized[offset : offset + len(rows)], spans, strict=True)
    ):
        # strict=False: an episode with no model turn has one value (its return) and no tokens.
        for value, (start, end) in zip(values, turns, strict=False):
            advantages[row, start:end] = value
    return advantages.to(loss_mask.device)


def _turn_values(
    step_rewards: Sequence[Sequence[float]],
    spans: Sequence[Sequence[tuple[int, int]]],
    gamma: float,
    episode_returns: Sequence[float] | None,
) -> list[list[float]]:
    """Per episode, the value of each model turn before normalization: its return-to-go, or
    (episode credit) the episode's return on every turn; one value for an episode with none."""
    values: list[list[float]] = []
    for index, (rewards, turns) in enumerate(zip(step_rewards, spans, strict=True)):
        if len(turns) > len(rewards) + 1:
            raise ValueError(
                f"episode {index} has {len(turns)} model turns in its token stream but "
                f"{len(rewards)} step rewards: turn-level credit needs one reward per model turn "
                "and env tokens (env_mask 0) between turns"
            )
        if episode_returns is not None:
            values.append([float(episode_returns[index])] * max(len(turns), 1))
        else:
            values.append(returns_to_go(rewards, gamma, turns=max(len(turns), 1)))
    return values


class TurnCreditGRPOTrainer(FastPathsTrainer, GRPOTrainer):
    """TRL's ``GRPOTrainer`` with a choice of credit assignment: per episode, per turn, or per
    turn with step groups.

    With ``credit="episode"`` it is ``GRPOTrainer``'s loss, up to the float rounding of the fast
    paths of :class:`~trl_env.trl.fast.FastPathsTrainer` (its ``fast_paths=`` argument:
    ``"auto"``, on a CPU only; bitwise TRL's with ``"off"``).

    With ``credit="turn"`` it replaces
    the ``(B,)`` episode advantages by the ``(B, T)`` token advantages of :func:`turn_advantages`
    (``GRPOTrainer._compute_loss`` accepts both shapes); everything else (sampling, log-probs,
    clipping, loss types, LoRA, checkpoints and resuming, ``accelerate``) is TRL's. With
    ``credit="step-group"`` the token advantages also hold each turn's step-group term (turns of
    a group that answered the same observation; see the module docstring).

    The rollout must return ``env_mask`` and a ``step_rewards`` column, and for step-group credit
    an ``episode_messages`` column (trl-env's :func:`~trl_env.trl.make_rollout_func` returns all
    three). In distributed runs every process computes the
    advantages of its own episodes, from the returns of all processes' episodes (a group may span
    processes, as TRL's rewards do).

    Args:
        *args: ``GRPOTrainer``'s arguments.
        credit: ``"turn"`` (default), ``"episode"`` or ``"step-group"``.
        gamma: Discount of later step rewards in a turn's return-to-go, in ``[0, 1]`` (0: each turn's own reward only).
        **kwargs: ``GRPOTrainer``'s keyword arguments.

    Raises:
        ValueError: For a bad ``credit`` or ``gamma`` (see :func:`check_credit`); at the first
            step, if the rollout returned no ``step_rewards`` (or, for step-group credit, no
            ``episode_messages``).

    Example:
        >>> trainer = TurnCreditGRPOTrainer(
        ...     model=model_dir,
        ...     reward_funcs=trl_env.env_reward,
        ...     train_dataset=trl_env.make_dataset("TextGuessNumber-v0", num_tasks=64),
        ...     rollout_func=trl_env.make_rollout_func(max_new_tokens_per_turn=8),
        ...     args=GRPOConfig(max_completion_length=128),
        ...     credit="turn",
        ...     gamma=0.9,
        ... )  # doctest: +SKIP
    """

    def __init__(self, *args: Any, credit: str = "turn", gamma: float = 1.0, **kwargs: Any) -> None:
        check_credit(credit, gamma)
        super().__init__(*args, **kwargs)  # FastPathsTrainer takes fast_paths=
        self.credit = credit
        self.gamma = float(gamma)
        self._terminal_only_said: set[str] = set()
        self._has_step_rewards: set[str] = set()
        if credit != "episode" and list(self.reward_func_names) != ["env_reward"]:
            logger.warning(
                "credit=%r builds advantages from the rollout's step_rewards; the reward "
                "functions %s are computed and logged but do not enter the advantages",
                credit,
                list(self.reward_func_names),
            )

    def _generate_and_score_completions(
        self, inputs: list[dict[str, Any]]
    ) -> dict[str, torch.Tensor | Any]:
        output = super()._generate_and_score_completions(inputs)
        # Self-play: each role (first or second mover) gets its own baseline in its group.
        roles = (
            [int(row["episode_role"]) for row in inputs]
            if inputs and "episode_role" in inputs[0]
            else None
        )
        if self.credit == "episode" and roles is None:
            return output
        # TRL merges the rollout's extra columns into `inputs` (for the reward functions).
        if not inputs or "step_rewards" not in inputs[0]:
            raise ValueError(
                f"credit={self.credit!r} needs the 'step_rewards' column of trl_env's rollout: pass "
                "rollout_func=trl_env.make_rollout_func(...) (or return step_rewards, one list of "
                "step rewards per sample, from your rollout_func)"
            )
        step_rewards = [list(row["step_rewards"]) for row in inputs]
        observations = None
        if self.credit == "step-group":
            if "episode_messages" not in inputs[0]:
                raise ValueError(
                    "credit='step-group' needs the 'episode_messages' column of trl_env's rollout "
                    "(the env's messages are the observations that make step groups): pass "
                    "rollout_func=trl_env.make_rollout_func(...) (or return episode_messages, the "
                    "conversation as chat messages, from your rollout_func)"
                )
            observations = [turn_observations(row["episode_messages"]) for row in inputs]
        self._say_if_terminal_only(inputs, step_rewards)
        mask = output["completion_mask"]
        if "tool_mask" in output:  # the rollout's env_mask, padded
            mask = mask * output["tool_mask"]
        training = self._model_is_training()
        num_generations = self.num_generations if training else self.num_generations_eval
        if num_generations is None:  # never, once GRPOConfig has checked it (it divides by it)
            raise ValueError(
                f"credit={self.credit!r} needs the GRPO group size: set GRPOConfig(num_generations=...)"
            )
        output["advantages"] = turn_advantages(
            step_rewards,
            mask,
            num_generations=num_generations,
            gamma=self.gamma,
            scale_rewards=self.scale_rewards,
            gather=gather_object,
            offset=self.accelerator.process_index * len(inputs),
            observations=observations,
            roles=roles,
            episode_returns=(
                [float(row["episode_return"]) for row in inputs]
                if self.credit == "episode"
                else None
            ),
        )
        return output

    def _model_is_training(self) -> bool:
        """Whether the model is in training mode (TRL's "train" mode) rather than evaluating.

        Raises:
            RuntimeError: The trainer has no model (``GRPOTrainer`` loads it when created).
        """
        if self.model is None:
            raise RuntimeError(
                f"{type(self).__name__} has no model (trainer.model is None); create the trainer "
                "with model= (a model, a model directory or a Hub id)"
            )
        return self.model.training

    def _say_if_terminal_only(
        self, inputs: Sequence[dict[str, Any]], step_rewards: Sequence[Sequence[float]]
    ) -> None:
        """Log once per env ID when its episodes reward only the final step."""
        by_env: dict[str, list[Sequence[float]]] = {}
        for row, rewards in zip(inputs, step_rewards, strict=True):
            if len(rewards) > 1:
                by_env.setdefault(str(row.get("env_id", "this env")), []).append(rewards)
        for env_id, episodes in by_env.items():
            if env_id in self._terminal_only_said or env_id in self._has_step_rewards:
                continue
            if any(r != 0 for rewards in episodes for r in rewards[:-1]):
                self._has_step_rewards.add(env_id)
                continue
            self._terminal_only_said.add(env_id)
            exact = self.gamma == 1 and self.credit == "turn"
            logger.warning(
                "credit=%r: %s gave no per-step rewards in this batch (only the final step's "
                "reward was non-zero), so every turn's return-to-go is its discounted final reward"
                "%s. Training goes on.",
                self.credit,
                env_id,
                " (with gamma=1 that is exactly credit='episode')" if exact else "",
            )
