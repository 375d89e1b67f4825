"""Three agent frameworks driven by the scripted model server, through the real bridge and the demo server.

In each, the model calls ``add`` and ``echo``; ``elicit`` (answered by the host's handler); ``sample`` (answered by
the OpenAI sampling adapter, which calls the same model server: the test asserts what it received); and the
``structured`` tool, which needs approval: approved once (Paris), denied once (Atlantis), the denial reaching
the model as a tool error with the approver's reason."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import openai
import pytest

from mcp_bridge import AsyncClient, Client
from tests.conftest import Bridge

from .conftest import DENY_REASON, Approver, Host
from .model_server import FINAL, SAMPLED, SAMPLER, ModelServer


def check_run(model: ModelServer, approver: Approver, host: Host) -> None:
    outs = model.tool_outputs()
    assert len(outs) == 6, outs
    assert "5" in outs[0]  # 2 + 3
    assert "hello bridge" in outs[1]
    assert "Ada" in outs[2] and "36" in outs[2]
    assert SAMPLED in outs[3] or "sampled-model" in outs[3]
    assert "Paris" in outs[4]
    assert DENY_REASON in outs[5] and "denied" in outs[5], outs[5]
    # the sampling adapter's request, as the model server got it
    sampling = model.sampling_requests()
    assert len(sampling) == 1, sampling
    s = sampling[0]
    assert s["messages"] == [{"role": "system", "content": SAMPLER}, {"role": "user", "content": "Say hi"}]
    assert s["max_tokens"] == 42
    assert s["model"] == "sampler-model"
    assert "tools" not in s
    assert [r.arguments.get("city") for r in approver.seen] == ["Paris", "Atlantis"]
    assert len(host.elicited) == 1 and "name" in host.elicited[0].requested_schema["properties"]


def test_langgraph_react_agent(fw_bridge: Bridge, model: ModelServer, approver: Approver) -> None:
    from langchain_openai import ChatOpenAI

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from langgraph.prebuilt import create_react_agent

    from mcp_bridge.langchain import load_tools

    host = Host(openai.OpenAI(base_url=model.url, api_key="test"))
    with Client(fw_bridge.grpc, token="tok-alice", timeout=60) as client, client.create_session("demo", host) as session:
        tools = load_tools(session)
        add = next(t for t in tools if t.name == "add")
        assert add.response_format == "content_and_artifact"
        assert set(add.args) == {"a", "b"}
        with warnings.catch_warnings():  # LangGraph 1.x points at langchain.agents.create_agent (another package)
            warnings.simplefilter("ignore")
            agent: Any = create_react_agent(ChatOpenAI(model="test-model", base_url=model.url, api_key="test"), tools)
        out = agent.invoke({"messages": [("user", "go")]})
    assert out["messages"][-1].content == FINAL
    tool_msgs = [m for m in out["messages"] if m.type == "tool"]
    assert tool_msgs[0].artifact == {"structured_content": {"sum": 5}}
    assert tool_msgs[-1].status == "error"
    check_run(model, approver, host)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_openai_agents_sdk(fw_bridge: Bridge, model: ModelServer, approver: Approver, api: str) -> None:
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, set_tracing_disabled

    from mcp_bridge.openai import BridgeMCPServer

    set_tracing_disabled(True)
    host = Host(openai.AsyncOpenAI(base_url=model.url, api_key="test"))

    async def main() -> Any:
        async with AsyncClient(fw_bridge.grpc, token="tok-alice", timeout=60) as client:
            session = await client.create_session("demo", host)
            try:
                server = BridgeMCPServer(session, cache_tools_list=True, tool_filter={"blocked_tool_names": ["fail"]})
                names = [t.name for t in await server.list_tools()]
                assert "fail" not in names and "add" in names
                client_ = openai.AsyncOpenAI(base_url=model.url, api_key="test")
                llm: Any = (
                    OpenAIChatCompletionsModel(model="test-model", openai_client=client_)
                    if api == "chat"
                    else OpenAIResponsesModel(model="test-model", openai_client=client_)
                )
                agent = Agent(name="bridge", instructions="Use the tools.", model=llm, mcp_servers=[server])
                return await Runner.run(agent, "go", max_turns=20)
            finally:
                await session.close()

    result = asyncio.run(main())
    assert result.final_output == FINAL
    check_run(model, approver, host)


def test_pydantic_ai_agent(fw_bridge: Bridge, model: ModelServer, approver: Approver) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from mcp_bridge.pydantic_ai import BridgeToolset

    host = Host(openai.AsyncOpenAI(base_url=model.url, api_key="test"))

    async def main() -> Any:
        async with AsyncClient(fw_bridge.grpc, token="tok-alice", timeout=60) as client:
            session = await client.create_session("demo", host)
            try:
                llm = OpenAIChatModel("test-model", provider=OpenAIProvider(base_url=model.url, api_key="test"))
                agent = Agent(llm, toolsets=[BridgeToolset(session)])
                return await agent.run("go")
            finally:
                await session.close()

    result = asyncio.run(main())
    assert result.output == FINAL
    check_run(model, approver, host)


@pytest.mark.parametrize("api", ["chat", "responses"])
def test_plain_openai_dispatcher(fw_bridge: Bridge, model: ModelServer, approver: Approver, api: str) -> None:
    """Plain Chat Completions / Responses: function definitions and the dispatcher, the loop written by hand."""
    from mcp_bridge.openai import ToolDispatcher

    llm = openai.OpenAI(base_url=model.url, api_key="test")
    host = Host(llm)
    with Client(fw_bridge.grpc, token="tok-alice", timeout=60) as client, client.create_session("demo", host) as session:
        tools = ToolDispatcher(session)
        if api == "chat":
            messages: list[Any] = [{"role": "user", "content": "go"}]
            while True:
                msg = llm.chat.completions.create(model="test-model", messages=messages, tools=tools.chat_tools()).choices[0].message  # type: ignore[arg-type]
                messages.append(msg.model_dump(exclude_none=True))
                if not msg.tool_calls:
                    break
                messages += tools.run_chat(msg)
            assert msg.content == FINAL
        else:
            items: list[Any] = [{"role": "user", "content": "go"}]
            while True:
                resp = llm.responses.create(model="test-model", input=items, tools=tools.responses_tools())  # type: ignore[arg-type]
                calls = tools.run_responses(resp.output)
                if not calls:
                    break
                items += [o.model_dump(exclude_none=True) for o in resp.output] + calls
            assert resp.output_text == FINAL
    check_run(model, approver, host)
