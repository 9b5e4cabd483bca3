"""Gymnasium's toy-text games (FrozenLake, Taxi, CliffWalking, Blackjack) as text environments.

Each env here is the gymnasium game, unchanged, seen through this library's wrappers:
:class:`~trl_env.wrappers.DescribeObservation` (state -> text),
:class:`~trl_env.wrappers.ParseAction` (``"[left]"`` -> action, feedback for anything else) and
:class:`~trl_env.wrappers.PrefixFirstObservation` (the rules). The registered class adds one
sentence per step saying what just happened ("You tried to move right but slipped down.") and
shares its ``np_random`` with the game, so everything is seeded by ``reset(seed=...)``.

The game itself is ``env.unwrapped.game`` (a gymnasium ``FrozenLakeEnv``, ``TaxiEnv``, ...), so
its state and transition table ``P`` are at hand. :func:`oracle_action` plays optimally: value
iteration on ``P`` for the grid games, basic strategy for Blackjack.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import partial
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.envs.toy_text.blackjack import BlackjackEnv
from gymnasium.envs.toy_text.cliffwalking import CliffWalkingEnv
from gymnasium.envs.toy_text.frozen_lake import MAPS, FrozenLakeEnv
from gymnasium.envs.toy_text.taxi import MAP as TAXI_MAP
from gymnasium.envs.toy_text.taxi import TaxiEnv

from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace
from trl_env.wrappers import DescribeObservation, ParseAction, PrefixFirstObservation

__all__ = [
    "TextBlackjackEnv",
    "TextCliffWalkingEnv",
    "TextFrozenLakeEnv",
    "TextTaxiEnv",
    "basic_strategy",
    "oracle_action",
    "value_iteration",
]

_OBSERVATION_LENGTH = 4096
_DESCRIPTION_LENGTH = 2048
_COMPASS = {"left": "west", "right": "east", "up": "north", "down": "south"}
_GRID_SYNONYMS = {
    "left": ["west", "l", "w"],
    "down": ["south", "d", "s"],
    "right": ["east", "r", "e"],
    "up": ["north", "u", "n"],
}


# --- oracles ------------------------------------------------------------------------------------


def value_iteration(
    P: Mapping[int, Mapping[int, Sequence[tuple[float, int, float, bool]]]],
    *,
    gamma: float = 0.99,
    tol: float = 1e-10,
    max_iterations: int = 100_000,
) -> np.ndarray:
    """Optimal greedy policy of a tabular model in gymnasium's toy-text ``P`` format.

    Args:
        P: ``P[state][action] = [(probability, next_state, reward, terminated), ...]``.
        gamma: Discount; below 1 so that, among policies that succeed, shorter ones win.
        tol: Stop when no state value changes by more than this.
        max_iterations: Safety bound on the number of sweeps.

    Returns:
        ``policy[state]``: the best action index (the lowest one among ties).

    Example:
        >>> from gymnasium.envs.toy_text import FrozenLakeEnv
        >>> policy = value_iteration(FrozenLakeEnv(is_slippery=False).P)
        >>> [int(a) for a in policy[:4]]  # 0 left, 1 down, 2 right, 3 up
        [1, 2, 1, 0]
    """
    n_states = len(P)
    n_actions = len(P[0])
    rows = [
        (s, a, p, s2, r, done)
        for s in range(n_states)
        for a in range(n_actions)
        for p, s2, r, done in P[s][a]
    ]
    s, a, p, s2, r, done = (np.array(column) for column in zip(*rows, strict=True))
    index = s * n_actions + a
    expected_reward = np.bincount(index, weights=p * r, minlength=n_states * n_actions)
    keep = p * gamma * (1.0 - done.astype(float))
    values = np.zeros(n_states)
    q = expected_reward
    for _ in range(max_iterations):
        q = expected_reward + np.bincount(
            index, weights=keep * values[s2], minlength=n_states * n_actions
        )
        new_values = q.reshape(n_states, n_actions).max(axis=1)
        if np.max(np.abs(new_values - values)) <= tol:
            values = new_values
            break
        values = new_values
    return q.reshape(n_states, n_actions).argmax(axis=1)


_POLICIES: dict[Hashable, np.ndarray] = {}


def _cached_policy(key: Hashable, P: Any) -> np.ndarray:
    # Computed once per process and game configuration (never in reset).
    if key not in _POLICIES:
        _POLICIES[key] = value_iteration(P)
    return _POLICIES[key]


def basic_strategy(player_sum: int, dealer_card: int, usable_ace: bool) -> int:
    """Blackjack basic strategy for hit/stick only (infinite deck, dealer stands on 17).

    Args:
        player_sum: The player's total (an usable ace counted as 11).
        dealer_card: The dealer's face-up card, 1 (ace) to 10.
        usable_ace: Whether the player's total counts an ace as 11.

    Returns:
        1 to hit, 0 to stick.

    Example:
        >>> basic_strategy(16, 10, False), basic_strategy(16, 6, False), basic_strategy(18, 9, True)
        (1, 0, 1)
    """
    dealer = 11 if dealer_card == 1 else dealer_card
    if usable_ace:
        if player_sum >= 19:
            return 0
        return int(player_sum <= 17 or dealer >= 9)
    if player_sum >= 17:
        return 0
    if player_sum >= 13:
        return int(dealer >= 7)
    if player_sum == 12:
        return int(not 4 <= dealer <= 6)
    return 1


def oracle_action(env: gym.Env[str, str]) -> str:
    """The optimal reply in the current state of any env of this module.

    Grid games (FrozenLake, Taxi, CliffWalking) follow the value-iteration policy of the game's
    transition table (optimal, also when slippery or rainy); Blackjack follows
    :func:`basic_strategy`.

    Args:
        env: A ``TextFrozenLake-v1``, ``TextTaxi-v3``, ``TextCliffWalking-v1`` or
            ``TextBlackjack-v1`` env (wrapped or not), after ``reset``.

    Returns:
        The action as the model should write it, e.g. ``"[right]"``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextFrozenLake-v1", is_slippery=False)
        >>> _ = env.reset(seed=0)
        >>> oracle_action(env)
        '[down]'
    """
    game_env = env.unwrapped
    if not isinstance(game_env, _ToyTextEnv):
        raise TypeError(f"oracle_action needs an env of {__name__}, got {game_env!r}")
    return f"[{game_env.actions[game_env.oracle_index()]}]"


# --- the shared adapter -------------------------------------------------------------------------


def _position(state: int, ncol: int) -> str:
    row, col = divmod(int(state), ncol)
    return f"row {row + 1}, column {col + 1}"


def _grid_move(state: int, direction: tuple[int, int], shape: tuple[int, int]) -> int:
    row, col = divmod(int(state), shape[1])
    row = min(max(row + direction[0], 0), shape[0] - 1)
    col = min(max(col + direction[1], 0), shape[1] - 1)
    return row * shape[1] + col


class _ToyTextEnv(gym.Env[str, str]):
    """A gymnasium toy-text game behind the text wrappers (see the subclasses)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}
    actions: ClassVar[tuple[str, ...]]
    synonyms: ClassVar[dict[str, list[str]]]

    def __init__(
        self,
        game: gym.Env[Any, Any],
        *,
        render_mode: str | None,
        describe: Callable[[Any], str],
        rules: str,
        invalid_action_penalty: float,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if invalid_action_penalty < 0:
            raise ValueError(f"invalid_action_penalty must be >= 0, got {invalid_action_penalty}")
        self.render_mode = render_mode
        self.invalid_action_penalty = float(invalid_action_penalty)
        self.game = game
        """The gymnasium game being played (no render mode; its state is the source of truth)."""
        self._describe = describe
        stack: gym.Env[Any, Any] = DescribeObservation(
            game, describe, max_length=_DESCRIPTION_LENGTH
        )
        stack = ParseAction(
            stack,
            self.actions,
            synonyms=self.synonyms,
            invalid_action_penalty=invalid_action_penalty,
        )
        self._text_env = PrefixFirstObservation(stack, rules)
        assert self._text_env.observation_space.max_length + 512 <= _OBSERVATION_LENGTH
        self.observation_space = TextSpace(_OBSERVATION_LENGTH)
        self.action_space = TextSpace(DEFAULT_MAX_LENGTH)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a new game and return the rules, the state and the reply format."""
        super().reset(seed=seed)
        self.game.np_random = self.np_random  # one generator drives the game and this env
        return self._text_env.reset(options=options)

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        """Play one reply. Never raises on any string ``action``."""
        before = self._snapshot()
        observation, reward, terminated, truncated, info = self._text_env.step(action)
        reward = float(reward)
        if not info["invalid_action"]:
            news = self._narrate(before, info["action"], reward, terminated)
            observation = f"{news}\n{observation}"
        # Every step says whether the game was won, so success rates need no per-game rule.
        info["success"] = bool(terminated and self._is_success(reward))
        return observation, reward, terminated, truncated, info

    def render(self) -> str | None:  # type: ignore[override]
        """The current state as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        return self._describe(self._game_observation()) + "\n"

    def close(self) -> None:
        """Close the game."""
        self._text_env.close()

    def oracle_index(self) -> int:
        """The index into :attr:`actions` of the optimal action now (see :func:`oracle_action`)."""
        raise NotImplementedError

    # Subclass hooks.
    def _is_success(self, final_reward: float) -> bool:
        """Whether an episode that terminated with ``final_reward`` was won."""
        return final_reward > 0

    def _snapshot(self) -> Any:
        return int(getattr(self.game, "s", 0))

    def _game_observation(self) -> Any:
        return int(self.game.s)  # type: ignore[attr-defined]

    def _narrate(self, before: Any, action: str, reward: float, terminated: bool) -> str:
        raise NotImplementedError


# --- FrozenLake ---------------------------------------------------------------------------------

_LAKE_MOVES = {"left": (0, -1), "down": (1, 0), "right": (0, 1), "up": (-1, 0)}
_LAKE_ACTIONS = ("left", "down", "right", "up")


def _describe_lake(rows: tuple[str, ...], state: int) -> str:
    row, col = divmod(int(state), len(rows[0]))
    grid = [list(line) for line in rows]
    grid[row][col] = "@"
    return (
        "\n".join("".join(line) for line in grid)
        + f"\nYou (@) are at {_position(state, len(rows[0]))}."
    )


class TextFrozenLakeEnv(_ToyTextEnv):
    """Frozen Lake: cross a frozen lake from the start to the goal without falling into a hole.

    ## Description
    Gymnasium's ``FrozenLake-v1`` (``FrozenLakeEnv``), unchanged, as text. The lake is a grid of
    ``S`` (start), ``F`` (frozen, safe), ``H`` (hole) and ``G`` (goal); the player is drawn as
    ``@``. On slippery ice (the default, as in gymnasium) a move goes in the chosen direction with
    probability ``success_rate`` and otherwise to one of the two perpendicular directions.

    ## Action Space
    Free text (:class:`trl_env.TextSpace`): ``[left]``, ``[down]``, ``[right]`` or ``[up]``
    (case-insensitive; the last bracketed word wins; a bare word works too; ``west``, ``south``,
    ``east``, ``north`` and ``l``/``d``/``r``/``u`` are accepted). Anything else is an *invalid
    action*: the game does not move, the reply gets feedback listing the legal actions,
    ``info["invalid_action"]`` is set and the reward is ``-invalid_action_penalty``.

    ## Observation Space
    Text. The first observation states the rules, the map and the reply format. Each later one is
    only the news: what the move did (including slips), the map with ``@`` and the position.

    ## Rewards
    1 for reaching the goal, 0 otherwise (gymnasium's schedule); ``-invalid_action_penalty`` for an
    invalid reply. The maximum return is 1.

    ## Episode End
    Terminated on reaching the goal or falling into a hole. Truncated by ``TimeLimit`` after 100
    steps (4x4) or 200 steps (8x8), invalid replies included.

    ## Arguments
    ```python
    gym.make("TextFrozenLake-v1", map_name="4x4", is_slippery=True, success_rate=1/3,
             invalid_action_penalty=0.1, render_mode="ansi")
    gym.make("TextFrozenLake8x8-v1")  # map_name="8x8", max_episode_steps=200
    ```
    ``map_name`` is ``"4x4"`` or ``"8x8"`` (gymnasium's maps); ``desc`` (a list of row strings)
    gives a custom map instead.

    ## Info
    Gymnasium's ``prob`` of the transition, ``invalid_action`` (with ``error``), ``action``.

    ## Version History
    * v1: Initial version, wrapping gymnasium's ``FrozenLake-v1``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextFrozenLake-v1", is_slippery=False)
        >>> _ = env.reset(seed=0)
        >>> print(env.step("[right]")[0])
        You moved right.
        S@FF
        FHFH
        FFFH
        HFFG
        You (@) are at row 1, column 2.
    """

    actions = _LAKE_ACTIONS
    synonyms: ClassVar[dict[str, list[str]]] = _GRID_SYNONYMS

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        map_name: str = "4x4",
        desc: Sequence[str] | None = None,
        is_slippery: bool = True,
        success_rate: float = 1.0 / 3.0,
        invalid_action_penalty: float = 0.1,
    ) -> None:
        if desc is None and map_name not in MAPS:
            raise ValueError(f"map_name must be one of {sorted(MAPS)}, got {map_name!r}")
        rows = tuple(desc if desc is not None else MAPS[map_name])
        self.is_slippery = bool(is_slippery)
        self.success_rate = float(success_rate)
        self._rows = rows
        game = FrozenLakeEnv(desc=list(rows), is_slippery=is_slippery, success_rate=success_rate)
        slippery = (
            f"The ice is slippery: a move goes the way you chose only with probability "
            f"{success_rate:.2g}; otherwise you slide to one side (left or right of that direction).\n"
            if is_slippery
            else ""
        )
        rules = (
            f"Let's play Frozen Lake. Walk across a frozen lake ({len(rows)} rows x "
            f"{len(rows[0])} columns) from the start S to the goal G without falling into a hole.\n"
            "Map: S start, F frozen ice (safe), H hole, G goal, @ you. Row 1 is the top (north) "
            "row, column 1 the left (west) column.\n"
            f"{slippery}"
            "Reaching G wins (reward 1). Falling into a hole ends the game (reward 0)."
        )
        super().__init__(
            game,
            render_mode=render_mode,
            describe=partial(_describe_lake, rows),
            rules=rules,
            invalid_action_penalty=invalid_action_penalty,
        )

    def _narrate(self, before: int, action: str, reward: float, terminated: bool) -> str:
        after = int(self.game.s)  # type: ignore[attr-defined]
        shape = (len(self._rows), len(self._rows[0]))
        if after == _grid_move(before, _LAKE_MOVES[action], shape):
            message = (
                f"You moved {action}."
                if after != before
                else f"You tried to move {action} but the edge of the lake stopped you."
            )
        else:
            index = _LAKE_ACTIONS.index(action)
            sideways = [
                name
                for name in (_LAKE_ACTIONS[(index - 1) % 4], _LAKE_ACTIONS[(index + 1) % 4])
                if _grid_move(before, _LAKE_MOVES[name], shape) == after
            ]
            slid = f"slid {sideways[0]}" if after != before else "slid against the edge"
            message = f"You tried to move {action} but slipped and {slid}."
        row, col = divmod(after, shape[1])
        if terminated and self._rows[row][col] == "H":
            message += " You fell into a hole. Game over."
        elif terminated:
            message += " You reached the goal. You win!"
        return message

    def oracle_index(self) -> int:
        """The optimal move (value iteration on the game's transition table)."""
        key = ("FrozenLake", self._rows, self.is_slippery, self.success_rate)
        return int(_cached_policy(key, self.game.P)[self.game.s])  # type: ignore[attr-defined]


