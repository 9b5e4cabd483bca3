"""The files of an exported OpenEnv environment directory (:mod:`trl_env.openenv._export`)."""

from __future__ import annotations

import json

__all__: list[str] = []

# The first line of an export's openenv.yaml: --overwrite replaces only a folder that has it.
MARKER = "# OpenEnv manifest of the trl-env text env"


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def pascal_name(package: str) -> str:
    """The class-name stem openenv-core's ``AutoEnv`` derives from an env name.

    Example:
        >>> pascal_name("textwordle_v0")
        'TextwordleV0'
    """
    return "".join(word.capitalize() for word in package.replace("_env", "").split("_"))


def pyproject(package: str, env_id: str, requirements: list[str], sources: dict[str, str]) -> str:
    dependencies = "".join(f"    {_toml_string(r)},\n" for r in requirements)
    paths = "".join(
        f"{name} = {{ path = {_toml_string(path)} }}\n" for name, path in sources.items()
    )
    return f"""\
# OpenEnv environment of the trl-env text env {env_id}
# (written by: trl-env serve {env_id} --export).
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "openenv-{package.replace("_", "-")}"
version = "0.1.0"
description = {_toml_string(f"{env_id} (trl-env) served over OpenEnv")}
requires-python = ">=3.11"
dependencies = [
{dependencies}]

[project.scripts]
# uv run --project . server [--host H] [--port N]
server = "{package}.server.app:main"

[tool.uv.sources]
# Wheels of the code this directory was exported from (README.md: using released versions).
{paths}
[tool.setuptools]
packages = ["{package}", "{package}.server"]
package-dir = {{ "{package}" = ".", "{package}.server" = "server" }}
"""


APP = '''\
"""OpenEnv server of the trl-env text env {env_id} (written by: trl-env serve {env_id} --export).

One OpenEnv session (WebSocket /ws) per episode, {max_sessions} at once by default
(TRL_ENV_MAX_SESSIONS overrides it). Run it with any of (0.0.0.0: reachable from other
machines, as a container must be; pass --host 127.0.0.1 for this machine only):

    uvicorn server.app:app --host 0.0.0.0 --port 8000
    uv run --project . server --port 8000
    python -m server.app --port 8000
"""

import argparse
import json
import os

from trl_env.openenv._server import make_app

ENV_ID = {env_id_literal}
ENV_KWARGS = json.loads({kwargs_literal})
MAX_SESSIONS = int(os.environ.get("TRL_ENV_MAX_SESSIONS", "{max_sessions}"))

app = make_app(ENV_ID, env_kwargs=ENV_KWARGS, max_sessions=MAX_SESSIONS)


def main(argv=None) -> None:
    """Serve with uvicorn: ``--host`` (default 0.0.0.0) and ``--port`` (default 8000)."""
    import uvicorn

    parser = argparse.ArgumentParser(description=f"Serve {{ENV_ID}} over OpenEnv.")
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    uvicorn.run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
'''

MODELS = '''\
"""The wire types of this env: the reply and the observation (trl-env's OpenEnv models)."""

from trl_env.openenv._models import TextAction, TextObservation

# The names openenv-core's AutoEnv derives from this env's name.
{pascal}Action = TextAction
{pascal}Observation = TextObservation

__all__ = ["{pascal}Action", "{pascal}Observation", "TextAction", "TextObservation"]
'''

CLIENT = '''\
"""Clients of this env's server.

- ``TextEnvClient(base_url=URL)``: openenv-core's typed ``EnvClient`` (``TextAction`` in,
  ``TextObservation`` out), for TRL's OpenEnv integration and other OpenEnv code.
- ``gym.make("OpenEnv-v0", base_url=URL)`` (after ``import trl_env``): a gymnasium text env.
"""

from trl_env.openenv._env_client import TextEnvClient

# The name openenv-core's AutoEnv derives from this env's name.
{pascal}Env = TextEnvClient

__all__ = ["{pascal}Env", "TextEnvClient"]
'''

DOCKERFILE = """\
# Image of this OpenEnv environment; `openenv build` and `openenv push` use this file as is.
# By hand, from this folder: docker build -t {package} -f server/Dockerfile . &&
#                            docker run -p 8000:8000 {package}
ARG BASE_IMAGE=python:3.11-slim
FROM ${{BASE_IMAGE}}

WORKDIR /app/env
COPY . /app/env
# The dependencies pinned in uv.lock (trl-env itself from wheels/), no editable installs.
RUN pip install --no-cache-dir uv && \\
    if [ -f uv.lock ]; then uv sync --frozen --no-editable; else uv sync --no-editable; fi

ENV PATH="/app/env/.venv/bin:$PATH" \\
    TRL_ENV_MAX_SESSIONS={max_sessions}
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \\
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health')"
CMD ["uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "8000"]
"""

DOCKERIGNORE = """\
.venv/
build/
*.egg-info/
**/__pycache__/
**/*.pyc
"""

README = """\
---
title: {env_id}
emoji: 🎮
colorFrom: blue
colorTo: green
sdk: docker
app_port: 8000
tags:
  - openenv
  - trl-env
---

# {env_id} over OpenEnv

The trl-env text env `{env_id}` served with openenv-core's FastAPI server: one session per
episode, many at once. Written by `trl-env serve {env_id} --export`.

```bash
uv run --project . server --port 8000          # serve it here (all interfaces)
openenv validate .                              # openenv-core's checks of this directory
openenv build "$PWD" -t openenv-{package}       # a Docker image ...
docker run -p 8000:8000 openenv-{package}       # ... and run it
openenv push .                                  # a Hugging Face Space
```

Play it from Python with trl-env (`pip install "trl-env[openenv]"`):

```python
import gymnasium as gym
import trl_env

env = gym.make("OpenEnv-v0", base_url="http://localhost:8000")
observation, info = env.reset(seed=0)
```

or with openenv-core's typed client, `client.TextEnvClient`.

`wheels/` holds the trl-env this directory was exported from (and a local env package, if any),
pinned in `uv.lock`. To use released versions instead, delete their `[tool.uv.sources]` entries
in `pyproject.toml` and run `uv lock`.
"""

MANIFEST = """\
{marker} {env_id} (written by: trl-env serve {env_id} --export).
spec_version: 1
name: {package}
type: space
runtime: fastapi
app: server.app:app
port: 8000
"""
