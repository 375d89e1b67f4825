"""An OpenAI-compatible model server for the framework tests: loopback HTTP, scripted replies.

``POST /v1/chat/completions`` (what LangChain's ChatOpenAI, the Agents SDK's chat-completions model, PydanticAI's
OpenAI model and the sampling adapter send) and ``POST /v1/responses`` (the Agents SDK's default). An agent's
request (it carries tools) gets the next step of the script: a tool call for each of :data:`STEPS`, chosen by
how many tool results the conversation already holds, then a final answer. A request whose system prompt is
:data:`SAMPLER` is the sampling adapter's: it gets :data:`SAMPLED`. Every request body is kept for the test to
assert on.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SAMPLER = "You are the sampler."
SAMPLED = "Hi from the sampled model"
FINAL = "All done."

STEPS: list[tuple[str, dict[str, Any]]] = [
    ("add", {"a": 2, "b": 3}),
    ("echo", {"text": "hello bridge"}),
    ("elicit", {}),
    ("sample", {"prompt": "Say hi", "systemPrompt": SAMPLER, "maxTokens": 42}),
    ("structured", {"city": "Paris"}),  # needs approval: approved
    ("structured", {"city": "Atlantis"}),  # needs approval: denied
]


def _tool_names(body: dict[str, Any]) -> list[str]:
    out = []
    for t in body.get("tools") or []:
        if "function" in t:
            out.append(t["function"]["name"])
        elif "name" in t:
            out.append(t["name"])
    return out


def resolve(names: list[str], short: str) -> str:
    """The offered tool name for an MCP tool name: itself, or a prefixed form (``demo_add``)."""
    for n in names:
        if n == short or n.endswith("_" + short):
            return n
    raise AssertionError(f"no tool for {short!r} among {names}")


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(p.get("text", p.get("output", "")) if isinstance(p, dict) else p) for p in content)
    return str(content)


class ModelServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.times: list[float] = []
        self.lock = threading.Lock()
        server = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                path = self.path.split("?")[0]
                with server.lock:
                    server.requests.append((path, body))
                    server.times.append(time.monotonic())
                try:
                    if path.endswith("/chat/completions"):
                        reply = server.chat(body)
                    elif path.endswith("/responses"):
                        reply = server.responses(body)
                    else:
                        self.send_error(404)
                        return
                except AssertionError as e:
                    data = json.dumps({"error": {"message": str(e), "type": "invalid_request_error"}}).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------------------------ chat completions

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        assert not body.get("stream"), "this scripted server does not stream"
        msgs = body.get("messages") or []
        system = [text_of(m.get("content")) for m in msgs if m.get("role") in ("system", "developer")]
        if SAMPLER in system:
            return self._completion(body, {"role": "assistant", "content": SAMPLED}, "stop", model="sampled-model")
        done = sum(1 for m in msgs if m.get("role") == "tool")
        if done < len(STEPS):
            name, args = STEPS[done]
            call = {"id": f"call_{done}", "type": "function", "function": {"name": resolve(_tool_names(body), name), "arguments": json.dumps(args)}}
            return self._completion(body, {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")
        return self._completion(body, {"role": "assistant", "content": FINAL}, "stop")

    @staticmethod
    def _completion(body: dict[str, Any], message: dict[str, Any], finish: str, model: str = "") -> dict[str, Any]:
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1,
            "model": model or body.get("model", "test-model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    # ------------------------------------------------------------------------------------- responses

    def responses(self, body: dict[str, Any]) -> dict[str, Any]:
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        done = sum(1 for i in items if isinstance(i, dict) and i.get("type") == "function_call_output")
        if done < len(STEPS):
            name, args = STEPS[done]
            out = [{"type": "function_call", "id": f"fc_{done}", "call_id": f"call_{done}", "name": resolve(_tool_names(body), name), "arguments": json.dumps(args), "status": "completed"}]
        else:
            out = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": FINAL, "annotations": []}]}]
        return {
            "id": "resp_test",
            "object": "response",
            "created_at": 1,
            "model": body.get("model", "test-model"),
            "status": "completed",
            "output": out,
            "parallel_tool_calls": False,
            "tool_choice": "auto",
            "tools": [],
            "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15, "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}},
        }

    # ---------------------------------------------------------------------------------- for asserts

    def sampling_requests(self) -> list[dict[str, Any]]:
        with self.lock:
            return [b for _, b in self.requests if any(m.get("content") == SAMPLER for m in b.get("messages") or [])]

    def agent_requests(self) -> list[tuple[str, dict[str, Any]]]:
        with self.lock:
            return [(p, b) for p, b in self.requests if b.get("tools")]

    def tool_outputs(self) -> list[str]:
        """The tool results in the last agent request, in order, as text."""
        path, body = self.agent_requests()[-1]
        if path.endswith("/responses"):
            return [text_of(i.get("output")) for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") == "function_call_output"]
        return [text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "tool"]
