"""BridgeError's reading of a status's details."""

from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2

from mcp_bridge import errors


def _status(code: int, *details: object) -> status_pb2.Status:
    st = status_pb2.Status(code=code, message="m")
    for d in details:
        a = any_pb2.Any()
        a.Pack(d)
        st.details.append(a)
    return st


def test_retry_after_reads_retry_info() -> None:
    # An MCP server that refused the call as busy said when to retry: UNAVAILABLE with RetryInfo.
    err = errors.from_status_proto(
        _status(
            14,
            error_details_pb2.ErrorInfo(reason="UPSTREAM_UNAVAILABLE", domain="mcp-bridge"),
            error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=7, nanos=500_000_000)),
        )
    )
    assert isinstance(err, errors.UnavailableError)
    assert err.reason == "UPSTREAM_UNAVAILABLE"
    assert err.retry_after == 7.5


def test_retry_after_is_none_without_retry_info() -> None:
    err = errors.from_status_proto(_status(14, error_details_pb2.ErrorInfo(reason="UPSTREAM_UNAVAILABLE")))
    assert err.retry_after is None
