"""Servers for the benchmarks and for the tests that need real processes: the one harness.

- ``ServerProcess``: a process we started, waited for until its port answers, stopped by its own
  pid (never by name);
- ``daphne_command``: how the table is served (``python -m daphne`` with this interpreter);
- ``Setup``: a benchmark setup (``bare``, ``daphne-floor``, ``uvicorn-floor``, ``default``,
  ``deployed``): its database made and migrated, its processes started, rooms made and players
  seated;
- ``WHATIF``: one-change experiments, each a setting of the served table (never a patch of its
  code): ``python -m bench.scenarios.fanout --whatif db-pool`` serves the table with that setting.

The setups:

* ``bare``: ``bench/servers/bare.py``, a bare ``websockets`` broadcast server (the floor);
* ``daphne-floor``: the same room protocol as a plain ASGI application
  (``bench/servers/bare_asgi.py``: no Django, no Channels) served by daphne with the table's
  command line and the table's adapters of the socket stack: the floor of the table's own
  socket stack (daphne, Twisted, autobahn, asgiref);
* ``uvicorn-floor``: that application served by uvicorn (its ``websockets`` protocol);
* ``proxied-floor``: the daphne floor behind nginx serving the shipped configuration, its rooms
  at the table's socket paths: what the proxy's hop alone adds (the deployed setup's floor);
* ``default``: the table with its defaults: one daphne process, SQLite in a temporary data
  directory, the in-memory channel layer;
* ``deployed``: daphne processes (two unless told) sharing PostgreSQL (a scratch database,
  ``bench`` unless ``BENCH_DATABASE`` says otherwise, dropped and made again for each setup) and
  Redis (the pub/sub channel layer, its own prefix); with ``proxy=True`` behind nginx serving the
  shipped configuration (``deploy/nginx.conf``: each room's sockets on one process), else with
  the clients split across the processes by the benchmark (a room's sockets spread).

All traffic is to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = Path(os.environ.get("BENCH_RESULTS") or BENCH / "results")
# The interpreter of every process started here: this one (the project's venv, as run).
PY = sys.executable
# The code the servers run: the working tree, or (``python -m bench.run --code snapshot``, or
# BENCH_CODE=dir) a snapshot of one commit, so that every figure of a run belongs to the same code.
CODE = Path(os.environ.get("BENCH_CODE") or ROOT)
HOST = "127.0.0.1"
PG_BASE = "postgres://postgres@127.0.0.1:5432"
PG_DATABASE = os.environ.get("BENCH_DATABASE", "bench")
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/6")
# Servers of the room protocol alone, no table behind them: their rooms and seats are names.
FLOORS = ("bare", "daphne-floor", "uvicorn-floor")
SETUPS = (*FLOORS, "default", "deployed")
SPREAD = "spread"  # (Setup.named: the deployed processes without the proxy)
PROXIED_FLOOR = "proxied-floor"  # (Setup.named: the daphne floor behind the proxy)
NAMED = (*SETUPS, SPREAD, PROXIED_FLOOR)  # every name Setup.named takes
FLOOR_APP = "bench.servers.bare_asgi:application"
MAX_PLAYERS = 500  # tabletop.services.seats.MAX_PLAYERS


# --- ports and processes --------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex((HOST, port)) != 0


def daphne_command(
    port: int, app: str = "tabletop.asgi:application", *, proxy_headers: bool = False
) -> list[str]:
    behind = ["--proxy-headers"] if proxy_headers else []
    # As README's deployment starts it: a listen backlog of 1,024, not Twisted's 50 (nginx opens
    # a room's reconnecting sockets faster than daphne accepts them).
    endpoint = f"tcp:port={port}:interface={HOST}:backlog=1024"
    return [PY, "-m", "daphne", *behind, "-e", endpoint, app]


def server_command(
    port: int, app: str = "tabletop.asgi:application", *, proxy_headers: bool = False
) -> list[str]:
    """How a benchmark serves the table: daphne, as it ships; ``BENCH_SERVER=uvicorn`` serves the
    same application with uvicorn and its ``websockets`` protocol instead, to measure what the
    server's own per-connection and per-frame work costs (daphne's send-buffer bound, which reads
    daphne's transport, is then not in force)."""
    if os.environ.get("BENCH_SERVER") == "uvicorn":
        return uvicorn_command(port, app, proxy_headers=proxy_headers)
    return daphne_command(port, app, proxy_headers=proxy_headers)


