"""A sampling host: answers the MCP server's LLM requests with a canned model.

Run a bridge (``make run`` in the repository), then::

    python examples/sampling_host.py [127.0.0.1:50051]

It opens a session to the demo server with a handler that implements only ``handle_sampling`` -- so the
session declares only the sampling capability -- and calls the demo's ``sample`` tool, which asks the host to
sample a model. A real host would call its LLM provider where ``CannedModel.complete`` is, and should let a
person approve the request first (raise ``McpError(USER_REJECTED, ...)`` to refuse).
"""

from __future__ import annotations

import logging
import sys

from mcp_bridge import Client, Handler, SamplingRequest, SamplingResult, TextContent


class CannedModel(Handler):
    """Answers every sampling request with a fixed reply built from the conversation."""

    model = "canned-model-1"

    def complete(self, system_prompt: str, conversation: list[tuple[str, str]], max_tokens: int) -> str:
        last_user = next((text for role, text in reversed(conversation) if role == "user"), "")
        reply = f"(canned) You asked: {last_user!r}. The answer is 42."
        return " ".join(reply.split()[:max_tokens]) if max_tokens else reply

    def handle_sampling(self, request: SamplingRequest) -> SamplingResult:
        conversation: list[tuple[str, str]] = [(m.role, m.text) for m in request.messages]
        text = self.complete(request.system_prompt, conversation, request.max_tokens)
        return SamplingResult(TextContent(text), model=self.model, stop_reason="endTurn")


def main(target: str) -> None:
    with Client(target, timeout=60) as client:
        client.wait_ready(30)
        with client.create_session("demo", CannedModel()) as session:
            print("declared:", session.info.host_capabilities)
            result = session.call_tool("sample", {"prompt": "What is the meaning of life?", "maxTokens": 50})
            print("tool result:", result.text)
            print("structured:", result.structured_content)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051")
