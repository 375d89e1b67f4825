"""Plain Python values for what MCP servers send and what hosts answer.

Every JSON value (tool arguments, JSON Schemas, structured content, ``_meta``) is a plain ``dict``/``list``/
``str``/``int``/``float``/``bool``/``None``; the ``google.protobuf.Struct`` and ``Value`` wire types never show.
MCP's string unions are plain strings with MCP's spelling (``"user"``, ``"assistant"``, ``"info"``,
``"accept"``). Content blocks are small dataclasses with a ``type`` attribute equal to MCP's discriminator
(``"text"``, ``"image"``, ``"audio"``, ``"resource_link"``, ``"resource"``, ``"tool_use"``, ``"tool_result"``).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Union

JSON = Any
"""A JSON value as Python: dict, list, str, int, float, bool or None."""

JSONObject = dict[str, Any]
"""A JSON object as a Python dict."""

Role = Literal["user", "assistant"]
LoggingLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
ElicitAction = Literal["accept", "decline", "cancel"]


# --------------------------------------------------------------------------------------------------- content


@dataclass
class Annotations:
    """Display and audience hints of a content block or resource (MCP ``Annotations``)."""

    audience: list[Role] = field(default_factory=list)
    priority: float | None = None
    last_modified: str = ""


@dataclass
class Icon:
    """An image a client may show for a tool, resource, prompt or implementation (MCP ``Icon``)."""

    src: str
    mime_type: str = ""
    sizes: list[str] = field(default_factory=list)
    theme: Literal["", "light", "dark"] = ""


@dataclass
class TextContent:
    """Text content (MCP ``type: "text"``)."""

    text: str
    annotations: Annotations | None = None
    meta: JSONObject | None = None
    type: ClassVar[str] = "text"


@dataclass
class ImageContent:
    """An image (MCP ``type: "image"``); ``data`` holds the decoded bytes."""

    data: bytes
    mime_type: str
    annotations: Annotations | None = None
    meta: JSONObject | None = None
    type: ClassVar[str] = "image"


@dataclass
class AudioContent:
    """An audio clip (MCP ``type: "audio"``); ``data`` holds the decoded bytes."""

    data: bytes
    mime_type: str
    annotations: Annotations | None = None
    meta: JSONObject | None = None
    type: ClassVar[str] = "audio"


@dataclass
class ResourceLink:
    """A link to a resource the client may read with ``read_resource`` (MCP ``type: "resource_link"``)."""

    uri: str
    name: str = ""
    title: str = ""
    description: str = ""
    mime_type: str = ""
    size: int | None = None
    icons: list[Icon] = field(default_factory=list)
    annotations: Annotations | None = None
    meta: JSONObject | None = None
    type: ClassVar[str] = "resource_link"


@dataclass
class ResourceContents:
    """The contents of one resource: ``text`` for text resources, ``blob`` (decoded bytes) for binary ones."""

    uri: str
    mime_type: str = ""
    text: str | None = None
    blob: bytes | None = None
    meta: JSONObject | None = None


@dataclass
class EmbeddedResource:
    """The contents of a resource, inline (MCP ``type: "resource"``)."""

    resource: ResourceContents
    annotations: Annotations | None = None
    meta: JSONObject | None = None
    type: ClassVar[str] = "resource"


@dataclass
class ToolUseContent:
    """A model's request to call a tool, in sampling (MCP ``type: "tool_use"``)."""

    id: str
    name: str
    input: JSONObject = field(default_factory=dict)
    annotations: Annotations | None = None
    meta: JSONObject | None = None
    type: ClassVar[str] = "tool_use"


@dataclass
class ToolResultContent:
    """The result of a tool use, fed back to a model in sampling (MCP ``type: "tool_result"``)."""

    tool_use_id: str
    content: list[Content] = field(default_factory=list)
    structured_content: JSON = None
    is_error: bool = False
    annotations: Annotations | None = None
    meta: JSONObject | None = None
    type: ClassVar[str] = "tool_result"


Content = Union[
    TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, ToolUseContent, ToolResultContent
]
"""One MCP content block."""


def _joined_text(content: list[Content]) -> str:
    return "\n".join(c.text for c in content if isinstance(c, TextContent))


# --------------------------------------------------------------------------------------------- tools & co


@dataclass
class ToolAnnotations:
    """Hints about a tool's behaviour (MCP ``ToolAnnotations``); ``None`` means the server did not say."""

    title: str = ""
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    idempotent_hint: bool | None = None
    open_world_hint: bool | None = None


