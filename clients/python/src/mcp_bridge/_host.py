"""The host stream's state, shared by the sync and the asyncio client.

:class:`HostCore` knows nothing about threads or event loops. A driver (``client._SyncHostStream``,
``aio._AsyncHostStream``) owns the gRPC Connect call, feeds every ConnectResponse to :meth:`HostCore.on_response`,
and runs what the core hands it: handler invocations (``spawn``) and notification deliveries (``notify``, in
order). The core decides, under one lock:

* which sessions to attach, on every (re)connect;
* whether a delivered ServerRequest is new (call the handler), already being handled (do nothing: a pending
  request is delivered again after every reconnect), or answered on a stream that died before the bridge
  acknowledged it (send the same answer again -- the handler is not called twice);
* what to do with acknowledgements, request endings and attach results.
"""

from __future__ import annotations

import collections
import concurrent.futures
import inspect
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from . import _convert as cv
from ._gen.mcpbridge.v1 import host_pb2
from .errors import INTERNAL_ERROR, METHOD_NOT_FOUND, BridgeError, McpError, from_status_proto
from .handler import (
    ApprovalRequest,
    AuthorizationRequest,
    ElicitationRequest,
    Handler,
    RootsRequest,
    SamplingRequest,
    ServerRequest,
    error_answer,
    internal_error,
    overrides,
    request_from,
)
from .types import Root

log = logging.getLogger("mcp_bridge")

_TOMBSTONES = 10_000


@dataclass
class _SessionEntry:
    handler: Handler | None
    roots: list[Root] | None
    waiters: list[concurrent.futures.Future[None]] = field(default_factory=list)
    attached: bool = False


@dataclass
class _Opening:
    """A create_session call in progress whose handler answers authorization requests."""

    server: str
    handler: Handler | None


@dataclass
class _RequestEntry:
    request: ServerRequest
    state: str = "running"  # running → answered → (removed when acked or ended)
    message: host_pb2.ConnectRequest | None = None  # the reply or cancel sent, kept until acknowledged
    sent_gen: int = -1  # the stream generation the message went out on


