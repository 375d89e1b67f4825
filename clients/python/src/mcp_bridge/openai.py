"""OpenAI: bridge sessions for the OpenAI Agents SDK, function tools for Chat Completions and Responses, and
a sampling handler over any OpenAI-compatible endpoint (``pip install "mcp-bridge-client[openai]"``).

* :class:`BridgeMCPServer` is an Agents SDK ``MCPServer``: ``Agent(mcp_servers=[BridgeMCPServer(session)])``,
  with the SDK's ``tool_filter`` and ``cache_tools_list`` conventions.
* :class:`ToolDispatcher` gives plain Chat Completions / Responses users the function definitions of a
  session or toolbox and runs the model's function calls.
* :class:`OpenAISamplingHandler` answers ``sampling/createMessage`` with a Chat Completions call: messages
  (text, images, audio, tool use and results), system prompt, max tokens, temperature, stop sequences, model
  preferences mapped to a model by the host's rule, tools and tool choice as function calling; an optional
  ``approve`` hook lets a person see, edit or refuse the request first.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from ._adapt import DetachedCalls, Source, ToolSource, not_run_message
from .errors import INVALID_PARAMS, USER_REJECTED, BridgeError, McpError
from .handler import Handler, ModelPreferences, SamplingRequest, SamplingResult
from .types import (
    AudioContent,
    CallToolResult,
    Content,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResultContent,
    ToolUseContent,
)

if TYPE_CHECKING:
    from ._openai_agents import BridgeMCPServer as BridgeMCPServer  # noqa: F401

__all__ = ["BridgeMCPServer", "ModelRule", "OpenAISamplingHandler", "ToolDispatcher", "result_text"]


def __getattr__(name: str) -> Any:
    # The Agents SDK is an extra of its own; import it only when BridgeMCPServer is asked for.
    if name == "BridgeMCPServer":
        from ._openai_agents import BridgeMCPServer

        return BridgeMCPServer
    raise AttributeError(name)


# ------------------------------------------------------------------------------ tool results as text


def result_text(result: CallToolResult) -> str:
    """A tool result as the string a function-call output carries: its text blocks (other blocks as JSON),
    or its structured content as JSON when it has no text; an ``isError`` result is prefixed ``Error:``."""
    parts: list[str] = []
    for c in result.content:
        if isinstance(c, TextContent):
            parts.append(c.text)
        elif isinstance(c, (ImageContent, AudioContent)):
            parts.append(json.dumps({"type": c.type, "mimeType": c.mime_type, "data": base64.b64encode(c.data).decode()}))
        elif isinstance(c, ResourceLink):
            parts.append(json.dumps({"type": "resource_link", "uri": c.uri, "name": c.name}))
        elif isinstance(c, EmbeddedResource):
            parts.append(c.resource.text if c.resource.text is not None else json.dumps({"type": "resource", "uri": c.resource.uri}))
    text = "\n".join(parts)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content)
    return f"Error: {text}" if result.is_error else text


class ToolDispatcher:
    """Function tools for plain Chat Completions / Responses users, over a session or toolbox::

        tools = ToolDispatcher(session)
        resp = openai.chat.completions.create(model=m, messages=msgs, tools=tools.chat_tools())
        msgs += [resp.choices[0].message, *tools.run_chat(resp.choices[0].message)]

    An approval denial or expiry, and an ``isError`` result, come back as an ``Error: ...`` output the model
    reads; other bridge failures raise. ``detached``: run every call detached and list it there
    (:class:`~mcp_bridge.DetachedCalls`), so that a long-running tool goes on when the caller's run is cut."""

    def __init__(self, session_or_toolbox: ToolSource, *, detached: DetachedCalls | None = None) -> None:
        self._src = Source(session_or_toolbox, detached=detached)
        self._bound = self._src.list_tools() if not self._src.is_async else []

    async def refresh(self) -> None:
        """List the tools again (an async source must call this once before :meth:`chat_tools`)."""
        self._bound = await self._src.alist_tools()

    def chat_tools(self) -> list[dict[str, Any]]:
        """The ``tools`` parameter of ``chat.completions.create``."""
        return [
            {"type": "function", "function": {"name": b.name, "description": b.tool.description, "parameters": _params(b.tool.input_schema)}}
            for b in self._bound
        ]

    def responses_tools(self) -> list[dict[str, Any]]:
        """The ``tools`` parameter of ``responses.create``."""
        return [
            {"type": "function", "name": b.name, "description": b.tool.description, "parameters": _params(b.tool.input_schema), "strict": False}
            for b in self._bound
        ]

    def call(self, name: str, arguments: str | Mapping[str, Any] | None) -> str:
        """Run one function call (arguments as the model sent them, a JSON string) and return its output."""
        try:
            return result_text(self._src.call_tool(name, _args(arguments)))
        except BridgeError as err:
            return _error_output(err)

    async def acall(self, name: str, arguments: str | Mapping[str, Any] | None) -> str:
        try:
            return result_text(await self._src.acall_tool(name, _args(arguments)))
        except BridgeError as err:
            return _error_output(err)

    def run_chat(self, message: Any) -> list[dict[str, Any]]:
        """The ``role: tool`` messages answering a chat completion message's ``tool_calls``."""
        return [
            {"role": "tool", "tool_call_id": tc.id, "content": self.call(tc.function.name, tc.function.arguments)}
            for tc in (getattr(message, "tool_calls", None) or [])
        ]

    def run_responses(self, output: Sequence[Any]) -> list[dict[str, Any]]:
        """The ``function_call_output`` items answering a response's ``function_call`` output items."""
        return [
            {"type": "function_call_output", "call_id": item.call_id, "output": self.call(item.name, item.arguments)}
            for item in output
            if getattr(item, "type", "") == "function_call"
        ]


