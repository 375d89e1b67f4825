"""Request building and response conversion shared by the sync and the asyncio client."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

import grpc

from . import _convert as cv
from . import _retry
from ._gen.mcpbridge.v1 import bridge_service_pb2 as pb
from ._gen.mcpbridge.v1 import host_pb2
from .errors import BridgeError, DeadlineExceededError, from_rpc_error
from .handler import Handler, ServerRequest, capabilities, elicitation_answer, error_answer
from .types import (
    CallToolResult,
    Implementation,
    Root,
    StreamEvent,
    Task,
)

DEFAULT_TARGET = "127.0.0.1:50051"
MAX_PAGES = 10_000


def metadata(token: str | None, extra: Iterable[tuple[str, str]] | None) -> tuple[tuple[str, str], ...]:
    md: list[tuple[str, str]] = []
    if token:
        md.append(("authorization", f"Bearer {token}"))
    md.extend(extra or ())
    return tuple(md)


ROUTING_KEY = "mcpbridge-session"
"""The metadata key that carries the session id of every call naming a session, for a proxy in front of the
replicas of a shared bridge to route the call to the replica that owns the session (docs/scaling.md)."""


def session_replica(session_id: str) -> str:
    """The replica named in a session id ``s-<replica>.<random>``; "" for an id of a bridge without replicas.

    The client's one reading of the session id format, which the bridge owns (mcpcore/ids.go): no other code
    of the client looks inside a session id. It is needed because a proxy routes each session's calls by the
    replica in its id (docs/scaling.md), so the session's host stream must go the same way; the bridge's own
    ``mcpbridge-replica`` header names the replica that answered, which after a takeover is not the one the
    proxy routes to. tests/test_routing.py checks it against ids the real bridge mints."""
    if not session_id.startswith("s-"):
        return ""
    replica, dot, _ = session_id[2:].partition(".")
    return replica if dot else ""


def routed(md: tuple[tuple[str, str], ...], request: Any) -> tuple[tuple[str, str], ...]:
    """``md`` plus the routing key when ``request`` names a session."""
    session_id = getattr(request, "session_id", "")
    if session_id:
        return (*md, (ROUTING_KEY, session_id))
    return md


def channel_options(
    max_message_bytes: int | None,
    options: Iterable[tuple[str, Any]] | None,
    reconnect_backoff: tuple[float, float] | None = None,
) -> list[tuple[str, Any]]:
    opts = list(options or [])
    if max_message_bytes:
        opts += [
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
        ]
    # The channel reconnects with the client's backoff, not gRPC's default (1 s growing to 2 minutes): after a
    # bridge restart, retried tool calls and the host stream get through as soon as it listens again.
    given = {k for k, _ in opts}
    if reconnect_backoff is not None:
        for key, seconds in (
            ("grpc.initial_reconnect_backoff_ms", reconnect_backoff[0]),
            ("grpc.max_reconnect_backoff_ms", reconnect_backoff[1]),
        ):
            if key not in given:
                opts.append((key, max(int(seconds * 1000), 1)))
    return opts


def create_session_request(
    server: str,
    handler: Handler | None,
    roots: Iterable[Root | Mapping[str, Any] | str] | None,
    protocol_version: str,
    client_info: Implementation | Mapping[str, Any] | None,
) -> tuple[pb.CreateSessionRequest, list[Root] | None]:
    root_list = [cv.coerce_root(r) for r in roots] if roots is not None else None
    req = pb.CreateSessionRequest(server=server, protocol_version=protocol_version)
    req.host_capabilities.CopyFrom(capabilities(handler, has_roots=bool(root_list)))
    for r in root_list or []:
        cv.root_to(r, req.roots.add())
    if client_info is not None:
        if isinstance(client_info, Mapping):
            client_info = Implementation(**dict(client_info))
        ci = req.client_info
        ci.name, ci.title, ci.version = client_info.name, client_info.title, client_info.version
        ci.website_url, ci.description = client_info.website_url, client_info.description
    return req, root_list


def call_tool_request(
    session_id: str,
    name: str,
    arguments: Mapping[str, Any] | None,
    meta: Mapping[str, Any] | None,
    call_id: str,
    task_ttl: float | None,
    *,
    stream: bool = False,
    resume: bool = False,
    detach: bool = False,
) -> Any:
    if resume and not call_id:
        raise ValueError("resume=True needs the call_id of the call to resume")
    if detach and not call_id:
        raise ValueError("detach=True needs a call_id to resume or cancel the call by")
    cls = pb.StreamCallToolRequest if stream else pb.CallToolRequest
    # Always an id: a call lost with its connection is asked for again by it (_retry).
    req = cls(session_id=session_id, name=name, call_id=call_id or _retry.new_call_id(), resume=resume, detach=detach)
    cv.set_struct(req, "arguments", dict(arguments) if arguments is not None else {})
    cv.set_struct(req, "meta", meta)
    if task_ttl is not None:
        req.task.SetInParent()
        if task_ttl > 0:
            req.task.ttl.FromNanoseconds(int(task_ttl * 1e9))
    return req


def stream_event(resp: pb.StreamCallToolResponse) -> StreamEvent | None:
    from .types import RequestNotice

    kind = resp.WhichOneof("event")
    if kind == "progress":
        return cv.progress_from(resp.progress, resp.call_id)
    if kind == "log":
        return cv.log_from(resp.log, resp.call_id)
    if kind == "server_request":
        sr = resp.server_request
        return RequestNotice(
            request_id=sr.request_id,
            kind=sr.WhichOneof("payload") or "",  # type: ignore[arg-type]
            # Only a request the bridge could tie to this call carries its id; the session's own requests
            # (e.g. a legacy push over stdio) are seen while the call runs but have no origin.
            call_id=sr.origin_call_id,
        )
    if kind == "request_ended":
        return cv.request_ended_from(resp.request_ended)
    if kind == "approval_pending":
        return cv.approval_pending_from(resp.approval_pending, resp.call_id)
    if kind == "result":
        return cv.call_tool_result_from(resp.result, resp.call_id)
    return None


def complete_request(
    session_id: str,
    prompt: str | None,
    resource_template: str | None,
    argument: str,
    value: str,
    context: Mapping[str, str] | None,
) -> pb.CompleteRequest:
    if (prompt is None) == (resource_template is None):
        raise ValueError("complete() needs exactly one of prompt= or resource_template=")
    req = pb.CompleteRequest(session_id=session_id, argument_name=argument, argument_value=value)
    if prompt is not None:
        req.prompt_name = prompt
    else:
        req.resource_template_uri = resource_template or ""
    for k, v in (context or {}).items():
        req.context_arguments[k] = v
    return req


def set_roots_request(session_id: str, roots: Iterable[Root | Mapping[str, Any] | str]) -> tuple[pb.SetRootsRequest, list[Root]]:
    root_list = [cv.coerce_root(r) for r in roots]
    req = pb.SetRootsRequest(session_id=session_id)
    for r in root_list:
        cv.root_to(r, req.roots.add())
    return req, root_list


def get_task_result(resp: pb.GetTaskResponse) -> tuple[Task, CallToolResult | None]:
    result = cv.call_tool_result_from(resp.result) if resp.HasField("result") else None
    if resp.HasField("error") and result is None:
        from .errors import McpError

        raise McpError(resp.error.code, resp.error.message, cv.opt_value(resp.error, "data"))
    return cv.task_from(resp.task), result


def check_page_token(seen: set[str], token: str, what: str) -> None:
    if token in seen or len(seen) > MAX_PAGES:
        raise RuntimeError(f"{what}: the server repeated page token {token!r}; stopping to avoid an endless loop")
    seen.add(token)


def cancel_answer(request: ServerRequest, reason: str) -> host_pb2.HostAnswer:
    """The answer RespondToRequest gets when a host cancels a request outside of the Connect stream."""
    if request.kind == "elicitation":
        return elicitation_answer("cancel")
    return error_answer(-1, reason or "cancelled by the host")


LEVELS = tuple(cv.LEVEL.values())


def level(level: str) -> Any:
    return cv.level_value(level)


def is_terminal(code: grpc.StatusCode) -> bool:
    """Whether a Connect failure will not go away by retrying soon (credentials, a bridge without Connect).

    The stream keeps retrying anyway (with the maximum backoff), but sessions waiting to attach fail at once."""
    return code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNIMPLEMENTED)



def call_error(err: grpc.RpcError, timeout: float | None, start: float) -> BridgeError:
    """The BridgeError of a failed call. A call whose deadline passed is DEADLINE_EXCEEDED even when the
    server's RST_STREAM won the race against the client's own deadline and gRPC reports CANCELLED."""
    e = from_rpc_error(err)
    if e.code == grpc.StatusCode.CANCELLED and timeout is not None and time.monotonic() - start >= timeout:
        return DeadlineExceededError(
            grpc.StatusCode.DEADLINE_EXCEEDED, f"deadline of {timeout:g}s exceeded ({e.message})", details=e.details
        )
    return e
