"""Unit tests: JSON <-> Struct/Value, content blocks, results and notifications."""

from __future__ import annotations

import pytest
from google.protobuf import struct_pb2

from mcp_bridge import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    TextContent,
    ToolResultContent,
    ToolUseContent,
)
from mcp_bridge import _convert as cv
from mcp_bridge._gen.mcpbridge.v1 import host_pb2, mcp_pb2, session_pb2
from mcp_bridge.types import Annotations


def test_json_round_trip_keeps_plain_python_values() -> None:
    value = {
        "name": "Ada",
        "age": 36,
        "ratio": 0.5,
        "ok": True,
        "none": None,
        "tags": ["a", 1, 2.25, False, None, {"deep": [[]]}],
        "nested": {"empty": {}, "list": []},
    }
    s = cv.to_struct(value)
    assert isinstance(s, struct_pb2.Struct)
    back = cv.struct_to_dict(s)
    assert back == value
    assert isinstance(back["age"], int), "integral numbers come back as int"
    assert isinstance(back["ratio"], float)
    assert back["ok"] is True


def test_value_accepts_any_json_including_top_level_arrays() -> None:
    for v in ([1, 2, 3], "text", 3, 2.5, None, True, {"a": [1]}):
        assert cv.value_to_py(cv.to_value(v)) == v
    # tuples are JSON arrays too
    assert cv.value_to_py(cv.to_value(("x", 1))) == ["x", 1]


def test_large_and_special_numbers() -> None:
    big = 2**60  # beyond 2**53: stays a float, as JSON numbers are doubles
    assert cv.value_to_py(cv.to_value(big)) == float(big)
    with pytest.raises(ValueError):
        cv.to_value(float("nan"))


@pytest.mark.parametrize("bad", [object(), {1: "non-str key"}, {"x": {1, 2}}, b"bytes"])
def test_non_json_values_are_refused_with_the_path(bad: object) -> None:
    with pytest.raises(TypeError):
        cv.to_value(bad)


def test_error_names_the_path() -> None:
    with pytest.raises(TypeError, match=r"\$\.a\[1\]\.b"):
        cv.to_struct({"a": [1, {"b": object()}]})


CONTENT = [
    TextContent("hi", annotations=Annotations(audience=["user"], priority=0.5, last_modified="2025-01-01T00:00:00Z")),
    ImageContent(b"\x89PNG", "image/png"),
    AudioContent(b"RIFF", "audio/wav", meta={"k": "v"}),
    ResourceLink("demo://readme", name="readme", mime_type="text/markdown", size=12),
    EmbeddedResource(ResourceContents("demo://a", "text/plain", text="A")),
    EmbeddedResource(ResourceContents("demo://b", "application/octet-stream", blob=b"\x00\x01")),
    ToolUseContent("call_1", "get_weather", {"city": "Paris"}),
    ToolResultContent("call_1", [TextContent("sunny")], structured_content={"t": 21}, is_error=False),
]


@pytest.mark.parametrize("content", CONTENT, ids=lambda c: c.type)
def test_content_round_trips_through_proto(content: object) -> None:
    block = mcp_pb2.ContentBlock()
    cv.content_to(content, block)  # type: ignore[arg-type]
    assert cv.content_from(block) == content


@pytest.mark.parametrize("content", CONTENT, ids=lambda c: c.type)
def test_content_round_trips_through_mcp_json(content: object) -> None:
    d = cv.content_to_mcp(content)  # type: ignore[arg-type]
    assert d["type"] == content.type  # type: ignore[attr-defined]
    assert cv.content_from_mcp(d) == content


def test_mcp_json_content_shapes() -> None:
    assert cv.content_to_mcp(TextContent("x")) == {"type": "text", "text": "x"}
    assert cv.content_to_mcp(ImageContent(b"abc", "image/png")) == {"type": "image", "data": "YWJj", "mimeType": "image/png"}
    assert cv.content_from_mcp("plain") == TextContent("plain")


def test_call_tool_result_with_structured_array_and_task() -> None:
    r = mcp_pb2.CallToolResult(is_error=True)
    r.content.add().text.text = "line 1"
    r.content.add().text.text = "line 2"
    cv.fill_value(r.structured_content, [{"a": 1}, {"b": 2}])
    r.task.task_id = "t1"
    r.task.status = mcp_pb2.TASK_STATUS_WORKING
    r.task.ttl.seconds = 60
    res = cv.call_tool_result_from(r, "c1")
    assert res.is_error and res.call_id == "c1"
    assert res.text == "line 1\nline 2"
    assert res.structured_content == [{"a": 1}, {"b": 2}]
    assert res.task is not None and res.task.status == "working" and res.task.ttl == 60.0
    empty = cv.call_tool_result_from(mcp_pb2.CallToolResult())
    assert empty.structured_content is None and empty.meta is None and empty.task is None


