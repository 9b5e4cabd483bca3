"""Serve any registered text env over OpenEnv, with openenv-core's own FastAPI server.

Each OpenEnv session (one WebSocket connection: ``/ws``) gets its own ``gym.make`` instance, so
each episode of a rollout is its own session and many run at once (up to ``max_sessions``);
openenv-core runs each session's calls on its own thread. The HTTP endpoints (``/reset``,
``/step``, ``/state``, ``/schema``, ``/health``) are openenv-core's as well, so TRL's OpenEnv
integration, ``openenv`` clients and ``gym.make("OpenEnv-v0", base_url=...)`` all work.

A reply longer than ``max_action_chars`` characters (``trl-env serve --max-action-chars``, default
1,048,576: far above any model's reply) is refused with a clear error before the env sees it. A
client that goes away without a ``close`` message (a dropped connection, a close frame) ends its
session and writes one info line to the log (``uvicorn.error``), not a traceback.

The served env is exactly what a local ``gym.make(env_id, **env_kwargs)`` returns, wrappers
included (the spec's ``TimeLimit``, order enforcing, the env checker), and every step answers
gymnasium's own ``terminated`` and ``truncated`` flags (a win on the time-limit step has both).
The wrappers live on this side, not the client's: only the server knows the served ID's spec and
kwargs, and every OpenEnv client (TRL's integration, ``TextEnvClient``, a plain WebSocket) then
sees the same episode ends; ``OpenEnv-v0`` adds no time limit of its own.

Example:
    >>> from trl_env.openenv._server import make_app
    >>> app = make_app("TextWordle-v0", max_sessions=4)
    >>> sorted({"/ws", "/reset", "/step", "/health"} & {route.path for route in app.routes})
    ['/health', '/reset', '/step', '/ws']
"""

from __future__ import annotations

import functools
import logging
import math
import sys
from typing import Any
from uuid import uuid4

import gymnasium as gym

import trl_env.envs  # noqa: F401  (registers the catalogue)
from trl_env._adapters import is_text_space
from trl_env.error import InvalidSpaceError, MissingExtraError, NotATextEnvError
from trl_env.openenv._models import TextAction, TextObservation

try:
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import State
    from starlette.responses import JSONResponse
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openenv", "trl-env serve", "openenv-core") from error

__all__ = ["DEFAULT_MAX_ACTION_CHARS", "GymTextEnvironment", "make_app", "serve"]

DEFAULT_MAX_ACTION_CHARS = 1_048_576
"""Longest reply (in characters) a server passes to its env unless told otherwise: 1 Mi, above
the 1,000,000-character reply of :func:`trl_env.utils.check_text_env` (so a served env passes the
check as the local one does) and far above a model's reply (the default ``max_completion_length``,
4,096 tokens, is some 16,000 characters)."""

_log = logging.getLogger("uvicorn.error")  # uvicorn's own log: its level and format apply


def _jsonable(value: Any) -> Any:
    """``value`` with numpy scalars/arrays as Python values and NaN/inf as ``None`` (JSON-safe)."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return _jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)


class GymTextEnvironment(Environment[TextAction, TextObservation, State]):
    """An OpenEnv ``Environment`` that plays one ``gym.make(env_id, **env_kwargs)`` instance.

    Args:
        env_id: A registered text env (string observations and actions).
        env_kwargs: Keyword arguments of ``gym.make``.
        max_action_chars: Longest reply ``step`` passes to the env; a longer one raises
            :class:`~trl_env.error.InvalidSpaceError` and leaves the episode as it was.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session has its own gym.make instance

    def __init__(
        self,
        env_id: str,
        env_kwargs: dict[str, Any] | None = None,
        max_action_chars: int = DEFAULT_MAX_ACTION_CHARS,
    ) -> None:
        super().__init__()
        self.env_id = env_id
        self.max_action_chars = max_action_chars
        self._env = make_text_env(env_id, env_kwargs)
        self._state = State(episode_id=None, step_count=0)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        options: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> TextObservation:
        """Start an episode: ``env.reset(seed=seed, options=options)``."""
        observation, info = self._env.reset(seed=seed, options=options)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0, env_id=self.env_id)
        return TextObservation(text=observation, done=False, reward=None, info=_jsonable(info))

    def step(
        self, action: TextAction, timeout_s: float | None = None, **kwargs: Any
    ) -> TextObservation:
        """Play the reply ``action.message``: ``env.step(action.message)``.

        Raises:
            InvalidSpaceError: The reply is longer than ``max_action_chars`` (the env is not
                stepped: the episode goes on from where it was).
        """
        if len(action.message) > self.max_action_chars:
            raise InvalidSpaceError(
                f"the action has {len(action.message):,} characters, over this server's limit "
                f"of {self.max_action_chars:,} (trl-env serve --max-action-chars); the env was "
                "not stepped"
            )
        observation, reward, terminated, truncated, info = self._env.step(action.message)
        self._state.step_count += 1
        return TextObservation(
            text=observation,
            reward=float(reward),
            done=bool(terminated or truncated),
            terminated=bool(terminated),
            truncated=bool(truncated),
            info=_jsonable(info),
        )

    @property
    def state(self) -> State:
        """The session's episode id, step count and env ID."""
        return self._state

    def close(self) -> None:
        """Close the gymnasium env."""
        self._env.close()


