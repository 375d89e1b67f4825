"""Several servers as one toolbox: one merged tool list with names a model API accepts, each call routed to
its session.

A model API takes a flat list of function names matching ``^[a-zA-Z0-9_-]{1,64}$``; MCP tools of several
servers may share names (two servers with a ``search``), contain dots or slashes, or be longer. A toolbox opens
one session per server with the same handler, names each tool ``<server>_<tool>`` (the prefix scheme is
configurable), shortens what is too long with a hash of the full name so the name is stable from run to run,
and keeps the list fresh: a server's ``notifications/tools/list_changed`` marks its list stale and the next
:meth:`Toolbox.list_tools` lists it again, without reopening anything::

    with Client(addr) as client, Toolbox(client, ["github", "jira"], handler=MyHost()) as box:
        for t in box.list_tools():
            print(t.name, "->", t.server, t.tool.name)
        box.call_tool("github_search_issues", {"q": "is:open"})

:class:`Toolbox` uses a :class:`~mcp_bridge.Client`; :class:`AsyncToolbox` is the asyncio twin. The framework
adapters (:mod:`mcp_bridge.langchain`, :mod:`mcp_bridge.openai`, :mod:`mcp_bridge.pydantic_ai`) take either a
session or a toolbox.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union

import grpc

from ._host import _takes_argument
from .errors import NotFoundError
from .handler import _METHODS, Handler, overrides
from .types import CallToolResult, Tool

if TYPE_CHECKING:
    from .aio import AsyncClient, AsyncSession
    from .client import Client, Session

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""The function names OpenAI, Anthropic and Gemini accept; every name a toolbox gives matches it."""
MAX_NAME = 64

Prefix = Union[Literal["server", "none"], Callable[[str, str], str]]
"""How a toolbox names a server's tool: ``"server"`` (``<server><separator><tool>``, the default), ``"none"``
(the tool's own name; colliding names are told apart by a hash), or a function ``(server, tool) -> name``."""

_BAD = re.compile(r"[^a-zA-Z0-9_-]")


def _digest(identity: str) -> str:
    return hashlib.sha256(identity.encode()).hexdigest()[:8]


def fit_name(name: str, identity: str = "") -> str:
    """``name`` made to match :data:`NAME_PATTERN`: other characters become ``_``; a name longer than 64 keeps
    its first 55 characters and gets ``_`` and 8 hex digits of the SHA-256 of ``identity`` (default: the name),
    so the same tool gets the same name in every run."""
    fitted = _BAD.sub("_", name) or "_"
    if len(fitted) <= MAX_NAME:
        return fitted
    return fitted[: MAX_NAME - 9] + "_" + _digest(identity or name)


def _with_digest(name: str, identity: str) -> str:
    return name[: MAX_NAME - 9] + "_" + _digest(identity)


def assign_names(entries: Iterable[tuple[str, str]], prefix: Prefix = "server", separator: str = "_") -> list[str]:
    """Model-facing names for ``(server, tool)`` pairs, in order: valid (:data:`NAME_PATTERN`) and distinct.

    Names that would still collide after the prefix scheme and :func:`fit_name` all get a hash of their
    ``server/tool`` identity, so which one is listed first does not change any name."""
    pairs = list(entries)
    raw: list[str] = []
    for server, tool in pairs:
        if prefix == "server":
            raw.append(f"{server}{separator}{tool}")
        elif prefix == "none":
            raw.append(tool)
        else:
            raw.append(prefix(server, tool))
    fitted = [fit_name(r, f"{s}/{t}") for r, (s, t) in zip(raw, pairs, strict=True)]
    counts: dict[str, int] = {}
    for f in fitted:
        counts[f] = counts.get(f, 0) + 1
    out = [_with_digest(f, f"{s}/{t}") if counts[f] > 1 else f for f, (s, t) in zip(fitted, pairs, strict=True)]
    if len(set(out)) != len(out):  # two identical (server, tool) pairs: a caller error
        raise ValueError("duplicate (server, tool) pairs in a toolbox")
    return out


@dataclass
class ToolboxTool:
    """One tool of a toolbox: the ``name`` a model sees, the ``server`` and the MCP ``tool`` behind it."""

    name: str
    server: str
    tool: Tool


