"""Exceptions of mcp_bridge.

Calls to the bridge raise :class:`BridgeError` (or one of its subclasses, by gRPC status code) for protocol
failures. A tool that fails is *not* an exception: its result has ``is_error`` set.

Handlers raise :class:`McpError` to answer a server request with a specific JSON-RPC error; any other
exception from a handler is answered as ``-32603 Internal error`` and logged.
"""

from __future__ import annotations

from typing import Any

import grpc

from ._gen import reasons

# JSON-RPC / MCP error codes a handler may want to use.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
USER_REJECTED = -1
"""The code MCP clients use when a user rejects a sampling request."""


class McpError(Exception):
    """A JSON-RPC error: raise it from a handler to answer the server with this code, message and data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"McpError(code={self.code}, message={self.message!r})"


class BridgeError(Exception):
    """A failed call to the bridge: a gRPC status with its details.

    Attributes:
        code: the gRPC status code, e.g. ``grpc.StatusCode.NOT_FOUND``.
        message: the status message.
        reason: ``google.rpc.ErrorInfo.reason``, if the bridge sent one.
        metadata: ``google.rpc.ErrorInfo.metadata`` (e.g. the upstream JSON-RPC code and message).
        jsonrpc_code: the upstream JSON-RPC error code, when the error came from the MCP server.
        field_violations: ``(field, description)`` pairs of a ``google.rpc.BadRequest`` detail.
        details: every decoded detail message.
        call_id: the call id of the tool call that failed (``Session.call_tool`` and ``call_tool_stream`` set
            it, whether the host gave the id or the client made one up); "" for other calls.
        retry_after: seconds to wait before trying again, from ``google.rpc.RetryInfo`` -- the caller's rate
            limit (``RESOURCE_EXHAUSTED``), or an MCP server that refused the call as busy (``UNAVAILABLE``
            ``UPSTREAM_UNAVAILABLE``, its HTTP ``Retry-After``); ``None`` when the bridge did not say.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str = "",
        domain: str = "",
        metadata: dict[str, str] | None = None,
        field_violations: list[tuple[str, str]] | None = None,
        details: list[Any] | None = None,
    ) -> None:
        super().__init__(f"{code.name}: {message}" if code is not None else message)
        self.code = code
        self.message = message
        self.reason = reason
        self.domain = domain
        self.metadata = dict(metadata or {})
        self.field_violations = list(field_violations or [])
        self.details = list(details or [])
        self.call_id = ""

    @property
    def outcome_unknown(self) -> bool:
        """Whether this is a tool call whose outcome cannot be known: the call was lost (the connection dropped,
        the bridge restarted) while it was in flight upstream, the client called again with the same call id to
        get its outcome (``resume``), and the bridge could not tell whether the tool ran -- ``ABORTED`` with reason
        ``CALL_OUTCOME_UNKNOWN``. The tool may or may not have run: the host decides whether to call it again
        (with a new call id). Such errors are :class:`CallOutcomeUnknownError`."""
        return self.code == grpc.StatusCode.ABORTED and self.reason == CALL_OUTCOME_UNKNOWN

    @property
    def retry_after(self) -> float | None:
        """Seconds to wait before trying again (``google.rpc.RetryInfo.retry_delay``), ``None`` if not given."""
        for d in self.details:
            if type(d).__name__ == "RetryInfo" and d.HasField("retry_delay"):
                return float(d.retry_delay.seconds + d.retry_delay.nanos / 1e9)
        return None

    @property
    def session_lost(self) -> bool:
        """Whether the session the call named is gone for good, so that the host should create a new one: the
        bridge replica that owned it died (``REPLICA_UNAVAILABLE``, answered by the proxy in front of the
        replicas), or it was closed or is unknown (``SESSION_CLOSED``, ``SESSION_NOT_FOUND``)."""
        return self.reason in SESSION_LOST_REASONS

    @property
    def jsonrpc_code(self) -> int | None:
        """The upstream JSON-RPC error code, if the bridge reported one."""
        for key in ("jsonrpc_code", "jsonrpcCode", "code", "jsonrpc.code"):
            value = self.metadata.get(key)
            if value is not None:
                try:
                    return int(value)
                except ValueError:
                    return None
        return None


