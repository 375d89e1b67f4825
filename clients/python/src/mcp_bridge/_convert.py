"""Conversion between the generated protobuf messages and mcp_bridge's plain Python values.

Nothing here is public API; the public types are in :mod:`mcp_bridge.types` and :mod:`mcp_bridge.handler`.
"""

from __future__ import annotations

import base64
import datetime as _dt
import math
from collections.abc import Iterable, Mapping
from typing import Any

from google.protobuf import struct_pb2

from ._gen.mcpbridge.v1 import bridge_service_pb2, host_pb2, mcp_pb2, session_pb2
from .types import (
    JSON,
    Annotations,
    ApprovalPending,
    Approvers,
    ApproverScope,
    AudioContent,
    CallToolResult,
    Completion,
    Content,
    EmbeddedResource,
    GetPromptResult,
    Icon,
    Identity,
    ImageContent,
    Implementation,
    LogMessage,
    Progress,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    RequestEnded,
    Resource,
    ResourceContents,
    ResourceLink,
    ResourceTemplate,
    Root,
    ServerInfo,
    SessionInfo,
    Task,
    TextContent,
    TextWarning,
    Tool,
    ToolAnnotations,
    ToolResultContent,
    ToolUseContent,
    UrlDestination,
)

_MAX_SAFE_INT = 2**53

# ------------------------------------------------------------------------------------------------- JSON


def value_to_py(v: struct_pb2.Value) -> JSON:
    """A google.protobuf.Value as a plain Python value. Integral numbers come back as int."""
    kind = v.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind == "number_value":
        n = v.number_value
        if math.isfinite(n) and n.is_integer() and abs(n) <= _MAX_SAFE_INT:
            return int(n)
        return n
    if kind == "string_value":
        return v.string_value
    if kind == "bool_value":
        return v.bool_value
    if kind == "struct_value":
        return struct_to_dict(v.struct_value)
    if kind == "list_value":
        return [value_to_py(x) for x in v.list_value.values]
    raise ValueError(f"unknown google.protobuf.Value kind {kind!r}")


def struct_to_dict(s: struct_pb2.Struct) -> dict[str, Any]:
    """A google.protobuf.Struct as a dict."""
    return {k: value_to_py(v) for k, v in s.fields.items()}


def fill_value(v: struct_pb2.Value, obj: JSON, _path: str = "$") -> None:
    """Set v to the JSON value obj (dict, list/tuple, str, int, float, bool, None)."""
    if obj is None:
        v.null_value = struct_pb2.NULL_VALUE
    elif isinstance(obj, bool):
        v.bool_value = obj
    elif isinstance(obj, (int, float)):
        if isinstance(obj, float) and not math.isfinite(obj):
            raise ValueError(f"{_path}: {obj} is not a JSON number")
        v.number_value = float(obj)
    elif isinstance(obj, str):
        v.string_value = obj
    elif isinstance(obj, Mapping):
        fill_struct(v.struct_value, obj, _path)
    elif isinstance(obj, (list, tuple)):
        lv = v.list_value
        lv.SetInParent()
        for i, item in enumerate(obj):
            fill_value(lv.values.add(), item, f"{_path}[{i}]")
    else:
        raise TypeError(f"{_path}: {type(obj).__name__} is not a JSON value")


def fill_struct(s: struct_pb2.Struct, obj: Mapping[str, Any], _path: str = "$") -> None:
    """Set s to the JSON object obj."""
    s.SetInParent()
    for k, item in obj.items():
        if not isinstance(k, str):
            raise TypeError(f"{_path}: JSON object keys must be str, not {type(k).__name__}")
        fill_value(s.fields[k], item, f"{_path}.{k}")


def to_value(obj: JSON) -> struct_pb2.Value:
    v = struct_pb2.Value()
    fill_value(v, obj)
    return v


