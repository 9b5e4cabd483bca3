"""deploy/openenv/Dockerfile, emulated without Docker (no Docker engine is needed to run this).

The Dockerfile is parsed; its COPY lines are replayed into a temporary folder laid out as the
image's WORKDIR; the package is built and installed (not editable) from that folder only, into a
fresh venv, the way its RUN line does; its CMD is started with its ENV, from a folder outside the
repository, and one episode is played through it with ``OpenEnv-v0`` after its HEALTHCHECK
answers. Not checked: the base image (``FROM``: only its Python version is compared with
``requires-python``), the dependencies pip would download in the image (here they are those of
the Python running the tests, base interpreter or venv, checked against the package's
requirements), and ``docker build``/``docker run``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import site
import subprocess
import tomllib
import venv
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("openenv", reason="the openenv extra (openenv-core) is not installed")
pytest.importorskip("uvicorn", reason="the openenv extra (uvicorn) is not installed")

import yaml  # an openenv-core dependency
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

import trl_env  # noqa: F401  (registers OpenEnv-v0 and the catalogue)
from tests import test_openenv as served  # a module: its tests are not collected here

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy" / "openenv"
KNOWN = {"ARG", "FROM", "WORKDIR", "COPY", "RUN", "ENV", "EXPOSE", "HEALTHCHECK", "CMD"}


@dataclass
class Image:
    """What the Dockerfile says, one field per instruction."""

    args: dict[str, str] = field(default_factory=dict)  # ARG defaults
    base: str = ""
    workdir: str = "/"
    copies: list[tuple[list[str], str]] = field(default_factory=list)  # (sources, destination)
    runs: list[list[str]] = field(default_factory=list)
    shell_runs: list[str] = field(default_factory=list)  # the same RUN lines, as /bin/sh gets them
    env: dict[str, str] = field(default_factory=dict)
    expose: list[str] = field(default_factory=list)
    healthcheck: tuple[dict[str, str], str] = ({}, "")  # (--options, shell command)
    cmd: list[str] = field(default_factory=list)


def parse_dockerfile(text: str) -> Image:
    """The Dockerfile's instructions; only the forms this Dockerfile uses (others fail loudly)."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):  # Docker drops comments inside continuations too
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        lines.append(pending + line)
        pending = ""
    assert not pending, "the Dockerfile ends inside a line continuation"

    image = Image()
    for line in lines:
        keyword, _, rest = line.partition(" ")
        keyword, rest = keyword.upper(), rest.strip()
        assert keyword in KNOWN, f"{keyword}: teach tests/test_docker_context.py this instruction"
        if keyword == "ARG":
            name, _, default = rest.partition("=")
            image.args[name] = default
        elif keyword == "FROM":
            image.base = re.sub(r"\$\{(\w+)\}", lambda m: image.args[m[1]], rest)
        elif keyword == "WORKDIR":
            image.workdir = rest
        elif keyword == "COPY":
            *sources, destination = shlex.split(rest)
            assert sources and not any(s.startswith("--") for s in sources), line
            image.copies.append((sources, destination))
        elif keyword == "RUN":
            image.runs.append(shlex.split(rest))
            image.shell_runs.append(rest)
        elif keyword == "ENV":
            for pair in shlex.split(rest):
                name, equals, value = pair.partition("=")
                assert equals, f"ENV {pair}: only the NAME=value form is parsed"
                image.env[name] = value
        elif keyword == "EXPOSE":
            image.expose += rest.split()
        elif keyword == "HEALTHCHECK":
            options, _, command = rest.partition(" CMD ")
            flags = dict(option.removeprefix("--").split("=", 1) for option in options.split())
            image.healthcheck = (flags, command.strip())
        elif keyword == "CMD":
            image.cmd = json.loads(rest)  # the exec form: uvicorn is PID 1 and gets SIGTERM
    return image


IMAGE = parse_dockerfile((DEPLOY / "Dockerfile").read_text("utf-8"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))


def uvicorn_option(name: str) -> str:
    return IMAGE.cmd[IMAGE.cmd.index(name) + 1]


def pip_install_target() -> tuple[list[str], str, list[str]]:
    """The single RUN line, ``pip install [flags] .[extras]``: (flags, folder, extras)."""
    assert len(IMAGE.runs) == 1, IMAGE.runs
    run = IMAGE.runs[0]
    assert run[:2] == ["pip", "install"], run
    flags = [arg for arg in run[2:] if arg.startswith("-")]
    (target,) = [arg for arg in run[2:] if not arg.startswith("-")]
    match = re.fullmatch(r"([^\[]+)(?:\[([\w,-]+)\])?", target)
    assert match, target
    return flags, match[1], match[2].split(",") if match[2] else []