# --- CliffWalking -------------------------------------------------------------------------------

_CLIFF_ACTIONS = ("up", "right", "down", "left")
_CLIFF_SHAPE = (4, 12)


def _describe_cliff(state: int) -> str:
    rows = []
    for row in range(_CLIFF_SHAPE[0]):
        line = []
        for col in range(_CLIFF_SHAPE[1]):
            if row * _CLIFF_SHAPE[1] + col == state:
                line.append("@")
            elif row == 3 and col == 0:
                line.append("S")
            elif row == 3 and col == 11:
                line.append("G")
            elif row == 3:
                line.append("C")
            else:
                line.append(".")
        rows.append("".join(line))
    return "\n".join(rows) + f"\nYou (@) are at {_position(state, _CLIFF_SHAPE[1])}."


class TextCliffWalkingEnv(_ToyTextEnv):
    """Cliff Walking: walk along a cliff from the start to the goal, taking the shortest safe path.

    ## Description
    Gymnasium's ``CliffWalking-v1`` (``CliffWalkingEnv``, Sutton & Barto example 6.6), unchanged,
    as text. A 4 x 12 grid: start ``S`` bottom-left, goal ``G`` bottom-right, the cliff ``C``
    between them, ``.`` safe ground, ``@`` the player. Stepping onto the cliff costs -100 and
    sends the player back to the start (the episode goes on). With ``is_slippery=True`` a move
    may go to either perpendicular direction instead (each outcome 1/3).

    ## Action Space
    Free text: ``[up]``, ``[right]``, ``[down]`` or ``[left]`` (compass names and single letters
    accepted, case-insensitive, last bracketed word wins). Invalid replies do not move the player,
    get feedback, set ``info["invalid_action"]`` and cost ``invalid_action_penalty``.

    ## Observation Space
    Text: the rules, map and reply format first; then, each step, what the move did (a fall, a
    slip), the map and the position.

    ## Rewards
    -1 per move, -100 for stepping onto the cliff; ``-invalid_action_penalty`` (default 1, as much
    as a move) for an invalid reply. The best return is -13 (the path along the cliff edge).

    ## Episode End
    Terminated on reaching the goal. Truncated by ``TimeLimit`` after 100 steps (gymnasium sets
    none; an LLM episode needs one).

    ## Arguments
    ```python
    gym.make("TextCliffWalking-v1", is_slippery=False, invalid_action_penalty=1.0,
             render_mode="ansi")
    ```

    ## Info
    Gymnasium's ``prob``, ``invalid_action`` (with ``error``), ``action``.

    ## Version History
    * v1: Initial version, wrapping gymnasium's ``CliffWalking-v1``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextCliffWalking-v1")
        >>> _ = env.reset(seed=0)
        >>> print(env.step("[right]")[0].splitlines()[0])
        You stepped onto the cliff and fell (-100). You are back at the start.
    """

    actions = _CLIFF_ACTIONS
    synonyms: ClassVar[dict[str, list[str]]] = _GRID_SYNONYMS

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        is_slippery: bool = False,
        invalid_action_penalty: float = 1.0,
    ) -> None:
        self.is_slippery = bool(is_slippery)
        game = CliffWalkingEnv(is_slippery=is_slippery)
        slippery = (
            "The ground is slippery: a move goes the way you chose only 1/3 of the time; "
            "otherwise you slide to one side.\n"
            if is_slippery
            else ""
        )
        rules = (
            "Let's play Cliff Walking. Walk from the start S (bottom left) to the goal G "
            "(bottom right) of this 4 x 12 grid.\n"
            "Map: S start, G goal, C cliff, . safe ground, @ you. Row 1 is the top (north) row.\n"
            f"{slippery}"
            "Every move costs 1 point. Stepping onto the cliff costs 100 points and sends you "
            "back to the start. Take the shortest path that stays off the cliff."
        )
        super().__init__(
            game,
            render_mode=render_mode,
            describe=_describe_cliff,
            rules=rules,
            invalid_action_penalty=invalid_action_penalty,
        )

    def _is_success(self, final_reward: float) -> bool:
        return True  # the only way the episode terminates is reaching the goal

    def _narrate(self, before: int, action: str, reward: float, terminated: bool) -> str:
        after = int(self.game.s)  # type: ignore[attr-defined]
        if reward <= -100:
            return "You stepped onto the cliff and fell (-100). You are back at the start."
        intended = _grid_move(before, _LAKE_MOVES[action], _CLIFF_SHAPE)
        if after == intended:
            message = (
                f"You moved {action}."
                if after != before
                else f"You tried to move {action} but the edge of the grid stopped you."
            )
        else:
            message = f"You tried to move {action} but slipped."
        if terminated:
            message += " You reached the goal. You win!"
        return message

    def oracle_index(self) -> int:
        """The optimal move (value iteration on the game's transition table)."""
        key = ("CliffWalking", self.is_slippery)
        return int(_cached_policy(key, self.game.P)[self.game.s])  # type: ignore[attr-defined]