def uvicorn_command(port: int, app: str, *, proxy_headers: bool = False) -> list[str]:
    return [
        PY, "-m", "uvicorn", app, "--host", HOST, "--port", str(port), "--ws", "websockets",
        "--log-level", "warning", "--no-access-log",
        *(["--proxy-headers"] if proxy_headers else []),
    ]  # fmt: skip


def floor_command(kind: str, port: int) -> list[str]:
    """How a floor setup is served: the bare server, or the ASGI floor under daphne (exactly as
    the table: ``daphne_command``) or uvicorn."""
    if kind == "bare":
        return [PY, "-m", "bench.servers.bare", "--port", str(port)]
    if kind == "daphne-floor":
        return daphne_command(port, FLOOR_APP)
    if kind == "uvicorn-floor":
        return uvicorn_command(port, FLOOR_APP)
    raise ValueError(kind)


def is_floor(label: str) -> bool:
    """Whether a result's setup label (``daphne-floor``, ``bare+no-db-pool``) is a floor's."""
    return label.split("+", 1)[0] in {*FLOORS, PROXIED_FLOOR}


class ServerProcess:
    """One server process we started: running once its port answers; stopped by its own pid.

    Output goes to ``log`` (a path) or, without one, is kept for the error raised if the process
    exits before its port answers."""

    def __init__(
        self,
        name: str,
        args: list[str],
        *,
        env: dict[str, str],
        port: int,
        cwd: Path = CODE,
        log: Path | None = None,
        timeout: float = 30.0,
    ) -> None:
        if not port_free(port):
            raise RuntimeError(f"port {port} is taken: is an earlier server still running?")
        self.name, self.port, self.log = name, port, log
        self._out: IO[bytes] = open(log, "ab") if log else tempfile.TemporaryFile()  # noqa: SIM115
        self.popen = subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.pid = self.popen.pid
        try:
            self._wait(timeout)
        except RuntimeError:
            self.stop()
            raise

    def _wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.popen.returncode}): {self.output()}")
            with contextlib.suppress(OSError), socket.create_connection((HOST, self.port), 0.5):
                return
            time.sleep(0.1)
        raise RuntimeError(f"{self.name}: nothing listens on {HOST}:{self.port} after {timeout}s")

    def output(self, limit: int = 3000) -> str:
        with contextlib.suppress(OSError, ValueError):
            self._out.flush()
            if self.log:
                return self.log.read_text(errors="replace")[-limit:]
            self._out.seek(0)
            return self._out.read().decode(errors="replace")[-limit:]
        return ""

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(timeout=10)
        self._out.close()


@contextlib.contextmanager
def daphne_servers(
    count: int,
    *,
    env: dict[str, str],
    app: str = "tabletop.asgi:application",
    proxy_headers: bool = False,
) -> Any:
    """``count`` daphne processes on free ports serving ``app`` with ``env``; yields the ports.
    ``proxy_headers``: as behind the proxy (the client's address from ``X-Forwarded-For``)."""
    processes: list[ServerProcess] = []
    try:
        for i in range(count):
            port = free_port()
            command = daphne_command(port, app, proxy_headers=proxy_headers)
            processes.append(ServerProcess(f"daphne{i + 1}", command, env=env, port=port))
        yield [p.port for p in processes]
    finally:
        for process in processes:
            process.stop()


# --- nginx in front: the shipped configuration ----------------------------------------------
NGINX_SITE = ROOT / "deploy" / "nginx.conf"


def nginx_binary() -> str | None:
    """nginx on this machine, or None."""
    found = shutil.which("nginx") or "/usr/sbin/nginx"
    return found if os.access(found, os.X_OK) else None


def nginx_site(ports: Sequence[int], *, listen: int, access_log: Path) -> str:
    """The shipped site configuration serving ``ports``, listening on ``listen``: every upstream's
    ``server`` lines become one per port, the ``listen`` line this address, the access log this
    file; nothing else changes."""
    out: list[str] = []
    in_upstream = False
    for line in NGINX_SITE.read_text().splitlines():
        words = line.split()
        if words[:1] == ["upstream"]:
            in_upstream = True
        elif in_upstream and words[:1] == ["server"]:
            continue
        elif in_upstream and words[:1] == ["}"]:
            out.extend(f"    server {HOST}:{port};" for port in ports)
            in_upstream = False
        elif words[:1] == ["listen"]:
            line = f"    listen {HOST}:{listen};"
        elif words[:1] == ["access_log"]:
            line = f"    access_log {access_log} {words[2]}"
        out.append(line)
    return "\n".join(out) + "\n"


