"""Write a text env as a standalone OpenEnv environment directory, deployable like any other.

``trl-env serve ENV_ID --export DIR`` (or :func:`export_openenv_dir`) writes the layout of
openenv-core's own ``openenv init`` template, so openenv-core's tools work on it unchanged:
``openenv validate DIR``, ``openenv build DIR`` (a Docker image) and ``openenv push DIR`` (a
Hugging Face Space)::

    DIR/
        openenv.yaml         the manifest (name, app server.app:app, port 8000)
        pyproject.toml       depends on trl-env[openenv] (+ the env's catalogue extra)
        uv.lock              pinned dependencies (``uv lock``), what the image installs
        README.md            how to run it; Hugging Face Space front matter
        __init__.py
        server/app.py        the FastAPI app (``make_app(ENV_ID)``) and ``main()``
        server/Dockerfile    ``uv sync --frozen`` then ``uvicorn server.app:app``
        wheels/trl_env-<version>-py3-none-any.whl

The wheel is built from the trl-env that runs the export, so the server plays exactly the code
you tested (local changes included), and the directory builds with no checkout beside it.

Example:
    >>> import tempfile
    >>> from trl_env.openenv.export import export_openenv_dir
    >>> out = export_openenv_dir("TextWordle-v0", tempfile.mkdtemp() + "/wordle", lock=False)
    >>> sorted(path.name for path in out.iterdir())  # doctest: +NORMALIZE_WHITESPACE
    ['.dockerignore', 'README.md', '__init__.py', 'openenv.yaml', 'pyproject.toml', 'server',
     'wheels']
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym

import trl_env
from trl_env._checks import check_text_env
from trl_env.error import UsageError

__all__ = ["build_trl_env_wheel", "export_openenv_dir", "package_name"]

_DISTRIBUTION = "trl-env"
# Files of the package tree that are build or editor leftovers, not part of the library.
_SKIPPED_DIRECTORIES = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}


def package_name(env_id: str) -> str:
    """The Python package (and OpenEnv ``name``) of ``env_id``'s exported directory.

    Example:
        >>> package_name("TextWordle-v0"), package_name("reasoning_gym/Countdown-v0")
        ('textwordle_v0', 'reasoning_gym_countdown_v0')
    """
    return re.sub(r"[^0-9a-z]+", "_", env_id.lower()).strip("_")


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


def _metadata(distribution: importlib.metadata.Distribution) -> str:
    """Core metadata 2.1 of the wheel: name, version and every requirement with its extra."""
    meta = distribution.metadata
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {meta['Name']}",
        f"Version: {distribution.version}",
        f"Summary: {meta.get('Summary') or ''}",
        f"Requires-Python: {meta.get('Requires-Python') or '>=3.11'}",
    ]
    lines += [f"Provides-Extra: {extra}" for extra in meta.get_all("Provides-Extra") or []]
    lines += [f"Requires-Dist: {requirement}" for requirement in distribution.requires or []]
    return "\n".join(lines) + "\n"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_trl_env_wheel(directory: str | os.PathLike[str]) -> Path:
    """Build a wheel of the running trl-env (its files as imported now) into ``directory``.

    Works for editable and regular installs alike: the files are those of the imported
    ``trl_env`` package, the metadata (version, requirements, extras) that of the installed
    distribution. File times are fixed, so the same code gives the same wheel bytes.

    Returns:
        The wheel's path, ``trl_env-<version>-py3-none-any.whl``.

    Example:
        >>> import tempfile, zipfile
        >>> wheel = build_trl_env_wheel(tempfile.mkdtemp())
        >>> names = zipfile.ZipFile(wheel).namelist()
        >>> "trl_env/envs/wordle.py" in names and "trl_env/openenv/server.py" in names
        True
    """
    distribution = importlib.metadata.distribution(_DISTRIBUTION)
    version = distribution.version
    dist_info = f"trl_env-{version}.dist-info"
    entry_points = distribution.read_text("entry_points.txt") or (
        "[console_scripts]\ntrl-env = trl_env.cli:main\n"
    )
    members = [(arcname, path.read_bytes()) for path, arcname in _package_files()]
    members += [
        (f"{dist_info}/METADATA", _metadata(distribution).encode()),
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


def _extras(env_id: str) -> list[str]:
    """The trl-env extras the server of ``env_id`` needs: openenv, and a bridged catalogue's."""
    from trl_env.envs.bridges import SOURCES, bridged_ids

    return ["openenv"] + [source for source in SOURCES if env_id in bridged_ids(source)]


