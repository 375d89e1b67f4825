"""The host side of MCP: answering what servers ask of a client.

Subclass :class:`Handler` and override the methods for what your host can do. Only the methods you override
are declared as client capabilities when the session is created, so a server never asks for something your
host does not answer (the bridge answers those ``-32601 Method not found`` itself)::

    class MyHost(Handler):
        def handle_sampling(self, request):
            reply = my_llm(request.messages, max_tokens=request.max_tokens)
            return SamplingResult(content=TextContent(reply), model="my-model")

        def handle_elicitation(self, request):
            return accept({"name": "Ada"}) if ask_user(request.message) else decline()

A method may answer by

* returning the answer;
* returning a ``concurrent.futures.Future`` or an awaitable (``async def`` methods too) that resolves to it;
* returning ``None`` and calling ``request.respond(...)`` later, from any thread or task -- a person may take
  minutes, and nothing waits for them meanwhile (other requests, calls and sessions go on);
* raising :class:`~mcp_bridge.McpError` to answer with a JSON-RPC error. Any other exception is logged and
  answered as ``-32603 Internal error``; it never breaks the host stream.
"""

from __future__ import annotations

import concurrent.futures
import datetime as _dt
import logging
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, TypeGuard, TypeVar, Union

from . import _convert as cv
from ._gen.mcpbridge.v1 import host_pb2, mcp_pb2
from .errors import INTERNAL_ERROR, METHOD_NOT_FOUND, McpError
from .types import JSON, Approvers, Content, JSONObject, Role, Root, TextWarning, Tool, UrlDestination

log = logging.getLogger("mcp_bridge")

T = TypeVar("T")


# ------------------------------------------------------------------------------------------ requests


class _Responder(Protocol):
    def send_answer(self, request: ServerRequest, answer: host_pb2.HostAnswer) -> bool: ...

    def send_cancel(self, request: ServerRequest, reason: str) -> bool: ...


@dataclass
class SamplingMessage:
    """One message of a sampling conversation (MCP ``SamplingMessage``)."""

    role: Role
    content: list[Content] = field(default_factory=list)
    meta: JSONObject | None = None

    @property
    def text(self) -> str:
        """The text of the message's text blocks, joined by newlines."""
        return "\n".join(getattr(c, "text", "") for c in self.content if c.type == "text")


@dataclass
class ModelPreferences:
    """A server's advisory model preferences (MCP ``ModelPreferences``)."""

    hints: list[str] = field(default_factory=list)
    cost_priority: float | None = None
    speed_priority: float | None = None
    intelligence_priority: float | None = None


