"""Issue 7 items 12, 15, 16 and 17: what users tripped over."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from test_cli import run

import sourcewise
from sourcewise import plan, route
from sourcewise.web.rank import published_from

from conftest import FIXTURES
from servers import LocalServer, Reply

TODAY = date(2026, 3, 18)  # a Wednesday
SMALL = (FIXTURES / "searxng_small.json").read_text("utf-8")


# -- item 12: `context` follows the exit codes and speaks the question's language -------------


def test_context_exits_3_when_no_provider_answers(server: LocalServer, tmp_path: Path) -> None:
    server.route("/search", Reply(500, "down"))
    out = run(
        ["context", "latest AI market trends"],
        tmp_path,
        SEARXNG_URL=server.url,
        SOURCEWISE_PROVIDERS="searxng",
    )
    assert out.returncode == 3
    assert "error:" in out.stderr
    assert out.stderr.count("No search provider could answer") == 1  # said once, not twice
    assert "웹" not in out.stderr  # an English question gets English lines
    assert "searching the web" in out.stderr


def test_context_exits_1_when_the_url_is_refused_and_offers_allow_private(
    server: LocalServer, tmp_path: Path
) -> None:
    server.route(
        "/page", Reply(200, "<html><title>T</title><body><p>" + "intranet text " * 20 + "</p></body></html>")
    )
    url = f"{server.url}/page"
    refused = run(["context", f"summarise {url}"], tmp_path)
    assert refused.returncode == 1
    assert "--allow-private" in refused.stderr
    allowed = run(["context", f"summarise {url}", "--allow-private"], tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert "intranet text" in allowed.stdout


def test_context_korean_question_gets_korean_lines(server: LocalServer, tmp_path: Path) -> None:
    server.route("/search", Reply(200, SMALL, content_type="application/json"))
    out = run(
        ["context", "최신 AI 시장 동향"], tmp_path, SEARXNG_URL=server.url, SOURCEWISE_PROVIDERS="searxng"
    )
    assert out.returncode == 0, out.stderr
    assert "웹 검색 수행" in out.stderr


# -- item 15: routing and planning -----------------------------------------------------------


def test_our_startup_is_not_internal() -> None:
    decision = route("What are the latest AI trends for our startup?", today=TODAY)
    assert decision.action == "search"
    assert route("What does our company handbook say about leave?", today=TODAY).action == "skip"


def test_a_bare_domain_is_a_site_filter_not_a_page() -> None:
    decision = route("docs.python.org에서 asyncio 설명 찾아줘", today=TODAY)
    assert decision.action == "search"
    assert decision.query is not None
    assert decision.query.startswith("site:docs.python.org ")
    assert "asyncio" in decision.query
    assert decision.urls == []
    assert route("https://docs.python.org/3/library/asyncio.html 요약해줘", today=TODAY).action == "fetch"


def test_mention_loses_its_korean_particle() -> None:
    assert plan("@kim이 보낸 배포 메시지", today=TODAY).constraints.authors == ["kim"]


def test_relative_ranges_use_each_sources_edges() -> None:
    p = plan("what was decided last week", sources=["chat", "email", "project_tracker"], today=TODAY)
    assert (p.constraints.after, p.constraints.before) == (date(2026, 3, 9), date(2026, 3, 15))
    chat = next(q.query for q in p.sources if q.source == "chat" and q.mode == "keyword")
    email = next(q.query for q in p.sources if q.source == "email")
    tracker = next(q.params for q in p.sources if q.source == "project_tracker")
    assert "after:2026-03-08" in chat  # Slack: after: and before: exclude the day named
    assert "before:2026-03-16" in chat
    assert "after:2026/03/09" in email  # Gmail: after: includes it, before: excludes it
    assert "before:2026/03/16" in email
    assert (tracker["modified_on_after"], tracker["modified_on_before"]) == ("2026-03-08", "2026-03-16")


# -- item 17: dates ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Jul 16, 2025", datetime(2025, 7, 16, tzinfo=UTC)),
        ("16 July 2025", datetime(2025, 7, 16, tzinfo=UTC)),
        ("2 days ago", datetime(2026, 3, 16, 12, tzinfo=UTC)),
        ("3일 전", datetime(2026, 3, 15, 12, tzinfo=UTC)),
    ],
)
def test_published_dates_beyond_iso(text: str, expected: datetime) -> None:
    now = datetime(2026, 3, 18, 12, tzinfo=UTC)
    assert published_from(text, now) == expected


def test_relative_dates_need_the_time_of_the_answer() -> None:
    assert published_from("2 days ago") is None
    assert published_from("12") is None
    assert published_from({"not": "a string"}) is None


async def test_provider_results_get_loose_dates(server: LocalServer, tmp_path: Path) -> None:
    body = json.loads(SMALL)
    body["results"][0]["publishedDate"] = "Jul 16, 2025"
    server.route("/search", Reply(200, json.dumps(body), content_type="application/json"))
    settings = sourcewise.load_settings(
        providers=["searxng"], provider_options={"searxng": {"url": server.url}}, state_dir=tmp_path / "s"
    )
    response = await sourcewise.asearch("react server components", settings=settings)
    first_url = body["results"][0]["url"]
    hit = next(r for r in response.results if r.url == first_url)
    assert hit.published is not None
    assert hit.published.date() == date(2025, 7, 16)


# -- item 16: expired cache rows are purged -------------------------------------------------


def test_expired_cache_rows_are_purged(tmp_path: Path) -> None:
    import sqlite3

    from sourcewise.net.cache import CachedDocument, PageCache
    from sourcewise.text.extract import Extracted

    cache = PageCache(tmp_path / "pages.sqlite3", ttl=900)
    hops = [("example.com", 443, ["93.184.215.14"])]
    old = CachedDocument("https://a.example/", Extracted("a", "text/plain"), 0.0, False, hops)
    new = CachedDocument("https://b.example/", Extracted("b", "text/plain"), 1000.0, False, hops)
    cache.put(["https://a.example/"], old, now=0.0)
    cache.put(["https://b.example/"], new, now=1000.0)
    cache.close()
    keys = [row[0] for row in sqlite3.connect(tmp_path / "pages.sqlite3").execute("SELECT key FROM page")]
    assert keys == ["https://b.example/"]
