"""A private ``redis-server``, started the way a user starts one: a config file in a temporary directory, an ephemeral port.

Where ``redis-server`` cannot be found the cluster tests fail with a clear
message when ``CI`` is set, and are skipped with that message otherwise.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

__all__ = ["RedisServer", "find_redis_server"]

MISSING = (
    "redis-server is not installed: the cluster tests need Debian's redis-server package "
    "(apt-get install -y redis-server; .ci/run installs it)"
)
START_TIMEOUT_S = 10.0


def find_redis_server() -> str:
    """The path of ``redis-server``; fails (``CI`` set) or skips the test with :data:`MISSING` where there is none."""
    path = shutil.which("redis-server") or next((p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if os.path.exists(p)), None)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(MISSING, pytrace=False)
        pytest.skip(MISSING)
    return path


def binary_for_benchmark() -> str:
    """The path of ``redis-server`` for a benchmark script.

    Raises:
        SystemExit: with the line that says how to install it, where there is none.
    """
    path = shutil.which("redis-server")
    if path is None:
        raise SystemExit("redis-server is not installed (apt-get install -y redis-server)")
    return path


def start_for_benchmark(directory: Path) -> "RedisServer":
    """A private ``redis-server`` in ``directory``, started, for a benchmark script (stop it when done).

    Raises:
        SystemExit: where ``redis-server`` is not installed.
    """
    server = RedisServer(binary_for_benchmark(), directory)
    server.start()
    return server


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1 with no persistence, in ``directory``.

    Attributes:
        port: its TCP port (kept across :meth:`restart`).
        url: ``redis://127.0.0.1:PORT``.
    """

    def __init__(self, binary: str, directory: Path) -> None:
        self.binary = binary
        self.directory = directory
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}"
        self.config = directory / "redis.conf"
        self.config.write_text(
            f"bind 127.0.0.1\nport {self.port}\ndir {directory}\nsave \"\"\nappendonly no\n"
            f"daemonize no\nlogfile {directory / 'redis.log'}\nprotected-mode yes\n"
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it and wait until it answers ``PING``."""
        self.process = subprocess.Popen([self.binary, str(self.config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}: {self.process.stderr.read().decode() if self.process.stderr else ''}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError(f"redis-server did not answer on port {self.port} within {START_TIMEOUT_S} s")

    def kill(self) -> None:
        """SIGKILL it (everything it held is gone: it keeps nothing on disk)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def restart(self) -> None:
        """SIGKILL it and start it again on the same port."""
        self.kill()
        self.start()

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL after 5 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def flush(self) -> None:
        """Empty it (``FLUSHALL``) between tests."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            assert sock.recv(16).startswith(b"+OK")