@dataclass(kw_only=True)
class ServerRequest:
    """A request an upstream MCP server made of the host, parked by the bridge until it is answered.

    Answer it by returning from the handler method, or later with :meth:`respond`, :meth:`respond_error` or
    :meth:`cancel` (thread-safe; each returns False if the request was already answered or ended).
    """

    request_id: str
    """The bridge-wide id of the request."""
    session_id: str
    """The session whose server asked."""
    origin_call_id: str = ""
    """The ``call_id`` of the host call (call_tool, get_prompt, read_resource) that caused the request, where the
    bridge knows it (a 2026-07-28 input request, or a push on the call's own HTTP response stream); empty for a
    request of the session, such as a legacy push over stdio or SSE."""
    origin_method: str = ""
    """MCP method of that call, e.g. ``tools/call``."""
    origin_name: str = ""
    """Tool or prompt name, or resource URI, of that call."""
    delivery: str = ""
    """``push`` (a JSON-RPC request, handshake era) or ``multi_round_trip`` (2026-07-28 input request)."""
    input_key: str = ""
    deadline: _dt.datetime | None = None
    """When the bridge stops waiting and applies its default answer."""
    created: _dt.datetime | None = None
    trace_context: dict[str, str] = field(default_factory=dict)
    """W3C trace context of the request (``traceparent``, ``tracestate``, ``baggage``): the bridge's span of
    it, or the originating call's context. While a handler method runs it is the current OpenTelemetry
    context (when OpenTelemetry is installed), so the spans the handler starts continue the trace."""
    warnings: list[TextWarning] = field(default_factory=list)
    """What the bridge found in the request's text that a person may not see as it is (bidi controls, invisible
    characters, mixed scripts, keys that collide): show them with the request, and ask for a second
    confirmation before approving (docs/adr/0091-untrusted-text-and-approval-visibility.md)."""
    url_destination: UrlDestination | None = None
    """Where the URL of a URL elicitation or an authorization request leads: show its registrable domain
    first."""

    kind: ClassVar[str] = ""
    _responder: _Responder | None = field(default=None, repr=False, compare=False)

    def _answer(self, value: Any) -> host_pb2.HostAnswer:
        raise NotImplementedError

    def respond(self, answer: Any) -> bool:
        """Answer the request. ``answer`` is what the handler method could have returned.

        Raises TypeError or ValueError if ``answer`` is not a valid answer of this request's kind.
        """
        proto = self._answer(answer)
        if self._responder is None:
            raise RuntimeError("this request is not attached to a host stream")
        return self._responder.send_answer(self, proto)

    def respond_error(self, code: int, message: str, data: JSON = None) -> bool:
        """Answer the request with a JSON-RPC error, e.g. ``respond_error(-1, "User rejected sampling")``."""
        if self._responder is None:
            raise RuntimeError("this request is not attached to a host stream")
        return self._responder.send_answer(self, error_answer(code, message, data))

    def cancel(self, reason: str = "") -> bool:
        """Decline to answer: the bridge answers the server as if a user dismissed the request."""
        if self._responder is None:
            raise RuntimeError("this request is not attached to a host stream")
        return self._responder.send_cancel(self, reason)


