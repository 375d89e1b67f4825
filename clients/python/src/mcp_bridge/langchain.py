"""LangChain / LangGraph tools, resources and prompts from bridge sessions (``pip install
"mcp-bridge-client[langchain]"``).

The tools are shaped as ``langchain-mcp-adapters`` shapes them, so an agent written for ``load_mcp_tools``
works unchanged: a ``StructuredTool`` per MCP tool, its argument schema the tool's input schema,
``response_format="content_and_artifact"`` (content: LangChain text/image/file blocks; artifact:
``{"structured_content": ...}`` when the tool returned structured content), annotations and ``_meta`` in
``metadata``. A tool result with ``isError`` becomes a :class:`ToolException` that the tool turns into a
``ToolMessage`` with ``status="error"`` for the model to read (``handle_tool_errors=False`` raises it
instead); so does a call the bridge did not run because an approver denied it or its approval expired, with
the approver's reason::

    from langgraph.prebuilt import create_react_agent
    from mcp_bridge.langchain import load_tools

    with Client(addr) as client, client.create_session("demo") as session:
        agent = create_react_agent(model, load_tools(session))

A sync :class:`~mcp_bridge.Session` or :class:`~mcp_bridge.Toolbox` gives tools that run both ways (``invoke``
and ``ainvoke``); an :class:`~mcp_bridge.AsyncSession` or :class:`~mcp_bridge.AsyncToolbox` gives async tools
(use :func:`aload_tools`).
"""

from __future__ import annotations

import base64
from typing import Any

from langchain_core.documents.base import Blob
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.content import create_file_block, create_image_block, create_text_block
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from ._adapt import Bound, DetachedCalls, Source, ToolSource, not_run_message
from .aio import AsyncSession
from .client import Session
from .errors import BridgeError
from .types import (
    AudioContent,
    CallToolResult,
    Content,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    ResourceContents,
    ResourceLink,
    TextContent,
)

__all__ = [
    "MCPToolArtifact",
    "aload_tools",
    "aload_mcp_prompt",
    "aload_mcp_resources",
    "convert_result",
    "load_mcp_prompt",
    "load_mcp_resources",
    "load_tools",
]

MCPToolArtifact = dict[str, Any]
"""The artifact of a tool result: ``{"structured_content": ...}`` (as langchain-mcp-adapters)."""


class _ToolError(ToolException):
    """A tool error the model reads: an ``isError`` result (with its content blocks) or a call not run."""

    def __init__(self, message: str, blocks: list[Any] | None = None) -> None:
        super().__init__(message)
        self.blocks = blocks or []


def _handle_error(error: ToolException) -> Any:
    if isinstance(error, _ToolError):
        return error.blocks or [create_text_block(text=str(error))]
    raise error


def _block(c: Content) -> Any:
    if isinstance(c, TextContent):
        return create_text_block(text=c.text)
    if isinstance(c, ImageContent):
        return create_image_block(base64=base64.b64encode(c.data).decode(), mime_type=c.mime_type)
    if isinstance(c, AudioContent):
        raise NotImplementedError(f"audio content ({c.mime_type}) has no LangChain tool-message block")
    if isinstance(c, ResourceLink):
        mime = c.mime_type or None
        if mime and mime.startswith("image/"):
            return create_image_block(url=c.uri, mime_type=mime)
        return create_file_block(url=c.uri, mime_type=mime)
    if isinstance(c, EmbeddedResource):
        r = c.resource
        if r.text is not None:
            return create_text_block(text=r.text)
        data = base64.b64encode(r.blob or b"").decode()
        mime = r.mime_type or None
        if mime and mime.startswith("image/"):
            return create_image_block(base64=data, mime_type=mime)
        return create_file_block(base64=data, mime_type=mime)
    raise ValueError(f"unexpected content in a tool result: {c.type}")


def convert_result(result: CallToolResult) -> tuple[list[Any], MCPToolArtifact | None]:
    """A tool result as ``(content blocks, artifact)``; raises :class:`ToolException` for ``isError``."""
    blocks = [_block(c) for c in result.content]
    if result.is_error:
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text")
        raise _ToolError(text or "the tool reported an error with no text", blocks)
    artifact = {"structured_content": result.structured_content} if result.structured_content is not None else None
    return blocks, artifact


def _not_run(err: BridgeError) -> BaseException:
    msg = not_run_message(err)
    return _ToolError(msg) if msg is not None else err


