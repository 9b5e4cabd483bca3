"""`trl-env serve` under abuse, played against a real server process.

Malformed, unknown and deeply nested messages, step before reset, odd seeds, sessions past
`--max-sessions`, clients dropped without a close frame, HTTP garbage and oversized actions:
each is answered, the server stays up, its log gets one info line per dropped client and no
traceback, and afterwards concurrent episodes still play exactly like local ones.
"""

from __future__ import annotations

import base64
import json
import os
import random
import socket
import struct
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import gymnasium as gym
import pytest

pytest.importorskip("openenv")

import trl_env  # noqa: F401  (registers OpenEnv-v0)
from tests.test_openenv import WORDS, play, subprocess_server

ENV_ID = "TextWordle-v0"
MAX_SESSIONS = 8
MAX_ACTION_CHARS = 1000  # small, so the test's oversized actions stay cheap
DROP_LINE = "left /ws without a close message (code "


class RawWebSocket:
    """A minimal WebSocket client on a plain socket: it can leave without a close frame."""

    opened: ClassVar[list[socket.socket]] = []  # closed after each test, whatever happened

    def __init__(self, port: int, path: str = "/ws") -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.opened.append(self.sock)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError(f"no handshake answer: {head!r}")
            head += chunk
        assert head.startswith(b"HTTP/1.1 101"), head

    def send_text(self, text: str) -> None:
        data, mask = text.encode(), os.urandom(4)
        n = len(data)
        if n < 126:
            header = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        masked = int.from_bytes(data, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")
        self.sock.sendall(header + mask + masked.to_bytes(n, "big"))

    def _read(self, n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = self.sock.recv(n - len(out))
            if not chunk:
                raise ConnectionError("the server closed the connection")
            out += chunk
        return out

    def receive(self) -> dict | None:
        """The next text message as JSON, or None when the server sent a close frame."""
        first, second = self._read(2)
        n = second & 0x7F
        if n == 126:
            (n,) = struct.unpack("!H", self._read(2))
        elif n == 127:
            (n,) = struct.unpack("!Q", self._read(8))
        payload = self._read(n)
        if first & 0x0F == 0x8:
            return None
        return json.loads(payload)

    def ask(self, message: dict | str) -> dict | None:
        self.send_text(message if isinstance(message, str) else json.dumps(message))
        return self.receive()

    def close(self) -> None:
        """End the session the polite way: a ``close`` message, the server's close frame, then
        the socket (so the server never sees this client as dropped)."""
        self.send_text(json.dumps({"type": "close"}))
        while self.receive() is not None:
            pass
        self.sock.close()

    def drop(self) -> None:
        """Leave without a close message or frame (a crashed or unplugged client)."""
        self.sock.close()


@dataclass
class Server:
    url: str
    port: int
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("abused-server")
    args = [
        *(sys.executable, "-m", "trl_env", "serve", ENV_ID, "--port", "{port}"),
        *("--max-sessions", str(MAX_SESSIONS), "--max-action-chars", str(MAX_ACTION_CHARS)),
        *("--log-level", "info"),
    ]
    log = folder / "server.log"
    with subprocess_server(args, cwd=folder, log=log) as url:
        yield Server(url, int(url.rsplit(":", 1)[1]), log)


@pytest.fixture
def served(server: Server) -> Iterator[Server]:
    """The module's server; after each test it must be up and must have logged no traceback."""
    start = len(server.log_text())
    yield server
    while RawWebSocket.opened:
        RawWebSocket.opened.pop().close()
    with urllib.request.urlopen(f"{server.url}/health", timeout=10) as answer:
        assert answer.status == 200
    time.sleep(0.2)  # the lines of the test's last clients
    text = server.log_text()[start:]
    assert "Traceback" not in text and "ERROR" not in text, text[-4000:]


def error_of(answer: dict | None) -> dict:
    assert answer is not None and answer["type"] == "error", answer
    return answer["data"]


def reset(ws: RawWebSocket, seed: object) -> dict | None:
    return ws.ask({"type": "reset", "data": {"seed": seed}})


def step(ws: RawWebSocket, message: str) -> dict | None:
    return ws.ask({"type": "step", "data": {"message": message}})


def test_malformed_unknown_and_invalid_messages_are_answered(served: Server) -> None:
    ws = RawWebSocket(served.port)
    assert error_of(ws.ask("{not json"))["code"] == "INVALID_JSON"
    assert error_of(ws.ask({"type": "launch-missiles"}))["code"] == "UNKNOWN_TYPE"
    assert error_of(ws.ask({"type": "step", "data": {"msg": 3}}))["code"] == "VALIDATION_ERROR"
    assert error_of(ws.ask({"type": "step", "data": {"message": ["x"]}}))["code"] in {
        "VALIDATION_ERROR",
        "EXECUTION_ERROR",
    }
    # Step before reset: the env's own error, and the session goes on.
    assert "reset" in error_of(step(ws, "[crane]"))["message"]
    assert reset(ws, 3)["type"] == "observation"
    ws.close()
    # A JSON value that is not an object, and one nested 100,000 deep: an error answer, then the
    # session ends (openenv-core cannot read the message).
    for message in ("[1, 2]", '{"type": "reset", "data": ' + "[" * 100_000 + "]" * 100_000 + "}"):
        ws = RawWebSocket(served.port)
        assert error_of(ws.ask(message))["code"] == "SESSION_ERROR"
        assert ws.receive() is None  # the server's close frame


@pytest.mark.parametrize("seed", [-1, 2**70, 1.5, "abc", None, True, [1, 2], {"a": 1}])
def test_odd_seeds_answer_what_the_local_env_does(served: Server, seed: object) -> None:
    local = gym.make(ENV_ID)
    try:
        expected = local.reset(seed=seed)[0]
    except Exception:  # the local env refuses it too
        expected = None
    ws = RawWebSocket(served.port)
    answer = reset(ws, seed)
    if expected is None:
        error_of(answer)
    else:
        assert answer["type"] == "observation"
        assert answer["data"]["observation"]["text"] == expected
    ws.close()


def test_a_session_past_max_sessions_is_refused_then_freed(served: Server) -> None:
    sessions = [RawWebSocket(served.port) for _ in range(MAX_SESSIONS)]
    for ws in sessions:
        assert reset(ws, 0)["type"] == "observation"
    extra = RawWebSocket(served.port)
    assert error_of(extra.receive())["code"] == "CAPACITY_REACHED"
    for ws in sessions:
        ws.close()
    deadline = time.monotonic() + 20
    while True:  # the closed sessions are destroyed shortly after the close message
        ws = RawWebSocket(served.port)
        answer = reset(ws, 0)
        if answer is not None and answer["type"] == "observation":
            ws.close()
            break
        assert time.monotonic() < deadline, answer
        time.sleep(0.2)


def test_dropped_clients_are_one_info_line_each_and_free_their_sessions(served: Server) -> None:
    before = served.log_text().count(DROP_LINE)
    drops = 40
    for i in range(drops):
        ws = RawWebSocket(served.port)
        if i % 2:  # half mid-episode, half before any message
            assert reset(ws, i)["type"] == "observation"
        if i % 4 == 1:  # some with a step in flight
            ws.send_text(json.dumps({"type": "step", "data": {"message": "[crane]"}}))
        ws.drop()
    deadline = time.monotonic() + 30
    while served.log_text().count(DROP_LINE) < before + drops and time.monotonic() < deadline:
        time.sleep(0.2)
    text = served.log_text()
    assert text.count(DROP_LINE) == before + drops, text[-4000:]
    assert "INFO:     client 127.0.0.1:" in text  # uvicorn's format, info level
    # Every dropped session was freed: MAX_SESSIONS new ones fit.
    sessions = [RawWebSocket(served.port) for _ in range(MAX_SESSIONS)]
    for ws in sessions:
        assert reset(ws, 0)["type"] == "observation"
    for ws in sessions:
        ws.close()


def test_http_garbage_is_answered(served: Server) -> None:
    garbage_requests = (
        b"\x00\xff\x13garbage\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"POST /step HTTP/1.1\r\nContent-Length: -5\r\n\r\n",
        random.Random(0).randbytes(4096) + b"\r\n\r\n",
    )
    for garbage in garbage_requests:
        with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
            sock.sendall(garbage)
            try:
                answer = sock.recv(4096)
            except ConnectionResetError:  # closed with our garbage unread: still an answer
                answer = b""
        assert answer == b"" or answer.startswith(b"HTTP/1.1 4"), answer

    def post(path: str, body: bytes) -> tuple[int, str]:
        request = urllib.request.Request(
            served.url + path, data=body, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                return answer.status, answer.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    assert post("/step", b"{not json")[0] == 422
    assert post("/reset", b'{"seed": "x"')[0] == 422
    # openenv-core's stateless HTTP /step steps a fresh env: a clear 409, not a 500.
    status, body = post("/step", json.dumps({"action": {"message": "[crane]"}}).encode())
    assert status == 409 and "/ws" in body, body
    status, body = post("/step", json.dumps({"action": {"message": "x" * 5000}}).encode())
    assert status == 413 and "--max-action-chars" in body, body
    # A WebSocket that sends garbage instead of frames is closed; the server goes on.
    ws = RawWebSocket(served.port)
    ws.sock.sendall(os.urandom(64))
    ws.sock.settimeout(10)
    with pytest.raises((ConnectionError, OSError, ValueError)):
        while True:
            ws.receive()
    ws.drop()


def test_an_action_over_max_action_chars_is_refused_and_the_env_not_stepped(
    served: Server,
) -> None:
    local = gym.make(ENV_ID)
    ws = RawWebSocket(served.port)
    first = reset(ws, 11)
    for size in (MAX_ACTION_CHARS + 1, 5_000_000):
        error = error_of(step(ws, "x" * size))
        assert error["code"] == "EXECUTION_ERROR"
        assert f"{size:,} characters" in error["message"]
        assert "--max-action-chars" in error["message"]
    # The env never saw them: no step counted, and the episode plays on exactly like local play.
    assert ws.ask({"type": "state"})["data"]["step_count"] == 0
    remote = [(first["data"]["observation"]["text"],)]
    for word in ["x" * MAX_ACTION_CHARS, *WORDS]:  # at the limit: passed to the env
        data = step(ws, word)["data"]
        observation = data["observation"]
        remote.append(
            (
                observation["text"],
                data["reward"],
                observation["terminated"],
                observation["truncated"],
                observation["info"].get("won"),
            )
        )
        if data["done"]:
            break
    assert remote == play(local, 11, ["x" * MAX_ACTION_CHARS, *WORDS])
    ws.close()


def test_after_all_that_concurrent_episodes_play_like_local_ones(served: Server) -> None:
    def episode(seed: int) -> tuple[list[tuple], list[tuple]]:
        remote = gym.make("OpenEnv-v0", base_url=served.url)
        try:
            return play(remote, seed, WORDS), play(gym.make(ENV_ID), seed, WORDS)
        finally:
            remote.close()

    with ThreadPoolExecutor(MAX_SESSIONS) as pool:  # eight episodes at once
        results = list(pool.map(episode, range(100, 100 + MAX_SESSIONS)))
    for remote, local in results:
        assert remote == local


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "64"])
def test_max_action_chars_must_be_a_positive_int(bad: object) -> None:
    from trl_env.openenv import make_app

    with pytest.raises(ValueError, match="max_action_chars"):
        make_app(ENV_ID, max_action_chars=bad)