def _params(schema: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(schema) or {"type": "object"}
    out.setdefault("properties", {})
    return out


def _args(arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        value = json.loads(arguments)
        if not isinstance(value, dict):
            raise ValueError("function call arguments must be a JSON object")
        return value
    return dict(arguments)


def _error_output(err: BridgeError) -> str:
    msg = not_run_message(err)
    if msg is None:
        raise err
    return f"Error: {msg}"


# ------------------------------------------------------------------------------------------- sampling

ModelRule = Union[str, Mapping[str, str], Callable[[ModelPreferences | None], str]]
"""How a sampling request's model preferences pick the model: one model name; a mapping from a substring of a
hint to a model, tried hint by hint in the server's order, ``"*"`` the fallback; or a function of the
preferences (None when the server gave none)."""

ApproveHook = Callable[[SamplingRequest, dict[str, Any]], Union[dict[str, Any], bool, None, Awaitable[Union[dict[str, Any], bool, None]]]]
"""Called with the request and the Chat Completions parameters about to be sent: return the parameters (the
same dict, edited, or another) or True to send, False or None to refuse (the server gets ``-1 User rejected``)."""


def pick_model(rule: ModelRule, prefs: ModelPreferences | None) -> str:
    """The model a rule picks for a request's preferences."""
    if isinstance(rule, str):
        return rule
    if callable(rule):
        return rule(prefs)
    for hint in prefs.hints if prefs is not None else []:
        for key, model in rule.items():
            if key != "*" and key in hint:
                return model
    if "*" in rule:
        return rule["*"]
    raise McpError(INVALID_PARAMS, "no model for the sampling request's model preferences")


def _data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _part(c: Content) -> dict[str, Any]:
    if isinstance(c, TextContent):
        return {"type": "text", "text": c.text}
    if isinstance(c, ImageContent):
        return {"type": "image_url", "image_url": {"url": _data_url(c.mime_type, c.data)}}
    if isinstance(c, AudioContent):
        fmt = c.mime_type.split("/")[-1].replace("mpeg", "mp3").replace("x-wav", "wav")
        return {"type": "input_audio", "input_audio": {"data": base64.b64encode(c.data).decode(), "format": fmt}}
    raise McpError(INVALID_PARAMS, f"sampling content of type {c.type} has no Chat Completions form")


def chat_messages(request: SamplingRequest) -> list[dict[str, Any]]:
    """A sampling request's system prompt and messages as Chat Completions messages."""
    out: list[dict[str, Any]] = []
    if request.system_prompt:
        out.append({"role": "system", "content": request.system_prompt})
    for m in request.messages:
        uses = [c for c in m.content if isinstance(c, ToolUseContent)]
        results = [c for c in m.content if isinstance(c, ToolResultContent)]
        rest = [c for c in m.content if not isinstance(c, (ToolUseContent, ToolResultContent))]
        for r in results:
            text = "\n".join(c.text for c in r.content if isinstance(c, TextContent))
            if not text and r.structured_content is not None:
                text = json.dumps(r.structured_content)
            out.append({"role": "tool", "tool_call_id": r.tool_use_id, "content": f"Error: {text}" if r.is_error else text})
        if m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": "\n".join(c.text for c in rest if isinstance(c, TextContent)) or None}
            if uses:
                msg["tool_calls"] = [
                    {"id": u.id, "type": "function", "function": {"name": u.name, "arguments": json.dumps(u.input)}} for u in uses
                ]
            out.append(msg)
        elif rest:
            if all(isinstance(c, TextContent) for c in rest):
                out.append({"role": "user", "content": "\n".join(c.text for c in rest if isinstance(c, TextContent))})
            else:
                out.append({"role": "user", "content": [_part(c) for c in rest]})
    return out


_STOP = {"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse", "function_call": "toolUse", "content_filter": "contentFilter"}


def sampling_result(completion: Any) -> SamplingResult:
    """A Chat Completions response as the sampling result."""
    choice = completion.choices[0]
    msg = choice.message
    content: list[Content] = []
    if msg.content:
        content.append(TextContent(msg.content))
    for tc in msg.tool_calls or []:
        try:
            args = json.loads(tc.function.arguments or "{}")
        except ValueError:
            args = {"_raw": tc.function.arguments}
        content.append(ToolUseContent(id=tc.id, name=tc.function.name, input=args if isinstance(args, dict) else {"value": args}))
    if not content:
        content.append(TextContent(""))
    reason = choice.finish_reason or ""
    return SamplingResult(content=content if len(content) > 1 else content[0], model=completion.model, stop_reason=_STOP.get(reason, reason))


class OpenAISamplingHandler(Handler):
    """Answers ``sampling/createMessage`` with ``client.chat.completions.create`` (an ``openai.OpenAI`` or
    ``openai.AsyncOpenAI`` pointed at any OpenAI-compatible endpoint).

    ``model_rule`` picks the model (:data:`ModelRule`). ``approve`` (:data:`ApproveHook`) sees the request and
    the parameters first. ``extra`` parameters go to every call (e.g. ``{"max_completion_tokens": ...}``).
    Subclass it to answer elicitation too; it declares sampling with tools."""

    sampling_tools = True

    def __init__(
        self,
        client: Any,
        *,
        model_rule: ModelRule,
        approve: ApproveHook | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.model_rule = model_rule
        self.approve = approve
        self.extra = dict(extra or {})

    def params(self, request: SamplingRequest) -> dict[str, Any]:
        """The Chat Completions parameters for a sampling request."""
        p: dict[str, Any] = {
            "model": pick_model(self.model_rule, request.model_preferences),
            "messages": chat_messages(request),
            "max_tokens": request.max_tokens,
        }
        if request.temperature is not None:
            p["temperature"] = request.temperature
        if request.stop_sequences:
            p["stop"] = list(request.stop_sequences)
        if request.tools:
            p["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": _params(t.input_schema)}}
                for t in request.tools
            ]
            if request.tool_choice:
                p["tool_choice"] = request.tool_choice
        p.update(self.extra)
        return p

    def handle_sampling(self, request: SamplingRequest) -> Any:
        params = self.params(request)
        verdict: Any = self.approve(request, params) if self.approve is not None else True
        if inspect.isawaitable(verdict):
            return self._after_approval(request, verdict, params)
        reply = self.client.chat.completions.create(**self._approved(params, verdict))
        if inspect.isawaitable(reply):  # an AsyncOpenAI
            return self._result(reply)
        return sampling_result(reply)

    @staticmethod
    def _approved(params: dict[str, Any], verdict: Any) -> dict[str, Any]:
        if verdict is None or verdict is False:
            raise McpError(USER_REJECTED, "User rejected sampling request")
        return verdict if isinstance(verdict, dict) else params

    @staticmethod
    async def _result(reply: Awaitable[Any]) -> SamplingResult:
        return sampling_result(await reply)

    async def _after_approval(self, request: SamplingRequest, verdict: Awaitable[Any], params: dict[str, Any]) -> SamplingResult:
        params = self._approved(params, await verdict)
        create = self.client.chat.completions.create
        reply = create(**params) if not _is_sync_client(self.client) else await asyncio.to_thread(create, **params)
        return sampling_result(await reply if inspect.isawaitable(reply) else reply)


def _is_sync_client(client: Any) -> bool:
    """Whether client's calls block (an ``openai.OpenAI``) rather than return awaitables (``AsyncOpenAI``)."""
    return type(client).__name__ != "AsyncOpenAI" and not inspect.iscoroutinefunction(client.chat.completions.create)