@dataclass
class Tool:
    """A tool an MCP server offers (MCP ``Tool``)."""

    name: str
    title: str = ""
    description: str = ""
    input_schema: JSONObject = field(default_factory=dict)
    output_schema: JSONObject | None = None
    annotations: ToolAnnotations | None = None
    icons: list[Icon] = field(default_factory=list)
    task_support: Literal["", "forbidden", "optional", "required"] = ""
    meta: JSONObject | None = None


@dataclass
class Task:
    """The state of a call an MCP server runs as a task (MCP ``Task``)."""

    task_id: str
    status: str = ""
    """One of ``working``, ``input_required``, ``completed``, ``failed``, ``cancelled``."""
    status_message: str = ""
    created: _dt.datetime | None = None
    last_updated: _dt.datetime | None = None
    ttl: float | None = None
    """Seconds the server keeps the task after creation; ``None`` means unlimited."""
    poll_interval: float | None = None
    """Suggested seconds between polls, if the server gave one."""
    meta: JSONObject | None = None


@dataclass
class CallToolResult:
    """The result of a tool call (MCP ``CallToolResult``).

    A tool that fails is not an exception: ``is_error`` is set and ``content`` says what went wrong, for the
    model to read. Protocol failures raise :class:`mcp_bridge.BridgeError` instead.
    """

    content: list[Content] = field(default_factory=list)
    structured_content: JSON = None
    is_error: bool = False
    meta: JSONObject | None = None
    task: Task | None = None
    call_id: str = ""

    @property
    def text(self) -> str:
        """The text of all text content blocks, joined by newlines."""
        return _joined_text(self.content)


@dataclass
class Resource:
    """A resource an MCP server offers (MCP ``Resource``)."""

    uri: str
    name: str = ""
    title: str = ""
    description: str = ""
    mime_type: str = ""
    size: int | None = None
    annotations: Annotations | None = None
    icons: list[Icon] = field(default_factory=list)
    meta: JSONObject | None = None


@dataclass
class ResourceTemplate:
    """A parameterized family of resources (MCP ``ResourceTemplate``)."""

    uri_template: str
    name: str = ""
    title: str = ""
    description: str = ""
    mime_type: str = ""
    annotations: Annotations | None = None
    icons: list[Icon] = field(default_factory=list)
    meta: JSONObject | None = None


@dataclass
class ReadResourceResult:
    """The result of ``read_resource`` (MCP ``ReadResourceResult``)."""

    contents: list[ResourceContents] = field(default_factory=list)
    meta: JSONObject | None = None

    @property
    def text(self) -> str:
        """The text of all text contents, joined by newlines."""
        return "\n".join(c.text for c in self.contents if c.text is not None)


@dataclass
class PromptArgument:
    """One argument a prompt accepts (MCP ``PromptArgument``)."""

    name: str
    title: str = ""
    description: str = ""
    required: bool = False


@dataclass
class Prompt:
    """A prompt template an MCP server offers (MCP ``Prompt``)."""

    name: str
    title: str = ""
    description: str = ""
    arguments: list[PromptArgument] = field(default_factory=list)
    icons: list[Icon] = field(default_factory=list)
    meta: JSONObject | None = None


@dataclass
class PromptMessage:
    """One message of a rendered prompt (MCP ``PromptMessage``)."""

    role: Role
    content: Content


@dataclass
class GetPromptResult:
    """A rendered prompt (MCP ``GetPromptResult``)."""

    description: str = ""
    messages: list[PromptMessage] = field(default_factory=list)
    meta: JSONObject | None = None


@dataclass
class Completion:
    """Completion suggestions for an argument (MCP ``CompleteResult.completion``)."""

    values: list[str] = field(default_factory=list)
    total: int | None = None
    has_more: bool = False


@dataclass
class Root:
    """A directory or file the host exposes to servers (MCP ``Root``)."""

    uri: str
    name: str = ""
    meta: JSONObject | None = None


# ------------------------------------------------------------------------------------------------ sessions


@dataclass
class Implementation:
    """An MCP client or server program (MCP ``Implementation``), e.g. a session's ``server_info``."""

    name: str = ""
    title: str = ""
    version: str = ""
    website_url: str = ""
    description: str = ""
    icons: list[Icon] = field(default_factory=list)


@dataclass
class ServerInfo:
    """An upstream MCP server the operator configured (``list_servers``)."""

    name: str
    transport: str = ""
    """``stdio``, ``streamable-http`` or ``sse``."""
    description: str = ""
    protocol_version: str = ""


@dataclass
class ApproverScope:
    """A server whose approval requests the caller may decide (``Identity.approves``)."""

    server: str
    tools: list[str] = field(default_factory=list)
    """The tool name patterns whose calls need approval there."""
    own_calls: bool = False
    """Whether the caller may decide approvals of its own calls (the server's ``approvers.allowSelf``)."""


