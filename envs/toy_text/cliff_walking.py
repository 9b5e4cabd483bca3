"""CliffWalking (gymnasium's ``CliffWalking-v1``) as a text env: ``TextCliffWalking-v1``."""

from __future__ import annotations

from typing import ClassVar

from gymnasium.envs.toy_text.cliffwalking import CliffWalkingEnv
from trl_env.envs.toy_text._adapter import (
    GRID_MOVES,
    GRID_SYNONYMS,
    ToyTextEnv,
    grid_move,
    position,
)
from trl_env.envs.toy_text._solvers import cached_policy

__all__ = ["TextCliffWalkingEnv"]

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
    return "\n".join(rows) + f"\nYou (@) are at {position(state, _CLIFF_SHAPE[1])}."


class TextCliffWalkingEnv(ToyTextEnv):
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
    Gymnasium's ``prob`` (float; left out of invalid replies), ``invalid_action`` (bool, every
    step), ``success`` (bool, every step), ``action`` (the move played, str; left out of invalid
    replies) and ``error`` (str; only on invalid replies).

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

    description = "Gymnasium's CliffWalking as text: shortest path along a cliff."
    actions = _CLIFF_ACTIONS
    synonyms: ClassVar[dict[str, list[str]]] = GRID_SYNONYMS

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
        intended = grid_move(before, GRID_MOVES[action], _CLIFF_SHAPE)
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
        return int(cached_policy(key, self.game.P)[self.game.s])  # type: ignore[attr-defined]
