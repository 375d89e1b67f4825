"""OpenTelemetry context propagation, when OpenTelemetry is installed (the optional ``otel`` extra).

The bridge takes the W3C trace context (``traceparent``, ``tracestate``, ``baggage``) of each call from its
gRPC metadata and passes it on to the MCP server in the request's ``_meta``; it sends the context of each
server request it parks back in ``ServerRequest.trace_context``. Without OpenTelemetry every function here
is a no-op.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

try:
    from opentelemetry import context as _context
    from opentelemetry import propagate as _propagate
except ImportError:  # pragma: no cover - exercised when the extra is not installed
    _context = None  # type: ignore[assignment]
    _propagate = None  # type: ignore[assignment]


def available() -> bool:
    """Whether OpenTelemetry is installed."""
    return _propagate is not None


def outgoing() -> tuple[tuple[str, str], ...]:
    """The current OpenTelemetry context as gRPC metadata (the global propagator's keys, by default
    ``traceparent``, ``tracestate`` and ``baggage``); empty without OpenTelemetry or a current span."""
    if _propagate is None:
        return ()
    carrier: dict[str, str] = {}
    _propagate.inject(carrier)
    return tuple((k.lower(), v) for k, v in carrier.items())


def context_of(trace_context: Mapping[str, str]) -> Any:
    """The OpenTelemetry ``Context`` of a server request's trace context, or None without OpenTelemetry or
    without a trace context."""
    if _propagate is None or not trace_context:
        return None
    return _propagate.extract(dict(trace_context))


@contextlib.contextmanager
def current(trace_context: Mapping[str, str]) -> Iterator[None]:
    """Makes a server request's trace context the current OpenTelemetry context while the block runs, so
    that the spans a handler starts continue the bridge's trace."""
    ctx = context_of(trace_context)
    if ctx is None or _context is None:
        yield
        return
    token = _context.attach(ctx)
    try:
        yield
    finally:
        _context.detach(token)


def attach(trace_context: Mapping[str, str]) -> None:
    """Makes a server request's trace context the current OpenTelemetry context for the rest of the current
    asyncio task (which runs in a context of its own); nothing without OpenTelemetry."""
    ctx = context_of(trace_context)
    if ctx is not None and _context is not None:
        _context.attach(ctx)
