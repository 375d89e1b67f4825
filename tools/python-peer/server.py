"""A small MCP server built with the official Python SDK (PyPI `mcp`), used by mcp-bridge's Go tests
(mcpcore/peers_test.go) as a real peer over stdio.

Every tool that needs the client goes through the SDK's dual-era resolvers (`Resolve` with `Sample`,
`Elicit`, `ListRoots`): on a 2025-11-25 session the SDK pushes sampling/createMessage, elicitation/create
and roots/list as server-to-client requests; on a 2026-07-28 session it returns them inside an
`input_required` result and resumes when the client retries. So the same tools exercise both of the
bridge's delivery paths.

Run: python server.py   (stdio; logs go to stderr only)
"""

from typing import Annotated

import anyio
from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field

from mcp.server.mcpserver import (
    Context,
    Elicit,
    ElicitationResult,
    ListRoots,
    MCPServer,
    Resolve,
    Sample,
)

server = MCPServer(
    "python-peer",
    instructions="Test peer for mcp-bridge: sampling, elicitation, roots, progress, a resource and a prompt.",
)


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


class Profile(BaseModel):
    name: str = Field(description="Your name")
    age: int = Field(default=30, description="Your age", ge=0, le=150)
    subscribe: bool = Field(default=False, description="Subscribe to the newsletter")


def ask_profile() -> Elicit[Profile]:
    return Elicit("Please tell us about yourself", Profile)


@server.tool()
def elicit_profile(
    profile: Annotated[ElicitationResult[Profile], Resolve(ask_profile)],
) -> str:
    """Ask the user for a profile (form elicitation) and report the outcome."""
    if profile.action == "accept":
        data = profile.data
        return f"accepted: name={data.name} age={data.age} subscribe={str(data.subscribe).lower()}"
    return profile.action


def ask_model(prompt: str) -> Sample:
    return Sample(
        [SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        max_tokens=64,
        system_prompt="You are a test double.",
    )


@server.tool()
def sample(prompt: str, reply: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Ask the client's LLM to answer the prompt (sampling) and return the model's text."""
    content = reply.content
    text = content.text if isinstance(content, TextContent) else str(content)
    return f"model={reply.model} text={text}"


def fetch_roots() -> ListRoots:
    return ListRoots()


@server.tool()
def list_roots(roots: Annotated[ListRootsResult, Resolve(fetch_roots)]) -> str:
    """Return the client's roots, one URI per line."""
    return "\n".join(str(r.uri) for r in roots.roots)


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Count to steps, reporting progress after each step."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i} of {steps}")
        await anyio.sleep(0.01)
    return f"counted to {steps}"


@server.resource("peer://greeting", mime_type="text/plain")
def greeting() -> str:
    """A fixed text resource."""
    return "hello from the python peer"


@server.prompt()
def greet(name: str) -> str:
    """A prompt that greets someone."""
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    server.run("stdio")