@dataclass(kw_only=True)
class SamplingRequest(ServerRequest):
    """A server's request that the host run an LLM completion (MCP ``sampling/createMessage``)."""

    messages: list[SamplingMessage] = field(default_factory=list)
    max_tokens: int = 0
    system_prompt: str = ""
    temperature: float | None = None
    stop_sequences: list[str] = field(default_factory=list)
    model_preferences: ModelPreferences | None = None
    include_context: str = ""
    """``none``, ``thisServer``, ``allServers``, or ``""`` if the server did not say."""
    metadata: JSONObject | None = None
    tools: list[Tool] = field(default_factory=list)
    tool_choice: str = ""
    """``auto``, ``required``, ``none``, or ``""`` if the server did not say."""
    meta: JSONObject | None = None

    kind: ClassVar[str] = "sampling"

    @property
    def params(self) -> JSONObject:
        """The request's params in MCP's JSON shape (``messages``, ``maxTokens``, ``systemPrompt``, ...)."""
        out: JSONObject = {
            "messages": [
                {
                    "role": m.role,
                    "content": cv.content_to_mcp(m.content[0]) if len(m.content) == 1 else [cv.content_to_mcp(c) for c in m.content],
                }
                for m in self.messages
            ],
            "maxTokens": self.max_tokens,
        }
        if self.system_prompt:
            out["systemPrompt"] = self.system_prompt
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.stop_sequences:
            out["stopSequences"] = list(self.stop_sequences)
        if self.include_context:
            out["includeContext"] = self.include_context
        if self.model_preferences is not None:
            mp = self.model_preferences
            prefs: JSONObject = {"hints": [{"name": h} for h in mp.hints]}
            for key, val in (
                ("costPriority", mp.cost_priority),
                ("speedPriority", mp.speed_priority),
                ("intelligencePriority", mp.intelligence_priority),
            ):
                if val is not None:
                    prefs[key] = val
            out["modelPreferences"] = prefs
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.tools:
            out["tools"] = [
                {"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in self.tools
            ]
        if self.tool_choice:
            out["toolChoice"] = {"mode": self.tool_choice}
        if self.meta is not None:
            out["_meta"] = self.meta
        return out

    def _answer(self, value: Any) -> host_pb2.HostAnswer:
        return sampling_answer(value)


@dataclass(kw_only=True)
class ElicitationRequest(ServerRequest):
    """A server's request that the host ask the user for input (MCP ``elicitation/create``).

    In ``form`` mode, ``requested_schema`` is a flat JSON Schema object of the values asked for; in ``url``
    mode the user should open ``url``.
    """

    mode: Literal["form", "url"] = "form"
    message: str = ""
    requested_schema: JSONObject = field(default_factory=dict)
    url: str = ""
    elicitation_id: str = ""
    meta: JSONObject | None = None

    kind: ClassVar[str] = "elicitation"

    @property
    def params(self) -> JSONObject:
        """The request's params in MCP's JSON shape."""
        out: JSONObject = {"mode": self.mode, "message": self.message}
        if self.mode == "url":
            out["url"] = self.url
            out["elicitationId"] = self.elicitation_id
        else:
            out["requestedSchema"] = self.requested_schema
        if self.meta is not None:
            out["_meta"] = self.meta
        return out

    def _answer(self, value: Any) -> host_pb2.HostAnswer:
        return elicitation_answer(value)


@dataclass(kw_only=True)
class RootsRequest(ServerRequest):
    """A server's request for the host's roots (MCP ``roots/list``)."""

    meta: JSONObject | None = None

    kind: ClassVar[str] = "roots"

    def _answer(self, value: Any) -> host_pb2.HostAnswer:
        return roots_answer(value)


@dataclass(kw_only=True)
class AuthorizationRequest(ServerRequest):
    """The bridge's own request: an upstream server requires OAuth and a person must authorize the bridge.

    Show or open ``authorization_url``; after sign-in and consent the authorization server redirects the browser
    to a URL starting with ``redirect_url``. Answer with that full URL (a ``str``); the bridge checks ``state`` and
    ``iss``, exchanges the code, and what needed the authorization goes on. Raised when a call needs more scopes
    (step-up), and while a session to the server is being created.
    """

    authorization_url: str = ""
    redirect_url: str = ""
    server_name: str = ""
    """The configured name of the MCP server being authorized."""
    scopes: list[str] = field(default_factory=list)

    kind: ClassVar[str] = "authorization"

    def _answer(self, value: Any) -> host_pb2.HostAnswer:
        return authorization_answer(value)


@dataclass(kw_only=True)
class ApprovalRequest(ServerRequest):
    """The bridge's own request: a tool call that the server's policy says needs approval waits for a person
    other than the caller (docs/adr/0080-approvals.md).

    Delivered only to approvers, on a client that serves approvals (:meth:`~mcp_bridge.Client.serve_approvals`).
    ``session_id``, ``origin_call_id`` and ``origin_name`` are the caller's session, call and tool; ``deadline``
    is the expiry. Answer with :func:`approve` or :func:`deny`; only an approval sends the call upstream, with
    exactly ``canonical_arguments``.
    """

    caller: str = ""
    """The principal that made the call."""
    server_name: str = ""
    tool: str = ""
    arguments: JSONObject = field(default_factory=dict)
    canonical_arguments: str = ""
    """The arguments in canonical JSON (RFC 8785): the bytes sent upstream and hashed into arguments_sha256."""
    arguments_sha256: str = ""
    rule: str = ""
    """The approval pattern of the server's policy that matched the tool."""
    approvers: Approvers = field(default_factory=Approvers)
    """Who may decide it."""

    kind: ClassVar[str] = "approval"

    def _answer(self, value: Any) -> host_pb2.HostAnswer:
        return approval_answer(value, self.arguments_sha256)


# ------------------------------------------------------------------------------------------- answers


@dataclass
class ApprovalDecision:
    """An approver's decision on an :class:`ApprovalRequest`: approve, or deny with a reason."""

    approve: bool
    reason: str = ""


def approve(reason: str = "") -> ApprovalDecision:
    """Approve the call: it is sent upstream with the arguments shown in the request."""
    return ApprovalDecision(approve=True, reason=reason)


def deny(reason: str) -> ApprovalDecision:
    """Deny the call: the caller gets :class:`~mcp_bridge.ApprovalDeniedError` with ``reason``."""
    return ApprovalDecision(approve=False, reason=reason)


def approval_answer(value: Any, arguments_sha256: str) -> host_pb2.HostAnswer:
    """The HostAnswer for an approval request: an :class:`ApprovalDecision` (or a bool). An approval carries the
    request's digest: the approver approves the arguments it was shown."""
    if isinstance(value, bool):
        value = ApprovalDecision(approve=value)
    if not isinstance(value, ApprovalDecision):
        raise TypeError(f"an approval answer is an ApprovalDecision (approve() or deny()), not {type(value).__name__}")
    a = host_pb2.HostAnswer()
    a.approval.approve = value.approve
    a.approval.reason = value.reason
    if value.approve:
        a.approval.arguments_sha256 = arguments_sha256
    return a


@dataclass
class SamplingResult:
    """The host's answer to a sampling request (MCP ``CreateMessageResult``).

    ``content`` may be one block, a list of blocks (e.g. several ``tool_use`` blocks) or a plain string.
    """

    content: Content | list[Content] | str
    model: str
    role: Role = "assistant"
    stop_reason: str = ""
    """``endTurn``, ``stopSequence``, ``maxTokens``, ``toolUse`` or a provider's own value."""
    meta: JSONObject | None = None


@dataclass
class ElicitResult:
    """The host's answer to an elicitation: ``accept`` (with ``content`` in form mode), ``decline`` or ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    content: JSONObject | None = None
    meta: JSONObject | None = None


def accept(content: Mapping[str, Any] | None = None) -> ElicitResult:
    """The user accepted; in form mode ``content`` holds the values, matching the requested schema."""
    return ElicitResult("accept", dict(content) if content is not None else None)


def decline() -> ElicitResult:
    """The user explicitly declined."""
    return ElicitResult("decline")


def cancel() -> ElicitResult:
    """The user dismissed the request without choosing."""
    return ElicitResult("cancel")


SamplingAnswer = Union[SamplingResult, JSONObject]
ElicitationAnswer = Union[ElicitResult, JSONObject, Literal["accept", "decline", "cancel"]]
RootsAnswer = Union[Sequence[Root | JSONObject | str], JSONObject]

Answer = Union[T, Awaitable[T], "concurrent.futures.Future[T]", None]
"""What a handler method returns: the answer, something that resolves to it, or None to answer later."""


def error_answer(code: int, message: str, data: JSON = None) -> host_pb2.HostAnswer:
    a = host_pb2.HostAnswer()
    a.error.code = int(code)
    a.error.message = str(message)
    if data is not None:
        cv.fill_value(a.error.data, data, "data")
    return a


def sampling_answer(value: Any) -> host_pb2.HostAnswer:
    """A HostAnswer from a SamplingResult or an MCP ``CreateMessageResult`` dict."""
    if isinstance(value, Mapping):
        value = SamplingResult(
            content=value.get("content", []),
            model=str(value.get("model", "")),
            role=value.get("role", "assistant"),
            stop_reason=str(value.get("stopReason", "")),
            meta=value.get("_meta"),
        )
    if not isinstance(value, SamplingResult):
        raise TypeError(f"a sampling handler must return a SamplingResult or a dict, not {type(value).__name__}")
    if not value.model:
        raise ValueError("a sampling result needs the name of the model that produced it (model=...)")
    blocks = value.content if isinstance(value.content, list) else [value.content]
    if not blocks:
        raise ValueError("a sampling result needs content")
    a = host_pb2.HostAnswer()
    r = a.sampling
    r.role = cv.enum_int(cv.ROLE, value.role, "role")
    for b in blocks:
        cv.content_to(cv.content_from_mcp(b), r.content.add())
    r.model = value.model
    r.stop_reason = value.stop_reason
    cv.set_struct(r, "meta", value.meta)
    return a


def elicitation_answer(value: Any) -> host_pb2.HostAnswer:
    """A HostAnswer from an ElicitResult, an MCP ``ElicitResult`` dict, or an action string."""
    if isinstance(value, str):
        value = ElicitResult(value)  # type: ignore[arg-type]
    elif isinstance(value, Mapping):
        value = ElicitResult(action=value.get("action", ""), content=value.get("content"), meta=value.get("_meta"))
    if not isinstance(value, ElicitResult):
        raise TypeError(
            "an elicitation handler must return accept(content), decline(), cancel() or a dict, "
            f"not {type(value).__name__}"
        )
    a = host_pb2.HostAnswer()
    r = a.elicitation
    r.action = cv.enum_int(cv.ELICIT_ACTION, value.action, "elicitation action")
    if value.content is not None:
        if value.action != "accept":
            raise ValueError(f"only accept carries content, not {value.action}")
        cv.fill_struct(r.content, value.content, "content")
    cv.set_struct(r, "meta", value.meta)
    return a


def authorization_answer(value: Any) -> host_pb2.HostAnswer:
    """The HostAnswer for an authorization request: the redirect URL the user's browser landed on."""
    if not isinstance(value, str) or not value:
        raise TypeError(f"an authorization answer is the redirect URL (a non-empty str), not {type(value).__name__}")
    a = host_pb2.HostAnswer()
    a.authorization.redirect_url = value
    return a


def roots_answer(value: Any) -> host_pb2.HostAnswer:
    """A HostAnswer from a list of roots (Root, ``{"uri", "name"}`` dicts or URI strings) or ``{"roots": [...]}``."""
    if isinstance(value, Mapping):
        value = value.get("roots", [])
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"list_roots must return a list of roots, not {type(value).__name__}")
    a = host_pb2.HostAnswer()
    a.roots.SetInParent()
    for r in value:
        cv.root_to(cv.coerce_root(r), a.roots.roots.add())
    return a