def test_tool_and_session_conversion() -> None:
    t = mcp_pb2.Tool(name="add", description="adds")
    cv.fill_struct(t.input_schema, {"type": "object", "properties": {"a": {"type": "number"}}})
    t.annotations.read_only_hint = True
    t.execution.task_support = mcp_pb2.TASK_SUPPORT_OPTIONAL
    tool = cv.tool_from(t)
    assert tool.input_schema["properties"]["a"] == {"type": "number"}
    assert tool.output_schema is None
    assert tool.annotations is not None and tool.annotations.read_only_hint is True
    assert tool.annotations.destructive_hint is None
    assert tool.task_support == "optional"

    s = session_pb2.Session(session_id="s1", server="demo", state=session_pb2.SESSION_STATE_READY)
    s.server_capabilities.tools.list_changed = True
    s.server_capabilities.resources.subscribe = True
    s.host_capabilities.elicitation.form = True
    s.create_time.seconds = 1_700_000_000
    info = cv.session_from(s)
    assert info.state == "ready"
    assert info.server_capabilities == {"tools": {"listChanged": True}, "resources": {"listChanged": False, "subscribe": True}}
    assert info.host_capabilities == {"elicitation": {"form": {}}}
    assert info.created is not None and info.created.year == 2023


def test_event_notifications_use_mcp_methods_and_shapes() -> None:
    ev = host_pb2.Event(session_id="s1")
    ev.progress.progress = 2
    ev.progress.total = 5
    ev.progress.message = "step 2"
    ev.progress.call_id = "c1"
    cv.fill_value(ev.progress.progress_token, "tok")
    assert cv.event_notification(ev) == (
        "notifications/progress",
        {"progressToken": "tok", "progress": 2.0, "total": 5.0, "message": "step 2", "callId": "c1", "sessionId": "s1"},
    )

    ev = host_pb2.Event(session_id="s1")
    ev.log.level = mcp_pb2.LOGGING_LEVEL_WARNING
    ev.log.logger = "demo"
    cv.fill_value(ev.log.data, {"message": "careful"})
    assert cv.event_notification(ev) == (
        "notifications/message",
        {"level": "warning", "logger": "demo", "data": {"message": "careful"}, "sessionId": "s1"},
    )

    ev = host_pb2.Event(session_id="s1")
    ev.resource_updated.uri = "demo://counter"
    assert cv.event_notification(ev) == ("notifications/resources/updated", {"uri": "demo://counter", "sessionId": "s1"})

    ev = host_pb2.Event(session_id="s1")
    ev.tools_list_changed.SetInParent()
    assert cv.event_notification(ev) == ("notifications/tools/list_changed", {"sessionId": "s1"})

    ev = host_pb2.Event(session_id="s1")
    ev.session_state.state = session_pb2.SESSION_STATE_RECONNECTING
    ev.session_state.reason = "exited"
    ev.session_state.restarts = 1
    assert cv.event_notification(ev) == (
        "bridge/sessionState",
        {"state": "reconnecting", "reason": "exited", "restarts": 1, "sessionId": "s1"},
    )

    assert cv.event_notification(host_pb2.Event(session_id="s1")) is None


def test_enum_spelling() -> None:
    assert cv.level_value("WARNING") == mcp_pb2.LOGGING_LEVEL_WARNING
    with pytest.raises(ValueError, match="debug"):
        cv.level_value("loud")
    assert cv.enum_str(cv.INCLUDE_CONTEXT, mcp_pb2.INCLUDE_CONTEXT_THIS_SERVER) == "thisServer"
    assert cv.enum_str(cv.TASK_STATUS, mcp_pb2.TASK_STATUS_INPUT_REQUIRED) == "input_required"
    assert cv.enum_str(cv.ROLE, 99) == ""


def test_stream_request_notice_names_a_call_only_when_the_bridge_knows_it() -> None:
    from mcp_bridge import _base
    from mcp_bridge._gen.mcpbridge.v1 import bridge_service_pb2 as pb
    from mcp_bridge.types import RequestNotice

    # An input request (or a push on the call's own HTTP response stream) carries its call.
    caused = pb.StreamCallToolResponse(call_id="op-1")
    caused.server_request.request_id, caused.server_request.origin_call_id = "r-1", "op-1"
    caused.server_request.sampling.max_tokens = 5
    assert _base.stream_event(caused) == RequestNotice(request_id="r-1", kind="sampling", call_id="op-1")

    # A legacy push over stdio belongs to the session: the stream shows it, without tying it to the call.
    session_level = pb.StreamCallToolResponse(call_id="op-1")
    session_level.server_request.request_id = "r-2"
    session_level.server_request.roots.SetInParent()
    assert _base.stream_event(session_level) == RequestNotice(request_id="r-2", kind="roots", call_id="")
