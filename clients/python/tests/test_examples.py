"""The examples run as documented against the real bridge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import Bridge

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str, bridge: Bridge) -> str:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), bridge.grpc], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_sampling_host(bridge: Bridge) -> None:
    out = run_example("sampling_host.py", bridge)
    assert "declared: {'sampling': {}}" in out
    assert "tool result: (canned) You asked: 'What is the meaning of life?'. The answer is 42." in out
    assert "'model': 'canned-model-1'" in out


def test_elicitation_host(bridge: Bridge) -> None:
    out = run_example("elicitation_host.py", bridge)
    assert "declared: {'elicitation': {'form': {}}}" in out
    assert "tool result: accepted: name=Ada Lovelace age=36" in out
    assert "without a name: declined" in out
