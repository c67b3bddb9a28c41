"""Seed 001's integration function: search, fetch or skip, and graceful degradation."""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path

import pytest

from sourcewise import aconditional_web_search, load_settings

from conftest import FIXTURES
from servers import LocalServer, Reply

TODAY = date(2026, 11, 21)


async def test_search_path(server: LocalServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    server.route(
        "/search", Reply(200, (FIXTURES / "searxng_small.json").read_text(), content_type="application/json")
    )
    settings = load_settings(
        state_dir=tmp_path, providers=["searxng"], provider_options={"searxng": {"url": server.url}}
    )
    with caplog.at_level(logging.INFO, logger="sourcewise"):
        out = await aconditional_web_search(
            "React Server Components 최신 동향", today=TODAY, settings=settings
        )
    assert out.searched is True
    assert out.route.action == "search"
    assert "2026" in server.seen[0].query
    assert out.context is not None
    assert "[1] Server Components" in out.context
    assert "tier 1" in out.context
    assert "🔍" in caplog.text


async def test_web_failure_degrades_to_none(
    server: LocalServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.route("/search", Reply(500, "down"))
    settings = load_settings(
        state_dir=tmp_path,
        providers=["searxng"],
        provider_options={"searxng": {"url": server.url}},
        timeout=1,
    )
    with caplog.at_level(logging.WARNING, logger="sourcewise"):
        out = await aconditional_web_search("AI 시장 규모", today=TODAY, settings=settings)
    assert out.searched is True
    assert out.context is None
    assert out.error is not None
    assert "searxng" in out.error
    assert "⚠️" in caplog.text


async def test_fetch_path(server: LocalServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    server.route(
        "/doc",
        Reply(
            200,
            "<html><body><article><h1>Release notes</h1><p>Version 2 adds streaming responses and a faster cache for everyone.</p></article></body></html>",
        ),
    )
    settings = load_settings(state_dir=tmp_path, allow_private=True)
    with caplog.at_level(logging.INFO, logger="sourcewise"):
        out = await aconditional_web_search(f"{server.url}/doc 참고해서 요약", today=TODAY, settings=settings)
    assert out.route.action == "fetch"
    assert out.pages[0].title == "Release notes"
    assert out.context is not None
    assert "streaming responses" in out.context
    assert "🔗 URL 직접 참조: 1개" in caplog.text


async def test_fetch_failure_degrades(
    server: LocalServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings(state_dir=tmp_path)  # private addresses not allowed: the fetch is refused
    with caplog.at_level(logging.WARNING, logger="sourcewise"):
        out = await aconditional_web_search(f"{server.url}/doc 참고", today=TODAY, settings=settings)
    assert out.context is None
    assert out.pages == []
    assert "URL 조회 실패" in caplog.text
    assert server.seen == []


async def test_skip_path(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="sourcewise"):
        out = await aconditional_web_search(
            "사내 규정 기반 시스템",
            "사내 규정 문서 ...",
            today=TODAY,
            settings=load_settings(state_dir=tmp_path),
        )
    assert out.searched is False
    assert out.context is None
    assert "private context given" in out.reason
    assert "📚" in caplog.text
