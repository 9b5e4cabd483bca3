"""TextArena single-player games as text environments: a fresh, privately seeded game per reset."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import gymnasium as gym
import numpy as np
from trl_env.envs._common import check_render_mode, reset_needed
from trl_env.envs.bridges._isolation import GlobalRandomState, import_extra, quiet
from trl_env.envs.bridges._tables import TEXTARENA_GAMES

from trl_env.spaces import DEFAULT_MAX_LENGTH, TextSpace

__all__ = ["MAX_ACTION_CHARS", "TextArenaEnv"]

MAX_ACTION_CHARS = 4_000
"""Longer replies are refused before they reach the game: some TextArena games read moves with
regular expressions like ``.*\\[(\\d+)\\].*``, which take quadratic time (hours on a 1 MB reply)."""

_PLACEHOLDERS = {"{d}": "0123456789", "{L}": "ABC"}

_GAME_LINES = {game.name: game.description for game in TEXTARENA_GAMES}
"""Each bridged game's line for ``trl-env list``, by TextArena name."""


@contextmanager
def _recording_invalid_moves(game: Any, verdicts: list[str]) -> Iterator[None]:
    """Append TextArena's reason to ``verdicts`` whenever the game calls an invalid move.

    TextArena tells a rejected move only through ``state.set_invalid_move(reason)`` (its flag is
    cleared again before ``step`` returns), so the call itself is what is recorded, on this game
    object only and only for the ``with`` block (the model's own move, not scripted opponents').
    """
    state = getattr(game, "state", None)
    original = getattr(state, "set_invalid_move", None)
    if state is None or not callable(original):
        yield
        return

    def record(*args: Any, **kwargs: Any) -> Any:
        verdicts.append(str(kwargs.get("reason", args[0] if args else "invalid move")))
        return original(*args, **kwargs)

    state.set_invalid_move = record
    try:
        yield
    finally:
        del state.set_invalid_move  # the class's method again


