"""The asyncio client: :class:`AsyncClient` and :class:`AsyncSession` (grpc.aio).

Every call is a coroutine. ``async def`` handler methods run as tasks on the client's event loop; plain
methods run on a worker thread (``asyncio.to_thread``), so a blocking handler never stalls the loop. The host
stream is a task that reconnects with exponential backoff.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar

import grpc
import grpc.aio

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


class AsyncClient:
    """A connection to an mcp-bridge over gRPC, for asyncio programs.

    Takes the same arguments as :class:`mcp_bridge.Client` (except ``max_workers``). Create it inside a running
    event loop and use it with ``async with``, or ``await client.close()``.
    """

    def __init__(
        self,
        target: str = _base.DEFAULT_TARGET,
        *,
        token: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        timeout: float | None = None,
        reconnect_backoff: tuple[float, float] = (0.1, 5.0),
        attach_timeout: float = 15.0,
        max_message_bytes: int | None = 16 << 20,
        options: Iterable[tuple[str, Any]] | None = None,
        metadata: Iterable[tuple[str, str]] | None = None,
        retry: RetryPolicy | bool = True,
    ) -> None:
        opts = _base.channel_options(max_message_bytes, options, reconnect_backoff)
        if credentials is not None:
            self._channel = grpc.aio.secure_channel(target, credentials, options=opts)
        else:
            self._channel = grpc.aio.insecure_channel(target, options=opts)
        self._stub = pb_grpc.BridgeServiceStub(self._channel)
        self._metadata = _base.metadata(token, metadata)
        self._timeout = timeout
        self._retry = _retry.policy_of(retry)
        self._attach_timeout = attach_timeout
        self._host = _AsyncHostStream(self._stub, self._metadata, reconnect_backoff)
        # One host stream per replica behind a proxy, routed by the id of the session that opened it (see
        # Client._host_for); sessions of a bridge without replicas use _host.
        self._replica_hosts: dict[str, _AsyncHostStream] = {}
        self._reconnect_backoff = reconnect_backoff
        self.target = target

    async def _call(self, rpc: Callable[..., Awaitable[R]], request: Any, timeout: float | None = None) -> R:
        t = timeout if timeout is not None else self._timeout
        start = time.monotonic()
        try:
            return await rpc(request, metadata=_base.routed(self._metadata + _otel.outgoing(), request), timeout=t)
        except grpc.RpcError as err:
            raise _base.call_error(err, t, start) from None

    def _attempts(self, req: Any, timeout: float | None, retry: RetryPolicy | bool | None) -> _retry.Attempts:
        policy = self._retry if retry is None else _retry.policy_of(retry)
        return _retry.Attempts(policy, timeout if timeout is not None else self._timeout, resume=req.resume)

    async def _call_tool(self, req: pb.CallToolRequest, timeout: float | None, retry: RetryPolicy | bool | None) -> pb.CallToolResponse:
        """CallTool, called again with the same call id (and ``resume``) while it fails UNAVAILABLE (_retry)."""
        attempts = self._attempts(req, timeout, retry)
        while True:
            req.resume = attempts.resume
            try:
                return await self._call(self._stub.CallTool, req, attempts.timeout())
            except BridgeError as err:
                err.call_id = req.call_id
                delay = attempts.retry_after(err)
                if delay is None:
                    raise
                log.info("tool call %s lost (%s); calling again in %.2fs to resume it", req.call_id, err, delay)
            await asyncio.sleep(delay)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _host_for(self, session_id: str) -> _AsyncHostStream:
        """The host stream that carries the requests of ``session_id``: the one to its replica."""
        replica = _base.session_replica(session_id)
        if not replica:
            return self._host
        host = self._replica_hosts.get(replica)
        if host is None or host.ended:  # an ended stream (its replica died) holds nothing to release
            md = (*self._metadata, (_base.ROUTING_KEY, session_id))
            host = self._replica_hosts[replica] = _AsyncHostStream(self._stub, md, self._reconnect_backoff, replica)
        return host

    async def close(self) -> None:
        """Stop the host stream and close the channel. Sessions stay open on the bridge."""
        for host in [self._host, *self._replica_hosts.values()]:
            await host.close()
        await self._channel.close()

    async def wait_ready(self, timeout: float = 10.0) -> None:
        """Wait until the channel to the bridge is connected; raises UnavailableError after ``timeout``."""
        try:
            await asyncio.wait_for(self._channel.channel_ready(), timeout)
        except TimeoutError:
            raise BridgeError(grpc.StatusCode.UNAVAILABLE, f"bridge at {self.target} not reachable within {timeout}s") from None

    async def get_identity(self, *, timeout: float | None = None) -> Identity:
        """Who the caller is, as the bridge sees it: principal, groups, how it authenticated (``none``, ``token``,
        ``oidc``, ``mtls``) and the servers whose approval requests it may decide (``GetIdentity``)."""
        resp = await self._call(self._stub.GetIdentity, pb.GetIdentityRequest(), timeout)
        return cv.identity_from(resp)

    async def list_servers(self, *, timeout: float | None = None) -> list[ServerInfo]:
        """The upstream MCP servers the operator configured."""
        resp = await self._call(self._stub.ListServers, pb.ListServersRequest(), timeout)
        return [cv.server_from(s) for s in resp.servers]

    async def create_session(
        self,
        server: str,
        handler: Handler | None = None,
        *,
        roots: Iterable[Root | Mapping[str, Any] | str] | None = None,
        protocol_version: str = "",
        client_info: Implementation | Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> AsyncSession:
        """Open a session to the configured server ``server``; see :meth:`mcp_bridge.Client.create_session`."""
        req, root_list = _base.create_session_request(server, handler, roots, protocol_version, client_info)
        # Authorization requests raised while CreateSession waits (upstream OAuth): see Client.create_session.
        opening = self._host.core.begin_opening(server, handler) if overrides(handler, "handle_authorization") else None
        try:
            if opening is not None:
                self._host.start()
            resp = await self._call(self._stub.CreateSession, req, timeout)
            session = AsyncSession(self, cv.session_from(resp.session))
            if handler is not None or root_list:
                try:
                    await self._host_for(session.id).attach(session.id, handler, root_list, self._attach_timeout)
                except BaseException:
                    try:
                        await session.close()
                    except BridgeError:
                        pass  # the attach error is the one to report
                    raise
            return session
        finally:
            if opening is not None:
                self._host.core.end_opening(opening)

    async def serve_approvals(self, handler: Handler) -> None:
        """Decide tool calls that need approval with ``handler.handle_approval``; see
        :meth:`mcp_bridge.Client.serve_approvals`."""
        if not overrides(handler, "handle_approval"):
            raise TypeError("serve_approvals needs a Handler that overrides handle_approval")
        self._host.core.set_approver(handler)
        self._host.start()
        resp = await self._call(self._stub.ListPendingRequests, pb.ListPendingRequestsRequest(session_id="approvals"), None)
        for sr in resp.requests:
            self._host.core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id=sr.session_id, server_request=sr)))

    async def session(
        self,
        session_id: str,
        handler: Handler | None = None,
        *,
        roots: Iterable[Root | Mapping[str, Any] | str] | None = None,
        timeout: float | None = None,
    ) -> AsyncSession:
        """Use an existing session, attaching ``handler``; pending requests are delivered to it right away."""
        info = await self.get_session(session_id, timeout=timeout)
        session = AsyncSession(self, info)
        root_list = [cv.coerce_root(r) for r in roots] if roots is not None else None
        if handler is not None or root_list:
            await self._host_for(session.id).attach(session.id, handler, root_list, self._attach_timeout)
        return session

    async def get_session(self, session_id: str, *, timeout: float | None = None) -> SessionInfo:
        """A session's current state."""
        resp = await self._call(self._stub.GetSession, pb.GetSessionRequest(session_id=session_id), timeout)
        return cv.session_from(resp.session)

    async def list_sessions(self, *, timeout: float | None = None) -> list[SessionInfo]:
        """The caller's sessions, newest first (all pages)."""
        out: list[SessionInfo] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = await self._call(self._stub.ListSessions, pb.ListSessionsRequest(page_token=token), timeout)
            out.extend(cv.session_from(s) for s in resp.sessions)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_sessions")

    async def delete_session(self, session_id: str, *, timeout: float | None = None) -> None:
        """Close a session on the bridge."""
        self._host_for(session_id).detach(session_id)
        await self._call(self._stub.DeleteSession, pb.DeleteSessionRequest(session_id=session_id), timeout)

    def _drop_host_stream(self) -> None:
        """Cancel the current host stream as if the connection broke; it reconnects (for tests and demos)."""
        for host in [self._host, *self._replica_hosts.values()]:
            host.drop()