def _foreign_requirements(env_id: str) -> list[str]:
    """Requirements of an env that another installed package registers (``module:ID`` too).

    Raises:
        UsageError: The env is registered by code that the exported server cannot import.
    """
    spec = gym.spec(env_id)
    modules = [env_id.partition(":")[0]] if ":" in env_id else []
    if not isinstance(spec.entry_point, str):
        if not modules:
            raise UsageError(
                f"{env_id} is registered at run time with a Python object as its entry point "
                f"({spec.entry_point!r}), so an exported server cannot make it. Register it with "
                "a 'package.module:Class' entry point in an installable package and export "
                "'package.module:ENV_ID'."
            )
    else:
        modules.append(spec.entry_point.partition(":")[0])
    providers = importlib.metadata.packages_distributions()
    requirements: list[str] = []
    for module in modules:
        top_level = module.split(".")[0]
        if top_level in {"trl_env", "gymnasium"}:
            continue
        names = providers.get(top_level)
        if not names:
            raise UsageError(
                f"{env_id} comes from the module {module!r}, which no installed distribution "
                "provides, so an exported server cannot import it. Make it an installable "
                "package (pip install -e .) and export again."
            )
        requirement = f"{names[0]}=={importlib.metadata.version(names[0])}"
        if requirement not in requirements:
            requirements.append(requirement)
    return requirements


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def _pyproject(package: str, env_id: str, wheel: str, requirements: list[str]) -> str:
    dependencies = "".join(f"    {_toml_string(r)},\n" for r in requirements)
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
# uv run --project . server [--port N]
server = "{package}.server.app:main"

[tool.uv.sources]
# The trl-env this directory was exported from (see README.md to use a released one instead).
trl-env = {{ path = "{wheel}" }}

[tool.setuptools]
packages = ["{package}", "{package}.server"]
package-dir = {{ "{package}" = ".", "{package}.server" = "server" }}
"""


def _app(env_id: str, env_kwargs: Mapping[str, Any], max_sessions: int) -> str:
    return f'''\
"""OpenEnv server of the trl-env text env {env_id} (written by: trl-env serve {env_id} --export).

One OpenEnv session (WebSocket /ws) per episode, {max_sessions} at once by default
(TRL_ENV_MAX_SESSIONS overrides it). Run it with any of:

    uvicorn server.app:app --host 0.0.0.0 --port 8000
    uv run --project . server --port 8000
    python -m server.app --port 8000
"""

import argparse
import json
import os

from trl_env.openenv.server import make_app

ENV_ID = {env_id!r}
ENV_KWARGS = json.loads({json.dumps(dict(env_kwargs))!r})
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


_DOCKERFILE = """\
# Image of this OpenEnv environment: `openenv build .` or `openenv push .` use this file as is;
# by hand: docker build -t {package} -f server/Dockerfile . && docker run -p 8000:8000 {package}
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


def _readme(package: str, env_id: str) -> str:
    return f"""\
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
uv run --project . server --port 8000         # run it here
openenv validate .                             # openenv-core's checks of this directory
openenv build . && docker run -p 8000:8000 openenv-{package}   # a Docker image
openenv push .                                 # a Hugging Face Space
```

Play it from Python with trl-env (`pip install "trl-env[openenv]"`):

```python
import gymnasium as gym
import trl_env

env = gym.make("OpenEnv-v0", base_url="http://localhost:8000")
observation, info = env.reset(seed=0)
```

`wheels/` holds the trl-env this directory was exported from, pinned in `uv.lock`. To use a
released trl-env instead, delete the `[tool.uv.sources]` entry in `pyproject.toml` and run
`uv lock`.
"""


