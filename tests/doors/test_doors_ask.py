"""ask through both doors: format, reading, sources [], every source failing, strict arguments,
control characters and progress. The MCP SDK's own client in process; a real uvicorn on 127.0.0.1;
a knowledge base on files the test writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from test_cli_ask import MIGRATIONS  # the same three-reading corpus the CLI's ambiguity test uses

from sourcewise import KnowledgeBase, load_settings
from sourcewise.config import Settings
from sourcewise.doors.http import create_app
from sourcewise.doors.mcp import build_server
from sourcewise.doors.service import DoorSettings, Service

from doorkit import uvicorn_thread

DEPLOY = "# Deploying\n\nTo roll back a deployment, redeploy the previous tag. Tags are kept for a year.\n"


def _settings(tmp_path: Path, files: dict[str, str], **extra: Any) -> Settings:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for name, text in files.items():
        (docs / name).write_text(text, "utf-8")
    state = tmp_path / "state"
    KnowledgeBase(state / "kb.sqlite3", semantic=False).index([docs])
    return load_settings(state_dir=state, providers=["searxng"], **extra)


def text_of(result: CallToolResult) -> str:
    assert result.content
    block = result.content[0]
    assert block.type == "text"
    return block.text


async def test_mcp_ask_format_changes_the_text_not_the_structured_result(tmp_path: Path) -> None:
    settings = _settings(tmp_path, {"deploy.md": DEPLOY})
    question = {"question": "How do I roll back a deployment?", "sources": ["kb"]}
    async with Client(build_server(settings)) as client:
        texts: dict[str, str] = {}
        structured: dict[str, Any] = {}
        for fmt in ("quick", "deep", "progressive", "json"):
            result = await client.call_tool("ask", {**question, "format": fmt})
            assert not result.is_error, text_of(result)
            texts[fmt] = text_of(result)
            assert result.structured_content is not None
            data = result.structured_content
            structured[fmt] = (
                data["text"],
                data["citations"],
                [h["hit"]["location"] for h in data["sources"]],
            )
    assert "redeploy the previous tag" in texts["quick"]
    assert "Dig further" in texts["progressive"]
    assert "Dig further" not in texts["quick"]
    assert texts["deep"] != texts["quick"]
    assert texts["json"].startswith("{")
    assert '"question"' in texts["json"]
    assert structured["quick"] == structured["deep"] == structured["progressive"] == structured["json"]


async def test_mcp_ask_reading_by_number_or_label(tmp_path: Path) -> None:
    settings = _settings(tmp_path, MIGRATIONS)
    async with Client(build_server(settings)) as client:
        first = await client.call_tool("ask", {"question": "migration 찾아줘", "sources": ["kb"]})
        assert not first.is_error, text_of(first)
        data = first.structured_content
        assert data is not None
        assert data["clarification"], data["text"]
        labels = [r["label"] for r in data["readings"]]
        assert "cloud migration" in labels
        n = labels.index("cloud migration") + 1
        for reading in (n, str(n), "cloud migration"):
            chosen = await client.call_tool(
                "ask", {"question": "migration 찾아줘", "sources": ["kb"], "reading": reading}
            )
            assert not chosen.is_error, text_of(chosen)
            got = chosen.structured_content
            assert got is not None
            assert got["clarification"] is None, reading
            assert got["hits"]
            assert all("cloud" in h["hit"]["text"].lower() for h in got["hits"]), reading
        wrong = await client.call_tool(
            "ask", {"question": "migration 찾아줘", "sources": ["kb"], "reading": len(labels) + 1}
        )
        assert wrong.is_error
        assert f"reading must be 1-{len(labels)}" in text_of(wrong)
        assert "cloud migration" in text_of(wrong)


def test_http_ask_format_and_reading(tmp_path: Path) -> None:
    settings = _settings(tmp_path, MIGRATIONS)
    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        plain = httpx.post(f"{url}/ask", json={"question": "migration 찾아줘", "sources": ["kb"]}, timeout=60)
        assert plain.status_code == 200, plain.text
        body = plain.json()
        assert body["clarification"]
        assert body["rendered"] is None  # json, the default: the answer alone
        labels = [r["label"] for r in body["readings"]]
        n = labels.index("email migration") + 1
        for reading in (n, "email migration"):
            chosen = httpx.post(
                f"{url}/ask",
                json={
                    "question": "migration 찾아줘",
                    "sources": ["kb"],
                    "reading": reading,
                    "format": "deep",
                },
                timeout=60,
            )
            assert chosen.status_code == 200, chosen.text
            got = chosen.json()
            assert got["clarification"] is None
            assert all("email" in h["hit"]["text"].lower() for h in got["hits"])
            assert got["rendered"]
            assert "[1]" in got["rendered"]
        bad = httpx.post(f"{url}/ask", json={"question": "migration 찾아줘", "format": "short"}, timeout=60)
        assert bad.status_code == 422, bad.text
        assert "format" in bad.json()["error"]["message"]
        wrong = httpx.post(
            f"{url}/ask", json={"question": "migration 찾아줘", "sources": ["kb"], "reading": 99}, timeout=60
        )
        assert wrong.status_code == 400, wrong.text
        assert "reading must be 1-" in wrong.json()["error"]["message"]


@pytest.fixture(scope="module")
def strict_door(tmp_path_factory: pytest.TempPathFactory) -> MCPServer[Service]:
    """One MCP door for every refused call below: each is refused before it touches the door's
    state, and building a door is half a second of tool schemas."""
    # No provider answers: a control character that slipped through would fail differently.
    settings = _settings(
        tmp_path_factory.mktemp("strict"),
        {"deploy.md": DEPLOY},
        provider_options={"searxng": {"url": "http://127.0.0.1:9/sx"}},
    )
    return build_server(settings)


@pytest.mark.parametrize(
    ("tool", "args", "words"),
    [
        ("web_search", {"query": "react", "extra": 1}, "unknown argument(s) 'extra'"),
        ("ask", {"question": "how do I deploy", "fromat": "deep"}, "unknown argument(s) 'fromat'"),
        ("web_search", {"query": "react", "tier": True}, "tier: Input should be a valid integer"),
        ("ask", {"question": "how do I deploy", "format": "short"}, "format: Input should be"),
        ("ask", {"question": "how do I deploy", "reading": True}, "reading: Input should be"),
        ("ask", {"question": "how do I deploy", "sources": []}, "give at least one source or leave it out"),
        ("search_sources", {"query": "deploy", "sources": []}, "give at least one source or leave it out"),
        ("retrieve", {"task": "fix deploys", "sources": []}, "give at least one source or leave it out"),
        ("web_search", {"query": "react\x00\x00 19"}, "control character (U+0000"),
        ("ask", {"question": "deploy\x1b[31m now"}, "control character (U+001B"),
        ("search_sources", {"query": "deploy\x7f"}, "control character (U+007F"),
    ],
)
async def test_mcp_arguments_are_strict_and_errors_read_clearly(
    strict_door: MCPServer[Service], tool: str, args: dict[str, Any], words: str
) -> None:
    async with Client(strict_door) as client:
        result = await client.call_tool(tool, args)
        assert result.is_error, result
        text = text_of(result)
        assert words in text, text
        assert "pydantic" not in text
        assert "errors.pydantic.dev" not in text


@pytest.mark.parametrize(
    ("path", "body", "status", "words"),
    [
        ("/ask", {"question": "how do I deploy", "sources": []}, 422, "give at least one source"),
        ("/sources/search", {"query": "deploy", "sources": []}, 422, "give at least one source"),
        ("/retrieve", {"task": "fix deploys", "sources": []}, 422, "give at least one source"),
        ("/search", {"query": "react\u0000\u0000 19"}, 400, "control character (U+0000"),
        ("/ask", {"question": "deploy\u0007 now", "sources": ["kb"]}, 400, "control character (U+0007"),
        ("/route", {"question": "what is new\u0000"}, 400, "control character"),
        ("/ask", {"question": "how do I deploy", "reading": True}, 422, "reading: Input should be"),
    ],
)
def test_http_refuses_empty_sources_and_control_characters(
    tmp_path: Path, path: str, body: dict[str, Any], status: int, words: str
) -> None:
    settings = _settings(
        tmp_path, {"deploy.md": DEPLOY}, provider_options={"searxng": {"url": "http://127.0.0.1:9/sx"}}
    )
    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        response = httpx.post(f"{url}{path}", json=body, timeout=60)
    assert response.status_code == status, response.text
    assert words in response.json()["error"]["message"]
    assert "pydantic" not in response.text


async def test_every_source_failing_is_a_503_and_a_tool_error_some_failing_is_not(tmp_path: Path) -> None:
    # The web's only provider is down (nothing listens on port 9); the kb answers.
    settings = _settings(
        tmp_path, {"deploy.md": DEPLOY}, provider_options={"searxng": {"url": "http://127.0.0.1:9/sx"}}
    )
    question = "How do I roll back a deployment?"
    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        async with httpx.AsyncClient(timeout=60) as http:
            down = await http.post(f"{url}/ask", json={"question": question, "sources": ["web"]})
            partial = await http.post(f"{url}/ask", json={"question": question, "sources": ["kb", "web"]})
    assert down.status_code == 503, down.text
    error = down.json()["error"]
    assert error["type"] == "NoSourceAnswered"
    assert error["reports"][0]["source"] == "web"
    assert error["reports"][0]["status"] == "unavailable"
    assert "searxng" in error["reports"][0]["error"]
    assert partial.status_code == 200, partial.text
    statuses = {r["source"]: r["status"] for r in partial.json()["reports"]}
    assert statuses == {"kb": "ok", "web": "unavailable"}
    async with Client(build_server(settings)) as client:
        failed = await client.call_tool("ask", {"question": question, "sources": ["web"]})
        assert failed.is_error
        assert "NoSourceAnswered" in text_of(failed)
        assert "web unavailable" in text_of(failed)
        # A reading by number needs readings: every source failing says so, not "no readings".
        numbered = await client.call_tool("ask", {"question": question, "sources": ["web"], "reading": 1})
        assert numbered.is_error
        assert "NoSourceAnswered" in text_of(numbered)
        kept = await client.call_tool("ask", {"question": question, "sources": ["kb", "web"]})
        assert not kept.is_error, text_of(kept)
        assert "redeploy the previous tag" in text_of(kept)


async def test_mcp_ask_and_retrieve_report_progress(tmp_path: Path) -> None:
    settings = _settings(tmp_path, {"deploy.md": DEPLOY})
    async with Client(build_server(settings)) as client:
        for tool, args in (
            ("ask", {"question": "How do I roll back a deployment?", "sources": ["kb"]}),
            ("retrieve", {"task": "change the rollback steps", "sources": ["kb"]}),
        ):
            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                seen.append((done, total, message))  # noqa: B023 - each call awaits its own

            result = await client.call_tool(tool, args, progress_callback=on_progress)
            assert not result.is_error, text_of(result)
            assert seen, tool
            dones = [d for d, _, _ in seen]
            assert dones == sorted(dones), (tool, seen)
            assert all(total is None or d <= total for d, total, _ in seen), (tool, seen)
            if tool == "ask":
                assert any(m and m.startswith("kb: ok") for _, _, m in seen), seen
            else:
                assert seen[-1][0] == seen[-1][1], seen


def test_help_instructions_and_openapi_name_every_tool_and_endpoint(tmp_path: Path) -> None:
    """The texts agents and users read first list what exists (they said web_search, fetch, route)."""
    import os
    import subprocess
    import sys

    from sourcewise.doors.http import build_api
    from sourcewise.doors.mcp import INSTRUCTIONS, TOOLS

    settings = _settings(tmp_path, {"deploy.md": DEPLOY})
    tools = {t.__name__ for t in TOOLS}  # test_mcp checks that these are the tools listed
    assert len(tools) == 6
    env = {**os.environ, "COLUMNS": "200", "SOURCEWISE_STATE_DIR": str(tmp_path / "state")}
    helped = subprocess.run(
        [sys.executable, "-m", "sourcewise", "mcp", "--help"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert helped.returncode == 0, helped.stderr
    for tool in tools:
        assert f"`{tool}`" in INSTRUCTIONS, tool
        assert tool in helped.stdout, tool
    spec = build_api(settings).openapi()
    for path in spec["paths"]:
        assert f"`{path}`" in spec["info"]["description"], path


def _long_docs() -> dict[str, str]:
    """Twelve long notes that all match the question: whole chunks of every hit would be ~30 KB."""
    docs = {}
    for i in range(12):
        body = " ".join(
            f"Step {j} of rollback plan {i}: redeploy the previous tag of service {i} and check dashboard {j}."
            for j in range(14)
        )
        docs[f"rollback{i}.md"] = f"# Rollback plan {i}\n\n{body}\n"
    return docs


async def test_structured_results_are_kept_within_a_budget_with_a_handle(tmp_path: Path) -> None:
    import json

    from sourcewise.doors.mcp_text import HIT_TEXT_CUT, STRUCTURED_BUDGET
    from sourcewise.doors.service import Service
    from sourcewise.session import Session

    settings = _settings(tmp_path, _long_docs())
    question = "How do I redeploy the previous tag with the rollback plan?"
    async with Session(settings) as session:
        whole = await Service(session).ask(question, sources=["kb"])
    before = len(json.dumps(whole.model_dump(mode="json"), ensure_ascii=False))
    assert before > 2 * STRUCTURED_BUDGET  # else this test proves nothing
    async with Client(build_server(settings)) as client:
        asked = await client.call_tool("ask", {"question": question, "sources": ["kb"]})
        got = await client.call_tool(
            "retrieve", {"task": "change the rollback plan steps", "sources": ["kb"]}
        )
    for result, keep in ((asked, "sources"), (got, "candidates")):
        assert not result.is_error, text_of(result)
        data = result.structured_content
        assert data is not None
        size = len(json.dumps(data, ensure_ascii=False))
        if keep == "sources":
            assert size < 0.6 * before, (size, before)
        assert any("cut to" in w and "location" in w for w in data["warnings"]), data["warnings"]
        cut = [h["hit"] for h in data["hits" if keep == "sources" else "considered"]]
        assert cut
        assert all(len(h["text"]) <= HIT_TEXT_CUT + 1 for h in cut)
        assert all(h["location"] and (h["snippet"] or h["text"]) for h in cut)
    # The cited sources are whole: the same text as the uncut answer's.
    data = asked.structured_content
    assert data is not None
    assert [s["hit"]["text"] for s in data["sources"]] == [s.hit.text for s in whole.sources]
    assert any(len(s.hit.text) > HIT_TEXT_CUT for s in whole.sources)


@given(st.text(max_size=200))
def test_door_text_refuses_exactly_the_control_characters(text: str) -> None:
    import unicodedata

    from sourcewise.doors.errors import door_text
    from sourcewise.errors import InvalidQuery

    controls = [c for c in text if unicodedata.category(c) == "Cc" and c not in "\t\n\r"]
    if controls:
        with pytest.raises(InvalidQuery, match=f"U\\+{ord(controls[0]):04X}"):
            door_text(text, "the query")
    else:
        assert door_text(text, "the query") == text


@given(
    st.lists(
        st.fixed_dictionaries(
            {"loc": st.lists(st.one_of(st.text(max_size=10), st.integers()), max_size=4), "msg": st.text()},
            optional={"type": st.sampled_from(["too_short", "int_type", "missing"])},
        ),
        max_size=5,
    )
)
def test_describe_problems_takes_any_error_list(errors: list[dict[str, Any]]) -> None:
    from sourcewise.doors.errors import describe_problems

    line = describe_problems(errors)
    for err in errors:
        assert err["msg"] in line or "give at least one source" in line