# --------------------------------------------------------------------------------- from the wire


def _common(sr: host_pb2.ServerRequest) -> dict[str, Any]:
    return dict(
        request_id=sr.request_id,
        session_id=sr.session_id,
        origin_call_id=sr.origin_call_id,
        origin_method=sr.origin_method,
        origin_name=sr.origin_name,
        delivery=cv.enum_str(cv.DELIVERY, sr.delivery),
        input_key=sr.input_key,
        deadline=cv.timestamp(sr, "deadline"),
        created=cv.timestamp(sr, "create_time"),
        trace_context=dict(sr.trace_context),
        warnings=cv.warnings_from(sr.warnings),
        url_destination=cv.url_destination_from(sr),
    )


def request_from(sr: host_pb2.ServerRequest) -> ServerRequest | None:
    """The typed request of a ServerRequest, or None for a payload this library does not know."""
    kind = sr.WhichOneof("payload")
    if kind == "sampling":
        s: mcp_pb2.CreateMessageRequest = sr.sampling
        prefs = None
        if s.HasField("model_preferences"):
            mp = s.model_preferences
            prefs = ModelPreferences(
                hints=[h.name for h in mp.hints],
                cost_priority=cv.opt_field(mp, "cost_priority"),
                speed_priority=cv.opt_field(mp, "speed_priority"),
                intelligence_priority=cv.opt_field(mp, "intelligence_priority"),
            )
        return SamplingRequest(
            **_common(sr),
            messages=[
                SamplingMessage(
                    role=cv.enum_str(cv.ROLE, m.role) or "user",  # type: ignore[arg-type]
                    content=[cv.content_from(c) for c in m.content],
                    meta=cv.opt_struct(m, "meta"),
                )
                for m in s.messages
            ],
            max_tokens=s.max_tokens,
            system_prompt=s.system_prompt,
            temperature=cv.opt_field(s, "temperature"),
            stop_sequences=list(s.stop_sequences),
            model_preferences=prefs,
            include_context=cv.enum_str(cv.INCLUDE_CONTEXT, s.include_context),
            metadata=cv.opt_struct(s, "metadata"),
            tools=[cv.tool_from(t) for t in s.tools],
            tool_choice=cv.enum_str(cv.TOOL_CHOICE, s.tool_choice.mode) if s.HasField("tool_choice") else "",
            meta=cv.opt_struct(s, "meta"),
        )
    if kind == "elicitation":
        e: mcp_pb2.ElicitRequest = sr.elicitation
        return ElicitationRequest(
            **_common(sr),
            mode="url" if e.mode == mcp_pb2.ELICITATION_MODE_URL else "form",
            message=e.message,
            requested_schema=cv.struct_to_dict(e.requested_schema),
            url=e.url,
            elicitation_id=e.elicitation_id,
            meta=cv.opt_struct(e, "meta"),
        )
    if kind == "authorization":
        z = sr.authorization
        return AuthorizationRequest(
            **_common(sr),
            authorization_url=z.authorization_url,
            redirect_url=z.redirect_url,
            server_name=z.server_name,
            scopes=list(z.scopes),
        )
    if kind == "roots":
        return RootsRequest(**_common(sr), meta=cv.opt_struct(sr.roots, "meta"))
    if kind == "approval":
        ap = sr.approval
        return ApprovalRequest(
            **_common(sr),
            caller=ap.caller,
            server_name=ap.server_name,
            tool=ap.tool,
            arguments=cv.struct_to_dict(ap.arguments),
            canonical_arguments=ap.canonical_arguments,
            arguments_sha256=ap.arguments_sha256,
            rule=ap.rule,
            approvers=cv.approvers_from(ap.approvers),
        )
    return None


