"""Unit tests: capabilities follow the overridden methods; answers in every accepted shape."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bridge import (
    ElicitationRequest,
    Handler,
    McpError,
    Root,
    RootsRequest,
    SamplingRequest,
    SamplingResult,
    TextContent,
    ToolUseContent,
    accept,
    cancel,
    decline,
)
from mcp_bridge import _convert as cv
from mcp_bridge import handler as h
from mcp_bridge._gen.mcpbridge.v1 import host_pb2, mcp_pb2


def caps(handler: Any, **kw: Any) -> dict[str, Any]:
    return cv.host_capabilities_to_mcp(h.capabilities(handler, **kw))


class Sampler(Handler):
    def handle_sampling(self, request: SamplingRequest) -> Any:
        return SamplingResult(TextContent("hi"), model="m")


class FormOnly(Handler):
    def handle_elicitation(self, request: ElicitationRequest) -> Any:
        return decline()


class UrlOnly(Handler):
    def handle_url_elicitation(self, request: ElicitationRequest) -> Any:
        return accept()


class Everything(Sampler, FormOnly, UrlOnly):
    sampling_tools = True
    roots_list_changed = False

    async def list_roots(self, request: RootsRequest) -> Any:
        return ["file:///tmp"]


class Observer(Handler):
    def handle_notification(self, method: str, params: dict[str, Any]) -> None:
        pass


def test_only_overridden_methods_are_declared() -> None:
    assert caps(None) == {}
    assert caps(Handler()) == {}
    assert caps(Observer()) == {}
    assert caps(Sampler()) == {"sampling": {}}
    assert caps(FormOnly()) == {"elicitation": {"form": {}}}
    assert caps(UrlOnly()) == {"elicitation": {"url": {}}}
    assert caps(Everything()) == {
        "sampling": {"tools": {}},
        "elicitation": {"form": {}, "url": {}},
        "roots": {"listChanged": False},
    }


def test_static_roots_declare_roots() -> None:
    assert caps(None, has_roots=True) == {"roots": {"listChanged": True}}
    assert caps(Sampler(), has_roots=True) == {"sampling": {}, "roots": {"listChanged": True}}


def test_duck_typed_and_instance_level_handlers() -> None:
    class Duck:
        def list_roots(self) -> list[str]:
            return []

    assert caps(Duck()) == {"roots": {"listChanged": True}}
    inst = Handler()
    inst.handle_sampling = lambda request: None  # type: ignore[method-assign]
    assert caps(inst) == {"sampling": {}}


def test_default_methods_answer_method_not_found() -> None:
    with pytest.raises(McpError) as e:
        Handler().handle_sampling(None)  # type: ignore[arg-type]
    assert e.value.code == -32601


def test_sampling_answers() -> None:
    a = h.sampling_answer(SamplingResult("plain text", model="m1", stop_reason="endTurn"))
    assert a.sampling.model == "m1" and a.sampling.content[0].text.text == "plain text"
    assert a.sampling.role == mcp_pb2.ROLE_ASSISTANT and a.sampling.stop_reason == "endTurn"

    # The MCP CreateMessageResult dict, as the seed libraries write it.
    a = h.sampling_answer({"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "my-model"})
    assert a.sampling.content[0].text.text == "hello" and a.sampling.model == "my-model"

    a = h.sampling_answer(
        SamplingResult([ToolUseContent("c1", "weather", {"city": "NYC"})], model="m", stop_reason="toolUse")
    )
    assert a.sampling.content[0].tool_use.name == "weather"
    assert cv.struct_to_dict(a.sampling.content[0].tool_use.input) == {"city": "NYC"}

    with pytest.raises(ValueError, match="model"):
        h.sampling_answer(SamplingResult("x", model=""))
    with pytest.raises(TypeError):
        h.sampling_answer(42)


def test_elicitation_answers() -> None:
    a = h.elicitation_answer(accept({"name": "Ada", "age": 36}))
    assert a.elicitation.action == mcp_pb2.ELICIT_ACTION_ACCEPT
    assert cv.struct_to_dict(a.elicitation.content) == {"name": "Ada", "age": 36}
    assert h.elicitation_answer(decline()).elicitation.action == mcp_pb2.ELICIT_ACTION_DECLINE
    assert h.elicitation_answer(cancel()).elicitation.action == mcp_pb2.ELICIT_ACTION_CANCEL
    assert h.elicitation_answer("decline").elicitation.action == mcp_pb2.ELICIT_ACTION_DECLINE
    d = h.elicitation_answer({"action": "accept", "content": {"x": 1}})
    assert cv.struct_to_dict(d.elicitation.content) == {"x": 1}
    assert not h.elicitation_answer(accept()).elicitation.HasField("content")
    with pytest.raises(ValueError):
        h.elicitation_answer({"action": "decline", "content": {"x": 1}})
    with pytest.raises(ValueError):
        h.elicitation_answer("maybe")


def test_roots_answers() -> None:
    a = h.roots_answer([Root("file:///a", "A"), {"uri": "file:///b", "name": "B"}, "file:///c"])
    assert [(r.uri, r.name) for r in a.roots.roots] == [("file:///a", "A"), ("file:///b", "B"), ("file:///c", "")]
    assert len(h.roots_answer({"roots": []}).roots.roots) == 0
    assert a.WhichOneof("answer") == "roots"
    assert h.roots_answer([]).WhichOneof("answer") == "roots"
    with pytest.raises(TypeError):
        h.roots_answer("file:///a")


def test_errors_from_handlers() -> None:
    a = h.internal_error(McpError(-1, "User rejected sampling request", {"why": "no"}))
    assert (a.error.code, a.error.message) == (-1, "User rejected sampling request")
    assert cv.value_to_py(a.error.data) == {"why": "no"}
    a = h.internal_error(RuntimeError("boom"))
    assert a.error.code == -32603 and "boom" in a.error.message


def test_request_from_wire() -> None:
    sr = host_pb2.ServerRequest(request_id="r1", session_id="s1", origin_call_id="c1", delivery=host_pb2.DELIVERY_MULTI_ROUND_TRIP)
    s = sr.sampling
    m = s.messages.add(role=mcp_pb2.ROLE_USER)
    m.content.add().text.text = "Say hi"
    s.max_tokens = 100
    s.system_prompt = "be brief"
    s.temperature = 0.2
    s.model_preferences.hints.add(name="sonnet")
    s.model_preferences.speed_priority = 0.9
    s.tool_choice.mode = mcp_pb2.TOOL_CHOICE_MODE_AUTO
    sr.deadline.seconds = 1_900_000_000
    req = h.request_from(sr)
    assert isinstance(req, SamplingRequest)
    assert req.delivery == "multi_round_trip" and req.origin_call_id == "c1"
    assert req.messages[0].role == "user" and req.messages[0].text == "Say hi"
    assert req.model_preferences is not None and req.model_preferences.hints == ["sonnet"]
    assert req.model_preferences.cost_priority is None
    assert req.deadline is not None and req.deadline.year == 2030
    assert req.params == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
        "maxTokens": 100,
        "systemPrompt": "be brief",
        "temperature": 0.2,
        "modelPreferences": {"hints": [{"name": "sonnet"}], "speedPriority": 0.9},
        "toolChoice": {"mode": "auto"},
    }

    sr = host_pb2.ServerRequest(request_id="r2", session_id="s1")
    sr.elicitation.mode = mcp_pb2.ELICITATION_MODE_FORM
    sr.elicitation.message = "Who are you?"
    cv.fill_struct(sr.elicitation.requested_schema, {"type": "object", "properties": {"name": {"type": "string"}}})
    e = h.request_from(sr)
    assert isinstance(e, ElicitationRequest) and e.mode == "form"
    assert e.requested_schema["properties"]["name"]["type"] == "string"

    sr = host_pb2.ServerRequest(request_id="r3", session_id="s1")
    sr.roots.SetInParent()
    assert isinstance(h.request_from(sr), RootsRequest)
    assert h.request_from(host_pb2.ServerRequest(request_id="r4")) is None


def test_respond_needs_a_stream() -> None:
    r = RootsRequest(request_id="r", session_id="s")
    with pytest.raises(RuntimeError):
        r.respond([])
