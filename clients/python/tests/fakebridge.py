"""An in-process stand-in for the bridge's session and host-stream RPCs, for unit tests of the host stream.

It speaks real gRPC (a grpc.server on a loopback port), so the client code under test is exactly what runs
against the real binary; only the bridge's behaviour is scripted: tests push server requests and events,
read the answers that came back, and break streams at will. Integration tests against bin/mcp-bridge are in
test_integration_*.py.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import queue
import threading
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import grpc
from google.rpc import code_pb2, status_pb2

from mcp_bridge._gen.mcpbridge.v1 import bridge_service_pb2 as pb
from mcp_bridge._gen.mcpbridge.v1 import bridge_service_pb2_grpc as pb_grpc
from mcp_bridge._gen.mcpbridge.v1 import host_pb2, mcp_pb2, session_pb2

_KILL = object()
_END = object()


class _Stream:
    def __init__(self) -> None:
        self.out: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.sessions: set[str] = set()
        self.alive = True


class FakeBridge(pb_grpc.BridgeServiceServicer):
    """Scripted BridgeService: CreateSession/GetSession/DeleteSession and Connect."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.streams: list[_Stream] = []
        self.sessions: dict[str, pb.CreateSessionRequest] = {}
        self.pending: dict[str, host_pb2.ServerRequest] = {}
        self.answers: dict[str, list[host_pb2.ConnectRequest]] = defaultdict(list)
        self.reject_next: dict[str, status_pb2.Status] = {}
        self.refuse_connect: grpc.StatusCode | None = None
        self.attach_count = 0
        self.opening: set[str] = set()  # authorization requests of sessions being created
        self.opening_session_id = ""  # the session id they carry; "" = the id the session will have
        self.opening_timeout = 10.0
        self.connects = 0
        self.tool_calls: list[Any] = []  # CallTool / StreamCallTool requests, in order
        self.call_failures: list[tuple[grpc.StatusCode, str, str]] = []  # (code, message, reason) per attempt
        self.cancelled: list[str] = []  # CancelCall's call ids, in order
        self._ids = itertools.count(1)
        self._seq = itertools.count(1)

    # ----------------------------------------------------------------------------------- sessions

    # Servers whose sessions need a person's OAuth authorization while CreateSession waits, as the bridge does
    # for an upstream with `auth: {type: oauth}`: the request goes to every Connect stream of the caller,
    # attached to any session or none (and to streams that connect while it is pending).
    OAUTH_SERVERS = ("secured", "secured-2")
    REDIRECT = "http://127.0.0.1/mcp-bridge/oauth/callback"

    def CreateSession(self, request: pb.CreateSessionRequest, context: grpc.ServicerContext) -> pb.CreateSessionResponse:
        if request.server not in ("demo", *self.OAUTH_SERVERS):
            context.abort(grpc.StatusCode.NOT_FOUND, f"no server {request.server!r}")
        sid = f"s{next(self._ids)}"
        if request.server in self.OAUTH_SERVERS:
            self._authorize(sid, request.server, context)
        with self.lock:
            self.sessions[sid] = request
        return pb.CreateSessionResponse(session=self._session(sid))

    def _authorize(self, sid: str, server: str, context: grpc.ServicerContext) -> None:
        rid = f"auth-{sid}"
        sr = host_pb2.ServerRequest(request_id=rid, session_id=self.opening_session_id or sid)
        sr.authorization.authorization_url = f"http://127.0.0.1:1/authorize?state={rid}"
        sr.authorization.redirect_url = self.REDIRECT
        sr.authorization.server_name = server
        with self.lock:
            self.pending[rid] = sr
            self.opening.add(rid)
            for s in self.streams:
                s.out.put(self._event(sr.session_id, server_request=sr))
            self.lock.notify_all()
            answered = self.lock.wait_for(lambda: rid not in self.pending, self.opening_timeout)
            self.opening.discard(rid)
            if not answered:
                del self.pending[rid]
                for s in self.streams:
                    ended = host_pb2.RequestEnded(request_id=rid, session_id=sr.session_id, outcome=host_pb2.REQUEST_OUTCOME_TIMED_OUT)
                    s.out.put(self._event(sr.session_id, request_ended=ended))
                context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "nobody authorized")
            answer = self.answers[rid][-1]
        if answer.WhichOneof("action") != "reply" or not answer.reply.answer.authorization.redirect_url.startswith(self.REDIRECT):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, f"authorization of {server} failed")

    def _session(self, sid: str) -> session_pb2.Session:
        req = self.sessions[sid]
        s = session_pb2.Session(
            session_id=sid, server=req.server, state=session_pb2.SESSION_STATE_READY, protocol_version="2025-11-25"
        )
        s.host_capabilities.CopyFrom(req.host_capabilities)
        s.roots.extend(req.roots)
        s.server_info.name = "fake"
        return s

    def GetSession(self, request: pb.GetSessionRequest, context: grpc.ServicerContext) -> pb.GetSessionResponse:
        with self.lock:
            if request.session_id not in self.sessions:
                context.abort(grpc.StatusCode.NOT_FOUND, "no such session")
            return pb.GetSessionResponse(session=self._session(request.session_id))

    def DeleteSession(self, request: pb.DeleteSessionRequest, context: grpc.ServicerContext) -> pb.DeleteSessionResponse:
        with self.lock:
            if self.sessions.pop(request.session_id, None) is None:
                context.abort(grpc.StatusCode.NOT_FOUND, "no such session")
        return pb.DeleteSessionResponse()

    # ------------------------------------------------------------------------------------- paging

    TOOL_PAGES = {"": (["a", "b"], "p2"), "p2": (["c"], "p3"), "p3": (["d"], "")}

    def ListTools(self, request: pb.ListToolsRequest, context: grpc.ServicerContext) -> pb.ListToolsResponse:
        if request.page_token not in self.TOOL_PAGES:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad page token")
        names, token = self.TOOL_PAGES[request.page_token]
        return pb.ListToolsResponse(tools=[mcp_pb2.Tool(name=n) for n in names], next_page_token=token)

    def ListResources(self, request: pb.ListResourcesRequest, context: grpc.ServicerContext) -> pb.ListResourcesResponse:
        # A broken server that returns the same cursor forever.
        return pb.ListResourcesResponse(resources=[mcp_pb2.Resource(uri="x://same")], next_page_token="same")

    # ---------------------------------------------------------------------------------------- tools

    def CallTool(self, request: pb.CallToolRequest, context: grpc.ServicerContext) -> pb.CallToolResponse:
        """Records the request; fails as ``call_failures`` says (one entry per attempt), then echoes."""
        with self.lock:
            self.tool_calls.append(pb.CallToolRequest.FromString(request.SerializeToString()))
            failure = self.call_failures.pop(0) if self.call_failures else None
        if failure is not None:
            abort(context, *failure)
        res = mcp_pb2.CallToolResult()
        res.content.add().text.text = f"{request.name} resume={request.resume}"
        return pb.CallToolResponse(result=res, call_id=request.call_id)

    def CancelCall(self, request: pb.CancelCallRequest, context: grpc.ServicerContext) -> pb.CancelCallResponse:
        """Cancels a recorded call by its id, as the bridge does; an id never called is NOT_FOUND."""
        with self.lock:
            known = any(c.call_id == request.call_id for c in self.tool_calls)
            self.cancelled.append(request.call_id)
        if not known:
            abort(context, grpc.StatusCode.NOT_FOUND, f"no call {request.call_id!r} in flight", "CALL_NOT_FOUND")
        return pb.CancelCallResponse()

    def StreamCallTool(self, request: pb.StreamCallToolRequest, context: grpc.ServicerContext) -> Iterator[pb.StreamCallToolResponse]:
        """Records the request, sends one progress event, then fails as ``call_failures`` says or ends with a result."""
        with self.lock:
            self.tool_calls.append(pb.StreamCallToolRequest.FromString(request.SerializeToString()))
            failure = self.call_failures.pop(0) if self.call_failures else None
        progress = pb.StreamCallToolResponse(call_id=request.call_id)
        progress.progress.progress = float(len(self.tool_calls))
        yield progress
        if failure is not None:
            abort(context, *failure)
        res = pb.StreamCallToolResponse(call_id=request.call_id)
        res.result.content.add().text.text = f"{request.name} resume={request.resume}"
        yield res

    # -------------------------------------------------------------------------------------- Connect

    def Connect(self, request_iterator: Iterator[host_pb2.ConnectRequest], context: grpc.ServicerContext) -> Iterator[host_pb2.ConnectResponse]:
        if self.refuse_connect is not None:
            context.abort(self.refuse_connect, "Connect refused by the test")
        stream = _Stream()
        with self.lock:
            self.streams.append(stream)
            self.connects += 1
            for rid in sorted(self.opening):
                sr = self.pending[rid]
                stream.out.put(self._event(sr.session_id, server_request=sr))
            self.lock.notify_all()

        def read() -> None:
            try:
                for req in request_iterator:
                    self._on_request(stream, req)
            except Exception:  # noqa: BLE001 - the stream was cancelled
                pass
            stream.out.put(_END)

        threading.Thread(target=read, daemon=True).start()
        try:
            while True:
                item = stream.out.get()
                if item is _END:
                    return
                if item is _KILL:
                    context.abort(grpc.StatusCode.UNAVAILABLE, "stream killed by the test")
                yield item
        finally:
            with self.lock:
                stream.alive = False
                if stream in self.streams:
                    self.streams.remove(stream)
                self.lock.notify_all()

    def _on_request(self, stream: _Stream, req: host_pb2.ConnectRequest) -> None:
        kind = req.WhichOneof("action")
        with self.lock:
            if kind == "attach":
                self.attach_count += 1
                failures = []
                for sid in req.attach.session_ids:
                    if sid in self.sessions:
                        stream.sessions.add(sid)
                    else:
                        failures.append(
                            host_pb2.AttachFailure(
                                session_id=sid, status=status_pb2.Status(code=code_pb2.NOT_FOUND, message="no such session")
                            )
                        )
                stream.out.put(
                    host_pb2.ConnectResponse(
                        attached=host_pb2.AttachedSessions(session_ids=sorted(stream.sessions), failures=failures)
                    )
                )
                for sr in self.pending.values():
                    if sr.session_id in req.attach.session_ids and sr.session_id in stream.sessions:
                        stream.out.put(self._event(sr.session_id, server_request=sr))
            elif kind == "detach":
                stream.sessions.difference_update(req.detach.session_ids)
            elif kind in ("reply", "cancel"):
                rid = req.reply.request_id if kind == "reply" else req.cancel.request_id
                self.answers[rid].append(req)
                reject = self.reject_next.pop(rid, None)
                if reject is not None:
                    stream.out.put(host_pb2.ConnectResponse(reply_ack=host_pb2.ReplyAck(request_id=rid, accepted=False, error=reject)))
                elif rid in self.pending:
                    sr = self.pending.pop(rid)
                    stream.out.put(host_pb2.ConnectResponse(reply_ack=host_pb2.ReplyAck(request_id=rid, accepted=True)))
                    ended = host_pb2.RequestEnded(
                        request_id=rid, session_id=sr.session_id, outcome=host_pb2.REQUEST_OUTCOME_ANSWERED
                    )
                    if rid in self.opening:
                        for s in self.streams:
                            s.out.put(self._event(sr.session_id, request_ended=ended))
                    else:
                        self._broadcast(sr.session_id, request_ended=ended)
                else:
                    stream.out.put(
                        host_pb2.ConnectResponse(
                            reply_ack=host_pb2.ReplyAck(
                                request_id=rid,
                                accepted=False,
                                error=status_pb2.Status(code=code_pb2.FAILED_PRECONDITION, message="already ended"),
                            )
                        )
                    )
            self.lock.notify_all()

    def _event(self, sid: str, **payload: Any) -> host_pb2.ConnectResponse:
        return host_pb2.ConnectResponse(event=host_pb2.Event(sequence=next(self._seq), session_id=sid, **payload))

    def _broadcast(self, sid: str, **payload: Any) -> None:
        for s in self.streams:
            if sid in s.sessions:
                s.out.put(self._event(sid, **payload))

    # ------------------------------------------------------------------------------ test controls

    def push_request(self, sid: str, rid: str, **payload: Any) -> None:
        """Park a server request and deliver it to the attached streams, e.g. sampling=CreateMessageRequest()."""
        sr = host_pb2.ServerRequest(request_id=rid, session_id=sid, delivery=host_pb2.DELIVERY_LEGACY_PUSH, **payload)
        with self.lock:
            self.pending[rid] = sr
            self._broadcast(sid, server_request=sr)

    def push_event(self, sid: str, **payload: Any) -> None:
        with self.lock:
            self._broadcast(sid, **payload)
            self.lock.notify_all()

    def end_request(self, rid: str, outcome: int = host_pb2.REQUEST_OUTCOME_TIMED_OUT) -> None:
        with self.lock:
            sr = self.pending.pop(rid)
            self._broadcast(sr.session_id, request_ended=host_pb2.RequestEnded(request_id=rid, session_id=sr.session_id, outcome=outcome))

    def kill_streams(self) -> None:
        """Break every Connect stream with UNAVAILABLE, as a lost connection would."""
        with self.lock:
            for s in self.streams:
                s.out.put(_KILL)

    def wait(self, predicate: Any, timeout: float = 10.0) -> None:
        with self.lock:
            if not self.lock.wait_for(predicate, timeout):
                raise AssertionError("timed out waiting for the fake bridge")

    def wait_answer(self, rid: str, timeout: float = 10.0) -> host_pb2.ConnectRequest:
        self.wait(lambda: bool(self.answers.get(rid)), timeout)
        return self.answers[rid][0]

    def attached_streams(self, sid: str) -> int:
        with self.lock:
            return sum(1 for s in self.streams if sid in s.sessions and s.alive)


def abort(context: grpc.ServicerContext, code: grpc.StatusCode, message: str, reason: str) -> None:
    """Fail the RPC with ``code`` and, if ``reason``, a google.rpc.ErrorInfo as the bridge sends it."""
    if reason:
        from google.protobuf import any_pb2
        from google.rpc import error_details_pb2

        detail = any_pb2.Any()
        detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain="mcp-bridge"))
        st = status_pb2.Status(code=code.value[0], message=message, details=[detail])
        context.set_trailing_metadata((("grpc-status-details-bin", st.SerializeToString()),))
    context.abort(code, message)


def start_fake_bridge() -> tuple[FakeBridge, grpc.Server, str]:
    bridge = FakeBridge()
    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=32))
    pb_grpc.add_BridgeServiceServicer_to_server(bridge, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return bridge, server, f"127.0.0.1:{port}"


def sampling_request(text: str = "hello", max_tokens: int = 50) -> mcp_pb2.CreateMessageRequest:
    req = mcp_pb2.CreateMessageRequest(max_tokens=max_tokens)
    msg = req.messages.add(role=mcp_pb2.ROLE_USER)
    msg.content.add().text.text = text
    return req
