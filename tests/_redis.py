"""A real redis-server on a free loopback port for the Redis tests, as pytest fixtures.

Imported by the ``conftest.py`` of the store and cache tests.

Without ``redis-server`` on PATH the Redis tests skip with the reason, unless
``ADK_LATTICE_REQUIRE_REDIS=1`` (set under CI), where they fail instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pings(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process on a loopback port, with no persistence; restartable."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server (on the same port as before) and wait until it answers PING."""
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--save", "", "--appendonly", "no"]
        self._proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not _pings(self.port):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop the server and wait for it to exit."""
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
            self._proc = None


def redis_binary() -> str:
    """The redis-server path; skips the test when missing (fails under CI)."""
    binary = shutil.which("redis-server")
    if binary is None:
        reason = "redis-server is not on PATH (install it, e.g. apt-get install redis-server)"
        if os.environ.get("ADK_LATTICE_REQUIRE_REDIS") == "1":
            pytest.fail(f"ADK_LATTICE_REQUIRE_REDIS=1 but {reason}")
        pytest.skip(reason)
    return binary


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """One redis-server shared by the session; tests use their own namespaces."""
    server = RedisServer(redis_binary())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_factory() -> Iterator[Callable[[], RedisServer]]:
    """Start private redis-servers (for tests that stop and restart them)."""
    started: list[RedisServer] = []

    def make() -> RedisServer:
        server = RedisServer(redis_binary())
        server.start()
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()
