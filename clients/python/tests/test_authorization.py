"""Unit tests of the authorization kind: upstream OAuth's browser step, answered with the redirect URL."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_bridge import AuthorizationRequest, Handler, McpError
from mcp_bridge import _convert as cv
from mcp_bridge import handler as h
from mcp_bridge._gen.mcpbridge.v1 import host_pb2
from mcp_bridge._host import HostCore


class Authorizer(Handler):
    def handle_authorization(self, request: AuthorizationRequest) -> Any:
        return request.redirect_url + "?code=c&state=s"


def wire() -> host_pb2.ServerRequest:
    sr = host_pb2.ServerRequest(request_id="r-1", session_id="s-1")
    sr.authorization.authorization_url = "https://as.example/authorize?state=s"
    sr.authorization.redirect_url = "http://127.0.0.1/cb"
    sr.authorization.server_name = "secured"
    sr.authorization.scopes.extend(["read", "write"])
    return sr


def test_request_from_wire() -> None:
    r = h.request_from(wire())
    assert isinstance(r, AuthorizationRequest)
    assert r.kind == "authorization"
    assert (r.request_id, r.session_id, r.server_name) == ("r-1", "s-1", "secured")
    assert r.authorization_url == "https://as.example/authorize?state=s"
    assert r.redirect_url == "http://127.0.0.1/cb"
    assert r.scopes == ["read", "write"]


def test_answer_is_the_redirect_url() -> None:
    a = h.authorization_answer("http://127.0.0.1/cb?code=c&state=s")
    assert a.WhichOneof("answer") == "authorization"
    assert a.authorization.redirect_url == "http://127.0.0.1/cb?code=c&state=s"
    for bad in (None, "", {"redirectUrl": "x"}):
        with pytest.raises(TypeError):
            h.authorization_answer(bad)


def test_declares_no_capability() -> None:
    assert cv.host_capabilities_to_mcp(h.capabilities(Authorizer())) == cv.host_capabilities_to_mcp(h.capabilities(Handler()))


def test_host_stream_calls_the_handler_and_answers() -> None:
    core = HostCore()
    calls: list[tuple[Any, Any, Any]] = []
    core.spawn = lambda req, fn, args: calls.append((req, fn, args))
    sent: list[host_pb2.ConnectRequest] = []
    core.stream_up(sent.append)
    core.add_session("s-1", Authorizer(), None)
    core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id="s-1", server_request=wire())))
    assert len(calls) == 1
    req, fn, args = calls[0]
    assert isinstance(req, AuthorizationRequest)
    answer = fn(*args)
    assert answer == "http://127.0.0.1/cb?code=c&state=s"
    assert req.respond(answer)
    assert sent[-1].reply.request_id == "r-1"
    assert sent[-1].reply.answer.authorization.redirect_url == answer


def test_without_override_the_request_is_refused() -> None:
    core = HostCore()
    calls: list[tuple[Any, Any, Any]] = []
    core.spawn = lambda req, fn, args: calls.append((req, fn, args))
    core.stream_up(lambda m: None)
    core.add_session("s-1", Handler(), None)
    core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id="s-1", server_request=wire())))
    _, fn, args = calls[0]
    with pytest.raises(McpError):
        fn(*args)


def test_requests_of_unknown_sessions_are_ignored() -> None:
    # The bridge pushes a session-being-created's authorization request to every stream of the principal;
    # a client that does not hold the session leaves it to the one that does.
    core = HostCore()
    calls: list[Any] = []
    core.spawn = lambda req, fn, args: calls.append(req)
    core.stream_up(lambda m: None)
    core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id="s-9", server_request=wire())))
    assert calls == []