def make_text_env(env_id: str, env_kwargs: dict[str, Any] | None = None) -> gym.Env[str, str]:
    """``gym.make(env_id, **env_kwargs)``, checked to be a text env (clear error otherwise)."""
    env = gym.make(env_id, **(env_kwargs or {}))
    if not (is_text_space(env.observation_space) and is_text_space(env.action_space)):
        env.close()
        raise NotATextEnvError(
            f"{env_id} has observation space {env.observation_space} and action space "
            f"{env.action_space}; only text envs can be served. Wrap it with "
            "trl_env.wrappers (DescribeObservation, ParseAction) and register the wrapped env."
        )
    return env


class _QuietDisconnects:
    """ASGI middleware: a WebSocket client that leaves without a ``close`` message is one line.

    openenv-core's ``/ws`` handler answers and then closes the socket when a session ends; when
    the client has already gone (a dropped connection, or a close frame instead of a ``close``
    message) those sends raise, and uvicorn logged each such client as one or more full
    tracebacks. The session still ends as before (openenv-core closes its env in a ``finally``);
    what the handler raises once the client has gone is dropped here, and the log gets one info
    line per such client instead. An error while the client is still there is raised as before.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        gone: dict[str, Any] = {}  # "code": the client left; "closed": the server closed first

        async def receive_noting_the_disconnect() -> Any:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                gone.setdefault("code", message.get("code", 1005))
            return message

        async def send_noting_the_close(message: Any) -> None:
            try:
                await send(message)
            except OSError:  # uvicorn's ClientDisconnected: the client has gone
                gone.setdefault("code", 1006)
                raise
            if message["type"] == "websocket.close":
                gone["closed"] = True

        try:
            await self.app(scope, receive_noting_the_disconnect, send_noting_the_close)
        except Exception as error:
            if "code" not in gone:
                raise
            _log.debug("after the client left: %s: %s", type(error).__name__, error)
        if "code" in gone and not gone.get("closed"):
            host, port = scope.get("client") or ("?", "?")
            _log.info(
                "client %s:%s left %s without a close message (code %s); its session ended",
                *(host, port, scope["path"], gone["code"]),
            )


def _http_step_errors(app: Any) -> None:
    """Clear HTTP answers, not tracebacks, for ``POST /step`` with too long an action or no reset.

    openenv-core's stateless ``/step`` steps a fresh env, so with a gymnasium env it can only say
    that; episodes are played over the WebSocket ``/ws`` (what every OpenEnv client does).
    """

    async def too_long(request: Any, error: Exception) -> Any:
        return JSONResponse({"detail": str(error)}, status_code=413)

    async def no_reset(request: Any, error: Exception) -> Any:
        detail = (
            f"{error} HTTP /step steps a fresh env (openenv-core's stateless endpoint), so it "
            "cannot play a gymnasium episode: play over the WebSocket /ws (every OpenEnv client, "
            'gym.make("OpenEnv-v0", base_url=URL))'
        )
        return JSONResponse({"detail": detail}, status_code=409)

    app.add_exception_handler(InvalidSpaceError, too_long)
    app.add_exception_handler(gym.error.ResetNeeded, no_reset)


def make_app(
    env_id: str,
    *,
    env_kwargs: dict[str, Any] | None = None,
    max_sessions: int = 256,
    max_action_chars: int = DEFAULT_MAX_ACTION_CHARS,
) -> Any:
    """The FastAPI app that serves ``env_id`` (openenv-core's ``create_app``).

    Args:
        env_id: A registered text env ID.
        env_kwargs: Keyword arguments of ``gym.make`` for every session.
        max_sessions: Concurrent sessions (episodes) at most; a client beyond that gets
            openenv-core's ``CAPACITY_REACHED`` error.
        max_action_chars: Longest action (reply) passed to the env, in characters; a longer
            one is answered with an error (``EXECUTION_ERROR`` on ``/ws``, HTTP 413 on
            ``/step``) and the env is not stepped.

    Raises:
        gymnasium.error.Error: ``env_id`` is not registered or ``env_kwargs`` do not fit it.
        NotATextEnvError: The env does not have text spaces.
    """
    for name, value in (("max_sessions", max_sessions), ("max_action_chars", max_action_chars)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    make_text_env(env_id, env_kwargs).close()  # fail now, not at the first session
    factory = functools.partial(
        GymTextEnvironment, env_id, dict(env_kwargs or {}), max_action_chars
    )
    app = create_app(
        factory, TextAction, TextObservation, env_name=env_id, max_concurrent_envs=max_sessions
    )
    app.add_middleware(_QuietDisconnects)
    _http_step_errors(app)
    return app


def serve(
    env_id: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    env_kwargs: dict[str, Any] | None = None,
    max_sessions: int = 256,
    max_action_chars: int = DEFAULT_MAX_ACTION_CHARS,
    log_level: str = "warning",
) -> None:
    """Serve ``env_id`` over OpenEnv with uvicorn until interrupted.

    Args:
        env_id: A registered text env ID.
        host: Interface to bind (``0.0.0.0`` to accept other machines).
        port: TCP port.
        env_kwargs: Keyword arguments of ``gym.make`` for every session.
        max_sessions: Concurrent sessions (episodes) at most.
        max_action_chars: Longest action (reply) passed to the env, in characters.
        log_level: uvicorn's log level (``info`` adds a line per client that left without a
            ``close`` message).
    """
    import uvicorn

    app = make_app(
        env_id,
        env_kwargs=env_kwargs,
        max_sessions=max_sessions,
        max_action_chars=max_action_chars,
    )
    # uvicorn says nothing at the default log level: say where the env is before it starts.
    print(
        f"serving {env_id} over OpenEnv at http://{host}:{port} (up to {max_sessions} sessions; "
        f'play it with gym.make("OpenEnv-v0", base_url="http://{host}:{port}"); Ctrl-C stops)',
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=host, port=port, log_level=log_level)