def _tool(src: Source, b: Bound, handle_tool_errors: bool) -> BaseTool:
    name = b.name

    def run(**arguments: Any) -> tuple[list[Any], MCPToolArtifact | None]:
        try:
            result = src.call_tool(name, arguments)
        except BridgeError as err:
            raise _not_run(err) from err
        return convert_result(result)

    async def arun(**arguments: Any) -> tuple[list[Any], MCPToolArtifact | None]:
        try:
            result = await src.acall_tool(name, arguments)
        except BridgeError as err:
            raise _not_run(err) from err
        return convert_result(result)

    t = b.tool
    metadata: dict[str, Any] = {}
    if t.annotations is not None:
        a = t.annotations
        metadata.update(
            title=a.title or None,
            readOnlyHint=a.read_only_hint,
            destructiveHint=a.destructive_hint,
            idempotentHint=a.idempotent_hint,
            openWorldHint=a.open_world_hint,
        )
    if t.meta is not None:
        metadata["_meta"] = t.meta
    if b.server:
        metadata["mcp_server"] = b.server
    schema = dict(t.input_schema) or {"type": "object", "properties": {}}
    return StructuredTool(
        name=name,
        description=t.description or "",
        args_schema=schema,
        func=None if src.is_async else run,
        coroutine=arun,
        response_format="content_and_artifact",
        metadata=metadata or None,
        handle_tool_error=_handle_error if handle_tool_errors else False,  # type: ignore[arg-type]
    )


def load_tools(
    session_or_toolbox: ToolSource,
    *,
    tool_name_prefix: str = "",
    handle_tool_errors: bool = True,
    detached: DetachedCalls | None = None,
) -> list[BaseTool]:
    """The LangChain tools of a sync session or toolbox (see the module docstring).

    ``tool_name_prefix``: for a session, name each tool ``<prefix>_<tool>`` (a toolbox names its tools
    itself). ``handle_tool_errors``: return tool errors to the model (default) or raise them. ``detached``:
    run every call detached and list it there, so that a long-running tool goes on when the agent's run is
    cut; resume or cancel it through the :class:`~mcp_bridge.DetachedCalls`."""
    src = Source(session_or_toolbox, tool_name_prefix=tool_name_prefix, detached=detached)
    return [_tool(src, b, handle_tool_errors) for b in src.list_tools()]


async def aload_tools(
    session_or_toolbox: ToolSource,
    *,
    tool_name_prefix: str = "",
    handle_tool_errors: bool = True,
    detached: DetachedCalls | None = None,
) -> list[BaseTool]:
    """:func:`load_tools` for any source, listing without blocking the event loop."""
    src = Source(session_or_toolbox, tool_name_prefix=tool_name_prefix, detached=detached)
    return [_tool(src, b, handle_tool_errors) for b in await src.alist_tools()]


# -------------------------------------------------------------------------------- resources & prompts


def _blob(uri: str, c: ResourceContents) -> Blob:
    data: str | bytes = c.text if c.text is not None else (c.blob or b"")
    return Blob.from_data(data=data, mime_type=c.mime_type or None, metadata={"uri": uri})


def load_mcp_resources(session: Session, *, uris: str | list[str] | None = None) -> list[Blob]:
    """Resources as LangChain ``Blob`` objects (as langchain-mcp-adapters' ``load_mcp_resources``): the listed
    resources when ``uris`` is None (templates are not expanded), else those URIs."""
    uri_list = [r.uri for r in session.list_resources()] if uris is None else ([uris] if isinstance(uris, str) else uris)
    out: list[Blob] = []
    for uri in uri_list:
        try:
            out.extend(_blob(uri, c) for c in session.read_resource(uri).contents)
        except BridgeError as e:
            raise RuntimeError(f"Error fetching resource {uri}") from e
    return out


async def aload_mcp_resources(session: AsyncSession, *, uris: str | list[str] | None = None) -> list[Blob]:
    """:func:`load_mcp_resources` for an :class:`~mcp_bridge.AsyncSession`."""
    uri_list = [r.uri for r in await session.list_resources()] if uris is None else ([uris] if isinstance(uris, str) else uris)
    out: list[Blob] = []
    for uri in uri_list:
        try:
            out.extend(_blob(uri, c) for c in (await session.read_resource(uri)).contents)
        except BridgeError as e:
            raise RuntimeError(f"Error fetching resource {uri}") from e
    return out


def _message(m: PromptMessage) -> HumanMessage | AIMessage:
    if not isinstance(m.content, TextContent):
        raise ValueError(f"Unsupported prompt message content type: {m.content.type}")
    if m.role == "user":
        return HumanMessage(content=m.content.text)
    if m.role == "assistant":
        return AIMessage(content=m.content.text)
    raise ValueError(f"Unsupported prompt message role: {m.role}")


def load_mcp_prompt(session: Session, name: str, *, arguments: dict[str, Any] | None = None) -> list[HumanMessage | AIMessage]:
    """A prompt as LangChain messages (as langchain-mcp-adapters' ``load_mcp_prompt``)."""
    return [_message(m) for m in session.get_prompt(name, arguments).messages]


async def aload_mcp_prompt(
    session: AsyncSession, name: str, *, arguments: dict[str, Any] | None = None
) -> list[HumanMessage | AIMessage]:
    """:func:`load_mcp_prompt` for an :class:`~mcp_bridge.AsyncSession`."""
    return [_message(m) for m in (await session.get_prompt(name, arguments)).messages]