class TextArenaEnv(gym.Env[str, str]):
    """One TextArena single-player game as a text env.

    ## Description
    Each ``reset`` builds a *new* game object from TextArena's registry (``game``, like
    ``"TowerOfHanoi-v0"``) with no TextArena wrapper, so nothing is kept across episodes (its
    wrappers keep the history). The game is seeded from ``self.np_random``, and every call into
    TextArena runs on a private copy of the global ``random``/``numpy.random`` states (TextArena
    reseeds and draws from the global ones), so envs do not interfere and user code that seeds
    the global generators changes nothing. Registered as ``TextArena/<Name>-v0``.

    ## Action Space
    Free text, passed to the game as is (TextArena's games read ``[bracketed]`` moves). A move the
    game rejects gets TextArena's own in-band feedback; the game decides when too many invalid
    moves end it. Either way the step reports ``info["invalid_action"]`` (with TextArena's reason
    in ``info["error"]``) and costs ``invalid_action_penalty``, like a native env's invalid reply,
    so ``LimitInvalidActions`` and the rollout's invalid-reply metrics see it. A reply over
    :data:`MAX_ACTION_CHARS` characters never reaches the game: it gets feedback,
    ``info["invalid_action"]`` and the penalty, and uses a turn.

    ## Observation Space
    Text: the messages TextArena sends the player since the last step (rules, board, feedback),
    joined by blank lines; the player's own move is not echoed back.

    ## Rewards
    TextArena's final reward for the player (1 for a win; games give a loss -1, 0 or a completion
    fraction), on the last step; 0 before; minus ``invalid_action_penalty`` on a step with an
    invalid move.

    ## Episode End
    Terminated when TextArena ends the game; truncated after ``max_episode_steps`` turns.

    ## Arguments
    ```python
    gym.make("TextArena/TowerOfHanoi-v0", game_kwargs={"num_disks": 4},
             invalid_action_penalty=0.1, render_mode="ansi")
    ```
    ``game_kwargs`` override TextArena's registered arguments; ``moves`` are the templates
    :meth:`random_action` fills (``{d}`` a digit, ``{L}`` a letter A-C).

    ## Info
    ``game``, ``won`` (final reward of at least 1), ``reason`` (TextArena's, once ended),
    ``turn``.

    ## Version History
    * v0: Initial version (TextArena 0.7.4).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    num_players = 1
    """Players of the TextArena game; the model is player 0, subclasses script the others."""

    @classmethod
    def description(cls, arguments: Mapping[str, Any]) -> str:
        """One line for ``trl-env list``: the game's line from the bridge's table.

        A classmethod, not a template (see :func:`trl_env.envs.env_description`): the line is
        class-level data picked by the ``game`` argument, read without importing TextArena.
        """
        name = str(arguments.get("game", "")).removesuffix("-v0")
        return f"TextArena {name}: {_GAME_LINES.get(name, 'a TextArena game.')}"

    def __init__(
        self,
        render_mode: str | None = None,
        *,
        game: str,
        game_kwargs: dict[str, Any] | None = None,
        moves: tuple[str, ...] = ("[{d}]",),
        invalid_action_penalty: float = 0.1,
    ) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        if not invalid_action_penalty >= 0:
            raise ValueError(f"invalid_action_penalty must be >= 0, got {invalid_action_penalty}")
        self.invalid_action_penalty = float(invalid_action_penalty)
        library = import_extra("textarena", "textarena", f"the TextArena game {game!r}")
        registry = library.envs.registration.ENV_REGISTRY
        if game not in registry:
            raise gym.error.Error(f"TextArena has no game {game!r}")
        spec = registry[game]
        entry_point = spec.entry_point
        if isinstance(entry_point, str):  # "module:Class", as TextArena's own make resolves it
            module, _, name = entry_point.partition(":")
            entry_point = getattr(importlib.import_module(module), name)
        self._game_class, self._registered_kwargs = entry_point, dict(spec.kwargs)
        self.render_mode = render_mode
        self.game, self.game_kwargs = game, dict(game_kwargs or {})
        self.moves = tuple(moves)
        self.observation_space = TextSpace(1_000_000)
        self.action_space = TextSpace(DEFAULT_MAX_LENGTH)
        self._game: Any = None
        self._rng_copy = GlobalRandomState(0)
        self._done = False
        self.turn = 0
        self._last_observation = ""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a new game seeded from the env's generator; return its opening messages."""
        super().reset(seed=seed)
        game_seed = int(self.np_random.integers(2**31))
        self._rng_copy = GlobalRandomState(game_seed)
        with self._isolated():
            self._game = self._game_class(**{**self._registered_kwargs, **self.game_kwargs})
            self._game.reset(num_players=self.num_players, seed=game_seed)
            observation = self._read_messages()
        self._done, self.turn = False, 0
        self._last_observation = observation
        return observation, {"game": self.game, "turn": 0, "won": False}

    @contextmanager
    def _isolated(self) -> Iterator[None]:
        """Run TextArena code on the game's private global random state, printing nothing."""
        with self._rng_copy.active(), quiet():
            yield

    def _read_messages(self, ending: str | None = None, player: int = 0) -> str:
        """The messages ``player`` (the model: 0) was sent since it last read, as one text."""
        observations = self._game.state.observations
        messages, observations[player] = observations[player], []
        # The player's own move comes back as a PLAYER_ACTION message: the model wrote it already.
        texts = [
            str(text).strip()
            for _, text, kind in messages
            if getattr(kind, "name", None) != "PLAYER_ACTION"
        ]
        if ending is not None:
            texts.append(f"Game over: {ending}")
        return "\n\n".join(text for text in texts if text) or "(no message)"

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Play one move. Never raises on any string ``action``."""
        if self._game is None or self._done:
            raise reset_needed(f"TextArena/{self.game}", started=self._game is not None)
        self.turn += 1
        info: dict[str, Any] = {"game": self.game, "turn": self.turn, "won": False}
        if len(action) > MAX_ACTION_CHARS:
            info.update(invalid_action=True, error="reply too long")
            observation = (
                f"Invalid move: your reply is {len(action)} characters long; the game reads at "
                f"most {MAX_ACTION_CHARS}. Reply with your move in square brackets."
            )
            self._last_observation = observation
            return observation, -self.invalid_action_penalty, False, False, info
        reward = 0.0
        verdicts: list[str] = []
        try:
            with self._isolated(), _recording_invalid_moves(self._game, verdicts):
                done, _ = self._game.step(action)
            done = done or self._play_opponents()  # outside: an opponent may be a model
            ending = None
            with self._isolated():
                if done:
                    rewards, reason = self._final_rewards()
                    reward = float(rewards.get(0, 0.0))
                    ending = info["reason"] = reason
                observation = self._read_messages(ending)
        except Exception as error:  # a game bug ends the episode with a recorded error
            done, observation = True, f"The game failed ({type(error).__name__}); it is over."
            info["error"] = f"{type(error).__name__}: {error}"
        self._done = bool(done)
        info["won"] = reward >= 1.0
        info["invalid_action"] = bool(verdicts)
        if verdicts:
            info["error"] = verdicts[-1]
            reward -= self.invalid_action_penalty
        self._last_observation = observation
        return observation, reward, self._done, False, info

    def _play_opponents(self) -> bool:
        """Play the other players' turns until it is the model's turn; whether the game ended.

        Called outside :meth:`_isolated` (an opponent may be a policy that runs a model): a
        subclass isolates its own calls into TextArena."""
        return False

    def _final_rewards(self) -> tuple[dict[int, float], str]:
        """The players' final rewards and the model's reason the game ended (it is over)."""
        rewards, game_info = self._game.close()
        return dict(rewards or {}), str(game_info.get(0, {}).get("reason", ""))

    def random_action(self, rng: np.random.Generator) -> str:
        """A random move of the game's format (``moves`` templates; drawn with ``rng`` only)."""
        move = self.moves[int(rng.integers(len(self.moves)))]
        for placeholder, alphabet in _PLACEHOLDERS.items():
            while placeholder in move:
                symbol = alphabet[int(rng.integers(len(alphabet)))]
                move = move.replace(placeholder, symbol, 1)
        return move

    def render(self) -> str | None:  # type: ignore[override]
        """The game's last messages (``render_mode="ansi"``)."""
        if self.render_mode != "ansi" or self._game is None:
            return None
        return f"{self.game}, turn {self.turn}\n{self._last_observation}\n"
