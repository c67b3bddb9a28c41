"""Issue 29, item 5: Redis killed while ``serve`` runs: ``/health`` and ``/search`` keep answering
from local state with a warning, never a 500 (on the code before, both answered 500).

A real redis-server is started and killed; the search provider is a local server."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from sourcewise import load_settings
from sourcewise.server import create_app
from sourcewise.service import DoorSettings
from test_cli import SMALL

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
            before = httpx.get(f"{base}/health")
            assert before.status_code == 200, before.text
            assert before.json()["store"] == "redis"
            proc.kill()
            proc.wait(10)
            health = httpx.get(f"{base}/health")
            found = httpx.post(f"{base}/search", json={"query": "react server components"}, timeout=30)
            server.route("/search", Reply(429, "slow down", headers={"Retry-After": "60"}))
            limited = httpx.post(f"{base}/search", json={"query": "another question"}, timeout=30)
            after = httpx.get(f"{base}/health")
    assert health.status_code == 200, health.text
    assert found.status_code == 200, found.text
    assert found.json()["results"]
    assert limited.status_code == 503, limited.text  # typed: no provider could answer, not a 500
    assert after.json()["providers_suspended"] == ["searxng"]  # the suspension was kept locally
    assert "Redis at SOURCEWISE_REDIS_URL cannot be reached" in caplog.text
    assert caplog.text.count("cannot be reached") == 1  # said once
