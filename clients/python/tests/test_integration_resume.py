"""Integration tests: tool calls that outlive a restart of the real bridge, without the host doing anything.

Each test starts its own bin/mcp-bridge with a state file (``--state-file``) on fixed free ports, starts a call
of the demo server's ``elicit`` tool, kills the bridge (SIGKILL, or SIGTERM for a graceful restart) while the
elicitation waits for a person, and starts it again on the same addresses and state file. The client, on its own,
calls again with the same call id and ``resume`` and re-attaches its host stream:

* on 2026-07-28 the elicitation is a multi round-trip input request that the bridge kept: it is raised again
  under its id, the handler (called once, before the restart) answers after the restart, and the original
  ``call_tool`` returns the tool's result with that answer;
* on 2025-11-25 the elicitation was pushed by a stdio server that died with the bridge: whether the tool ran
  cannot be known, and ``call_tool`` raises CallOutcomeUnknownError.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_bridge import (
    AsyncClient,
    CallOutcomeUnknownError,
    Client,
    ElicitationRequest,
    Handler,
    UnavailableError,
    accept,
)

from .conftest import Bridge, bridge_binary, free_port


class GatedHost(Handler):
    """Answers elicitations only once ``gate`` is set (a person who answers after the restart)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.seen = threading.Event()
        self.requests: list[ElicitationRequest] = []
        self.lock = threading.Lock()

    def handle_elicitation(self, request: ElicitationRequest) -> Any:
        with self.lock:
            self.requests.append(request)
        self.seen.set()
        self.gate.wait(60)
        return accept({"name": "Ada", "age": 36})


@pytest.fixture
def durable_bridge(tmp_path: Path) -> Iterator[Bridge]:
    """A bridge with a state file on fixed ports, so that it can be restarted where its clients expect it."""
    binary = bridge_binary()
    config = {
        "mcpServers": {"demo": {"command": str(binary), "args": ["demo-server"]}},
        "pending": {"elicitationTimeout": "60s"},
    }
    b = Bridge(
        binary,
        config,
        tmp_path,
        grpc_addr=f"127.0.0.1:{free_port()}",
        http_addr=f"127.0.0.1:{free_port()}",
        flags=["--state-file", str(tmp_path / "state.db")],
    )
    b.start()
    try:
        yield b
    finally:
        b.stop()


def restart(bridge: Bridge, how: str) -> None:
    if how == "kill -9":
        bridge.kill()
    else:
        bridge.stop()
    bridge.start()


def wait_for(event: threading.Event, what: str, timeout: float = 20.0) -> None:
    if not event.wait(timeout):
        raise AssertionError(f"{what} did not happen within {timeout}s")


@pytest.mark.parametrize("how", ["kill -9", "SIGTERM"])
def test_a_call_waiting_for_a_person_completes_across_a_restart(durable_bridge: Bridge, how: str) -> None:
    host = GatedHost()
    with (
        Client(durable_bridge.grpc, reconnect_backoff=(0.05, 0.5)) as client,
        concurrent.futures.ThreadPoolExecutor(2) as pool,
    ):
        session = client.create_session("demo", host, protocol_version="2026-07-28")
        other = client.create_session("demo", protocol_version="2026-07-28")
        call = pool.submit(session.call_tool, "elicit", {"message": "Who are you?"}, timeout=90)
        # The same loss, with the retry turned off for the call: the host sees it.
        plain = pool.submit(other.call_tool, "long_operation", {"durationSeconds": 30, "steps": 2}, retry=False)
        wait_for(host.seen, "the elicitation")
        restart(durable_bridge, how)
        host.gate.set()  # the person answers after the restart

        result = call.result(timeout=60)
        assert result.text == "accepted: name=Ada age=36", result
        assert result.call_id.startswith("call-"), result.call_id  # the id the client made up and resumed
        # The handler was asked once: the request raised again after the restart has the same id.
        assert len(host.requests) == 1
        with pytest.raises(UnavailableError) as lost:
            plain.result(timeout=30)
        assert lost.value.call_id.startswith("call-") and not lost.value.outcome_unknown


def test_a_pushed_call_whose_server_died_with_the_bridge_is_outcome_unknown(durable_bridge: Bridge) -> None:
    host = GatedHost()
    try:
        with Client(durable_bridge.grpc, reconnect_backoff=(0.05, 0.5)) as client:
            session = client.create_session("demo", host, protocol_version="2025-11-25")
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                call = pool.submit(session.call_tool, "elicit", {"message": "Who are you?"}, call_id="job-7", timeout=90)
                wait_for(host.seen, "the elicitation")
                restart(durable_bridge, "kill -9")
                with pytest.raises(CallOutcomeUnknownError) as err:
                    call.result(timeout=60)
            e = err.value
            assert e.outcome_unknown and e.reason == "CALL_OUTCOME_UNKNOWN" and e.call_id == "job-7"
            assert not e.session_lost
            # The session itself came back: a new call works.
            assert session.call_tool("echo", {"text": "after"}).text == "after"
    finally:
        host.gate.set()


def test_the_async_client_resumes_a_call_across_a_restart(durable_bridge: Bridge) -> None:
    host = GatedHost()

    async def main() -> None:
        async with AsyncClient(durable_bridge.grpc, reconnect_backoff=(0.05, 0.5)) as client:
            session = await client.create_session("demo", host, protocol_version="2026-07-28")
            events: list[Any] = []

            async def stream() -> None:
                async for ev in session.call_tool_stream("elicit", {"message": "Who?"}, call_id="stream-1", timeout=90):
                    events.append(ev)

            task = asyncio.create_task(stream())
            await asyncio.to_thread(wait_for, host.seen, "the elicitation")
            await asyncio.to_thread(restart, durable_bridge, "kill -9")
            host.gate.set()
            await asyncio.wait_for(task, 60)
            assert events[-1].text == "accepted: name=Ada age=36", events
            assert events[-1].call_id == "stream-1"
            assert len(host.requests) == 1

    try:
        asyncio.run(main())
    finally:
        host.gate.set()


def test_a_call_made_while_the_bridge_is_down_runs_once_it_is_back(durable_bridge: Bridge) -> None:
    """A call that could not even connect never reached the bridge: it is sent again as a new call, not as a
    resume (which, for a tool not annotated idempotent such as ``increment``, would be CALL_OUTCOME_UNKNOWN), and
    runs once -- on the demo server the restarted bridge started anew -- when the bridge listens again."""
    with Client(durable_bridge.grpc, reconnect_backoff=(0.05, 0.5)) as client:
        session = client.create_session("demo", protocol_version="2026-07-28")
        durable_bridge.kill()
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            call = pool.submit(session.call_tool, "increment", timeout=60)
            time.sleep(1.0)  # the call fails to connect, and waits to try again
            assert not call.done()
            durable_bridge.start()
            assert call.result(timeout=60).text == "counter is now 1"
