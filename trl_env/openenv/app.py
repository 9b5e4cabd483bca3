"""The ASGI app named in ``openenv.yaml`` (``uvicorn trl_env.openenv.app:app``).

The env comes from environment variables, so one image serves any env:
``TRL_ENV_ID`` (default ``TextWordle-v0``), ``TRL_ENV_KWARGS`` (a JSON object),
``TRL_ENV_MAX_SESSIONS`` (default 256) and ``TRL_ENV_MAX_ACTION_CHARS`` (default 1048576).
"""

from __future__ import annotations

import json
import os

from trl_env.openenv._server import make_app

__all__ = ["app"]

app = make_app(
    os.environ.get("TRL_ENV_ID", "TextWordle-v0"),
    env_kwargs=json.loads(os.environ.get("TRL_ENV_KWARGS") or "{}"),
    max_sessions=int(os.environ.get("TRL_ENV_MAX_SESSIONS", "256")),
    max_action_chars=int(os.environ.get("TRL_ENV_MAX_ACTION_CHARS", "1048576")),
)
