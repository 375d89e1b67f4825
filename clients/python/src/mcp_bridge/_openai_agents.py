"""A bridge session (or toolbox) as an OpenAI Agents SDK ``MCPServer``; exported as
:class:`mcp_bridge.openai.BridgeMCPServer`."""

from __future__ import annotations

import inspect
from typing import Any

from agents.mcp import MCPServer, ToolFilterContext
from mcp.types import CallToolResult as MCPCallToolResult
from mcp.types import GetPromptResult as MCPGetPromptResult
from mcp.types import ListPromptsResult
from mcp.types import Tool as MCPTool

from . import _convert as cv
from ._adapt import Bound, DetachedCalls, Source, ToolSource, error_result, not_run_message, result_to_mcp, tool_to_mcp
from .aio import AsyncSession
from .client import Session
from .errors import BridgeError
from .toolbox import AsyncToolbox, Toolbox


class BridgeMCPServer(MCPServer):
    """An Agents SDK MCP server backed by a bridge session or toolbox::

        agent = Agent(name="a", model=model, mcp_servers=[BridgeMCPServer(session)])

    ``tool_filter`` (a static ``{"allowed_tool_names": [...], "blocked_tool_names": [...]}`` or a function of
    ``(ToolFilterContext, tool)``, maybe async) and ``cache_tools_list`` follow the SDK's own servers; other
    keyword arguments (``use_structured_content``, ``require_approval``, ``failure_error_function``, ...) go to
    ``MCPServer``. With a toolbox, a server's ``tools/list_changed`` makes the cached list stale; with a
    session, call ``invalidate_tools_cache()``. The session stays open after ``cleanup()`` unless ``close_on_cleanup``; an
    :class:`~mcp_bridge.AsyncToolbox` is opened by ``connect()``. A call the bridge did not run (an approver
    denied it, or its approval expired) comes back as an ``isError`` result with the reason, for the model to
    read. ``detached``: run every call detached and list it there (:class:`~mcp_bridge.DetachedCalls`), so
    that a long-running tool goes on when the agent's run is cut."""

    def __init__(
        self,
        session_or_toolbox: ToolSource,
        *,
        name: str | None = None,
        cache_tools_list: bool = False,
        tool_filter: Any = None,
        close_on_cleanup: bool = False,
        detached: DetachedCalls | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._src = Source(session_or_toolbox, detached=detached)
        src = self._src.source
        self._name = name or (src.info.server if isinstance(src, (Session, AsyncSession)) else "toolbox")
        self.cache_tools_list = cache_tools_list
        self.tool_filter = tool_filter
        self.close_on_cleanup = close_on_cleanup
        self._tools: list[Bound] | None = None
        self._dirty = True

    @property
    def name(self) -> str:
        return self._name

    async def connect(self) -> None:
        src = self._src.source
        if isinstance(src, AsyncToolbox):
            await src.start()

    async def cleanup(self) -> None:
        if not self.close_on_cleanup:
            return
        src = self._src.source
        if isinstance(src, AsyncSession | AsyncToolbox):
            await src.close()
        elif isinstance(src, Session | Toolbox):
            src.close()

    def invalidate_tools_cache(self) -> None:
        """Make the next ``list_tools`` list again (with ``cache_tools_list``)."""
        self._dirty = True

    @property
    def cached_tools(self) -> list[MCPTool] | None:
        if self._tools is None:
            return None
        return [MCPTool.model_validate(tool_to_mcp(b.name, b.tool)) for b in self._tools]

    async def list_tools(self, run_context: Any = None, agent: Any = None) -> list[MCPTool]:
        src = self._src.source
        if isinstance(src, Toolbox | AsyncToolbox) and src.stale:  # a server's list changed: the cache is old
            self._dirty = True
        if not (self.cache_tools_list and not self._dirty and self._tools is not None):
            self._tools = await self._src.alist_tools()
            self._dirty = False
        tools = [MCPTool.model_validate(tool_to_mcp(b.name, b.tool)) for b in self._tools]
        return await self._filter(tools, run_context, agent)

    async def _filter(self, tools: list[MCPTool], run_context: Any, agent: Any) -> list[MCPTool]:
        f = self.tool_filter
        if f is None:
            return tools
        if isinstance(f, dict):
            if "allowed_tool_names" in f:
                tools = [t for t in tools if t.name in f["allowed_tool_names"]]
            if "blocked_tool_names" in f:
                tools = [t for t in tools if t.name not in f["blocked_tool_names"]]
            return tools
        ctx = ToolFilterContext(run_context=run_context, agent=agent, server_name=self.name)
        out = []
        for t in tools:
            try:
                keep = f(ctx, t)
                if inspect.isawaitable(keep):
                    keep = await keep
            except Exception:  # noqa: BLE001 - as the SDK's servers: a failing filter excludes the tool
                continue
            if keep:
                out.append(t)
        return out

    async def call_tool(self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None) -> MCPCallToolResult:
        if self._tools is None:  # names of a session source are resolved from a listing
            self._tools = await self._src.alist_tools()
        try:
            result = await self._src.acall_tool(tool_name, arguments or {})
        except BridgeError as err:
            msg = not_run_message(err)
            if msg is None:
                raise
            result = error_result(msg)
        return MCPCallToolResult.model_validate(result_to_mcp(result))

    def _session(self) -> Session | AsyncSession:
        src = self._src.source
        if isinstance(src, Session | AsyncSession):
            return src
        raise NotImplementedError("prompts of a toolbox: use one of its sessions (toolbox.sessions[server])")

    async def list_prompts(self) -> ListPromptsResult:
        s = self._session()
        prompts = await s.list_prompts() if isinstance(s, AsyncSession) else s.list_prompts()
        return ListPromptsResult.model_validate(
            {
                "prompts": [
                    {
                        "name": p.name,
                        "description": p.description or None,
                        "arguments": [{"name": a.name, "description": a.description or None, "required": a.required} for a in p.arguments],
                    }
                    for p in prompts
                ]
            }
        )

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> MCPGetPromptResult:
        s = self._session()
        res = await s.get_prompt(name, arguments) if isinstance(s, AsyncSession) else s.get_prompt(name, arguments)
        return MCPGetPromptResult.model_validate(
            {
                "description": res.description or None,
                "messages": [{"role": m.role, "content": cv.content_to_mcp(m.content)} for m in res.messages],
            }
        )
