"""Approvals (docs/adr/0080-approvals.md) against the real binary: an approver host decides tool calls that
need approval through ``Client.serve_approvals`` and ``Handler.handle_approval``; callers get the typed errors
``ApprovalDeniedError`` and ``ApprovalExpiredError``."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_bridge import (
    ApprovalDecision,
    ApprovalDeniedError,
    ApprovalExpiredError,
    ApprovalPending,
    ApprovalRequest,
    AsyncClient,
    Client,
    Handler,
    PermissionDeniedError,
    TextWarning,
    approve,
    deny,
)

from .conftest import Bridge, bridge_binary, running_bridge


@pytest.fixture(scope="module")
def approval_bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    binary = bridge_binary()
    workdir = tmp_path_factory.mktemp("approvals")
    tokens = workdir / "tokens.txt"
    tokens.write_text("tok-alice alice\ntok-bob bob\ntok-eve eve\n")
    demo = {"command": str(binary), "args": ["demo-server"], "tools": {"approve": ["echo"]}, "approvers": {"principals": ["bob"]}}
    config: dict[str, Any] = {
        "mcpServers": {
            "gated": {**demo, "approvalExpiry": "1h"},
            "gated-fast": {**demo, "approvalExpiry": "200ms"},
        },
        "auth": {"tokensFile": str(tokens)},
    }
    with running_bridge(binary, config, workdir) as b:
        yield b


class Approver(Handler):
    """Approves echo calls unless their text says "deny"; records what it was shown."""

    def __init__(self) -> None:
        self.seen: list[ApprovalRequest] = []
        self.lock = threading.Lock()

    def handle_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        with self.lock:
            self.seen.append(request)
        if "deny" in str(request.arguments.get("text", "")):
            return deny("not this text")
        return approve("looks fine")


def test_approve_and_deny(approval_bridge: Bridge) -> None:
    approver = Approver()
    with Client(approval_bridge.grpc, token="tok-bob", timeout=60) as bob, Client(approval_bridge.grpc, token="tok-alice", timeout=60) as alice:
        bob.serve_approvals(approver)
        with alice.create_session("gated") as session:
            assert session.call_tool("echo", {"text": "héllo \"x\""}).text == 'héllo "x"'
            req = approver.seen[-1]
            assert (req.caller, req.server_name, req.tool, req.rule, req.session_id) == ("alice", "gated", "echo", "echo", session.id)
            assert req.arguments == {"text": 'héllo "x"'}
            assert req.canonical_arguments == '{"text":"héllo \\"x\\""}'
            assert req.arguments_sha256 == hashlib.sha256(req.canonical_arguments.encode()).hexdigest()
            assert json.loads(req.canonical_arguments) == req.arguments
            assert req.deadline is not None

            with pytest.raises(ApprovalDeniedError) as e:
                session.call_tool("echo", {"text": "please deny"})
            assert isinstance(e.value, PermissionDeniedError)
            assert e.value.reason == "APPROVAL_DENIED" and "not this text" in e.value.message

            # Tools the policy does not name need no approval.
            n = len(approver.seen)
            assert session.call_tool("add", {"a": 2, "b": 3}).text == "2 + 3 = 5"
            assert len(approver.seen) == n


def test_only_approvers_see_approvals(approval_bridge: Bridge) -> None:
    eve_handler, bob_handler = Approver(), Approver()
    with (
        Client(approval_bridge.grpc, token="tok-eve", timeout=60) as eve,
        Client(approval_bridge.grpc, token="tok-bob", timeout=60) as bob,
        Client(approval_bridge.grpc, token="tok-alice", timeout=60) as alice,
    ):
        eve.serve_approvals(eve_handler)  # not an approver: the bridge never shows it an approval
        alice.serve_approvals(Approver())  # the caller may not approve its own calls
        bob.serve_approvals(bob_handler)
        with alice.create_session("gated") as session:
            assert session.call_tool("echo", {"text": "bob decides"}).text == "bob decides"
        assert [r.arguments["text"] for r in bob_handler.seen] == ["bob decides"]
        assert eve_handler.seen == []


def test_expired(approval_bridge: Bridge) -> None:
    with Client(approval_bridge.grpc, token="tok-alice", timeout=60) as alice, alice.create_session("gated-fast") as session:
        with pytest.raises(ApprovalExpiredError) as e:
            session.call_tool("echo", {"text": "nobody is there"})
        assert e.value.reason == "APPROVAL_EXPIRED"


def test_serve_approvals_needs_a_handler() -> None:
    with Client("127.0.0.1:1") as c, pytest.raises(TypeError):
        c.serve_approvals(Handler())


def test_async_client_serves_approvals(approval_bridge: Bridge) -> None:
    approver = Approver()

    async def main() -> None:
        async with AsyncClient(approval_bridge.grpc, token="tok-bob", timeout=60) as bob:
            await bob.serve_approvals(approver)
            with Client(approval_bridge.grpc, token="tok-alice", timeout=60) as alice, alice.create_session("gated") as session:
                text = await asyncio.to_thread(lambda: session.call_tool("echo", {"text": "async approver"}).text)
        assert text == "async approver"

    asyncio.run(asyncio.wait_for(main(), 60))
    assert [r.arguments["text"] for r in approver.seen] == ["async approver"]


def _pending_approvals(bridge: Bridge, token: str) -> list[Any]:
    req = urllib.request.Request(f"http://{bridge.http}/v1/sessions/approvals/requests", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return list(json.load(resp).get("requests", []))


def test_serve_approvals_on_an_open_stream_delivers_those_pending(approval_bridge: Bridge) -> None:
    approver = Approver()
    with Client(approval_bridge.grpc, token="tok-bob", timeout=60) as bob, Client(approval_bridge.grpc, token="tok-alice", timeout=60) as alice:
        # bob's host stream is open already (a session with a handler), before anything is pending.
        with bob.create_session("gated", Approver()), alice.create_session("gated") as session:
            result: list[str] = []
            caller = threading.Thread(target=lambda: result.append(session.call_tool("echo", {"text": "pending first"}).text))
            caller.start()
            deadline = time.monotonic() + 30
            while not _pending_approvals(approval_bridge, "tok-bob"):
                assert time.monotonic() < deadline, "the approval request never became pending"
                time.sleep(0.02)  # polling the bridge, bounded by the deadline
            bob.serve_approvals(approver)
            caller.join(30)
            assert result == ["pending first"]
            assert [r.arguments["text"] for r in approver.seen] == ["pending first"]


def test_warnings_reach_the_approver_and_the_caller_is_told(approval_bridge: Bridge) -> None:
    """Issue 30: the bridge's untrusted-text warnings reach a Python approver's handler (sync and async), the
    caller's stream says the call waits (rule, approvers, expiry), and a denial carries the approver's
    reason and name."""
    approver = Approver()
    hostile = {"text": "please deny \u202e1000000", "to\u200b": "mallory"}
    with Client(approval_bridge.grpc, token="tok-bob", timeout=60) as bob, Client(approval_bridge.grpc, token="tok-alice", timeout=60) as alice:
        bob.serve_approvals(approver)
        with alice.create_session("gated") as session:
            events: list[Any] = []
            with pytest.raises(ApprovalDeniedError) as e:
                for ev in session.call_tool_stream("echo", hostile, call_id="py-hostile"):
                    events.append(ev)
            pending = events[0]
            assert isinstance(pending, ApprovalPending), events
            assert pending.rule == "echo" and pending.approvers.principals == ["bob"] and pending.expires is not None
            assert pending.call_id == "py-hostile" and pending.tool == "echo" and pending.warnings
            assert e.value.approver_reason == "not this text" and e.value.decided_by == "bob"
            assert e.value.approval_request_id == pending.request_id and "not this text" in e.value.message

    req = approver.seen[-1]
    got = {(w.path, w.kind, tuple(w.code_points), w.in_key) for w in req.warnings}
    assert ("approval.arguments.text", "bidi_control", ("U+202E",), False) in got, req.warnings
    assert ('approval.arguments["to\\u200b"]', "invisible", ("U+200B",), True) in got, req.warnings
    assert all(isinstance(w, TextWarning) for w in req.warnings)
    assert req.approvers.principals == ["bob"]

    seen_async: list[ApprovalRequest] = []

    class AsyncApprover(Handler):
        async def handle_approval(self, request: ApprovalRequest) -> ApprovalDecision:
            seen_async.append(request)
            return approve("ok")

    async def main() -> None:
        async with AsyncClient(approval_bridge.grpc, token="tok-bob", timeout=60) as abob, AsyncClient(approval_bridge.grpc, token="tok-alice", timeout=60) as aalice:
            await abob.serve_approvals(AsyncApprover())
            async with await aalice.create_session("gated") as s:
                evs = [ev async for ev in s.call_tool_stream("echo", {"text": "p\u0430ypal"})]
        assert isinstance(evs[0], ApprovalPending) and evs[0].warnings[0].kind == "mixed_script"

    asyncio.run(asyncio.wait_for(main(), 60))
    assert [w.kind for w in seen_async[-1].warnings] == ["mixed_script"]


def test_expiry_says_when(approval_bridge: Bridge) -> None:
    with Client(approval_bridge.grpc, token="tok-alice", timeout=60) as alice, alice.create_session("gated-fast") as session:
        with pytest.raises(ApprovalExpiredError) as e:
            session.call_tool("echo", {"text": "nobody is there"})
        assert e.value.expired_at and e.value.approval_request_id
