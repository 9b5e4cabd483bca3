"""A wheel of the running trl-env, built from the files of the imported package.

An export (:mod:`trl_env.openenv._export`) ships it, so a served env runs exactly the code that was
tested, local changes included, and builds without a checkout beside it.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import trl_env

__all__ = ["DISTRIBUTION", "build_trl_env_wheel"]

DISTRIBUTION = "trl-env"
# Files of the package tree that are build or editor leftovers, not part of the library.
_SKIPPED_DIRECTORIES = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}


def _package_files() -> Iterator[tuple[Path, str]]:
    """``(file, path inside the wheel)`` for every file of the installed ``trl_env`` package.

    The catalogue installs as ``trl_env.envs`` from the repository's top-level ``envs/``; in an
    editable install it stays there, so it is walked on its own when it is outside the package.
    """
    package_root = Path(trl_env.__file__).resolve().parent
    roots = [(package_root, "trl_env")]
    envs_root = Path(trl_env.envs.__path__[0]).resolve()
    if not envs_root.is_relative_to(package_root):
        roots.append((envs_root, "trl_env/envs"))
    for root, prefix in roots:
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = sorted(d for d in subdirectories if d not in _SKIPPED_DIRECTORIES)
            for name in sorted(files):
                if name.endswith((".pyc", ".pyo")) or name.startswith("."):
                    continue
                path = Path(directory, name)
                yield path, f"{prefix}/{path.relative_to(root).as_posix()}"


def _source_project() -> dict[str, Any] | None:
    """``[project]`` of the checkout ``trl_env`` is imported from, if it is one (editable)."""
    pyproject = Path(trl_env.__file__).resolve().parent.parent / "pyproject.toml"
    if not pyproject.is_file():
        return None
    project = tomllib.loads(pyproject.read_text("utf-8")).get("project", {})
    return project if project.get("name") == DISTRIBUTION else None


def _with_extra(requirement: str, extra: str) -> str:
    name, semicolon, marker = requirement.partition(";")
    condition = f'extra == "{extra}"'
    return (
        f"{name.strip()}; ({marker.strip()}) and {condition}"
        if semicolon
        else (f"{name.strip()}; {condition}")
    )


def _metadata() -> tuple[str, str, str]:
    """``(version, METADATA, entry_points.txt)`` of the wheel.

    From the checkout's ``pyproject.toml`` when ``trl_env`` is imported from one (an editable
    install's recorded metadata goes stale as soon as a requirement is edited), else from the
    installed distribution.
    """
    project = _source_project()
    if project is not None:
        version = project["version"]
        summary = project.get("description", "")
        python = project.get("requires-python", ">=3.11")
        optional = project.get("optional-dependencies", {})
        extras = list(optional)
        requires = list(project.get("dependencies", []))
        requires += [_with_extra(r, extra) for extra, group in optional.items() for r in group]
        scripts = project.get("scripts", {})
        entry_points = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())
    else:
        distribution = importlib.metadata.distribution(DISTRIBUTION)
        meta = distribution.metadata
        version = distribution.version
        # PackageMetadata's protocol leaves out get(), which the email.message.Message behind it
        # has: the way to read a field that may be missing (indexing one is deprecated).
        summary = meta.get("Summary") or ""  # type: ignore[attr-defined]
        python = meta.get("Requires-Python") or ">=3.11"  # type: ignore[attr-defined]
        extras = meta.get_all("Provides-Extra") or []
        requires = list(distribution.requires or [])
        entry_points = distribution.read_text("entry_points.txt") or ""
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {DISTRIBUTION}",
        f"Version: {version}",
        f"Summary: {summary}",
        f"Requires-Python: {python}",
    ]
    lines += [f"Provides-Extra: {extra}" for extra in extras]
    lines += [f"Requires-Dist: {requirement}" for requirement in requires]
    return version, "\n".join(lines) + "\n", entry_points


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_trl_env_wheel(directory: str | os.PathLike[str]) -> Path:
    """Build a wheel of the running trl-env (its files as imported now) into ``directory``.

    Works for editable and regular installs alike: the files are those of the imported
    ``trl_env`` package; the metadata (version, requirements, extras) is that of the checkout's
    ``pyproject.toml`` when ``trl_env`` comes from a checkout, else that of the installed
    distribution. File times are fixed, so the same code gives the same wheel bytes.

    Returns:
        The wheel's path, ``trl_env-<version>-py3-none-any.whl``.

    Example:
        >>> import tempfile, zipfile
        >>> wheel = build_trl_env_wheel(tempfile.mkdtemp())
        >>> names = zipfile.ZipFile(wheel).namelist()
        >>> "trl_env/envs/wordle.py" in names and "trl_env/openenv/_server.py" in names
        True
    """
    version, metadata, entry_points = _metadata()
    dist_info = f"trl_env-{version}.dist-info"
    members = [(arcname, path.read_bytes()) for path, arcname in _package_files()]
    members += [
        (f"{dist_info}/METADATA", metadata.encode()),
        (
            f"{dist_info}/WHEEL",
            b"Wheel-Version: 1.0\nGenerator: trl-env export\nRoot-Is-Purelib: true\n"
            b"Tag: py3-none-any\n",
        ),
        (f"{dist_info}/entry_points.txt", entry_points.encode()),
    ]
    record = [_record_line(name, data) for name, data in members] + [f"{dist_info}/RECORD,,"]
    members.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"trl_env-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return wheel
