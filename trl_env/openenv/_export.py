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
        __init__.py, models.py, client.py    the wire types and the typed client
        server/app.py        the FastAPI app (``make_app(ENV_ID)``) and ``main()``
        server/Dockerfile    ``uv sync --frozen`` then ``uvicorn server.app:app``
        wheels/trl_env-<version>-py3-none-any.whl    (and the wheel of a local env package)

The wheel is built from the trl-env that runs the export, so the server plays exactly the code
you tested (local changes included), and the directory builds with no checkout beside it. An env
of another package (``"my_pkg.envs:MyEnv-v0"``) adds that package: pinned from the package index,
or, when it is installed editable from a local folder, as a wheel built from that folder.

Example:
    >>> import tempfile
    >>> from trl_env.openenv._export import export_openenv_dir
    >>> out = export_openenv_dir("TextWordle-v0", tempfile.mkdtemp() + "/wordle", lock=False)
    >>> sorted(path.name for path in out.iterdir())  # doctest: +NORMALIZE_WHITESPACE
    ['.dockerignore', 'README.md', '__init__.py', 'client.py', 'models.py', 'openenv.yaml',
     'pyproject.toml', 'server', 'wheels']
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import gymnasium as gym

from trl_env._checks import check_env_id, check_text_env
from trl_env.error import UsageError
from trl_env.openenv._templates import (
    APP,
    CLIENT,
    DOCKERFILE,
    DOCKERIGNORE,
    MANIFEST,
    MARKER,
    MODELS,
    README,
    pascal_name,
    pyproject,
)
from trl_env.openenv._wheel import DISTRIBUTION, build_trl_env_wheel

__all__ = ["build_trl_env_wheel", "export_openenv_dir", "package_name"]


def package_name(env_id: str) -> str:
    """The Python package (and OpenEnv ``name``) of ``env_id``'s exported directory.

    Example:
        >>> package_name("TextWordle-v0"), package_name("reasoning_gym/Countdown-v0")
        ('textwordle_v0', 'reasoning_gym_countdown_v0')
    """
    return re.sub(r"[^0-9a-z]+", "_", env_id.lower()).strip("_")


def _extras(env_id: str) -> list[str]:
    """The trl-env extras the server of ``env_id`` needs: openenv, and a bridged catalogue's."""
    from trl_env.envs import env_source
    from trl_env.envs.bridges import NAMESPACES

    spec = gym.registry.get(env_id)
    source = env_source(spec) if spec is not None else "registered"
    return ["openenv", source] if source in NAMESPACES else ["openenv"]


def _env_spec(env_id: str) -> gym.envs.registration.EnvSpec:
    """The spec of ``env_id``; for ``module:ID``, after importing the module (as gym.make does)."""
    module, colon, bare_id = env_id.rpartition(":")
    if colon:
        try:
            importlib.import_module(module)
        except ImportError as error:
            raise UsageError(
                f"cannot import {module!r} (from {env_id!r}): {error}. Install the package that "
                "registers the env."
            ) from None
    return check_env_id(bare_id)


def _own_ids() -> set[str]:
    """The IDs that ``import trl_env`` registers: the catalogue and the bridged catalogues."""
    from trl_env.envs import env_source, env_specs

    return {spec.id for spec in env_specs() if env_source(spec) != "registered"}


def _local_source(distribution: str) -> Path | None:
    """The folder ``distribution`` was installed from (``pip install [-e] PATH``), if any."""
    text = importlib.metadata.distribution(distribution).read_text("direct_url.json")
    if not text:
        return None  # from an index: pinned by version
    record = json.loads(text)
    url = urlparse(record.get("url", ""))
    if url.scheme != "file":
        return None
    folder = Path(unquote(url.path))
    if not (record.get("dir_info", {}).get("editable") and folder.is_dir()):
        # A regular install from a folder or wheel: the folder may hold other code by now, and
        # no index has this version.
        raise UsageError(
            f"{distribution} was installed from {record.get('url')}, not from a package index: "
            "an export cannot know that this is still the installed code. Install it editable "
            "(pip install -e FOLDER; the export then ships a wheel built from that folder), or "
            "publish it to an index."
        )
    return folder


