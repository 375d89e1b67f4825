"""A minimal MCP server over stdio (newline-delimited JSON-RPC) whose tool list changes: ``add_tool`` adds a
tool of the given name and announces ``notifications/tools/list_changed``. The toolbox tests run it behind the
real bridge to see a list change reflected without reopening a session."""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "name": "add_tool",
        "description": "Adds a tool named `name` (then announces tools/list_changed).",
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    },
    # the same name as the demo server's tool: a toolbox must tell them apart
    {"name": "echo", "description": "Echoes text, upper-cased.", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
]


def send(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def text(t: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": t}]}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, mid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method is None or mid is None:
            continue  # a response or a notification
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "dyn", "version": "1.0.0"},
            }})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            name, args = params.get("name"), params.get("arguments") or {}
            if name == "add_tool":
                TOOLS.append({"name": str(args["name"]), "description": "added", "inputSchema": {"type": "object"}})
                send({"jsonrpc": "2.0", "id": mid, "result": text("added " + str(args["name"]))})
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            elif name == "echo":
                send({"jsonrpc": "2.0", "id": mid, "result": text(str(args.get("text", "")).upper())})
            elif any(t["name"] == name for t in TOOLS):
                send({"jsonrpc": "2.0", "id": mid, "result": text("added")})
            else:
                send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32602, "message": f"unknown tool {name}"}})
        else:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"method not found: {method}"}})


if __name__ == "__main__":
    main()
