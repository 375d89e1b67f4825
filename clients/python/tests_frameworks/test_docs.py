"""Each framework page's code (docs/frameworks/python-*.md, its first ```python block) runs as copied: the
bridge address from MCP_BRIDGE_ADDR, the model from OPENAI_BASE_URL (the scripted model server)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Bridge, bridge_binary, running_bridge

from .model_server import FINAL, SAMPLER, ModelServer

DOCS = Path(__file__).resolve().parents[3] / "docs" / "frameworks"
PAGES = ["python-langchain.md", "python-openai.md", "python-pydantic-ai.md"]


def page_code(page: str) -> str:
    m = re.search(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)
    assert m, f"{page} has no python block"
    return m.group(1)


@pytest.fixture(scope="module")
def docs_bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    """The bridge as `make run` serves it: the demo server as `demo`, no auth."""
    binary = bridge_binary()
    config: dict[str, Any] = {"mcpServers": {"demo": {"command": str(binary), "args": ["demo-server"]}}}
    with running_bridge(binary, config, tmp_path_factory.mktemp("docs")) as b:
        yield b


@pytest.mark.parametrize("page", PAGES)
def test_page_runs(page: str, docs_bridge: Bridge, model: ModelServer, tmp_path: Path) -> None:
    script = tmp_path / "page.py"
    script.write_text(page_code(page))
    env = {**os.environ, "MCP_BRIDGE_ADDR": docs_bridge.grpc, "OPENAI_BASE_URL": model.url, "OPENAI_API_KEY": "test", "OPENAI_MODEL": "test-model"}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert FINAL in proc.stdout, proc.stdout
    assert "the server asks:" in proc.stdout  # the page's elicitation handler ran
    outs = model.tool_outputs()
    assert len(outs) == 6 and "hello bridge" in outs[1]
    # the page's sampling handler answered the demo server's sample tool with the model server
    assert len(model.sampling_requests()) == 1
    assert model.sampling_requests()[0]["messages"][0] == {"role": "system", "content": SAMPLER}
