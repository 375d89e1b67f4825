"""A PydanticAI toolset over a bridge session or toolbox (``pip install "mcp-bridge-client[pydantic-ai]"``).

:class:`BridgeToolset` is a PydanticAI ``AbstractToolset``, so it composes like PydanticAI's own MCP toolsets
(``.filtered()``, ``.prefixed()``, ``.approval_required()``, ...)::

    agent = Agent(model, toolsets=[BridgeToolset(session)])

Results map as PydanticAI's ``MCPToolset`` maps them: structured content when the tool returned it, else
the text (images as ``BinaryContent``). A result with ``isError`` raises ``ModelRetry`` (``tool_error_behavior=
"retry"``, the default), ``ToolFailed`` (``"failed"``) or a ``ToolError`` of this module (``"error"``). A call the
bridge did not run because an approver denied it or its approval expired is ``ToolFailed`` with the reason:
the model sees it, and does not retry the same call.
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic_core
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.messages import BinaryContent
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from ._adapt import Bound, DetachedCalls, Source, ToolSource, not_run_message
from .aio import AsyncSession
from .client import Session
from .errors import BridgeError
from .toolbox import AsyncToolbox
from .types import CallToolResult, EmbeddedResource, ImageContent, TextContent

__all__ = ["BridgeToolset", "ToolError", "map_result"]

_ARGS = pydantic_core.SchemaValidator(
    schema=pydantic_core.core_schema.dict_schema(pydantic_core.core_schema.str_schema(), pydantic_core.core_schema.any_schema())
)


class ToolError(Exception):
    """An ``isError`` tool result, raised with ``tool_error_behavior="error"``."""


def map_result(result: CallToolResult) -> Any:
    """A tool result as the value a PydanticAI tool returns."""
    if result.structured_content is not None and not result.is_error:
        return result.structured_content
    parts: list[Any] = []
    for c in result.content:
        if isinstance(c, TextContent):
            parts.append(c.text)
        elif isinstance(c, ImageContent):
            parts.append(BinaryContent(data=c.data, media_type=c.mime_type))
        elif isinstance(c, EmbeddedResource):
            r = c.resource
            parts.append(r.text if r.text is not None else BinaryContent(data=r.blob or b"", media_type=r.mime_type or "application/octet-stream"))
        else:
            parts.append(str(c))
    if len(parts) == 1:
        return parts[0]
    return parts


class BridgeToolset(AbstractToolset[Any]):
    """The tools of a bridge session or toolbox as a PydanticAI toolset.

    ``id``: unique among an agent's toolsets (default: the session's server, or ``"toolbox"``).
    ``max_retries``: of a tool after ``ModelRetry`` (default: the agent's). ``cache_tools``: list once and
    keep the list (a toolbox still follows ``tools/list_changed`` itself). ``detached``: run every call
    detached and list it there (:class:`~mcp_bridge.DetachedCalls`), so that a long-running tool goes on when
    the agent's run is cut."""

    def __init__(
        self,
        session_or_toolbox: ToolSource,
        *,
        id: str | None = None,
        max_retries: int | None = None,
        tool_error_behavior: Literal["retry", "failed", "error"] = "retry",
        cache_tools: bool = False,
        detached: DetachedCalls | None = None,
    ) -> None:
        self._src = Source(session_or_toolbox, detached=detached)
        src = self._src.source
        self._id = id or (src.info.server if isinstance(src, (Session, AsyncSession)) else "toolbox")
        self.max_retries = max_retries
        self.tool_error_behavior = tool_error_behavior
        self.cache_tools = cache_tools
        self._cached: list[Bound] | None = None

    @property
    def id(self) -> str | None:
        return self._id

    async def __aenter__(self) -> BridgeToolset:
        src = self._src.source
        if isinstance(src, AsyncToolbox):
            await src.start()
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        if self._cached is None or not self.cache_tools:
            self._cached = await self._src.alist_tools()
        out: dict[str, ToolsetTool[Any]] = {}
        for b in self._cached:
            t = b.tool
            schema = dict(t.input_schema) or {"type": "object", "properties": {}}
            out[b.name] = ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=b.name,
                    description=t.description or None,
                    parameters_json_schema=schema,
                    metadata={"meta": t.meta, "server": b.server, "mcp_name": t.name},
                ),
                max_retries=self.max_retries if self.max_retries is not None else ctx.max_retries,
                args_validator=_ARGS,
            )
        return out

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]) -> Any:
        try:
            result = await self._src.acall_tool(name, tool_args)
        except BridgeError as err:
            msg = not_run_message(err)
            if msg is None:
                raise
            raise ToolFailed(msg) from err
        if result.is_error:
            text = "\n".join(c.text for c in result.content if isinstance(c, TextContent)) or f"Tool {name!r} returned an error"
            if self.tool_error_behavior == "retry":
                raise ModelRetry(text)
            if self.tool_error_behavior == "failed":
                raise ToolFailed(text)
            raise ToolError(text)
        return map_result(result)

