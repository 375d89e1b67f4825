"""Routing over the replicas of a shared bridge (docs/scaling.md): the routing key on every call naming a session,
the replica named in a session id, and the errors that mean a session is gone."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from mcp_bridge import Client, Handler, _base
from mcp_bridge._gen.mcpbridge.v1 import bridge_service_pb2 as pb
from mcp_bridge._gen.mcpbridge.v1 import bridge_service_pb2_grpc as pb_grpc
from mcp_bridge.errors import BridgeError

from .conftest import bridge_binary, running_bridge


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


def test_session_replica_reads_the_bridges_format(tmp_path: Path) -> None:
    """The client owns no session id format: its one parse (_base.session_replica) must name, for an id the real
    bridge minted (mcpcore/ids.go owns the format), the replica the bridge itself names in the
    ``mcpbridge-replica`` header of the same answer; and the client routes the session's host stream by it."""
    binary = bridge_binary()
    replica = "mcp-bridge-0"
    config = {
        "mcpServers": {"demo": {"command": str(binary), "args": ["demo-server"]}},
        "sessions": {"replica": replica},
    }
    with running_bridge(binary, config, tmp_path) as b:
        channel = grpc.insecure_channel(b.grpc)
        try:
            stub = pb_grpc.BridgeServiceStub(channel)
            resp, call = stub.CreateSession.with_call(pb.CreateSessionRequest(server="demo"), timeout=60)
            header = dict(call.initial_metadata()).get("mcpbridge-replica")
            assert header == replica
            assert _base.session_replica(resp.session.session_id) == header
            stub.DeleteSession(pb.DeleteSessionRequest(session_id=resp.session.session_id), timeout=60)
        finally:
            channel.close()
        with Client(b.grpc, timeout=60) as client, client.create_session("demo", Handler()) as session:
            assert client._host_for(session.id) is client._replica_hosts[replica]
