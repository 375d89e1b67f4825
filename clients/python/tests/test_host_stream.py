"""Unit tests of the host stream against a scripted in-process bridge (tests/fakebridge.py).

They pin down what is hard to provoke on purpose with the real binary: the exact redelivery and dedupe
rules, answers queued while disconnected, refused answers, and ordering of notifications.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.rpc import code_pb2, status_pb2

from mcp_bridge import (
    AsyncClient,
    BridgeError,
    Client,
    ElicitationRequest,
    Handler,
    McpError,
    RootsRequest,
    SamplingRequest,
    SamplingResult,
    accept,
)
from mcp_bridge import _convert as cv
from mcp_bridge._gen.mcpbridge.v1 import host_pb2, mcp_pb2

from .fakebridge import FakeBridge, sampling_request, start_fake_bridge


@pytest.fixture
def fake() -> Iterator[tuple[FakeBridge, str]]:
    bridge, server, target = start_fake_bridge()
    try:
        yield bridge, target
    finally:
        server.stop(grace=None)


def eventually(predicate: Any, timeout: float = 10.0) -> None:
    """Poll a client-side condition (the fake bridge's own conditions use bridge.wait)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.005)


def reply_of(msg: host_pb2.ConnectRequest) -> host_pb2.HostAnswer:
    assert msg.WhichOneof("action") == "reply", msg
    return msg.reply.answer


class Recorder(Handler):
    """Answers sampling with the prompt reversed; counts calls; can be told to block."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.release = threading.Event()
        self.release.set()
        self.notes: list[tuple[str, dict[str, Any]]] = []

    def handle_sampling(self, request: SamplingRequest) -> Any:
        self.calls.append(request.request_id)
        assert self.release.wait(10)
        return SamplingResult(request.messages[0].text[::-1], model="reverser")

    def handle_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notes.append((method, params))


# ---------------------------------------------------------------------------------------------- sync


def test_capabilities_reach_create_session_and_the_session_is_attached(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    with Client(target) as client:
        session = client.create_session("demo", Recorder(), roots=["file:///work"])
        req = bridge.sessions[session.id]
        assert cv.host_capabilities_to_mcp(req.host_capabilities) == {"sampling": {}, "roots": {"listChanged": True}}
        assert [r.uri for r in req.roots] == ["file:///work"]
        assert bridge.attached_streams(session.id) == 1
        assert session.info.host_capabilities == {"sampling": {}, "roots": {"listChanged": True}}
        session.close()
        assert session.id not in bridge.sessions


def test_a_session_without_handler_or_roots_opens_no_stream(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    with Client(target) as client:
        client.create_session("demo")
        assert bridge.connects == 0
        with pytest.raises(BridgeError) as e:
            client.create_session("nope")
        assert e.value.code == grpc.StatusCode.NOT_FOUND


def test_sampling_answer_and_handler_error_and_the_stream_survives(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake

    class Flaky(Handler):
        n = 0

        def handle_sampling(self, request: SamplingRequest) -> Any:
            self.n += 1
            if self.n == 1:
                raise RuntimeError("model exploded")
            if self.n == 2:
                raise McpError(-1, "User rejected sampling request")
            if self.n == 3:
                return 42  # not an answer: becomes an error answer too
            return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    with Client(target) as client:
        s = client.create_session("demo", Flaky())
        for i in range(4):
            bridge.push_request(s.id, f"r{i}", sampling=sampling_request())
        a = [reply_of(bridge.wait_answer(f"r{i}")) for i in range(4)]
        assert a[0].error.code == -32603 and "model exploded" in a[0].error.message
        assert (a[1].error.code, a[1].error.message) == (-1, "User rejected sampling request")
        assert a[2].error.code == -32603 and "SamplingResult" in a[2].error.message
        assert a[3].sampling.content[0].text.text == "ok"
        assert bridge.connects == 1, "handler errors never break the stream"


def test_answers_later_from_another_thread_and_via_future(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    parked: list[ElicitationRequest] = []
    pool = concurrent.futures.ThreadPoolExecutor(2)

    class Later(Handler):
        def handle_elicitation(self, request: ElicitationRequest) -> Any:
            if request.message == "later":
                parked.append(request)
                return None  # answered with request.respond() below
            return pool.submit(lambda: accept({"name": "from a future"}))

    with Client(target) as client:
        s = client.create_session("demo", Later())
        bridge.push_request(s.id, "r1", elicitation=mcp_pb2.ElicitRequest(message="later"))
        bridge.push_request(s.id, "r2", elicitation=mcp_pb2.ElicitRequest(message="future"))
        a2 = reply_of(bridge.wait_answer("r2"))
        assert cv.struct_to_dict(a2.elicitation.content) == {"name": "from a future"}
        eventually(lambda: bool(parked))
        assert not bridge.answers.get("r1"), "nothing was answered for the parked request yet"
        t = threading.Thread(target=lambda: parked[0].respond(accept({"name": "Ada"})))
        t.start()
        t.join()
        a1 = reply_of(bridge.wait_answer("r1"))
        assert a1.elicitation.action == mcp_pb2.ELICIT_ACTION_ACCEPT
        assert parked[0].respond(accept({"name": "twice"})) is False, "a second answer is dropped"
        assert len(bridge.answers["r1"]) == 1
    pool.shutdown()


def test_request_pending_across_a_broken_stream_is_handled_once(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    rec = Recorder()
    rec.release.clear()  # the handler blocks, as a human would
    with Client(target, reconnect_backoff=(0.05, 0.2)) as client:
        s = client.create_session("demo", rec)
        bridge.push_request(s.id, "r1", sampling=sampling_request("abc"))
        eventually(lambda: bool(rec.calls))
        assert rec.calls == ["r1"]
        attaches = bridge.attach_count
        bridge.kill_streams()
        # The client reconnects, re-attaches, and the bridge delivers r1 again.
        bridge.wait(lambda: bridge.attach_count > attaches and bridge.attached_streams(s.id) == 1)
        rec.release.set()
        answer = reply_of(bridge.wait_answer("r1"))
        assert answer.sampling.content[0].text.text == "cba"
        assert rec.calls == ["r1"], "the handler ran once for a request delivered twice"
        assert client._host.connects >= 2


def test_answer_made_while_disconnected_is_sent_after_reconnect(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    parked: list[SamplingRequest] = []

    class Parker(Handler):
        def handle_sampling(self, request: SamplingRequest) -> Any:
            parked.append(request)
            return None

    with Client(target, reconnect_backoff=(0.5, 1.0)) as client:
        s = client.create_session("demo", Parker())
        bridge.push_request(s.id, "r1", sampling=sampling_request())
        eventually(lambda: bool(parked))
        bridge.kill_streams()
        bridge.wait(lambda: bridge.attached_streams(s.id) == 0)
        # Answer during the backoff: nothing can be sent now, the answer waits for the next stream.
        assert parked[0].respond(SamplingResult("late but fine", model="m")) is True
        answer = reply_of(bridge.wait_answer("r1"))
        assert answer.sampling.content[0].text.text == "late but fine"
        assert len(parked) == 1
        bridge.wait(lambda: "r1" not in bridge.pending)
        assert len(bridge.answers["r1"]) == 1, "sent once, though r1 was delivered again on the new stream"


def test_refused_answer_becomes_an_error_answer(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake

    class BadForm(Handler):
        def handle_elicitation(self, request: ElicitationRequest) -> Any:
            return accept({"age": "not a number"})

    with Client(target) as client:
        s = client.create_session("demo", BadForm())
        bridge.reject_next["r1"] = status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message="content.age: want integer")
        bridge.push_request(s.id, "r1", elicitation=mcp_pb2.ElicitRequest(message="age?"))
        bridge.wait(lambda: len(bridge.answers.get("r1", [])) == 2)
        first, second = (reply_of(m) for m in bridge.answers["r1"])
        assert first.WhichOneof("answer") == "elicitation"
        assert second.error.code == -32603 and "want integer" in second.error.message


def test_roots_static_and_from_a_zero_argument_list_roots(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake

    class Seedish(Handler):
        def list_roots(self) -> Any:  # type: ignore[override]
            return [{"uri": "file:///home/user", "name": "Home"}]

    with Client(target) as client:
        static = client.create_session("demo", roots=["file:///static"])
        dynamic = client.create_session("demo", Seedish())
        bridge.push_request(static.id, "r1", roots=mcp_pb2.ListRootsRequest())
        bridge.push_request(dynamic.id, "r2", roots=mcp_pb2.ListRootsRequest())
        assert [r.uri for r in reply_of(bridge.wait_answer("r1")).roots.roots] == ["file:///static"]
        assert [(r.uri, r.name) for r in reply_of(bridge.wait_answer("r2")).roots.roots] == [("file:///home/user", "Home")]


def test_undeclared_request_is_refused_with_method_not_found(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    with Client(target) as client:
        s = client.create_session("demo", Recorder())  # sampling only
        bridge.push_request(s.id, "r1", elicitation=mcp_pb2.ElicitRequest(message="?"))
        assert reply_of(bridge.wait_answer("r1")).error.code == -32601


def test_notifications_in_order_and_a_failing_observer_does_not_break_anything(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    seen: list[tuple[str, dict[str, Any]]] = []
    done = threading.Event()

    class Observer(Recorder):
        def handle_notification(self, method: str, params: dict[str, Any]) -> None:
            seen.append((method, params))
            if method == "notifications/resources/updated" and params["uri"] == "boom":
                raise RuntimeError("observer bug")
            if method == "bridge/requestEnded":
                done.set()

    with Client(target) as client:
        s = client.create_session("demo", Observer())
        for i in range(20):
            p = mcp_pb2.ProgressNotification(progress=i, call_id="c1")
            bridge.push_event(s.id, progress=p)
        bridge.push_event(s.id, resource_updated=host_pb2.ResourceUpdated(uri="boom"))
        bridge.push_request(s.id, "r1", sampling=sampling_request())
        bridge.wait_answer("r1")
        assert done.wait(10)
        progress = [p["progress"] for m, p in seen if m == "notifications/progress"]
        assert progress == [float(i) for i in range(20)]
        assert ("notifications/resources/updated", {"uri": "boom", "sessionId": s.id}) in seen
        assert seen[-1] == ("bridge/requestEnded", {"requestId": "r1", "outcome": "answered", "detail": "", "sessionId": s.id})


def test_request_that_ended_before_the_answer_drops_the_answer(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    parked: list[SamplingRequest] = []

    class Parker(Handler):
        def handle_sampling(self, request: SamplingRequest) -> Any:
            parked.append(request)

    with Client(target) as client:
        s = client.create_session("demo", Parker())
        bridge.push_request(s.id, "r1", sampling=sampling_request())
        eventually(lambda: bool(parked))
        bridge.end_request("r1")
        eventually(lambda: not client._host.core.pending_ids())
        assert parked[0].respond(SamplingResult("too late", model="m")) is False
        assert not bridge.answers.get("r1")


def test_reattach_of_an_unknown_session_fails_create(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    with Client(target) as client:
        with pytest.raises(BridgeError) as e:
            client.session("s-missing", Recorder())
        assert e.value.code == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("code", [grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.UNAUTHENTICATED])
def test_a_refused_stream_fails_create_session_at_once(fake: tuple[FakeBridge, str], code: grpc.StatusCode) -> None:
    bridge, target = fake
    bridge.refuse_connect = code
    with Client(target, attach_timeout=30) as client:
        start = time.monotonic()
        with pytest.raises(BridgeError) as e:
            client.create_session("demo", Recorder())
        assert e.value.code == code
        assert time.monotonic() - start < 10, "not after the attach timeout"
        assert not bridge.sessions, "the half-made session was deleted"

    async def main() -> None:
        async with AsyncClient(target, attach_timeout=30) as client:
            with pytest.raises(BridgeError) as e:
                await client.create_session("demo", Recorder())
            assert e.value.code == code

    asyncio.run(main())


def test_create_session_fails_when_the_stream_cannot_attach() -> None:
    # No bridge at all behind the port: CreateSession fails UNAVAILABLE quickly.
    with Client("127.0.0.1:1", timeout=2) as client:
        with pytest.raises(BridgeError) as e:
            client.create_session("demo", Recorder())
        assert e.value.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def test_lists_fetch_every_page_and_stop_on_a_repeated_cursor(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    with Client(target) as client:
        session = client.create_session("demo")
        assert [t.name for t in session.list_tools()] == ["a", "b", "c", "d"]
        with pytest.raises(RuntimeError, match="repeated page token"):
            session.list_resources()

    async def main() -> None:
        async with AsyncClient(target) as client:
            session = await client.create_session("demo")
            assert [t.name for t in await session.list_tools()] == ["a", "b", "c", "d"]
            with pytest.raises(RuntimeError, match="repeated page token"):
                await session.list_resources()

    asyncio.run(main())


# --------------------------------------------------------------------------------------------- asyncio


def test_async_handlers_sync_handlers_and_redelivery(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake

    async def main() -> None:
        gate = asyncio.Event()
        calls: list[str] = []
        thread_names: list[str] = []

        class AsyncHost(Handler):
            async def handle_sampling(self, request: SamplingRequest) -> Any:
                calls.append(request.request_id)
                await gate.wait()
                return SamplingResult("async answer", model="m")

            def handle_elicitation(self, request: ElicitationRequest) -> Any:
                thread_names.append(threading.current_thread().name)
                time.sleep(0.05)  # a blocking handler must not stall the loop
                return accept({"ok": True})

            async def list_roots(self, request: RootsRequest) -> Any:
                raise RuntimeError("no roots today")

        async with AsyncClient(target, reconnect_backoff=(0.05, 0.2)) as client:
            s = await client.create_session("demo", AsyncHost())
            assert bridge.sessions[s.id].host_capabilities.HasField("sampling")
            bridge.push_request(s.id, "r1", sampling=sampling_request())
            bridge.push_request(s.id, "r2", elicitation=mcp_pb2.ElicitRequest(message="?"))
            bridge.push_request(s.id, "r3", roots=mcp_pb2.ListRootsRequest())
            a2 = await asyncio.to_thread(bridge.wait_answer, "r2")
            assert reply_of(a2).elicitation.action == mcp_pb2.ELICIT_ACTION_ACCEPT
            assert thread_names and thread_names[0] != threading.main_thread().name
            a3 = await asyncio.to_thread(bridge.wait_answer, "r3")
            assert "no roots today" in reply_of(a3).error.message

            # r1 is still pending (its handler awaits the gate): break the stream; it is delivered again.
            attaches = bridge.attach_count
            bridge.kill_streams()
            await asyncio.to_thread(bridge.wait, lambda: bridge.attach_count > attaches and bridge.attached_streams(s.id) == 1)
            gate.set()
            a1 = await asyncio.to_thread(bridge.wait_answer, "r1")
            assert reply_of(a1).sampling.content[0].text.text == "async answer"
            assert calls == ["r1"]
            await s.close()

    asyncio.run(main())


def test_async_answer_from_a_plain_thread(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake

    async def main() -> None:
        parked: list[SamplingRequest] = []

        class Parker(Handler):
            async def handle_sampling(self, request: SamplingRequest) -> Any:
                parked.append(request)
                return None

        async with AsyncClient(target) as client:
            s = await client.create_session("demo", Parker())
            bridge.push_request(s.id, "r1", sampling=sampling_request())
            while not parked:
                await asyncio.sleep(0.01)
            threading.Thread(target=parked[0].respond, args=(SamplingResult("from a thread", model="m"),)).start()
            a = await asyncio.to_thread(bridge.wait_answer, "r1")
            assert reply_of(a).sampling.content[0].text.text == "from a thread"

    asyncio.run(main())
