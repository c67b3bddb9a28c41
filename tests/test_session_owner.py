"""One ``Session`` owns every long-lived resource (issue 19): a provider suspended through one
request is honoured by every door and every worker; a knowledge base is opened once per worker,
not once per request; nothing of the package keeps a client, a connection, a fetcher or settings
in a module global."""

from __future__ import annotations

import asyncio
import gc
import os
import sqlite3
import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

import sourcewise
from sourcewise import KnowledgeBase, load_settings
from sourcewise.config import Settings
from sourcewise.doors.http import create_app
from sourcewise.doors.mcp import create_http_app as create_mcp_app
from sourcewise.doors.service import DoorSettings

from doorkit import free_port, spawn, uvicorn_thread
from redisd import redis_server
from servers import LocalServer, Reply

JSON = "application/json"
LIMITED = '{"error": {"code": "RATE_LIMITED", "detail": "too many requests (test)"}}'
DOC = """# Deploying

The deployment procedure starts with a release branch. Tag the release, then run the deploy job.

# Rollback

To roll back a deployment, redeploy the previous tag.
"""


def _env(server: LocalServer, state: Path, redis_url: str) -> dict[str, str]:
    """A server process whose only provider is Brave at ``server`` (it answers 429), on Redis."""
    server.route("/brave", Reply(429, LIMITED, content_type=JSON))
    env = dict(os.environ)
    env.update(
        BRAVE_API_KEY="test-key",
        SOURCEWISE_BRAVE_URL=f"{server.url}/brave",
        SOURCEWISE_PROVIDERS="brave",
        SOURCEWISE_STATE_DIR=str(state),
        SOURCEWISE_REDIS_URL=redis_url,
        SOURCEWISE_RATE_LIMIT="0",
        SOURCEWISE_TIMEOUT="5",
    )
    return env


async def _fresh(method: str, url: str, **kwargs: Any) -> httpx.Response:
    """One request on a new connection, so that any worker may take it."""
    async with httpx.AsyncClient(timeout=60) as client:
        return await client.request(method, url, **kwargs)


async def _health_by_worker(base: str, within: float = 60.0) -> dict[int, dict[str, Any]]:
    """``/health`` as each worker answers it, until two workers have answered."""
    seen: dict[int, dict[str, Any]] = {}
    end = asyncio.get_running_loop().time() + within
    while len(seen) < 2 and asyncio.get_running_loop().time() < end:
        for answer in await asyncio.gather(*(_fresh("GET", f"{base}/health") for _ in range(20))):
            body = answer.json()
            seen[body["worker"]] = body
        await asyncio.sleep(0.2)
    return seen


def _suspended(text: str) -> bool:
    return "suspended for" in text