class Proxy:
    """nginx serving the shipped configuration in front of ``ports``, in a temporary prefix of its
    own (its configuration, pid file, logs and temporary files; never the system's nginx), on
    ``port``; stopped by its master's pid. One worker process: the figures of a benchmark then
    count the proxy's CPU in one place, and requests that are not sockets take turns over the
    processes in order."""

    def __init__(self, ports: Sequence[int], *, port: int, log: Path | None = None) -> None:
        binary = nginx_binary()
        if binary is None:
            raise RuntimeError("nginx is not installed (apt-get install nginx)")
        self.port = port
        self.prefix = Path(tempfile.mkdtemp(prefix="tabletop-nginx-"))
        # nginx run by root serves from unprivileged workers, which keep large responses in
        # temporary files under the prefix: they must be able to reach it.
        self.prefix.chmod(0o755)
        self.access_log = self.prefix / "access.log"
        temp = "".join(
            f"    {kind}_temp_path {self.prefix / kind};\n"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        site = nginx_site(ports, listen=port, access_log=self.access_log)
        conf = self.prefix / "nginx.conf"
        conf.write_text(
            "worker_processes 1;\n"
            f"pid {self.prefix / 'nginx.pid'};\n"
            "events { worker_connections 16384; }\n"  # a socket is two: client, process
            f"http {{\n{temp}{site}}}\n"
        )
        error_log = str(self.prefix / "error.log")
        self.process = ServerProcess(
            "nginx",
            [binary, "-p", str(self.prefix), "-c", str(conf), "-e", error_log, "-g", "daemon off;"],
            env=dict(os.environ),
            port=port,
            log=log,
        )

    @property
    def pids(self) -> list[int]:
        """The worker's pids (the master only starts and stops them)."""
        master = self.process.pid
        path = Path(f"/proc/{master}/task/{master}/children")
        with contextlib.suppress(OSError):
            return [int(p) for p in path.read_text().split()]
        return []

    def served(self) -> list[tuple[str, str]]:
        """(path, ``host:port`` of the process that served it) of every request logged so far
        (a socket is logged when it closes)."""
        out = []
        with contextlib.suppress(FileNotFoundError):
            for line in self.access_log.read_text().splitlines():
                request = line.split('"')[1].split()
                upstream = line.rsplit("upstream=", 1)[1].strip()
                out.append((request[1], upstream))
        return out

    def stop(self) -> None:
        self.process.stop()
        shutil.rmtree(self.prefix, ignore_errors=True)


# --- what-ifs: one setting each -------------------------------------------------------------
WHATIF: dict[str, str] = {
    # name: what the served table does differently (bench/servers/settings.py applies it)
    "server-binding": "PostgreSQL binds parameters on the server (psycopg prepares statements)",
    "no-db-pool": "PostgreSQL without the connection pool: one kept connection per thread",
    "no-gc-tuning": "Python's own garbage collector settings (nothing frozen, threshold 700)",
}


def whatif_env(names: Sequence[str]) -> dict[str, str]:
    unknown = [n for n in names if n not in WHATIF]
    if unknown:
        raise ValueError(f"unknown what-if {', '.join(unknown)}; known: {', '.join(WHATIF)}")
    return {"BENCH_WHATIF": ",".join(names)} if names else {}


# --- setups ---------------------------------------------------------------------------------
def _run(args: list[str], *, env: dict[str, str], timeout: float = 300) -> str:
    """Run a command of the served code; its output, or an error that says why it failed."""
    done = subprocess.run(args, cwd=CODE, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode:
        what = " ".join(args[1:])
        raise RuntimeError(f"{what} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


class Setup:
    """A server setup to measure: start it, make rooms, seat players, stop it.

    ``tag`` keeps concurrent benchmarks apart: each has its own ports.
    ``env`` adds settings for the table's processes (e.g. ``TABLETOP_RATE_PER_SECOND``).
    """

    BASE_PORTS = {
        "fanout": 18700,
        "burst": 18740,
        "saturation": 18780,
        "soak": 18820,
        "page": 18860,
        "profile": 18900,
        "tables": 18960,
        "opening": 19040,
    }

    def __init__(
        self,
        kind: str,
        tag: str,
        *,
        env: dict[str, str] | None = None,
        app: str = "tabletop.asgi:application",
        processes: int | None = None,
        proxy: bool = False,
    ) -> None:
        if kind not in SETUPS:
            raise ValueError(kind)
        if proxy and kind not in ("deployed", "daphne-floor"):
            raise ValueError("only the deployed setup and the daphne floor run behind nginx")
        self.kind, self.tag, self.app = kind, tag, app
        offset = {"bare": 0, "daphne-floor": 1, "uvicorn-floor": 2, "default": 10, "deployed": 20}
        base = self.BASE_PORTS.get(tag, 19000) + offset[kind]
        count = processes or (2 if kind == "deployed" else 1)
        self.ports = [base + i for i in range(count)]
        # nginx's port: past the deployed processes' (at most 8 of them), below the next tag's
        self.proxy_port = base + 8 if proxy else None
        if os.environ.get("BENCH_FREE_PORTS"):  # (tests: several suites may run at once)
            self.ports = [free_port() for _ in range(count)]
            self.proxy_port = free_port() if proxy else None
        self.proxy: Proxy | None = None
        self.processes: list[ServerProcess] = []
        self.extra_env = dict(env or {})
        self.data_dir: str | None = None
        self.database = PG_DATABASE
        RESULTS.mkdir(parents=True, exist_ok=True)
        self.logs = RESULTS / "logs"
        self.logs.mkdir(exist_ok=True)

    @classmethod
    def named(cls, name: str, tag: str, **options: Any) -> Setup:
        """The setup a benchmark's ``--setups`` names. ``deployed`` is behind the proxy, as the
        table is deployed (each room's sockets on one process); ``spread`` is the same processes
        without it, a room's sockets alternating between them (as a plain balancer spreads
        them, and as the table still works)."""
        if name == SPREAD:
            return cls("deployed", tag, **options)
        if name == PROXIED_FLOOR:
            return cls("daphne-floor", tag, proxy=True, **options)
        return cls(name, tag, proxy=name == "deployed", **options)

    def env(self) -> dict[str, str]:
        """The environment of the table's processes."""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "REDIS_URL", "TABLETOP_DATA_DIR", "DJANGO_SETTINGS_MODULE"}
        }
        env.update(
            {
                "PYTHONPATH": str(CODE),
                "DEBUG": "0",  # DEBUG keeps every query in memory; no deployment runs with it
                "LOG_LEVEL": "WARNING",
            }
        )
        if self.kind not in FLOORS:  # (a floor reads no settings: one that did would fail)
            env["DJANGO_SETTINGS_MODULE"] = "bench.servers.settings"
        if self.kind == "default":
            assert self.data_dir
            env["TABLETOP_DATA_DIR"] = self.data_dir
        elif self.kind == "deployed":
            env["DATABASE_URL"] = f"{PG_BASE}/{self.database}"
            env["REDIS_URL"] = REDIS_URL
        env.update(self.extra_env)
        return env

    def _server_side_modules(self) -> None:
        """A snapshot gets the current server-side bench modules (settings, room maker, bare)."""
        if CODE == ROOT:
            return
        (CODE / "bench").mkdir(exist_ok=True)
        shutil.copy2(BENCH / "__init__.py", CODE / "bench" / "__init__.py")
        shutil.copytree(BENCH / "servers", CODE / "bench" / "servers", dirs_exist_ok=True)

    def start(self, serve: bool = True) -> Setup:
        """Make the database (migrated, with the demo tables) and start the server processes
        (``serve=False``: the database only)."""
        stamp = dt.datetime.now().strftime("%H%M%S")
        self._server_side_modules()
        if self.kind in FLOORS:
            for i, port in enumerate(self.ports):
                self.processes.append(
                    ServerProcess(
                        f"{self.kind}{i + 1}",
                        floor_command(self.kind, port),
                        env=self.env(),
                        port=port,
                        log=self.logs / f"{self.tag}-{self.kind}-{port}-{stamp}.log",
                    )
                )
            self._start_proxy(stamp)
            return self
        if self.kind == "default":
            self.data_dir = tempfile.mkdtemp(prefix=f"tabletop-bench-{self.tag}-")
        else:
            for cmd in ("dropdb", "createdb"):
                extra = ["--if-exists", "--force"] if cmd == "dropdb" else []
                subprocess.run(
                    [cmd, *extra, "-h", HOST, "-U", "postgres", self.database],
                    check=True,
                    capture_output=True,
                    timeout=60,
                )
        _run([PY, "manage.py", "play", "--no-serve"], env=self.env(), timeout=300)
        if not serve:
            return self
        for i, port in enumerate(self.ports):
            self.processes.append(
                ServerProcess(
                    f"daphne{i + 1}",
                    server_command(port, self.app, proxy_headers=self.proxy_port is not None),
                    env=self.env(),
                    port=port,
                    log=self.logs / f"{self.tag}-{self.kind}-{port}-{stamp}.log",
                )
            )
        self._start_proxy(stamp)
        return self

    def _start_proxy(self, stamp: str) -> None:
        if self.proxy_port is not None:
            self.proxy = Proxy(
                self.ports,
                port=self.proxy_port,
                log=self.logs / f"{self.tag}-nginx-{self.proxy_port}-{stamp}.log",
            )

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.stop()
            self.proxy = None
        for process in self.processes:
            process.stop()
        self.processes.clear()
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None
        if self.kind == "deployed":
            subprocess.run(
                ["dropdb", "--if-exists", "--force", "-h", HOST, "-U", "postgres", self.database],
                capture_output=True,
                timeout=60,
            )

    def __enter__(self) -> Setup:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    @property
    def client_ports(self) -> list[int]:
        """Where clients connect: nginx's port behind the proxy, else every process's."""
        return [self.proxy_port] if self.proxy_port is not None else self.ports

    def server_side(self, module: str, *args: str) -> str:
        """What a server-side helper (``bench.servers.<module>``) prints, run with the
        table's environment."""
        return _run([PY, "-m", f"bench.servers.{module}", *args], env=self.env())

    def new_rooms(self, count: int = 1, rolls: int = 0) -> list[str]:
        """Fresh live rooms; ``rolls``: the GM rolls that many times in each first."""
        if self.kind in FLOORS:
            return [f"bare{time.monotonic_ns()}x{i}" for i in range(count)]
        out = _run(
            [PY, "-m", "bench.servers.mkroom", "--count", str(count), "--rolls", str(rolls)],
            env=self.env(),
        )
        return out.split()

    async def join(
        self, code: str, count: int, prefix: str = "p", concurrency: int = 8
    ) -> list[str]:
        """Seat ``count`` players (JSON join); their tokens, in order."""
        return (await self.join_rooms([code], count, prefix, concurrency))[0]

    async def join_rooms(
        self, codes: Sequence[str], per_room: int, prefix: str = "p", concurrency: int = 8
    ) -> list[list[str]]:
        """Seat ``per_room`` players in each room; the tokens of each room, in order."""
        if self.kind in FLOORS:
            return [[f"t{i}" for i in range(per_room)] for _ in codes]
        import httpx

        tokens: dict[tuple[int, int], str] = {}
        seats: dict[tuple[int, int], int] = {}
        sem = asyncio.Semaphore(concurrency)
        # No cookie jar: a join that carries the seat cookie of an earlier join gets that seat
        # back (the same browser keeps its seat), and every player here must be a seat of its own.
        no_cookies = CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))
        async with httpx.AsyncClient(
            base_url=f"http://{HOST}:{self.client_ports[0]}", timeout=60, cookies=no_cookies
        ) as client:

            async def one(r: int, i: int) -> None:
                async with sem:
                    response = await client.post(
                        f"/play/{codes[r]}/join", json={"name": f"{prefix}{i}"}
                    )
                    response.raise_for_status()
                    body = response.json()
                    tokens[r, i], seats[r, i] = body["token"], body["seat"]["id"]

            await asyncio.gather(*(one(r, i) for r in range(len(codes)) for i in range(per_room)))
        if len(set(seats.values())) != len(codes) * per_room:
            raise RuntimeError(f"wanted {len(codes) * per_room} seats, got {len(set(seats))}")
        return [[tokens[r, i] for i in range(per_room)] for r in range(len(codes))]

    async def sockets_tokens(self, code: str, sockets: int) -> list[str]:
        """A token for each of ``sockets`` sockets: one seat each, up to the table's cap.

        Past the table's cap of players, further sockets are second devices of the first
        players (the same seat, its own socket)."""
        seats = await self.join(code, min(sockets, MAX_PLAYERS))
        return [seats[i % len(seats)] for i in range(sockets)]

    def url(self, code: str, token: str, port: int | None = None, after: int | None = None) -> str:
        port = port or self.client_ports[0]
        if self.kind in FLOORS:
            # (behind the proxy, at the table's path: the floor's rooms are its paths)
            path = f"/ws/play/{code}/" if self.proxy_port is not None else f"/room/{code}"
            return f"ws://{HOST}:{port}{path}"
        tail = f"&after={after}" if after is not None else ""
        return f"ws://{HOST}:{port}/ws/play/{code}/?token={token}{tail}"
