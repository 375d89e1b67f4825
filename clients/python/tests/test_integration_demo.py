"""Integration tests: the sync Client against the real mcp-bridge binary and its built-in demo MCP server.

Server-initiated flows run on both protocol eras: 2025-11-25 (the server pushes JSON-RPC requests) and
2026-07-28 (multi round-trip input requests); the host sees and answers them the same way.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import Any

import grpc
import pytest

from mcp_bridge import (
    BridgeError,
    Client,
    ElicitationRequest,
    Handler,
    InvalidArgumentError,
    LogMessage,
    McpError,
    NotFoundError,
    Progress,
    Root,
    RootsRequest,
    SamplingRequest,
    SamplingResult,
    TextContent,
    accept,
    cancel,
    decline,
)

from .conftest import Bridge
from .tcpproxy import TcpProxy

ERAS = ["2025-11-25", "2026-07-28"]


def eventually(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


class CannedHost(Handler):
    """Sampling with a canned model, elicitation from a dict, roots from a list; records what it saw."""

    def __init__(self, form: Any = None, roots: list[Any] | None = None) -> None:
        self.form = form if form is not None else accept({"name": "Ada", "age": 36})
        self.roots = roots if roots is not None else [Root("file:///work/project", "project")]
        self.requests: list[Any] = []
        self.notes: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def handle_sampling(self, request: SamplingRequest) -> SamplingResult:
        with self.lock:
            self.requests.append(request)
        return SamplingResult(TextContent(f"canned reply to: {request.messages[-1].text}"), model="canned-1", stop_reason="endTurn")

    def handle_elicitation(self, request: ElicitationRequest) -> Any:
        with self.lock:
            self.requests.append(request)
        return self.form

    def handle_url_elicitation(self, request: ElicitationRequest) -> Any:
        with self.lock:
            self.requests.append(request)
        return accept()

    def list_roots(self, request: RootsRequest) -> list[Any]:
        with self.lock:
            self.requests.append(request)
        return self.roots

    def handle_notification(self, method: str, params: dict[str, Any]) -> None:
        with self.lock:
            self.notes.append((method, params))

    def saw(self, method: str) -> list[dict[str, Any]]:
        with self.lock:
            return [p for m, p in self.notes if m == method]


# ------------------------------------------------------------------------------------ sessions


def test_list_servers(client: Client) -> None:
    servers = {s.name: s for s in client.list_servers()}
    assert servers["demo"].transport == "stdio"
    assert servers["demo"].description == "the built-in demo server"


def test_session_lifecycle(client: Client) -> None:
    session = client.create_session("demo", client_info={"name": "pytest-host", "version": "1.0"})
    info = session.info
    assert info.state == "ready"
    assert info.server == "demo"
    assert info.protocol_version in ERAS
    assert info.server_info.name == "mcp-bridge-demo"
    assert "tools" in info.server_capabilities and "resources" in info.server_capabilities
    assert "echo" in info.instructions
    assert info.host_capabilities == {}, "no handler, no capabilities"
    assert info.created is not None
    assert client.get_session(session.id).session_id == session.id
    assert session.id in [s.session_id for s in client.list_sessions()]
    session.close()
    with pytest.raises(NotFoundError):
        client.get_session(session.id)
    session.close()  # closing twice is fine


def test_unknown_server_and_session(client: Client) -> None:
    with pytest.raises(NotFoundError) as e:
        client.create_session("no-such-server")
    assert e.value.reason == "SERVER_NOT_FOUND"
    with pytest.raises(NotFoundError):
        client.get_session("s-does-not-exist")


@pytest.mark.parametrize("version", ERAS)
def test_protocol_version_is_negotiated_as_asked(client: Client, version: str) -> None:
    with client.create_session("demo", protocol_version=version) as session:
        assert session.info.protocol_version == version


# -------------------------------------------------------------------------------------- tools


def test_tools(client: Client) -> None:
    with client.create_session("demo") as session:
        tools = {t.name: t for t in session.list_tools()}
        assert {"echo", "add", "long_operation", "sample", "elicit", "list_roots", "structured", "fail"} <= set(tools)
        assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
        assert tools["echo"].annotations is not None and tools["echo"].annotations.read_only_hint is True
        assert tools["structured"].output_schema is not None

        echo = session.call_tool("echo", {"text": "hello, bridge"})
        assert echo.text == "hello, bridge" and not echo.is_error
        assert isinstance(echo.content[0], TextContent)

        add = session.call_tool("add", {"a": 2, "b": 40})
        assert add.structured_content == {"sum": 42}
        assert isinstance(add.structured_content["sum"], int)

        weather = session.call_tool("structured", {"city": "Paris"})
        assert weather.structured_content["city"] == "Paris"
        assert len(weather.structured_content["forecast"]) == 3

        failed = session.call_tool("fail", {"message": "this went wrong"})
        assert failed.is_error and failed.text == "this went wrong"

        bad_args = session.call_tool("add", {"a": "not a number", "b": 1})
        assert bad_args.is_error

        with pytest.raises(InvalidArgumentError) as e:
            session.call_tool("no_such_tool", {})
        assert e.value.jsonrpc_code == -32602

        tagged = session.call_tool("echo", {"text": "x"}, call_id="my-call-1", meta={"trace": "abc"})
        assert tagged.call_id == "my-call-1"


def test_call_tool_stream_yields_progress_then_result(client: Client) -> None:
    with client.create_session("demo") as session:
        events = list(session.call_tool_stream("long_operation", {"durationSeconds": 0.3, "steps": 3}, call_id="op-1"))
        progress = [e for e in events if isinstance(e, Progress)]
        assert [p.progress for p in progress] == [1, 2, 3]
        assert all(p.total == 3 and p.call_id == "op-1" for p in progress)
        assert progress[0].message == "step 1 of 3"
        result = events[-1]
        assert not isinstance(result, (Progress, LogMessage)) and "3 steps" in result.text  # type: ignore[union-attr]


def test_timeout_cancels_a_call(client: Client) -> None:
    with client.create_session("demo") as session:
        with pytest.raises(BridgeError) as e:
            session.call_tool("long_operation", {"durationSeconds": 30, "steps": 2}, timeout=0.5)
        assert e.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
        assert session.call_tool("echo", {"text": "still fine"}).text == "still fine"


def test_log_level_and_log_messages(client: Client) -> None:
    host = CannedHost()
    with client.create_session("demo", host) as session:
        session.set_log_level("warning")
        events = list(session.call_tool_stream("log", {"message": "hi"}))
        levels = [e.level for e in events if isinstance(e, LogMessage)]
        assert levels == ["warning", "error", "critical", "alert", "emergency"]
        first = next(e for e in events if isinstance(e, LogMessage))
        assert first.logger == "demo" and first.data == {"message": "hi", "level": "warning"}
        # The same messages reach the handler as MCP notifications.
        eventually(lambda: len(host.saw("notifications/message")) >= 5)
        assert host.saw("notifications/message")[0]["level"] == "warning"
        with pytest.raises(ValueError):
            session.set_log_level("loud")


# ---------------------------------------------------------------------------------- resources


def test_resources_and_templates(client: Client) -> None:
    with client.create_session("demo") as session:
        resources = {r.uri: r for r in session.list_resources()}
        assert {"demo://readme", "demo://counter"} <= set(resources)
        assert resources["demo://readme"].mime_type == "text/markdown"
        templates = [t.uri_template for t in session.list_resource_templates()]
        assert "demo://items/{id}" in templates

        readme = session.read_resource("demo://readme")
        assert readme.contents[0].uri == "demo://readme"
        assert readme.text.startswith("# mcp-bridge demo server")

        item = session.read_resource("demo://items/alpha")
        assert item.contents[0].mime_type == "application/json"
        assert '"id":"alpha"' in item.text.replace(" ", "")

        with pytest.raises(NotFoundError):
            session.read_resource("demo://items/omega")


def test_subscribe_gets_resource_updates(client: Client) -> None:
    host = CannedHost()
    with client.create_session("demo", host) as session:
        session.subscribe("demo://counter")
        before = int(session.read_resource("demo://counter").text)
        result = session.call_tool("increment")
        assert result.structured_content == {"counter": before + 1}
        eventually(lambda: host.saw("notifications/resources/updated"))
        assert host.saw("notifications/resources/updated")[0] == {"uri": "demo://counter", "sessionId": session.id}
        assert session.read_resource("demo://counter").text == str(before + 1)
        session.unsubscribe("demo://counter")


# ------------------------------------------------------------------------------------ prompts


def test_prompts_and_completion(client: Client) -> None:
    with client.create_session("demo") as session:
        prompts = {p.name: p for p in session.list_prompts()}
        greet = prompts["greet"]
        assert [(a.name, a.required) for a in greet.arguments] == [("name", True), ("style", False)]

        rendered = session.get_prompt("greet", {"name": "Grace", "style": "pirate"})
        assert rendered.description == "A pirate greeting for Grace"
        assert rendered.messages[0].role == "user"
        assert isinstance(rendered.messages[0].content, TextContent)
        assert "Grace" in rendered.messages[0].content.text

        with pytest.raises(InvalidArgumentError):
            session.get_prompt("greet", {})

        assert session.complete(prompt="greet", argument="name", value="a").values == ["Ada", "Alan"]
        assert session.complete(prompt="greet", argument="style", value="").values == ["casual", "formal", "pirate"]
        c = session.complete(resource_template="demo://items/{id}", argument="id", value="g")
        assert c.values == ["gamma"] and c.total == 1 and not c.has_more
        with pytest.raises(ValueError):
            session.complete(argument="x")


def test_ping_on_the_handshake_era(client: Client) -> None:
    with client.create_session("demo", protocol_version="2025-11-25") as session:
        assert session.ping() >= 0


def test_ping_on_the_stateless_era(client: Client) -> None:
    with client.create_session("demo", protocol_version="2026-07-28") as session:
        assert session.ping() >= 0


# ------------------------------------------------------------------------- server-initiated flows


@pytest.mark.parametrize("version", ERAS)
def test_sampling(client: Client, version: str) -> None:
    host = CannedHost()
    with client.create_session("demo", host, protocol_version=version) as session:
        assert session.info.host_capabilities == {"sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {"listChanged": True}}
        result = session.call_tool("sample", {"prompt": "Say hi", "maxTokens": 42}, call_id="sample-call")
        assert not result.is_error, result.text
        assert result.text == "canned reply to: Say hi"
        assert result.structured_content == {"model": "canned-1", "stopReason": "endTurn"}
        req = host.requests[0]
        assert isinstance(req, SamplingRequest)
        assert req.max_tokens == 42
        assert req.params["messages"] == [{"role": "user", "content": {"type": "text", "text": "Say hi"}}]
        if version == "2025-11-25":
            # A legacy push over stdio belongs to the session: the bridge cannot tie it to a call with certainty.
            assert (req.origin_call_id, req.origin_name, req.origin_method) == ("", "", "")
        else:
            # An MRTR input request comes back in the call's own result: its origin is certain.
            assert (req.origin_call_id, req.origin_name, req.origin_method) == ("sample-call", "sample", "tools/call")
        assert req.delivery == ("push" if version == "2025-11-25" else "multi_round_trip")
        assert req.deadline is not None and req.session_id == session.id


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize(
    "answer,text",
    [
        (accept({"name": "Ada", "age": 36}), "accepted: name=Ada age=36"),
        ({"action": "accept", "content": {"name": "Linus"}}, "accepted: name=Linus"),
        (decline(), "declined"),
        (cancel(), "cancelled"),
    ],
    ids=["accept", "accept-dict", "decline", "cancel"],
)
def test_elicitation(client: Client, version: str, answer: Any, text: str) -> None:
    host = CannedHost(form=answer)
    with client.create_session("demo", host, protocol_version=version) as session:
        result = session.call_tool("elicit", {"message": "Who are you?"})
        assert result.text == text, result
        req = host.requests[0]
        assert isinstance(req, ElicitationRequest) and req.mode == "form"
        assert req.message == "Who are you?"
        assert req.requested_schema["required"] == ["name"]


def test_url_elicitation_and_its_completion(client: Client) -> None:
    host = CannedHost()
    with client.create_session("demo", host) as session:
        result = session.call_tool("elicit_url", {"url": "https://example.com/consent"})
        assert result.structured_content["action"] == "accept"
        req = host.requests[0]
        assert isinstance(req, ElicitationRequest) and req.mode == "url"
        assert req.url == "https://example.com/consent" and req.elicitation_id
        eventually(lambda: host.saw("notifications/elicitation/complete"))
        assert host.saw("notifications/elicitation/complete")[0]["elicitationId"] == req.elicitation_id


@pytest.mark.parametrize("version", ERAS)
def test_elicitation_content_not_matching_the_schema_is_refused(client: Client, version: str) -> None:
    host = CannedHost(form=accept({"age": "thirty"}))  # name is required, age must be an integer
    with client.create_session("demo", host, protocol_version=version) as session:
        # The bridge refuses the answer; the library then answers the server with an error instead of leaving
        # it waiting for the deadline, and the tool call fails with that error.
        with pytest.raises(BridgeError) as e:
            session.call_tool("elicit", {})
        if version == "2025-11-25":
            # The error answer went to the server, which failed the tool call with it: the server's error.
            assert e.value.code == grpc.StatusCode.INTERNAL and e.value.jsonrpc_code == -32603
        else:
            # An error answer to an MRTR input request is the host refusing input: the bridge fails the call.
            assert e.value.code == grpc.StatusCode.ABORTED and e.value.reason == "INPUT_REFUSED"
        assert "the host's answer was refused" in e.value.message and "content.name" in e.value.message


@pytest.mark.parametrize("version", ERAS)
def test_roots_from_handler_static_and_set_roots(client: Client, version: str) -> None:
    host = CannedHost(roots=[Root("file:///a", "A"), {"uri": "file:///b"}])
    with client.create_session("demo", host, protocol_version=version) as session:
        result = session.call_tool("list_roots")
        assert result.structured_content == {"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b"}]}

    # Static roots without a handler: declared, and answered by the library from the session's roots.
    with client.create_session("demo", roots=["file:///static"], protocol_version=version) as session:
        assert session.info.host_capabilities == {"roots": {"listChanged": True}}
        assert session.call_tool("list_roots").structured_content == {"roots": [{"uri": "file:///static"}]}
        now = session.set_roots([Root("file:///new", "new")])
        assert [(r.uri, r.name) for r in now] == [("file:///new", "new")]
        assert session.refresh().roots == now
        assert session.call_tool("list_roots").structured_content == {"roots": [{"uri": "file:///new", "name": "new"}]}


def test_undeclared_capabilities_are_never_asked(client: Client) -> None:
    with client.create_session("demo") as session:  # no handler: nothing declared
        assert session.call_tool("sample", {"prompt": "x"}).is_error
        assert session.call_tool("elicit", {}).is_error
        assert session.call_tool("list_roots").is_error


@pytest.mark.parametrize("version", ERAS)
def test_handler_exception_becomes_an_error_answer_and_the_stream_lives_on(client: Client, version: str) -> None:
    class Broken(CannedHost):
        def handle_sampling(self, request: SamplingRequest) -> SamplingResult:
            if request.messages[-1].text == "explode":
                raise RuntimeError("model is down")
            if request.messages[-1].text == "reject":
                raise McpError(-1, "User rejected sampling request")
            return super().handle_sampling(request)

    host = Broken()
    with client.create_session("demo", host, protocol_version=version) as session:
        for prompt, needle in (("explode", "model is down"), ("reject", "User rejected")):
            try:
                result = session.call_tool("sample", {"prompt": prompt})
            except BridgeError as err:
                assert needle in err.message
            else:
                assert result.is_error and needle in result.text, result
        assert session.call_tool("sample", {"prompt": "ok"}).text == "canned reply to: ok"
    assert client._host.connects == 1


def test_answer_later_from_another_thread(client: Client) -> None:
    pool = concurrent.futures.ThreadPoolExecutor(1)

    class Slow(CannedHost):
        def handle_sampling(self, request: SamplingRequest) -> None:
            def later() -> None:
                time.sleep(0.2)  # a person thinking
                request.respond(SamplingResult("thought about it", model="human"))

            pool.submit(later)
            return None

        def handle_elicitation(self, request: ElicitationRequest) -> Any:
            return pool.submit(lambda: accept({"name": "Future"}))

    with client.create_session("demo", Slow()) as session:
        # Other calls go on while the sampling request waits.
        with concurrent.futures.ThreadPoolExecutor(2) as callers:
            sampled = callers.submit(session.call_tool, "sample", {"prompt": "think"})
            assert session.call_tool("echo", {"text": "not blocked"}).text == "not blocked"
            assert sampled.result(30).text == "thought about it"
        assert session.call_tool("elicit", {}).text == "accepted: name=Future"
    pool.shutdown()


# ----------------------------------------------------------------------------------- reconnect


@pytest.mark.parametrize("version", ERAS)
def test_stream_dropped_while_a_request_is_pending(client: Client, version: str) -> None:
    gate = threading.Event()

    class Waiting(CannedHost):
        def handle_sampling(self, request: SamplingRequest) -> SamplingResult:
            with self.lock:
                self.requests.append(request)
            assert gate.wait(30)
            return SamplingResult("after the reconnect", model="m")

    host = Waiting()
    with client.create_session("demo", host, protocol_version=version) as session:
        with concurrent.futures.ThreadPoolExecutor(1) as caller:
            call = caller.submit(session.call_tool, "sample", {"prompt": "x"})
            eventually(lambda: host.requests)
            connects, deliveries = client._host.connects, client._host.core.deliveries
            client._drop_host_stream()
            # Reconnected, re-attached, and the bridge delivered the pending request again.
            eventually(lambda: client._host.connects > connects and client._host.core.deliveries > deliveries)
            gate.set()
            assert call.result(30).text == "after the reconnect"
        assert len(host.requests) == 1, "the handler ran once although the request was delivered twice"


def test_network_cut_while_a_request_is_pending(bridge: Bridge) -> None:
    """The host process reaches the bridge through a proxy whose connections are cut; the caller does not."""
    proxy = TcpProxy(bridge.grpc)
    gate = threading.Event()
    calls: list[str] = []

    class Human(Handler):
        def handle_elicitation(self, request: ElicitationRequest) -> Any:
            calls.append(request.request_id)
            assert gate.wait(30)
            return accept({"name": "Barbara"})

    try:
        with Client(bridge.grpc, timeout=60) as caller, Client(proxy.address, reconnect_backoff=(0.05, 0.5)) as host:
            session = host.create_session("demo", Human())  # the host process answers, through the proxy
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                call = pool.submit(caller.session(session.id).call_tool, "elicit", {})
                eventually(lambda: calls)
                accepted, deliveries = proxy.accepted, host._host.core.deliveries
                proxy.cut()
                eventually(lambda: proxy.accepted > accepted and host._host.core.deliveries > deliveries)
                gate.set()
                assert call.result(30).text == "accepted: name=Barbara"
            assert len(calls) == 1
            session.close()
    finally:
        proxy.close()


def test_pending_requests_outlive_the_host_and_reach_the_next_one(bridge: Bridge) -> None:
    """A host that dies with a request pending: the request waits; the next host attaches and answers it."""
    with Client(bridge.grpc, timeout=60) as caller:
        first = Client(bridge.grpc)
        parked: list[SamplingRequest] = []

        class Forgetful(Handler):
            def handle_sampling(self, request: SamplingRequest) -> None:
                parked.append(request)  # never answers

        session = first.create_session("demo", Forgetful())
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            call = pool.submit(caller.session(session.id).call_tool, "sample", {"prompt": "anyone?"})
            eventually(lambda: parked)
            first.close()  # the host process goes away

            # A REST-style host sees it with ListPendingRequests…
            pending = caller.session(session.id).pending_requests()
            assert [r.request_id for r in pending] == [parked[0].request_id]
            assert isinstance(pending[0], SamplingRequest) and pending[0].messages[0].text == "anyone?"

            # …and a new host process attaching to the session gets it delivered and answers it.
            second_calls: list[str] = []

            class Fresh(Handler):
                def handle_sampling(self, request: SamplingRequest) -> SamplingResult:
                    second_calls.append(request.request_id)
                    return SamplingResult("the new host answers", model="m")

            with Client(bridge.grpc) as second:
                second.session(session.id, Fresh())
                assert call.result(30).text == "the new host answers"
            assert second_calls == [parked[0].request_id]
        caller.delete_session(session.id)


def test_respond_to_request_without_a_stream(bridge: Bridge) -> None:
    """Answer with RespondToRequest (what REST hosts do) a request found with ListPendingRequests."""
    with Client(bridge.grpc, timeout=60) as client:
        holder = Client(bridge.grpc)
        session = holder.create_session("demo", CannedHost())
        holder.close()  # capabilities stay declared; nobody is attached
        s = client.session(session.id)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            call = pool.submit(s.call_tool, "elicit", {})
            eventually(lambda: s.pending_requests())
            (req,) = s.pending_requests()
            assert isinstance(req, ElicitationRequest)
            with pytest.raises(InvalidArgumentError):
                req.respond(accept({"age": 3}))  # required name missing: refused by the bridge
            req.respond(accept({"name": "Margaret", "age": 50}))
            assert call.result(30).text == "accepted: name=Margaret age=50"
        s.close()


def test_two_sessions_on_one_stream(client: Client) -> None:
    a, b = CannedHost(form=accept({"name": "A"})), CannedHost(form=accept({"name": "B"}))
    with client.create_session("demo", a) as sa, client.create_session("demo", b) as sb:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            ra = pool.submit(sa.call_tool, "elicit", {})
            rb = pool.submit(sb.call_tool, "elicit", {})
            assert ra.result(30).text == "accepted: name=A"
            assert rb.result(30).text == "accepted: name=B"
        assert client._host.connects == 1
