"""A throwaway ``redis-server`` for the poll tests: its own port and directory, an append-only file written on
every command (as ``make serve-class`` starts it)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from explorer.serving import free_port

REDIS = shutil.which("redis-server")
REDIS_MISSING = "redis-server is not installed (apt-get install redis-server)"


class RedisServer:
    def __init__(self, directory: Path, port: int | None = None):
        self.dir, self.port = Path(directory), port or free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen([REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
                                      "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                                      "--protected-mode", "yes"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import redis

        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        for _ in range(100):
            try:
                if client.ping():
                    return self
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not answer")

    def kill(self) -> None:
        """SIGKILL: no shutdown save, only what the append-only file already holds survives."""
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
