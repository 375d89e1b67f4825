"""The synchronous client: :class:`Client` and :class:`Session`.

Calls block the calling thread. Handlers run on a thread pool, and the host stream (gRPC ``Connect``) runs on
a background thread that reconnects with exponential backoff.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import grpc

from . import _base, _otel, _retry
from . import _convert as cv
from ._gen import reasons
from ._gen.mcpbridge.v1 import bridge_service_pb2 as pb
from ._gen.mcpbridge.v1 import bridge_service_pb2_grpc as pb_grpc
from ._gen.mcpbridge.v1 import host_pb2
from ._host import HostCore
from ._retry import RetryPolicy
from .errors import BridgeError, from_rpc_error
from .handler import Handler, ServerRequest, overrides, request_from
from .types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Identity,
    Implementation,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Root,
    ServerInfo,
    SessionInfo,
    StreamEvent,
    Task,
    Tool,
)

log = logging.getLogger("mcp_bridge")

R = TypeVar("R")

_STOP = object()


class Client:
    """A connection to an mcp-bridge over gRPC.

    Args:
        target: the bridge's gRPC address, ``host:port`` or ``unix:///path/to.sock``.
        token: a bearer token, sent as ``authorization: Bearer <token>`` on every call.
        credentials: ``grpc.ssl_channel_credentials(...)`` for TLS / mTLS; plaintext when None.
        timeout: default timeout in seconds of every call (None: no timeout). Each method also takes one.
        max_workers: threads that run handler methods.
        reconnect_backoff: (initial, maximum) seconds between reconnects of the host stream (and of the channel).
        attach_timeout: seconds ``create_session`` waits for the host stream to attach the session.
        max_message_bytes: the largest gRPC message sent or received (the bridge's default limit is 16 MiB).
        options: extra gRPC channel options.
        metadata: extra metadata sent with every call.
        retry: how tool calls lost to ``UNAVAILABLE`` (the connection dropped, the bridge restarted or is
            draining) are retried with the same call id: a :class:`RetryPolicy`, True for the default one (100 ms
            doubling to 2 s, until the call's timeout, or for 60 s after the first failure without one), False
            for none. Each ``call_tool`` can override it.

    Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        target: str = _base.DEFAULT_TARGET,
        *,
        token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float | None = None,
        max_workers: int = 16,
        reconnect_backoff: tuple[float, float] = (0.1, 5.0),
        attach_timeout: float = 15.0,
        max_message_bytes: int | None = 16 << 20,
        options: Iterable[tuple[str, Any]] | None = None,
        metadata: Iterable[tuple[str, str]] | None = None,
        retry: RetryPolicy | bool = True,
    ) -> None:
        opts = _base.channel_options(max_message_bytes, options, reconnect_backoff)
        if credentials is not None:
            self._channel = grpc.secure_channel(target, credentials, options=opts)
        else:
            self._channel = grpc.insecure_channel(target, options=opts)
        self._stub = pb_grpc.BridgeServiceStub(self._channel)
        self._metadata = _base.metadata(token, metadata)
        self._timeout = timeout
        self._retry = _retry.policy_of(retry)
        self._attach_timeout = attach_timeout
        self._host = _SyncHostStream(self._stub, self._metadata, max_workers, reconnect_backoff)
        # Behind a proxy in front of several replicas, a session is served by the replica named in its id, and
        # its requests come on a host stream to that replica: one stream per replica, routed by the id of the
        # session that opened it. Sessions of a bridge without replicas use _host.
        self._replica_hosts: dict[str, _SyncHostStream] = {}
        self._hosts_lock = threading.Lock()
        self._max_workers, self._reconnect_backoff = max_workers, reconnect_backoff
        self.target = target

    # -------------------------------------------------------------------------------------- plumbing

    def _call(self, rpc: Callable[..., R], request: Any, timeout: float | None = None) -> R:
        t = timeout if timeout is not None else self._timeout
        start = time.monotonic()
        try:
            return rpc(request, metadata=_base.routed(self._metadata + _otel.outgoing(), request), timeout=t)
        except grpc.RpcError as err:
            raise _base.call_error(err, t, start) from None

    def _attempts(self, req: Any, timeout: float | None, retry: RetryPolicy | bool | None) -> _retry.Attempts:
        policy = self._retry if retry is None else _retry.policy_of(retry)
        return _retry.Attempts(policy, timeout if timeout is not None else self._timeout, resume=req.resume)

    def _call_tool(self, req: pb.CallToolRequest, timeout: float | None, retry: RetryPolicy | bool | None) -> pb.CallToolResponse:
        """CallTool, called again with the same call id (and ``resume``) while it fails UNAVAILABLE (_retry)."""
        attempts = self._attempts(req, timeout, retry)
        while True:
            req.resume = attempts.resume
            try:
                resp: pb.CallToolResponse = self._call(self._stub.CallTool, req, attempts.timeout())
                return resp
            except BridgeError as err:
                err.call_id = req.call_id
                delay = attempts.retry_after(err)
                if delay is None:
                    raise
                log.info("tool call %s lost (%s); calling again in %.2fs to resume it", req.call_id, err, delay)
            time.sleep(delay)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _host_for(self, session_id: str) -> _SyncHostStream:
        """The host stream that carries the requests of ``session_id``: the one to its replica."""
        replica = _base.session_replica(session_id)
        if not replica:
            return self._host
        with self._hosts_lock:
            host = self._replica_hosts.get(replica)
            if host is None or host.ended:
                if host is not None:
                    host.close()  # ended when its replica died: release its workers
                md = (*self._metadata, (_base.ROUTING_KEY, session_id))
                host = _SyncHostStream(self._stub, md, self._max_workers, self._reconnect_backoff, replica)
                self._replica_hosts[replica] = host
            return host

    def _all_hosts(self) -> list[_SyncHostStream]:
        with self._hosts_lock:
            return [self._host, *self._replica_hosts.values()]

    def close(self) -> None:
        """Stop the host stream and close the channel. Sessions stay open on the bridge (see Session.close)."""
        for host in self._all_hosts():
            host.close()
        self._channel.close()

    def wait_ready(self, timeout: float = 10.0) -> None:
        """Block until the channel to the bridge is connected; raises UnavailableError after ``timeout``."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise BridgeError(grpc.StatusCode.UNAVAILABLE, f"bridge at {self.target} not reachable within {timeout}s") from None

    # ---------------------------------------------------------------------------------------- servers

    def get_identity(self, *, timeout: float | None = None) -> Identity:
        """Who the caller is, as the bridge sees it: principal, groups, how it authenticated (``none``, ``token``,
        ``oidc``, ``mtls``) and the servers whose approval requests it may decide (``GetIdentity``)."""
        resp = self._call(self._stub.GetIdentity, pb.GetIdentityRequest(), timeout)
        return cv.identity_from(resp)

    def list_servers(self, *, timeout: float | None = None) -> list[ServerInfo]:
        """The upstream MCP servers the operator configured."""
        resp = self._call(self._stub.ListServers, pb.ListServersRequest(), timeout)
        return [cv.server_from(s) for s in resp.servers]

    # --------------------------------------------------------------------------------------- sessions

    def create_session(
        self,
        server: str,
        handler: Handler | None = None,
        *,
        roots: Iterable[Root | Mapping[str, Any] | str] | None = None,
        protocol_version: str = "",
        client_info: Implementation | Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Session:
        """Open a session to the configured server ``server`` and wait until it is ready.

        ``handler`` (a :class:`~mcp_bridge.Handler`) answers the server's requests; the capabilities declared
        are exactly the methods it overrides. ``roots`` are static roots: they declare the roots capability and
        answer roots requests when the handler has no ``list_roots``. With a handler or roots, the session is
        attached to this client's host stream before this returns. If the server requires OAuth and the handler
        overrides ``handle_authorization``, the authorization request raised while this waits reaches it.
        """
        req, root_list = _base.create_session_request(server, handler, roots, protocol_version, client_info)
        # An upstream server that requires OAuth makes CreateSession wait for a person: the bridge raises an
        # authorization request before this side knows the session id and pushes it to every host stream of
        # the principal (replaying it to streams opened later). Open the stream first and route such requests
        # for this server to this handler until the session is attached.
        opening = self._host.core.begin_opening(server, handler) if overrides(handler, "handle_authorization") else None
        try:
            if opening is not None:
                self._host.start()
            resp = self._call(self._stub.CreateSession, req, timeout)
            session = Session(self, cv.session_from(resp.session))
            if handler is not None or root_list:
                try:
                    self._host_for(session.id).attach(session.id, handler, root_list, self._attach_timeout)
                except BaseException:
                    try:
                        session.close()
                    except BridgeError:
                        pass  # the attach error is the one to report
                    raise
            return session
        finally:
            if opening is not None:
                self._host.core.end_opening(opening)

    def serve_approvals(self, handler: Handler) -> None:
        """Decide tool calls that need approval (docs/adr/0080-approvals.md) with ``handler.handle_approval``.

        The bridge delivers the approval requests this client's principal may decide -- of any session, not
        only this client's -- on its host stream, which this opens if it is not open yet; those pending now are
        delivered at once. Without this, a client leaves approval requests pending for another approver.
        """
        if not overrides(handler, "handle_approval"):
            raise TypeError("serve_approvals needs a Handler that overrides handle_approval")
        self._host.core.set_approver(handler)
        self._host.start()
        # Those pending already: a stream that was open before did not replay them (one known is not run again).
        resp = self._call(self._stub.ListPendingRequests, pb.ListPendingRequestsRequest(session_id="approvals"), None)
        for sr in resp.requests:
            self._host.core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id=sr.session_id, server_request=sr)))

    def session(
        self,
        session_id: str,
        handler: Handler | None = None,
        *,
        roots: Iterable[Root | Mapping[str, Any] | str] | None = None,
        timeout: float | None = None,
    ) -> Session:
        """Use an existing session (e.g. after this process restarted), attaching ``handler`` to it.

        Requests the server made meanwhile are still pending and are delivered to the handler right away. The
        capabilities were fixed when the session was created.
        """
        info = self.get_session(session_id, timeout=timeout)
        session = Session(self, info)
        root_list = [cv.coerce_root(r) for r in roots] if roots is not None else None
        if handler is not None or root_list:
            self._host_for(session.id).attach(session.id, handler, root_list, self._attach_timeout)
        return session

    def get_session(self, session_id: str, *, timeout: float | None = None) -> SessionInfo:
        """A session's current state."""
        resp = self._call(self._stub.GetSession, pb.GetSessionRequest(session_id=session_id), timeout)
        return cv.session_from(resp.session)

    def list_sessions(self, *, timeout: float | None = None) -> list[SessionInfo]:
        """The caller's sessions, newest first (all pages)."""
        out: list[SessionInfo] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = self._call(self._stub.ListSessions, pb.ListSessionsRequest(page_token=token), timeout)
            out.extend(cv.session_from(s) for s in resp.sessions)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_sessions")

    def delete_session(self, session_id: str, *, timeout: float | None = None) -> None:
        """Close a session on the bridge."""
        self._host_for(session_id).detach(session_id)
        self._call(self._stub.DeleteSession, pb.DeleteSessionRequest(session_id=session_id), timeout)

    # ------------------------------------------------------------------------------------------ tests

    def _drop_host_stream(self) -> None:
        """Cancel the current host stream as if the connection broke; it reconnects (for tests and demos)."""
        for host in self._all_hosts():
            host.drop()


class Session:
    """One session to an upstream MCP server. Every method is a blocking call to the bridge.

    Protocol failures raise :class:`~mcp_bridge.BridgeError` (NotFoundError, InvalidArgumentError, ...); a tool
    that fails returns a result with ``is_error`` set. Use it as a context manager to close it at the end.
    """

    def __init__(self, client: Client, info: SessionInfo) -> None:
        self._client = client
        self.info = info
        self.id = info.session_id

    def __repr__(self) -> str:
        return f"Session(id={self.id!r}, server={self.info.server!r}, protocol={self.info.protocol_version!r})"

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, rpc: Callable[..., R], request: Any, timeout: float | None) -> R:
        return self._client._call(rpc, request, timeout)

    @property
    def _stub(self) -> pb_grpc.BridgeServiceStub:
        return self._client._stub

    def refresh(self, *, timeout: float | None = None) -> SessionInfo:
        """Fetch the session's current state into ``info`` and return it."""
        self.info = self._client.get_session(self.id, timeout=timeout)
        return self.info

    def close(self, *, timeout: float | None = None) -> None:
        """Close the session: detach it from the host stream and delete it on the bridge."""
        try:
            self._client.delete_session(self.id, timeout=timeout)
        except BridgeError as err:
            if err.code != grpc.StatusCode.NOT_FOUND:
                raise

    # ------------------------------------------------------------------------------------------ tools

    def list_tools(self, *, timeout: float | None = None) -> list[Tool]:
        """All the server's tools (every page)."""
        out: list[Tool] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = self._call(self._stub.ListTools, pb.ListToolsRequest(session_id=self.id, page_token=token), timeout)
            out.extend(cv.tool_from(t) for t in resp.tools)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_tools")

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        call_id: str = "",
        task_ttl: float | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | bool | None = None,
        resume: bool = False,
        detach: bool = False,
    ) -> CallToolResult:
        """Call a tool with ``arguments`` (a dict) and return its result.

        ``call_id`` tags the call so the handler can match server requests to it
        (``request.origin_call_id``, set where the bridge knows the call caused the request; a legacy push over
        stdio or SSE has none); without one the client makes one up (``call-<uuid>``). ``task_ttl`` (seconds, 0
        for the server's default) asks the server to run the call as a task (the result then carries ``task``;
        poll it with :meth:`get_task`). A timeout cancels the call upstream.

        A call that fails ``UNAVAILABLE`` (the connection dropped, the bridge restarted or is draining) is made
        again with the same call id, asking the bridge for that call's one outcome, until ``timeout`` (see
        :class:`RetryPolicy`; ``retry=False`` turns it off for this call). If the bridge cannot know whether the
        tool ran, this raises :class:`CallOutcomeUnknownError`. ``resume=True`` asks for the outcome of a call
        made before with ``call_id`` (e.g. by a process that died) instead of calling the tool. ``detach=True``
        (with a ``call_id``) lets the call run on when this call ends (a timeout, a dropped connection): resume it
        by its id, or end it with :meth:`cancel_call` (docs/adr/0105-detached-calls.md).
        """
        req = _base.call_tool_request(self.id, name, arguments, meta, call_id, task_ttl, resume=resume, detach=detach)
        resp = self._client._call_tool(req, timeout, retry)
        return cv.call_tool_result_from(resp.result, resp.call_id)

    def call_tool_stream(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        call_id: str = "",
        task_ttl: float | None = None,
        timeout: float | None = None,
        retry: RetryPolicy | bool | None = None,
        resume: bool = False,
        detach: bool = False,
    ) -> Iterator[StreamEvent]:
        """Call a tool and yield its :class:`Progress` and :class:`LogMessage` events (and notices of server
        requests it caused) as they happen, then its :class:`CallToolResult`, last. Closing the iterator early
        cancels the call.

        A stream that fails ``UNAVAILABLE`` is opened again with the same call id and ``resume``, as
        :meth:`call_tool` does: events already yielded may then be yielded again (a request notice of a request
        still pending, progress the server reports again); the result comes once."""
        req = _base.call_tool_request(self.id, name, arguments, meta, call_id, task_ttl, stream=True, resume=resume, detach=detach)
        client = self._client
        attempts = client._attempts(req, timeout, retry)
        while True:
            req.resume = attempts.resume
            t = attempts.timeout()
            start = time.monotonic()
            call = self._stub.StreamCallTool(req, metadata=_base.routed(client._metadata + _otel.outgoing(), req), timeout=t)
            try:
                for resp in call:
                    attempts.reached()
                    ev = _base.stream_event(resp)
                    if ev is not None:
                        yield ev
                return
            except grpc.RpcError as rpc_err:
                err = _base.call_error(rpc_err, t, start)
                err.call_id = req.call_id
                delay = attempts.retry_after(err)
                if delay is None:
                    raise err from None
                log.info("tool call stream %s lost (%s); opening it again in %.2fs to resume it", req.call_id, err, delay)
            finally:
                call.cancel()
            time.sleep(delay)

    # -------------------------------------------------------------------------------------- resources

    def list_resources(self, *, timeout: float | None = None) -> list[Resource]:
        """All the server's resources (every page)."""
        out: list[Resource] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = self._call(
                self._stub.ListResources, pb.ListResourcesRequest(session_id=self.id, page_token=token), timeout
            )
            out.extend(cv.resource_from(r) for r in resp.resources)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_resources")

    def list_resource_templates(self, *, timeout: float | None = None) -> list[ResourceTemplate]:
        """All the server's resource templates (every page)."""
        out: list[ResourceTemplate] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = self._call(
                self._stub.ListResourceTemplates,
                pb.ListResourceTemplatesRequest(session_id=self.id, page_token=token),
                timeout,
            )
            out.extend(cv.template_from(t) for t in resp.resource_templates)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_resource_templates")

    def read_resource(
        self, uri: str, *, meta: Mapping[str, Any] | None = None, call_id: str = "", timeout: float | None = None
    ) -> ReadResourceResult:
        """Read a resource. Raises NotFoundError if the server has no such resource."""
        req = pb.ReadResourceRequest(session_id=self.id, uri=uri, call_id=call_id)
        cv.set_struct(req, "meta", meta)
        return cv.read_resource_result_from(self._call(self._stub.ReadResource, req, timeout))

    def subscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """Subscribe to updates of a resource; they reach the handler as ``notifications/resources/updated``."""
        self._call(self._stub.SubscribeResource, pb.SubscribeResourceRequest(session_id=self.id, uri=uri), timeout)

    def unsubscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """End a subscription made with :meth:`subscribe`."""
        self._call(self._stub.UnsubscribeResource, pb.UnsubscribeResourceRequest(session_id=self.id, uri=uri), timeout)

    # ---------------------------------------------------------------------------------------- prompts

    def list_prompts(self, *, timeout: float | None = None) -> list[Prompt]:
        """All the server's prompts (every page)."""
        out: list[Prompt] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = self._call(self._stub.ListPrompts, pb.ListPromptsRequest(session_id=self.id, page_token=token), timeout)
            out.extend(cv.prompt_from(p) for p in resp.prompts)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_prompts")

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        meta: Mapping[str, Any] | None = None,
        call_id: str = "",
        timeout: float | None = None,
    ) -> GetPromptResult:
        """Render a prompt with ``arguments`` (a dict of strings)."""
        req = pb.GetPromptRequest(session_id=self.id, name=name, arguments=dict(arguments or {}), call_id=call_id)
        cv.set_struct(req, "meta", meta)
        return cv.get_prompt_result_from(self._call(self._stub.GetPrompt, req, timeout))

    def complete(
        self,
        *,
        argument: str,
        value: str = "",
        prompt: str | None = None,
        resource_template: str | None = None,
        context: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Completion:
        """Ask for completions of a prompt argument (``prompt=``) or a template variable (``resource_template=``)."""
        req = _base.complete_request(self.id, prompt, resource_template, argument, value, context)
        return cv.completion_from(self._call(self._stub.Complete, req, timeout))

    # ---------------------------------------------------------------------------------------- utility

    def set_log_level(self, level: str, *, timeout: float | None = None) -> None:
        """Set the lowest level of log messages the server sends (``debug`` ... ``emergency``)."""
        req = pb.SetLogLevelRequest(session_id=self.id, level=_base.level(level))
        self._call(self._stub.SetLogLevel, req, timeout)

    def cancel_call(self, call_id: str, *, timeout: float | None = None) -> None:
        """Cancel the call ``call_id`` in flight in this session (detached or not) upstream. A call id with no
        call in flight raises :class:`NotFoundError` (reason ``CALL_NOT_FOUND``)
        (docs/adr/0105-detached-calls.md)."""
        self._call(self._stub.CancelCall, pb.CancelCallRequest(session_id=self.id, call_id=call_id), timeout)

    def ping(self, *, timeout: float | None = None) -> float:
        """Check that the server responds; returns the round-trip time in seconds as the bridge measured it."""
        resp = self._call(self._stub.Ping, pb.PingRequest(session_id=self.id), timeout)
        return float(resp.latency.seconds + resp.latency.nanos / 1e9)

    def set_roots(self, roots: Iterable[Root | Mapping[str, Any] | str], *, timeout: float | None = None) -> list[Root]:
        """Replace the session's roots; servers are told (``notifications/roots/list_changed``)."""
        req, root_list = _base.set_roots_request(self.id, roots)
        resp = self._call(self._stub.SetRoots, req, timeout)
        self._client._host_for(self.id).core.set_roots(self.id, root_list)
        return [cv.root_from(r) for r in resp.roots]

    def get_task(self, task_id: str, *, timeout: float | None = None) -> tuple[Task, CallToolResult | None]:
        """A task's state and, once it completed, its result."""
        return _base.get_task_result(self._call(self._stub.GetTask, pb.GetTaskRequest(session_id=self.id, task_id=task_id), timeout))

    def cancel_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        """Ask the server to cancel a task."""
        resp = self._call(self._stub.CancelTask, pb.CancelTaskRequest(session_id=self.id, task_id=task_id), timeout)
        return cv.task_from(resp.task)

    # -------------------------------------------------------------------------------- server requests

    def pending_requests(self, *, timeout: float | None = None) -> list[ServerRequest]:
        """The server's requests waiting for an answer, oldest first. Answer one with ``request.respond(...)``
        (sent with RespondToRequest) -- for hosts that poll instead of attaching a handler."""
        resp = self._call(self._stub.ListPendingRequests, pb.ListPendingRequestsRequest(session_id=self.id), timeout)
        out: list[ServerRequest] = []
        for sr in resp.requests:
            r = request_from(sr)
            if r is not None:
                r._responder = _RpcResponder(self)
                out.append(r)
        return out


class _RpcResponder:
    """Answers requests with the RespondToRequest RPC (requests from Session.pending_requests)."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def send_answer(self, request: ServerRequest, answer: host_pb2.HostAnswer) -> bool:
        req = pb.RespondToRequestRequest(session_id=request.session_id, request_id=request.request_id, answer=answer)
        self._session._call(self._session._stub.RespondToRequest, req, None)
        return True

    def send_cancel(self, request: ServerRequest, reason: str) -> bool:
        return self.send_answer(request, _base.cancel_answer(request, reason))


# ------------------------------------------------------------------------------------ the host stream


async def _await(a: Any) -> Any:
    return await a


class _SyncHostStream:
    """Runs the Connect stream on a background thread, reconnecting with exponential backoff."""

    def __init__(
        self,
        stub: pb_grpc.BridgeServiceStub,
        metadata: tuple[tuple[str, str], ...],
        max_workers: int,
        backoff: tuple[float, float],
        replica: str = "",
    ) -> None:
        self.replica = replica  # the bridge replica this stream goes to; "" for a bridge without replicas
        self._stub = stub
        self._metadata = metadata
        self._backoff = backoff
        self.core = HostCore()
        self.core.spawn = self._spawn
        self.core.notify = self._notify
        self._workers = concurrent.futures.ThreadPoolExecutor(max_workers, thread_name_prefix="mcp-bridge-handler")
        self._notifier = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mcp-bridge-notify")
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._wake = threading.Event()
        self._call: Any = None
        self.connects = 0  # streams opened so far (for tests)

    def attach(self, session_id: str, handler: Handler | None, roots: list[Root] | None, timeout: float) -> None:
        fut = self.core.add_session(session_id, handler, roots)
        self._ensure_started()
        try:
            fut.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            self.core.remove_session(session_id)
            raise BridgeError(
                grpc.StatusCode.UNAVAILABLE, f"the host stream did not attach session {session_id} within {timeout}s"
            ) from None

    def detach(self, session_id: str) -> None:
        self.core.remove_session(session_id)

    @property
    def ended(self) -> bool:
        """Whether the stream has stopped for good: closed, or its replica died."""
        return self._closed.is_set()

    def start(self) -> None:
        """Open the host stream (attached to nothing yet) unless it runs already."""
        self._ensure_started()

    def _ensure_started(self) -> None:
        with self._lock:
            if self._thread is None and not self._closed.is_set():
                self._thread = threading.Thread(target=self._run, name="mcp-bridge-host-stream", daemon=True)
                self._thread.start()

    def drop(self) -> None:
        call = self._call
        if call is not None:
            call.cancel()

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        self.drop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
        self._workers.shutdown(wait=False, cancel_futures=True)
        self._notifier.shutdown(wait=False, cancel_futures=True)

    def _run(self) -> None:
        initial, maximum = self._backoff
        delay = initial
        while not self._closed.is_set():
            outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()

            def requests() -> Iterator[host_pb2.ConnectRequest]:
                while True:
                    msg = outbox.get()  # noqa: B023 -- runs within this attempt
                    if msg is _STOP:
                        return
                    yield msg

            got_response = False
            try:
                call = self._stub.Connect(requests(), metadata=self._metadata)
                self._call = call
                self.connects += 1
                self.core.stream_up(outbox.put)
                if self._closed.is_set():
                    call.cancel()
                for resp in call:
                    if not got_response:
                        got_response = True
                        delay = initial
                    self.core.on_response(resp)
                log.info("host stream ended by the bridge; reconnecting")
            except grpc.RpcError as err:
                if not self._closed.is_set():
                    e = from_rpc_error(err)
                    if e.reason == reasons.REPLICA_UNAVAILABLE and self.replica:
                        # The replica is gone, and its sessions with it: they are forgotten, and the stream ends
                        # (Client._host_for opens a new one for a new session on a replica of that name).
                        log.warning("host stream to replica %s: %s; its sessions are lost", self.replica, e)
                        self.core.fail_attaches(e)
                        for sid in self.core.session_ids():
                            self.core.remove_session(sid, detach=False)
                        self._closed.set()
                    elif _base.is_terminal(e.code) or e.reason == reasons.REPLICA_UNAVAILABLE:
                        log.error("host stream refused (%s); retrying in %.2fs", e, maximum)
                        self.core.fail_attaches(e)
                        delay = maximum
                    else:
                        log.info("host stream broke (%s); reconnecting in %.2fs", e, delay)
            except Exception:  # noqa: BLE001 - never let the stream thread die
                log.exception("host stream failed; reconnecting")
            finally:
                self.core.stream_down()
                outbox.put(_STOP)
                self._call = None
            if self._closed.is_set():
                return
            self._wake.wait(delay * random.uniform(0.8, 1.2))
            self._wake.clear()
            delay = min(delay * 2, maximum)

    # handler invocation

    def _spawn(self, request: ServerRequest, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self._workers.submit(self._invoke, request, fn, args)
        except RuntimeError:  # executor shut down: the client is closing
            log.debug("client closing; not handling %s", request.request_id)

    def _invoke(self, request: ServerRequest, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            with _otel.current(request.trace_context):
                result = fn(*args)
            if isinstance(result, concurrent.futures.Future):
                result.add_done_callback(lambda f: self._future_done(request, f))
                return
            if inspect.isawaitable(result):
                result = asyncio.run(_await(result))
            self.core.finish(request, result)
        except Exception as exc:  # noqa: BLE001 - a handler error is answered, never raised
            self.core.fail(request, exc)

    def _future_done(self, request: ServerRequest, fut: concurrent.futures.Future[Any]) -> None:
        try:
            result = fut.result()
        except BaseException as exc:  # noqa: BLE001
            self.core.fail(request, exc)
            return
        self.core.finish(request, result)

    def _notify(self, handler: Handler | None, method: str, params: dict[str, Any]) -> None:
        try:
            self._notifier.submit(self._deliver, handler, method, params)
        except RuntimeError:
            pass

    @staticmethod
    def _deliver(handler: Handler | None, method: str, params: dict[str, Any]) -> None:
        if handler is None:
            return
        try:
            result = handler.handle_notification(method, params)
            if inspect.isawaitable(result):
                asyncio.run(_await(result))
        except Exception:  # noqa: BLE001 - a failing observer never breaks the stream
            log.exception("handle_notification(%r) failed", method)
