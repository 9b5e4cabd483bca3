"""OpenEnv both ways, against real servers started here: trl-env's own serve and an env made with
openenv-core's own template (``openenv init``)."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

pytest.importorskip("openenv")

import trl_env  # noqa: F401  (registers OpenEnv-v0)
from trl_env.cli import main  # `python -m trl_env.openenv` runs the same command
from trl_env.error import EpisodeOverError, NotATextEnvError
from trl_env.openenv import OpenEnvConnectionError, make_app
from trl_env.utils import check_text_env

WORDS = ["[crane]", "[slate]", "hello there", "[moist]", "[pound]", "[light]", "[brick]"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_up(
    url: str, process: subprocess.Popen | None = None, log: Path | None = None, timeout: float = 60
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"server exited: {log.read_text() if log else ''}")
        with contextlib.suppress(OSError):
            urllib.request.urlopen(f"{url}/health", timeout=1).close()
            return
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not come up in {timeout} s")


@contextlib.contextmanager
def subprocess_server(
    args: list[str], *, cwd: Path, log: Path, env: dict[str, str] | None = None
) -> Iterator[str]:
    port = free_port()
    command = [arg.replace("{port}", str(port)) for arg in args]
    with log.open("w") as output:  # a file, not a pipe: a full pipe would block the server
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process, log)
        yield url
    finally:
        process.terminate()  # uvicorn then waits for open sessions: do not wait forever
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@contextlib.contextmanager
def thread_server(env_id: str, **kwargs) -> Iterator[str]:
    import uvicorn

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(make_app(env_id, **kwargs), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url)
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture(scope="module")
def wordle_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # `trl-env serve` (python -m trl_env serve), the command users run.
    serve = [sys.executable, "-m", "trl_env", "serve", "TextWordle-v0"]
    folder = tmp_path_factory.mktemp("wordle-server")
    args = [*serve, "--port", "{port}", "--max-sessions", "64"]
    with subprocess_server(args, cwd=folder, log=folder / "server.log") as url:
        # The command says where it serves (uvicorn is silent at its default log level).
        assert (
            "serving TextWordle-v0 over OpenEnv at http://" in (folder / "server.log").read_text()
        )
        yield url


def play(env: gym.Env[str, str], seed: int, actions: list[str]) -> list[tuple]:
    observation, _ = env.reset(seed=seed)
    trajectory: list[tuple] = [(observation,)]
    for action in actions:
        observation, reward, terminated, truncated, info = env.step(action)
        trajectory.append((observation, reward, terminated, truncated, info.get("won")))
        if terminated or truncated:
            break
    return trajectory


def test_served_env_plays_exactly_like_the_local_one(wordle_server) -> None:
    remote = gym.make("OpenEnv-v0", base_url=wordle_server)
    local = gym.make("TextWordle-v0")
    for seed in (0, 7):
        assert play(remote, seed, WORDS) == play(local, seed, WORDS)
    # The last step ended the episode (TimeLimit: truncated) and closed its session.
    with pytest.raises(EpisodeOverError):
        remote.step("[crane]")
    remote.close()


def test_client_env_passes_check_text_env(wordle_server) -> None:
    check_text_env(gym.make("OpenEnv-v0", base_url=wordle_server), actions=WORDS[:3])


def test_one_session_per_episode_closed_when_the_episode_ends() -> None:
    with thread_server("TextWordle-v0", max_sessions=2) as url:
        first, second, third = (gym.make("OpenEnv-v0", base_url=url) for _ in range(3))
        first.reset(seed=1)
        second.reset(seed=2)
        with pytest.raises(OpenEnvConnectionError, match="CAPACITY_REACHED"):
            third.reset(seed=3)  # two episodes playing: two sessions, the server's maximum
        for action in WORDS[:6]:
            *_, terminated, truncated, _ = first.step(action)
        assert terminated or truncated
        observation, _ = third.reset(seed=3)  # the finished episode gave its session back
        assert observation.startswith("Let's play Wordle")
        for env in (first, second, third):
            env.close()


def test_rollout_through_the_server_is_token_exact_with_any_worker_count(wordle_server) -> None:
    pytest.importorskip("trl")
    from tests.test_stepping import WordGenerator
    from trl_env.trl import play_episodes
    from trl_env.trl._processors import ChatTemplateProcessor
    from trl_env.trl._rollout import RolloutConfig
    from trl_env.trl._tasks import Task
    from trl_env.trl.models import build_tiny_tokenizer

    processor = ChatTemplateProcessor(build_tiny_tokenizer("qwen3"))
    seeds = [str(seed) for seed in range(4) for _ in range(2)]  # num_generations = 2

    def run(env_id: str, kwargs: dict, **config) -> list:
        tasks = [Task(env_id, seed=seed, kwargs=kwargs) for seed in seeds]
        generator = WordGenerator(processor.tokenizer)
        return play_episodes(
            tasks, generator, processor, RolloutConfig(**config), max_completion_length=2048
        )

    local = run("TextWordle-v0", {})
    remote = run("OpenEnv-v0", {"base_url": wordle_server}, env_workers=8, env_step_timeout=60.0)
    for a, b in zip(local, remote, strict=True):
        assert b.error is None
        assert (a.prompt_ids, a.completion_ids, a.env_mask) == (
            b.prompt_ids,
            b.completion_ids,
            b.env_mask,
        )
        assert (a.rewards, a.ended_by, a.turns) == (b.rewards, b.ended_by, b.turns)


def test_server_gone_fails_the_episode_and_reset_fails_over() -> None:
    with thread_server("TextWordle-v0") as live:
        with thread_server("TextWordle-v0") as doomed:
            env = gym.make("OpenEnv-v0", base_url=doomed)
            env.reset(seed=0)
        with pytest.raises(OpenEnvConnectionError, match="broke during step"):
            env.step("[crane]")
        with pytest.raises(OpenEnvConnectionError, match="no OpenEnv server answered"):
            env.reset(seed=0)
        # A client list: the dead server is skipped, the episode plays on the live one.
        both = gym.make("OpenEnv-v0", base_url=[doomed, live])
        for seed in range(3):
            observation, _ = both.reset(seed=seed)
            assert observation.startswith("Let's play Wordle") and both.unwrapped.server == live
        both.close()


class RaisesOnBoom(gym.Wrapper):
    def step(self, action):
        if "boom" in action:
            raise ValueError("kaboom on the server")
        return super().step(action)


def test_an_env_that_raises_on_the_server_raises_in_the_client() -> None:
    gym.register("TextBoomWordle-v0", entry_point=lambda: RaisesOnBoom(gym.make("TextWordle-v0")))
    try:
        with thread_server("TextBoomWordle-v0") as url:
            env = gym.make("OpenEnv-v0", base_url=url)
            env.reset(seed=0)
            with pytest.raises(RuntimeError, match="kaboom on the server"):
                env.step("boom")
            with pytest.raises(EpisodeOverError):  # the session was closed with the episode
                env.step("[crane]")
            assert env.reset(seed=0)[0].startswith("Let's play Wordle")
            env.close()
    finally:
        del gym.registry["TextBoomWordle-v0"]


def test_an_env_from_openenv_cores_own_template(tmp_path: Path) -> None:
    # `openenv init` writes openenv-core's echo env template (server/app.py, models, client).
    subprocess.run(
        [sys.executable, "-m", "openenv.cli", "init", "echo_text", "--output-dir", str(tmp_path)],
        check=True,
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    uvicorn = [sys.executable, "-m", "uvicorn", "echo_text.server.app:app"]
    args = [*uvicorn, "--port", "{port}"]
    with subprocess_server(args, cwd=tmp_path, log=tmp_path / "server.log") as url:
        env = gym.make("OpenEnv-v0", base_url=url, observation_key="echoed_message")
        observation, _ = env.reset(seed=0)
        assert observation == "Echo Text environment ready!"
        observation, reward, terminated, truncated, info = env.step("hello")
        assert (observation, reward, terminated, truncated) == ("hello", 0.5, False, False)
        assert info["message_length"] == 5
        env.close()
        check_text_env(gym.make("OpenEnv-v0", base_url=url, observation_key="echoed_message"))


def test_serve_errors_are_clear(capsys) -> None:
    assert main(["serve", "TextWordel-v0", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert "Did you mean: `TextWordle`" in err  # gymnasium's hint
    assert err.startswith("trl-env serve: error: ") and "trl-env list" in err
    with pytest.raises(NotATextEnvError, match="only text envs can be served"):
        make_app("CartPole-v1")
    assert main(["serve", "TextWordle-v0", "--env-kwargs", "[1, 2]"]) == 2
    assert "JSON object" in capsys.readouterr().err
    with pytest.raises(ValueError, match="base_url must be a server URL"):
        gym.make("OpenEnv-v0", base_url=[])
    with pytest.raises(ValueError, match="message_timeout"):
        gym.make("OpenEnv-v0", base_url="http://127.0.0.1:1", message_timeout=0)
    assert main(["serve", "TextWordle-v0", "--max-sessions", "0"]) == 2
    assert "expected a positive integer" in capsys.readouterr().err


def test_server_meets_openenvs_runtime_standard(wordle_server) -> None:
    # openenv-core's own validator of running servers (`openenv validate --url`).
    result = subprocess.run(
        [sys.executable, "-m", "openenv.cli", "validate", "--url", wordle_server],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    report = json.loads(result.stdout)
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]


def test_app_module_serves_the_env_named_by_the_environment(monkeypatch) -> None:
    from fastapi.testclient import TestClient

    monkeypatch.setenv("TRL_ENV_ID", "TextGuessNumber-v0")
    monkeypatch.setenv("TRL_ENV_KWARGS", "{}")
    monkeypatch.delitem(sys.modules, "trl_env.openenv.app", raising=False)
    app = importlib.import_module("trl_env.openenv.app").app
    with TestClient(app) as client:  # the stateless HTTP endpoints: one env per request
        answer = client.post("/reset", json={"seed": 3}).json()
    local, _ = gym.make("TextGuessNumber-v0").reset(seed=3)
    assert answer["observation"]["text"] == local and answer["done"] is False
    monkeypatch.delitem(sys.modules, "trl_env.openenv.app")
