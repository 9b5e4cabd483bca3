"""Which envs have a scripted player of a given name: the one check behind ``--policy NAME``
(``trl-env eval``, ``trl-env demos``), ``--demos NAME`` (``trl-env sft``) and ``--warm-start
NAME`` (``trl-env train``).

An env names its own scripted players in ``scripted_policies`` (see
:class:`trl_env._policies.HasScriptedPolicies`; Hangman's ``frequency``). A name is taken for a
scripted player only when every env asked for has it; a name that only some of them have, or
that only other envs have, is a usage error that says which envs have it, rather than a model or
a folder of that name that does not exist.

Example:
    >>> is_scripted_player("frequency", ["TextHangman-v0", "TextHangmanHard-v0"])
    True
    >>> is_scripted_player("runs/my-model", ["TextHangman-v0"])
    False
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence

from trl_env._checks import env_class
from trl_env._policies import scripted_policies
from trl_env.error import UsageError

__all__ = ["envs_with_player", "is_scripted_player"]


def envs_with_player(name: str) -> list[str]:
    """The native catalogue env IDs that have a scripted player called ``name``.

    The bridges (reasoning-gym, TextArena, OpenEnv) define no players of their own, and loading
    them imports their packages (seconds), so they are not asked.
    """
    from trl_env.envs import env_specs

    owners = []
    for spec in env_specs():
        entry = str(spec.entry_point)
        if not entry.startswith("trl_env.envs.") or entry.startswith("trl_env.envs.bridges."):
            continue
        try:
            cls = env_class(spec.id)
        except Exception:  # an env whose optional package is missing: not offered
            continue
        if name in scripted_policies(cls):
            owners.append(spec.id)
    return owners


def is_scripted_player(name: str, env_ids: Sequence[str]) -> bool:
    """Whether ``name`` is a scripted player of every env of ``env_ids``.

    A player's name wins over a path of that name, as ``random`` and ``oracle`` do (with a
    warning: ``./NAME`` names the path).

    Raises:
        trl_env.error.UsageError: Some of ``env_ids`` have the player and others do not, or none
            of them has it, ``name`` is no existing path, and other envs have a player of that
            name (it is not a model's name, then).
    """
    ids = list(dict.fromkeys(env_ids))
    having = [env_id for env_id in ids if name in scripted_policies(env_class(env_id))]
    if ids and having == ids:
        if os.path.exists(name):
            warnings.warn(
                f"{name!r} is the scripted player of {ids[0]} and also a path here: the player "
                f"plays; give ./{name} for the path",
                stacklevel=2,
            )
        return True
    owners = having or ([] if os.path.exists(name) else envs_with_player(name))
    if owners:
        lacking = [env_id for env_id in ids if env_id not in owners]
        raise UsageError(
            f"{name!r} is a scripted player of {', '.join(owners)}, not of "
            f"{', '.join(lacking) or 'the envs given'}: play it on those envs only, or pick "
            "another policy (random, oracle, a model)"
        )
    return False
