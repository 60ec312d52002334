"""A lecture hall on one machine: N Attention Explorer replicas behind HAProxy, sticky per browser session.

    python deploy/serve_class.py --replicas 3 --port 8500        # (make serve-class REPLICAS=3)

Each replica is ``streamlit run app.py`` on its own loopback port. HAProxy (Debian's package) balances new
browsers round-robin and then keeps each on its replica with a cookie, because a Streamlit session (its websocket
and its ``st.session_state``) lives in one process; it upgrades websockets, checks ``/_stcore/health`` every
second, and sends a browser whose replica is down to a live one (that session starts fresh; its controls come
back from its URL). The balancer listens on 127.0.0.1 unless ``--address`` says otherwise.

The class polls' votes live in one ``redis-server`` (Debian's) that this command starts on a loopback port with
an append-only file, checks with PING like the replicas, and hands to every replica (``EXPLORER_POLLS``): students
on different replicas vote into the same poll, and a replica lost mid-poll loses no vote it acknowledged.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from explorer.serving import AppServer, RedisServer, free_port, wait_healthy

TEMPLATE = Path(__file__).with_name("haproxy.cfg.template")


RATE = 3000            # requests per client address in 10 s (a phone's first page load is about 60)
CONNECTIONS = 500      # open connections per client address (a tab holds one websocket)


def haproxy_config(port: int, replicas: dict[str, int], address: str = "127.0.0.1", rate: int = RATE,
                   connections: int = CONNECTIONS, https: bool = False) -> str:
    """The balancer's configuration; ``https``: the hall is reached over HTTPS (a TLS proxy in front of this
    balancer), so the sticky cookie is marked Secure (a browser drops a Secure cookie sent over plain HTTP)."""
    servers = "\n".join(f"  server {name} 127.0.0.1:{p} check cookie {name}" for name, p in replicas.items())
    phone_servers = "\n".join(f"  server {name} 127.0.0.1:{p} check" for name, p in replicas.items())
    return TEMPLATE.read_text().format(address=address, port=port, servers=servers, phone_servers=phone_servers,
                                       rate=int(rate),
                                       connections=int(connections), secure=" secure" if https else "")


class Hall:
    """The running replicas and balancer; ``stop_replica`` takes one down (the failover test does)."""

    def __init__(self, replicas: int, port: int | None = None, address: str = "127.0.0.1",
                 public_url: str | None = None, rate: int = RATE, connections: int = CONNECTIONS,
                 env: dict | None = None):
        for tool in ("haproxy", "redis-server"):
            if shutil.which(tool) is None:
                raise SystemExit(f"error: {tool} not found (apt-get install {tool})")
        self.port = port or free_port()
        self.address = address
        self.limits = {"rate": rate, "connections": connections,
                       "https": bool(public_url and public_url.startswith("https://"))}
        self.tmp = tempfile.TemporaryDirectory()
        self.redis = RedisServer(Path(self.tmp.name) / "redis")
        # the replicas believe the X-Forwarded-For of HAProxy (on this machine) and of nobody else
        env = {"EXPLORER_POLLS": self.redis.url, "EXPLORER_TRUSTED_PROXIES": "127.0.0.1",
               **({"EXPLORER_PUBLIC_URL": public_url} if public_url else {}), **(env or {})}
        self.replicas = {f"r{i + 1}": AppServer(env=env) for i in range(replicas)}
        self.balancer: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ports(self) -> dict[str, int]:
        return {name: replica.port for name, replica in self.replicas.items()}

    @property
    def running(self) -> bool:
        procs = [r.proc for r in self.replicas.values()] + [self.balancer, self.redis.proc]
        return all(p is not None and p.poll() is None for p in procs) and self.redis.healthy()

    def start(self) -> Hall:
        self.redis.start()
        for replica in self.replicas.values():
            replica.start()
        cfg = Path(self.tmp.name) / "haproxy.cfg"
        cfg.write_text(haproxy_config(self.port, self.ports, self.address, **self.limits))
        self.balancer = subprocess.Popen(["haproxy", "-f", str(cfg), "-db"], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
        wait_healthy(self.url + "/_stcore/health", 30, self.balancer)
        return self

    def stop_replica(self, name: str) -> None:
        self.replicas[name].kill()                # a crash, not a polite shutdown

    def start_replica(self, name: str, timeout: float = 60) -> None:
        """Start a stopped replica again on its port, and return once the balancer sends new browsers to it (its
        health check passed twice): a new browser's first response carries its cookie."""
        self.replicas[name].start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with urllib.request.urlopen(self.url + "/_stcore/health", timeout=10) as resp:
                if any(c.startswith(f"EXPLORER_REPLICA={name};") for c in resp.headers.get_all("Set-Cookie") or []):
                    return
            time.sleep(0.25)
        raise RuntimeError(f"the balancer did not send a new browser to {name} within {timeout:g} s of its restart")

    def stop(self) -> None:
        if self.balancer is not None and self.balancer.poll() is None:
            self.balancer.terminate()
            self.balancer.wait(timeout=10)
        for replica in self.replicas.values():
            replica.stop()
        self.redis.stop()
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
    p.add_argument("--public-url", default=None,
                   help="the address students' phones reach (the poll's link and QR code), e.g. http://10.0.0.5:8500")
    p.add_argument("--rate", type=int, default=RATE,
                   help=f"requests per client address in 10 s before 429 (default {RATE}; phones behind one NAT "
                        "address share it: allow about 60 per phone)")
    args = p.parse_args(argv)
    if not 1 <= args.replicas <= 16:
        print("error: --replicas must be from 1 to 16", file=sys.stderr)
        return 2
    if args.rate < 1:
        print("error: --rate must be at least 1", file=sys.stderr)
        return 2
    with Hall(args.replicas, args.port, args.address, args.public_url, args.rate) as hall:
        print(f"Attention Explorer: {args.replicas} replicas behind http://{args.address}:{hall.port} (Ctrl+C stops)")
        with contextlib.suppress(KeyboardInterrupt):
            while hall.running:
                time.sleep(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
