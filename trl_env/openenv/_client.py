"""``gym.make("OpenEnv-v0", base_url=URL)``: any OpenEnv server as a ``gymnasium.Env[str, str]``.

One OpenEnv session (a WebSocket connection, with its own env on the server) per episode:
``reset`` closes the previous session and opens a new one, and a finished episode closes its
session at once, so the server holds one session per playing episode. Two gym envs never share a
session (with ``num_generations > 1`` a shared session broke TRL: OpenEnv PR #517).

When the server goes away: ``reset`` tries each server of ``base_url`` in turn (several servers
behind one client list also spread the sessions), and fails with :class:`OpenEnvConnectionError`
if none answers; a ``step`` whose connection breaks fails with the same error (the episode's state
lived in the lost session, so it cannot be resumed), which the rollout records as that episode's
error. The next ``reset`` connects again.

What travels: the action as ``{action_key: action}`` (default ``"message"``, as trl-env servers,
openenv-core's echo template and TextArena expect); the observation string is
``observation[observation_key]`` (default ``"text"``) or, for servers without that field, the
observation as JSON; characters outside the text space (control characters) arrive as
U+FFFD. ``reward`` ``None`` counts as 0; ``terminated`` and ``truncated`` are the served env's
own flags (a trl-env server sends both), and for a server that sends only OpenEnv's ``done``,
``done`` is ``terminated`` unless the observation says ``truncated``; ``info`` holds the server's
``info`` dict and any other field.

This env applies no time limit and no other wrapper of the served env: those are the server's
(``gym.make`` there applies the served ID's spec, so a step answers exactly what the local
``gym.make(env_id)`` answers). Set a limit on the server (``--env-kwargs
'{"max_episode_steps": 4}'``), not with ``gym.make("OpenEnv-v0", max_episode_steps=...)``, which
would add a second ``TimeLimit`` on this side.

Example:
    >>> import gymnasium as gym
    >>> import trl_env
    >>> env = gym.make("OpenEnv-v0", base_url="http://127.0.0.1:8000")  # doctest: +SKIP
    >>> observation, info = env.reset(seed=0)  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from trl_env.error import EpisodeOverError, MissingExtraError, OpenEnvConnectionError
from trl_env.spaces import TextSpace

try:
    from openenv.core.generic_client import GenericEnvClient
    from websockets.exceptions import ConnectionClosed
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openenv", "OpenEnv-v0", "openenv-core") from error

__all__ = ["OpenEnvConnectionError", "OpenEnvTextEnv"]

# Where the next session of each server list starts, shared by every env of the process, so the
# episodes of a rollout spread over the servers instead of all starting with the first.
_next_server: dict[tuple[str, ...], itertools.count[int]] = {}


class _SessionClient(GenericEnvClient):
    """openenv-core's dict client, ending a session with a full WebSocket closing handshake."""

    async def disconnect(self) -> None:
        # openenv-core's client closes its end right after the "close" message, so the server's
        # own close then fails and logs a traceback per episode; wait for the server to close.
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._send({"type": "close"})
                await asyncio.wait_for(self._ws.wait_closed(), timeout=self._connect_timeout)
        await super().disconnect()

    async def _send(self, message: dict[str, Any]) -> None:
        # A server at its session limit answers the opening with an error and closes at once:
        # let the next receive deliver that answer instead of failing on the send.
        with contextlib.suppress(ConnectionClosed):
            await super()._send(message)