def _foreign_distributions(env_id: str, spec: gym.envs.registration.EnvSpec) -> list[str]:
    """Installed distributions other than trl-env and gymnasium that make ``env_id`` (``spec``).

    Raises:
        UsageError: The env is registered by code that an exported server cannot import.
    """
    if ":" not in env_id and env_id not in _own_ids():
        # The server would gym.make an ID that nothing registers there.
        raise UsageError(
            f"{env_id} is not one of trl-env's envs, so the exported server must first import "
            f"the module that registers it: export it as 'MODULE:{env_id}' (gym.make imports "
            f"MODULE first), for example 'my_pkg.envs:{env_id}'."
        )
    modules = [env_id.rpartition(":")[0]] if ":" in env_id else []
    if isinstance(spec.entry_point, str):  # a callable is registered again by the module
        modules.append(spec.entry_point.partition(":")[0])
    providers = importlib.metadata.packages_distributions()
    distributions: list[str] = []
    for module in modules:
        top_level = module.split(".")[0]
        if top_level in {"trl_env", "gymnasium"}:
            continue
        names = providers.get(top_level)
        if not names:
            raise UsageError(
                f"{env_id} comes from the module {module!r}, which no installed distribution "
                "provides, so an exported server cannot import it. Make it an installable "
                "package (pip install -e PATH) and export again."
            )
        if names[0] not in distributions:
            distributions.append(names[0])
    return distributions


def _uv() -> str:
    uv = shutil.which("uv")
    if uv is None:
        raise UsageError(
            "uv is not installed, and openenv validate/build/push need the directory's uv.lock: "
            "pip install uv and export again, or export with --no-lock and run 'uv lock' in the "
            "directory yourself."
        )
    return uv


