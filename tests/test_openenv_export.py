"""``trl-env serve ENV_ID --export DIR``: a standalone OpenEnv environment directory.

The export is checked with openenv-core's own tools, and its image is emulated without Docker:

- ``openenv validate DIR`` (local) passes with all four deployment modes, and ``openenv push``'s
  own check of the directory's layout passes;
- ``openenv build DIR`` runs ``docker build`` (a stand-in ``docker`` on PATH records the command
  and keeps the build context) on the directory with its ``server/Dockerfile``;
- ``openenv push``'s own staging step (Dockerfile to the root, web interface on) is applied, and
  that staged directory is "built": the Dockerfile's COPY, its RUN line run by bash (``uv sync
  --frozen --no-editable`` from the lock file, ``pip install uv`` answered by a stand-in ``pip``
  because uv is already here), then its CMD with its ENV, from the image's working directory;
- the HEALTHCHECK answers, ``openenv validate --url`` passes, the web interface answers, and an
  episode played through ``OpenEnv-v0`` is the same as the local one;
- openenv-core's typed client (the export's ``client.py``) plays the server too;
- the ``server`` script (``[project.scripts]``, what ``uv run server`` runs) serves as well;
- an env of a package installed from a local folder (``module:ID``) ships that package's wheel.

``uv lock``/``uv sync`` resolve the dependencies from the package index, as the image build does.
Not checked: the base image and ``docker build`` itself (no Docker engine here).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("openenv", reason="the openenv extra (openenv-core) is not installed")
pytest.importorskip("uvicorn", reason="the openenv extra (uvicorn) is not installed")

import urllib.request

import yaml  # an openenv-core dependency

import trl_env
from tests import test_openenv as served  # modules: their tests are not collected here
from tests.test_docker_context import parse_dockerfile
from trl_env.cli import main  # `python -m trl_env.openenv` runs the same command
from trl_env.error import UsageError
from trl_env.openenv._export import build_trl_env_wheel, export_openenv_dir, package_name

ENV_ID = "TextWordle-v0"
needs_uv = pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed (dev extra)")


def openenv_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, "-m", "openenv.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**(env or os.environ), "NO_COLOR": "1", "TERM": "dumb"},
        timeout=300,
    )


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("uv") is None:
        pytest.skip("uv is not installed (dev extra)")
    out = tmp_path_factory.mktemp("export") / "wordle_env"
    assert main(["serve", ENV_ID, "--export", str(out), "--max-sessions", "32"]) == 0
    return out


def test_export_passes_openenvs_validator(exported: Path) -> None:
    result = openenv_cli("validate", str(exported), "--json", "--verbose")
    report = json.loads(result.stdout)
    assert report["passed"], report["issues"]
    modes = report["deployment_modes"]
    assert set(modes) == {"docker", "openenv_serve", "uv_run", "python_module"}
    assert all(modes.values()), modes
    # openenv push's own check of the layout (it runs before any upload).
    from openenv.cli.commands.push import _validate_openenv_directory

    assert _validate_openenv_directory(exported)[0] == package_name(ENV_ID)

    manifest = yaml.safe_load((exported / "openenv.yaml").read_text("utf-8"))
    assert manifest["name"] == package_name(ENV_ID) == "textwordle_v0"
    assert (manifest["app"], manifest["port"], manifest["runtime"]) == (
        "server.app:app",
        8000,
        "fastapi",
    )
    project = tomllib.loads((exported / "pyproject.toml").read_text("utf-8"))
    version = project_version()
    assert f"trl-env[openenv]=={version}" in project["project"]["dependencies"]
    wheel = project["tool"]["uv"]["sources"]["trl-env"]["path"]
    assert wheel == f"wheels/trl_env-{version}-py3-none-any.whl"
    assert (exported / wheel).is_file()
    # The lock pins that very wheel, by hash.
    lock = tomllib.loads((exported / "uv.lock").read_text("utf-8"))
    (locked,) = [p for p in lock["package"] if p["name"] == "trl-env"]
    assert locked["source"] == {"path": wheel}
    assert locked["version"] == version
    digest = hashlib.sha256((exported / wheel).read_bytes()).hexdigest()
    assert [w["hash"] for w in locked["wheels"]] == [f"sha256:{digest}"]


def project_version() -> str:
    from importlib.metadata import version

    return version("trl-env")


def test_wheel_holds_the_running_code_and_is_reproducible(tmp_path: Path) -> None:
    first = build_trl_env_wheel(tmp_path / "a")
    second = build_trl_env_wheel(tmp_path / "b")
    assert first.read_bytes() == second.read_bytes()  # uv.lock pins the wheel's hash
    names = set(zipfile.ZipFile(first).namelist())
    package = Path(trl_env.__file__).parent
    catalogue = Path(trl_env.envs.__path__[0])
    for root, prefix in ((package, "trl_env"), (catalogue, "trl_env/envs")):
        for path in root.rglob("*.py"):
            assert f"{prefix}/{path.relative_to(root).as_posix()}" in names
    for data in ("trl_env/py.typed", "trl_env/envs/data/wordle_answers.txt"):
        assert data in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    metadata = (
        zipfile.ZipFile(first).read(f"trl_env-{project_version()}.dist-info/METADATA").decode()
    )
    assert "Provides-Extra: openenv" in metadata
    assert any(
        line.startswith("Requires-Dist: openenv-core") and 'extra == "openenv"' in line
        for line in metadata.splitlines()
    )


def build_with_openenv(exported: Path, tmp_path: Path) -> tuple[list[str], Path]:
    """``openenv build``, with a stand-in ``docker``: its command line and the build context."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record, context = tmp_path / "docker-args.json", tmp_path / "context"
    docker = bin_dir / "docker"
    docker.write_text(
        f"#!{sys.executable}\n"
        "import json, shutil, sys\n"
        f"json.dump(sys.argv[1:], open({str(record)!r}, 'w'))\n"
        f"shutil.copytree(sys.argv[-1], {str(context)!r})\n"
    )
    docker.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    result = openenv_cli("build", str(exported), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(record.read_text()), context


def stage_for_push(exported: Path, tmp_path: Path) -> Path:
    """The directory ``openenv push`` uploads to a Space (its own staging step, no upload)."""
    from openenv.cli.commands.push import _load_ignore_patterns, _prepare_staging_directory

    staging = tmp_path / "staging"
    _prepare_staging_directory(
        exported,
        package_name(ENV_ID),
        staging,
        ignore_patterns=_load_ignore_patterns(exported, None),
        enable_interface=True,
    )
    return staging


def emulate_image(context: Path, dockerfile: Path, root: Path, tmp_path: Path):
    """Build the image's filesystem under ``root`` (for ``/``) and return (image, workdir, env)."""
    image = parse_dockerfile(dockerfile.read_text("utf-8"))
    assert image.base == "python:3.11-slim"
    workdir = root / image.workdir.lstrip("/")
    ((sources, destination),) = image.copies
    assert sources == ["."] and destination == image.workdir
    shutil.copytree(context, workdir)
    # RUN, as the image's /bin/sh runs it; `pip install uv` is answered by a stand-in (uv is here).
    (run,) = image.shell_runs
    stand_ins = tmp_path / "stand-ins"
    stand_ins.mkdir()
    pip = stand_ins / "pip"
    pip.write_text('#!/bin/sh\n[ "$*" = "install --no-cache-dir uv" ] || exit 3\n')
    pip.chmod(0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "VIRTUAL_ENV"} and not k.startswith("TRL_ENV_")
    }
    env["PATH"] = f"{stand_ins}{os.pathsep}{env['PATH']}"
    result = subprocess.run(
        ["sh", "-c", run],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "uv sync --frozen --no-editable" in run
    image_env = {
        name: value.replace(image.workdir, str(workdir)).replace("$PATH", env["PATH"])
        for name, value in image.env.items()
    }
    return image, workdir, env | image_env


def test_exported_image_serves_episodes_like_the_local_env(exported: Path, tmp_path: Path) -> None:
    docker_args, context = build_with_openenv(exported, tmp_path)
    assert docker_args[:2] == ["build", "-t"]
    dockerfile = Path(docker_args[docker_args.index("-f") + 1])
    assert dockerfile.name == "Dockerfile" and dockerfile.parent.name == "server"
    assert sorted(p.name for p in context.iterdir()) == sorted(p.name for p in exported.iterdir())

    staging = stage_for_push(exported, tmp_path)
    assert (staging / "Dockerfile").is_file()  # moved to the root for Hugging Face
    assert "app_port: 8000" in (staging / "README.md").read_text("utf-8")
    image, workdir, env = emulate_image(
        staging, staging / "Dockerfile", tmp_path / "image", tmp_path
    )
    assert env.get("ENABLE_WEB_INTERFACE") == "true"  # added by openenv push's staging

    python = workdir / ".venv" / "bin" / "python"
    command = [str(python), "-m", *image.cmd]  # the venv's uvicorn, first on the image's PATH
    assert shutil.which(image.cmd[0], path=env["PATH"]) == str(workdir / ".venv/bin/uvicorn")
    command[command.index("--port") + 1] = "{port}"
    command[command.index("--host") + 1] = "127.0.0.1"
    log = tmp_path / "server.log"
    with served.subprocess_server(command, cwd=workdir, log=log, env=env) as url:
        options, check = image.healthcheck
        check_args = shlex.split(check.replace(":8000/", f":{url.rsplit(':', 1)[1]}/"))
        health = subprocess.run(
            [str(python), *check_args[1:]], env=env, capture_output=True, text=True, timeout=3
        )
        assert health.returncode == 0, health.stderr
        report = json.loads(openenv_cli("validate", "--url", url).stdout)
        assert report["passed"], [c for c in report["criteria"] if not c["passed"]]
        with urllib.request.urlopen(f"{url}/web/", timeout=30) as page:
            assert page.status == 200
        # trl_env is the wheel's, in the image's venv, not this checkout.
        probe = subprocess.run(
            [str(python), "-c", "import trl_env; print(trl_env.__file__)"],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
        )
        assert Path(probe.stdout.strip()).is_relative_to(workdir / ".venv"), probe
        # openenv-core's typed client, as the export's client.py names it.
        client_module = load_module(workdir / "client.py", "exported_client")
        from trl_env.openenv import TextAction

        with client_module.TextEnvClient(base_url=url).sync() as client:
            first = client.reset(seed=3)
            second = client.step(TextAction(message="[crane]"))
        expected = served.play(gym.make(ENV_ID), 3, ["[crane]"])
        assert first.observation.text == expected[0][0]
        assert (second.observation.text, second.reward, second.done) == expected[1][:3]

        remote, local = gym.make("OpenEnv-v0", base_url=url), gym.make(ENV_ID)
        try:
            for seed in (3, 4):
                assert served.play(remote, seed, served.WORDS) == served.play(
                    local, seed, served.WORDS
                )
        finally:
            remote.close()
            local.close()

    # The [project.scripts] entry point (`uv run server`), with its --host/--port options.
    server = [str(workdir / ".venv" / "bin" / "server"), "--host", "127.0.0.1", "--port", "{port}"]
    with served.subprocess_server(server, cwd=workdir, log=log, env=env) as url:
        remote, local = gym.make("OpenEnv-v0", base_url=url), gym.make(ENV_ID)
        try:
            assert served.play(remote, 5, served.WORDS[:2]) == served.play(
                local, 5, served.WORDS[:2]
            )
        finally:
            remote.close()
            local.close()


def load_module(path: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


LOCAL_PACKAGE = """\
import gymnasium as gym

gym.register(
    "MyGuess-v0",
    entry_point="trl_env.envs.guess_number:TextGuessNumberEnv",
    kwargs={"high": 20},
)
"""


@needs_uv
def test_env_of_a_local_package_ships_its_wheel(tmp_path: Path, monkeypatch) -> None:
    # A package "installed" from a local folder (pip install -e): its dist-info on sys.path
    # records the folder in direct_url.json, as pip writes it.
    source = tmp_path / "src" / "my-text-envs"
    (source / "my_text_envs").mkdir(parents=True)
    (source / "my_text_envs" / "__init__.py").write_text(LOCAL_PACKAGE)
    (source / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "my-text-envs"\nversion = "0.3.0"\n'
        'dependencies = ["gymnasium>=1.0"]\n'
        '[tool.setuptools]\npackages = ["my_text_envs"]\n'
    )
    site = tmp_path / "site"
    dist_info = site / "my_text_envs-0.3.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: my-text-envs\nVersion: 0.3.0\n"
    )
    (dist_info / "top_level.txt").write_text("my_text_envs\n")
    (dist_info / "direct_url.json").write_text(
        json.dumps({"url": source.as_uri(), "dir_info": {"editable": True}})
    )
    shutil.copytree(source / "my_text_envs", site / "my_text_envs")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "my_text_envs", raising=False)
    try:
        out = export_openenv_dir("my_text_envs:MyGuess-v0", tmp_path / "mine")
        # The bare ID: the server could not make it (nothing would import my_text_envs there).
        with pytest.raises(UsageError, match="export it as 'MODULE:MyGuess-v0'"):
            export_openenv_dir("MyGuess-v0", tmp_path / "bare", lock=False)
        # A regular (not editable) install from a folder: the folder may hold other code now.
        (dist_info / "direct_url.json").write_text(
            json.dumps({"url": source.as_uri(), "dir_info": {}})
        )
        with pytest.raises(UsageError, match=r"not from a package index.*pip install -e"):
            export_openenv_dir("my_text_envs:MyGuess-v0", tmp_path / "regular", lock=False)
        assert not (tmp_path / "bare").exists() and not (tmp_path / "regular").exists()
    finally:
        gym.registry.pop("MyGuess-v0", None)
        sys.modules.pop("my_text_envs", None)

    project = tomllib.loads((out / "pyproject.toml").read_text("utf-8"))
    assert "my-text-envs==0.3.0" in project["project"]["dependencies"]
    wheel = project["tool"]["uv"]["sources"]["my-text-envs"]["path"]
    assert wheel == "wheels/my_text_envs-0.3.0-py3-none-any.whl" and (out / wheel).is_file()
    assert "ENV_ID = 'my_text_envs:MyGuess-v0'" in (out / "server" / "app.py").read_text()
    # The image's install, then the app and one reset, with only what the directory ships.
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    probe = (
        "import server.app as app; import gymnasium as gym; "
        "print(app.ENV_ID, gym.make(app.ENV_ID).reset(seed=1)[0][:60])"
    )
    for command in (
        ["uv", "sync", "--frozen", "--no-editable"],
        [str(out / ".venv" / "bin" / "python"), "-c", probe],
    ):
        result = subprocess.run(
            command, cwd=out, env=env, capture_output=True, text=True, timeout=600
        )
        assert result.returncode == 0, result.stderr
    local = gym.make("TextGuessNumber-v0", high=20).reset(seed=1)[0][:60]
    assert result.stdout.strip() == f"my_text_envs:MyGuess-v0 {local}"


