"""Routing over the replicas of a shared bridge (docs/scaling.md): the routing key on every call naming a session,
the replica named in a session id, and the errors that mean a session is gone."""

from __future__ import annotations

import grpc
import pytest

from mcp_bridge import _base
from mcp_bridge._gen.mcpbridge.v1 import bridge_service_pb2 as pb
from mcp_bridge.errors import BridgeError


@pytest.mark.parametrize(
    ("session_id", "replica"),
    [
        ("s-r1.ABCDEF", "r1"),
        ("s-mcp-bridge-0.ABCDEF", "mcp-bridge-0"),
        ("s-ABCDEFGHIJKLMNOPQRSTUVWXYZ", ""),
        ("s-.ABC", ""),
        ("x-r1.ABC", ""),
        ("", ""),
    ],
)
def test_session_replica(session_id: str, replica: str) -> None:
    assert _base.session_replica(session_id) == replica


def test_routed_adds_the_session_id() -> None:
    md = (("authorization", "Bearer t"),)
    assert _base.routed(md, pb.CallToolRequest(session_id="s-r1.X", name="echo")) == (
        ("authorization", "Bearer t"),
        ("mcpbridge-session", "s-r1.X"),
    )
    assert _base.routed(md, pb.ListServersRequest()) == md
    assert _base.routed(md, pb.CreateSessionRequest(server="demo")) == md


@pytest.mark.parametrize(
    ("reason", "lost"),
    [("REPLICA_UNAVAILABLE", True), ("SESSION_NOT_FOUND", True), ("SESSION_CLOSED", True), ("UPSTREAM_UNAVAILABLE", False), ("", False)],
)
def test_session_lost(reason: str, lost: bool) -> None:
    assert BridgeError(grpc.StatusCode.UNAVAILABLE, "m", reason=reason).session_lost is lost
