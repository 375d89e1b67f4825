"""Integration tests: the asyncio AsyncClient against the real bridge and its demo server.

Each test runs its own event loop (asyncio.run), so no pytest plugin is needed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from mcp_bridge import (
    AsyncClient,
    BridgeError,
    CallToolResult,
    ElicitationRequest,
    Handler,
    InvalidArgumentError,
    LogMessage,
    NotFoundError,
    Progress,
    Root,
    RootsRequest,
    SamplingRequest,
    SamplingResult,
    accept,
    cancel,
    decline,
)

from .conftest import Bridge

ERAS = ["2025-11-25", "2026-07-28"]


def run(bridge: Bridge, body: Callable[[AsyncClient], Awaitable[None]]) -> None:
    async def main() -> None:
        async with AsyncClient(bridge.grpc, timeout=60, reconnect_backoff=(0.05, 1.0)) as client:
            await asyncio.wait_for(body(client), 60)

    asyncio.run(main())


async def until(predicate: Callable[[], Any], timeout: float = 20.0) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


class AsyncHost(Handler):
    """Async sampling and roots; a plain (blocking) elicitation method, which the client runs on a thread."""

    def __init__(self, form: Any = None) -> None:
        self.form = form if form is not None else accept({"name": "Grace", "age": 85})
        self.seen: list[Any] = []
        self.threads: list[str] = []
        self.notes: list[tuple[str, dict[str, Any]]] = []

    async def handle_sampling(self, request: SamplingRequest) -> SamplingResult:
        self.seen.append(request)
        await asyncio.sleep(0)  # e.g. awaiting an LLM API
        return SamplingResult(f"async canned: {request.messages[-1].text}", model="async-canned")

    def handle_elicitation(self, request: ElicitationRequest) -> Any:
        self.seen.append(request)
        self.threads.append(threading.current_thread().name)
        return self.form

    async def list_roots(self, request: RootsRequest) -> list[Root]:
        self.seen.append(request)
        return [Root("file:///async", "async")]

    async def handle_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notes.append((method, params))


def test_every_operation(bridge: Bridge) -> None:
    async def body(client: AsyncClient) -> None:
        assert "demo" in [s.name for s in await client.list_servers()]
        host = AsyncHost()
        session = await client.create_session("demo", host)
        assert (await client.get_session(session.id)).state == "ready"
        assert session.id in [s.session_id for s in await client.list_sessions()]

        assert {"echo", "add", "sample"} <= {t.name for t in await session.list_tools()}
        assert (await session.call_tool("echo", {"text": "async hi"})).text == "async hi"
        assert (await session.call_tool("add", {"a": 1.5, "b": 2})).structured_content == {"sum": 3.5}
        assert (await session.call_tool("fail")).is_error
        with pytest.raises(InvalidArgumentError):
            await session.call_tool("nope")

        assert "demo://readme" in [r.uri for r in await session.list_resources()]
        assert ["demo://items/{id}"] == [t.uri_template for t in await session.list_resource_templates()]
        assert (await session.read_resource("demo://items/beta")).contents[0].mime_type == "application/json"
        with pytest.raises(NotFoundError):
            await session.read_resource("demo://items/zeta")
        await session.subscribe("demo://counter")
        await session.call_tool("increment")
        await until(lambda: any(m == "notifications/resources/updated" for m, _ in host.notes))
        await session.unsubscribe("demo://counter")

        assert ["greet"] == [p.name for p in await session.list_prompts()]
        rendered = await session.get_prompt("greet", {"name": "Ken"})
        assert rendered.description == "A casual greeting for Ken"
        assert (await session.complete(prompt="greet", argument="name", value="r")).values == ["Rob"]

        await session.set_log_level("error")
        events = [e async for e in session.call_tool_stream("log")]
        assert [e.level for e in events if isinstance(e, LogMessage)] == ["error", "critical", "alert", "emergency"]

        events = [e async for e in session.call_tool_stream("long_operation", {"durationSeconds": 0.2, "steps": 2})]
        assert [e.progress for e in events if isinstance(e, Progress)] == [1, 2]
        assert isinstance(events[-1], CallToolResult)

        assert [r.uri for r in await session.set_roots(["file:///r1"])] == ["file:///r1"]

        with pytest.raises(BridgeError) as e:
            await session.call_tool("long_operation", {"durationSeconds": 30}, timeout=0.3)
        assert e.value.code == grpc.StatusCode.DEADLINE_EXCEEDED

        await session.close()
        with pytest.raises(NotFoundError):
            await client.get_session(session.id)

    run(bridge, body)


def test_ping(bridge: Bridge) -> None:
    async def body(client: AsyncClient) -> None:
        async with await client.create_session("demo", protocol_version="2025-11-25") as session:
            assert await session.ping() >= 0

    run(bridge, body)


@pytest.mark.parametrize("version", ERAS)
def test_server_initiated_flows(bridge: Bridge, version: str) -> None:
    async def body(client: AsyncClient) -> None:
        host = AsyncHost()
        async with await client.create_session("demo", host, protocol_version=version) as session:
            sampled = await session.call_tool("sample", {"prompt": "async?"}, call_id="a-1")
            assert sampled.text == "async canned: async?"
            # MRTR input requests carry the call that caused them; a legacy push over stdio belongs to the
            # session (the bridge cannot know which call it came from), so its origin is empty.
            assert host.seen[-1].origin_call_id == ("" if version == "2025-11-25" else "a-1")

            elicited = await session.call_tool("elicit")
            assert elicited.text == "accepted: name=Grace age=85"
            assert host.threads and host.threads[0] != threading.main_thread().name

            roots = await session.call_tool("list_roots")
            assert roots.structured_content == {"roots": [{"uri": "file:///async", "name": "async"}]}

            # Calls run concurrently while handlers work.
            results = await asyncio.gather(*(session.call_tool("sample", {"prompt": str(i)}) for i in range(5)))
            assert [r.text for r in results] == [f"async canned: {i}" for i in range(5)]

    run(bridge, body)


@pytest.mark.parametrize("answer,text", [(decline(), "declined"), (cancel(), "cancelled")], ids=["decline", "cancel"])
def test_elicitation_decline_and_cancel(bridge: Bridge, answer: Any, text: str) -> None:
    async def body(client: AsyncClient) -> None:
        async with await client.create_session("demo", AsyncHost(form=answer)) as session:
            assert (await session.call_tool("elicit")).text == text

    run(bridge, body)


def test_handler_exception_and_deferred_answer(bridge: Bridge) -> None:
    async def body(client: AsyncClient) -> None:
        parked: list[SamplingRequest] = []

        class Host(Handler):
            async def handle_sampling(self, request: SamplingRequest) -> Any:
                text = request.messages[-1].text
                if text == "boom":
                    raise RuntimeError("async handler blew up")
                parked.append(request)
                return None  # answered below, from another task

        async with await client.create_session("demo", Host()) as session:
            with pytest.raises(BridgeError) as e:
                await session.call_tool("sample", {"prompt": "boom"})
            assert "async handler blew up" in e.value.message
            call = asyncio.ensure_future(session.call_tool("sample", {"prompt": "later"}))
            await until(lambda: parked)
            assert parked[0].respond(SamplingResult("answered from another task", model="m"))
            assert (await call).text == "answered from another task"

    run(bridge, body)


@pytest.mark.parametrize("version", ERAS)
def test_stream_dropped_while_a_request_is_pending(bridge: Bridge, version: str) -> None:
    async def body(client: AsyncClient) -> None:
        gate = asyncio.Event()
        calls: list[str] = []

        class Waiting(Handler):
            async def handle_elicitation(self, request: ElicitationRequest) -> Any:
                calls.append(request.request_id)
                await gate.wait()
                return accept({"name": "Edsger"})

        async with await client.create_session("demo", Waiting(), protocol_version=version) as session:
            call = asyncio.ensure_future(session.call_tool("elicit"))
            await until(lambda: calls)
            connects, deliveries = client._host.connects, client._host.core.deliveries
            client._drop_host_stream()
            # Reconnected, re-attached, and the bridge delivered the pending request again.
            await until(lambda: client._host.connects > connects and client._host.core.deliveries > deliveries)
            gate.set()
            assert (await call).text == "accepted: name=Edsger"
            assert len(calls) == 1, "handled once although delivered twice"

    run(bridge, body)


def test_pending_requests_and_respond(bridge: Bridge) -> None:
    async def body(client: AsyncClient) -> None:
        holder = AsyncClient(bridge.grpc)
        session = await holder.create_session("demo", AsyncHost())
        await holder.close()  # nobody attached now; the capability stays declared
        s = await client.session(session.id)
        call = asyncio.ensure_future(s.call_tool("elicit"))
        pending: list[Any] = []

        async def poll() -> None:
            while not pending:
                pending.extend(await s.pending_requests())
                await asyncio.sleep(0.02)

        await asyncio.wait_for(poll(), 20)
        (req,) = pending
        assert isinstance(req, ElicitationRequest)
        await s.respond(req, accept({"name": "Alan"}))
        assert (await call).text == "accepted: name=Alan"
        await s.close()

    run(bridge, body)
