"""Issue 29, item 5: Redis killed while ``serve`` runs: ``/health`` and ``/search`` keep answering
from local state with a warning, never a 500 (on the code before, both answered 500).

A real redis-server is started and killed; the search provider is a local server."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest
from test_cli import SMALL

from sourcewise import Session, StoreUnavailable, load_settings
from sourcewise.doors.errors import classify
from sourcewise.doors.http import create_app
from sourcewise.doors.service import DoorSettings
from sourcewise.web.api import areset_providers

from doorkit import uvicorn_thread
from redisd import redis_process
from servers import LocalServer, Reply


def test_redis_killed_while_serving_degrades_to_local_state(
    server: LocalServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.route("/search", Reply(200, SMALL, content_type="application/json"))
    caplog.set_level(logging.WARNING, logger="sourcewise")
    with redis_process() as (url, proc):
        settings = load_settings(
            state_dir=tmp_path / "state", providers=["searxng"], redis_url=url,
            provider_options={"searxng": {"url": server.url}},
        )  # fmt: skip
        with uvicorn_thread(create_app(settings, DoorSettings())) as base:
            before = httpx.get(f"{base}/health", timeout=60)  # the first request opens the session
            assert before.status_code == 200, before.text
            assert before.json()["store"] == "redis"
            proc.kill()
            proc.wait(10)
            health = httpx.get(f"{base}/health", timeout=30)
            found = httpx.post(f"{base}/search", json={"query": "react server components"}, timeout=30)
            server.route("/search", Reply(429, "slow down", headers={"Retry-After": "60"}))
            limited = httpx.post(f"{base}/search", json={"query": "another question"}, timeout=30)
            after = httpx.get(f"{base}/health", timeout=30)
    assert health.status_code == 200, health.text
    assert found.status_code == 200, found.text
    assert found.json()["results"]
    assert limited.status_code == 503, limited.text  # typed: no provider could answer, not a 500
    assert after.json()["providers_suspended"] == ["searxng"]  # the suspension was kept locally
    assert "Redis at SOURCEWISE_REDIS_URL cannot be reached" in caplog.text
    assert caplog.text.count("cannot be reached") == 1  # said once


async def test_what_needs_the_shared_state_is_a_typed_503_when_redis_is_gone(tmp_path: Path) -> None:
    """Lifting suspensions and emptying the cache must reach Redis: done on this machine alone they
    would seem to work while every other worker keeps its state. On the code before, the lift
    answered "lifted 0" from local state and emptying the cache raised redis' ConnectionError."""
    with redis_process() as (url, proc):
        settings = load_settings(state_dir=tmp_path / "state", providers=["searxng"], redis_url=url)
        async with Session(settings) as session:
            session.engine.state.suspend("searxng", 0.0, "429", 60.0)
            cache = session.page_cache
            proc.kill()
            proc.wait(10)
            with pytest.raises(StoreUnavailable, match="suspensions every worker shares were not lifted"):
                await areset_providers(session=session)
            with pytest.raises(StoreUnavailable, match="shared page cache was not emptied") as emptied:
                cache.clear()
            assert session.engine.state.get("duckduckgo") is None  # searching goes on from local state
    failure = classify(emptied.value)
    assert (failure.status, failure.kind) == (503, "StoreUnavailable")
    assert url not in failure.message  # the URL may hold a password: never said
