"""Integration tests: OpenTelemetry context through the real mcp-bridge binary (the optional ``otel`` extra).

The host's current span goes to the bridge with each call; the bridge passes it on to the demo server and
back on the sampling request the call raises; the handler runs with that context current, so its spans join
the host's trace.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bridge import Client, Handler, SamplingRequest, SamplingResult, TextContent, _otel

otel_trace = pytest.importorskip("opentelemetry.trace")
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402


class TracingHost(Handler):
    """Answers sampling and records the trace context it ran in."""

    def __init__(self) -> None:
        self.seen: list[tuple[SamplingRequest, Any]] = []

    def handle_sampling(self, request: SamplingRequest) -> SamplingResult:
        self.seen.append((request, otel_trace.get_current_span().get_span_context()))
        return SamplingResult(TextContent("traced"), model="m")


@pytest.mark.parametrize("version", ["2026-07-28"])
def test_host_span_reaches_the_sampling_handler(client: Client, version: str) -> None:
    assert _otel.available()
    tracer = TracerProvider().get_tracer("mcp-bridge-client-test")
    host = TracingHost()
    with client.create_session("demo", host, protocol_version=version) as session:
        with tracer.start_as_current_span("host-call") as span:
            assert _otel.outgoing(), "the current span is not propagated"
            result = session.call_tool("sample", {"prompt": "hi"})
        assert not result.is_error, result.text
        trace_id = span.get_span_context().trace_id
    request, ctx = host.seen[0]
    traceparent = request.trace_context.get("traceparent", "")
    assert traceparent.split("-")[1] == format(trace_id, "032x"), request.trace_context
    # The handler ran in the request's context. This bridge does not trace (no OTEL_* variables): the request
    # carries the host call's own context, which the handler continues.
    assert ctx.trace_id == trace_id
    assert ctx.span_id == int(traceparent.split("-")[2], 16) == span.get_span_context().span_id


def test_without_a_current_span_nothing_is_sent() -> None:
    assert _otel.outgoing() == ()
    assert _otel.context_of({}) is None