def test_bridged_env_export_names_its_catalogue_extra(tmp_path: Path) -> None:
    out = export_openenv_dir(
        "reasoning_gym/Countdown-v0", tmp_path / "countdown", lock=False, max_sessions=8
    )
    project = tomllib.loads((out / "pyproject.toml").read_text("utf-8"))
    assert (
        f"trl-env[openenv,reasoning-gym]=={project_version()}"
        in (project["project"]["dependencies"])
    )
    app = (out / "server" / "app.py").read_text("utf-8")
    assert "ENV_ID = 'reasoning_gym/Countdown-v0'" in app
    assert '"TRL_ENV_MAX_SESSIONS", "8"' in app
    assert not (out / "uv.lock").exists()


def test_env_kwargs_are_fixed_in_the_app(tmp_path: Path) -> None:
    out = export_openenv_dir(
        "TextGuessNumber-v0", tmp_path / "guess", env_kwargs={"high": 50}, lock=False
    )
    namespace: dict = {}
    app_source = (out / "server" / "app.py").read_text("utf-8")
    kwargs_line = next(line for line in app_source.splitlines() if line.startswith("ENV_KWARGS"))
    exec("import json\n" + kwargs_line, namespace)
    assert namespace["ENV_KWARGS"] == {"high": 50}


