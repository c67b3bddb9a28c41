"""The MCP server through the official SDK's own client: in process, over stdio and over
Streamable HTTP (servers on 127.0.0.1); and through the MCP Inspector CLI (over Streamable HTTP)
when it is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from sourcewise import load_settings
from sourcewise.doors.mcp import build_server, create_http_app
from sourcewise.doors.service import DoorSettings

from doorkit import provider_env, uvicorn_thread
from servers import LocalServer, Reply

ARTICLE = "<html><head><title>Guide</title></head><body><article>{}</article></body></html>".format(
    "".join(f"<p>Paragraph {i} explains server components and caching in detail.</p>" for i in range(300))
)


def text_of(result: CallToolResult) -> str:
    assert result.content, result
    block = result.content[0]
    assert block.type == "text"
    return block.text


@asynccontextmanager
async def connect(server: LocalServer, tmp_path: Path) -> AsyncIterator[Client]:
    """An in-process client. (Not a fixture: the SDK's task group must end in the task that
    started it, and pytest-asyncio tears fixtures down in another.)"""
    provider_env(server, tmp_path)  # routes the SearXNG answer
    server.route("/article", Reply(200, ARTICLE))
    settings = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        state_dir=tmp_path / "s",
        allow_private=True,
    )
    async with Client(build_server(settings)) as c:
        yield c


async def test_tools_are_listed_with_schemas_and_descriptions(server: LocalServer, tmp_path: Path) -> None:
    async with connect(server, tmp_path) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == {"web_search", "web_fetch", "route", "search_sources", "ask", "retrieve"}
        for tool in tools.values():
            assert tool.description
            assert "\n" not in tool.description
            assert tool.output_schema is not None
            assert tool.annotations is not None
            assert tool.annotations.read_only_hint
        search = tools["web_search"].input_schema
        assert search["required"] == ["query"]
        assert search["properties"]["strategy"]["enum"] == [
            "default",
            "official",
            "comprehensive",
            "progressive",
        ]
        assert "tier" in tools["web_search"].output_schema["$defs"]["SearchResult"]["properties"]
        assert set(tools["web_fetch"].input_schema["properties"]) == {"url", "prompt", "start", "max_chars"}


async def test_web_search_gives_structured_and_text_results(server: LocalServer, tmp_path: Path) -> None:
    async with connect(server, tmp_path) as client:
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))

        result = await client.call_tool(
            "web_search",
            {"query": "react server components", "max_results": 2},
            progress_callback=on_progress,
        )
        assert not result.is_error
        data = result.structured_content
        assert data is not None
        assert data["provider"] == "searxng"
        assert len(data["results"]) == 2
        text = text_of(result)
        assert text.startswith("2 results for 'react server components'")
        assert data["results"][0]["url"] in text
        assert "tier 1" in text
        assert progress[-1][0] == progress[-1][1] == 1


async def test_web_fetch_budget_and_handle_for_the_next_slice(server: LocalServer, tmp_path: Path) -> None:
    async with connect(server, tmp_path) as client:
        url = f"{server.url}/article"
        first = await client.call_tool("web_fetch", {"url": url, "max_chars": 1000, "prompt": "caching"})
        assert not first.is_error, text_of(first)
        page = first.structured_content
        assert page is not None
        assert len(page["content"]) == 1000
        assert page["next_start"] == 1000
        text = text_of(first)
        assert len(text) < 3000  # the content budget plus a header and the passages
        assert f"call web_fetch with url='{url}' and start=1000" in text
        second = await client.call_tool("web_fetch", {"url": url, "start": 1000, "max_chars": 1000})
        assert second.structured_content is not None
        assert second.structured_content["from_cache"] is True
        assert "from cache" in text_of(second)
        assert server.hits("/article") == 1


@pytest.mark.parametrize(
    ("tool", "args", "words"),
    [
        ("web_search", {"query": "ab"}, "InvalidQuery: Search query must be at least 3 characters"),
        ("web_search", {"query": "react", "tier": 7}, "tier"),
        ("web_search", {"query": "react", "tier": True}, "tier"),
        ("web_search", {"query": "react", "max_results": "5"}, "max_results"),
        ("web_fetch", {"url": "http://127.0.0.1/x", "start": False}, "start"),
        ("web_search", {"query": "react", "strategy": "fast"}, "strategy"),
        ("web_search", {}, "query"),
        ("web_fetch", {"url": "not a url"}, "InvalidURL"),
        ("web_fetch", {"url": "http://127.0.0.1/x", "start": -1}, "start"),
        ("web_fetch", {"url": "http://127.0.0.1/x", "max_chars": 10**9}, "max_chars"),
        ("route", {"question": "?"}, "InvalidQuery"),
        ("no_such_tool", {}, "no_such_tool"),
    ],
)
async def test_bad_arguments_are_tool_errors(
    server: LocalServer, tmp_path: Path, tool: str, args: dict[str, Any], words: str
) -> None:
    async with connect(server, tmp_path) as client:
        result = await client.call_tool(tool, args)
        assert result.is_error
        assert words in text_of(result)
        assert (await client.call_tool("route", {"question": "what is new in python"})).is_error is False


async def test_provider_failure_is_a_tool_error_with_the_reason(server: LocalServer, tmp_path: Path) -> None:
    async with connect(server, tmp_path) as client:
        server.route("/sx/search", Reply(500, "boom"))
        result = await client.call_tool("web_search", {"query": "react server components"})
        assert result.is_error
        assert text_of(result).startswith("Error executing tool web_search: NoProviderAvailable:")
        assert "searxng" in text_of(result)


async def test_fetch_guard_holds_through_mcp(server: LocalServer, tmp_path: Path) -> None:
    server.route("/article", Reply(200, ARTICLE))
    settings = load_settings(providers=["searxng"], state_dir=tmp_path / "s")  # allow_private off
    async with Client(build_server(settings)) as c:
        result = await c.call_tool("web_fetch", {"url": f"{server.url}/article"})
    assert result.is_error
    assert "AddressNotAllowed" in text_of(result)
    # the fix a remote caller is told is the operator's setting, not an argument it cannot pass
    assert "allow_private=True" not in text_of(result)
    assert "the server's operator can, with allow_private or allow_hosts" in text_of(result)
    assert server.hits("/article") == 0


def _args(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "sourcewise", "mcp"], env=env)


async def test_stdio_with_the_sdk_client(server: LocalServer, tmp_path: Path) -> None:
    env = provider_env(server, tmp_path / "state")
    async with Client(_args(env)) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        result = await c.call_tool("web_search", {"query": "react server components"})
        bad = await c.call_tool("web_search", {"query": ""})
        after = await c.call_tool("route", {"question": "what is the latest react version"})
    assert names == {"web_search", "web_fetch", "route", "search_sources", "ask", "retrieve"}
    assert not result.is_error
    assert result.structured_content is not None
    assert result.structured_content["results"][0]["tier"] == 1
    assert bad.is_error
    assert not after.is_error
    assert server.hits("/sx/search") == 1


@contextmanager
def http_door(server: LocalServer, tmp_path: Path) -> Iterator[str]:
    """The Streamable HTTP door (``sourcewise mcp --http`` serves this app) in a uvicorn thread of
    this process, SearXNG on ``server`` its one provider; its /mcp URL. Starting the door as a
    process is tested where the process is what is tested (test_mcp_federation, over stdio here)."""
    provider_env(server, tmp_path)  # routes the SearXNG answer
    settings = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        state_dir=tmp_path / "s",
    )
    with uvicorn_thread(create_http_app(settings)) as base:
        yield f"{base}/mcp"


async def test_streamable_http_with_the_sdk_client(server: LocalServer, tmp_path: Path) -> None:
    with http_door(server, tmp_path) as url:
        async with Client(url) as c:
            seen: list[float] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                seen.append(done)

            result = await c.call_tool(
                "web_search", {"query": "react server components"}, progress_callback=on_progress
            )
            bad = await c.call_tool("web_fetch", {"url": "file:///etc/passwd"})
    assert not result.is_error
    assert result.structured_content is not None
    assert len(result.structured_content["results"]) == 3
    assert seen == [0, 1]
    assert bad.is_error
    assert "InvalidURL" in text_of(bad)


async def test_streamable_http_requires_the_key_when_set(server: LocalServer, tmp_path: Path) -> None:
    provider_env(server, tmp_path)
    settings = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        state_dir=tmp_path / "s",
    )
    with uvicorn_thread(create_http_app(settings, DoorSettings(api_key="k-123"))) as base:
        with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's own error for a 401 varies by transport
            async with Client(f"{base}/mcp") as c:
                await c.list_tools()
        keyed = httpx2.AsyncClient(headers={"Authorization": "Bearer k-123"})
        async with keyed, Client(streamable_http_client(f"{base}/mcp", http_client=keyed)) as c:
            result = await c.call_tool("web_search", {"query": "react server components"})
    assert not result.is_error


def _inspector() -> str:
    found = os.environ.get("SOURCEWISE_MCP_INSPECTOR") or shutil.which("mcp-inspector")
    if not found or shutil.which("node") is None:
        pytest.skip("the MCP Inspector CLI is not installed (npm install -g @modelcontextprotocol/inspector)")
    return found


def test_mcp_inspector_cli_lists_and_calls(server: LocalServer, tmp_path: Path) -> None:
    inspector = _inspector()
    with http_door(server, tmp_path) as url:
        # Its 15 s connect timeout is less than a loaded machine may take to answer (seen at load 12).
        command = [inspector, "--cli", "--connect-timeout", "120000", "--transport", "http", url]

        def run(*extra: str, tool_error: bool = False) -> dict[str, Any]:
            done = subprocess.run(
                [*command, *extra], capture_output=True, text=True, timeout=120, check=False
            )
            # The Inspector exits non-zero (5) when a tool answers with isError.
            assert (done.returncode != 0) == tool_error, done.stderr
            answer: dict[str, Any] = json.loads(done.stdout)
            return answer

        listed = run("--method", "tools/list")
        assert {t["name"] for t in listed["tools"]} == {
            "web_search",
            "web_fetch",
            "route",
            "search_sources",
            "ask",
            "retrieve",
        }
        called = run(
            "--method",
            "tools/call",
            "--tool-name",
            "web_search",
            "--tool-arg",
            "query=react server components",
        )
        assert called["isError"] is False
        assert called["structuredContent"]["provider"] == "searxng"
        failed = run(
            "--method", "tools/call", "--tool-name", "route", "--tool-arg", "question=?", tool_error=True
        )
    assert failed["isError"] is True
    assert "InvalidQuery" in failed["content"][0]["text"]
    assert server.hits("/sx/search") == 1


async def test_http_transport_host_check(server: LocalServer, tmp_path: Path) -> None:
    """DNS rebinding: a request naming another Host is refused by the SDK's transport security."""
    provider_env(server, tmp_path)
    settings = load_settings(providers=["searxng"], state_dir=tmp_path / "s")
    with uvicorn_thread(create_http_app(settings)) as base:
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                f"{base}/mcp",
                headers={"Host": "evil.example", "Accept": "application/json, text/event-stream"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )
    assert response.status_code in (400, 403, 421)
