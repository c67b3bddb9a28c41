"""Properties of the doors: any tool arguments give a result or a tool error (the server goes on);
the rate limiter's buckets; the text budget of a search."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.server.mcpserver import MCPServer

from sourcewise import load_settings
from sourcewise.doors.guards import RateLimiter
from sourcewise.doors.mcp import build_server
from sourcewise.doors.mcp_text import SEARCH_BUDGET, render_search
from sourcewise.doors.service import Service
from sourcewise.models import SearchResponse, SearchResult

from doorkit import provider_env
from servers import local_server

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
KEYS = ("query", "tier", "max_results", "strategy", "url", "prompt", "start", "max_chars", "question")
calls = st.tuples(
    st.sampled_from(["web_search", "web_fetch", "route"]),
    st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), json_values, max_size=4),
)


@pytest.fixture(scope="module")
def door(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MCPServer[Service]]:
    """One MCP door for every example: building one is half a second of tool schemas, and one
    that answered every earlier example must answer the next too (the server goes on)."""
    with local_server() as server:
        tmp = tmp_path_factory.mktemp("door")
        provider_env(server, tmp)
        # allow_private stays off: a generated URL may name this machine, never another.
        conf = load_settings(
            providers=["searxng"],
            provider_options={"searxng": {"url": f"{server.url}/sx"}},
            state_dir=tmp / "s",
            timeout=2,
            fetch_retries=0,
            allow_hosts=[],
        )
        yield build_server(conf)


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=st.lists(calls, min_size=1, max_size=6))
def test_any_arguments_give_a_result_or_a_tool_error(
    batch: list[tuple[str, dict[str, Any]]], door: MCPServer[Service]
) -> None:
    async def run() -> None:
        async with Client(door) as client:
            for tool, args in batch:
                if tool == "web_fetch" and isinstance(args.get("url"), str):
                    args["url"] = "http://127.0.0.1:9/"  # no lookups of generated host names
                result = await client.call_tool(tool, args)
                if result.is_error:
                    text = result.content[0].text  # type: ignore[union-attr]
                    assert text.startswith(f"Error executing tool {tool}:")
                    assert "internal error" not in text
                else:
                    assert result.structured_content is not None
            assert not (await client.call_tool("route", {"question": "what is new in python"})).is_error

    asyncio.run(run())


def test_rate_limiter_bursts_then_refills() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=60, burst=3, clock=lambda: now[0])
    assert [limiter.allow("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.allow("a") == 1.0  # one token a second
    assert limiter.allow("b") == 0.0  # per client
    now[0] = 1.0
    assert limiter.allow("a") == 0.0
    assert RateLimiter(rate=0, burst=1).allow("a") == 0.0  # 0: no limit


@given(snippet=st.text(min_size=150, max_size=200), n=st.integers(1, 50))
def test_search_text_stays_within_its_budget(snippet: str, n: int) -> None:
    results = tuple(
        SearchResult(
            title=f"Title {i}",
            url=f"https://example.com/{i}",
            canonical_url=f"https://example.com/{i}",
            snippet=snippet,
            tier=3,
            reliability_score=60,
            reason="community",
        )
        for i in range(n)
    )
    text = render_search(SearchResponse(query="budget", results=results, provider="searxng"))
    assert len(text) <= SEARCH_BUDGET + 200
    assert text.count("https://example.com/") <= n