async def test_one_suspension_holds_at_every_door_and_worker(
    server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two worker processes of the HTTP door and, on the same Redis, the MCP door: its own Session
    in a uvicorn thread of this process, with the settings the environment gives a process."""
    with redis_server() as redis_url:
        env = _env(server, tmp_path / "state", redis_url)
        for key in ("BRAVE_API_KEY", *(k for k in env if k.startswith("SOURCEWISE_"))):
            monkeypatch.setenv(key, env[key])
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        with (
            spawn(["serve", "--port", str(port), "--workers", "2"], env, f"{base}/health"),
            uvicorn_thread(create_mcp_app(load_settings())) as mcp_base,
        ):
            mcp = f"{mcp_base}/mcp"
            before = await _health_by_worker(base)
            assert len(before) == 2, "only one worker answered"
            assert all(h["store"] == "redis" and h["providers_ready"] == ["brave"] for h in before.values())

            # One request: Brave answers 429 and is suspended, in Redis.
            first = await _fresh("POST", f"{base}/web/search", json={"query": "react server components"})
            assert first.status_code == 503, first.text
            assert _suspended(first.json()["error"]["attempts"][0]["reason"]), first.text
            assert server.hits("/brave") == 1

            # Every worker knows.
            after = await _health_by_worker(base)
            assert len(after) == 2
            assert all(h["providers_suspended"] == ["brave"] for h in after.values()), after

            # Every HTTP door that reaches the web, spread over both workers, honours it.
            searches = await asyncio.gather(
                *(_fresh("POST", f"{base}/web/search", json={"query": "react hooks"}) for _ in range(8))
            )
            assert {s.status_code for s in searches} == {503}
            assert all("suspended" in s.json()["error"]["attempts"][0]["reason"] for s in searches)
            asks = await asyncio.gather(
                *(
                    _fresh(
                        "POST", f"{base}/ask", json={"question": "latest React release?", "sources": ["web"]}
                    )
                    for _ in range(4)
                )
            )
            assert {a.status_code for a in asks} == {503}
            assert all("suspended" in a.json()["error"]["reports"][0]["error"] for a in asks)
            private = await _fresh(
                "POST", f"{base}/sources/search", json={"query": "react hooks", "sources": ["web"]}
            )
            # every provider of the chain suspended: the web source is rate-limited, with when to retry
            assert private.status_code == 429, private.text
            assert "suspended" in private.text
            assert private.json()["error"]["retry_after"] > 0, private.text
            assert all(a.json()["error"]["reports"][0]["status"] == "rate_limited" for a in asks)

            # And the MCP server, another process on the same Redis: each tool that reaches the web.
            async with Client(mcp) as c:
                web = await c.call_tool("web_search", {"query": "react server components"})
                asked = await c.call_tool("ask", {"question": "latest React release?", "sources": ["web"]})
                found = await c.call_tool("search_sources", {"query": "react hooks", "sources": ["web"]})
            for result in (web, asked, found):
                assert result.is_error
                assert result.content
                assert result.content[0].type == "text"
                assert "suspended" in result.content[0].text, result.content[0].text
            assert server.hits("/brave") == 1  # nothing reached the provider again


def _kb_settings(tmp_path: Path) -> Settings:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text(DOC, "utf-8")
    state = tmp_path / "state"
    with KnowledgeBase(state / "kb.sqlite3", semantic=False) as kb:
        kb.index([docs])
    return load_settings(state_dir=state, providers=["searxng"], sources={"notes": {"type": "kb"}})


def test_a_knowledge_base_is_opened_once_per_worker_not_per_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _kb_settings(tmp_path)
    kb_file = str(settings.state_dir / "kb.sqlite3")
    opened: list[str] = []
    real = sqlite3.connect

    def counting(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(str(database))
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", counting)
    with uvicorn_thread(create_app(settings, DoorSettings(rate_limit=0))) as base, httpx.Client() as client:
        answers = [
            client.post(f"{base}/sources/search", json={"query": "rollback deployment", "sources": ["notes"]})
            for _ in range(100)
        ]
    assert all(a.status_code == 200 for a in answers)
    assert all(a.json()[0]["hits"] for a in answers), answers[0].text
    kb_opens = [d for d in opened if d == kb_file]
    # Two sources name this file: `notes`, and `kb`, which the door warms at its start (both are
    # ask's default sources; with the semantic extra the warm-up opens it to see its embeddings).
    # Each opens it once for the worker's life, never per request.
    assert 1 <= len(kb_opens) <= 2, f"the knowledge base was opened {len(kb_opens)} times for 100 requests"


_HELD = (httpx.AsyncClient, httpx.Client, sqlite3.Connection, Settings)


def _held(value: Any) -> bool:
    from sourcewise.net.cache import PageCache
    from sourcewise.net.fetch import Fetcher
    from sourcewise.net.state import ProviderState
    from sourcewise.session import Session
    from sourcewise.web.engine import Engine

    kinds = (*_HELD, Engine, Fetcher, PageCache, ProviderState, Session)
    if isinstance(value, kinds):
        return True
    if isinstance(value, Mapping):
        return any(_held(v) for v in list(value.values())[:1000])
    if isinstance(value, list | tuple | set | frozenset):
        return any(_held(v) for v in list(value)[:1000])
    return False


async def test_no_module_global_holds_a_client_connection_fetcher_or_settings(
    server: LocalServer, tmp_path: Path
) -> None:
    """After a run of every public path (web search, fetch, ask over a knowledge base and the web,
    search_sources, retrieve, rate), no module of the package keeps one in a global."""
    server.route(
        "/sx/search", Reply(200, (Path(__file__).parent / "fixtures" / "searxng_small.json").read_text())
    )
    server.route(
        "/page",
        Reply(200, "<html><body><article><p>" + "Text of the page. " * 40 + "</p></article></body></html>"),
    )
    settings = _kb_settings(tmp_path).model_copy(
        update={"provider_options": {"searxng": {"url": f"{server.url}/sx"}}, "allow_private": True}
    )
    await sourcewise.asearch("react server components", settings=settings)
    await sourcewise.afetch(f"{server.url}/page", settings=settings)
    await sourcewise.aask("How do I roll back a deployment?", sources=["notes", "web"], settings=settings)
    await sourcewise.asearch_sources("rollback", ["notes"], settings=settings)
    await sourcewise.aretrieve("roll back a deployment", sources=["notes"], settings=settings)
    sourcewise.rate_source("https://react.dev/learn", settings=settings)
    sourcewise.route("latest react release", settings=settings)
    sourcewise.plan("who decided the rollback?", settings=settings)
    gc.collect()
    modules = [
        m for name, m in list(sys.modules.items()) if name == "sourcewise" or name.startswith("sourcewise.")
    ]
    assert len(modules) > 30  # the run loaded the package
    found = [
        f"{module.__name__}.{name}"
        for module in modules
        if isinstance(module, types.ModuleType)
        for name, value in list(vars(module).items())
        if not name.startswith("__") and not isinstance(value, type | types.ModuleType) and _held(value)
    ]
    assert found == []
