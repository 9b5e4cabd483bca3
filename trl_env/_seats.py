"""Seats played by policies: each seat of a two-player game has its own conversation.

A two-player game (:class:`trl_env._two_player.TwoPlayerGame`) says whose turn it is. A
:class:`SeatPlayer` is one seat of one game as a :class:`~trl_env._policies.Policy` plays it, with
its own :class:`~trl_env._episode.Episode`: its transcript holds only what that seat was told
(``game.seat_observation(seat)``) and what it replied, and a model policy builds that seat's own
token stream in it, exactly as in a one-player episode (first observation as the prompt, each
later one appended through ``policy.observe`` before the next reply).

:func:`play_seat_turns` plays one move for each of several seats that are to move (in different
games), **one** ``policy.act`` call per distinct policy: when one model plays both seats of many
games, every seat's turn of a round comes from one batched generation call.
:func:`play_matches` plays whole games that way (head-to-head evals, and self-play: a rollout can
play every seat of a batch with the model being trained and train on each seat's episode).

The rules of a seat, the same for every game and both seats:

* an invalid reply is the game's business (feedback to that seat, a penalty as the game's
  step reward, still its turn); ``max_invalid`` invalid replies in a row forfeit the game;
* a seat whose policy stops (no reply, an error, its token budget spent) or that reaches
  ``max_turns`` replies forfeits: it loses, the other seat wins;
* at the end each seat gets its result (``"win"``, ``"draw"``, ``"loss"``) and its reward
  (``game.result_reward(result)``, or with ``zero_sum`` :func:`zero_sum_reward`: +1, -1 and the
  game's draw on that scale; added to the reward of its last reply), and a last observation
  saying how the game ended.

The game's own work (``start_seats``, ``seat_step``) runs through an
:class:`~trl_env._stepping.EnvStepper`, as a one-player rollout's ``reset``/``step`` calls do: a
rollout's ``env_step_timeout`` bounds each call, a call that hangs fails its game (both seats,
``ended_by="error"``, a :class:`~trl_env.error.StepTimeoutError`) and the env is abandoned, and
with ``env_workers`` the games of a round step concurrently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from trl_env._env_results import EnvOutcome
from trl_env._episode import Episode, Task
from trl_env._policies import Policy, Reply, Turn
from trl_env._stepping import EnvStepper, SequentialStepper

__all__ = [
    "MAX_INVALID_IN_A_ROW",
    "Match",
    "SeatPlayer",
    "finish_seats",
    "play_matches",
    "play_seat_turns",
    "zero_sum_reward",
]

MAX_INVALID_IN_A_ROW = 3
"""Invalid replies in a row after which a seat played by a policy forfeits the game."""


def zero_sum_reward(game: Any, result: str) -> float:
    """A result's reward on the zero-sum scale of self-play: +1 for a win, -1 for a loss, and a
    draw where the game puts it between the two (tic-tac-toe's 0.5 on its 0..1 scale is 0).

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> game = gym.make("TextTicTacToe-v0").unwrapped
        >>> [zero_sum_reward(game, result) for result in ("win", "draw", "loss")]
        [1.0, 0.0, -1.0]
    """
    win, loss = float(game.result_reward("win")), float(game.result_reward("loss"))
    if win <= loss:
        raise ValueError(f"the game's win reward ({win}) is not above its loss reward ({loss})")
    return -1.0 + 2.0 * (float(game.result_reward(result)) - loss) / (win - loss)


@dataclass(eq=False)
class SeatPlayer:
    """One seat of one game, played by a policy, with the seat's own episode (conversation).

    Attributes:
        env: The game's env (``env.unwrapped`` is a :class:`~trl_env._two_player.TwoPlayerGame`);
            it is the ``Turn.env`` the policy gets, so the env's own policies (``random_action``,
            ``oracle_action``, scripted players) play for whichever seat is to move.
        seat: The seat, 0 or 1.
        policy: Chooses the seat's replies.
        episode: The seat's record: its transcript, rewards, turns and (for a model) tokens.
        result: ``"win"``, ``"draw"`` or ``"loss"`` once the game is over (``None`` before, or
            after a game error).
        error: What went wrong when the game itself failed.
        actions: The seat's actions as played, kept with or without a transcript.
        zero_sum: Score the result with :func:`zero_sum_reward` instead of the game's own
            ``result_reward`` (self-play's returns).
    """

    env: gym.Env[str, str]
    seat: int
    policy: Policy
    episode: Episode
    zero_sum: bool = False
    result: str | None = None
    error: str | None = None
    actions: list[str] = field(default_factory=list)
    observation: str = ""
    invalid_in_a_row: int = 0
    finished: bool = False
    _pending: float = 0.0  # rewards of replies not yet shown to the seat with an observation
    _asked: bool = False
    _invalid: bool = field(default=False, repr=False)

    @property
    def game(self) -> Any:
        """The two-player game (the unwrapped env)."""
        return self.env.unwrapped

    def turn(self) -> Turn:
        """The seat's turn, as its policy sees it: its own last observation and episode."""
        info = {"seat": self.seat, "seat_name": self.game.seat_names[self.seat]}
        return Turn(self.env, self.episode, self.observation, info)

    def _entry(self, text: str, reward: float | None = None) -> dict[str, Any]:
        entry: dict[str, Any] = {"role": "env", "text": text}
        if reward is not None:
            entry["reward"] = reward
        if self._invalid:
            entry["invalid_action"] = True
        return entry

    def take_observation(self) -> None:
        """Read what the seat has been told since it last moved (its turn has come)."""
        self.observation = self.game.seat_observation(self.seat)
        reward = self._pending if self._asked else None
        if self.episode.transcript is not None:
            self.episode.transcript.append(self._entry(self.observation, reward))
        observe = getattr(self.policy, "observe", None)
        if self._asked and callable(observe):  # a model appends it to the seat's token stream
            observe(self.episode, EnvOutcome(self.observation, self._pending))
        self._pending, self._invalid = 0.0, False

    def play(self, reply: str | Reply | None, max_invalid: int) -> None:
        """Play the policy's reply for the seat (or forfeit for a seat that stopped)."""
        action = self.accept(reply)
        if action is not None:
            self.apply(self.game.seat_step(self.seat, action), max_invalid)

    def accept(self, reply: str | Reply | None) -> str | None:
        """Record the policy's reply; the action to play with ``seat_step``, or ``None`` when
        the seat forfeits instead (no reply, an error, its token budget spent)."""
        self._asked = True
        if reply is None:
            reply = Reply(None, ended_by="stopped")
        elif isinstance(reply, str):
            reply = Reply(reply)
        if reply.action is not None:
            self.episode.turns += 1
            self.actions.append(reply.action)  # kept without a transcript too (distinct games)
            if self.episode.transcript is not None:
                self.episode.transcript.append(
                    {"role": "agent", **reply.details, "action": reply.action}
                )
        if reply.ended_by is not None or reply.action is None:
            self.episode.ended_by = reply.ended_by or "stopped"
            self.episode.error = reply.error
            why = {"token_budget": "ran out of tokens", "error": "its policy failed"}
            self.forfeit(why.get(self.episode.ended_by, "stopped playing"))
            return None
        return reply.action

    def apply(self, step: Any, max_invalid: int) -> None:
        """Record what the seat's move did (a :class:`~trl_env._two_player.SeatStep`)."""
        self.episode.rewards.append(float(step.reward))
        self._pending += float(step.reward)
        self._invalid = bool(step.invalid)
        self.episode.invalid_actions += bool(step.invalid)
        self.invalid_in_a_row = self.invalid_in_a_row + 1 if step.invalid else 0
        if self.invalid_in_a_row >= max_invalid and self.game.current_seat == self.seat:
            self.forfeit(f"{self.invalid_in_a_row} invalid replies in a row")

    def forfeit(self, reason: str) -> None:
        """The seat gives the game up: it loses, the other seat wins."""
        self.game.forfeit(self.seat, reason)

    def finish(self) -> None:
        """The game is over: record the seat's last observation, result and reward."""
        if self.finished:
            return
        self.finished = True
        text = self.game.seat_observation(self.seat)
        self.result = self.game.seat_result(self.seat)
        final = 0.0
        if self.result is not None:
            final = (zero_sum_reward(self.game, self.result) if self.zero_sum
                     else float(self.game.result_reward(self.result)))  # fmt: skip
        if self.episode.rewards:
            self.episode.rewards[-1] += final  # the result is the return of its last reply
        else:
            self.episode.rewards.append(final)
        if self.episode.transcript is not None:
            entry = self._entry(text, self._pending + final)
            entry["result"] = self.result
            self.episode.transcript.append(entry)
        self.episode.ended_by = self.episode.ended_by or "terminated"
        self.episode.success = self.result == "win"
        self.episode.episode_return = float(sum(self.episode.rewards))
        self.release()

    def release(self) -> None:
        """Let the policy drop what it keeps for this seat's episode (a model's token inputs)."""
        forget = getattr(self.policy, "forget", None)
        if callable(forget):
            forget(self.episode)


def _ask(policy: Policy, players: Sequence[SeatPlayer]) -> list[str | Reply | None]:
    try:
        replies = list(policy.act([player.turn() for player in players]))
    except Exception as error:  # one failing policy forfeits its own seats only
        message = f"policy raised {type(error).__name__}: {error}"
        return [Reply(None, ended_by="error", error=message) for _ in players]
    if len(replies) != len(players):
        raise ValueError(f"the policy gave {len(replies)} replies for {len(players)} turns")
    return replies


def _seat_step(env: gym.Env[str, str], move: tuple[int, str]) -> Any:
    seat, action = move
    return env.unwrapped.seat_step(seat, action)  # type: ignore[attr-defined]


def _start_seats(env: gym.Env[str, str], seed: int | None) -> int:
    game: Any = env.unwrapped
    game.start_seats(seed)
    return int(game.current_seat)


def play_seat_turns(
    players: Sequence[SeatPlayer],
    *,
    max_invalid: int = MAX_INVALID_IN_A_ROW,
    max_turns: int | None = None,
    stepper: EnvStepper | None = None,
) -> None:
    """Play one move for each player, whose seat is to move in its game.

    Each seat first reads its own new observation; then every distinct policy is asked once, for
    the turns of all its seats together (in the order given), and each reply is played for its
    seat. A game that raises marks its players' ``error`` (and ``episode.ended_by="error"``);
    the others go on.

    Args:
        players: Seats to move, at most one per game.
        max_invalid: Invalid replies in a row that forfeit a seat's game.
        max_turns: Replies after which a seat forfeits instead of replying again.
        stepper: Runs the seats' ``seat_step`` calls (default: one after the other, no time
            limit); a call that fails or times out fails its game.
    """
    groups: dict[int, list[SeatPlayer]] = {}
    for player in players:
        try:
            if player.game.current_seat != player.seat:
                raise ValueError(f"seat {player.seat} is not to move")
            if max_turns is not None and player.episode.turns >= max_turns:
                player.episode.ended_by = "max_turns"
                player.forfeit(f"reached its turn limit ({max_turns} replies)")
                continue
            player.take_observation()
            if player.episode.done:  # a model whose token budget the observation used up
                player.forfeit("ran out of tokens")
                continue
        except Exception as error:
            _game_failed(player, error)
            continue
        groups.setdefault(id(player.policy), []).append(player)
    moves: list[tuple[SeatPlayer, str]] = []
    for group in groups.values():
        for player, reply in zip(group, _ask(group[0].policy, group), strict=True):
            try:
                action = player.accept(reply)
            except Exception as error:
                _game_failed(player, error)
                continue
            if action is not None:
                moves.append((player, action))
    outcomes = (stepper or SequentialStepper()).map(
        _seat_step, [player.env for player, _ in moves], [(p.seat, a) for p, a in moves]
    )
    for (player, _), outcome in zip(moves, outcomes, strict=True):
        try:
            if outcome.error is not None:
                raise outcome.error
            player.apply(outcome.value, max_invalid)
        except Exception as error:
            _game_failed(player, error)


def _game_failed(player: SeatPlayer, error: Exception | str) -> None:
    player.error = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    player.episode.ended_by, player.episode.error = "error", player.error
    player.finished = True
    player.release()


def finish_seats(players: Sequence[SeatPlayer]) -> None:
    """Record the end of the game for each player (its game is over)."""
    for player in players:
        if player.error is None:
            try:
                player.finish()
            except Exception as error:
                _game_failed(player, error)


@dataclass(eq=False)
class Match:
    """One game between two policies: both seats' players, and who moved first.

    Attributes:
        task: The game (env ID, seed, kwargs).
        players: The two seats' players, by seat.
        first_seat: The seat that moved first.
    """

    task: Task
    players: tuple[SeatPlayer, SeatPlayer]
    first_seat: int

    @property
    def error(self) -> str | None:
        """What went wrong if the game failed (its seats have no result then)."""
        return next((player.error for player in self.players if player.error), None)

    @property
    def over(self) -> bool:
        """Whether both seats have finished."""
        return all(player.finished for player in self.players)


def play_matches(
    envs: Sequence[gym.Env[str, str]],
    tasks: Sequence[Task],
    movers: Sequence[tuple[Policy, Policy]],
    *,
    max_turns: int | None = None,
    max_invalid: int = MAX_INVALID_IN_A_ROW,
    record_transcripts: bool = True,
    zero_sum: bool = False,
    stepper: EnvStepper | None = None,
) -> list[Match]:
    """Play one game per env, all together, every seat played from outside by a policy.

    Each game starts with ``env.unwrapped.start_seats(task.seed)``; the seat that is then to move
    gets ``movers[i][0]`` and the other seat ``movers[i][1]``. Every round plays one move in
    each game still running, with one ``act`` call per distinct policy
    (:func:`play_seat_turns`); the same policy object in several seats (a model against itself)
    answers all of them in one call.

    Args:
        envs: One env per game (two-player games).
        tasks: The games' tasks (their seeds start the games).
        movers: Per game, the policy that moves first and the one that moves second.
        max_turns: Replies per seat after which it forfeits (``None``: no limit).
        max_invalid: Invalid replies in a row after which a seat forfeits.
        record_transcripts: Keep each seat's transcript.
        zero_sum: Score results +1/-1 (:func:`zero_sum_reward`) instead of the game's rewards.
        stepper: Runs the games' ``start_seats`` and ``seat_step`` calls (default: one after
            the other, no time limit). A call that fails or times out fails its game; the caller
            closes the envs of failed games with ``stepper.close_env`` (a hung call may still
            hold one).

    Returns:
        The matches, in the order of ``envs``.
    """
    stepper = stepper or SequentialStepper()
    starts = stepper.map(_start_seats, envs, [task.seed for task in tasks])
    matches: list[Match] = []
    for env, task, (first, second), start in zip(envs, tasks, movers, starts, strict=True):
        error, first_seat = None, 0
        if start.error is not None:  # a game that cannot start is a failed match
            error = f"{type(start.error).__name__}: {start.error}"
        else:
            first_seat = int(start.value)  # type: ignore[arg-type]
        players = [
            SeatPlayer(env, seat, first if seat == first_seat else second,
                       Episode(task, transcript=[] if record_transcripts else None),
                       zero_sum=zero_sum)
            for seat in (0, 1)
        ]  # fmt: skip
        if error is not None:
            for player in players:
                _game_failed(player, error)
        matches.append(Match(task, (players[0], players[1]), first_seat))
    while True:
        movers_now: list[SeatPlayer] = []
        for match in matches:
            if match.over:
                continue
            if match.error is not None:  # the game failed: its other seat stops too
                for player in match.players:
                    if not player.finished:
                        _game_failed(player, match.error)
                continue
            seat = match.players[0].game.current_seat
            if seat is None:
                finish_seats(match.players)
            else:
                movers_now.append(match.players[seat])
        if not movers_now and all(match.over for match in matches):
            break
        play_seat_turns(movers_now, max_invalid=max_invalid, max_turns=max_turns, stepper=stepper)
    return matches
