"""ask, search and retrieve through both doors: the MCP SDK client in process and a real uvicorn,
over a knowledge base the test indexes. Only configured source names cross a door."""

from __future__ import annotations

from pathlib import Path

import httpx
from mcp import Client

from sourcewise import KnowledgeBase, load_settings
from sourcewise.doors.http import create_app
from sourcewise.doors.mcp import build_server
from sourcewise.doors.service import DoorSettings

from doorkit import uvicorn_thread

DOC = """# Deploying

The deployment procedure starts with a release branch. Tag the release, then run the deploy job.

# Rollback

To roll back a deployment, redeploy the previous tag.
"""


def _settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text(DOC, "utf-8")
    state = tmp_path / "state"
    KnowledgeBase(state / "kb.sqlite3", semantic=False).index([docs])
    return load_settings(state_dir=state, providers=["searxng"], sources={"notes": {"type": "kb"}})


async def test_mcp_ask_search_retrieve_over_the_knowledge_base(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    async with Client(build_server(settings)) as client:
        asked = await client.call_tool(
            "ask", {"question": "How do I roll back a deployment?", "sources": ["kb"]}
        )
        assert not asked.is_error, asked
        assert asked.structured_content is not None
        assert "[1]" in asked.structured_content["text"], asked.structured_content["reports"]
        assert "redeploy the previous tag" in asked.structured_content["text"]
        found = await client.call_tool(
            "search_sources", {"query": "deployment procedure", "sources": ["notes"]}
        )
        assert not found.is_error, found
        assert found.structured_content["results"][0]["hits"]
        got = await client.call_tool("retrieve", {"task": "change the rollback steps", "sources": ["kb"]})
        assert not got.is_error, got
        refused = await client.call_tool("search_sources", {"query": "passwd", "sources": ["code:/etc"]})
        assert refused.is_error
        assert "only configured names" in refused.content[0].text  # type: ignore[union-attr]


def test_http_ask_and_sources_search(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        answer = httpx.post(
            f"{url}/ask", json={"question": "How do I roll back a deployment?", "sources": ["kb"]}
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["citations"]
        hits = httpx.post(f"{url}/sources/search", json={"query": "release branch", "sources": ["notes"]})
        assert hits.status_code == 200, hits.text
        assert hits.json()[0]["hits"]
        refused = httpx.post(f"{url}/sources/search", json={"query": "passwd", "sources": ["code:/etc"]})
        assert refused.status_code == 400, refused.text
        assert "only configured names" in refused.text
        retrieved = httpx.post(
            f"{url}/retrieve", json={"task": "change the rollback steps", "sources": ["kb"]}
        )
        assert retrieved.status_code == 200, retrieved.text


def test_source_failures_map_to_typed_statuses_not_500() -> None:
    from sourcewise.doors.errors import classify
    from sourcewise.errors import (
        IndexVersionError,
        ModelError,
        SourceFormatError,
        SourceRateLimited,
        SourceUnavailable,
    )

    assert classify(SourceUnavailable("kb", "not indexed")).status == 503
    assert classify(IndexVersionError("kb", "newer")).status == 503
    assert classify(SourceRateLimited("slack", "slow down", retry_after=5)).status == 429
    assert classify(SourceFormatError("mail", "not an mbox")).status == 502
    assert classify(ModelError("down")).status == 502


def test_http_sources_search_on_an_unindexed_kb_is_503(tmp_path: Path) -> None:
    settings = load_settings(state_dir=tmp_path / "empty", providers=["searxng"])
    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        response = httpx.post(f"{url}/sources/search", json={"query": "release branch", "sources": ["kb"]})
        assert response.status_code == 503, response.text
        assert "sourcewise index" in response.text
