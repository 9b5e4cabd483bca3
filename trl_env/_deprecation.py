"""Old import paths that still work for one release, with a ``DeprecationWarning``.

trl-env made its implementation modules private after 0.2.0 (``trl_env.adapters`` became
``trl_env._adapters``, ...): their public names are served by the public packages listed in
``docs/architecture.md``. Importing an old module path still works until :data:`REMOVAL` and
warns once, naming where the names live now. One import hook does it for every moved module, so
no stub files stand in the tree.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

__all__ = ["MOVED_MODULES", "MOVED_NAMES", "REMOVAL", "install"]

REMOVAL = "0.3.0"

# old module path -> (the private module that holds the code now, where users import from)
MOVED_MODULES: dict[str, tuple[str, str]] = {
    "trl_env.adapters": ("trl_env._adapters", "trl_env"),
    "trl_env.core": ("trl_env.protocol", "trl_env.protocol"),
    "trl_env.demos": ("trl_env._demos", "trl_env and trl_env.utils"),
    "trl_env.episode": ("trl_env._episode", "trl_env"),
    "trl_env.eval": ("trl_env._eval", "trl_env"),
    "trl_env.openenv.client": ("trl_env.openenv._client", "trl_env.openenv"),
    "trl_env.openenv.env_client": ("trl_env.openenv._env_client", "trl_env.openenv"),
    "trl_env.openenv.export": ("trl_env.openenv._export", "trl_env.openenv"),
    "trl_env.openenv.models": ("trl_env.openenv._models", "trl_env.openenv"),
    "trl_env.openenv.server": ("trl_env.openenv._server", "trl_env.openenv"),
    "trl_env.parsing": ("trl_env._parsing", "trl_env.utils"),
    "trl_env.play": ("trl_env._play", "trl_env"),
    "trl_env.policies": ("trl_env._policies", "trl_env and trl_env.utils"),
    "trl_env.registration": ("trl_env._registration", "trl_env"),
    "trl_env.replay": ("trl_env._replay", "trl_env.utils"),
    "trl_env.rollout_records": ("trl_env._rollout_records", "trl_env.utils"),
    "trl_env.seeding": ("trl_env._seeding", "trl_env.utils"),
    "trl_env.stepping": ("trl_env._stepping", "trl_env and trl_env.utils"),
    "trl_env.summary": ("trl_env._summary", "trl_env and trl_env.utils"),
    "trl_env.trl.credit": ("trl_env.trl._credit", "trl_env.trl"),
    "trl_env.trl.environment_factory": ("trl_env.trl._environment_factory", "trl_env.trl"),
    "trl_env.trl.generation": ("trl_env.trl.models._generation", "trl_env.trl.models"),
    "trl_env.trl.model_play": ("trl_env.trl._model_play", "trl_env.trl"),
    "trl_env.trl.model_policy": ("trl_env.trl._model_policy", "trl_env.trl"),
    "trl_env.trl.models.generation": ("trl_env.trl.models._generation", "trl_env.trl.models"),
    "trl_env.trl.models.tiny": ("trl_env.trl.models._tiny", "trl_env.trl.models"),
    "trl_env.trl.processors": ("trl_env.trl._processors", "trl_env.trl"),
    "trl_env.trl.rewards": ("trl_env.trl._rewards", "trl_env.trl"),
    "trl_env.trl.rollout": ("trl_env.trl._rollout", "trl_env.trl"),
    "trl_env.trl.sft": ("trl_env.trl._sft", "trl_env.trl"),
    "trl_env.trl.tasks": ("trl_env.trl._tasks", "trl_env.trl"),
    "trl_env.trl.tiny": ("trl_env.trl.models._tiny", "trl_env.trl.models"),
    "trl_env.trl.train": ("trl_env.trl.training._run", "trl_env.trl.training"),
    "trl_env.trl.training.callbacks": ("trl_env.trl.training._callbacks", "trl_env.trl.training"),
    "trl_env.trl.training.config": ("trl_env.trl.training._config", "trl_env.trl.training"),
    "trl_env.trl.training.heldout": ("trl_env.trl.training._heldout", "trl_env.trl.training"),
    "trl_env.trl.training.plots": ("trl_env.trl.training._plots", "trl_env.trl.training"),
    "trl_env.trl.training.recording": ("trl_env.trl.training._recording", "trl_env.trl.training"),
    "trl_env.trl.training.run": ("trl_env.trl.training._run", "trl_env.trl.training"),
    "trl_env.trl.warm_start": ("trl_env.trl._warm_start", "trl_env.trl"),
    "trl_env.utils.checker": ("trl_env.utils._checker", "trl_env.utils"),
    "trl_env.utils.hostile": ("trl_env.utils._hostile", "trl_env.utils"),
    "trl_env.utils.hub": ("trl_env.utils._hub", "trl_env.utils"),
    "trl_env.wrappers.cap_observation_length": (
        "trl_env.wrappers._cap_observation_length",
        "trl_env.wrappers",
    ),
    "trl_env.wrappers.describe_observation": (
        "trl_env.wrappers._describe_observation",
        "trl_env.wrappers",
    ),
    "trl_env.wrappers.limit_invalid_actions": (
        "trl_env.wrappers._limit_invalid_actions",
        "trl_env.wrappers",
    ),
    "trl_env.wrappers.parse_action": ("trl_env.wrappers._parse_action", "trl_env.wrappers"),
    "trl_env.wrappers.penalize_invalid_actions": (
        "trl_env.wrappers._penalize_invalid_actions",
        "trl_env.wrappers",
    ),
    "trl_env.wrappers.prefix_first_observation": (
        "trl_env.wrappers._prefix_first_observation",
        "trl_env.wrappers",
    ),
    "trl_env.wrappers.record_transcript": (
        "trl_env.wrappers._record_transcript",
        "trl_env.wrappers",
    ),
}


# names that left the top level of trl_env -> the public module that has them now
MOVED_NAMES: dict[str, str] = {
    "Action": "trl_env.protocol",
    "Delta": "trl_env.protocol",
    "Env": "trl_env.protocol",
    "Language": "trl_env.protocol",
    "Processor": "trl_env.protocol",
    "Seed": "trl_env.protocol",
    "TokenProcessor": "trl_env.protocol",
    "EnvErrorWarning": "trl_env.error",
    "EpisodeOverError": "trl_env.error",
    "Error": "trl_env.error",
    "InvalidSpaceError": "trl_env.error",
    "MissingExtraError": "trl_env.error",
    "NoOracleError": "trl_env.error",
    "NotATextEnvError": "trl_env.error",
    "TaskSpecError": "trl_env.error",
    "TextEnvCheckError": "trl_env.error",
    "UsageError": "trl_env.error",
    "EnvOutcome": "trl_env.utils",
    "seed_to_int": "trl_env.utils",
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves a moved module's old path as an alias of its new module, with a warning."""

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        if fullname not in MOVED_MODULES:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):  # type: ignore[no-untyped-def]
        new, public = MOVED_MODULES[spec.name]
        warnings.warn(
            f"{spec.name} is deprecated and will be removed in trl-env {REMOVAL}; "
            f"import from {public} instead",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module is already executed under its new name."""


def install() -> None:
    """Put the finder on ``sys.meta_path`` once."""
    if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())
