"""mcp_bridge: the Python host library of mcp-bridge.

mcp-bridge puts an MCP client behind a gRPC API. This package opens sessions to the MCP servers a bridge is
configured with, calls their tools, reads their resources and gets their prompts with plain Python values,
and answers what those servers ask of a client (sampling, elicitation, roots) through a :class:`Handler`::

    from mcp_bridge import Client

    with Client("127.0.0.1:50051") as client:
        with client.create_session("demo") as session:
            print(session.call_tool("echo", {"text": "hello"}).text)

:class:`Client` is synchronous (handlers run on threads); :class:`AsyncClient` is the asyncio twin.
"""

from ._retry import RetryPolicy
from .aio import AsyncClient, AsyncSession
from .client import Client, Session
from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    USER_REJECTED,
    BridgeError,
    CallCancelledError,
    CallOutcomeUnknownError,
    DeadlineExceededError,
    FailedPreconditionError,
    InvalidArgumentError,
    McpError,
    NotFoundError,
    PermissionDeniedError,
    UnavailableError,
    UnimplementedError,
)
from .handler import (
    AuthorizationRequest,
    ElicitationRequest,
    ElicitResult,
    Handler,
    ModelPreferences,
    RootsRequest,
    SamplingMessage,
    SamplingRequest,
    SamplingResult,
    ServerRequest,
    accept,
    cancel,
    decline,
)
from .types import (
    Annotations,
    AudioContent,
    CallToolResult,
    Completion,
    Content,
    EmbeddedResource,
    GetPromptResult,
    Icon,
    ImageContent,
    Implementation,
    LogMessage,
    Progress,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceResult,
    RequestEnded,
    RequestNotice,
    Resource,
    ResourceContents,
    ResourceLink,
    ResourceTemplate,
    Root,
    ServerInfo,
    SessionInfo,
    StreamEvent,
    Task,
    TextContent,
    Tool,
    ToolAnnotations,
    ToolResultContent,
    ToolUseContent,
)

__version__ = "0.1.0"

__all__ = [
    "AsyncClient",
    "AsyncSession",
    "Client",
    "Session",
    "RetryPolicy",
    # handler
    "Handler",
    "ServerRequest",
    "SamplingRequest",
    "SamplingMessage",
    "ModelPreferences",
    "SamplingResult",
    "ElicitationRequest",
    "ElicitResult",
    "AuthorizationRequest",
    "RootsRequest",
    "accept",
    "decline",
    "cancel",
    # errors
    "BridgeError",
    "CallCancelledError",
    "CallOutcomeUnknownError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "InvalidArgumentError",
    "NotFoundError",
    "PermissionDeniedError",
    "UnavailableError",
    "UnimplementedError",
    "McpError",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "METHOD_NOT_FOUND",
    "USER_REJECTED",
    # values
    "Annotations",
    "AudioContent",
    "CallToolResult",
    "Completion",
    "Content",
    "EmbeddedResource",
    "GetPromptResult",
    "Icon",
    "ImageContent",
    "Implementation",
    "LogMessage",
    "Progress",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "ReadResourceResult",
    "RequestEnded",
    "RequestNotice",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "Root",
    "ServerInfo",
    "SessionInfo",
    "StreamEvent",
    "Task",
    "TextContent",
    "Tool",
    "ToolAnnotations",
    "ToolResultContent",
    "ToolUseContent",
]
