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


async def _workers_seen(base: str, within: float = 60.0) -> set[int]:
    """The worker pids that answer; the second worker may boot seconds after the first on a busy
    machine, so this keeps asking (20 fresh connections a round) until two answer or time is up."""
    seen: set[int] = set()
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:

        async def one() -> int:
            async with httpx.AsyncClient() as fresh:  # a new connection each, so any worker may take it
                worker: int = (await fresh.get(f"{base}/health")).json()["worker"]
                return worker

        seen |= set(await asyncio.gather(*(one() for _ in range(20))))
        if len(seen) >= 2:
            break
        await asyncio.sleep(0.5)
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


_WRITER = """
import sys, time
from pathlib import Path
from sourcewise.text.extract import Extracted
from sourcewise.net.cache import CachedDocument, PageCache

cache = PageCache(Path(sys.argv[1]), ttl=900)
name = sys.argv[2]
hops = [("example.com", 443, ["93.184.215.14"])]
for i in range(150):
    url = f"https://{name}.example/{i}"
    cache.put([url], CachedDocument(url, Extracted(name * 50, "text/plain"), time.time(), False, hops))
    other = "b" if name == "a" else "a"
    cache.get(f"https://{other}.example/{i // 2}", time.time())
print("done")
"""


def test_the_page_cache_is_wal_and_two_processes_write_it_at_once(tmp_path: Path) -> None:
    """What workers do: two processes writing and reading one cache file at the same time. Every
    write lands (no 'database is locked' dropped a page) and the file is in WAL mode."""
    import sqlite3
    import subprocess
    import sys

    path = tmp_path / "pages.sqlite3"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), n], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for n in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err.decode()
        assert b"done" in out
        assert b"write failed" not in err, err.decode()
        assert b"cannot be used" not in err, err.decode()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("SELECT count(*) FROM page").fetchone()[0] == 300


def test_the_redirect_cache_degrades_to_memory_on_an_unwritable_directory(tmp_path: Path) -> None:
    from sourcewise.net.guard import AddressGuard
    from sourcewise.net.redirects import RedirectCache

    blocker = tmp_path / "file"
    blocker.write_text("not a directory", "utf-8")
    cache = RedirectCache(blocker / "state" / "redirects.sqlite3")
    hop = ("vertexaisearch.cloud.google.com", 443, ["142.250.1.1"])
    cache.put("https://vertexaisearch.cloud.google.com/x", "https://example.com/", 0.0, hop)
    got = cache.get("https://vertexaisearch.cloud.google.com/x", 1.0, AddressGuard())
    assert got == "https://example.com/"
