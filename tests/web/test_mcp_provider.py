"""The mcp provider through the official SDK client, against a real MCP search server started here:
over stdio (a subprocess) and over Streamable HTTP (uvicorn on 127.0.0.1)."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sourcewise import ConfigError, NoProviderAvailable, ParseError, load_settings
from sourcewise.config import Settings
from sourcewise.net.mcp import server_log
from sourcewise.registry import Registry
from sourcewise.sources.mcp.read import fill_arguments
from sourcewise.web.engine import Engine
from sourcewise.web.providers import mcp_tool

from clirun import run_cli
from doorkit import uvicorn_thread

SERVER = Path(__file__).parent.parent / "mcp_search_server.py"


def stdio_settings(tmp_path: Path, **extra: Any) -> Settings:
    options: dict[str, Any] = {
        "providers": ["mcp"],
        "state_dir": tmp_path / "state",
        "timeout": 20.0,
    }
    mcp = {
        "command": [sys.executable, str(SERVER)],
        "tool": "search",
        "arguments": {"query": "{query}", "count": "{max_results}"},
        **extra.pop("mcp", {}),
    }
    return load_settings(**{**options, **extra}, provider_options={"mcp": mcp})


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    from mcp_search_server import app

    with uvicorn_thread(app.streamable_http_app()) as base:
        yield f"{base}/mcp"


async def _search(settings: Settings, query: str, **kw: Any) -> Any:
    """One search on an engine closed after it (it keeps its MCP server until then)."""
    engine = Engine(settings)
    try:
        return await engine.asearch(query, **kw)
    finally:
        await engine.aclose()


async def test_stdio_server_search_tool_gives_rated_results(tmp_path: Path) -> None:
    response = await _search(stdio_settings(tmp_path), "React Server Components", max_results=2)
    assert response.provider == "mcp"
    assert len(response.results) == 2
    top = response.results[0]
    assert top.url == "https://react.dev/reference/rsc/server-components"
    assert top.title == "Server Components - React (React Server Components)"
    assert top.tier == 1
    assert (tmp_path / "state" / "mcp-server.log").exists()  # the server's stderr, not our terminal


async def test_one_stdio_server_per_engine_however_many_searches(tmp_path: Path) -> None:
    """The engine keeps the server it started: three searches, one start; closing it stops it."""
    engine = Engine(stdio_settings(tmp_path))
    try:
        for query in ("React Server Components", "RSC RFC", "server components"):
            assert (await engine.asearch(query, max_results=2)).provider == "mcp"
    finally:
        await engine.aclose()
    log = (tmp_path / "state" / "mcp-server.log").read_text("utf-8")
    assert log.count("search server started") == 1, log


async def test_http_server_with_text_results(tmp_path: Path, http_url: str) -> None:
    s = stdio_settings(
        tmp_path, mcp={"command": [], "url": http_url, "tool": "text_search", "arguments": {"q": "{query}"}}
    )
    response = await _search(s, "React Server Components")
    assert response.provider == "mcp"
    assert {r.url for r in response.results} == {
        "https://react.dev/reference/rsc/server-components",
        "https://github.com/reactjs/rfcs/blob/main/text/0188-server-components.md",
        "https://dev.to/someone/understanding-rsc",
    }


async def test_http_server_with_json_in_text(tmp_path: Path, http_url: str) -> None:
    s = stdio_settings(
        tmp_path,
        mcp={"command": [], "url": http_url, "tool": "json_text_search", "arguments": {"q": "{query}"}},
    )
    response = await _search(s, "React Server Components")
    assert len(response.results) == 3


async def test_a_gemini_prose_answer_gives_rated_results_and_the_answer(
    tmp_path: Path, http_url: str
) -> None:
    """Issue 24: seed 000's first-priority call (Gemini through an agent over MCP) answers in prose;
    its links become rated results and its words the answer."""
    s = stdio_settings(
        tmp_path,
        mcp={"command": [], "url": http_url, "tool": "gemini_prose", "arguments": {"q": "{query}"}},
        gemini_redirect_hosts=[],  # no resolving: no test reaches the internet
    )
    response = await _search(s, "React Server Components")
    assert response.provider == "mcp"
    by_url = {r.url: r for r in response.results}
    assert set(by_url) == {
        "https://react.dev/reference/rsc/server-components",
        "https://github.com/reactjs/rfcs/blob/main/text/0188-server-components.md",
        "https://dev.to/someone/understanding-rsc",
        "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQtest",
    }
    react = by_url["https://react.dev/reference/rsc/server-components"]
    assert (react.tier, react.title) == (1, "Server Components - React")
    assert (
        react.snippet == "React Server Components render on the server and send no JavaScript to the client."
    )
    assert by_url["https://dev.to/someone/understanding-rsc"].tier == 3
    # the grounding link is not resolved: rated as a link, never official
    assert by_url["https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQtest"].tier == 4
    assert response.results[0].url == "https://react.dev/reference/rsc/server-components"
    assert response.answer is not None
    assert response.answer.startswith("React Server Components render on the server")
    assert "[1] Server Components - React" in response.answer  # its [n] keep their sources list


@pytest.mark.parametrize(
    ("tool", "why"), [("failing", "failed"), ("prose", "no list of results"), ("missing_tool", "")]
)
async def test_tool_failures_move_the_chain_on(tmp_path: Path, http_url: str, tool: str, why: str) -> None:
    s = stdio_settings(
        tmp_path, mcp={"command": [], "url": http_url, "tool": tool, "arguments": {"q": "{query}"}}
    )
    with pytest.raises(NoProviderAvailable) as info:
        await _search(s, "React Server Components")
    name, reason = info.value.attempts[0]
    assert name == "mcp"
    assert why in reason


async def test_unreachable_server_is_transient(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    s = stdio_settings(tmp_path, mcp={"command": [], "url": f"http://127.0.0.1:{port}/mcp"}, timeout=3.0)
    with pytest.raises(NoProviderAvailable, match="could not reach the MCP server"):
        await _search(s, "React Server Components")


def test_configuration_and_arguments(tmp_path: Path) -> None:
    ready, detail = mcp_tool.configured(mcp_tool.McpOptions())
    assert ready is False
    assert "SOURCEWISE_MCP_COMMAND" in detail
    assert "[providers.mcp]" in detail
    assert mcp_tool.configured(Registry.load(stdio_settings(tmp_path)).options_for("mcp"))[0] is True
    options = mcp_tool.McpOptions(command="npx -y '@brave/brave-search-mcp-server'")
    assert options.command == ["npx", "-y", "@brave/brave-search-mcp-server"]
    with pytest.raises(ConfigError, match=r"provider 'mcp' \(\[providers.mcp\]\): command"):
        load_settings(provider_options={"mcp": {"command": "npx 'unclosed"}})
    args = fill_arguments(
        {"query": "{query}", "count": "{max_results}", "note": "n={max_results}"},
        {"query": "rsc {x}", "max_results": 7},
    )
    assert args == {"query": "rsc {x}", "count": 7, "note": "n=7"}


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["results", "items", "web", "url", "title", "link", "data", "result"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=15,
)


@settings(deadline=None)
@given(_json, st.lists(st.text(max_size=60) | st.builds(json.dumps, _json), max_size=3))
def test_tool_output_parser_gives_results_or_a_parse_error(structured: Any, texts: list[str]) -> None:
    try:
        out = mcp_tool.parse_tool_output(structured, texts)
    except ParseError as exc:
        provider = exc.provider
        assert provider == "mcp"
        return
    assert all(r.url and r.provider == "mcp" for r in out.results)


def test_an_unusable_state_dir_drops_the_server_log_with_one_warning(tmp_path: Path) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("x", "utf-8")
    env: dict[str, str | None] = {"XDG_CACHE_HOME": None, "XDG_CONFIG_HOME": None, "XDG_STATE_HOME": None}
    env.update(
        HOME=str(home),
        SOURCEWISE_MCP_COMMAND=f"{sys.executable} {SERVER}",
        SOURCEWISE_MCP_ARGUMENTS='{"query": "{query}", "count": "{max_results}"}',
        SOURCEWISE_TIMEOUT="20",
    )
    out = run_cli(["search", "react server components", "-p", "mcp", "--json"], env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["provider"] == "mcp"
    assert "https://react.dev/reference/rsc/server-components" in out.stdout
    assert out.stderr.count("MCP server log") == 1, out.stderr


def test_the_server_log_falls_back_once_per_path(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", "utf-8")
    s = stdio_settings(tmp_path, state_dir=blocker / "state")
    for _ in range(3):
        with server_log(s) as sink:
            sink.write("server chatter\n")  # goes nowhere, and does not fail
    assert caplog.text.count("cannot be written") == 1
    with server_log(stdio_settings(tmp_path)) as log_file:
        log_file.write("kept\n")
    assert (tmp_path / "state" / "mcp-server.log").read_text("utf-8") == "kept\n"