# --- Taxi ---------------------------------------------------------------------------------------

_TAXI_ACTIONS = ("south", "north", "east", "west", "pickup", "dropoff")
_TAXI_STOPS = "RGYB"
_TAXI_LOCS = ((0, 0), (0, 4), (4, 0), (4, 3))
_TAXI_MOVES = {"south": (1, 0), "north": (-1, 0), "east": (0, 1), "west": (0, -1)}


def _decode_taxi(state: int) -> tuple[int, int, int, int]:
    state, dest = divmod(int(state), 4)
    state, passenger = divmod(state, 5)
    row, col = divmod(state, 5)
    return row, col, passenger, dest


def _stop(index: int) -> str:
    row, col = _TAXI_LOCS[index]
    return f"{_TAXI_STOPS[index]} (row {row + 1}, column {col + 1})"


def _describe_taxi(state: int) -> str:
    row, col, passenger, dest = _decode_taxi(state)
    grid = [list(line) for line in TAXI_MAP]
    grid[1 + row][2 * col + 1] = "@"
    if passenger == dest:  # only after a successful dropoff
        where = f"The passenger has arrived at {_stop(dest)}."
    elif passenger == 4:
        where = f"The passenger is in the taxi and wants to go to {_stop(dest)}."
    else:
        where = f"The passenger is waiting at {_stop(passenger)} and wants to go to {_stop(dest)}."
    return (
        "\n".join("".join(line) for line in grid)
        + f"\nThe taxi (@) is at row {row + 1}, column {col + 1}. {where}"
    )


