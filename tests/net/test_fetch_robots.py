"""The fetcher obeys robots.txt (RFC 9309 section 2.3) for what an agent fetches: against a real
HTTP server on 127.0.0.1, through the fetcher, ``afetch``, ask's page reads, the HTTP and MCP
doors and the CLI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
from mcp import Client
from test_cli import run
from test_fetch import settings_for

from sourcewise import AddressNotAllowed, FetchTimeout, RobotsDisallowed, afetch
from sourcewise.doors.http import create_app
from sourcewise.doors.mcp import build_server
from sourcewise.doors.service import DoorSettings
from sourcewise.models import SourceQuery
from sourcewise.net.cache import CachedRobots, PageCache
from sourcewise.net.fetch import Fetcher
from sourcewise.session import Session
from sourcewise.sources.web import PagesSource

from doorkit import uvicorn_thread
from servers import LocalServer, Reply

PAGE = "<html><head><title>Notes</title></head><body><article><p>{}</p></article></body></html>"
# Everyone else is kept out; our own group (matched on our product token) lets us in but for two.
ROBOTS = (
    "User-agent: *\nDisallow: /\n\nUser-agent: SourceWise\nDisallow: /private\nDisallow: /not-for-agents\n"
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def site(server: LocalServer) -> LocalServer:
    for path in ("/public", "/private", "/private/deep", "/not-for-agents", "/other"):
        server.route(path, Reply(200, PAGE.format(f"The page at {path} is here.")))
    server.route("/robots.txt", Reply(200, ROBOTS, content_type="text/plain"))
    return server


@pytest.fixture
async def fetcher(tmp_path: Path):  # type: ignore[no-untyped-def]
    f = Fetcher(settings_for(tmp_path), clock=Clock())
    yield f
    await f.aclose()


async def test_a_disallowed_path_is_a_typed_error_and_never_requested(
    site: LocalServer, fetcher: Fetcher
) -> None:
    doc, _ = await fetcher.document(site.url + "/public", allow_private=True)
    assert "/public is here" in doc.extracted.text
    for path in ("/private", "/private/deep", "/not-for-agents"):
        with pytest.raises(RobotsDisallowed, match=r"robots\.txt does not allow sourcewise") as caught:
            await fetcher.document(site.url + path, allow_private=True)
        assert caught.value.url == site.url + path
    assert site.hits("/private") == site.hits("/private/deep") == site.hits("/not-for-agents") == 0


async def test_robots_is_fetched_once_per_origin_and_cached(site: LocalServer, tmp_path: Path) -> None:
    clock = Clock()
    fetcher = Fetcher(settings_for(tmp_path), clock=clock)
    try:
        urls = [site.url + p for p in ("/public", "/other", "/public?x=1", "/other?y=2")]
        await asyncio.gather(*(fetcher.document(u, allow_private=True) for u in urls))
        with pytest.raises(RobotsDisallowed):
            await fetcher.document(site.url + "/private", allow_private=True)
        assert site.hits("/robots.txt") == 1
        # the page cache's rules: kept for its time to live, in its file
        again = Fetcher(settings_for(tmp_path), clock=clock)
        try:
            await again.document(site.url + "/other?z=3", allow_private=True)
        finally:
            await again.aclose()
        assert site.hits("/robots.txt") == 1
        clock.now += fetcher.settings.cache_ttl
        await fetcher.document(site.url + "/other?w=4", allow_private=True)
        assert site.hits("/robots.txt") == 2
    finally:
        await fetcher.aclose()


async def test_a_cached_page_is_still_refused(site: LocalServer, fetcher: Fetcher) -> None:
    await fetcher.document(site.url + "/private", allow_private=True, obey_robots=False)
    assert site.hits("/private") == 1
    with pytest.raises(RobotsDisallowed):
        await fetcher.document(site.url + "/private", allow_private=True)


async def test_a_redirect_into_a_disallowed_path_is_refused(site: LocalServer, fetcher: Fetcher) -> None:
    site.route("/moved", Reply(302, "", {"Location": "/private/deep"}))
    with pytest.raises(RobotsDisallowed):
        await fetcher.document(site.url + "/moved", allow_private=True)
    assert site.hits("/moved") == 1
    assert site.hits("/private/deep") == 0


@pytest.mark.parametrize("status", [404, 410, 403, 401])
async def test_robots_4xx_allows_everything(site: LocalServer, fetcher: Fetcher, status: int) -> None:
    site.route("/robots.txt", Reply(status, "User-agent: *\nDisallow: /\n", content_type="text/plain"))
    doc, _ = await fetcher.document(site.url + "/private", allow_private=True)
    assert "/private is here" in doc.extracted.text


@pytest.mark.parametrize("status", [500, 503, 429])
async def test_robots_5xx_disallows_everything(site: LocalServer, fetcher: Fetcher, status: int) -> None:
    site.route("/robots.txt", Reply(status, "", content_type="text/plain"))
    with pytest.raises(RobotsDisallowed, match=rf"robots\.txt answered HTTP {status}"):
        await fetcher.document(site.url + "/public", allow_private=True)
    assert site.hits("/public") == 0


async def test_unreachable_robots_is_its_own_error_and_the_page_is_not_requested(
    site: LocalServer, tmp_path: Path
) -> None:
    site.route("/robots.txt", Reply(200, "", delay=1.5))  # answers after the fetcher gave up
    fetcher = Fetcher(settings_for(tmp_path, timeout=0.3), clock=Clock())
    try:
        with pytest.raises(FetchTimeout) as caught:
            await fetcher.document(site.url + "/public", allow_private=True)
        assert caught.value.url.endswith("/robots.txt")
        assert site.hits("/public") == 0
        site.route("/robots.txt", Reply(404, ""))  # not cached: the next fetch asks again
        await fetcher.document(site.url + "/public", allow_private=True)
        assert site.hits("/public") == 1
    finally:
        await fetcher.aclose()


async def test_robots_redirects_are_followed(site: LocalServer, fetcher: Fetcher) -> None:
    site.route("/robots.txt", Reply(301, "", {"Location": "/real-robots.txt"}))
    site.route("/real-robots.txt", Reply(200, "User-agent: *\nDisallow: /other\n", content_type="text/plain"))
    with pytest.raises(RobotsDisallowed):
        await fetcher.document(site.url + "/other", allow_private=True)
    doc, _ = await fetcher.document(site.url + "/private", allow_private=True)
    assert "/private is here" in doc.extracted.text


async def test_robots_txt_itself_is_always_allowed(site: LocalServer, fetcher: Fetcher) -> None:
    site.route("/robots.txt", Reply(200, "User-agent: *\nDisallow: /\n", content_type="text/plain"))
    doc, _ = await fetcher.document(site.url + "/robots.txt", allow_private=True)
    assert "Disallow" in doc.extracted.text


async def test_the_guard_speaks_before_robots(site: LocalServer, fetcher: Fetcher) -> None:
    with pytest.raises(AddressNotAllowed):
        await fetcher.document(site.url + "/private", allow_private=False)
    assert site.hits("/robots.txt") == 0


async def test_afetch_and_asks_page_reads_obey(site: LocalServer, tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    with pytest.raises(RobotsDisallowed):
        await afetch(site.url + "/private", settings=settings)
    assert await afetch(site.url + "/private", settings=settings, best_effort=True) is None
    page = await afetch(site.url + "/private", settings=settings, obey_robots=False)
    assert "/private is here" in page.content
    async with Session(settings) as session:
        pages = PagesSource([site.url + "/not-for-agents", site.url + "/public"], session)
        result = await pages.search(SourceQuery(source="web", mode="keyword", query="where is the page"))
    assert [hit.location for hit in result.hits] == [site.url + "/public"]
    assert any("robots.txt" in warning for warning in result.warnings)
    assert site.hits("/not-for-agents") == 0


def test_http_fetch_refusal_is_403_with_the_type(site: LocalServer, tmp_path: Path) -> None:
    with uvicorn_thread(create_app(settings_for(tmp_path), DoorSettings())) as api:
        response = httpx.post(f"{api}/fetch", json={"url": site.url + "/private"})
        ok = httpx.post(f"{api}/fetch", json={"url": site.url + "/public"})
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["type"] == "RobotsDisallowed"
    assert "robots.txt" in error["message"]
    assert ok.status_code == 200
    assert site.hits("/private") == 0


async def test_mcp_web_fetch_refusal_is_a_tool_error(site: LocalServer, tmp_path: Path) -> None:
    async with Client(build_server(settings_for(tmp_path))) as client:
        result = await client.call_tool("web_fetch", {"url": site.url + "/not-for-agents"})
    assert result.is_error
    block = result.content[0]
    assert block.type == "text"
    assert "RobotsDisallowed" in block.text
    assert site.hits("/not-for-agents") == 0


def test_cli_fetch_obeys_unless_told_to_ignore(site: LocalServer, tmp_path: Path) -> None:
    url = site.url + "/private"
    refused = run(["fetch", url, "--allow-private"], tmp_path)
    assert refused.returncode == 1
    assert "robots.txt does not allow sourcewise" in refused.stderr
    assert "--ignore-robots" in refused.stderr
    assert site.hits("/private") == 0
    fetched = run(["fetch", url, "--allow-private", "--ignore-robots", "--json"], tmp_path)
    assert fetched.returncode == 0, fetched.stderr
    assert "/private is here" in json.loads(fetched.stdout)["content"]
    assert site.hits("/private") == 1


def test_sqlite_robots_rows_expire_and_clear(tmp_path: Path) -> None:
    cache = PageCache(tmp_path / "pages.sqlite3", ttl=900)
    try:
        robots = CachedRobots(200, b"User-agent: *\nDisallow: /\xff\n", "answered HTTP 200")
        cache.put_robots("https://a.example|public", robots, 1000.0)
        assert cache.get_robots("https://a.example|public", 1899.0) == robots
        assert cache.get_robots("https://a.example|private", 1000.0) is None
        assert cache.get_robots("https://a.example|public", 1900.0) is None
        cache.put_robots("https://b.example|public", robots, 1000.0)
        cache.clear()
        assert cache.get_robots("https://b.example|public", 1000.0) is None
    finally:
        cache.close()