def _manifest(package: str, env_id: str) -> str:
    return f"""\
# OpenEnv manifest of the trl-env text env {env_id} (written by: trl-env serve {env_id} --export).
spec_version: 1
name: {package}
type: space
runtime: fastapi
app: server.app:app
port: 8000
"""


def _lock(directory: Path) -> None:
    uv = shutil.which("uv")
    if uv is None:
        raise UsageError(
            "uv is not installed, and openenv validate/build/push need the directory's uv.lock: "
            "pip install uv and export again, or export with --no-lock and run 'uv lock' in "
            f"{directory} yourself."
        )
    result = subprocess.run([uv, "lock"], cwd=directory, capture_output=True, text=True)
    if result.returncode != 0:
        raise UsageError(f"'uv lock' failed in {directory}:\n{result.stderr.strip()}")


def export_openenv_dir(
    env_id: str,
    directory: str | os.PathLike[str],
    *,
    env_kwargs: Mapping[str, Any] | None = None,
    max_sessions: int = 256,
    lock: bool = True,
    overwrite: bool = False,
) -> Path:
    """Write ``env_id`` as a standalone OpenEnv environment directory (see the module docs).

    Args:
        env_id: A registered text env ID (``module:ID`` for an env of another package).
        directory: Where to write; must not exist or be empty unless ``overwrite``.
        env_kwargs: ``gym.make`` keyword arguments, fixed in ``server/app.py``.
        max_sessions: Concurrent sessions (episodes) at most by default; the environment
            variable ``TRL_ENV_MAX_SESSIONS`` overrides it where the server runs.
        lock: Run ``uv lock`` in the directory (needs ``uv``); openenv-core's validator and the
            image's ``uv sync --frozen`` use the lock file.
        overwrite: Replace the files of an existing export.

    Returns:
        The directory.

    Raises:
        UsageError: Unknown ID, bad kwargs, not a text env, an env the server could not
            import, a non-empty ``directory`` without ``overwrite``, or ``uv lock`` failing.
    """
    env_kwargs = dict(env_kwargs or {})
    if not isinstance(max_sessions, int) or max_sessions < 1:
        raise UsageError(f"max_sessions must be a positive int, got {max_sessions!r}")
    check_text_env(env_id, env_kwargs, argument="--env-kwargs")
    requirements = _foreign_requirements(env_id)
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file; pass a directory to export {env_id} into.")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise UsageError(
            f"{out} is not empty; pass an empty or new directory, or --overwrite to replace "
            "an earlier export."
        )
    out.mkdir(parents=True, exist_ok=True)
    if overwrite:
        shutil.rmtree(out / "wheels", ignore_errors=True)  # no stale wheel of another version

    package = package_name(env_id)
    wheel = build_trl_env_wheel(out / "wheels").relative_to(out).as_posix()
    version = importlib.metadata.version(_DISTRIBUTION)
    trl_env_requirement = f"trl-env[{','.join(_extras(env_id))}]=={version}"
    # openenv-core by name as well: openenv-core's validator looks for it among the dependencies.
    requirements = [trl_env_requirement, "openenv-core>=0.3.0", *requirements]

    (out / "server").mkdir(exist_ok=True)
    files = {
        "openenv.yaml": _manifest(package, env_id),
        "pyproject.toml": _pyproject(package, env_id, wheel, requirements),
        "README.md": _readme(package, env_id),
        "__init__.py": f'"""OpenEnv environment of the trl-env text env {env_id}."""\n',
        "server/__init__.py": "",
        "server/app.py": _app(env_id, env_kwargs, max_sessions),
        "server/Dockerfile": _DOCKERFILE.format(package=package, max_sessions=max_sessions),
        ".dockerignore": ".venv/\n__pycache__/\n*.pyc\n",
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    if lock:
        _lock(out)
    elif (out / "uv.lock").exists():
        (out / "uv.lock").unlink()  # an earlier export's lock does not pin this one's wheel
    return out
