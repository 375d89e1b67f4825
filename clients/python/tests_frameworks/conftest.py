"""Fixtures of the framework tests: the real bridge binary with the demo server (its ``structured`` tool needs
approval: alice calls, bob approves) and a server whose tool list changes; the scripted model server; the
host's handler (elicitation answered, sampling by the OpenAI sampling adapter over the model server).

These tests need the framework packages (requirements-frameworks.txt), installed in their own venv by
scripts/test-python-frameworks.sh; the core tests (tests/) run without them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_bridge import (
    ApprovalDecision,
    ApprovalRequest,
    ElicitationRequest,
    ElicitResult,
    Handler,
    accept,
    approve,
    deny,
)
from mcp_bridge.openai import OpenAISamplingHandler
from tests.conftest import Bridge, bridge_binary, running_bridge

from .model_server import ModelServer

HERE = Path(__file__).resolve().parent
DENY_REASON = "no such city"


@pytest.fixture(scope="session")
def fw_bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    binary = bridge_binary()
    workdir = tmp_path_factory.mktemp("frameworks")
    tokens = workdir / "tokens.txt"
    tokens.write_text("tok-alice alice\ntok-bob bob\n")
    config: dict[str, Any] = {
        "mcpServers": {
            "demo": {
                "command": str(binary),
                "args": ["demo-server"],
                "tools": {"approve": ["structured"]},
                "approvers": {"principals": ["bob"]},
                "approvalExpiry": "1h",
            },
            "dyn": {"command": sys.executable, "args": [str(HERE / "dyn_server.py")]},
        },
        "auth": {"tokensFile": str(tokens)},
        "pending": {"samplingTimeout": "60s", "elicitationTimeout": "60s"},
    }
    with running_bridge(binary, config, workdir) as b:
        yield b


@pytest.fixture
def model() -> Iterator[ModelServer]:
    m = ModelServer()
    try:
        yield m
    finally:
        m.close()


class Approver(Handler):
    """bob: approves the weather of Paris, denies any other city."""

    def __init__(self) -> None:
        self.seen: list[ApprovalRequest] = []

    def handle_approval(self, request: ApprovalRequest) -> ApprovalDecision:
        self.seen.append(request)
        if request.arguments.get("city") == "Paris":
            return approve("fine")
        return deny(DENY_REASON)


@pytest.fixture
def approver(fw_bridge: Bridge) -> Iterator[Approver]:
    from mcp_bridge import Client

    a = Approver()
    with Client(fw_bridge.grpc, token="tok-bob", timeout=60) as bob:
        bob.serve_approvals(a)
        yield a


class Host(OpenAISamplingHandler):
    """alice's host: sampling by the adapter, elicitation answered as a person would."""

    def __init__(self, client: Any) -> None:
        super().__init__(client, model_rule={"*": "sampler-model"})
        self.elicited: list[ElicitationRequest] = []

    def handle_elicitation(self, request: ElicitationRequest) -> ElicitResult:
        self.elicited.append(request)
        return accept({"name": "Ada", "age": 36})