class AsyncSession:
    """One session to an upstream MCP server; the coroutine twin of :class:`mcp_bridge.Session`."""

    def __init__(self, client: AsyncClient, info: SessionInfo) -> None:
        self._client = client
        self.info = info
        self.id = info.session_id

    def __repr__(self) -> str:
        return f"AsyncSession(id={self.id!r}, server={self.info.server!r}, protocol={self.info.protocol_version!r})"

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _call(self, rpc: Callable[..., Awaitable[R]], request: Any, timeout: float | None) -> R:
        return await self._client._call(rpc, request, timeout)

    @property
    def _stub(self) -> pb_grpc.BridgeServiceStub:
        return self._client._stub

    async def refresh(self, *, timeout: float | None = None) -> SessionInfo:
        """Fetch the session's current state into ``info`` and return it."""
        self.info = await self._client.get_session(self.id, timeout=timeout)
        return self.info

    async def close(self, *, timeout: float | None = None) -> None:
        """Close the session: detach it from the host stream and delete it on the bridge."""
        try:
            await self._client.delete_session(self.id, timeout=timeout)
        except BridgeError as err:
            if err.code != grpc.StatusCode.NOT_FOUND:
                raise

    async def list_tools(self, *, timeout: float | None = None) -> list[Tool]:
        """All the server's tools (every page)."""
        out: list[Tool] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = await self._call(self._stub.ListTools, pb.ListToolsRequest(session_id=self.id, page_token=token), timeout)
            out.extend(cv.tool_from(t) for t in resp.tools)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_tools")

    async def call_tool(
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
        """Call a tool with ``arguments`` (a dict) and return its result. Cancelling the task cancels the call
        (and its retries). A call lost to ``UNAVAILABLE`` is made again with the same call id to get its one
        outcome, as :meth:`mcp_bridge.Session.call_tool` describes."""
        req = _base.call_tool_request(self.id, name, arguments, meta, call_id, task_ttl, resume=resume, detach=detach)
        resp = await self._client._call_tool(req, timeout, retry)
        return cv.call_tool_result_from(resp.result, resp.call_id)

    async def call_tool_stream(
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
    ) -> AsyncIterator[StreamEvent]:
        """Call a tool and yield its progress and log events, then its :class:`CallToolResult`, last. A stream
        lost to ``UNAVAILABLE`` is opened again with the same call id and ``resume``; events already yielded may
        be yielded again (see :meth:`mcp_bridge.Session.call_tool_stream`)."""
        req = _base.call_tool_request(self.id, name, arguments, meta, call_id, task_ttl, stream=True, resume=resume, detach=detach)
        client = self._client
        attempts = client._attempts(req, timeout, retry)
        while True:
            req.resume = attempts.resume
            t = attempts.timeout()
            start = time.monotonic()
            call = self._stub.StreamCallTool(req, metadata=_base.routed(client._metadata + _otel.outgoing(), req), timeout=t)
            try:
                async for resp in call:
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
            await asyncio.sleep(delay)

    async def list_resources(self, *, timeout: float | None = None) -> list[Resource]:
        """All the server's resources (every page)."""
        out: list[Resource] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = await self._call(
                self._stub.ListResources, pb.ListResourcesRequest(session_id=self.id, page_token=token), timeout
            )
            out.extend(cv.resource_from(r) for r in resp.resources)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_resources")

    async def list_resource_templates(self, *, timeout: float | None = None) -> list[ResourceTemplate]:
        """All the server's resource templates (every page)."""
        out: list[ResourceTemplate] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = await self._call(
                self._stub.ListResourceTemplates,
                pb.ListResourceTemplatesRequest(session_id=self.id, page_token=token),
                timeout,
            )
            out.extend(cv.template_from(t) for t in resp.resource_templates)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_resource_templates")

    async def read_resource(
        self, uri: str, *, meta: Mapping[str, Any] | None = None, call_id: str = "", timeout: float | None = None
    ) -> ReadResourceResult:
        """Read a resource. Raises NotFoundError if the server has no such resource."""
        req = pb.ReadResourceRequest(session_id=self.id, uri=uri, call_id=call_id)
        cv.set_struct(req, "meta", meta)
        return cv.read_resource_result_from(await self._call(self._stub.ReadResource, req, timeout))

    async def subscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """Subscribe to updates of a resource (``notifications/resources/updated`` reaches the handler)."""
        await self._call(self._stub.SubscribeResource, pb.SubscribeResourceRequest(session_id=self.id, uri=uri), timeout)

    async def unsubscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """End a subscription made with :meth:`subscribe`."""
        await self._call(
            self._stub.UnsubscribeResource, pb.UnsubscribeResourceRequest(session_id=self.id, uri=uri), timeout
        )

    async def list_prompts(self, *, timeout: float | None = None) -> list[Prompt]:
        """All the server's prompts (every page)."""
        out: list[Prompt] = []
        token, seen = "", set()  # type: ignore[var-annotated]
        while True:
            resp = await self._call(
                self._stub.ListPrompts, pb.ListPromptsRequest(session_id=self.id, page_token=token), timeout
            )
            out.extend(cv.prompt_from(p) for p in resp.prompts)
            token = resp.next_page_token
            if not token:
                return out
            _base.check_page_token(seen, token, "list_prompts")

    async def get_prompt(
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
        return cv.get_prompt_result_from(await self._call(self._stub.GetPrompt, req, timeout))

    async def complete(
        self,
        *,
        argument: str,
        value: str = "",
        prompt: str | None = None,
        resource_template: str | None = None,
        context: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> Completion:
        """Ask for completions of a prompt argument or a resource template variable."""
        req = _base.complete_request(self.id, prompt, resource_template, argument, value, context)
        return cv.completion_from(await self._call(self._stub.Complete, req, timeout))

    async def set_log_level(self, level: str, *, timeout: float | None = None) -> None:
        """Set the lowest level of log messages the server sends."""
        await self._call(self._stub.SetLogLevel, pb.SetLogLevelRequest(session_id=self.id, level=_base.level(level)), timeout)

    async def cancel_call(self, call_id: str, *, timeout: float | None = None) -> None:
        """Cancel the call ``call_id`` in flight in this session upstream (see :meth:`mcp_bridge.Session.cancel_call`)."""
        await self._call(self._stub.CancelCall, pb.CancelCallRequest(session_id=self.id, call_id=call_id), timeout)

    async def ping(self, *, timeout: float | None = None) -> float:
        """Check that the server responds; returns the round-trip time in seconds."""
        resp = await self._call(self._stub.Ping, pb.PingRequest(session_id=self.id), timeout)
        return float(resp.latency.seconds + resp.latency.nanos / 1e9)

    async def set_roots(self, roots: Iterable[Root | Mapping[str, Any] | str], *, timeout: float | None = None) -> list[Root]:
        """Replace the session's roots; servers are told."""
        req, root_list = _base.set_roots_request(self.id, roots)
        resp = await self._call(self._stub.SetRoots, req, timeout)
        self._client._host_for(self.id).core.set_roots(self.id, root_list)
        return [cv.root_from(r) for r in resp.roots]

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> tuple[Task, CallToolResult | None]:
        """A task's state and, once it completed, its result."""
        resp = await self._call(self._stub.GetTask, pb.GetTaskRequest(session_id=self.id, task_id=task_id), timeout)
        return _base.get_task_result(resp)

    async def cancel_task(self, task_id: str, *, timeout: float | None = None) -> Task:
        """Ask the server to cancel a task."""
        resp = await self._call(self._stub.CancelTask, pb.CancelTaskRequest(session_id=self.id, task_id=task_id), timeout)
        return cv.task_from(resp.task)

    async def pending_requests(self, *, timeout: float | None = None) -> list[ServerRequest]:
        """The server's requests waiting for an answer, oldest first. ``request.respond(...)`` answers one with
        RespondToRequest; it blocks briefly, so call it from a thread (or use the handler instead)."""
        resp = await self._call(self._stub.ListPendingRequests, pb.ListPendingRequestsRequest(session_id=self.id), timeout)
        out: list[ServerRequest] = []
        for sr in resp.requests:
            r = request_from(sr)
            if r is not None:
                r._responder = _AsyncRpcResponder(self)
                out.append(r)
        return out

    async def respond(self, request: ServerRequest, answer: Any) -> None:
        """Answer a request from :meth:`pending_requests` with RespondToRequest, as a coroutine."""
        req = pb.RespondToRequestRequest(
            session_id=request.session_id, request_id=request.request_id, answer=request._answer(answer)
        )
        await self._call(self._stub.RespondToRequest, req, None)


class _AsyncRpcResponder:
    """Answers with RespondToRequest from synchronous code: schedules the call on the client's loop."""

    def __init__(self, session: AsyncSession) -> None:
        self._session = session
        self._loop = asyncio.get_running_loop()

    def send_answer(self, request: ServerRequest, answer: host_pb2.HostAnswer) -> bool:
        req = pb.RespondToRequestRequest(session_id=request.session_id, request_id=request.request_id, answer=answer)
        coro = self._session._call(self._session._stub.RespondToRequest, req, None)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            # On the loop itself nothing can wait here; errors are logged (AsyncSession.respond raises them).
            task = self._loop.create_task(coro)
            task.add_done_callback(_log_failure)
            return True
        asyncio.run_coroutine_threadsafe(coro, self._loop).result()  # from a thread: wait, so errors surface
        return True

    def send_cancel(self, request: ServerRequest, reason: str) -> bool:
        return self.send_answer(request, _base.cancel_answer(request, reason))


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("RespondToRequest failed: %s", task.exception())


class _AsyncHostStream:
    """Runs the Connect stream as a task on the client's event loop, reconnecting with exponential backoff."""

    def __init__(
        self,
        stub: pb_grpc.BridgeServiceStub,
        metadata: tuple[tuple[str, str], ...],
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
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._call: Any = None
        self._closed = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._notes: asyncio.Queue[tuple[Any, str, dict[str, Any]]] | None = None
        self._notes_task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self.connects = 0

    async def attach(self, session_id: str, handler: Handler | None, roots: list[Root] | None, timeout: float) -> None:
        fut = self.core.add_session(session_id, handler, roots)
        self._ensure_started()
        try:
            await asyncio.wait_for(asyncio.wrap_future(fut), timeout)
        except TimeoutError:
            self.core.remove_session(session_id)
            raise BridgeError(
                grpc.StatusCode.UNAVAILABLE, f"the host stream did not attach session {session_id} within {timeout}s"
            ) from None

    def detach(self, session_id: str) -> None:
        self.core.remove_session(session_id)

    @property
    def ended(self) -> bool:
        """Whether the stream has stopped for good: closed, or its replica died."""
        return self._closed

    def start(self) -> None:
        """Open the host stream (attached to nothing yet) unless it runs already."""
        self._ensure_started()

    def _ensure_started(self) -> None:
        if self._task is None and not self._closed:
            self._loop = asyncio.get_running_loop()
            self._notes = asyncio.Queue()
            self._wake = asyncio.Event()
            self._task = self._loop.create_task(self._run(), name="mcp-bridge-host-stream")
            self._notes_task = self._loop.create_task(self._deliver_notes(), name="mcp-bridge-notify")

    def drop(self) -> None:
        call = self._call
        if call is not None:
            call.cancel()

    async def close(self) -> None:
        self._closed = True
        self.drop()
        for t in (self._task, self._notes_task, *self._tasks):
            if t is not None:
                t.cancel()
        for t in (self._task, self._notes_task):
            if t is not None:
                try:
                    await t
                except (asyncio.CancelledError, Exception):  # noqa: BLE001
                    pass

    async def _run(self) -> None:
        assert self._loop is not None and self._wake is not None
        loop = self._loop
        initial, maximum = self._backoff
        delay = initial
        while not self._closed:
            outbox: asyncio.Queue[host_pb2.ConnectRequest | None] = asyncio.Queue()

            def send(msg: host_pb2.ConnectRequest) -> None:
                # Thread-safe: handlers may answer from any thread.
                loop.call_soon_threadsafe(outbox.put_nowait, msg)  # noqa: B023 -- this attempt's queue

            async def requests() -> AsyncIterator[host_pb2.ConnectRequest]:
                while True:
                    msg = await outbox.get()  # noqa: B023 -- runs within this attempt
                    if msg is None:
                        return
                    yield msg

            got_response = False
            try:
                call = self._stub.Connect(requests(), metadata=self._metadata)
                self._call = call
                self.connects += 1
                self.core.stream_up(send)
                async for resp in call:
                    if not got_response:
                        got_response = True
                        delay = initial
                    self.core.on_response(resp)
                log.info("host stream ended by the bridge; reconnecting")
            except asyncio.CancelledError:
                if self._closed:
                    self.core.stream_down()
                    raise
                log.info("host stream cancelled; reconnecting in %.2fs", delay)
            except grpc.RpcError as err:
                e = from_rpc_error(err)
                if e.reason == reasons.REPLICA_UNAVAILABLE and self.replica:
                    # The replica is gone, and its sessions with it: they are forgotten, and the stream ends
                    # (AsyncClient._host_for opens a new one for a new session on a replica of that name).
                    log.warning("host stream to replica %s: %s; its sessions are lost", self.replica, e)
                    self.core.fail_attaches(e)
                    for sid in self.core.session_ids():
                        self.core.remove_session(sid, detach=False)
                    self._closed = True
                    if self._notes_task is not None:
                        self._notes_task.cancel()
                elif _base.is_terminal(e.code) or e.reason == reasons.REPLICA_UNAVAILABLE:
                    log.error("host stream refused (%s); retrying in %.2fs", e, maximum)
                    self.core.fail_attaches(e)
                    delay = maximum
                else:
                    log.info("host stream broke (%s); reconnecting in %.2fs", e, delay)
            except Exception:  # noqa: BLE001 - never let the stream task die
                log.exception("host stream failed; reconnecting")
            finally:
                self.core.stream_down()
                outbox.put_nowait(None)
                self._call = None
            if self._closed:
                return
            try:
                await asyncio.wait_for(self._wake.wait(), delay * random.uniform(0.8, 1.2))
            except TimeoutError:
                pass
            self._wake.clear()
            delay = min(delay * 2, maximum)

    # handler invocation (called by the core from the loop thread, inside on_response)

    def _spawn(self, request: ServerRequest, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        assert self._loop is not None
        task = self._loop.create_task(self._invoke(request, fn, args))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _invoke(self, request: ServerRequest, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        # The task runs in a copy of the context: the request's trace context stays current for the handler
        # (and for a sync handler's thread, which asyncio.to_thread runs in a copy of it).
        _otel.attach(request.trace_context)
        try:
            if inspect.iscoroutinefunction(fn):
                result = await fn(*args)
            else:
                result = await asyncio.to_thread(fn, *args)
            while True:
                if isinstance(result, concurrent.futures.Future):
                    result = await asyncio.wrap_future(result)
                elif inspect.isawaitable(result):
                    result = await result
                else:
                    break
            self.core.finish(request, result)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a handler error is answered, never raised
            self.core.fail(request, exc)

    def _notify(self, handler: Handler | None, method: str, params: dict[str, Any]) -> None:
        if self._notes is not None:
            self._notes.put_nowait((handler, method, params))

    async def _deliver_notes(self) -> None:
        assert self._notes is not None
        while True:
            handler, method, params = await self._notes.get()
            try:
                fn = handler.handle_notification
                if inspect.iscoroutinefunction(fn):
                    await fn(method, params)
                else:
                    result = await asyncio.to_thread(fn, method, params)
                    if inspect.isawaitable(result):
                        await result
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a failing observer never breaks the stream
                log.exception("handle_notification(%r) failed", method)
