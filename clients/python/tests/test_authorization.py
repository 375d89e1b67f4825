"""Unit tests of the authorization kind: upstream OAuth's browser step, answered with the redirect URL."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from mcp_bridge import AsyncClient, AuthorizationRequest, BridgeError, Client, Handler, McpError
from mcp_bridge import _convert as cv
from mcp_bridge import handler as h
from mcp_bridge._gen.mcpbridge.v1 import host_pb2
from mcp_bridge._host import HostCore

from .fakebridge import FakeBridge, start_fake_bridge


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


# ------------------------------------------------------------------ authorization while create_session waits


def test_core_routes_an_opening_request_to_the_create_session_of_its_server() -> None:
    core = HostCore()
    calls: list[tuple[Any, Any, Any]] = []
    core.spawn = lambda req, fn, args: calls.append((req, fn, args))
    core.stream_up(lambda m: None)
    other, mine = Authorizer(), Authorizer()
    t_other = core.begin_opening("other", other)
    t_mine = core.begin_opening("secured", mine)
    core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id="s-1", server_request=wire())))
    assert len(calls) == 1 and calls[0][1].__self__ is mine
    # Session "-" is unknown too; a second delivery of the same request does not call the handler again.
    sr = wire()
    sr.request_id, sr.session_id = "r-2", "-"
    core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id="-", server_request=sr)))
    core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id="-", server_request=sr)))
    assert [c[0].request_id for c in calls] == ["r-1", "r-2"]
    # Other kinds of requests of unknown sessions are still not ours, nor requests once the opening ended.
    samp = host_pb2.ServerRequest(request_id="r-3", session_id="s-1")
    samp.sampling.max_tokens = 1
    core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id="s-1", server_request=samp)))
    core.end_opening(t_mine)
    core.end_opening(t_other)
    sr.request_id = "r-4"
    core.on_response(host_pb2.ConnectResponse(event=host_pb2.Event(session_id="-", server_request=sr)))
    assert [c[0].request_id for c in calls] == ["r-1", "r-2"]
    assert core.openings() == 0


class CountingAuthorizer(Handler):
    def __init__(self) -> None:
        self.seen: list[AuthorizationRequest] = []

    def handle_authorization(self, request: AuthorizationRequest) -> Any:
        self.seen.append(request)
        return request.redirect_url + "?code=c&state=" + request.request_id


@pytest.fixture
def fake() -> Iterator[tuple[FakeBridge, str]]:
    bridge, server, target = start_fake_bridge()
    try:
        yield bridge, target
    finally:
        server.stop(grace=None)


@pytest.mark.parametrize("opening_session_id", ["", "-"])
def test_create_session_answers_the_authorization_it_waits_for(fake: tuple[FakeBridge, str], opening_session_id: str) -> None:
    bridge, target = fake
    bridge.opening_session_id = opening_session_id
    handler = CountingAuthorizer()
    with Client(target) as client:
        session = client.create_session("secured", handler)
        assert session.info.state == "ready"
        assert [r.server_name for r in handler.seen] == ["secured"]
        rid = handler.seen[0].request_id
        answer = bridge.answers[rid]
        assert len(answer) == 1
        assert answer[0].reply.answer.authorization.redirect_url == FakeBridge.REDIRECT + "?code=c&state=" + rid
        assert bridge.connects == 1
        assert bridge.attached_streams(session.id) == 1
        assert client._host.core.openings() == 0
        # The session declares no capability for it.
        assert cv.host_capabilities_to_mcp(bridge.sessions[session.id].host_capabilities) == {}


def test_without_handle_authorization_create_session_opens_no_stream_and_answers_nothing(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    bridge.opening_timeout = 0.5

    class Sampler(Handler):
        def handle_sampling(self, request: Any) -> Any:
            raise AssertionError("not called")

    with Client(target) as client:
        with pytest.raises(BridgeError) as e:
            client.create_session("secured", Sampler())
        assert e.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
        assert bridge.connects == 0
        assert not bridge.answers


def test_only_the_client_creating_a_session_of_that_server_answers(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    bystander, creator = CountingAuthorizer(), CountingAuthorizer()
    with Client(target) as a, Client(target) as b:
        # b's stream is open and attached to a session of its own, and it creates a session of another OAuth
        # server at the same time (blocked until the test answers it).
        b.create_session("demo", bystander)
        b_other: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def create_other() -> None:
            try:
                b_other.set_result(b.create_session("secured-2", bystander))
            except BaseException as exc:  # noqa: BLE001
                b_other.set_exception(exc)

        threading.Thread(target=create_other, daemon=True).start()
        bridge.wait(lambda: len(bridge.answers) == 1)  # b answered its own
        session = a.create_session("secured", creator)
        assert session.info.state == "ready"
        assert b_other.result(10).info.state == "ready"
        assert [r.server_name for r in creator.seen] == ["secured"]
        assert [r.server_name for r in bystander.seen] == ["secured-2"]
        assert all(len(v) == 1 for v in bridge.answers.values())


def test_a_stream_already_open_is_used_and_an_answer_after_reconnect_is_not_lost(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    release = threading.Event()

    class Slow(CountingAuthorizer):
        def handle_authorization(self, request: AuthorizationRequest) -> Any:
            assert release.wait(10)
            return super().handle_authorization(request)

    handler = Slow()
    with Client(target) as client:
        client.create_session("demo", handler)
        created: concurrent.futures.Future[Any] = concurrent.futures.Future()
        threading.Thread(target=lambda: created.set_result(client.create_session("secured", handler)), daemon=True).start()
        bridge.wait(lambda: bool(bridge.opening))
        bridge.kill_streams()  # the request is replayed on the new stream; the handler runs once
        bridge.wait(lambda: bridge.connects >= 2)
        release.set()
        assert created.result(10).info.state == "ready"
        assert len(handler.seen) == 1
        assert bridge.connects == 2


def test_async_create_session_answers_the_authorization_it_waits_for(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake

    class AsyncAuthorizer(Handler):
        def __init__(self) -> None:
            self.seen: list[str] = []

        async def handle_authorization(self, request: AuthorizationRequest) -> Any:
            self.seen.append(request.server_name)
            await asyncio.sleep(0)
            return request.redirect_url + "?code=c"

    async def main() -> None:
        handler = AsyncAuthorizer()
        async with AsyncClient(target) as client:
            session = await client.create_session("secured", handler)
            assert session.info.state == "ready"
            assert handler.seen == ["secured"]
            assert client._host.core.openings() == 0
            assert bridge.attached_streams(session.id) == 1

    asyncio.run(main())
