"""Blackjack (gymnasium's ``Blackjack-v1``) as a text env: ``TextBlackjack-v1``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from gymnasium.envs.toy_text.blackjack import BlackjackEnv
from trl_env.envs.toy_text._adapter import ToyTextEnv
from trl_env.envs.toy_text._solvers import basic_strategy

__all__ = ["TextBlackjackEnv"]

_CARD_NAMES = {1: "A", 10: "10"}


def _card(value: int) -> str:
    return _CARD_NAMES.get(int(value), str(int(value)))


def _describe_blackjack(observation: tuple[int, int, int]) -> str:
    player_sum, dealer_card, usable_ace = (int(x) for x in observation)
    soft = " (soft: an ace counts as 11)" if usable_ace else ""
    shown = "an ace" if dealer_card == 1 else ("an 8" if dealer_card == 8 else f"a {dealer_card}")
    return f"Your hand totals {player_sum}{soft}. The dealer shows {shown}."


class TextBlackjackEnv(ToyTextEnv):
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
    ``invalid_action`` (bool, every step), ``success`` (bool, every step), ``action`` (the move
    played, str; left out of invalid replies) and ``error`` (str; only on invalid replies).

    ## Version History
    * v1: Initial version, wrapping gymnasium's ``Blackjack-v1``.

    Example:
        >>> import gymnasium as gym
        >>> import trl_env
        >>> env = gym.make("TextBlackjack-v1")
        >>> observation, info = env.reset(seed=3)
        >>> print(observation.splitlines()[-2])
        Your hand totals 7. The dealer shows a 10.
    """

    description = "Gymnasium's Blackjack as text: hit or stick to beat the dealer."
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