CALL_OUTCOME_UNKNOWN: str = reasons.CALL_OUTCOME_UNKNOWN
"""The ErrorInfo reason of a resumed tool call whose outcome the bridge cannot know (:attr:`BridgeError.outcome_unknown`)."""

SESSION_LOST_REASONS: frozenset[str] = frozenset({reasons.REPLICA_UNAVAILABLE, reasons.SESSION_CLOSED, reasons.SESSION_NOT_FOUND})
"""ErrorInfo reasons that mean a session is gone for good (:attr:`BridgeError.session_lost`)."""


class InvalidArgumentError(BridgeError):
    """INVALID_ARGUMENT: bad input from the host, or invalid params upstream (-32602)."""


class NotFoundError(BridgeError):
    """NOT_FOUND: unknown server, session, request, or a resource the server does not have."""


class UnavailableError(BridgeError):
    """UNAVAILABLE: the bridge or the upstream server cannot be reached right now."""


class UnimplementedError(BridgeError):
    """UNIMPLEMENTED: method not found upstream (-32601), or an RPC the bridge does not offer."""


class FailedPreconditionError(BridgeError):
    """FAILED_PRECONDITION: e.g. answering a request that already ended."""


class PermissionDeniedError(BridgeError):
    """PERMISSION_DENIED or UNAUTHENTICATED."""


class DeadlineExceededError(BridgeError):
    """DEADLINE_EXCEEDED: the call's timeout passed."""


class CallCancelledError(BridgeError):
    """CANCELLED: the call was cancelled."""


class CallOutcomeUnknownError(BridgeError):
    """ABORTED, reason ``CALL_OUTCOME_UNKNOWN``: a tool call was lost while in flight and, asked again with the
    same call id, the bridge cannot tell whether the tool ran (see :attr:`BridgeError.outcome_unknown`). It is
    not retried: the tool may or may not have run, and only the host can decide what to do about it."""