class TextTaxiEnv(_ToyTextEnv):
    """Taxi: pick up a passenger and drop them off at their destination.

    ## Description
    Gymnasium's ``Taxi`` (``TaxiEnv``, Dietterich 2000), unchanged, as text. A 5 x 5 grid with
    four stops ``R``, ``G``, ``Y``, ``B``; the taxi is ``@``. ``|`` is a wall that blocks moving
    east or west; ``:`` is open road. The passenger waits at one stop and wants to go to another.
    ``is_rainy`` makes moves skid sideways sometimes; ``fickle_passenger`` lets the passenger
    change their destination once after the first move with them on board.

    ## Action Space
    Free text: ``[south]``, ``[north]``, ``[east]``, ``[west]``, ``[pickup]`` or ``[dropoff]``
    (``down``/``up``/``right``/``left``, ``pick up``, ``drop off`` are accepted; case-insensitive,
    last bracketed word wins). Invalid replies do not move the taxi, get feedback, set
    ``info["invalid_action"]`` and cost ``invalid_action_penalty``.

    ## Observation Space
    Text: the rules, map and reply format first; then, each step, what the action did, the map,
    where the taxi and passenger are and where the passenger wants to go.

    ## Rewards
    -1 per action, +20 for dropping the passenger at their destination (which ends the episode),
    -10 for a pickup or dropoff where none is possible; ``-invalid_action_penalty`` (default 1, as
    much as a move) for an invalid reply. The best return from a start state is ``21 - n`` where
    ``n`` is the length of the shortest action sequence (pickup and dropoff included).

    ## Episode End
    Terminated on a successful dropoff. Truncated by ``TimeLimit`` after 200 steps.

    ## Arguments
    ```python
    gym.make("TextTaxi-v3", is_rainy=False, fickle_passenger=False,
             invalid_action_penalty=1.0, render_mode="ansi")
    ```

    ## Info
    Gymnasium's ``prob`` and ``action_mask``, ``invalid_action`` (with ``error``), ``action``.

    ## Version History
    * v3: Initial version, wrapping gymnasium's ``TaxiEnv`` (``Taxi-v3``, ``Taxi-v4`` since
      gymnasium 1.3: the two differ only in the rainy and fickle variants).

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextTaxi-v3")
        >>> _ = env.reset(seed=1)
        >>> print(env.step("[pickup]")[0].splitlines()[0])
        There is no passenger here to pick up (-10).
    """

    actions = _TAXI_ACTIONS
    synonyms: ClassVar[dict[str, list[str]]] = {
        "south": ["down", "s"],
        "north": ["up", "n"],
        "east": ["right", "e"],
        "west": ["left", "w"],
        "pickup": ["pick up", "pick"],
        "dropoff": ["drop off", "drop"],
    }

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        is_rainy: bool = False,
        fickle_passenger: bool = False,
        invalid_action_penalty: float = 1.0,
    ) -> None:
        self.is_rainy = bool(is_rainy)
        self.fickle_passenger = bool(fickle_passenger)
        game_kwargs = {}
        if is_rainy or fickle_passenger:  # keyword arguments of gymnasium >= 1.2 only
            game_kwargs = {"is_rainy": is_rainy, "fickle_passenger": fickle_passenger}
        game = TaxiEnv(**game_kwargs)
        weather = "It is raining: a move sometimes skids to the side instead.\n" if is_rainy else ""
        fickle = (
            "The passenger may change their mind about the destination once you drive off.\n"
            if fickle_passenger
            else ""
        )
        rules = (
            "Let's play Taxi. Drive the taxi (@) on this 5 x 5 grid to the passenger, pick them "
            "up, drive them to their destination and drop them off.\n"
            "The four stops are R, G, Y and B. A | is a wall: you cannot drive east or west "
            "through it. A : is open road. Row 1 is the top (north) row.\n"
            f"{weather}{fickle}"
            "Every action costs 1 point. A correct dropoff earns 20 points and ends the game. "
            "A pickup or dropoff where it is not possible costs 10 points."
        )
        super().__init__(
            game,
            render_mode=render_mode,
            describe=_describe_taxi,
            rules=rules,
            invalid_action_penalty=invalid_action_penalty,
        )

    def _is_success(self, final_reward: float) -> bool:
        return True  # the only way the episode terminates is a correct drop-off

    def _narrate(self, before: int, action: str, reward: float, terminated: bool) -> str:
        row, col, passenger, dest = _decode_taxi(before)
        new_row, new_col, new_passenger, new_dest = _decode_taxi(self.game.s)  # type: ignore[attr-defined]
        if action == "pickup":
            message = (
                "You picked up the passenger."
                if new_passenger == 4 and passenger != 4
                else "There is no passenger here to pick up (-10)."
            )
        elif action == "dropoff":
            if terminated:
                message = "You dropped the passenger at their destination (+20). You win!"
            elif new_passenger != passenger:
                message = (
                    f"You dropped the passenger at {_TAXI_STOPS[new_passenger]}, "
                    "which is not their destination."
                )
            else:
                message = "You cannot drop off a passenger here (-10)."
        else:
            moved = (new_row - row, new_col - col)
            if moved == _TAXI_MOVES[action]:
                message = f"You drove {action}."
            elif moved == (0, 0):
                message = f"You tried to drive {action} but a wall or the edge stopped you."
            else:
                skid = next(name for name, delta in _TAXI_MOVES.items() if delta == moved)
                message = f"You tried to drive {action} but skidded {skid}."
        if new_dest != dest and not terminated:
            message += (
                f" The passenger changed their mind: they now want to go to {_stop(new_dest)}."
            )
        return message

    def oracle_index(self) -> int:
        """The optimal action (value iteration on the game's transition table)."""
        key = ("Taxi", self.is_rainy)
        return int(_cached_policy(key, self.game.P)[self.game.s])  # type: ignore[attr-defined]


