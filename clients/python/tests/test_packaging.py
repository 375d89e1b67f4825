"""Unit tests of the package's public surface: typed handler parameters, one version."""

from __future__ import annotations

import importlib.metadata
import inspect
import pathlib
import subprocess
import sys
import tomllib
import typing

import pytest

import mcp_bridge
from mcp_bridge import AsyncClient, Client, Handler

PYPROJECT = pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml"


@pytest.mark.parametrize(
    "method", [Client.create_session, AsyncClient.create_session], ids=["Client", "AsyncClient"]
)
def test_handler_parameter_is_typed(method: typing.Any) -> None:
    hints = typing.get_type_hints(method)
    assert hints["handler"] == Handler | None


def test_no_public_method_takes_an_untyped_handler() -> None:
    for cls in (Client, AsyncClient):
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            hints = typing.get_type_hints(fn)
            if "handler" in hints:
                assert hints["handler"] is not typing.Any, f"{cls.__name__}.{name}"


def test_version_has_one_home() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    assert "version" not in project, "pyproject.toml must not repeat the version (dynamic, from mcp_bridge.__version__)"
    assert "version" in project["dynamic"]
    assert importlib.metadata.version("mcp-bridge-client") == mcp_bridge.__version__


FRAMEWORKS = ("langchain", "langgraph", "openai", "agents", "pydantic", "pydantic_ai", "mcp")


def test_core_has_no_framework_dependency() -> None:
    """The framework adapters are extras: the core requires none of their packages, and importing the core
    (mcp_bridge, its toolbox) imports none of them."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"]).lower()
    for name in ("langchain", "langgraph", "openai", "pydantic", "mcp"):
        assert name not in core, f"the core package depends on {name}"
    assert {"langchain", "openai", "pydantic-ai"} <= set(project["optional-dependencies"])
    code = f"import sys, mcp_bridge, mcp_bridge.toolbox; print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]", f"importing mcp_bridge imported framework modules: {out}"
