"""The doors' knobs from issue 26: ``effort`` on ask (library, MCP, HTTP), ``detail`` on the MCP
search tools, the MCP server's allowed hosts (DNS-rebinding protection) and its refusals as
JSON-RPC errors. Real servers on 127.0.0.1 and a knowledge base each test writes."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from sourcewise import load_settings
from sourcewise.config import Settings
from sourcewise.doors.http import create_app
from sourcewise.doors.mcp import build_server, create_http_app, transport_security
from sourcewise.doors.service import DoorSettings
from sourcewise.effort import EFFORTS
from sourcewise.errors import InvalidOption
from sourcewise.loops.ask import aask
from sourcewise.sources.kb.source import KnowledgeBase

from doorkit import JSON, uvicorn_thread
from servers import LocalServer, Reply

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "content-type": JSON}


@pytest.fixture
def kb_settings(tmp_path: Path) -> Settings:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(30):
        (docs / f"window{i}.md").write_text(f"# Deploy window {i}\n\nThe deploy window {i} opens at noon.\n")
    with KnowledgeBase(tmp_path / "kb.sqlite3", semantic=False) as kb:
        assert len(kb.index([docs]).added) == 30
    return load_settings(
        state_dir=tmp_path, providers=["searxng"], sources={"kb": {"semantic": False}}, source_timeout=20
    )


async def test_effort_sets_hits_cycles_and_the_time_budget(kb_settings: Settings) -> None:
    quick = await aask(
        "When does the deploy window open?", sources=["kb"], effort="quick", settings=kb_settings
    )
    full = await aask("When does the deploy window open?", sources=["kb"], settings=kb_settings)
    thorough = await aask(
        "When does the deploy window open?", sources=["kb"], effort="thorough", settings=kb_settings
    )
    assert quick.reports[0].hits == EFFORTS["quick"].limit == 5
    assert full.reports[0].hits == 10
    assert thorough.reports[0].hits == 20
    assert quick.cycles == ()  # one pass only
    assert EFFORTS["quick"].deadline(20) == 5
    assert EFFORTS["balanced"].deadline(20) == 20
    assert EFFORTS["thorough"].deadline(20) == 30


def _page(i: int) -> str:
    body = "".join(f"<p>Filler paragraph {k} about other things entirely.</p>" for k in range(20))
    fact = f"<p>The blue-green cutover of release train {i} happens at 14:00 UTC on Tuesdays.</p>"
    return f"<html><head><title>Train {i}</title></head><body><article>{body}{fact}</article></body></html>"


async def test_effort_sets_the_fetch_depth_how_many_result_pages_ask_reads(
    server: LocalServer, tmp_path: Path
) -> None:
    """The web's results come as snippets; ``balanced`` reads the first 2 pages in full, ``thorough``
    5, ``quick`` none: a read page's text is the passages that answer the question."""
    results = [
        {
            "url": f"{server.url}/train{i}",
            "title": f"Release train {i}",
            "content": "Release trains run weekly.",
        }
        for i in range(6)
    ]
    body = {"query": "x", "results": results, "unresponsive_engines": []}
    server.route("/sx/search", Reply(body=json.dumps(body), content_type=JSON))
    for i in range(6):
        server.route(f"/train{i}", Reply(200, _page(i)))
    conf = load_settings(
        state_dir=tmp_path / "state", providers=["searxng"], allow_private=True, source_timeout=20,
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
    )  # fmt: skip
    question = "When does the blue-green cutover of the release train happen?"
    read = {}
    for effort in ("quick", "balanced", "thorough"):
        answer = await aask(question, sources=["web"], effort=effort, settings=conf)  # type: ignore[arg-type]
        web = next(r for r in answer.reports if r.source == "web")
        read[effort] = web.pages_read
        texts = " ".join(h.hit.text or "" for h in answer.hits)
        assert ("14:00 UTC" in texts) == (effort != "quick"), effort
    assert read == {"quick": 0, "balanced": EFFORTS["balanced"].pages, "thorough": EFFORTS["thorough"].pages}
    assert [server.hits(f"/train{i}") for i in range(6)] == [1, 1, 1, 1, 1, 0]  # the page cache


