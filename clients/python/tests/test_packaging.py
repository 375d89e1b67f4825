"""Unit tests of the package's public surface: typed handler parameters, one version."""

from __future__ import annotations

import importlib.metadata
import inspect
import pathlib
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