def _run_uv(uv: str, args: list[str], cwd: Path, what: str) -> None:
    result = subprocess.run([uv, *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise UsageError(f"{what} failed ('uv {' '.join(args)}'):\n{result.stderr.strip()}")


def _check_target(out: Path, env_id: str, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} is a file; pass a directory to export {env_id} into.")
    if not (out.is_dir() and any(out.iterdir())):
        return
    if not overwrite:
        raise UsageError(
            f"{out} is not empty; pass an empty or new directory, or --overwrite to replace "
            "an earlier export."
        )
    manifest = out / "openenv.yaml"
    if not (manifest.is_file() and manifest.read_text("utf-8").startswith(MARKER)):
        raise UsageError(
            f"--overwrite replaces only an earlier export, and {out} is not one (its openenv.yaml "
            "was not written by trl-env serve --export); pass an empty or new directory."
        )


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

    The files are written in a hidden folder inside ``directory`` and moved into place only when
    complete, so a failed export leaves nothing behind (with ``overwrite``, the earlier export
    stays as it was). ``overwrite`` replaces everything in the directory, files added by hand
    included.

    Args:
        env_id: A registered text env ID (``module:ID`` for an env of another package).
        directory: Where to write; must not exist or be empty, unless ``overwrite``.
        env_kwargs: ``gym.make`` keyword arguments, fixed in ``server/app.py``.
        max_sessions: Concurrent sessions (episodes) at most by default; the environment
            variable ``TRL_ENV_MAX_SESSIONS`` overrides it where the server runs.
        lock: Run ``uv lock`` in the directory (needs ``uv``); openenv-core's validator and the
            image's ``uv sync --frozen`` use the lock file.
        overwrite: Replace an earlier export (a directory whose ``openenv.yaml`` this wrote).

    Returns:
        The directory.

    Raises:
        UsageError: Unknown ID, bad kwargs, not a text env, an env the server could not
            import, a non-empty ``directory`` without ``overwrite``, ``uv`` missing or failing.
    """
    env_kwargs = dict(env_kwargs or {})
    if not isinstance(max_sessions, int) or max_sessions < 1:
        raise UsageError(f"max_sessions must be a positive int, got {max_sessions!r}")
    if not str(directory):
        raise UsageError("pass the directory to export into; an empty path names none")
    out = Path(directory).expanduser().resolve()
    _check_target(out, env_id, overwrite)
    spec = _env_spec(env_id)  # imports the module of a module:ID first
    check_text_env(env_id.rpartition(":")[2], env_kwargs, argument="--env-kwargs")
    distributions = _foreign_distributions(env_id, spec)
    local = {name: _local_source(name) for name in distributions}
    uv = _uv() if lock or any(local.values()) else ""

    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    try:
        # Staged inside the target (same filesystem, even a mount point), swapped in when whole.
        with tempfile.TemporaryDirectory(prefix=".trl-env-export-", dir=out) as scratch:
            staging = Path(scratch) / "export"
            _write_export(staging, Path(scratch), env_id, env_kwargs, max_sessions, local, uv)
            if lock:
                _run_uv(uv, ["lock"], staging, f"resolving the dependencies of {env_id}")
            for entry in out.iterdir():  # an earlier export (checked above), or nothing
                if entry == Path(scratch):
                    continue
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
            for entry in staging.iterdir():
                entry.rename(out / entry.name)
    except BaseException:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise
    return out


def _write_export(
    staging: Path,
    scratch: Path,
    env_id: str,
    env_kwargs: dict[str, Any],
    max_sessions: int,
    local: dict[str, Path | None],
    uv: str,
) -> None:
    """Write every file of the export into ``staging`` (all but ``uv.lock``)."""
    package = package_name(env_id)
    wheels = staging / "wheels"
    trl_env_wheel = build_trl_env_wheel(wheels)
    sources = {DISTRIBUTION: trl_env_wheel.relative_to(staging).as_posix()}
    version = trl_env_wheel.name.split("-")[1]
    # openenv-core by name as well: openenv-core's validator looks for it among the dependencies.
    requirements = [f"trl-env[{','.join(_extras(env_id))}]=={version}", "openenv-core>=0.3.0"]
    for name, folder in local.items():
        installed = importlib.metadata.version(name)
        requirements.append(f"{name}=={installed}")
        if folder is None:
            continue
        # Installed editable from a folder, so on no index: ship a wheel built from the folder.
        built = scratch / f"built-{name}"  # uv build adds files beside the wheel
        command = ["build", "--wheel", "--out-dir", str(built), str(folder)]
        _run_uv(uv, command, staging, f"building a wheel of {name} from {folder}")
        (wheel,) = built.glob("*.whl")
        if wheel.name.split("-")[1] != installed:
            raise UsageError(
                f"{folder} now builds {name} {wheel.name.split('-')[1]}, but {installed} is "
                "installed: reinstall it (pip install -e FOLDER), test, and export again."
            )
        sources[name] = (
            Path(shutil.move(wheel, wheels / wheel.name)).relative_to(staging).as_posix()
        )

    (staging / "server").mkdir()
    pascal = pascal_name(package)
    files = {
        "openenv.yaml": MANIFEST.format(marker=MARKER, env_id=env_id, package=package),
        "pyproject.toml": pyproject(package, env_id, requirements, sources),
        "README.md": README.format(env_id=env_id, package=package),
        "__init__.py": f'"""OpenEnv environment of the trl-env text env {env_id}."""\n',
        "models.py": MODELS.format(pascal=pascal),
        "client.py": CLIENT.format(pascal=pascal),
        "server/__init__.py": "",
        "server/app.py": APP.format(
            env_id=env_id,
            env_id_literal=repr(env_id),
            kwargs_literal=repr(json.dumps(env_kwargs)),
            max_sessions=max_sessions,
        ),
        "server/Dockerfile": DOCKERFILE.format(package=package, max_sessions=max_sessions),
        ".dockerignore": DOCKERIGNORE,
    }
    for name, text in files.items():
        (staging / name).write_text(text, encoding="utf-8")