def test_dockerfile_agrees_with_the_repository_and_openenv_yaml() -> None:
    # Every COPY source is in the build context (the repository root, per the Dockerfile's header).
    for sources, _ in IMAGE.copies:
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
    # The base image's Python satisfies requires-python.
    python = re.fullmatch(r"python:(\d+\.\d+)[\w.-]*", IMAGE.base)
    assert python, f"FROM {IMAGE.base}: expected an official python:X.Y image"
    assert python[1] in SpecifierSet(PYPROJECT["project"]["requires-python"])
    # RUN installs the copied project itself, with extras the project declares.
    _, folder, extras = pip_install_target()
    assert folder == ".", f"RUN installs {folder}, not the WORKDIR"
    assert set(extras) <= set(PYPROJECT["project"]["optional-dependencies"])
    # The env the image serves by default is registered; the session cap is a number.
    assert gym.spec(IMAGE.env["TRL_ENV_ID"]) is not None
    assert int(IMAGE.env["TRL_ENV_MAX_SESSIONS"]) > 0
    # CMD, EXPOSE, HEALTHCHECK and openenv.yaml: one app, one port.
    manifest = yaml.safe_load((DEPLOY / "openenv.yaml").read_text("utf-8"))
    assert IMAGE.cmd[0] == "uvicorn"
    assert IMAGE.cmd[1] == manifest["app"] == "trl_env.openenv.app:app"
    port = uvicorn_option("--port")
    assert str(manifest["port"]) == port
    assert IMAGE.expose == [port]
    assert uvicorn_option("--host") == "0.0.0.0"  # 127.0.0.1 would be unreachable from outside
    assert f"127.0.0.1:{port}/health" in IMAGE.healthcheck[1]


def requirement_met(requirement: Requirement) -> bool:
    """Whether the Python running the tests has a version of the requirement's package."""
    try:
        installed = version(requirement.name)
    except PackageNotFoundError:
        return False
    return requirement.specifier.contains(installed, prereleases=True)


def replay_copies(context: Path, root: Path) -> Path:
    """The image's filesystem after its COPY lines: ``root`` stands for ``/``; returns WORKDIR."""
    workdir = root / IMAGE.workdir.lstrip("/")
    workdir.mkdir(parents=True)
    for sources, destination in IMAGE.copies:
        target = workdir / destination
        for source in sources:
            path = context / source
            if path.is_dir():  # Docker copies a folder's contents into the destination
                shutil.copytree(
                    path, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
                )
            elif destination.endswith("/"):
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target / path.name)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    return workdir


# Run by the venv's Python from a folder outside the repository: what uvicorn imports, where from,
# and whether the installed distribution's requirements (with the RUN line's extras) are met here.
PROBE = """
import json, sys, sysconfig
from importlib.metadata import PackageNotFoundError, distribution, version
from packaging.requirements import Requirement
import trl_env.openenv.app

extras = json.loads(sys.argv[1])
dist = distribution("trl-env")
unmet = []
for text in dist.requires or []:
    requirement = Requirement(text)
    marker = requirement.marker
    if marker is not None and not any(marker.evaluate({"extra": e}) for e in extras or [""]):
        continue
    try:
        installed = version(requirement.name)
    except PackageNotFoundError:
        installed = None
    if installed is None or not requirement.specifier.contains(installed, prereleases=True):
        unmet.append(f"{text} (installed: {installed})")
print(json.dumps({
    "site_packages": sysconfig.get_path("purelib"),
    "dist": str(dist.locate_file("")),
    "extras": dist.metadata.get_all("Provides-Extra") or [],
    "unmet": unmet,
    "modules": {name: getattr(module, "__file__", None) for name, module in sys.modules.items()
                if name.split(".")[0] == "trl_env"},
}))
"""


def venv_seeing_these_packages(environment: Path) -> str:
    """A fresh venv whose Python sees the packages of the Python running the tests; its path.

    Not ``system_site_packages=True``: from inside a venv, that reaches the base interpreter's
    packages, not the venv's. A ``.pth`` file in the new venv adds this interpreter's site
    directories instead (``site.addsitedir``, so their own ``.pth`` files apply too), after its
    own site-packages, whether the tests run on a base interpreter or in a venv (with or without
    system site packages). The checkout itself (on ``sys.path`` through pytest) is not added.
    """
    venv.EnvBuilder(with_pip=False).create(environment)
    python = str(environment / "bin" / "python")
    site_dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        site_dirs.append(site.getusersitepackages())
    own = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lines = [f"import site; site.addsitedir({directory!r})" for directory in site_dirs]
    Path(own, "_the_tests_packages.pth").write_text("\n".join(lines) + "\n", "utf-8")
    return python