_BY_CODE: dict[grpc.StatusCode, type[BridgeError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.UNIMPLEMENTED: UnimplementedError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.UNAUTHENTICATED: PermissionDeniedError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.CANCELLED: CallCancelledError,
}


class ApprovalDeniedError(PermissionDeniedError):
    """PERMISSION_DENIED, reason ``APPROVAL_DENIED``: the call needed approval and an approver denied it (the
    message carries the approver's reason). Nothing was sent upstream."""

    @property
    def approver_reason(self) -> str:
        """The approver's reason (ErrorInfo metadata ``approverReason``)."""
        return self.metadata.get("approverReason", "")

    @property
    def decided_by(self) -> str:
        """The approver that denied the call (metadata ``decidedBy``); empty if unknown."""
        return self.metadata.get("decidedBy", "")

    @property
    def approval_request_id(self) -> str:
        """The approval request's id (metadata ``approvalRequestId``)."""
        return self.metadata.get("approvalRequestId", "")


class ApprovalExpiredError(DeadlineExceededError):
    """DEADLINE_EXCEEDED, reason ``APPROVAL_EXPIRED``: the call needed approval and nobody decided before the
    approval request expired. Nothing was sent upstream."""

    @property
    def expired_at(self) -> str:
        """When the approval request expired, RFC 3339 (metadata ``expireTime``)."""
        return self.metadata.get("expireTime", "")

    @property
    def approval_request_id(self) -> str:
        """The approval request's id (metadata ``approvalRequestId``)."""
        return self.metadata.get("approvalRequestId", "")


class ApprovalArgumentsChangedError(FailedPreconditionError):
    """FAILED_PRECONDITION, reason ``APPROVAL_ARGUMENTS_CHANGED``: a call resumed by its ``call_id`` carried other
    arguments (or another tool) than the call submitted for approval. Nothing was sent upstream."""


_BY_REASON: dict[tuple[grpc.StatusCode, str], type[BridgeError]] = {
    (grpc.StatusCode.PERMISSION_DENIED, reasons.APPROVAL_DENIED): ApprovalDeniedError,
    (grpc.StatusCode.DEADLINE_EXCEEDED, reasons.APPROVAL_EXPIRED): ApprovalExpiredError,
    (grpc.StatusCode.FAILED_PRECONDITION, reasons.APPROVAL_ARGUMENTS_CHANGED): ApprovalArgumentsChangedError,
}


def error_class(code: grpc.StatusCode, reason: str = "") -> type[BridgeError]:
    """The BridgeError subclass raised for a gRPC status code (and ErrorInfo reason)."""
    if code == grpc.StatusCode.ABORTED and reason == CALL_OUTCOME_UNKNOWN:
        return CallOutcomeUnknownError
    return _BY_REASON.get((code, reason)) or _BY_CODE.get(code, BridgeError)


def _decode_status_details(raw: bytes | None) -> tuple[str, str, dict[str, str], list[tuple[str, str]], list[Any]]:
    reason, domain, metadata, violations, details = "", "", {}, [], []  # type: ignore[var-annotated]
    if not raw:
        return reason, domain, metadata, violations, details
    from google.rpc import error_details_pb2, status_pb2

    status = status_pb2.Status()
    try:
        status.ParseFromString(raw)
    except Exception:  # noqa: BLE001 - malformed details must not hide the error itself
        return reason, domain, metadata, violations, details
    for any_msg in status.details:
        for cls in (
            error_details_pb2.ErrorInfo,
            error_details_pb2.BadRequest,
            error_details_pb2.RetryInfo,
            error_details_pb2.DebugInfo,
            error_details_pb2.PreconditionFailure,
            error_details_pb2.ResourceInfo,
            error_details_pb2.LocalizedMessage,
        ):
            if any_msg.Is(cls.DESCRIPTOR):
                msg = cls()
                any_msg.Unpack(msg)
                details.append(msg)
                if isinstance(msg, error_details_pb2.ErrorInfo):
                    reason, domain = msg.reason, msg.domain
                    metadata.update(dict(msg.metadata))
                elif isinstance(msg, error_details_pb2.BadRequest):
                    violations.extend((v.field, v.description) for v in msg.field_violations)
                break
    return reason, domain, metadata, violations, details


def from_rpc_error(err: grpc.RpcError) -> BridgeError:
    """Convert a grpc.RpcError (sync or aio) to a BridgeError, decoding ``grpc-status-details-bin``."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    message = err.details() if hasattr(err, "details") else str(err)
    raw: bytes | None = None
    try:
        trailers = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    except Exception:  # noqa: BLE001
        trailers = None
    for key, value in trailers or ():
        if key == "grpc-status-details-bin":
            raw = value if isinstance(value, bytes) else None
    reason, domain, metadata, violations, details = _decode_status_details(raw)
    cls = error_class(code, reason)
    return cls(
        code,
        message or "",
        reason=reason,
        domain=domain,
        metadata=metadata,
        field_violations=violations,
        details=details,
    )


def from_status_proto(status: Any) -> BridgeError:
    """Convert a ``google.rpc.Status`` message (e.g. ``ReplyAck.error``) to a BridgeError."""
    code = next((c for c in grpc.StatusCode if c.value[0] == status.code), grpc.StatusCode.UNKNOWN)
    reason, domain, metadata, violations, details = _decode_status_details(status.SerializeToString())
    return error_class(code, reason)(
        code,
        status.message,
        reason=reason,
        domain=domain,
        metadata=metadata,
        field_violations=violations,
        details=details,
    )
