"""The dashboard as a server process: start ``streamlit run app.py`` on a free loopback port and wait until it
answers. One helper for everything that needs a real server: the browser tests, the benchmarks, the classroom load
generator and the replicas of ``deploy/serve_class.py``.

The server reads the checkout's ``.streamlit/config.toml`` (it runs from the checkout), so it is configured
exactly as ``make run`` configures it; only the address and the port are given here. Nothing here imports
streamlit.

>>> free_port() > 1024
True
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import IO

CHECKOUT = Path(__file__).resolve().parents[1]     # where app.py, pages/ and .streamlit/ are
APP = CHECKOUT / "app.py"


MAX_MEMORY = "256mb"      # a Redis of class polls: a poll of 400 phones is about 100 KB


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lan_address() -> str:
    """This machine's address on the network its default route leads to (what phones in the room reach), found
    by asking the kernel which interface a UDP socket towards a documentation address would use: no packet is
    sent. 127.0.0.1 when the machine has no network.

    >>> import ipaddress; ipaddress.ip_address(lan_address()).version
    4
    """
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))                   # TEST-NET-1 (RFC 5737): routed, never answered
        return s.getsockname()[0]
    return "127.0.0.1"


def wait_healthy(url: str, timeout: float = 60, proc: subprocess.Popen | None = None) -> None:
    """Wait until ``url`` (a ``/_stcore/health`` address) answers 200. Raises ``RuntimeError`` when ``proc`` exits
    first or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode} before it answered {url}")
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s")


class AppServer:
    """``streamlit run`` of ``app`` on 127.0.0.1 at ``port`` (a free one by default), from the checkout.

    ``env`` adds environment variables (``EXPLORER_DEVICE`` defaults to ``cpu``); ``log`` receives the server's
    output (discarded by default); ``args`` are further ``streamlit run`` options. Use it as a context manager::

        with AppServer() as server:
            urllib.request.urlopen(server.url + "/_stcore/health")
    """

    def __init__(self, app: Path = APP, port: int | None = None, env: dict | None = None, log: IO | None = None,
                 args: tuple[str, ...] = (), timeout: float = 60):
        self.app, self.port = Path(app), port or free_port()
        self.env = {"EXPLORER_DEVICE": os.environ.get("EXPLORER_DEVICE", "cpu"), **(env or {})}
        self.log, self.args, self.timeout = log, tuple(args), timeout
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self) -> AppServer:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(self.app), "--server.address", "127.0.0.1",
             "--server.port", str(self.port), *self.args],
            cwd=CHECKOUT, env={**os.environ, **self.env}, stdout=self.log or subprocess.DEVNULL,
            stderr=subprocess.STDOUT if self.log else subprocess.DEVNULL)
        try:
            wait_healthy(self.url + "/_stcore/health", self.timeout, self.proc)
        except RuntimeError:
            self.stop()
            raise
        return self

    def kill(self) -> None:
        """Stop it the way a crash would (SIGKILL), without a clean shutdown."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def __enter__(self) -> AppServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class RedisServer:
    """Debian's ``redis-server`` on its own loopback port and directory: the class polls' shared store behind
    replicas. Its append-only file is written on every command (``appendfsync always``), so a vote it acknowledged
    survives a crash of Redis itself; no snapshots. It holds at most ``MAX_MEMORY`` and, when full, refuses writes
    (a vote refused is said on the phone) rather than dropping a poll (``noeviction``).

    Closed to the rest of the machine: a client must give the password generated on the first start (kept in the
    directory's ``redis.conf``, readable by this user only, and read again by a restart in the same directory, so
    the replicas' ``url`` stays valid); the directory, with the append-only file, is this user's only."""

    def __init__(self, directory: Path, port: int | None = None):
        self.dir, self.port = Path(directory), port or free_port()
        self.proc: subprocess.Popen | None = None
        self.conf = self._config()

    @property
    def url(self) -> str:
        """The ``EXPLORER_POLLS`` value for this server, password included."""
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def _config(self) -> Path:
        """The directory (owner-only) and its ``redis.conf`` holding the password, written once (owner-only)."""
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.dir, 0o700)
        conf = self.dir / "redis.conf"
        if not conf.exists():
            fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(f"requirepass {secrets.token_urlsafe(24)}\n")
        self.password = conf.read_text().split()[1]
        return conf

    def start(self, timeout: float = 10) -> RedisServer:
        """Start it and wait until it answers PING (``RuntimeError`` if it does not within ``timeout`` s). The
        password is in the config file, not on the command line (which any process may read)."""
        self.proc = subprocess.Popen(["redis-server", str(self.conf), "--port", str(self.port), "--bind", "127.0.0.1",
                                      "--dir", str(self.dir), "--appendonly", "yes", "--appendfsync", "always",
                                      "--save", "", "--maxmemory", MAX_MEMORY, "--maxmemory-policy", "noeviction"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.healthy():
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not answer PING")

    def healthy(self) -> bool:
        """AUTH accepted and PING answered with PONG (the protocol written out: no client library needed)."""
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
            s.sendall(f"AUTH {self.password}\r\nPING\r\n".encode())
            answer = b""
            while answer.count(b"\r\n") < 2 and not answer.startswith(b"-"):
                part = s.recv(64)
                if not part:
                    break
                answer += part
            return answer.startswith(b"+OK\r\n+PONG")
        return False

    def kill(self) -> None:
        """SIGKILL: no shutdown save; only what the append-only file holds survives."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