def test_image_builds_from_its_copied_files_and_serves_an_episode(tmp_path: Path) -> None:
    workdir = replay_copies(ROOT, tmp_path / "image")
    # RUN pip install ".[openenv]": the same build, but into a fresh venv, offline, without deps
    # (they are the packages of the Python running this test) and without build isolation (so
    # the build backend is that Python's setuptools: --check-build-dependencies holds it to
    # build-system.requires). No pip in the venv: ensurepip's older setuptools would shadow it.
    flags, folder, extras = pip_install_target()
    backend = PYPROJECT["build-system"]["requires"]
    unmet_backend = [
        requirement for requirement in backend if not requirement_met(Requirement(requirement))
    ]
    assert not unmet_backend, (
        f"building trl-env needs {unmet_backend} here (pyproject's build-system.requires; "
        "installing torch==2.13.0 brings setuptools>=77): pip install " + " ".join(unmet_backend)
    )
    environment = tmp_path / "venv"
    python = venv_seeing_these_packages(environment)
    outside = tmp_path / "outside"  # every process runs here: the repository is not importable
    outside.mkdir()
    env = {
        k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("TRL_ENV_")
    }
    env |= {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1"}
    install = [python, "-m", "pip", "install", *flags, "--no-deps", "--no-build-isolation"]
    install += ["--check-build-dependencies", str(workdir / folder)]
    result = subprocess.run(install, cwd=outside, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

    # The install holds every module and data file of the copied sources (a file left out would
    # otherwise be imported from the repository by this machine's editable install of trl-env).
    probe = subprocess.run(
        [python, "-c", PROBE, json.dumps(extras)],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
    )
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    site_packages = Path(found["site_packages"])
    assert site_packages.is_relative_to(environment)
    setuptools = PYPROJECT["tool"]["setuptools"]
    roots = setuptools["package-dir"]  # package -> folder of the sources
    expected = [
        (package, path)
        for package, folder in roots.items()
        for path in (workdir / folder).rglob("*.py")
    ]
    for package, patterns in setuptools["package-data"].items():
        expected += [
            (package, path)
            for pattern in patterns
            for path in (workdir / roots[package]).glob(pattern)
        ]
    missing = []
    for package, path in expected:
        installed = site_packages.joinpath(
            *package.split("."), path.relative_to(workdir / roots[package])
        )
        if not installed.is_file():
            missing.append(str(path.relative_to(workdir)))
    assert not missing, f"built from the copied files, the install lacks {missing}"
    assert Path(found["dist"]).resolve() == site_packages.resolve()
    assert set(extras) <= set(found["extras"])
    assert not found["unmet"], f"requirements of trl-env[{','.join(extras)}] not met here"
    assert Path(found["modules"]["trl_env"]).is_relative_to(site_packages)  # trl_env.__file__
    strays = {
        name: file
        for name, file in found["modules"].items()
        if not Path(file or "/").is_relative_to(site_packages)
    }
    assert not strays, f"imported from outside the install: {strays}"

    # CMD with the image's ENV, on a free port and the loopback interface; `python -m uvicorn` is
    # the `uvicorn` script of the venv (this machine's `uvicorn` script runs another Python).
    assert IMAGE.cmd[0] == "uvicorn"
    command = [python, "-m", *IMAGE.cmd]
    command[command.index("--port") + 1] = "{port}"
    command[command.index("--host") + 1] = "127.0.0.1"
    log = tmp_path / "server.log"
    with served.subprocess_server(command, cwd=outside, log=log, env=env | IMAGE.env) as url:
        # The HEALTHCHECK command itself, within its --timeout.
        options, check = IMAGE.healthcheck
        port = uvicorn_option("--port")
        assert check.count(f":{port}/") == 1, check
        check_args = shlex.split(check.replace(f":{port}/", f":{url.rsplit(':', 1)[1]}/"))
        assert check_args[0] == "python", check_args
        timeout = float(options.get("timeout", "30s").removesuffix("s"))
        health = subprocess.run(
            [python, *check_args[1:]],
            cwd=outside,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert health.returncode == 0, health.stderr
        # One episode of the default env (TRL_ENV_ID), played as it plays locally.
        remote = gym.make("OpenEnv-v0", base_url=url)
        local = gym.make(IMAGE.env["TRL_ENV_ID"])
        try:
            assert served.play(remote, 3, served.WORDS) == served.play(local, 3, served.WORDS)
        finally:
            remote.close()
            local.close()