class OpenEnvTextEnv(gym.Env[str, str]):
    """A text env whose episodes are sessions of an OpenEnv server.

    Args:
        base_url: The server (``http://host:port``), or a list of servers playing the same env.
        action_key: Field of the action payload that carries the reply.
        observation_key: Field of the observation that is the observation string.
        connect_timeout: Seconds to open a session.
        message_timeout: Seconds to wait for the answer to a ``reset``/``step``.
        max_length: Longest observation/action string of the spaces.
    """

    metadata = {"render_modes": []}  # noqa: RUF012 (gymnasium's convention)

    def __init__(
        self,
        base_url: str | Sequence[str],
        *,
        action_key: str = "message",
        observation_key: str = "text",
        connect_timeout: float = 10.0,
        message_timeout: float = 60.0,
        max_length: int = 1_000_000,
    ) -> None:
        urls = (base_url,) if isinstance(base_url, str) else tuple(base_url)
        if not urls or not all(isinstance(url, str) and url for url in urls):
            raise ValueError(
                "base_url must be a server URL such as 'http://127.0.0.1:8000' or a non-empty "
                f"list of them, got {base_url!r}"
            )
        for name, value in (
            ("connect_timeout", connect_timeout),
            ("message_timeout", message_timeout),
        ):
            if not (isinstance(value, int | float) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")
        if not (isinstance(action_key, str) and isinstance(observation_key, str)):
            raise TypeError("action_key and observation_key must be field names (str)")
        self.base_urls = urls
        self.action_key = action_key
        self.observation_key = observation_key
        self.connect_timeout = connect_timeout
        self.message_timeout = message_timeout
        self._max_length = max_length
        self.observation_space = TextSpace(max_length)
        self.action_space = TextSpace(max_length)
        self.server: str | None = None  # the server of the current session
        self._session: Any = None
        self._playing = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Open a new session (closing the previous one) and reset its env with ``seed``."""
        super().reset(seed=seed)
        self._close_session()
        request: dict[str, Any] = {}
        if seed is not None:
            request["seed"] = seed
        if options:
            request["options"] = options
        result = self._open_session(request)
        self._playing = True
        observation, _, _, _, info = self._parse(result)
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Send ``action`` to the session; the session closes when the episode ends."""
        if not self._playing:
            raise EpisodeOverError("the episode has ended (or never started); call reset() first")
        # Lone surrogates cannot travel as UTF-8 JSON: they arrive as "?".
        text = action.encode("utf-8", "replace").decode("utf-8")
        step = self._parse(self._call({self.action_key: text}))
        if step[2] or step[3]:
            self._close_session()
        return step

    def close(self) -> None:
        """Close the current session, if any."""
        self._close_session()

    def _open_session(self, request: dict[str, Any]) -> Any:
        """Open a session on the first server (of the list, round robin) that resets in it."""
        start = next(_next_server.setdefault(self.base_urls, itertools.count()))
        failures = []
        for offset in range(len(self.base_urls)):
            url = self.base_urls[(start + offset) % len(self.base_urls)]
            client = _SessionClient(
                base_url=url,
                connect_timeout_s=self.connect_timeout,
                message_timeout_s=self.message_timeout,
            ).sync()
            try:
                client.connect()
                result = client.reset(**request)
            except Exception as error:
                with contextlib.suppress(Exception):
                    client.close()
                if _raised_by_env(error):
                    raise  # the env's reset raised on the server: that is the episode's error
                failures.append(f"{url}: {error}")  # down or full: try the next server
                continue
            self._session, self.server = client, url
            return result
        raise OpenEnvConnectionError(
            "no OpenEnv server answered (" + "; ".join(failures) + "). Start one with "
            "'python -m trl_env.openenv serve ENV_ID --port PORT' (more sessions: "
            "--max-sessions N, or more servers in base_url) or check base_url."
        )

    def _call(self, payload: dict[str, Any]) -> Any:
        try:
            return self._session.step(payload)
        except Exception as error:
            self._close_session()
            if _raised_by_env(error):
                raise  # the rollout records it as the env's error
            raise OpenEnvConnectionError(
                f"the OpenEnv session on {self.server} broke during step() "
                f"({type(error).__name__}: {error}); the episode cannot be resumed, "
                "reset() opens a new session"
            ) from error

    def _parse(self, result: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        fields = dict(result.observation or {})
        text = fields.pop(self.observation_key, None)
        if not isinstance(text, str):
            text = json.dumps(result.observation, sort_keys=True, ensure_ascii=False)
        if not self.observation_space.contains(text):  # keep the gym contract whatever the server
            text = "".join(c if c.isprintable() or c in "\n\t\r" else "\ufffd" for c in text)
            text = text[: self._max_length]
        terminated, truncated = _episode_end(fields, bool(result.done))
        info = fields.pop("info", None)
        info = {**fields, **info} if isinstance(info, dict) else fields
        reward = float(result.reward) if result.reward is not None else 0.0
        return text, reward, terminated, truncated, info

    def _close_session(self) -> None:
        self._playing = False
        session, self._session = self._session, None
        if session is not None:
            # The server may already be gone; the session is over either way.
            with contextlib.suppress(Exception):
                session.close()


def _episode_end(fields: dict[str, Any], done: bool) -> tuple[bool, bool]:
    """``(terminated, truncated)`` of an observation's fields (the flags are taken out of them).

    A trl-env server sends gymnasium's two flags as they are (both true for a win on the
    time-limit step); a server that sends only OpenEnv's ``done`` (and maybe ``truncated``) ended
    the episode by its own rules unless it says ``truncated``.
    """
    if "terminated" in fields:
        return bool(fields.pop("terminated")), bool(fields.pop("truncated", False))
    if "truncated" not in fields and isinstance(fields.get("info"), dict):
        fields = fields["info"]  # a server that puts the flag in its info dict
    truncated = bool(fields.pop("truncated", False)) and done
    return done and not truncated, truncated


def _raised_by_env(error: Exception) -> bool:
    # openenv-core's client turns the server's error answers into RuntimeError("Server error: ...");
    # a full server is not the env's fault.
    message = str(error)
    return (
        isinstance(error, RuntimeError)
        and message.startswith("Server error")
        and "CAPACITY_REACHED" not in message
    )
