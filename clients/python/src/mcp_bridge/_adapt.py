"""What the framework adapters share: one view of "a session or a toolbox" as a source of tools, sync and
async, and the text a model reads when a call was not run (an approval denied or expired)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import _convert as cv
from .aio import AsyncSession
from .client import Session
from .errors import ApprovalDeniedError, ApprovalExpiredError, BridgeError
from .toolbox import AsyncToolbox, Toolbox, fit_name
from .types import CallToolResult, TextContent, Tool

ToolSource = Session | AsyncSession | Toolbox | AsyncToolbox
"""What the adapters take: one session (sync or async) or a toolbox (sync or async)."""


@dataclass
class Bound:
    """A tool as a framework sees it: the model-facing ``name``, the MCP ``tool``, and its ``server``."""

    name: str
    tool: Tool
    server: str


def _session_name(tool: Tool, prefix: str) -> str:
    return fit_name(f"{prefix}_{tool.name}" if prefix else tool.name, tool.name)


class Source:
    """A session or toolbox behind one interface; sync methods need a sync source, async ones work for both
    (a sync source runs on a worker thread)."""

    def __init__(self, source: ToolSource, *, tool_name_prefix: str = "") -> None:
        if not isinstance(source, (Session, AsyncSession, Toolbox, AsyncToolbox)):
            raise TypeError(f"expected a Session, AsyncSession, Toolbox or AsyncToolbox, not {type(source).__name__}")
        self.source = source
        self.prefix = tool_name_prefix
        self._names: dict[str, str] = {}  # model-facing name -> MCP tool name (sessions)

    @property
    def is_async(self) -> bool:
        return isinstance(self.source, (AsyncSession, AsyncToolbox))

    @property
    def server(self) -> str:
        s = self.source
        return s.info.server if isinstance(s, (Session, AsyncSession)) else ""

    def _bind_session(self, tools: list[Tool], server: str) -> list[Bound]:
        out = [Bound(_session_name(t, self.prefix), t, server) for t in tools]
        self._names = {b.name: b.tool.name for b in out}
        return out

    def list_tools(self) -> list[Bound]:
        s = self.source
        if isinstance(s, Session):
            return self._bind_session(s.list_tools(), s.info.server)
        if isinstance(s, Toolbox):
            return [Bound(t.name, t.tool, t.server) for t in s.list_tools()]
        raise TypeError("a sync call needs a Session or Toolbox; this source is async")

    async def alist_tools(self) -> list[Bound]:
        s = self.source
        if isinstance(s, AsyncSession):
            return self._bind_session(await s.list_tools(), s.info.server)
        if isinstance(s, AsyncToolbox):
            return [Bound(t.name, t.tool, t.server) for t in await s.list_tools()]
        return await asyncio.to_thread(self.list_tools)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None) -> CallToolResult:
        s = self.source
        if isinstance(s, Session):
            return s.call_tool(self._names.get(name, name), arguments)
        if isinstance(s, Toolbox):
            return s.call_tool(name, arguments)
        raise TypeError("a sync call needs a Session or Toolbox; this source is async")

    async def acall_tool(self, name: str, arguments: Mapping[str, Any] | None) -> CallToolResult:
        s = self.source
        if isinstance(s, AsyncSession):
            return await s.call_tool(self._names.get(name, name), arguments)
        if isinstance(s, AsyncToolbox):
            return await s.call_tool(name, arguments)
        return await asyncio.to_thread(self.call_tool, name, arguments)


def not_run_message(err: BaseException) -> str | None:
    """The text a model reads for a call the bridge did not run because of an approval (denied, expired), or
    None for any other error."""
    if isinstance(err, ApprovalDeniedError):
        return f"The tool call was denied by an approver and was not run. Reason: {err.message}"
    if isinstance(err, ApprovalExpiredError):
        return f"The tool call needed approval and nobody approved it in time; it was not run. ({err.message})"
    return None


def is_not_run(err: BaseException) -> bool:
    return isinstance(err, BridgeError) and not_run_message(err) is not None


def result_to_mcp(result: CallToolResult) -> dict[str, Any]:
    """A tool result in MCP's JSON shape (``content``, ``structuredContent``, ``isError``)."""
    out: dict[str, Any] = {"content": [cv.content_to_mcp(c) for c in result.content], "isError": result.is_error}
    if result.structured_content is not None:
        out["structuredContent"] = result.structured_content
    if result.meta is not None:
        out["_meta"] = result.meta
    return out


def error_result(text: str) -> CallToolResult:
    """A tool result with ``isError`` carrying ``text``: how a call not run reaches a model."""
    return CallToolResult(content=[TextContent(text)], is_error=True)


def tool_to_mcp(name: str, tool: Tool) -> dict[str, Any]:
    """An MCP ``Tool`` in JSON shape under the model-facing ``name``."""
    out: dict[str, Any] = {"name": name, "inputSchema": dict(tool.input_schema) or {"type": "object"}}
    if tool.title:
        out["title"] = tool.title
    if tool.description:
        out["description"] = tool.description
    if tool.output_schema is not None:
        out["outputSchema"] = tool.output_schema
    if tool.annotations is not None:
        a = tool.annotations
        ann = {
            "title": a.title or None,
            "readOnlyHint": a.read_only_hint,
            "destructiveHint": a.destructive_hint,
            "idempotentHint": a.idempotent_hint,
            "openWorldHint": a.open_world_hint,
        }
        out["annotations"] = {k: v for k, v in ann.items() if v is not None}
    if tool.meta is not None:
        out["_meta"] = tool.meta
    return out
