"""Unit tests of the retry of lost tool calls (mcp_bridge._retry): the policy on a fake clock, and the clients'
retry loops against the scripted in-process bridge (tests/fakebridge.py). The real restart is in
test_integration_resume.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import grpc
import pytest

from mcp_bridge import (
    AsyncClient,
    BridgeError,
    CallOutcomeUnknownError,
    Client,
    DeadlineExceededError,
    NotFoundError,
    Progress,
    RetryPolicy,
    UnavailableError,
)
from mcp_bridge._retry import Attempts, never_sent, new_call_id, retryable
from mcp_bridge.errors import error_class

from .fakebridge import FakeBridge, start_fake_bridge

U = grpc.StatusCode.UNAVAILABLE
DROPPED = BridgeError(U, "Stream removed (Socket closed)")
REFUSED = BridgeError(
    U,
    "failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:1: Failed to connect to remote host: Connection refused",
)
DRAINING = BridgeError(U, "the bridge is shutting down", reason="SHUTTING_DOWN")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def attempts(timeout: float | None = None, policy: RetryPolicy | None = None, **kw: bool) -> tuple[Attempts, FakeClock]:
    clock = FakeClock()
    # rand 0.5: no jitter, so the waits are exact.
    return Attempts(policy or RetryPolicy(), timeout, clock=clock, rand=lambda: 0.5, **kw), clock


# ------------------------------------------------------------------------------------------ the policy


def test_backoff_doubles_from_100ms_and_is_capped() -> None:
    a, clock = attempts(timeout=None)
    waits = []
    for _ in range(8):
        d = a.retry_after(DROPPED)
        assert d is not None
        waits.append(round(d, 3))
        clock.now += d
    assert waits == [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]


def test_jitter_stays_within_its_bounds() -> None:
    for r in (0.0, 1.0):
        a = Attempts(RetryPolicy(jitter=0.2), None, clock=FakeClock(), rand=lambda r=r: r)  # type: ignore[misc]
        d = a.retry_after(DROPPED)
        assert d is not None and 0.08 - 1e-9 <= d <= 0.12 + 1e-9


@pytest.mark.parametrize(
    "err,retried",
    [
        (DROPPED, True),
        (REFUSED, True),
        (DRAINING, True),
        (BridgeError(U, "session moved", reason="SESSION_MOVED"), True),  # retry through the proxy
        (BridgeError(U, "redis down", reason="STATE_STORE_UNAVAILABLE"), True),
        (BridgeError(U, "all replicas restarting", reason="NO_REPLICA_AVAILABLE"), True),  # the proxy's: retry
        (BridgeError(U, "misrouted", reason="WRONG_REPLICA"), False),  # the proxy is misconfigured
        (BridgeError(grpc.StatusCode.ALREADY_EXISTS, "used", reason="CALL_ID_USED"), False),
        (BridgeError(grpc.StatusCode.ABORTED, "evicted", reason="CALL_OUTCOME_EVICTED"), False),
        (BridgeError(U, "replica gone", reason="REPLICA_UNAVAILABLE"), False),  # the session is lost
        (BridgeError(U, "server down", reason="UPSTREAM_UNAVAILABLE"), False),
        (BridgeError(U, "idp down", reason="IDENTITY_PROVIDER_UNAVAILABLE"), False),
        (BridgeError(grpc.StatusCode.DEADLINE_EXCEEDED, "late"), False),
        (BridgeError(grpc.StatusCode.CANCELLED, "cancelled"), False),
        (BridgeError(grpc.StatusCode.ABORTED, "unknown", reason="CALL_OUTCOME_UNKNOWN"), False),
        (BridgeError(grpc.StatusCode.INVALID_ARGUMENT, "bad"), False),
    ],
)
def test_which_errors_are_retried(err: BridgeError, retried: bool) -> None:
    assert retryable(err) is retried
    a, _ = attempts()
    assert (a.retry_after(err) is not None) is retried


def test_resume_only_after_an_attempt_that_may_have_reached_the_bridge() -> None:
    a, clock = attempts()
    assert not a.resume
    assert never_sent(REFUSED) and not never_sent(DROPPED) and not never_sent(DRAINING)
    a.retry_after(REFUSED)
    assert not a.resume  # it never left the client: send it as a new call
    a.retry_after(DROPPED)
    assert a.resume  # it may have run: ask for its one outcome from now on
    a.retry_after(REFUSED)
    assert a.resume  # and keep asking, even while the bridge is down


def test_a_host_resume_is_kept() -> None:
    a, _ = attempts(resume=True)
    assert a.resume
    a.retry_after(REFUSED)
    assert a.resume


def test_retries_stop_before_the_deadline_and_attempts_get_what_is_left() -> None:
    a, clock = attempts(timeout=1.0)
    assert a.timeout() == pytest.approx(1.0)
    total = 0.0
    while (d := a.retry_after(DROPPED)) is not None:
        total += d
        clock.now += d
        assert a.timeout() == pytest.approx(1.0 - total)
    assert total == pytest.approx(0.7)  # 0.1 + 0.2 + 0.4; the next wait (0.8) would pass the deadline
    clock.now += 5
    assert a.timeout() == 0.0


def test_without_a_deadline_retries_stop_after_max_retry_time() -> None:
    a, clock = attempts(timeout=None, policy=RetryPolicy(max_retry_time=10.0))
    assert a.timeout() is None
    clock.now += 1000  # a long first attempt: the window starts at the first failure
    total = 0.0
    while (d := a.retry_after(DROPPED)) is not None:
        total += d
        clock.now += d
    assert 8.0 <= total < 10.0
    assert a.retries == 8  # 0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 3 * 2.0 = 9.1 s; one more would pass 10 s


def test_disabled_policy_never_retries() -> None:
    a, _ = attempts(policy=RetryPolicy(enabled=False))
    assert a.retry_after(DROPPED) is None
    assert not a.resume


def test_bad_policies_are_refused() -> None:
    with pytest.raises(ValueError):
        RetryPolicy(initial_backoff=0)
    with pytest.raises(ValueError):
        RetryPolicy(initial_backoff=3, max_backoff=1)
    with pytest.raises(ValueError):
        RetryPolicy(jitter=1.5)


def test_call_ids_and_the_typed_error() -> None:
    a, b = new_call_id(), new_call_id()
    assert a != b and a.startswith("call-") and len(a) == len("call-") + 32
    cls = error_class(grpc.StatusCode.ABORTED, "CALL_OUTCOME_UNKNOWN")
    assert cls is CallOutcomeUnknownError
    err = cls(grpc.StatusCode.ABORTED, "unknown", reason="CALL_OUTCOME_UNKNOWN")
    assert err.outcome_unknown and not err.session_lost
    assert not BridgeError(grpc.StatusCode.ABORTED, "refused", reason="INPUT_REFUSED").outcome_unknown


# ------------------------------------------------------------------ the clients, against a scripted bridge


@pytest.fixture
def fake() -> Iterator[tuple[FakeBridge, str]]:
    bridge, server, target = start_fake_bridge()
    try:
        yield bridge, target
    finally:
        server.stop(0)


FAST = RetryPolicy(initial_backoff=0.01, max_backoff=0.05)


def test_call_tool_resumes_with_the_same_id(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    bridge.call_failures = [(U, "the bridge is shutting down", "SHUTTING_DOWN"), (U, "socket closed", "")]
    with Client(target, retry=FAST) as client:
        session = client.create_session("demo")
        result = session.call_tool("t", {"a": 1}, timeout=10)
    assert result.text == "t resume=True"
    ids = {c.call_id for c in bridge.tool_calls}
    assert len(bridge.tool_calls) == 3 and len(ids) == 1 and ids.pop().startswith("call-")
    assert [c.resume for c in bridge.tool_calls] == [False, True, True]
    assert result.call_id == bridge.tool_calls[0].call_id


def test_detach_and_cancel_call(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    with Client(target, retry=FAST) as client:
        session = client.create_session("demo")
        session.call_tool("t", call_id="job-d", detach=True, timeout=10)
        list(session.call_tool_stream("t", call_id="job-s", detach=True, timeout=10))
        with pytest.raises(ValueError):
            session.call_tool("t", detach=True)
        session.cancel_call("job-d")
        with pytest.raises(NotFoundError) as err:
            session.cancel_call("never")
    assert err.value.reason == "CALL_NOT_FOUND"
    assert [(c.call_id, c.detach) for c in bridge.tool_calls] == [("job-d", True), ("job-s", True)]
    assert bridge.cancelled == ["job-d", "never"]


def test_detached_calls_list_only_the_calls_cut_off(fake: tuple[FakeBridge, str]) -> None:
    """DetachedCalls (the framework adapters' registry): every call detached with an id of its own; a call cut
    off (DEADLINE_EXCEEDED, CANCELLED) stays listed for resume or cancel; a returned call, an error that is the
    call's outcome (NOT_FOUND, an expired approval) and a cancelled one leave the list."""
    from mcp_bridge import DetachedCalls
    from mcp_bridge._adapt import Source

    bridge, target = fake
    calls = DetachedCalls()
    with Client(target, retry=False) as client:
        src = Source(client.create_session("demo"), detached=calls)
        assert src.call_tool("t", {}).text.startswith("t")
        assert calls.running() == []
        for code, reason, listed in [
            (grpc.StatusCode.DEADLINE_EXCEEDED, "", True),
            (grpc.StatusCode.CANCELLED, "", True),
            (grpc.StatusCode.NOT_FOUND, "SESSION_NOT_FOUND", False),
            (grpc.StatusCode.DEADLINE_EXCEEDED, "APPROVAL_EXPIRED", False),
        ]:
            bridge.call_failures = [(code, "m", reason)]
            with pytest.raises(BridgeError):
                src.call_tool("t", {})
            assert (bridge.tool_calls[-1].call_id in {c.call_id for c in calls.running()}) is listed, (code, reason)
        assert all(c.detach and c.call_id.startswith("call-") for c in bridge.tool_calls)
        assert len({c.call_id for c in bridge.tool_calls}) == len(bridge.tool_calls)
        first, second = calls.running()
        assert calls.resume(first.call_id).text == "t resume=True"
        calls.cancel(second.call_id)
        assert calls.running() == []
        assert bridge.cancelled == [second.call_id]
        with pytest.raises(KeyError):
            calls.resume(first.call_id)


def test_the_hosts_call_id_is_kept_and_outcome_unknown_is_typed(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    bridge.call_failures = [(U, "socket closed", ""), (grpc.StatusCode.ABORTED, "outcome unknown", "CALL_OUTCOME_UNKNOWN")]
    with Client(target, retry=FAST) as client:
        session = client.create_session("demo")
        with pytest.raises(CallOutcomeUnknownError) as err:
            session.call_tool("t", call_id="job-1", timeout=10)
    assert err.value.outcome_unknown and err.value.call_id == "job-1"
    assert [(c.call_id, c.resume) for c in bridge.tool_calls] == [("job-1", False), ("job-1", True)]


def test_retry_can_be_turned_off(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    with Client(target, retry=False) as client:
        session = client.create_session("demo")
        bridge.call_failures = [(U, "socket closed", "")]
        with pytest.raises(UnavailableError) as err:
            session.call_tool("t")
        assert err.value.call_id.startswith("call-") and len(bridge.tool_calls) == 1
        # ... and on for one call.
        bridge.call_failures = [(U, "socket closed", "")]
        assert session.call_tool("t", retry=FAST).text == "t resume=True"
    with Client(target, retry=FAST) as client:
        session = client.create_session("demo")
        bridge.call_failures = [(U, "socket closed", "")]
        with pytest.raises(UnavailableError):
            session.call_tool("t", retry=False)


def test_a_lost_session_is_not_retried(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    bridge.call_failures = [(U, "replica gone", "REPLICA_UNAVAILABLE")]
    with Client(target, retry=FAST) as client:
        session = client.create_session("demo")
        with pytest.raises(UnavailableError) as err:
            session.call_tool("t")
    assert err.value.session_lost and len(bridge.tool_calls) == 1


def test_retries_end_at_the_deadline(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    bridge.call_failures = [(U, "socket closed", "")] * 1000
    with Client(target, retry=RetryPolicy(initial_backoff=0.05, max_backoff=0.05)) as client:
        session = client.create_session("demo")
        with pytest.raises((UnavailableError, DeadlineExceededError)):
            session.call_tool("t", timeout=0.5)
    assert 3 <= len(bridge.tool_calls) <= 12


def test_a_stream_is_opened_again_with_resume(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake
    bridge.call_failures = [(U, "socket closed", "")]
    with Client(target, retry=FAST) as client:
        session = client.create_session("demo")
        events = list(session.call_tool_stream("t", call_id="s-1", timeout=10))
    # The progress of the first stream, again on the second (a resumed stream may repeat events), then the result.
    assert [type(e).__name__ for e in events] == ["Progress", "Progress", "CallToolResult"]
    assert isinstance(events[0], Progress)
    assert events[-1].text == "t resume=True"  # type: ignore[union-attr]
    assert [(c.call_id, c.resume) for c in bridge.tool_calls] == [("s-1", False), ("s-1", True)]


def test_the_async_client_retries_calls_and_streams(fake: tuple[FakeBridge, str]) -> None:
    bridge, target = fake

    async def main() -> None:
        async with AsyncClient(target, retry=FAST) as client:
            session = await client.create_session("demo")
            bridge.call_failures = [(U, "socket closed", "")]
            assert (await session.call_tool("t", timeout=10)).text == "t resume=True"
            bridge.call_failures = [(U, "the bridge is shutting down", "SHUTTING_DOWN")]
            events = [e async for e in session.call_tool_stream("t", timeout=10)]
            assert events[-1].text == "t resume=True"  # type: ignore[union-attr]
            bridge.call_failures = [(grpc.StatusCode.ABORTED, "outcome unknown", "CALL_OUTCOME_UNKNOWN")]
            with pytest.raises(CallOutcomeUnknownError):
                await session.call_tool("t", call_id="c-r", resume=True)
            with pytest.raises(ValueError):
                await session.call_tool("t", resume=True)  # resume what? it needs the call's id
            bridge.call_failures = [(U, "socket closed", "")]
            with pytest.raises(UnavailableError):
                await session.call_tool("t", retry=False)

    asyncio.run(main())
    assert [c.resume for c in bridge.tool_calls] == [False, True, False, True, True, False]
