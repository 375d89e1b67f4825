"""What the framework adapters share: one view of "a session or a toolbox" as a source of tools, sync and
async; detached tool calls (:class:`DetachedCalls`); and the text a model reads when a call was not run (an
approval denied or expired)."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import grpc

from . import _convert as cv
from .aio import AsyncSession
from .client import Session
from .errors import (
    ApprovalDeniedError,
    ApprovalExpiredError,
    BridgeError,
    CallCancelledError,
    DeadlineExceededError,
    NotFoundError,
)
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


@dataclass(frozen=True)
class DetachedCall:
    """A tool call an adapter started detached: its ``call_id``, the model-facing ``tool`` name, the MCP tool
    (``mcp_name``) and the ``session`` it runs in."""

    call_id: str
    tool: str
    mcp_name: str
    session: Session | AsyncSession


def _cut(err: BaseException) -> bool:
    """Whether ``err`` ended only the host's side of a call (a cancelled task or RPC, a timeout), so that a
    detached call goes on in the bridge; an approval that expired is an outcome, not a cut."""
    if isinstance(err, ApprovalExpiredError):
        return False
    return isinstance(err, (CallCancelledError, DeadlineExceededError)) or not isinstance(err, Exception)


class DetachedCalls:
    """Tool calls that outlive the agent run that made them (docs/adr/0105-detached-calls.md).

    Give one to an adapter (``load_tools(session, detached=calls)``, ``ToolDispatcher(..., detached=calls)``,
    ``BridgeToolset(..., detached=calls)``, ``BridgeMCPServer(..., detached=calls)``): each tool call it makes
    then has a call id of its own and ``detach=True``, so that a long-running tool goes on when the agent's
    stream is cut (the task cancelled, a timeout, the process's caller gone). :meth:`running` lists the calls
    whose host side ended before the tool did; :meth:`resume` joins one and returns its result (its outcome,
    once it has ended); :meth:`cancel` ends one upstream. A call that returned, or failed with the bridge's or
    the tool's own error, leaves the list. Safe to share between threads and tasks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: dict[str, DetachedCall] = {}  # guarded by _lock

    def running(self) -> list[DetachedCall]:
        """The calls in flight or cut off from their agent run, oldest first."""
        with self._lock:
            return list(self._calls.values())

    def _get(self, call_id: str) -> DetachedCall:
        with self._lock:
            c = self._calls.get(call_id)
        if c is None:
            raise KeyError(f"no detached call {call_id!r}")
        return c

    def _start(self, tool: str, mcp_name: str, session: Session | AsyncSession) -> DetachedCall:
        c = DetachedCall(f"call-{uuid.uuid4()}", tool, mcp_name, session)
        with self._lock:
            self._calls[c.call_id] = c
        return c

    def _ended(self, call_id: str, err: BaseException | None) -> None:
        if err is None or not _cut(err):
            with self._lock:
                self._calls.pop(call_id, None)

    def _run(self, c: DetachedCall, arguments: Mapping[str, Any] | None, resume: bool, timeout: float | None = None) -> CallToolResult:
        if not isinstance(c.session, Session):
            raise TypeError("this call runs in an AsyncSession; use the async methods")
        try:
            result = c.session.call_tool(c.mcp_name, arguments, call_id=c.call_id, detach=True, resume=resume, timeout=timeout)
        except BaseException as err:
            self._ended(c.call_id, err)
            raise
        self._ended(c.call_id, None)
        return result

    async def _arun(
        self, c: DetachedCall, arguments: Mapping[str, Any] | None, resume: bool, timeout: float | None = None
    ) -> CallToolResult:
        if not isinstance(c.session, AsyncSession):
            return await asyncio.to_thread(self._run, c, arguments, resume, timeout)
        try:
            result = await c.session.call_tool(c.mcp_name, arguments, call_id=c.call_id, detach=True, resume=resume, timeout=timeout)
        except BaseException as err:
            self._ended(c.call_id, err)
            raise
        self._ended(c.call_id, None)
        return result

    def resume(self, call_id: str, *, timeout: float | None = None) -> CallToolResult:
        """Join the call ``call_id`` (sync session) and return its result, or raise its error; KeyError for a
        call not listed. A resume cut off in turn (a timeout) leaves the call listed."""
        return self._run(self._get(call_id), None, True, timeout)

    async def aresume(self, call_id: str, *, timeout: float | None = None) -> CallToolResult:
        """:meth:`resume` for either kind of session."""
        return await self._arun(self._get(call_id), None, True, timeout)

    def cancel(self, call_id: str) -> None:
        """End the call ``call_id`` upstream (sync session), as the agent's own cancellation would have without
        detach; it leaves the list. A call that has already ended raises NotFoundError (``CALL_NOT_FOUND``) and
        stays listed, so that :meth:`resume` can still read its outcome."""
        c = self._get(call_id)
        if not isinstance(c.session, Session):
            raise TypeError("this call runs in an AsyncSession; use acancel")
        c.session.cancel_call(call_id)
        self._ended(call_id, None)

    async def acancel(self, call_id: str) -> None:
        """:meth:`cancel` for either kind of session."""
        c = self._get(call_id)
        if not isinstance(c.session, AsyncSession):
            await asyncio.to_thread(self.cancel, call_id)
            return
        await c.session.cancel_call(call_id)
        self._ended(call_id, None)


class Source:
    """A session or toolbox behind one interface; sync methods need a sync source, async ones work for both
    (a sync source runs on a worker thread). With ``detached``, every call is detached and listed there."""

    def __init__(self, source: ToolSource, *, tool_name_prefix: str = "", detached: DetachedCalls | None = None) -> None:
        if not isinstance(source, (Session, AsyncSession, Toolbox, AsyncToolbox)):
            raise TypeError(f"expected a Session, AsyncSession, Toolbox or AsyncToolbox, not {type(source).__name__}")
        if detached is not None and not isinstance(detached, DetachedCalls):
            raise TypeError(f"detached must be a DetachedCalls, not {type(detached).__name__}")
        self.source = source
        self.prefix = tool_name_prefix
        self.detached = detached
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
        if self.detached is not None and isinstance(s, (Session, Toolbox)):
            session, mcp_name = (s, self._names.get(name, name)) if isinstance(s, Session) else self._resolve(s, name)
            return self.detached._run(self.detached._start(name, mcp_name, session), arguments, False)
        if isinstance(s, Session):
            return s.call_tool(self._names.get(name, name), arguments)
        if isinstance(s, Toolbox):
            return s.call_tool(name, arguments)
        raise TypeError("a sync call needs a Session or Toolbox; this source is async")

    @staticmethod
    def _resolve(box: Toolbox, name: str) -> tuple[Session, str]:
        try:
            session, entry = box.resolve(name)
        except KeyError as e:
            raise NotFoundError(grpc.StatusCode.NOT_FOUND, str(e)) from None
        return session, entry.tool.name

    async def acall_tool(self, name: str, arguments: Mapping[str, Any] | None) -> CallToolResult:
        s = self.source
        if self.detached is not None and isinstance(s, (AsyncSession, AsyncToolbox)):
            if isinstance(s, AsyncSession):
                session, mcp_name = s, self._names.get(name, name)
            else:
                try:
                    session, entry = await s.resolve(name)
                except KeyError as e:
                    raise NotFoundError(grpc.StatusCode.NOT_FOUND, str(e)) from None
                mcp_name = entry.tool.name
            return await self.detached._arun(self.detached._start(name, mcp_name, session), arguments, False)
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
