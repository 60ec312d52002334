"""A lecture hall on one machine: N Attention Explorer replicas behind HAProxy, sticky per browser session.

    python deploy/serve_class.py --replicas 3 --port 8500        # (make serve-class REPLICAS=3)

Each replica is ``streamlit run app.py`` on its own loopback port. HAProxy (Debian's package) balances new
browsers round-robin and then keeps each on its replica with a cookie, because a Streamlit session (its websocket
and its ``st.session_state``) lives in one process; it upgrades websockets, checks ``/_stcore/health`` every
second, and sends a browser whose replica is down to a live one (that session starts fresh; its controls come
back from its URL). The balancer listens on 127.0.0.1 unless ``--address`` says otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("haproxy.cfg.template")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str, timeout: float = 60) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return True
        time.sleep(0.2)
    return False


def haproxy_config(port: int, replicas: dict[str, int], address: str = "127.0.0.1") -> str:
    servers = "\n".join(f"  server {name} 127.0.0.1:{p} check cookie {name}" for name, p in replicas.items())
    return TEMPLATE.read_text().format(address=address, port=port, servers=servers)


class Hall:
    """The running replicas and balancer; ``stop_replica`` takes one down (the failover test does)."""

    def __init__(self, replicas: int, port: int | None = None, address: str = "127.0.0.1"):
        if shutil.which("haproxy") is None:
            raise SystemExit("error: haproxy not found (apt-get install haproxy)")
        self.port = port or _free_port()
        self.address = address
        self.ports = {f"r{i + 1}": _free_port() for i in range(replicas)}
        self.procs: dict[str, subprocess.Popen] = {}
        self.tmp = tempfile.TemporaryDirectory()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Hall:
        env = dict(os.environ, EXPLORER_DEVICE=os.environ.get("EXPLORER_DEVICE", "cpu"))
        for name, p in self.ports.items():
            self.procs[name] = subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.address", "127.0.0.1",
                 "--server.port", str(p), "--server.headless", "true", "--server.fileWatcherType", "none",
                 "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name, p in self.ports.items():
            if not _healthy(f"http://127.0.0.1:{p}/_stcore/health"):
                raise RuntimeError(f"replica {name} did not become healthy")
        cfg = Path(self.tmp.name) / "haproxy.cfg"
        cfg.write_text(haproxy_config(self.port, self.ports, self.address))
        self.procs["haproxy"] = subprocess.Popen(["haproxy", "-f", str(cfg), "-db"], stdout=subprocess.DEVNULL,
                                                 stderr=subprocess.DEVNULL)
        if not _healthy(self.url + "/_stcore/health", 30):
            raise RuntimeError("the balancer did not answer")
        return self

    def stop_replica(self, name: str) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(signal.SIGKILL)          # a crash, not a polite shutdown
        proc.wait(timeout=10)

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        self.procs.clear()
        self.tmp.cleanup()

    def __enter__(self) -> Hall:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="N replicas behind HAProxy, sticky sessions.")
    p.add_argument("--replicas", type=int, default=3)
    p.add_argument("--port", type=int, default=8500)
    p.add_argument("--address", default="127.0.0.1", help="where the balancer listens (0.0.0.0: the classroom)")
    args = p.parse_args(argv)
    if not 1 <= args.replicas <= 16:
        print("error: --replicas must be from 1 to 16", file=sys.stderr)
        return 2
    with Hall(args.replicas, args.port, args.address) as hall:
        print(f"Attention Explorer: {args.replicas} replicas behind http://{args.address}:{hall.port} (Ctrl+C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            while all(proc.poll() is None for proc in hall.procs.values()):
                time.sleep(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