# ------------------------------------------------------------------------------------------- handler


class Handler:
    """Base class of a host's answers to server requests and of its notification observer.

    Override any of :meth:`handle_sampling`, :meth:`handle_elicitation`, :meth:`handle_url_elicitation` and
    :meth:`list_roots`; each one you override declares the matching client capability when a session is
    created with this handler (sampling; elicitation form mode; elicitation URL mode; roots). Methods may be
    ``async def``. :meth:`handle_notification` observes everything else and declares nothing.

    In the sync :class:`~mcp_bridge.Client`, methods run on a thread pool; in the
    :class:`~mcp_bridge.AsyncClient`, ``async def`` methods run on the event loop and plain methods on a
    worker thread. Either way, a slow method never blocks other requests or the stream.

    Class attributes refine the declared capabilities:

    * ``sampling_tools`` -- the host supports ``tools``/``toolChoice`` in sampling (MCP ``sampling.tools``);
    * ``sampling_context`` -- the host supports ``includeContext`` other than none (``sampling.context``);
    * ``roots_list_changed`` -- the host changes roots with ``set_roots`` and wants servers told (default True).
    """

    sampling_tools: ClassVar[bool] = False
    sampling_context: ClassVar[bool] = False
    roots_list_changed: ClassVar[bool] = True

    def handle_sampling(self, request: SamplingRequest) -> Answer[SamplingAnswer]:
        """Answer ``sampling/createMessage``: run a completion of ``request.messages``.

        Return a :class:`SamplingResult` (or an MCP ``CreateMessageResult`` dict). A host should let a person
        see and approve the request (human in the loop); to refuse, raise
        ``McpError(USER_REJECTED, "User rejected sampling request")``.
        """
        raise McpError(METHOD_NOT_FOUND, "Method not found: sampling/createMessage")

    def handle_elicitation(self, request: ElicitationRequest) -> Answer[ElicitationAnswer]:
        """Answer a form-mode ``elicitation/create``: ask the user for the values of ``request.requested_schema``.

        Return :func:`accept` with the values, :func:`decline` or :func:`cancel`.
        """
        raise McpError(METHOD_NOT_FOUND, "Method not found: elicitation/create")

    def handle_url_elicitation(self, request: ElicitationRequest) -> Answer[ElicitationAnswer]:
        """Answer a URL-mode ``elicitation/create``: send the user to ``request.url``.

        Return :func:`accept` (no content) once the user agreed to go, :func:`decline` or :func:`cancel`. The
        server's later ``notifications/elicitation/complete`` reaches :meth:`handle_notification`.
        """
        raise McpError(METHOD_NOT_FOUND, "Method not found: elicitation/create (url mode)")

    def list_roots(self, request: RootsRequest) -> Answer[RootsAnswer]:
        """Answer ``roots/list``: return the host's roots (``Root`` objects, ``{"uri", "name"}`` dicts or URIs).

        An override may also take no argument (``def list_roots(self)``).
        """
        raise McpError(METHOD_NOT_FOUND, "Method not found: roots/list")

    def handle_authorization(self, request: AuthorizationRequest) -> Answer[str]:
        """Have a person authorize the bridge at an upstream server's OAuth authorization server.

        Show or open ``request.authorization_url`` and return the URL the browser was redirected to (it starts
        with ``request.redirect_url``). To refuse, raise :class:`~mcp_bridge.McpError` or call
        ``request.cancel()``. Declares no MCP capability: it is the bridge's own request. Called while
        ``create_session`` waits for a server that requires OAuth (the session has no id on this side yet), and
        when a call of an open session needs more scopes.
        """
        raise McpError(METHOD_NOT_FOUND, "Method not found: authorization")

    def handle_approval(self, request: ApprovalRequest) -> Answer[ApprovalDecision]:
        """Decide a tool call that needs approval (the bridge's own request; declares no MCP capability).

        Show a person ``request.tool``, ``request.arguments`` and ``request.caller``; return :func:`approve` or
        :func:`deny` with a reason (or call ``request.respond(...)`` later). Called only for a handler given to
        :meth:`~mcp_bridge.Client.serve_approvals`, for the approval requests the client's principal may decide.
        Raising denies the call.
        """
        raise McpError(METHOD_NOT_FOUND, "Method not found: approval")

    def handle_notification(self, method: str, params: dict[str, Any]) -> Any:
        """Observe a notification; the default ignores it.

        ``method`` is MCP's (``notifications/progress``, ``notifications/message``,
        ``notifications/resources/updated``, ``notifications/tools/list_changed``,
        ``notifications/prompts/list_changed``, ``notifications/resources/list_changed``,
        ``notifications/elicitation/complete``, ``notifications/tasks/status``, ``notifications/cancelled``) or
        the bridge's (``bridge/sessionState``, ``bridge/requestEnded``, ``bridge/eventsDropped``). ``params`` is
        MCP's params object plus ``sessionId``. Notifications are delivered one at a time, in order; an
        exception is logged and ignored. May be ``async def`` in the AsyncClient.
        """
        return None


