"""``sourcewise serve --workers 2``: real worker processes share the page cache and provider
suspensions through the SQLite files in state_dir."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx

from sourcewise import load_settings
from sourcewise.net.fetch import Fetcher
from sourcewise.net.state import ProviderState

from doorkit import free_port, provider_env, spawn
from servers import LocalServer, Reply

ARTICLE = "<html><head><title>Shared</title></head><body><article><p>{}</p></article></body></html>".format(
    "Workers share one page cache. " * 200
)


async def _workers_seen(base: str, tries: int = 5) -> set[int]:
    seen: set[int] = set()
    for _ in range(tries):

        async def one() -> int:
            async with httpx.AsyncClient() as fresh:  # a new connection each, so any worker may take it
                worker: int = (await fresh.get(f"{base}/health")).json()["worker"]
                return worker

        seen |= set(await asyncio.gather(*(one() for _ in range(20))))
        if len(seen) >= 2:
            break
    return seen


async def test_two_workers_share_cache_and_suspensions(server: LocalServer, tmp_path: Path) -> None:
    state = tmp_path / "state"
    server.route("/article", Reply(200, ARTICLE))
    env = provider_env(server, state, SOURCEWISE_ALLOW_PRIVATE="true", SOURCEWISE_RATE_LIMIT="0")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with spawn(["serve", "--port", str(port), "--workers", "2"], env, f"{base}/health"):
        assert len(await _workers_seen(base)) == 2, "only one worker answered"

        # Another process (this one) reads the page into the shared cache ...
        settings = load_settings(state_dir=state, allow_private=True)
        fetcher = Fetcher(settings)
        await fetcher.document(f"{server.url}/article", allow_private=True)
        await fetcher.aclose()
        assert server.hits("/article") == 1
        # ... and every worker serves it from there.
        async with httpx.AsyncClient(timeout=30) as client:
            pages = await asyncio.gather(
                *(client.post(f"{base}/fetch", json={"url": f"{server.url}/article"}) for _ in range(10))
            )
        assert all(p.status_code == 200 and p.json()["from_cache"] for p in pages)
        assert server.hits("/article") == 1

        # A suspension written by another process holds in every worker: nothing reaches SearXNG.
        before = server.hits("/sx/search")
        holds = ProviderState(state / "state.sqlite3")
        holds.suspend("searxng", time.time(), "CAPTCHA (test)", 300)
        holds.close()
        async with httpx.AsyncClient(timeout=30) as client:
            answers = await asyncio.gather(
                *(client.post(f"{base}/search", json={"query": "react server components"}) for _ in range(10))
            )
        assert {a.status_code for a in answers} == {503}
        assert all("suspended" in a.json()["error"]["attempts"][0]["reason"] for a in answers)
        assert server.hits("/sx/search") == before