@dataclass
class Identity:
    """Who the caller is, as the bridge sees it (``get_identity``)."""

    principal: str
    groups: list[str] = field(default_factory=list)
    authentication: str = ""
    """``none``, ``token``, ``oidc`` or ``mtls``."""
    approver: bool = False
    approves: list[ApproverScope] = field(default_factory=list)


@dataclass
class SessionInfo:
    """A session's state as the bridge reports it.

    ``state`` is ``connecting``, ``ready``, ``reconnecting`` or ``closed``. ``server_capabilities`` and
    ``host_capabilities`` are dicts in MCP's JSON shape (e.g. ``{"tools": {"listChanged": True}}``).
    """

    session_id: str
    server: str = ""
    state: str = ""
    state_reason: str = ""
    protocol_version: str = ""
    server_info: Implementation = field(default_factory=Implementation)
    server_capabilities: JSONObject = field(default_factory=dict)
    instructions: str = ""
    created: _dt.datetime | None = None
    host_capabilities: JSONObject = field(default_factory=dict)
    roots: list[Root] = field(default_factory=list)
    restarts: int = 0


# ------------------------------------------------------------------------------------- streaming & events


@dataclass
class Progress:
    """Progress of a call (MCP ``notifications/progress``)."""

    progress: float
    total: float | None = None
    message: str = ""
    call_id: str = ""
    progress_token: JSON = None


@dataclass
class LogMessage:
    """A log message from the server (MCP ``notifications/message``)."""

    level: str
    data: JSON = None
    logger: str = ""
    call_id: str = ""


@dataclass
class RequestNotice:
    """A server request (sampling, elicitation or roots) seen while a call streams.

    It is informational in ``call_tool_stream``: the session's handler answers it (or
    ``Session.respond``). ``call_id`` is the streamed call's id when the bridge knows the call caused it (a
    2026-07-28 input request, or a push on the call's own HTTP response stream); it is empty for the session's
    requests without an origin (e.g. a legacy push over stdio or SSE), which a streaming call also sees.
    """

    request_id: str
    kind: Literal["sampling", "elicitation", "roots"]
    call_id: str = ""


@dataclass
class RequestEnded:
    """A server request is no longer pending; ``outcome`` is e.g. ``answered``, ``timed_out``, ``cancelled_by_server``."""

    request_id: str
    outcome: str
    detail: str = ""


@dataclass(frozen=True)
class TextWarning:
    """Characters in a request's text a person may not see as they are, found by the bridge
    (docs/adr/0091-untrusted-text-and-approval-visibility.md). Show it with the request; ask for a second
    confirmation before approving a request that has any."""

    path: str
    """Where, as a path into the request's JSON form, e.g. ``approval.arguments.amount`` or
    ``approval.arguments["to\\u200b"]``."""
    kind: str
    """``bidi_control``, ``invisible``, ``control``, ``mixed_script`` or ``key_collision``."""
    code_points: list[str] = field(default_factory=list)
    """The characters found, as ``"U+202E"``."""
    in_key: bool = False
    """The finding is in the object key the path ends with, not its value."""
    detail: str = ""


@dataclass(frozen=True)
class UrlDestination:
    """Where a URL a request asks a person to open leads: show ``registrable_domain`` first."""

    scheme: str
    host: str
    registrable_domain: str = ""
    loopback: bool = False


@dataclass(frozen=True)
class Approvers:
    """Who may decide a server's approval requests."""

    principals: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    allow_self: bool = False


@dataclass
class ApprovalPending:
    """A streamed call waits for approval (the server's policy names its tool): which rule, who may approve,
    when it expires. Nothing was sent upstream yet; a :class:`RequestEnded` with the same ``request_id``
    follows, then the result, or the call raises :class:`~mcp_bridge.ApprovalDeniedError` /
    :class:`~mcp_bridge.ApprovalExpiredError`."""

    request_id: str
    call_id: str
    server_name: str = ""
    tool: str = ""
    rule: str = ""
    approvers: Approvers = field(default_factory=Approvers)
    expires: _dt.datetime | None = None
    created: _dt.datetime | None = None
    arguments_sha256: str = ""
    warnings: list[TextWarning] = field(default_factory=list)


StreamEvent = Union[Progress, LogMessage, RequestNotice, RequestEnded, ApprovalPending, CallToolResult]
"""What ``call_tool_stream`` yields: progress, logs, request notices and approval notices, then the
``CallToolResult`` last."""