class HostCore:
    """State machine of one client's host stream (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._sessions: dict[str, _SessionEntry] = {}
        self._openings: list[_Opening] = []
        self._approver: Handler | None = None  # serve_approvals: decides approval requests
        self._requests: dict[str, _RequestEntry] = {}
        self._ended: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._gen = 0
        self._send: Callable[[host_pb2.ConnectRequest], None] | None = None
        # Set by the driver.
        self.spawn: Callable[[ServerRequest, Callable[..., Any], tuple[Any, ...]], None] = lambda r, f, a: None
        self.notify: Callable[[Any, str, dict[str, Any]], None] = lambda h, m, p: None
        self.handler_calls = 0  # for tests: how many times a handler method was invoked
        self.deliveries = 0  # for tests: how many ServerRequests arrived (redeliveries included)

    # ------------------------------------------------------------------------------------- sessions

    def add_session(self, session_id: str, handler: Handler | None, roots: list[Root] | None) -> concurrent.futures.Future[None]:
        """Track a session; the returned future resolves once the bridge confirms the attach."""
        fut: concurrent.futures.Future[None] = concurrent.futures.Future()
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is None:
                entry = self._sessions[session_id] = _SessionEntry(handler=handler, roots=roots)
            else:
                entry.handler, entry.roots = handler, roots
            if entry.attached:
                fut.set_result(None)
                return fut
            entry.waiters.append(fut)
            if self._send is not None:
                self._send(host_pb2.ConnectRequest(attach=host_pb2.AttachSessions(session_ids=[session_id])))
        return fut

    def begin_opening(self, server: str, handler: Handler | None) -> object:
        """Register a create_session call in progress: until :meth:`end_opening`, authorization requests for
        ``server`` of sessions this client does not hold (the session being created has no id yet on this
        side) go to ``handler``. Returns the token for end_opening."""
        opening = _Opening(server=server, handler=handler)
        with self._lock:
            self._openings.append(opening)
        return opening

    def end_opening(self, token: object) -> None:
        with self._lock:
            self._openings = [o for o in self._openings if o is not token]

    def set_approver(self, handler: Handler | None) -> None:
        """Route the approval requests the bridge pushes to this stream (those the principal may decide) to
        ``handler``; None leaves them alone (pending, for another approver)."""
        with self._lock:
            self._approver = handler

    def serves_approvals(self) -> bool:
        with self._lock:
            return self._approver is not None

    def openings(self) -> int:
        with self._lock:
            return len(self._openings)

    def set_roots(self, session_id: str, roots: list[Root]) -> None:
        with self._lock:
            entry = self._sessions.get(session_id)
            if entry is not None and entry.roots is not None:
                entry.roots = list(roots)

    def remove_session(self, session_id: str, *, detach: bool = True) -> None:
        with self._lock:
            entry = self._sessions.pop(session_id, None)
            for rid in [rid for rid, r in self._requests.items() if r.request.session_id == session_id]:
                self._end(rid)
            if detach and entry is not None and self._send is not None:
                self._send(host_pb2.ConnectRequest(detach=host_pb2.DetachSessions(session_ids=[session_id])))
        if entry is not None:
            for w in entry.waiters:
                if not w.done():
                    w.set_exception(BridgeError(grpc.StatusCode.CANCELLED, f"session {session_id} was closed"))

    def fail_attaches(self, err: BridgeError) -> None:
        """The stream cannot be opened for a reason retrying will not fix soon: fail every waiting attach."""
        with self._lock:
            waiters = [w for e in self._sessions.values() for w in e.waiters]
            for e in self._sessions.values():
                e.waiters = []
        for w in waiters:
            if not w.done():
                w.set_exception(err)

    def session_ids(self) -> list[str]:
        with self._lock:
            return list(self._sessions)

    def has_sessions(self) -> bool:
        with self._lock:
            return bool(self._sessions)

    # ------------------------------------------------------------------------------------ the stream

    def stream_up(self, send: Callable[[host_pb2.ConnectRequest], None]) -> None:
        """A new stream is open and ``send`` queues a message on it (it must not block). Sends, before anything
        else can, the attach of every session and then every answer still unacknowledged (it may have been
        lost with the previous stream)."""
        with self._lock:
            self._gen += 1
            self._send = send
            if self._sessions:
                send(host_pb2.ConnectRequest(attach=host_pb2.AttachSessions(session_ids=list(self._sessions))))
            for entry in self._requests.values():
                if entry.state == "answered" and entry.message is not None:
                    entry.sent_gen = self._gen
                    send(entry.message)

    def stream_down(self) -> None:
        with self._lock:
            self._send = None
            for entry in self._sessions.values():
                entry.attached = False

    def on_response(self, resp: host_pb2.ConnectResponse) -> None:
        kind = resp.WhichOneof("message")
        if kind == "event":
            self._on_event(resp.event)
        elif kind == "reply_ack":
            self._on_ack(resp.reply_ack)
        elif kind == "attached":
            self._on_attached(resp.attached)

    # --------------------------------------------------------------------------------------- events

    def _on_event(self, ev: host_pb2.Event) -> None:
        kind = ev.WhichOneof("payload")
        if kind == "server_request":
            self._on_server_request(ev.server_request)
            return
        with self._lock:
            entry = self._sessions.get(ev.session_id)
            handler = entry.handler if entry is not None else None
        if kind == "request_ended":
            with self._lock:
                self._end(ev.request_ended.request_id)
        note = cv.event_notification(ev)
        if note is not None and handler is not None and overrides(handler, "handle_notification"):
            self.notify(handler, note[0], note[1])
        if kind == "session_state" and ev.session_state.state == cv.enum_int(cv.SESSION_STATE, "closed", "state"):
            self.remove_session(ev.session_id, detach=False)

    def _on_server_request(self, sr: host_pb2.ServerRequest) -> None:
        rid = sr.request_id
        with self._lock:
            self.deliveries += 1
            if rid in self._ended:
                return
            entry = self._requests.get(rid)
            if entry is not None:
                # Delivered again (after a reconnect). Never call the handler twice; resend a lost answer.
                if entry.state == "answered" and entry.message is not None and entry.sent_gen != self._gen:
                    if self._send is not None:
                        log.debug("resending the answer to %s after a reconnect", rid)
                        entry.sent_gen = self._gen
                        self._send(entry.message)
                return
            session = self._sessions.get(sr.session_id)
            if sr.WhichOneof("payload") == "approval":
                # An approval request reaches every stream of an approver, whatever sessions it holds: it is
                # decided by the client's approval handler, or left pending for another approver -- never
                # refused by a handler that cannot decide it.
                handler, roots = self._approver, None
                if handler is None or not overrides(handler, "handle_approval"):
                    return
            elif session is not None:
                handler, roots = session.handler, session.roots
            else:
                # An authorization request of a session being created (its id is not known here yet, or it
                # is "-"): the bridge pushes it to every stream of the principal. It is ours if a
                # create_session to that server is in progress with a handler that can answer it.
                handler, roots = self._opening_handler(sr), None
                if handler is None:
                    return  # not ours (any more)
            request = request_from(sr)
            if request is None:
                log.warning("server request %s has a payload this library does not know; leaving it pending", rid)
                return
            request._responder = self
            self._requests[rid] = _RequestEntry(request=request)
        method, args = self._method_for(handler, roots, request)
        self.handler_calls += 1
        self.spawn(request, method, args)

    def _opening_handler(self, sr: host_pb2.ServerRequest) -> Handler | None:
        """The handler of the create_session in progress that an authorization request belongs to (lock held)."""
        if sr.WhichOneof("payload") != "authorization":
            return None
        for o in self._openings:
            if o.server == sr.authorization.server_name:
                return o.handler
        return None

    def _method_for(self, handler: Handler | None, roots: list[Root] | None, request: ServerRequest) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        if isinstance(request, SamplingRequest) and overrides(handler, "handle_sampling"):
            return handler.handle_sampling, (request,)
        if isinstance(request, ElicitationRequest):
            if request.mode == "url" and overrides(handler, "handle_url_elicitation"):
                return handler.handle_url_elicitation, (request,)
            if overrides(handler, "handle_elicitation"):
                return handler.handle_elicitation, (request,)
            if overrides(handler, "handle_url_elicitation"):
                return handler.handle_url_elicitation, (request,)
        if isinstance(request, AuthorizationRequest) and overrides(handler, "handle_authorization"):
            return handler.handle_authorization, (request,)
        if isinstance(request, ApprovalRequest) and overrides(handler, "handle_approval"):
            return handler.handle_approval, (request,)
        if isinstance(request, RootsRequest):
            if overrides(handler, "list_roots"):
                fn = handler.list_roots
                return fn, ((request,) if _takes_argument(fn) else ())
            if roots is not None:
                static = list(roots)
                return (lambda: static), ()
        method = {
            "sampling": "sampling/createMessage",
            "elicitation": "elicitation/create",
            "roots": "roots/list",
            "authorization": "authorization",
            "approval": "approval",
        }
        err = McpError(METHOD_NOT_FOUND, f"Method not found: {method.get(request.kind, request.kind)}")

        def refuse() -> None:
            raise err

        return refuse, ()

    # ------------------------------------------------------------------------------------- answering

    def send_answer(self, request: ServerRequest, answer: host_pb2.HostAnswer) -> bool:
        msg = host_pb2.ConnectRequest(reply=host_pb2.HostReply(request_id=request.request_id, answer=answer))
        return self._queue(request, msg)

    def send_cancel(self, request: ServerRequest, reason: str) -> bool:
        msg = host_pb2.ConnectRequest(
            cancel=host_pb2.CancelServerRequest(request_id=request.request_id, reason=reason)
        )
        return self._queue(request, msg)

    def _queue(self, request: ServerRequest, msg: host_pb2.ConnectRequest) -> bool:
        with self._lock:
            entry = self._requests.get(request.request_id)
            if entry is None or entry.state != "running":
                log.info("request %s was already answered or has ended; answer dropped", request.request_id)
                return False
            entry.state, entry.message = "answered", msg
            if self._send is not None:
                entry.sent_gen = self._gen
                self._send(msg)
        return True

    def finish(self, request: ServerRequest, result: Any) -> None:
        """A handler method returned ``result`` (already awaited): answer with it, unless None (answer later)."""
        if result is None:
            log.debug("handler returned None for %s; waiting for request.respond()", request.request_id)
            return
        try:
            answer = request._answer(result)
        except Exception as exc:  # noqa: BLE001 - a bad return value is the handler's error, answered as such
            self.fail(request, exc)
            return
        self.send_answer(request, answer)

    def fail(self, request: ServerRequest, exc: BaseException) -> None:
        """A handler method raised: log it and answer the server with an error."""
        if isinstance(exc, McpError):
            log.info("handler answered %s request %s with error %d: %s", request.kind, request.request_id, exc.code, exc.message)
        else:
            log.error("handler for %s request %s failed", request.kind, request.request_id, exc_info=exc)
        self.send_answer(request, internal_error(exc))

    # ------------------------------------------------------------------------------------- endings

    def _end(self, request_id: str) -> None:
        """Forget a request (lock held): acknowledged, ended, or its session closed."""
        self._requests.pop(request_id, None)
        self._ended[request_id] = None
        while len(self._ended) > _TOMBSTONES:
            self._ended.popitem(last=False)

    def _on_ack(self, ack: host_pb2.ReplyAck) -> None:
        rid = ack.request_id
        with self._lock:
            entry = self._requests.get(rid)
            if ack.accepted:
                self._end(rid)
                return
            err = from_status_proto(ack.error)
            if err.code == grpc.StatusCode.INVALID_ARGUMENT and entry is not None and entry.message is not None:
                if entry.message.WhichOneof("action") == "reply" and entry.message.reply.answer.WhichOneof("answer") != "error":
                    # The handler's answer was refused (wrong kind, content not matching the schema): tell the
                    # server with an error instead of leaving it waiting until the deadline.
                    log.error("the bridge refused the answer to %s: %s; answering with an error", rid, err)
                    answer = error_answer(INTERNAL_ERROR, f"the host's answer was refused: {err.message}")
                    entry.message = host_pb2.ConnectRequest(reply=host_pb2.HostReply(request_id=rid, answer=answer))
                    if self._send is not None:
                        entry.sent_gen = self._gen
                        self._send(entry.message)
                else:
                    log.error("the bridge refused the answer to %s: %s", rid, err)
                    self._end(rid)
            else:
                log.info("answer to %s not taken: %s", rid, err)
                self._end(rid)

    def _on_attached(self, att: host_pb2.AttachedSessions) -> None:
        done: list[concurrent.futures.Future[None]] = []
        failed: list[tuple[concurrent.futures.Future[None], BridgeError]] = []
        lost: list[tuple[str, Any, BridgeError]] = []
        with self._lock:
            for sid in att.session_ids:
                entry = self._sessions.get(sid)
                if entry is not None:
                    entry.attached = True
                    done.extend(entry.waiters)
                    entry.waiters = []
            for f in att.failures:
                err = from_status_proto(f.status)
                entry = self._sessions.pop(f.session_id, None)
                if entry is None:
                    continue
                if entry.waiters:
                    failed.extend((w, err) for w in entry.waiters)
                else:
                    lost.append((f.session_id, entry.handler, err))
        for w in done:
            if not w.done():
                w.set_result(None)
        for w, err in failed:
            if not w.done():
                w.set_exception(err)
        for sid, handler, err in lost:
            log.warning("session %s could not be attached again and is dropped: %s", sid, err)
            if handler is not None and overrides(handler, "handle_notification"):
                self.notify(
                    handler,
                    "bridge/sessionState",
                    {"state": "closed", "reason": f"attach failed: {err.message}", "restarts": 0, "sessionId": sid},
                )

    # ------------------------------------------------------------------------------------ for tests

    def pending_ids(self) -> list[str]:
        with self._lock:
            return list(self._requests)


def _takes_argument(fn: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    params = [
        p
        for p in sig.parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    ]
    return bool(params)

