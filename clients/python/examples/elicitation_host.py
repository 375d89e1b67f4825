"""An elicitation host: answers the MCP server's questions to the user from a dict.

Run a bridge (``make run`` in the repository), then::

    python examples/elicitation_host.py [127.0.0.1:50051]

The handler fills the server's requested form (a flat JSON Schema) from ``ANSWERS``: it accepts when every
required field has a value, declines when one is missing, and cancels when the server asks for something it
was told never to give. A real host would show the form to a person instead.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from mcp_bridge import Client, ElicitationRequest, ElicitResult, Handler, accept, cancel, decline

ANSWERS: dict[str, Any] = {"name": "Ada Lovelace", "age": 36, "email": "ada@example.com"}
NEVER = {"password", "ssn"}


class DictForm(Handler):
    """Answers form-mode elicitations from a dict of known values."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers

    def handle_elicitation(self, request: ElicitationRequest) -> ElicitResult:
        properties: dict[str, Any] = request.requested_schema.get("properties", {})
        required: list[str] = request.requested_schema.get("required", [])
        if NEVER & set(properties):
            return cancel()
        content = {key: self.answers[key] for key in properties if key in self.answers}
        if any(key not in content for key in required):
            return decline()
        return accept(content)


def main(target: str) -> None:
    with Client(target, timeout=60) as client:
        client.wait_ready(30)
        with client.create_session("demo", DictForm(ANSWERS)) as session:
            print("declared:", session.info.host_capabilities)
            result = session.call_tool("elicit", {"message": "Who are you?"})
            print("tool result:", result.text)
        with client.create_session("demo", DictForm({"age": 36})) as session:
            print("without a name:", session.call_tool("elicit").text)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051")
