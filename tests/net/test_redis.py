"""The Redis backend for the page cache and suspensions, against a real redis-server."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from sourcewise import ConfigError, load_settings
from sourcewise.doors.http import create_app
from sourcewise.doors.service import DoorSettings
from sourcewise.net.cache import CachedDocument, CachedRobots
from sourcewise.net.redis_store import RedisPageCache, RedisProviderState
from sourcewise.net.state import MAX_SUSPENSION
from sourcewise.text.extract import Extracted

from doorkit import provider_env, uvicorn_thread
from redisd import redis_server
from servers import LocalServer, Reply


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(autouse=True)
def _empty(redis_url: str) -> None:
    import redis

    redis.Redis.from_url(redis_url).flushdb()


def doc(url: str, at: float) -> CachedDocument:
    # A real fetch records every hop it connected to; the cache serves nothing it cannot re-check.
    hops = [("a.example", 443, ["93.184.216.34"])]
    return CachedDocument(url, Extracted(text="body text", content_type="text/html"), at, False, hops)


def test_page_cache_round_trip_expiry_and_clear(redis_url: str) -> None:
    cache = RedisPageCache(redis_url, ttl=900)
    cache.put(["https://a.example/x", "https://a.example/x/"], doc("https://a.example/x", 1000.0))
    got = cache.get("https://a.example/x/", 1100.0)
    assert got is not None
    assert got.extracted.text == "body text"
    assert cache.get("https://a.example/x", 1000.0 + 900) is None  # the caller's clock says expired
    assert cache.get("https://b.example/", 1000.0) is None
    other = RedisPageCache(redis_url, ttl=900)  # another worker sees the same page
    assert other.get("https://a.example/x", 1001.0) is not None
    assert other.clear() == 2
    assert cache.get("https://a.example/x", 1001.0) is None
    cache.close()
    other.close()


def test_robots_answers_round_trip_expire_and_clear(redis_url: str) -> None:
    cache = RedisPageCache(redis_url, ttl=900)
    robots = CachedRobots(200, b"User-agent: *\nDisallow: /\xff\n", "answered HTTP 200")
    cache.put_robots("https://a.example|public", robots, 1000.0)
    other = RedisPageCache(redis_url, ttl=900)  # another worker sees the same answer
    assert other.get_robots("https://a.example|public", 1899.0) == robots
    assert other.get_robots("https://a.example|private", 1000.0) is None
    assert other.get_robots("https://a.example|public", 1900.0) is None  # the caller's clock says expired
    cache.clear()
    assert other.get_robots("https://a.example|public", 1000.0) is None
    cache.close()
    other.close()


def test_suspensions_double_honour_retry_after_and_clear(redis_url: str) -> None:
    state = RedisProviderState(redis_url)
    first = state.suspend("brave", 1000.0, "HTTP 429", base=300)
    assert (first.until, first.strikes) == (1300.0, 1)
    second = state.suspend("brave", 2000.0, "HTTP 429", base=300)
    assert (second.until, second.strikes) == (2600.0, 2)
    long = state.suspend("brave", 3000.0, "HTTP 429", base=300, retry_after=99999)
    assert long.until == 3000.0 + MAX_SUSPENSION
    assert state.suspended("brave", 3001.0) == long
    assert state.suspended("brave", 3000.0 + MAX_SUSPENSION) is None
    state.clear("brave")
    assert state.get("brave") is None
    state.close()


def test_suspend_is_atomic_across_writers(redis_url: str) -> None:
    states = [RedisProviderState(redis_url) for _ in range(8)]
    threads = [
        threading.Thread(target=lambda s=s: [s.suspend("ddg", 0.0, "CAPTCHA", 1.0) for _ in range(5)])
        for s in states
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    record = states[0].get("ddg")
    assert record is not None
    assert record.strikes == 40  # no strike lost between concurrent writers


def test_unreachable_redis_is_a_config_error_without_the_password() -> None:
    with pytest.raises(ConfigError) as caught:
        RedisProviderState("redis://user:hunter2@127.0.0.1:1/0")
    assert "hunter2" not in str(caught.value)
    assert "cannot be used" in str(caught.value)


def test_http_api_on_redis(redis_url: str, server: LocalServer, tmp_path: Path) -> None:
    provider_env(server, tmp_path)
    server.route(
        "/article",
        Reply(200, "<html><body><article><p>" + "Cached in Redis. " * 50 + "</p></article></body></html>"),
    )
    settings = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        state_dir=tmp_path / "s",
        allow_private=True,
        redis_url=redis_url,
    )
    doors = DoorSettings()
    with (
        uvicorn_thread(create_app(settings, doors)) as one,
        uvicorn_thread(create_app(settings, doors)) as two,
    ):
        assert httpx.get(f"{one}/health").json()["store"] == "redis"
        first = httpx.post(f"{one}/fetch", json={"url": f"{server.url}/article"}).json()
        again = httpx.post(f"{two}/fetch", json={"url": f"{server.url}/article"}).json()
        assert (first["from_cache"], again["from_cache"]) == (False, True)
        assert server.hits("/article") == 1
        RedisProviderState(redis_url).suspend("searxng", 2e9, "CAPTCHA (test)", 300)
        response = httpx.post(f"{two}/search", json={"query": "react server components"})
        assert response.status_code == 503
        assert "suspended" in response.json()["error"]["attempts"][0]["reason"]
    assert not (tmp_path / "s" / "pages.sqlite3").exists()  # nothing went to SQLite