def to_struct(obj: Mapping[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    fill_struct(s, obj)
    return s


def opt_struct(msg: Any, name: str) -> dict[str, Any] | None:
    """The dict of a Struct field, or None when the field is unset."""
    return struct_to_dict(getattr(msg, name)) if msg.HasField(name) else None


def opt_value(msg: Any, name: str) -> JSON:
    return value_to_py(getattr(msg, name)) if msg.HasField(name) else None


def set_struct(msg: Any, name: str, obj: Mapping[str, Any] | None) -> None:
    if obj is not None:
        fill_struct(getattr(msg, name), obj, name)


def set_value(msg: Any, name: str, obj: JSON, *, keep_none: bool = False) -> None:
    if obj is not None or keep_none:
        fill_value(getattr(msg, name), obj, name)


# ------------------------------------------------------------------------------------------------ enums


ROLE = {mcp_pb2.ROLE_USER: "user", mcp_pb2.ROLE_ASSISTANT: "assistant"}
LEVEL = {
    mcp_pb2.LOGGING_LEVEL_DEBUG: "debug",
    mcp_pb2.LOGGING_LEVEL_INFO: "info",
    mcp_pb2.LOGGING_LEVEL_NOTICE: "notice",
    mcp_pb2.LOGGING_LEVEL_WARNING: "warning",
    mcp_pb2.LOGGING_LEVEL_ERROR: "error",
    mcp_pb2.LOGGING_LEVEL_CRITICAL: "critical",
    mcp_pb2.LOGGING_LEVEL_ALERT: "alert",
    mcp_pb2.LOGGING_LEVEL_EMERGENCY: "emergency",
}
THEME = {mcp_pb2.ICON_THEME_LIGHT: "light", mcp_pb2.ICON_THEME_DARK: "dark"}
ELICIT_MODE = {mcp_pb2.ELICITATION_MODE_FORM: "form", mcp_pb2.ELICITATION_MODE_URL: "url"}
ELICIT_ACTION = {
    mcp_pb2.ELICIT_ACTION_ACCEPT: "accept",
    mcp_pb2.ELICIT_ACTION_DECLINE: "decline",
    mcp_pb2.ELICIT_ACTION_CANCEL: "cancel",
}
INCLUDE_CONTEXT = {
    mcp_pb2.INCLUDE_CONTEXT_NONE: "none",
    mcp_pb2.INCLUDE_CONTEXT_THIS_SERVER: "thisServer",
    mcp_pb2.INCLUDE_CONTEXT_ALL_SERVERS: "allServers",
}
TOOL_CHOICE = {
    mcp_pb2.TOOL_CHOICE_MODE_AUTO: "auto",
    mcp_pb2.TOOL_CHOICE_MODE_REQUIRED: "required",
    mcp_pb2.TOOL_CHOICE_MODE_NONE: "none",
}
TASK_STATUS = {
    mcp_pb2.TASK_STATUS_WORKING: "working",
    mcp_pb2.TASK_STATUS_INPUT_REQUIRED: "input_required",
    mcp_pb2.TASK_STATUS_COMPLETED: "completed",
    mcp_pb2.TASK_STATUS_FAILED: "failed",
    mcp_pb2.TASK_STATUS_CANCELLED: "cancelled",
}
TASK_SUPPORT = {
    mcp_pb2.TASK_SUPPORT_FORBIDDEN: "forbidden",
    mcp_pb2.TASK_SUPPORT_OPTIONAL: "optional",
    mcp_pb2.TASK_SUPPORT_REQUIRED: "required",
}
TRANSPORT = {
    session_pb2.TRANSPORT_STDIO: "stdio",
    session_pb2.TRANSPORT_STREAMABLE_HTTP: "streamable-http",
    session_pb2.TRANSPORT_SSE: "sse",
}
SESSION_STATE = {
    session_pb2.SESSION_STATE_CONNECTING: "connecting",
    session_pb2.SESSION_STATE_READY: "ready",
    session_pb2.SESSION_STATE_RECONNECTING: "reconnecting",
    session_pb2.SESSION_STATE_CLOSED: "closed",
}
DELIVERY = {host_pb2.DELIVERY_LEGACY_PUSH: "push", host_pb2.DELIVERY_MULTI_ROUND_TRIP: "multi_round_trip"}
OUTCOME = {
    host_pb2.REQUEST_OUTCOME_ANSWERED: "answered",
    host_pb2.REQUEST_OUTCOME_ANSWERED_ELSEWHERE: "answered_elsewhere",
    host_pb2.REQUEST_OUTCOME_CANCELLED_BY_SERVER: "cancelled_by_server",
    host_pb2.REQUEST_OUTCOME_CANCELLED_BY_HOST: "cancelled_by_host",
    host_pb2.REQUEST_OUTCOME_TIMED_OUT: "timed_out",
    host_pb2.REQUEST_OUTCOME_SESSION_CLOSED: "session_closed",
    host_pb2.REQUEST_OUTCOME_CALL_ENDED: "call_ended",
}


def enum_str(table: Mapping[Any, str], value: Any) -> str:
    """MCP's spelling of an enum value; "" for UNSPECIFIED or a value this library does not know."""
    return table.get(value, "")


def enum_int(table: Mapping[Any, str], value: str, what: str) -> Any:
    for k, v in table.items():
        if v == value:
            return k
    raise ValueError(f"unknown {what} {value!r}; expected one of {', '.join(sorted(table.values()))}")


def level_value(level: str) -> Any:
    return enum_int(LEVEL, level.lower(), "logging level")


# --------------------------------------------------------------------------------------------- time


def timestamp(msg: Any, name: str) -> _dt.datetime | None:
    if not msg.HasField(name):
        return None
    ts = getattr(msg, name)
    return _dt.datetime.fromtimestamp(ts.seconds + ts.nanos / 1e9, tz=_dt.UTC)


def seconds(msg: Any, name: str) -> float | None:
    if not msg.HasField(name):
        return None
    d = getattr(msg, name)
    return float(d.seconds + d.nanos / 1e9)


def opt_field(msg: Any, name: str) -> Any:
    """The value of an `optional` scalar field, or None when unset."""
    return getattr(msg, name) if msg.HasField(name) else None


# ------------------------------------------------------------------------------------------ content


def annotations_from(msg: Any) -> Annotations | None:
    if not msg.HasField("annotations"):
        return None
    a = msg.annotations
    return Annotations(
        audience=[ROLE[r] for r in a.audience if r in ROLE],  # type: ignore[misc]
        priority=opt_field(a, "priority"),
        last_modified=a.last_modified,
    )


def annotations_to(a: Annotations | None, target: Any) -> None:
    if a is None:
        return
    t = target.annotations
    t.SetInParent()
    t.audience.extend(enum_int(ROLE, r, "role") for r in a.audience)
    if a.priority is not None:
        t.priority = a.priority
    t.last_modified = a.last_modified


def icons_from(icons: Iterable[Any]) -> list[Icon]:
    return [Icon(src=i.src, mime_type=i.mime_type, sizes=list(i.sizes), theme=enum_str(THEME, i.theme)) for i in icons]  # type: ignore[arg-type]


def resource_contents_from(rc: mcp_pb2.ResourceContents) -> ResourceContents:
    which = rc.WhichOneof("contents")
    return ResourceContents(
        uri=rc.uri,
        mime_type=rc.mime_type,
        text=rc.text if which == "text" else None,
        blob=rc.blob if which == "blob" else None,
        meta=opt_struct(rc, "meta"),
    )


def resource_contents_to(rc: ResourceContents, target: mcp_pb2.ResourceContents) -> None:
    target.uri = rc.uri
    target.mime_type = rc.mime_type
    if rc.blob is not None:
        target.blob = rc.blob
    else:
        target.text = rc.text or ""
    set_struct(target, "meta", rc.meta)


def content_from(block: mcp_pb2.ContentBlock) -> Content:
    """A ContentBlock as a content dataclass."""
    kind = block.WhichOneof("content")
    ann = annotations_from(block)
    meta = opt_struct(block, "meta")
    if kind == "text":
        return TextContent(text=block.text.text, annotations=ann, meta=meta)
    if kind == "image":
        return ImageContent(data=block.image.data, mime_type=block.image.mime_type, annotations=ann, meta=meta)
    if kind == "audio":
        return AudioContent(data=block.audio.data, mime_type=block.audio.mime_type, annotations=ann, meta=meta)
    if kind == "resource_link":
        rl = block.resource_link
        return ResourceLink(
            uri=rl.uri,
            name=rl.name,
            title=rl.title,
            description=rl.description,
            mime_type=rl.mime_type,
            size=opt_field(rl, "size"),
            icons=icons_from(rl.icons),
            annotations=ann,
            meta=meta,
        )
    if kind == "resource":
        return EmbeddedResource(resource=resource_contents_from(block.resource.resource), annotations=ann, meta=meta)
    if kind == "tool_use":
        tu = block.tool_use
        return ToolUseContent(id=tu.id, name=tu.name, input=struct_to_dict(tu.input), annotations=ann, meta=meta)
    if kind == "tool_result":
        tr = block.tool_result
        return ToolResultContent(
            tool_use_id=tr.tool_use_id,
            content=[content_from(c) for c in tr.content],
            structured_content=opt_value(tr, "structured_content"),
            is_error=tr.is_error,
            annotations=ann,
            meta=meta,
        )
    # An empty block or a kind this library does not know yet: keep it as empty text rather than fail.
    return TextContent(text="", annotations=ann, meta=meta)


def content_to(c: Content, target: mcp_pb2.ContentBlock) -> None:
    """Fill target from a content dataclass."""
    if isinstance(c, TextContent):
        target.text.text = c.text
    elif isinstance(c, ImageContent):
        target.image.data = c.data
        target.image.mime_type = c.mime_type
    elif isinstance(c, AudioContent):
        target.audio.data = c.data
        target.audio.mime_type = c.mime_type
    elif isinstance(c, ResourceLink):
        rl = target.resource_link
        rl.uri, rl.name, rl.title, rl.description, rl.mime_type = c.uri, c.name, c.title, c.description, c.mime_type
        if c.size is not None:
            rl.size = c.size
        for i in c.icons:
            rl.icons.add(src=i.src, mime_type=i.mime_type, sizes=i.sizes, theme=enum_int(THEME, i.theme, "theme") if i.theme else 0)
    elif isinstance(c, EmbeddedResource):
        resource_contents_to(c.resource, target.resource.resource)
    elif isinstance(c, ToolUseContent):
        target.tool_use.id = c.id
        target.tool_use.name = c.name
        fill_struct(target.tool_use.input, c.input, "input")
    elif isinstance(c, ToolResultContent):
        tr = target.tool_result
        tr.tool_use_id = c.tool_use_id
        for sub in c.content:
            content_to(sub, tr.content.add())
        set_value(tr, "structured_content", c.structured_content)
        tr.is_error = c.is_error
    else:
        raise TypeError(f"{type(c).__name__} is not a content block (TextContent, ImageContent, ...)")
    annotations_to(c.annotations, target)
    set_struct(target, "meta", c.meta)


# MCP JSON shapes, for handlers that answer with dicts copied from MCP examples and for SamplingRequest.params.


def _annotations_mcp(a: Annotations | None) -> dict[str, Any] | None:
    if a is None:
        return None
    out: dict[str, Any] = {}
    if a.audience:
        out["audience"] = list(a.audience)
    if a.priority is not None:
        out["priority"] = a.priority
    if a.last_modified:
        out["lastModified"] = a.last_modified
    return out


def content_to_mcp(c: Content) -> dict[str, Any]:
    """A content dataclass in MCP's JSON shape (``{"type": "text", "text": ...}``)."""
    out: dict[str, Any] = {"type": c.type}
    if isinstance(c, TextContent):
        out["text"] = c.text
    elif isinstance(c, (ImageContent, AudioContent)):
        out["data"] = base64.b64encode(c.data).decode("ascii")
        out["mimeType"] = c.mime_type
    elif isinstance(c, ResourceLink):
        out["uri"] = c.uri
        out["name"] = c.name
        for key, val in (("title", c.title), ("description", c.description), ("mimeType", c.mime_type)):
            if val:
                out[key] = val
        if c.size is not None:
            out["size"] = c.size
    elif isinstance(c, EmbeddedResource):
        res: dict[str, Any] = {"uri": c.resource.uri}
        if c.resource.mime_type:
            res["mimeType"] = c.resource.mime_type
        if c.resource.blob is not None:
            res["blob"] = base64.b64encode(c.resource.blob).decode("ascii")
        else:
            res["text"] = c.resource.text or ""
        out["resource"] = res
    elif isinstance(c, ToolUseContent):
        out.update(id=c.id, name=c.name, input=c.input)
    elif isinstance(c, ToolResultContent):
        out["toolUseId"] = c.tool_use_id
        out["content"] = [content_to_mcp(x) for x in c.content]
        if c.structured_content is not None:
            out["structuredContent"] = c.structured_content
        if c.is_error:
            out["isError"] = True
    ann = _annotations_mcp(c.annotations)
    if ann:
        out["annotations"] = ann
    if c.meta is not None:
        out["_meta"] = c.meta
    return out


def _b64(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return base64.b64decode(str(value))


def content_from_mcp(d: Any) -> Content:
    """A content block from MCP's JSON shape, a plain string (text), or a content dataclass (returned as is)."""
    if isinstance(d, (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, ToolUseContent, ToolResultContent)):
        return d
    if isinstance(d, str):
        return TextContent(text=d)
    if not isinstance(d, Mapping):
        raise TypeError(f"{type(d).__name__} is not a content block")
    kind = d.get("type", "text")
    ann = None
    if isinstance(d.get("annotations"), Mapping):
        a = d["annotations"]
        ann = Annotations(
            audience=list(a.get("audience", [])), priority=a.get("priority"), last_modified=a.get("lastModified", "")
        )
    meta = d.get("_meta")
    if kind == "text":
        return TextContent(text=str(d.get("text", "")), annotations=ann, meta=meta)
    if kind == "image":
        return ImageContent(data=_b64(d.get("data", "")), mime_type=d.get("mimeType", ""), annotations=ann, meta=meta)
    if kind == "audio":
        return AudioContent(data=_b64(d.get("data", "")), mime_type=d.get("mimeType", ""), annotations=ann, meta=meta)
    if kind == "resource_link":
        return ResourceLink(
            uri=d["uri"],
            name=d.get("name", ""),
            title=d.get("title", ""),
            description=d.get("description", ""),
            mime_type=d.get("mimeType", ""),
            size=d.get("size"),
            annotations=ann,
            meta=meta,
        )
    if kind == "resource":
        r = d["resource"]
        return EmbeddedResource(
            resource=ResourceContents(
                uri=r["uri"],
                mime_type=r.get("mimeType", ""),
                text=r.get("text"),
                blob=_b64(r["blob"]) if "blob" in r else None,
            ),
            annotations=ann,
            meta=meta,
        )
    if kind == "tool_use":
        return ToolUseContent(id=d["id"], name=d["name"], input=dict(d.get("input", {})), annotations=ann, meta=meta)
    if kind == "tool_result":
        return ToolResultContent(
            tool_use_id=d["toolUseId"],
            content=[content_from_mcp(x) for x in d.get("content", [])],
            structured_content=d.get("structuredContent"),
            is_error=bool(d.get("isError", False)),
            annotations=ann,
            meta=meta,
        )
    raise ValueError(f"unknown content type {kind!r}")


# ------------------------------------------------------------------------------------- results & lists


def task_from(t: mcp_pb2.Task) -> Task:
    return Task(
        task_id=t.task_id,
        status=enum_str(TASK_STATUS, t.status),
        status_message=t.status_message,
        created=timestamp(t, "create_time"),
        last_updated=timestamp(t, "last_update_time"),
        ttl=seconds(t, "ttl"),
        poll_interval=seconds(t, "poll_interval"),
        meta=opt_struct(t, "meta"),
    )


def call_tool_result_from(r: mcp_pb2.CallToolResult, call_id: str = "") -> CallToolResult:
    return CallToolResult(
        content=[content_from(c) for c in r.content],
        structured_content=opt_value(r, "structured_content"),
        is_error=r.is_error,
        meta=opt_struct(r, "meta"),
        task=task_from(r.task) if r.HasField("task") else None,
        call_id=call_id,
    )


def tool_from(t: mcp_pb2.Tool) -> Tool:
    ann = None
    if t.HasField("annotations"):
        a = t.annotations
        ann = ToolAnnotations(
            title=a.title,
            read_only_hint=opt_field(a, "read_only_hint"),
            destructive_hint=opt_field(a, "destructive_hint"),
            idempotent_hint=opt_field(a, "idempotent_hint"),
            open_world_hint=opt_field(a, "open_world_hint"),
        )
    return Tool(
        name=t.name,
        title=t.title,
        description=t.description,
        input_schema=struct_to_dict(t.input_schema),
        output_schema=opt_struct(t, "output_schema"),
        annotations=ann,
        icons=icons_from(t.icons),
        task_support=enum_str(TASK_SUPPORT, t.execution.task_support) if t.HasField("execution") else "",  # type: ignore[arg-type]
        meta=opt_struct(t, "meta"),
    )


def tool_to(t: Tool, target: mcp_pb2.Tool) -> None:
    target.name, target.title, target.description = t.name, t.title, t.description
    fill_struct(target.input_schema, t.input_schema or {"type": "object"}, "input_schema")
    set_struct(target, "output_schema", t.output_schema)
    set_struct(target, "meta", t.meta)


def resource_from(r: mcp_pb2.Resource) -> Resource:
    return Resource(
        uri=r.uri,
        name=r.name,
        title=r.title,
        description=r.description,
        mime_type=r.mime_type,
        size=opt_field(r, "size"),
        annotations=annotations_from(r),
        icons=icons_from(r.icons),
        meta=opt_struct(r, "meta"),
    )


def template_from(r: mcp_pb2.ResourceTemplate) -> ResourceTemplate:
    return ResourceTemplate(
        uri_template=r.uri_template,
        name=r.name,
        title=r.title,
        description=r.description,
        mime_type=r.mime_type,
        annotations=annotations_from(r),
        icons=icons_from(r.icons),
        meta=opt_struct(r, "meta"),
    )


def prompt_from(p: mcp_pb2.Prompt) -> Prompt:
    return Prompt(
        name=p.name,
        title=p.title,
        description=p.description,
        arguments=[
            PromptArgument(name=a.name, title=a.title, description=a.description, required=a.required)
            for a in p.arguments
        ],
        icons=icons_from(p.icons),
        meta=opt_struct(p, "meta"),
    )


def get_prompt_result_from(r: Any) -> GetPromptResult:
    return GetPromptResult(
        description=r.description,
        messages=[PromptMessage(role=enum_str(ROLE, m.role) or "user", content=content_from(m.content)) for m in r.messages],  # type: ignore[arg-type]
        meta=opt_struct(r, "meta"),
    )


def read_resource_result_from(r: Any) -> ReadResourceResult:
    return ReadResourceResult(contents=[resource_contents_from(c) for c in r.contents], meta=opt_struct(r, "meta"))


def completion_from(r: Any) -> Completion:
    return Completion(values=list(r.values), total=opt_field(r, "total"), has_more=r.has_more)


def root_from(r: mcp_pb2.Root) -> Root:
    return Root(uri=r.uri, name=r.name, meta=opt_struct(r, "meta"))


def coerce_root(r: Any) -> Root:
    """A Root from a Root, a ``{"uri": ..., "name": ...}`` dict, or a URI string."""
    if isinstance(r, Root):
        return r
    if isinstance(r, str):
        return Root(uri=r)
    if isinstance(r, Mapping):
        return Root(uri=str(r["uri"]), name=str(r.get("name", "")), meta=r.get("_meta"))
    raise TypeError(f"{type(r).__name__} is not a root (Root, dict with 'uri', or str)")


def root_to(r: Root, target: mcp_pb2.Root) -> None:
    target.uri = r.uri
    target.name = r.name
    set_struct(target, "meta", r.meta)


def implementation_from(i: mcp_pb2.Implementation) -> Implementation:
    return Implementation(
        name=i.name,
        title=i.title,
        version=i.version,
        website_url=i.website_url,
        description=i.description,
        icons=icons_from(i.icons),
    )


def server_capabilities_to_mcp(c: mcp_pb2.ServerCapabilities) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if c.HasField("tools"):
        out["tools"] = {"listChanged": c.tools.list_changed}
    if c.HasField("prompts"):
        out["prompts"] = {"listChanged": c.prompts.list_changed}
    if c.HasField("resources"):
        out["resources"] = {"listChanged": c.resources.list_changed, "subscribe": c.resources.subscribe}
    if c.HasField("logging"):
        out["logging"] = {}
    if c.HasField("completions"):
        out["completions"] = {}
    if c.HasField("tasks"):
        out["tasks"] = {"list": c.tasks.list, "cancel": c.tasks.cancel, "toolCall": c.tasks.tool_call}
    if c.HasField("experimental"):
        out["experimental"] = struct_to_dict(c.experimental)
    if c.HasField("extensions"):
        out["extensions"] = struct_to_dict(c.extensions)
    return out


def host_capabilities_to_mcp(c: mcp_pb2.HostCapabilities) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if c.HasField("sampling"):
        s: dict[str, Any] = {}
        if c.sampling.tools:
            s["tools"] = {}
        if c.sampling.context:
            s["context"] = {}
        out["sampling"] = s
    if c.HasField("elicitation"):
        e: dict[str, Any] = {}
        if c.elicitation.form:
            e["form"] = {}
        if c.elicitation.url:
            e["url"] = {}
        out["elicitation"] = e
    if c.HasField("roots"):
        out["roots"] = {"listChanged": c.roots.list_changed}
    return out


def session_from(s: session_pb2.Session) -> SessionInfo:
    return SessionInfo(
        session_id=s.session_id,
        server=s.server,
        state=enum_str(SESSION_STATE, s.state),
        state_reason=s.state_reason,
        protocol_version=s.protocol_version,
        server_info=implementation_from(s.server_info),
        server_capabilities=server_capabilities_to_mcp(s.server_capabilities),
        instructions=s.instructions,
        created=timestamp(s, "create_time"),
        host_capabilities=host_capabilities_to_mcp(s.host_capabilities),
        roots=[root_from(r) for r in s.roots],
        restarts=s.restarts,
    )


def server_from(s: session_pb2.UpstreamServer) -> ServerInfo:
    return ServerInfo(
        name=s.name,
        transport=enum_str(TRANSPORT, s.transport),
        description=s.description,
        protocol_version=s.protocol_version,
    )


AUTHENTICATION = {
    bridge_service_pb2.AUTHENTICATION_METHOD_NONE: "none",
    bridge_service_pb2.AUTHENTICATION_METHOD_TOKEN: "token",
    bridge_service_pb2.AUTHENTICATION_METHOD_OIDC: "oidc",
    bridge_service_pb2.AUTHENTICATION_METHOD_MTLS: "mtls",
}


def identity_from(r: bridge_service_pb2.GetIdentityResponse) -> Identity:
    return Identity(
        principal=r.principal,
        groups=list(r.groups),
        authentication=enum_str(AUTHENTICATION, r.authentication),
        approver=r.approver,
        approves=[ApproverScope(server=a.server, tools=list(a.tools), own_calls=a.own_calls) for a in r.approves],
    )


def progress_from(p: mcp_pb2.ProgressNotification, call_id: str = "") -> Progress:
    return Progress(
        progress=p.progress,
        total=opt_field(p, "total"),
        message=p.message,
        call_id=p.call_id or call_id,
        progress_token=opt_value(p, "progress_token"),
    )


def log_from(m: mcp_pb2.LoggingMessage, call_id: str = "") -> LogMessage:
    return LogMessage(
        level=enum_str(LEVEL, m.level), data=opt_value(m, "data"), logger=m.logger, call_id=m.call_id or call_id
    )


def request_ended_from(r: host_pb2.RequestEnded) -> RequestEnded:
    return RequestEnded(request_id=r.request_id, outcome=enum_str(OUTCOME, r.outcome), detail=r.detail)


TEXT_WARNING_KIND = {
    host_pb2.TEXT_WARNING_KIND_BIDI_CONTROL: "bidi_control",
    host_pb2.TEXT_WARNING_KIND_INVISIBLE: "invisible",
    host_pb2.TEXT_WARNING_KIND_CONTROL: "control",
    host_pb2.TEXT_WARNING_KIND_MIXED_SCRIPT: "mixed_script",
    host_pb2.TEXT_WARNING_KIND_KEY_COLLISION: "key_collision",
}


def warnings_from(ws: Any) -> list[TextWarning]:
    return [
        TextWarning(
            path=w.path,
            kind=enum_str(TEXT_WARNING_KIND, w.kind),
            code_points=list(w.code_points),
            in_key=w.in_key,
            detail=w.detail,
        )
        for w in ws
    ]


def url_destination_from(sr: host_pb2.ServerRequest) -> UrlDestination | None:
    if not sr.HasField("url_destination"):
        return None
    d = sr.url_destination
    return UrlDestination(scheme=d.scheme, host=d.host, registrable_domain=d.registrable_domain, loopback=d.loopback)


def approvers_from(a: host_pb2.Approvers) -> Approvers:
    return Approvers(principals=list(a.principals), groups=list(a.groups), allow_self=a.allow_self)


def approval_pending_from(p: host_pb2.ApprovalPending, call_id: str) -> ApprovalPending:
    return ApprovalPending(
        request_id=p.request_id,
        call_id=call_id,
        server_name=p.server_name,
        tool=p.tool,
        rule=p.rule,
        approvers=approvers_from(p.approvers),
        expires=timestamp(p, "expire_time"),
        created=timestamp(p, "create_time"),
        arguments_sha256=p.arguments_sha256,
        warnings=warnings_from(p.warnings),
    )


# ---------------------------------------------------------------------------------------- notifications


def _task_mcp(t: mcp_pb2.Task) -> dict[str, Any]:
    out: dict[str, Any] = {"taskId": t.task_id, "status": enum_str(TASK_STATUS, t.status)}
    if t.status_message:
        out["statusMessage"] = t.status_message
    for key, name in (("createdAt", "create_time"), ("lastUpdatedAt", "last_update_time")):
        ts = timestamp(t, name)
        if ts is not None:
            out[key] = ts.isoformat().replace("+00:00", "Z")
    for key, name in (("ttl", "ttl"), ("pollInterval", "poll_interval")):
        secs = seconds(t, name)
        if secs is not None:
            out[key] = int(secs * 1000)
    meta = opt_struct(t, "meta")
    if meta is not None:
        out["_meta"] = meta
    return out


def event_notification(ev: host_pb2.Event) -> tuple[str, dict[str, Any]] | None:
    """The (method, params) a handler's ``handle_notification`` receives for an event other than a request.

    MCP notifications keep MCP's method names and params shape. Bridge events use ``bridge/...`` methods. Every
    params dict also carries ``sessionId`` (and ``callId`` for progress and logs of a call).
    """
    kind = ev.WhichOneof("payload")
    params: dict[str, Any]
    if kind == "progress":
        p = ev.progress
        params = {"progressToken": opt_value(p, "progress_token"), "progress": p.progress}
        if p.HasField("total"):
            params["total"] = p.total
        if p.message:
            params["message"] = p.message
        if p.call_id:
            params["callId"] = p.call_id
        method = "notifications/progress"
    elif kind == "log":
        m = ev.log
        params = {"level": enum_str(LEVEL, m.level), "data": opt_value(m, "data")}
        if m.logger:
            params["logger"] = m.logger
        if m.call_id:
            params["callId"] = m.call_id
        method = "notifications/message"
    elif kind == "tools_list_changed":
        method, params = "notifications/tools/list_changed", {}
    elif kind == "prompts_list_changed":
        method, params = "notifications/prompts/list_changed", {}
    elif kind == "resources_list_changed":
        method, params = "notifications/resources/list_changed", {}
    elif kind == "resource_updated":
        method, params = "notifications/resources/updated", {"uri": ev.resource_updated.uri}
    elif kind == "elicitation_complete":
        method, params = "notifications/elicitation/complete", {"elicitationId": ev.elicitation_complete.elicitation_id}
    elif kind == "task_status":
        method, params = "notifications/tasks/status", _task_mcp(ev.task_status)
    elif kind == "cancelled":
        params = {"requestId": ev.cancelled.request_id}
        if ev.cancelled.reason:
            params["reason"] = ev.cancelled.reason
        method = "notifications/cancelled"
    elif kind == "request_ended":
        r = ev.request_ended
        method = "bridge/requestEnded"
        params = {"requestId": r.request_id, "outcome": enum_str(OUTCOME, r.outcome), "detail": r.detail}
    elif kind == "session_state":
        s = ev.session_state
        method = "bridge/sessionState"
        params = {"state": enum_str(SESSION_STATE, s.state), "reason": s.reason, "restarts": s.restarts}
    elif kind == "events_dropped":
        method, params = "bridge/eventsDropped", {"count": ev.events_dropped.count}
    else:
        return None
    params["sessionId"] = ev.session_id
    return method, params
