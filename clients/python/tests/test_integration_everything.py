"""Integration tests against @modelcontextprotocol/server-everything (the MCP reference server, from npm) through
the real bridge: content of every kind, prompts with embedded resources, completion, progress, and the
server-initiated flows as a server written by others sends them (legacy pushes on 2025-11-25)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from mcp_bridge import (
    Client,
    ElicitationRequest,
    EmbeddedResource,
    Handler,
    ImageContent,
    InvalidArgumentError,
    NotFoundError,
    Progress,
    ResourceLink,
    RootsRequest,
    SamplingRequest,
    SamplingResult,
    TextContent,
    accept,
    cancel,
    decline,
)

PNG = b"\x89PNG\r\n\x1a\n"


def eventually(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


class Host(Handler):
    def __init__(self, form: Any = None) -> None:
        self.form = form if form is not None else accept({"name": "Ada Lovelace"})
        self.roots: list[Any] = [{"uri": "file:///home/ada", "name": "home"}]
        self.seen: list[Any] = []
        self.notes: list[tuple[str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def handle_sampling(self, request: SamplingRequest) -> SamplingResult:
        self.seen.append(request)
        return SamplingResult(TextContent("canned completion"), model="canned-model", stop_reason="endTurn")

    def handle_elicitation(self, request: ElicitationRequest) -> Any:
        self.seen.append(request)
        return self.form

    def handle_notification(self, method: str, params: dict[str, Any]) -> None:
        with self.lock:
            self.notes.append((method, params))

    def saw(self, method: str) -> list[dict[str, Any]]:
        with self.lock:
            return [p for m, p in self.notes if m == method]


class RootsHost(Host):
    """Host with roots too. (server-everything keeps running after stdin closes when roots are declared, so
    closing such a session takes the bridge's SIGTERM grace period; only the tests that need roots use it.)"""

    def list_roots(self, request: RootsRequest) -> Any:
        self.seen.append(request)
        return self.roots


def test_session_and_tools(client: Client, everything_server: str) -> None:
    with client.create_session(everything_server, RootsHost()) as session:
        assert session.info.server_info.name == "mcp-servers/everything"
        names = {t.name for t in session.list_tools()}
        # The sampling, elicitation and roots tools exist only because the handler declared those capabilities.
        assert {"echo", "get-sum", "get-tiny-image", "trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"} <= names
        assert session.call_tool("echo", {"message": "hi"}).text == "Echo: hi"
        assert session.call_tool("get-sum", {"a": 19, "b": 23}).text == "The sum of 19 and 23 is 42."


def test_capabilities_follow_the_handler(client: Client, everything_server: str) -> None:
    with client.create_session(everything_server) as session:
        names = {t.name for t in session.list_tools()}
        assert "echo" in names
        assert not names & {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"}


def test_content_kinds(client: Client, everything_server: str) -> None:
    with client.create_session(everything_server) as session:
        image = session.call_tool("get-tiny-image")
        images = [c for c in image.content if isinstance(c, ImageContent)]
        assert len(images) == 1 and images[0].mime_type == "image/png" and images[0].data.startswith(PNG)

        annotated = session.call_tool("get-annotated-message", {"messageType": "error", "includeImage": True})
        first = annotated.content[0]
        assert isinstance(first, TextContent) and first.annotations is not None
        assert first.annotations.priority == 1.0 and set(first.annotations.audience) == {"user", "assistant"}

        links = session.call_tool("get-resource-links", {"count": 3})
        link_items = [c for c in links.content if isinstance(c, ResourceLink)]
        assert len(link_items) == 3 and all(link.uri.startswith("demo://resource/dynamic/") for link in link_items)

        ref = session.call_tool("get-resource-reference", {"resourceType": "Blob", "resourceId": 2})
        embedded = [c for c in ref.content if isinstance(c, EmbeddedResource)]
        assert embedded and embedded[0].resource.blob is not None and embedded[0].resource.text is None

        bad = session.call_tool("get-resource-reference", {"resourceType": "blob", "resourceId": 2})
        assert bad.is_error and "resourceType" in bad.text

        structured = session.call_tool("get-structured-content", {"location": "New York"})
        assert set(structured.structured_content) == {"temperature", "conditions", "humidity"}


def test_resources_and_prompts(client: Client, everything_server: str) -> None:
    with client.create_session(everything_server) as session:
        uris = [r.uri for r in session.list_resources()]
        assert "demo://resource/static/document/features.md" in uris
        templates = {t.uri_template for t in session.list_resource_templates()}
        assert "demo://resource/dynamic/text/{resourceId}" in templates
        text = session.read_resource("demo://resource/dynamic/text/1")
        assert text.contents[0].text is not None and text.contents[0].text.startswith("Resource 1:")
        blob = session.read_resource("demo://resource/dynamic/blob/1")
        assert blob.contents[0].blob is not None and blob.contents[0].blob.startswith(b"Resource 1:")
        doc = session.read_resource("demo://resource/static/document/features.md")
        assert "Everything Server" in doc.text
        with pytest.raises((NotFoundError, InvalidArgumentError)):
            session.read_resource("demo://resource/nope")

        prompts = {p.name: p for p in session.list_prompts()}
        assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(prompts)
        args = session.get_prompt("args-prompt", {"city": "Paris", "state": "Texas"})
        assert "Paris" in args.messages[0].content.text  # type: ignore[union-attr]
        res = session.get_prompt("resource-prompt", {"resourceType": "Text", "resourceId": "3"})
        embedded = [m.content for m in res.messages if isinstance(m.content, EmbeddedResource)]
        assert embedded and embedded[0].resource.uri == "demo://resource/dynamic/text/3"

        assert session.complete(prompt="completable-prompt", argument="department", value="E").values == ["Engineering"]
        names = session.complete(
            prompt="completable-prompt", argument="name", value="", context={"department": "Engineering"}
        ).values
        assert names, "context-aware completion offers names for the department"


def test_progress_stream(client: Client, everything_server: str) -> None:
    with client.create_session(everything_server) as session:
        events = list(session.call_tool_stream("trigger-long-running-operation", {"duration": 0.3, "steps": 3}))
        assert [e.progress for e in events if isinstance(e, Progress)] == [1, 2, 3]
        assert "Long running operation completed" in events[-1].text  # type: ignore[union-attr]


def test_sampling(client: Client, everything_server: str) -> None:
    host = Host()
    with client.create_session(everything_server, host) as session:
        result = session.call_tool("trigger-sampling-request", {"prompt": "tell a joke", "maxTokens": 25})
        assert '"model": "canned-model"' in result.text and "canned completion" in result.text
        (req,) = host.seen
        assert isinstance(req, SamplingRequest)
        assert req.max_tokens == 25 and req.temperature == 0.7
        assert req.system_prompt == "You are a helpful test server."
        assert req.messages[0].text.endswith("tell a joke")
        assert req.delivery == "push"


@pytest.mark.parametrize(
    "answer,needle",
    [
        (accept({"name": "Ada Lovelace", "integer": 7}), "Name: Ada Lovelace"),
        (decline(), "declined"),
        (cancel(), "cancel"),
    ],
    ids=["accept", "decline", "cancel"],
)
def test_elicitation(client: Client, everything_server: str, answer: Any, needle: str) -> None:
    host = Host(form=answer)
    with client.create_session(everything_server, host) as session:
        result = session.call_tool("trigger-elicitation-request")
        assert needle.lower() in result.text.lower(), result.text
        (req,) = host.seen
        assert isinstance(req, ElicitationRequest) and req.requested_schema["required"] == ["name"]


def test_roots_and_set_roots(client: Client, everything_server: str) -> None:
    host = RootsHost()
    with client.create_session(everything_server, host) as session:
        assert "file:///home/ada" in session.call_tool("get-roots-list").text
        # The server re-reads roots when told they changed (notifications/roots/list_changed).
        updates = len([n for n in host.saw("notifications/message") if "Roots updated" in str(n.get("data"))])
        session.set_roots([{"uri": "file:///srv/data", "name": "data"}])
        eventually(lambda: len([n for n in host.saw("notifications/message") if "Roots updated" in str(n.get("data"))]) > updates)
        text = session.call_tool("get-roots-list").text
        assert "file:///srv/data" in text and "file:///home/ada" not in text


def test_ping_and_log_level(client: Client, everything_server: str) -> None:
    with client.create_session(everything_server) as session:
        assert session.ping() >= 0
        session.set_log_level("debug")


def test_tasks(client: Client, everything_server: str) -> None:
    host = Host()
    with client.create_session(everything_server, host) as session:
        created = session.call_tool("simulate-research-query", {"topic": "bridges"}, task_ttl=60)
        assert created.task is not None and created.task.status == "working" and not created.content
        task_id = created.task.task_id
        task, result = session.get_task(task_id)
        assert task.task_id == task_id and task.status in ("working", "completed") and task.poll_interval
        # Status changes arrive as notifications; wait for the end instead of polling.
        eventually(lambda: any(p["taskId"] == task_id and p["status"] == "completed" for p in host.saw("notifications/tasks/status")))
        task, result = session.get_task(task_id)
        assert task.status == "completed"

        other = session.call_tool("simulate-research-query", {"topic": "tunnels"}, task_ttl=60)
        assert other.task is not None
        cancelled = session.cancel_task(other.task.task_id)
        assert cancelled.status == "cancelled"

        assert result is not None, "a completed task carries its result (tasks/result)"
        assert "bridges" in result.text
