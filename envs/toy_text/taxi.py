"""Taxi (gymnasium's ``Taxi``) as a text env: ``TextTaxi-v3``."""

from __future__ import annotations

from typing import ClassVar

from gymnasium.envs.toy_text.taxi import MAP as TAXI_MAP
from gymnasium.envs.toy_text.taxi import TaxiEnv
from trl_env.envs.toy_text._adapter import ToyTextEnv
from trl_env.envs.toy_text._solvers import cached_policy

__all__ = ["TextTaxiEnv"]

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


class TextTaxiEnv(ToyTextEnv):
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
    Gymnasium's ``prob`` (float) and ``action_mask`` (int8 array), both left out of invalid replies;
    ``invalid_action`` (bool, every step), ``success`` (bool, every step), ``action`` (the move
    played, str; left out of invalid replies) and ``error`` (str; only on invalid replies).

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

    description = "Gymnasium's Taxi as text: pick up a passenger and drop them at their stop."
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
        if is_rainy or fickle_passenger:  # keyword arguments of gymnasium >= 1.2 only
            game = TaxiEnv(is_rainy=is_rainy, fickle_passenger=fickle_passenger)
        else:
            game = TaxiEnv()
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
        return int(cached_policy(key, self.game.P)[self.game.s])  # type: ignore[attr-defined]
