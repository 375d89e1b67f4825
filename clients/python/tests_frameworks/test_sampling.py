"""OpenAISamplingHandler against the scripted model server (no bridge): what a sampling request becomes on the
wire (messages with images, tool use and results; system prompt; max tokens; temperature; stop sequences; model
preferences through the host's rule; tools and tool choice), the approval hook (edit, refuse), and a reply with
tool calls mapped back to ``tool_use`` blocks."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

from mcp_bridge import (
    USER_REJECTED,
    ImageContent,
    McpError,
    ModelPreferences,
    SamplingMessage,
    SamplingRequest,
    TextContent,
    Tool,
    ToolResultContent,
    ToolUseContent,
)
from mcp_bridge.openai import OpenAISamplingHandler, pick_model, sampling_result

from .model_server import SAMPLED, SAMPLER, ModelServer

PNG = b"\x89PNG\r\n\x1a\nfake"


def request() -> SamplingRequest:
    return SamplingRequest(
        request_id="r1",
        session_id="s1",
        system_prompt=SAMPLER,
        messages=[
            SamplingMessage("user", [TextContent("What is in this picture?"), ImageContent(PNG, "image/png")]),
            SamplingMessage("assistant", [ToolUseContent(id="tu1", name="lookup", input={"q": "cat"})]),
            SamplingMessage("user", [ToolResultContent(tool_use_id="tu1", content=[TextContent("a cat")])]),
        ],
        max_tokens=64,
        temperature=0.2,
        stop_sequences=["END"],
        model_preferences=ModelPreferences(hints=["claude-3-haiku", "gpt"]),
        tools=[Tool(name="lookup", description="Looks things up.", input_schema={"type": "object", "properties": {"q": {"type": "string"}}})],
        tool_choice="required",
    )


def test_request_on_the_wire(model: ModelServer) -> None:
    seen: list[dict[str, Any]] = []

    def review(req: SamplingRequest, params: dict[str, Any]) -> dict[str, Any]:
        seen.append(dict(params))
        params["max_tokens"] = 32  # a person trimmed it
        return params

    h = OpenAISamplingHandler(openai.OpenAI(base_url=model.url, api_key="t"), model_rule={"haiku": "small-model", "*": "big-model"}, approve=review)
    result = h.handle_sampling(request())
    assert result.content == TextContent(SAMPLED) and result.model == "sampled-model" and result.stop_reason == "endTurn"
    (body,) = model.sampling_requests()
    assert body["model"] == "small-model"
    assert body["max_tokens"] == 32 and seen[0]["max_tokens"] == 64
    assert body["temperature"] == 0.2 and body["stop"] == ["END"]
    assert body["tool_choice"] == "required"
    assert body["tools"] == [
        {"type": "function", "function": {"name": "lookup", "description": "Looks things up.", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}
    ]
    assert body["messages"] == [
        {"role": "system", "content": SAMPLER},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgpmYWtl"}},
            ],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "tu1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "cat"}'}}]},
        {"role": "tool", "tool_call_id": "tu1", "content": "a cat"},
    ]


def test_refused_and_async(model: ModelServer) -> None:
    h = OpenAISamplingHandler(openai.OpenAI(base_url=model.url, api_key="t"), model_rule="m", approve=lambda r, p: False)
    with pytest.raises(McpError) as e:
        h.handle_sampling(request())
    assert e.value.code == USER_REJECTED
    assert model.sampling_requests() == []

    async def approve(r: SamplingRequest, p: dict[str, Any]) -> bool:
        return True

    ah = OpenAISamplingHandler(openai.AsyncOpenAI(base_url=model.url, api_key="t"), model_rule="m", approve=approve)
    result = asyncio.run(ah.handle_sampling(request()))
    assert result.model == "sampled-model"
    assert model.sampling_requests()[0]["model"] == "m"


def test_model_rule() -> None:
    prefs = ModelPreferences(hints=["gpt-4o", "claude"])
    assert pick_model({"claude": "c", "gpt": "g"}, prefs) == "g"  # the server's first hint wins
    assert pick_model({"mistral": "x", "*": "d"}, prefs) == "d"
    assert pick_model(lambda p: "f" if p is None else "h", None) == "f"
    with pytest.raises(McpError):
        pick_model({"mistral": "x"}, prefs)


def test_tool_calls_become_tool_use() -> None:
    completion = openai.types.chat.ChatCompletion.model_validate(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 1,
            "model": "m1",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {"role": "assistant", "content": None, "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}]},
                }
            ],
        }
    )
    r = sampling_result(completion)
    assert r.content == ToolUseContent(id="t1", name="lookup", input={"q": "x"})
    assert r.stop_reason == "toolUse" and r.model == "m1"
