"""get_identity (GetIdentity) against the real binary: who the caller is, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_bridge import ApproverScope, AsyncClient, BridgeError, Client

from .conftest import Bridge, bridge_binary, running_bridge


@pytest.fixture(scope="module")
def identity_bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    binary = bridge_binary()
    workdir = tmp_path_factory.mktemp("identity")
    tokens = workdir / "tokens.txt"
    tokens.write_text("tok-alice alice\ntok-bob bob\n")
    gated = {"command": str(binary), "args": ["demo-server"], "tools": {"approve": ["ec*"]}}
    config: dict[str, Any] = {
        "mcpServers": {"gated": {**gated, "approvers": {"principals": ["bob"], "allowSelf": True}}},
        "auth": {"tokensFile": str(tokens)},
    }
    with running_bridge(binary, config, workdir) as b:
        yield b


def test_get_identity(identity_bridge: Bridge) -> None:
    with Client(identity_bridge.grpc, token="tok-bob", timeout=60) as bob:
        me = bob.get_identity()
    assert me.principal == "bob"
    assert me.authentication == "token"
    assert me.approver
    assert me.approves == [ApproverScope(server="gated", tools=["ec*"], own_calls=True)]
    with Client(identity_bridge.grpc, token="tok-alice", timeout=60) as alice:
        me = alice.get_identity()
    assert (me.principal, me.approver, me.approves) == ("alice", False, [])
    with Client(identity_bridge.grpc, token="wrong", timeout=60) as wrong, pytest.raises(BridgeError, match="(?i)unauthenticated|bearer token"):
        wrong.get_identity()


def test_get_identity_async(identity_bridge: Bridge) -> None:
    async def body() -> None:
        async with AsyncClient(identity_bridge.grpc, token="tok-bob", timeout=60) as bob:
            me = await bob.get_identity()
        assert (me.principal, me.authentication, me.approver) == ("bob", "token", True)

    asyncio.run(body())
