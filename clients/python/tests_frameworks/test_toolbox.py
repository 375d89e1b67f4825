"""A toolbox over two servers through the real bridge: distinct valid names, calls routed to their session, a
``tools/list_changed`` reflected without reopening, one handler for every session, closed together."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from mcp_bridge import AsyncClient, AsyncToolbox, Client, ElicitationRequest, ElicitResult, Handler, Toolbox, accept
from mcp_bridge.toolbox import NAME_PATTERN
from tests.conftest import Bridge

LONG = "a.very.long.tool.name." + "x" * 60


class Observer(Handler):
    """Sees list changes; answers elicitation (through the toolbox's handler) and roots without a request."""

    def __init__(self) -> None:
        self.changed = threading.Event()

    def handle_elicitation(self, request: ElicitationRequest) -> ElicitResult:
        return accept({"name": "Toolbox"})

    def list_roots(self) -> list[str]:
        return ["file:///toolbox"]

    def handle_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            self.changed.set()


def test_toolbox_two_servers(fw_bridge: Bridge) -> None:
    obs = Observer()
    with Client(fw_bridge.grpc, token="tok-alice", timeout=60) as client:
        with Toolbox(client, handler=obs) as box:  # every server alice may use: demo and dyn
            assert sorted(box.servers) == ["demo", "dyn"]
            tools = box.list_tools()
            names = [t.name for t in tools]
            assert len(set(names)) == len(names)
            assert all(NAME_PATTERN.match(n) for n in names), names
            assert {"demo_echo", "dyn_echo", "demo_add", "dyn_add_tool"} <= set(names)
            assert box.call_tool("demo_echo", {"text": "hi"}).text == "hi"
            assert box.call_tool("dyn_echo", {"text": "hi"}).text == "HI"
            # one handler answers every session: elicitation, and roots without a request parameter
            assert box.call_tool("demo_elicit", {}).text == "accepted: name=Toolbox"
            assert "file:///toolbox" in box.call_tool("demo_list_roots", {}).text
            assert box.sessions["demo"].info.host_capabilities.keys() >= {"elicitation", "roots"}

            assert box.call_tool("dyn_add_tool", {"name": LONG}).text == "added " + LONG
            assert obs.changed.wait(30), "no tools/list_changed reached the handler"
            new = [t for t in box.list_tools() if t.name not in names]
            assert len(new) == 1 and new[0].tool.name == LONG and new[0].server == "dyn"
            assert NAME_PATTERN.match(new[0].name) and len(new[0].name) == 64
            assert box.call_tool(new[0].name, {}).text == "added"
            ids = [s.id for s in box.sessions.values()]
        assert box.sessions == {}
        open_ids = {s.session_id for s in client.list_sessions() if s.state != "closed"}
        assert not open_ids & set(ids)


def test_async_toolbox(fw_bridge: Bridge) -> None:
    async def main() -> None:
        async with AsyncClient(fw_bridge.grpc, token="tok-alice", timeout=60) as client:
            async with AsyncToolbox(client, ["demo", "dyn"], prefix=lambda s, t: f"{s}__{t}") as box:
                names = [t.name for t in await box.list_tools()]
                assert "demo__echo" in names and "dyn__echo" in names
                assert (await box.call_tool("dyn__echo", {"text": "x"})).text == "X"

    asyncio.run(main())


def test_langchain_async_tools_resources_prompts(fw_bridge: Bridge) -> None:
    """aload_tools over an AsyncSession (async tools, a tool error as a ToolMessage with status error), and
    resources and prompts as langchain-mcp-adapters offers them."""
    from langchain_core.messages import HumanMessage, ToolMessage

    from mcp_bridge.langchain import (
        aload_mcp_prompt,
        aload_mcp_resources,
        aload_tools,
        load_mcp_prompt,
        load_mcp_resources,
    )

    async def main() -> None:
        async with AsyncClient(fw_bridge.grpc, token="tok-alice", timeout=60) as client:
            session = await client.create_session("demo")
            try:
                tools = {t.name: t for t in await aload_tools(session, tool_name_prefix="demo")}
                out = await tools["demo_add"].ainvoke({"type": "tool_call", "id": "c1", "name": "demo_add", "args": {"a": 1, "b": 2}})
                assert isinstance(out, ToolMessage) and out.artifact == {"structured_content": {"sum": 3}}
                assert out.content[0]["text"] == "1 + 2 = 3"
                err = await tools["demo_fail"].ainvoke({"type": "tool_call", "id": "c2", "name": "demo_fail", "args": {"message": "boom"}})
                assert err.status == "error" and "boom" in str(err.content)
                blobs = await aload_mcp_resources(session, uris="demo://readme")
                assert blobs and blobs[0].metadata["uri"] == "demo://readme" and blobs[0].as_string()
                msgs = await aload_mcp_prompt(session, "greet", arguments={"name": "Ada"})
                assert isinstance(msgs[0], HumanMessage) and "Ada" in str(msgs[0].content)
            finally:
                await session.close()

    asyncio.run(main())
    with Client(fw_bridge.grpc, token="tok-alice", timeout=60) as client, client.create_session("demo") as session:
        assert len(load_mcp_resources(session)) >= 1
        assert "Ada" in str(load_mcp_prompt(session, "greet", arguments={"name": "Ada"})[0].content)


def test_agents_sdk_cache_follows_list_changed(fw_bridge: Bridge) -> None:
    """BridgeMCPServer over a toolbox with cache_tools_list: cached until a server announces a change."""
    from mcp_bridge.openai import BridgeMCPServer

    obs = Observer()
    with Client(fw_bridge.grpc, token="tok-alice", timeout=60) as client, Toolbox(client, ["demo", "dyn"], handler=obs) as box:
        server = BridgeMCPServer(box, cache_tools_list=True, tool_filter={"allowed_tool_names": ["dyn_echo", "dyn_fresh", "demo_add"]})

        async def names() -> list[str]:
            return sorted(t.name for t in await server.list_tools())

        assert asyncio.run(names()) == ["demo_add", "dyn_echo"]
        assert server.cached_tools is not None and len(server.cached_tools) > 3  # the cache holds the unfiltered list
        box.call_tool("dyn_add_tool", {"name": "fresh"})
        assert obs.changed.wait(30)
        assert asyncio.run(names()) == ["demo_add", "dyn_echo", "dyn_fresh"]
        result = asyncio.run(server.call_tool("dyn_echo", {"text": "abc"}))
        assert result.content[0].text == "ABC" and not result.is_error
