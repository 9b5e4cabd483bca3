"""Self-play and fixed opponents in the rollout: the model being trained plays a seat of a
two-player game, and each of its seats is a training sample of its own.

With ``make_rollout_func(self_play=True)`` (``trl-env train ENV --self-play``) the rollout plays
two-player games (:class:`~trl_env._two_player.TwoPlayerGame`) from outside, every seat played by
a policy (:func:`trl_env._seats.play_matches`):

* **Opponents.** ``opponent="self"`` (the default): the model plays both seats. The rows of a
  GRPO group (``num_generations`` copies of one task) pair up, rows ``2k`` and ``2k + 1`` playing
  one game: row ``2k`` gets the seat that moved first, row ``2k + 1`` the seat that moved second.
  ``opponent="pool"``: the other seat is one of the run's own earlier policies
  (:class:`OpponentPool`: a snapshot saved every ``opponent_refresh_steps`` steps, the last
  ``opponent_pool_size`` kept, one drawn per rollout). Any other opponent (``"random"``, the game's
  scripted players such as ``"perfect"``, a model or run folder, a policy object) plays the other
  seat as is. With a pool or fixed opponent every row plays its own game, the model moving first
  in even rows and second in odd ones.
* **One generation call per round.** Every round plays one move in each game still running, with
  one ``act`` call per distinct policy: the model answers all its seats of all games (both seats
  in self-play) in one batched generation call.
* **Samples.** Each of the model's seats is its own conversation (what that seat was told, see
  :meth:`~trl_env._two_player.TwoPlayerGame.seat_observation`) and so its own token-exact sample
  (``prompt_ids``, ``completion_ids``, ``logprobs``, ``env_mask``), with its own step rewards:
  invalid-reply penalties, then the result on its last reply, **+1 for a win, -1 for a loss** and
  a draw where the game puts it between the two (:func:`trl_env._seats.zero_sum_reward`).
* **Roles.** The rollout returns each sample's role (``episode_role``: 0 moved first, 1 moved
  second); :class:`~trl_env.trl._credit.TurnCreditGRPOTrainer` normalizes advantages per role
  within each group, so the first and the second player each get their own baseline (SPIRAL's
  role-conditioned advantage estimation, arXiv 2506.24119, with the group as the baseline).

Example:
    >>> rollout = trl_env.make_rollout_func(self_play=True, max_new_tokens_per_turn=16)  # doctest: +SKIP
"""

from __future__ import annotations

import random
import shutil
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from trl_env._checks import env_class
from trl_env._episode import Episode, Task
from trl_env._policies import FunctionPolicy, Policy
from trl_env._seats import Match, play_matches
from trl_env._stepping import EnvStepper
from trl_env._two_player import is_two_player, two_player_env_ids
from trl_env.error import EnvErrorWarning, UsageError

__all__ = [
    "POOL",
    "SELF",
    "OpponentPool",
    "as_opponent_policy",
    "check_seat_rows",
    "play_seat_episodes",
    "uses_seats",
]

SELF = "self"
"""``opponent`` value: the model being trained plays both seats."""
POOL = "pool"
"""``opponent`` value: the run's own earlier policies (:class:`OpponentPool`)."""
POOL_DIR = "opponent_pool"
"""The run folder's sub-folder that holds the pool's snapshots (``step-N``)."""
_DEFAULT_TURN_CAP = 1000  # replies per seat, for an env registered without max_episode_steps


def uses_seats(self_play: bool, opponent: object) -> bool:
    """Whether a rollout plays two-player games from outside (self-play or a named opponent)."""
    return bool(self_play) or opponent is not None


def check_seat_rows(tasks: Sequence[Task], *, pairs: bool) -> None:
    """Check the rows of a self-play batch: two-player envs, and (``pairs``) rows that pair up.

    Raises:
        trl_env.error.UsageError: A row names a one-player env (the message names the two-player
            ones), or, in self-play against itself, the batch does not pair into games (an odd
            count, or rows ``2k`` and ``2k + 1`` of different tasks).
    """
    classes = {env_id: env_class(env_id) for env_id in {task.env_id for task in tasks}}
    one_player = sorted(
        env_id
        for env_id, cls in classes.items()
        if not (isinstance(cls, type) and is_two_player(cls))
    )
    if one_player:
        raise UsageError(
            f"self-play and opponents need two-player envs; {', '.join(one_player)} "
            f"{'is a one-player env' if len(one_player) == 1 else 'are one-player envs'}. "
            f"Two-player envs: {', '.join(two_player_env_ids())}"
        )
    if not pairs:
        return
    if len(tasks) % 2 or any(tasks[i] != tasks[i + 1] for i in range(0, len(tasks), 2)):
        raise UsageError(
            f"self-play pairs rows 2k and 2k+1 of a batch into one game (the two seats), but this "
            f"batch of {len(tasks)} rows does not pair up: use an even num_generations (each "
            "task's copies are consecutive) and an even number of rows per process"
        )


