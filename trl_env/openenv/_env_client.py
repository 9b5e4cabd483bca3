"""The typed openenv-core client of a trl-env server, for code written against OpenEnv's API.

``gym.make("OpenEnv-v0", base_url=URL)`` is the way to play a server as a gym env; this is the
other way, an ``openenv.core.EnvClient`` with :class:`TextAction` and :class:`TextObservation`
(what ``openenv init`` writes as an env's ``client.py``, and what an export's ``client.py``
re-exports), for TRL's OpenEnv integration and other OpenEnv code.

Example (with a server running; ``trl-env serve TextWordle-v0 --port 8000``):

.. code-block:: python

    from trl_env.openenv import TextAction, TextEnvClient

    with TextEnvClient(base_url="http://127.0.0.1:8000").sync() as client:
        result = client.reset(seed=3)
        result = client.step(TextAction(message="[crane]"))
        print(result.observation.text, result.reward, result.done)
"""

from __future__ import annotations

from typing import Any

from trl_env.error import MissingExtraError
from trl_env.openenv._models import TextAction, TextObservation

try:
    from openenv.core import EnvClient
    from openenv.core.client_types import StepResult
    from openenv.core.env_server.types import State
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise MissingExtraError("openenv", "TextEnvClient", "openenv-core") from error

__all__ = ["TextEnvClient"]


class TextEnvClient(EnvClient[TextAction, TextObservation, State]):
    """An OpenEnv session (WebSocket) with a trl-env server: one episode after another."""

    def _step_payload(self, action: TextAction) -> dict[str, Any]:
        return {"message": action.message}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[TextObservation]:
        fields = dict(payload.get("observation") or {})
        fields.update(done=payload.get("done", False), reward=payload.get("reward"))
        observation = TextObservation(**fields)
        return StepResult(observation=observation, reward=observation.reward, done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(**payload)
