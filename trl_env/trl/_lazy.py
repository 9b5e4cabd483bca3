"""The TRL side loads on first use (TRL's own ``_import_structure`` pattern).

A package of ``trl_env.trl`` names what its modules export in an ``_import_structure`` table and
gets a module ``__getattr__`` from :func:`lazy_exports`: importing the package costs nothing, and
the first use of a name imports its module. Without the ``trl`` extra that first use raises one
:class:`~trl_env.error.MissingExtraError` naming the install, not an ``ImportError`` from deep
inside torch. Modules that need no torch (the settings, such as ``TrainConfig``) are marked
torch-free, so the command line can build its options from them on a base install.

Example:
    >>> import trl_env.trl  # imports none of its modules yet
    >>> trl_env.trl.make_dataset.__module__  # the first use imports trl_env.trl._tasks
    'trl_env.trl._tasks'
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from trl_env.error import MissingExtraError

__all__ = ["TRL_PACKAGES", "lazy_exports", "require_trl"]

TRL_PACKAGES = ("torch", "transformers", "trl")
"""The packages of the ``trl`` extra that every model-running feature imports."""


def require_trl(feature: str) -> None:
    """Import the ``trl`` extra's packages, or raise one error that names the install.

    Args:
        feature: What needs them, for the message (``"trl-env train"``, ...).

    Raises:
        MissingExtraError: A package of the extra is not installed (or fails to import).
    """
    for name in TRL_PACKAGES:
        if sys.modules.get(name) is not None:
            continue
        try:
            importlib.import_module(name)
        except ImportError as error:
            raise MissingExtraError("trl", feature, error.name or name) from None


def lazy_exports(
    package: str,
    import_structure: Mapping[str, Sequence[str]],
    *,
    torch_free: Collection[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` that import each exported name on first use.

    Args:
        package: The package's ``__name__``.
        import_structure: Submodule name -> the names it exports through the package.
        torch_free: Submodules that import without the ``trl`` extra (no check before them).

    Returns:
        ``(__getattr__, __dir__)`` for the package's module namespace.
    """
    origin = {name: module for module, names in import_structure.items() for name in names}
    namespace = sys.modules[package].__dict__
    if sorted(namespace.get("__all__", [])) != sorted(origin):  # the two lists must agree
        raise ImportError(f"{package}: __all__ and _import_structure name different things")

    def __getattr__(name: str) -> Any:
        module = origin.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        if module not in torch_free:
            require_trl(f"{package}.{name}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value  # the next lookup is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(origin))

    return __getattr__, __dir__
