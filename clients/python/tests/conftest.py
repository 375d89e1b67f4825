"""Fixtures: the real mcp-bridge binary on free ports with a temporary configuration, and the real peers.

The binary is ../../bin/mcp-bridge (``make test-python`` builds it first), or $MCPBRIDGE_BIN; if neither
exists it is built with ``go build``. It listens on port 0; the fixture reads the bound addresses from the
bridge's JSON log line "mcp-bridge serving" and then waits for /healthz and the gRPC channel -- no sleeps.

@modelcontextprotocol/server-everything comes from .tools/node/node_modules (``make node-tools``) or
$MCPBRIDGE_NODE_MODULES, run with node (or $MCPBRIDGE_NODE). When it is missing the tests that need it are
skipped with the reason, or fail when MCPBRIDGE_REQUIRE_PEERS=1 (``make test`` sets it).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_bridge import Client

REPO = Path(__file__).resolve().parents[3]
START_TIMEOUT = 30.0


def free_port() -> int:
    """A TCP port free right now on 127.0.0.1, for a bridge that must come back on the same address."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def peers_required() -> bool:
    return os.environ.get("MCPBRIDGE_REQUIRE_PEERS") == "1"


def missing_peer(reason: str) -> None:
    """Skip (or fail, when peers are required) because a test peer is not installed."""
    msg = f"peer not available: {reason}"
    if peers_required():
        pytest.fail(f"{msg} (MCPBRIDGE_REQUIRE_PEERS=1)", pytrace=False)
    pytest.skip(msg)


def bridge_binary() -> Path:
    env = os.environ.get("MCPBRIDGE_BIN")
    if env:
        path = Path(env)
        if not path.is_file():
            pytest.fail(f"MCPBRIDGE_BIN={env} does not exist", pytrace=False)
        return path
    path = REPO / "bin" / "mcp-bridge"
    if not path.is_file():
        go = shutil.which("go")
        if go is None:
            pytest.fail(f"{path} is missing and go is not on PATH; run `make build`", pytrace=False)
        subprocess.run([go, "build", "-o", str(path), "./cmd/mcp-bridge"], cwd=REPO, check=True)
    return path


def everything_command() -> list[str] | None:
    """The command that runs server-everything over stdio, or None if it is not installed."""
    modules = Path(os.environ.get("MCPBRIDGE_NODE_MODULES") or REPO / ".tools" / "node" / "node_modules")
    entry = modules / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    node = os.environ.get("MCPBRIDGE_NODE") or shutil.which("node")
    if not entry.is_file() or node is None:
        return None
    return [node, str(entry), "stdio"]


class Bridge:
    """A running mcp-bridge process."""

    def __init__(
        self,
        binary: Path,
        config: dict[str, Any],
        workdir: Path,
        *,
        grpc_addr: str = "127.0.0.1:0",
        http_addr: str = "127.0.0.1:0",
        flags: list[str] | None = None,
    ) -> None:
        self.binary = binary
        self.grpc_addr, self.http_addr = grpc_addr, http_addr  # fixed ports survive a restart (restart())
        self.flags = list(flags or [])
        self.config_path = workdir / "mcp-bridge.json"
        self.config_path.write_text(json.dumps(config, indent=2))
        self.log: collections.deque[str] = collections.deque(maxlen=400)
        self.grpc = ""
        self.http = ""
        self.proc: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                str(self.binary),
                "--config",
                str(self.config_path),
                "--grpc-addr",
                self.grpc_addr,
                "--http-addr",
                self.http_addr,
                "--log-format",
                "json",
                "--log-level",
                "debug",
                *self.flags,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        ready = threading.Event()
        threading.Thread(target=self._read_log, args=(ready,), daemon=True).start()
        if not ready.wait(START_TIMEOUT) or not self.grpc:
            self.stop()
            raise RuntimeError("mcp-bridge did not start:\n" + "\n".join(self.log))
        self._wait_healthy()

    def _read_log(self, ready: threading.Event) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line.rstrip())
            if not ready.is_set():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("msg") == "mcp-bridge serving":
                    self.grpc, self.http = rec["grpc"], rec["http"]
                    ready.set()
        ready.set()  # the process ended

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        url = f"http://{self.http}/healthz"
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or (self.proc is not None and self.proc.poll() is not None):
                raise RuntimeError(f"mcp-bridge not healthy at {url}:\n" + "\n".join(self.log))
            time.sleep(0.02)  # polling, bounded by the deadline
        with Client(self.grpc) as client:
            client.wait_ready(START_TIMEOUT)

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL, as an OOM kill or a crash would: the bridge gets no chance to drain."""
        if self.proc is None:
            return
        self.proc.kill()
        self.proc.wait(10)
        self.proc = None

    def tail(self, n: int = 80) -> str:
        return "\n".join(list(self.log)[-n:])


@pytest.fixture(scope="session")
def everything() -> list[str] | None:
    return everything_command()


@pytest.fixture(scope="session")
def bridge(tmp_path_factory: pytest.TempPathFactory, everything: list[str] | None) -> Iterator[Bridge]:
    binary = bridge_binary()
    servers: dict[str, Any] = {
        "demo": {"command": str(binary), "args": ["demo-server"], "description": "the built-in demo server"},
    }
    if everything is not None:
        servers["everything"] = {
            "command": everything[0],
            "args": everything[1:],
            "description": "@modelcontextprotocol/server-everything",
        }
    config = {
        "mcpServers": servers,
        "pending": {"samplingTimeout": "60s", "elicitationTimeout": "60s", "rootsTimeout": "30s"},
    }
    with running_bridge(binary, config, tmp_path_factory.mktemp("bridge")) as b:
        yield b


_BRIDGES: list[Bridge] = []


@contextlib.contextmanager
def running_bridge(binary: Path, config: dict[str, Any], workdir: Path) -> Iterator[Bridge]:
    """A bridge started with config in workdir for a fixture, stopped at its end; while it runs, a failing
    test's report carries its log (pytest_runtest_makereport)."""
    b = Bridge(binary, config, workdir)
    b.start()
    _BRIDGES.append(b)
    try:
        yield b
    finally:
        b.stop()
        _BRIDGES.remove(b)


@pytest.fixture
def client(bridge: Bridge) -> Iterator[Client]:
    with Client(bridge.grpc, timeout=60, reconnect_backoff=(0.05, 1.0)) as c:
        yield c


@pytest.fixture
def everything_server(bridge: Bridge, everything: list[str] | None) -> str:
    if everything is None:
        missing_peer(
            "@modelcontextprotocol/server-everything is not installed under .tools/node/node_modules "
            "(run `make node-tools`, or set MCPBRIDGE_NODE_MODULES)"
        )
    return "everything"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed and _BRIDGES and {"bridge", "oauth_bridge"} & set(getattr(item, "fixturenames", ())):
        report.sections.append(("mcp-bridge log (tail)", _BRIDGES[-1].tail()))


def pytest_report_header(config: pytest.Config) -> str:
    cmd = everything_command()
    return f"mcp-bridge repo: {REPO}; python {sys.version.split()[0]}; server-everything: {'yes' if cmd else 'no'}"
