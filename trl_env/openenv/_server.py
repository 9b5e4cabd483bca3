"""Serve any registered text env over OpenEnv, with openenv-core's own FastAPI server.

Each OpenEnv session (one WebSocket connection: ``/ws``) gets its own ``gym.make`` instance, so
each episode of a rollout is its own session and many run at once (up to ``max_sessions``);
openenv-core runs each session's calls on its own thread. The HTTP endpoints (``/reset``,
``/step``, ``/state``, ``/schema``, ``/health``) are openenv-core's as well, so TRL's OpenEnv
integration, ``openenv`` clients and ``gym.make("OpenEnv-v0", base_url=...)`` all work.

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
import math
import sys
from typing import Any
from uuid import uuid4

import gymnasium as gym

import trl_env.envs  # noqa: F401  (registers the catalogue)
from trl_env._adapters import is_text_space
from trl_env.error import MissingExtraError, NotATextEnvError
from trl_env.openenv._models import TextAction, TextObservation

try:
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import State
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openenv", "trl-env serve", "openenv-core") from error

__all__ = ["GymTextEnvironment", "make_app", "serve"]


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
    """

    SUPPORTS_CONCURRENT_SESSIONS = True  # every session has its own gym.make instance

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.env_id = env_id
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
        """Play the reply ``action.message``: ``env.step(action.message)``."""
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


def make_app(
    env_id: str, *, env_kwargs: dict[str, Any] | None = None, max_sessions: int = 256
) -> Any:
    """The FastAPI app that serves ``env_id`` (openenv-core's ``create_app``).

    Args:
        env_id: A registered text env ID.
        env_kwargs: Keyword arguments of ``gym.make`` for every session.
        max_sessions: Concurrent sessions (episodes) at most; a client beyond that gets
            openenv-core's ``CAPACITY_REACHED`` error.

    Raises:
        gymnasium.error.Error: ``env_id`` is not registered or ``env_kwargs`` do not fit it.
        NotATextEnvError: The env does not have text spaces.
    """
    if not isinstance(max_sessions, int) or max_sessions < 1:
        raise ValueError(f"max_sessions must be a positive int, got {max_sessions!r}")
    make_text_env(env_id, env_kwargs).close()  # fail now, not at the first session
    factory = functools.partial(GymTextEnvironment, env_id, dict(env_kwargs or {}))
    return create_app(
        factory, TextAction, TextObservation, env_name=env_id, max_concurrent_envs=max_sessions
    )


def serve(
    env_id: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    env_kwargs: dict[str, Any] | None = None,
    max_sessions: int = 256,
    log_level: str = "warning",
) -> None:
    """Serve ``env_id`` over OpenEnv with uvicorn until interrupted.

    Args:
        env_id: A registered text env ID.
        host: Interface to bind (``0.0.0.0`` to accept other machines).
        port: TCP port.
        env_kwargs: Keyword arguments of ``gym.make`` for every session.
        max_sessions: Concurrent sessions (episodes) at most.
        log_level: uvicorn's log level.
    """
    import uvicorn

    app = make_app(env_id, env_kwargs=env_kwargs, max_sessions=max_sessions)
    # uvicorn says nothing at the default log level: say where the env is before it starts.
    print(
        f"serving {env_id} over OpenEnv at http://{host}:{port} (up to {max_sessions} sessions; "
        f'play it with gym.make("OpenEnv-v0", base_url="http://{host}:{port}"); Ctrl-C stops)',
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=host, port=port, log_level=log_level)