_METHODS = (
    "handle_sampling",
    "handle_elicitation",
    "handle_url_elicitation",
    "list_roots",
    "handle_authorization",
    "handle_approval",
    "handle_notification",
)


def overrides(handler: object, name: str) -> TypeGuard[Handler]:
    """Whether handler implements ``name`` itself (not Handler's default)."""
    impl = getattr(handler, name, None)
    if impl is None or not callable(impl):
        return False
    func = getattr(impl, "__func__", impl)
    return func is not getattr(Handler, name, None)


def capabilities(handler: object | None, *, has_roots: bool = False) -> mcp_pb2.HostCapabilities:
    """The HostCapabilities a session declares for this handler.

    ``has_roots``: the session was created with static roots, which the library answers itself when the handler
    does not implement list_roots, so roots are declared either way.
    """
    caps = mcp_pb2.HostCapabilities()
    if handler is not None and overrides(handler, "handle_sampling"):
        caps.sampling.tools = bool(getattr(handler, "sampling_tools", False))
        caps.sampling.context = bool(getattr(handler, "sampling_context", False))
        caps.sampling.SetInParent()
    form = handler is not None and overrides(handler, "handle_elicitation")
    url = handler is not None and overrides(handler, "handle_url_elicitation")
    if form or url:
        caps.elicitation.form = form
        caps.elicitation.url = url
        caps.elicitation.SetInParent()
    if has_roots or (handler is not None and overrides(handler, "list_roots")):
        caps.roots.list_changed = bool(getattr(handler, "roots_list_changed", True)) if handler is not None else True
        caps.roots.SetInParent()
    return caps


def internal_error(exc: BaseException) -> host_pb2.HostAnswer:
    """The error answer for an exception raised by a handler."""
    if isinstance(exc, McpError):
        return error_answer(exc.code, exc.message, exc.data)
    return error_answer(INTERNAL_ERROR, f"host handler failed: {type(exc).__name__}: {exc}")