# --- Blackjack ----------------------------------------------------------------------------------

_CARD_NAMES = {1: "A", 10: "10"}


def _card(value: int) -> str:
    return _CARD_NAMES.get(int(value), str(int(value)))


def _describe_blackjack(observation: tuple[int, int, int]) -> str:
    player_sum, dealer_card, usable_ace = (int(x) for x in observation)
    soft = " (soft: an ace counts as 11)" if usable_ace else ""
    shown = "an ace" if dealer_card == 1 else ("an 8" if dealer_card == 8 else f"a {dealer_card}")
    return f"Your hand totals {player_sum}{soft}. The dealer shows {shown}."


class TextBlackjackEnv(_ToyTextEnv):
    """Blackjack: beat the dealer by getting closer to 21 without going over.

    ## Description
    Gymnasium's ``Blackjack-v1`` (``BlackjackEnv``, Sutton & Barto example 5.1), unchanged, as
    text. Cards are drawn with replacement from an infinite deck; 2-10 count their value, J/Q/K
    count 10 (shown as 10), an ace counts 11 unless that would go over 21 (then 1). The dealer
    shows one card. The player hits until they stick or go over 21; then the dealer draws until
    reaching 17 or more.

    ## Action Space
    Free text: ``[hit]`` or ``[stick]`` (``stand``, ``stay``, ``hold``, ``draw`` accepted;
    case-insensitive, last bracketed word wins). Invalid replies deal no card, get feedback, set
    ``info["invalid_action"]`` and cost ``invalid_action_penalty``.

    ## Observation Space
    Text: the rules, the hand and the reply format first; then, each step, the card drawn or the
    dealer's play, and the hand.

    ## Rewards
    +1 win, 0 draw, -1 loss (going over 21 loses at once); with ``sab=False, natural=True`` a
    winning natural (ace and a ten-card) pays 1.5. ``-invalid_action_penalty`` for an invalid
    reply. Basic strategy (:func:`basic_strategy`) averages about -0.05 per hand.

    ## Episode End
    Terminated when the player sticks or goes over 21. Truncated by ``TimeLimit`` after 20 steps
    (only reachable with invalid replies).

    ## Arguments
    ```python
    gym.make("TextBlackjack-v1", sab=True, natural=False, invalid_action_penalty=0.1,
             render_mode="ansi")
    ```
    ``sab=True`` (gymnasium's registered default) follows Sutton & Barto exactly: a natural beats
    a dealer without one. ``natural`` is then ignored.

    ## Info
    ``invalid_action`` (with ``error``), ``action``.

    ## Version History
    * v1: Initial version, wrapping gymnasium's ``Blackjack-v1``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextBlackjack-v1")
        >>> observation, info = env.reset(seed=3)
        >>> print(observation.splitlines()[-2])
        Your hand totals 13. The dealer shows a 10.
    """

    actions = ("stick", "hit")
    synonyms: ClassVar[dict[str, list[str]]] = {
        "stick": ["stand", "stay", "hold"],
        "hit": ["draw", "card"],
    }

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        sab: bool = True,
        natural: bool = False,
        invalid_action_penalty: float = 0.1,
    ) -> None:
        self.sab = bool(sab)
        self.natural = bool(natural)
        game = BlackjackEnv(sab=sab, natural=natural)
        if sab:
            naturals = (
                "A natural (an ace and a 10 as your first two cards) wins unless the dealer "
                "has one too.\n"
            )
        elif natural:
            naturals = "A winning natural (an ace and a 10 as your first two cards) pays 1.5.\n"
        else:
            naturals = ""
        rules = (
            "Let's play Blackjack against the dealer. Cards 2-10 count their value, J, Q and K "
            "count 10, and an ace counts 11 unless that would take you over 21 (then it counts "
            "1). Cards come from an infinite deck.\n"
            "Each turn, hit to take another card, or stick to stop. If you go over 21 you lose at "
            "once. When you stick, the dealer draws until reaching 17 or more; whoever is closer "
            "to 21 wins.\n"
            f"{naturals}"
            "Win: +1. Draw: 0. Loss: -1."
        )
        super().__init__(
            game,
            render_mode=render_mode,
            describe=_describe_blackjack,
            rules=rules,
            invalid_action_penalty=invalid_action_penalty,
        )

    def _snapshot(self) -> Any:
        return None

    def _game_observation(self) -> Any:
        return self.game._get_obs()  # type: ignore[attr-defined]

    def _narrate(self, before: Any, action: str, reward: float, terminated: bool) -> str:
        game: Any = self.game
        if action == "hit":
            message = f"You drew a card: {_card(game.player[-1])}."
            if terminated:
                message += f" Your hand totals {sum(game.player)}: over 21. You lose."
            return message
        dealer = ", ".join(_card(c) for c in game.dealer)
        player_total = self._game_observation()[0]
        dealer_total = _hand_total(game.dealer)
        outcome = {1.0: "You win!", 1.5: "You win with a natural!", 0.0: "It's a draw."}.get(
            float(reward), "You lose."
        )
        bust = " (over 21)" if dealer_total > 21 else ""
        return (
            f"You stick on {player_total}. The dealer's cards: {dealer} "
            f"(total {dealer_total}{bust}). {outcome}"
        )

    def render(self) -> str | None:  # type: ignore[override]
        """Your cards and the dealer's face-up card (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        game: Any = self.game
        cards = ", ".join(_card(c) for c in game.player)
        return f"Your cards: {cards}. {_describe_blackjack(game._get_obs())}\n"

    def oracle_index(self) -> int:
        """Basic strategy (:func:`basic_strategy`) for the current hand."""
        player_sum, dealer_card, usable_ace = self._game_observation()
        return basic_strategy(player_sum, dealer_card, bool(usable_ace))


def _hand_total(cards: Sequence[int]) -> int:
    total = sum(cards)
    return total + 10 if 1 in cards and total + 10 <= 21 else total
