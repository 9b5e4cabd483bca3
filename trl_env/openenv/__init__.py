"""OpenEnv both ways: serve any trl-env text env, and play any OpenEnv server as a gym env.

Needs ``pip install "trl-env[openenv]"`` (``openenv-core``). Names are imported on first use, so
``import trl_env.openenv`` stays light.

- :func:`serve` / ``python -m trl_env.openenv serve ENV_ID --port N``: an OpenEnv server
  (openenv-core's FastAPI app) with one session per episode.
- ``gym.make("OpenEnv-v0", base_url=URL)`` (:class:`OpenEnvTextEnv`): a ``gymnasium.Env[str, str]``
  that plays one episode per OpenEnv session of a running server.
- :func:`export_openenv_dir` / ``trl-env serve ENV_ID --export DIR``: a standalone OpenEnv
  environment directory (``openenv validate``, ``openenv build``, ``openenv push`` work on it).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "GymTextEnvironment",
    "OpenEnvConnectionError",
    "OpenEnvTextEnv",
    "TextAction",
    "TextEnvClient",
    "TextObservation",
    "export_openenv_dir",
    "make_app",
    "serve",
]

_HOMES = {
    "GymTextEnvironment": "_server",
    "make_app": "_server",
    "serve": "_server",
    "OpenEnvConnectionError": "_client",
    "OpenEnvTextEnv": "_client",
    "TextAction": "_models",
    "TextEnvClient": "_env_client",
    "TextObservation": "_models",
    "export_openenv_dir": "_export",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'trl_env.openenv' has no attribute {name!r}")
    return getattr(importlib.import_module(f"trl_env.openenv.{_HOMES[name]}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
