"""Integration tests: upstream OAuth through the real bridge.

An OAuth-protected MCP server (internal/testauth/cmd/oauthpeer: testauth's authorization server and Go SDK
servers behind its resource guard, on loopback) is configured with ``auth: {type: oauth}``. CreateSession
waits for a person; the authorization request reaches the handler's ``handle_authorization``, which plays
the browser -- it fetches the authorization URL without following the redirect (the authorization server
approves at once) and answers with the ``Location`` -- and the session becomes ready.

The helper is built with ``go build`` (or taken from $MCPBRIDGE_OAUTHPEER); without go the tests are
skipped, or fail when MCPBRIDGE_REQUIRE_PEERS=1.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import shutil
import subprocess
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from mcp_bridge import AsyncClient, AuthorizationRequest, BridgeError, Client, Handler, McpError

from .conftest import REPO, Bridge, bridge_binary, missing_peer, running_bridge


def oauthpeer_binary(tmp: Path) -> Path | None:
    env = os.environ.get("MCPBRIDGE_OAUTHPEER")
    if env:
        return Path(env)
    go = shutil.which("go") or next((g for g in ("/usr/local/go/bin/go", "/usr/lib/go/bin/go") if Path(g).is_file()), None)
    if go is None:
        return None
    out = tmp / "oauthpeer"
    subprocess.run([go, "build", "-o", str(out), "./internal/testauth/cmd/oauthpeer"], cwd=REPO, check=True)
    return out


@pytest.fixture(scope="module")
def oauth_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    binary = oauthpeer_binary(tmp_path_factory.mktemp("oauthpeer"))
    if binary is None:
        missing_peer("go is not on PATH, so the OAuth test server internal/testauth/cmd/oauthpeer cannot be built (or set MCPBRIDGE_OAUTHPEER)")
    assert binary is not None
    proc = subprocess.Popen([str(binary), "-names", "one,two,three"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("oauthpeer exited before printing its URLs")
        yield json.loads(line)["servers"]
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture(scope="module")
def oauth_bridge(tmp_path_factory: pytest.TempPathFactory, oauth_servers: dict[str, str]) -> Iterator[Bridge]:
    servers = {
        f"secured-{name}": {"url": url, "auth": {"type": "oauth"}, "description": f"OAuth-protected server {name}"}
        for name, url in oauth_servers.items()
    }
    config = {"mcpServers": servers, "oauth": {"authorizationTimeout": "1m"}}
    with running_bridge(bridge_binary(), config, tmp_path_factory.mktemp("oauth-bridge")) as b:
        yield b


def open_without_redirect(url: str) -> str:
    """Play the person's browser: GET the authorization URL and return where it redirects."""
    u = urllib.parse.urlsplit(url)
    assert u.scheme == "http" and u.hostname in ("127.0.0.1", "localhost"), url
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        conn.request("GET", f"{u.path}?{u.query}")
        resp = conn.getresponse()
        loc = resp.getheader("Location") or ""
        assert resp.status == 302 and loc, f"authorization endpoint: {resp.status}, Location {loc!r}"
        return loc
    finally:
        conn.close()


class Browser(Handler):
    def __init__(self) -> None:
        self.seen: list[AuthorizationRequest] = []

    def handle_authorization(self, request: AuthorizationRequest) -> str:
        self.seen.append(request)
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(request.authorization_url).query)
        assert q["code_challenge_method"] == ["S256"] and q.get("resource") and q.get("state"), request.authorization_url
        loc = open_without_redirect(request.authorization_url)
        assert loc.startswith(request.redirect_url), (loc, request.redirect_url)
        return loc


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_create_session_authorizes_through_the_handler(oauth_bridge: Bridge) -> None:
    browser = Browser()
    with Client(oauth_bridge.grpc, timeout=60) as client:
        session = client.create_session("secured-one", browser)
        assert session.info.state == "ready"
        assert [r.server_name for r in browser.seen] == ["secured-one"]
        assert text_of(session.call_tool("whoami")) == "this is one"
        # The grant is kept for the principal: the next session asks nobody.
        again = client.create_session("secured-one", browser)
        assert text_of(again.call_tool("whoami")) == "this is one"
        assert len(browser.seen) == 1
        again.close()
        session.close()


def test_async_create_session_authorizes_through_the_handler(oauth_bridge: Bridge) -> None:
    class AsyncBrowser(Browser):
        async def handle_authorization(self, request: AuthorizationRequest) -> str:  # type: ignore[override]
            return await asyncio.to_thread(Browser.handle_authorization, self, request)

    async def main() -> None:
        browser = AsyncBrowser()
        async with AsyncClient(oauth_bridge.grpc, timeout=60) as client:
            session = await client.create_session("secured-two", browser)
            assert session.info.state == "ready"
            assert [r.server_name for r in browser.seen] == ["secured-two"]
            assert text_of(await session.call_tool("whoami")) == "this is two"
            await session.close()

    asyncio.run(asyncio.wait_for(main(), 90))


def test_a_refused_authorization_fails_create_session(oauth_bridge: Bridge) -> None:
    class Refuser(Handler):
        def handle_authorization(self, request: AuthorizationRequest) -> str:
            raise McpError(-1, "the user closed the browser")

    with Client(oauth_bridge.grpc, timeout=60) as client:
        with pytest.raises(BridgeError) as e:
            client.create_session("secured-three", Refuser())
        assert e.value.code != grpc.StatusCode.DEADLINE_EXCEEDED