def _forward(fn: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A method calling ``fn`` as the host would: ``async def`` stays async (the AsyncClient runs it on the event
    loop), and a ``list_roots`` without a request parameter gets none."""
    no_arg = name == "list_roots" and not _takes_argument(fn)
    if inspect.iscoroutinefunction(fn):

        async def forward_async(self: Handler, *args: Any) -> Any:
            return await (fn() if no_arg else fn(*args))

        return forward_async

    def forward(self: Handler, *args: Any) -> Any:
        return fn() if no_arg else fn(*args)

    return forward


def _observer(inner: Handler | None, on_notification: Callable[[str, dict[str, Any]], None]) -> Handler:
    """A Handler that forwards to ``inner`` exactly the methods ``inner`` overrides (so a session declares the
    same capabilities as with ``inner``) and shows every notification to ``on_notification`` first."""
    ns: dict[str, Any] = {}
    for name in _METHODS:
        if name != "handle_notification" and inner is not None and overrides(inner, name):
            ns[name] = _forward(getattr(inner, name), name)

    inner_notify = inner.handle_notification if inner is not None else None
    if inner_notify is not None and inspect.iscoroutinefunction(inner_notify):

        async def handle_notification_async(self: Handler, method: str, params: dict[str, Any]) -> Any:
            on_notification(method, params)
            return await inner_notify(method, params)

        ns["handle_notification"] = handle_notification_async
    else:

        def handle_notification(self: Handler, method: str, params: dict[str, Any]) -> Any:
            on_notification(method, params)
            return inner_notify(method, params) if inner_notify is not None else None

        ns["handle_notification"] = handle_notification
    for attr in ("sampling_tools", "sampling_context", "roots_list_changed"):
        if inner is not None:
            ns[attr] = getattr(inner, attr)
    handler: Handler = type("ToolboxHandler", (Handler,), ns)()
    return handler


class _Lists:
    """The per-server tool lists and the names built from them; shared by Toolbox and AsyncToolbox."""

    def __init__(self, prefix: Prefix, separator: str) -> None:
        self.prefix, self.separator = prefix, separator
        self.lock = threading.Lock()
        self.by_server: dict[str, list[Tool]] = {}
        self.stale: set[str] = set()
        self.session_server: dict[str, str] = {}
        self.merged: list[ToolboxTool] = []
        self.by_name: dict[str, ToolboxTool] = {}

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/tools/list_changed":
            with self.lock:
                server = self.session_server.get(str(params.get("sessionId", "")))
                if server is not None:
                    self.stale.add(server)

    def stale_servers(self, servers: Iterable[str]) -> list[str]:
        with self.lock:
            return [s for s in servers if s in self.stale or s not in self.by_server]

    def store(self, server: str, tools: list[Tool]) -> None:
        with self.lock:
            self.by_server[server] = tools
            self.stale.discard(server)

    def rebuild(self, order: list[str]) -> list[ToolboxTool]:
        with self.lock:
            pairs = [(s, t) for s in order for t in self.by_server.get(s, [])]
            names = assign_names(((s, t.name) for s, t in pairs), self.prefix, self.separator)
            self.merged = [ToolboxTool(n, s, t) for n, (s, t) in zip(names, pairs, strict=True)]
            self.by_name = {t.name: t for t in self.merged}
            return list(self.merged)

    def lookup(self, name: str) -> ToolboxTool:
        with self.lock:
            entry = self.by_name.get(name)
        if entry is None:
            raise KeyError(f"no tool named {name!r} in this toolbox")
        return entry


class Toolbox:
    """Sessions to several servers of one :class:`~mcp_bridge.Client` as one tool list.

    ``servers``: the configured server names, or None for every server the client's principal may use
    (``list_servers``). ``handler`` answers every session's requests (sampling, elicitation, ...).
    ``prefix``/``separator``: the naming scheme (:data:`Prefix`). ``session_options`` go to each
    ``create_session``. Sessions opened before a failure are closed again.
    """

    def __init__(
        self,
        client: Client,
        servers: Iterable[str] | None = None,
        *,
        handler: Handler | None = None,
        prefix: Prefix = "server",
        separator: str = "_",
        timeout: float | None = None,
        **session_options: Any,
    ) -> None:
        self.client = client
        self._lists = _Lists(prefix, separator)
        self._handler = _observer(handler, self._lists.on_notification)
        names = list(servers) if servers is not None else [s.name for s in client.list_servers(timeout=timeout)]
        self.sessions: dict[str, Session] = {}
        try:
            for name in names:
                session = client.create_session(name, self._handler, timeout=timeout, **session_options)
                self.sessions[name] = session
                with self._lists.lock:
                    self._lists.session_server[session.id] = name
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Toolbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def servers(self) -> list[str]:
        return list(self.sessions)

    @property
    def stale(self) -> bool:
        """Whether a server announced ``tools/list_changed`` since its tools were last listed."""
        return bool(self._lists.stale_servers(list(self.sessions)))

    def list_tools(self, *, refresh: bool = False) -> list[ToolboxTool]:
        """Every server's tools under their toolbox names. A server's list is fetched when it was never listed,
        when the server announced ``tools/list_changed`` since, or with ``refresh=True``."""
        order = list(self.sessions)
        for server in order if refresh else self._lists.stale_servers(order):
            self._lists.store(server, self.sessions[server].list_tools())
        return self._lists.rebuild(order)

    def resolve(self, name: str) -> tuple[Session, ToolboxTool]:
        """The session and tool behind a toolbox name (listing again once if the name is unknown)."""
        try:
            entry = self._lists.lookup(name)
        except KeyError:
            self.list_tools()
            entry = self._lists.lookup(name)
        return self.sessions[entry.server], entry

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any) -> CallToolResult:
        """Call the tool the toolbox lists as ``name`` on its server's session (options as
        :meth:`~mcp_bridge.Session.call_tool`)."""
        try:
            session, entry = self.resolve(name)
        except KeyError as e:
            raise NotFoundError(grpc.StatusCode.NOT_FOUND, str(e)) from None
        return session.call_tool(entry.tool.name, arguments, **options)

    def close(self) -> None:
        """Close every session of the toolbox (the client stays open)."""
        errors: list[BaseException] = []
        for session in list(self.sessions.values()):
            try:
                session.close()
            except Exception as e:  # noqa: BLE001 - close the others, report the first
                errors.append(e)
        self.sessions.clear()
        if errors:
            raise errors[0]


class AsyncToolbox:
    """The asyncio twin of :class:`Toolbox`, over an :class:`~mcp_bridge.AsyncClient`. Open it with
    ``await AsyncToolbox.open(client, servers, handler=...)`` or ``async with AsyncToolbox(...)``."""

    def __init__(
        self,
        client: AsyncClient,
        servers: Iterable[str] | None = None,
        *,
        handler: Handler | None = None,
        prefix: Prefix = "server",
        separator: str = "_",
        timeout: float | None = None,
        **session_options: Any,
    ) -> None:
        self.client = client
        self._names = list(servers) if servers is not None else None
        self._timeout = timeout
        self._options = session_options
        self._lists = _Lists(prefix, separator)
        self._handler = _observer(handler, self._lists.on_notification)
        self.sessions: dict[str, AsyncSession] = {}

    @classmethod
    async def open(cls, client: AsyncClient, servers: Iterable[str] | None = None, **kwargs: Any) -> AsyncToolbox:
        box = cls(client, servers, **kwargs)
        await box.start()
        return box

    async def start(self) -> None:
        """Open the sessions (``open`` and ``async with`` call this)."""
        if self.sessions:
            return
        names = self._names
        if names is None:
            names = [s.name for s in await self.client.list_servers(timeout=self._timeout)]
        try:
            for name in names:
                session = await self.client.create_session(name, self._handler, timeout=self._timeout, **self._options)
                self.sessions[name] = session
                with self._lists.lock:
                    self._lists.session_server[session.id] = name
        except BaseException:
            await self.close()
            raise

    async def __aenter__(self) -> AsyncToolbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def servers(self) -> list[str]:
        return list(self.sessions)

    @property
    def stale(self) -> bool:
        """Whether a server announced ``tools/list_changed`` since its tools were last listed."""
        return bool(self._lists.stale_servers(list(self.sessions)))

    async def list_tools(self, *, refresh: bool = False) -> list[ToolboxTool]:
        """See :meth:`Toolbox.list_tools`."""
        order = list(self.sessions)
        stale = order if refresh else self._lists.stale_servers(order)
        lists = await asyncio.gather(*(self.sessions[s].list_tools() for s in stale))
        for server, tools in zip(stale, lists, strict=True):
            self._lists.store(server, tools)
        return self._lists.rebuild(order)

    async def resolve(self, name: str) -> tuple[AsyncSession, ToolboxTool]:
        try:
            entry = self._lists.lookup(name)
        except KeyError:
            await self.list_tools()
            entry = self._lists.lookup(name)
        return self.sessions[entry.server], entry

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any) -> CallToolResult:
        """See :meth:`Toolbox.call_tool`."""
        try:
            session, entry = await self.resolve(name)
        except KeyError as e:
            raise NotFoundError(grpc.StatusCode.NOT_FOUND, str(e)) from None
        return await session.call_tool(entry.tool.name, arguments, **options)

    async def close(self) -> None:
        errors: list[BaseException] = []
        for session in list(self.sessions.values()):
            try:
                await session.close()
            except Exception as e:  # noqa: BLE001 - close the others, report the first
                errors.append(e)
        self.sessions.clear()
        if errors:
            raise errors[0]