def test_failed_or_repeated_exports_keep_what_was_there(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    # `--export .` from inside an earlier export, `uv lock` failing: the export stays as it was.
    first = export_openenv_dir(ENV_ID, tmp_path / "wordle", lock=False)
    before = {p.relative_to(first): p.read_bytes() for p in first.rglob("*") if p.is_file()}
    failing = tmp_path / "bin"
    failing.mkdir()
    (failing / "uv").write_text("#!/bin/sh\necho 'no index here' >&2\nexit 1\n")
    (failing / "uv").chmod(0o755)
    monkeypatch.setenv("PATH", f"{failing}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(first)
    with pytest.raises(UsageError, match="no index here"):
        export_openenv_dir(ENV_ID, ".", overwrite=True)
    after = {p.relative_to(first): p.read_bytes() for p in first.rglob("*") if p.is_file()}
    assert after == before
    # A new directory that fails is not left behind, nor are its parents' new folders' files.
    with pytest.raises(UsageError, match="no index here"):
        export_openenv_dir(ENV_ID, tmp_path / "new")
    assert not (tmp_path / "new").exists()
    # `.` with --overwrite and no lock: replaced in place, the current folder still exists.
    (first / "server" / "stale.py").write_text("")
    export_openenv_dir(ENV_ID, ".", lock=False, overwrite=True)
    assert Path.cwd() == first and (first / "openenv.yaml").is_file()
    assert not (first / "server" / "stale.py").exists()
    assert not [p for p in first.iterdir() if p.name.startswith(".trl-env-export-")]
    with pytest.raises(UsageError, match="empty path"):
        export_openenv_dir(ENV_ID, "", lock=False)
    # The names openenv-core's AutoEnv derives from the env's name.
    from openenv.auto._discovery import _infer_class_name

    client = load_module(first / "client.py", "exported_client_names")
    models = load_module(first / "models.py", "exported_model_names")
    assert getattr(client, _infer_class_name("textwordle_v0", "client")).__name__ == (
        "TextEnvClient"
    )
    for kind in ("action", "observation"):
        assert hasattr(models, _infer_class_name("textwordle_v0", kind))


def test_export_errors_are_clear(tmp_path: Path, capsys, monkeypatch) -> None:
    with pytest.raises(UsageError, match="not a text environment"):
        export_openenv_dir("CartPole-v1", tmp_path / "cartpole", lock=False)
    with pytest.raises(UsageError, match="unknown environment ID"):
        export_openenv_dir("TextWordel-v0", tmp_path / "typo", lock=False)
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match=r"not empty.*--overwrite"):
        export_openenv_dir(ENV_ID, taken, lock=False)
    assert (taken / "notes.txt").read_text() == "mine"

    gym.register("RuntimeOnlyText-v0", entry_point=lambda: gym.make(ENV_ID))
    try:
        with pytest.raises(UsageError, match="export it as 'MODULE:RuntimeOnlyText-v0'"):
            export_openenv_dir("RuntimeOnlyText-v0", tmp_path / "runtime", lock=False)
        with pytest.raises(UsageError, match="no installed distribution provides"):
            export_openenv_dir("tests:RuntimeOnlyText-v0", tmp_path / "runtime", lock=False)
    finally:
        del gym.registry["RuntimeOnlyText-v0"]

    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(UsageError, match=r"uv is not installed.*--no-lock"):
        export_openenv_dir(ENV_ID, tmp_path / "no-uv")
    monkeypatch.undo()
    assert not (tmp_path / "no-uv").exists()  # a failed export leaves nothing behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]

    # --overwrite replaces an earlier export, never a folder it did not write.
    with pytest.raises(UsageError, match="replaces only an earlier export"):
        export_openenv_dir(ENV_ID, taken, lock=False, overwrite=True)
    assert (taken / "notes.txt").read_text() == "mine"

    assert main(["serve", ENV_ID, "--export", str(taken)]) == 2
    assert "not empty" in capsys.readouterr().err
    fresh = tmp_path / "fresh"
    assert main(["serve", ENV_ID, "--export", str(fresh), "--no-lock"]) == 0
    printed = capsys.readouterr().out
    assert "uv lock" in printed and "openenv push" in printed
    (fresh / "server" / "stale.py").write_text("")
    assert main(["serve", ENV_ID, "--export", str(fresh), "--no-lock", "--overwrite"]) == 0
    assert (fresh / "openenv.yaml").is_file() and not (fresh / "server" / "stale.py").exists()