@settings(max_examples=30, deadline=None)
@given(level=st.text(max_size=30).filter(lambda t: t not in EFFORTS))
def test_an_unknown_effort_is_a_typed_error(level: str) -> None:
    import asyncio

    with pytest.raises(InvalidOption, match="effort must be one of quick, balanced, thorough"):
        asyncio.run(aask("deploy window", sources=["kb"], effort=level, settings=load_settings()))  # type: ignore[arg-type]


@asynccontextmanager
async def mcp_client(conf: Settings) -> AsyncIterator[Client]:
    async with Client(build_server(conf)) as client:
        yield client


async def test_mcp_ask_takes_effort_and_search_sources_takes_detail(kb_settings: Settings) -> None:
    async with mcp_client(kb_settings) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["ask"].input_schema["properties"]["effort"]["enum"] == ["quick", "balanced", "thorough"]
        for name in ("web_search", "search_sources"):
            assert tools[name].input_schema["properties"]["detail"]["enum"] == ["compact", "full"]
            annotations = tools[name].annotations
            assert annotations is not None
            assert annotations.read_only_hint
            assert annotations.open_world_hint
        quick = await client.call_tool(
            "ask", {"question": "When does the deploy window open?", "effort": "quick"}
        )
        assert not quick.is_error
        assert quick.structured_content is not None
        assert quick.structured_content["reports"][0]["hits"] == 5
        compact = await client.call_tool("search_sources", {"query": "deploy window", "detail": "compact"})
        full = await client.call_tool("search_sources", {"query": "deploy window", "detail": "full"})
        compact_text = compact.content[0].text  # type: ignore[union-attr]
        full_text = full.content[0].text  # type: ignore[union-attr]
        assert compact_text.splitlines()[0].startswith("kb: Deploy window")
        assert len(compact_text) < len(full_text)
        bad = await client.call_tool("ask", {"question": "deploy window", "effort": "max"})
        assert bad.is_error


def test_http_ask_takes_effort(kb_settings: Settings) -> None:
    with uvicorn_thread(create_app(kb_settings, DoorSettings())) as url:
        body = {"question": "When does the deploy window open?", "sources": ["kb"], "effort": "quick"}
        answer = httpx.post(f"{url}/ask", json=body, timeout=60)
        assert answer.status_code == 200, answer.text
        assert answer.json()["reports"][0]["hits"] == 5
        wrong = httpx.post(f"{url}/ask", json={**body, "effort": "max"}, timeout=60)
        assert wrong.status_code == 422
        assert wrong.json()["error"]["message"].startswith("effort:")


def test_transport_security_hosts() -> None:
    on = transport_security(["search.example.org", "10.0.0.5:8765"])
    assert on.enable_dns_rebinding_protection
    assert {"127.0.0.1:*", "search.example.org", "search.example.org:*", "10.0.0.5:8765"} <= set(
        on.allowed_hosts
    )
    assert "https://search.example.org" in on.allowed_origins
    assert not transport_security(["*"]).enable_dns_rebinding_protection


def test_the_mcp_door_checks_the_host_and_answers_refusals_in_json_rpc(tmp_path: Path) -> None:
    conf = load_settings(state_dir=tmp_path, providers=["searxng"])
    doors = DoorSettings(allowed_hosts=["search.example.org"], rate_limit=60, rate_burst=2)
    with uvicorn_thread(create_http_app(conf, doors)) as url:
        evil = httpx.post(f"{url}/mcp", json=INIT, headers={**MCP_HEADERS, "host": "evil.example"})
        assert evil.status_code == 421  # a DNS-rebinding page cannot reach the server
        good = httpx.post(f"{url}/mcp", json=INIT, headers={**MCP_HEADERS, "host": "search.example.org"})
        assert good.status_code == 200, good.text
        limited = httpx.post(f"{url}/mcp", json=INIT, headers=MCP_HEADERS)
        assert limited.status_code == 429
        body = limited.json()
        assert body["jsonrpc"] == "2.0"
        assert body["error"]["code"] == -32000
        assert body["error"]["data"]["type"] == "RateLimited"
        assert body["error"]["message"].startswith("RateLimited: more than 60 requests a minute")
