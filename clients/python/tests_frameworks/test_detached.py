"""Detached tool calls through the framework adapters (docs/adr/0105-detached-calls.md), against the real bridge:
an agent's run is cut (its task cancelled) while the demo server's ``elicit`` tool waits for the person's answer;
with ``detached=DetachedCalls()`` the call goes on, the answer still reaches it, and the call's outcome is read
by resuming it; or the host cancels it upstream."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcp_bridge import (
    AsyncClient,
    AsyncSession,
    CallCancelledError,
    DetachedCalls,
    ElicitationRequest,
    ElicitResult,
    Handler,
    NotFoundError,
    accept,
)
from tests.conftest import Bridge

ELICIT_ARGS = {"message": "Who are you?"}
WAIT = 30.0  # a bound on waits for the other side, never a timing assertion


class Person(Handler):
    """Answers the elicitation only when the test lets it (after the agent's run was cut)."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.go_on = threading.Event()

    def handle_elicitation(self, request: ElicitationRequest) -> ElicitResult:
        self.asked.set()
        self.go_on.wait(WAIT)
        return accept({"name": "Ada", "age": 36})


Invoke = Callable[[AsyncSession, DetachedCalls], Awaitable[Any]]


async def _langchain(session: AsyncSession, calls: DetachedCalls) -> Any:
    from mcp_bridge.langchain import aload_tools

    tools = {t.name: t for t in await aload_tools(session, detached=calls)}
    return await tools["elicit"].ainvoke(ELICIT_ARGS)


async def _openai(session: AsyncSession, calls: DetachedCalls) -> Any:
    from mcp_bridge.openai import ToolDispatcher

    return await ToolDispatcher(session, detached=calls).acall("elicit", ELICIT_ARGS)


async def _agents_sdk(session: AsyncSession, calls: DetachedCalls) -> Any:
    from mcp_bridge.openai import BridgeMCPServer

    return await BridgeMCPServer(session, detached=calls).call_tool("elicit", ELICIT_ARGS)


async def _pydantic_ai(session: AsyncSession, calls: DetachedCalls) -> Any:
    from mcp_bridge.pydantic_ai import BridgeToolset

    return await BridgeToolset(session, detached=calls).call_tool("elicit", ELICIT_ARGS, None, None)  # type: ignore[arg-type]


ADAPTERS: dict[str, Invoke] = {"langchain": _langchain, "openai": _openai, "agents_sdk": _agents_sdk, "pydantic_ai": _pydantic_ai}


async def _cut_while_asking(invoke: Invoke, session: AsyncSession, calls: DetachedCalls, person: Person) -> str:
    """Starts the adapter's call, cuts it (cancels its task) once the tool asks the person; returns the call id."""
    run = asyncio.create_task(invoke(session, calls))
    asked = asyncio.create_task(asyncio.to_thread(person.asked.wait, WAIT))
    done, _ = await asyncio.wait({run, asked}, return_when=asyncio.FIRST_COMPLETED)
    assert asked in done and person.asked.is_set(), f"the tool never asked; the call ended with {run}"
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    (call,) = calls.running()
    assert call.tool == "elicit" and call.session is session
    return call.call_id


Then = Callable[[AsyncSession, DetachedCalls, Person, str], Awaitable[None]]


def _cut_run(fw_bridge: Bridge, invoke: Invoke, then: Then) -> None:
    """alice's session to the demo server; the adapter's call cut while the tool asks; then ``then``."""

    async def main() -> None:
        person = Person()
        async with AsyncClient(fw_bridge.grpc, token="tok-alice", timeout=60) as client:
            session = await client.create_session("demo", person)
            try:
                calls = DetachedCalls()
                await then(session, calls, person, await _cut_while_asking(invoke, session, calls, person))
            finally:
                person.go_on.set()
                await session.close()

    asyncio.run(main())


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_detached_call_outlives_a_cut_run(fw_bridge: Bridge, adapter: str) -> None:
    """The run is cut while the tool waits; the person answers afterwards; resuming the call returns the tool's
    result."""

    async def then(session: AsyncSession, calls: DetachedCalls, person: Person, call_id: str) -> None:
        person.go_on.set()
        result = await calls.aresume(call_id, timeout=WAIT)
        assert "accepted" in result.text and "Ada" in result.text, result
        assert calls.running() == []

    _cut_run(fw_bridge, ADAPTERS[adapter], then)


def test_detached_call_cancelled_by_the_host(fw_bridge: Bridge) -> None:
    """A cut detached call ended with DetachedCalls.acancel is cancelled upstream: resuming it gives no result
    (CANCELLED: the bridge keeps the host's cancel as the call's outcome, ADR 0113), and it is no longer in flight
    (a second cancel is NOT_FOUND)."""

    async def then(session: AsyncSession, calls: DetachedCalls, person: Person, call_id: str) -> None:
        await calls.acancel(call_id)
        assert calls.running() == []
        with pytest.raises(CallCancelledError):
            await session.call_tool("elicit", call_id=call_id, resume=True, timeout=WAIT)
        with pytest.raises(NotFoundError):
            await session.cancel_call(call_id)

    _cut_run(fw_bridge, _langchain, then)