class OpponentPool:
    """The run's own earlier policies, as opponents (``opponent="pool"``).

    Every ``refresh_steps`` training steps (and at the first rollout) the model being trained is
    saved to ``<output_dir>/opponent_pool/step-N`` (a LoRA run saves its adapter only); the last
    ``size`` snapshots are kept, older ones deleted. Each rollout draws one snapshot (uniformly,
    from a generator seeded with ``seed``) and plays against it; the drawn snapshot is loaded
    with :func:`trl_env.trl.model_policy` (greedy unless ``temperature`` says otherwise) and stays
    loaded until another is drawn. A resumed run finds the snapshots already in the folder.

    Args:
        size: Snapshots kept.
        refresh_steps: Training steps between two snapshots.
        seed: Seed of the draws.
        temperature: The opponent's sampling temperature (0: greedy).
        load: Loads a snapshot folder as a policy (default: :func:`trl_env.trl.model_policy`).
    """

    def __init__(
        self,
        size: int = 4,
        refresh_steps: int = 10,
        *,
        seed: int = 0,
        temperature: float = 0.0,
        load: Callable[[str], Policy] | None = None,
    ) -> None:
        for name, value in (
            ("opponent_pool_size", size),
            ("opponent_refresh_steps", refresh_steps),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(f"{name} must be an int >= 1, got {value!r}")
        self.size, self.refresh_steps, self.temperature = size, refresh_steps, temperature
        self._rng = random.Random(seed)
        self._load = load
        self._last_snapshot: int | None = None
        self._loaded: tuple[str, Policy] | None = None

    def snapshots(self, output_dir: str | Path) -> list[Path]:
        """The snapshot folders of a run, oldest first."""
        folder = Path(output_dir, POOL_DIR)
        found = (
            [p for p in folder.glob("step-*") if p.name[5:].isdigit()] if folder.is_dir() else []
        )
        return sorted(found, key=lambda p: int(p.name[5:]))

    def opponent_for(self, trainer: Any, options: Any) -> tuple[Policy, str]:
        """The opponent of this rollout, snapshotting the model first when one is due.

        Args:
            trainer: The ``GRPOTrainer`` (its model, step, output folder and accelerator).
            options: The :class:`~trl_env._model_options.ModelOptions` the opponent generates
                with (the rollout's token limits and system prompt).

        Returns:
            The opponent policy and its name (``"pool:step-N"``).
        """
        output_dir = trainer.args.output_dir
        step = int(trainer.state.global_step)
        existing = self.snapshots(output_dir)
        if self._last_snapshot is None and existing:  # resumed: the newest one counts
            self._last_snapshot = int(existing[-1].name[5:])
        due = self._last_snapshot is None or step - self._last_snapshot >= self.refresh_steps
        if due and not (existing and int(existing[-1].name[5:]) == step):
            self._snapshot(trainer, Path(output_dir, POOL_DIR, f"step-{step}"))
            self._last_snapshot = step
        elif due:
            self._last_snapshot = step
        snapshots = self.snapshots(output_dir)
        for old in snapshots[: -self.size]:
            shutil.rmtree(old, ignore_errors=True)
        chosen = str(self._rng.choice(snapshots[-self.size :]))
        if self._loaded is None or self._loaded[0] != chosen:
            self._loaded = None  # free the previous opponent before loading the next
            self._loaded = (chosen, self._load_policy(chosen, options))
        return self._loaded[1], f"pool:{Path(chosen).name}"

    def _load_policy(self, folder: str, options: Any) -> Policy:
        if self._load is not None:
            return self._load(folder)
        from trl_env.trl._model_play import model_policy

        return model_policy(folder, options, temperature=self.temperature)

    @staticmethod
    def _snapshot(trainer: Any, folder: Path) -> None:
        accelerator = getattr(trainer, "accelerator", None)
        if accelerator is None or accelerator.is_main_process:
            model = trainer.model
            if accelerator is not None:
                model = accelerator.unwrap_model(model)
            model.save_pretrained(str(folder))
            tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
            tokenizer.save_pretrained(str(folder))
        if accelerator is not None:
            accelerator.wait_for_everyone()


def _turn_cap(env: gym.Env[str, str], max_turns: int | None) -> int:
    if max_turns is not None:
        return max_turns
    spec = env.spec
    limit = spec.max_episode_steps if spec is not None else None
    return limit or _DEFAULT_TURN_CAP


def play_seat_episodes(
    tasks: Sequence[Task],
    envs: Sequence[gym.Env[str, str]],
    learner: Policy,
    *,
    opponent: Policy | None,
    opponent_name: str,
    max_turns: int | None,
    stepper: EnvStepper | None = None,
    error_penalty: float | None = None,
) -> tuple[list[Episode], list[Match]]:
    """Play the model's seats of a batch of two-player games; one episode per row of ``tasks``.

    Args:
        tasks: The batch's rows (in self-play, rows ``2k`` and ``2k + 1`` are one game).
        envs: One env per game: ``len(tasks) // 2`` in self-play, ``len(tasks)`` otherwise.
        learner: The model being trained (its ``act`` builds each seat's token stream).
        opponent: The other seat's policy; ``None``: the learner itself (self-play).
        opponent_name: How the records name the opponent.
        max_turns: Replies per seat at most (``None``: the env's registered step limit).
        stepper: Runs the games' calls (the rollout's ``env_workers`` and ``env_step_timeout``);
            default: one after the other, no time limit.
        error_penalty: Reward added to the learner's episodes of a game that failed (the game
            raised or timed out), as the one-player rollout's ``env_error_penalty``; each such
            game is said once with an :class:`~trl_env.error.EnvErrorWarning`.

    Returns:
        The learner's episodes in the order of ``tasks`` (each with its :attr:`Episode.seat`),
        and the matches played.
    """
    if opponent is None:
        games = list(tasks[::2])
        movers: list[tuple[Policy, Policy]] = [(learner, learner)] * len(games)
    else:
        games = list(tasks)
        movers = [(learner, opponent) if row % 2 == 0 else (opponent, learner)
                  for row in range(len(games))]  # fmt: skip
    cap = _turn_cap(envs[0], max_turns) if envs else _DEFAULT_TURN_CAP
    matches = play_matches(envs, games, movers, max_turns=cap, zero_sum=True, stepper=stepper)
    episodes: list[Episode] = []
    for index, match in enumerate(matches):
        if match.error is not None:
            _game_error(match, error_penalty, learner if opponent is not None else None)
        first = match.first_seat
        if opponent is None:
            ordered = [(match.players[first], 0), (match.players[1 - first], 1)]
        else:
            role = index % 2
            ordered = [(match.players[first if role == 0 else 1 - first], role)]
        for player, role in ordered:
            episode = player.episode
            episode.seat = {
                "role": role,
                "seat": player.game.seat_names[player.seat] if player.error is None else None,
                "result": player.result,
                "opponent": opponent_name,
                "game": index,
            }
            episodes.append(episode)
    return episodes, matches


def _game_error(match: Match, penalty: float | None, learner: Policy | None) -> None:
    """Say a failed game, and add ``penalty`` to its learner's episodes (both seats in
    self-play, ``learner`` None; else the seat ``learner`` played)."""
    task = match.task
    warnings.warn(
        f"{task.env_id} (seed {task.seed}): the game failed ({match.error}). Its seats' episodes "
        "ended"
        + (" with env_error_penalty" if penalty is not None else "")
        + "; the batch goes on.",
        EnvErrorWarning,
        stacklevel=4,
    )
    if penalty is None:
        return
    for player in match.players:
        if learner is None or player.policy is learner:
            player.episode.rewards.append(float(penalty))


def as_opponent_policy(opponent: object) -> Policy | None:
    """A policy object for ``opponent`` when it is one (or a callable); ``None`` for a name."""
    if opponent is None or isinstance(opponent, str):
        return None
    if hasattr(opponent, "act"):
        return opponent  # type: ignore[return-value]
    if callable(opponent):
        return FunctionPolicy(opponent)  # type: ignore[arg-type]
    raise UsageError(
        f"opponent must be 'self', 'pool', a scripted player's name, a model, a policy (with "
        f"act(turns)) or a function of the turn, got {opponent!r:.80}"
    )
