"""Issue 24 item 4: every door carries a grounded provider's answer, not only its results: the
MCP ``web_search`` text (what a model reads), HTTP ``/search`` and the CLI's formats. The answer
comes from a Gemini-style prose reply of a real MCP server started here (tests/mcp_search_server.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from sourcewise import load_settings
from sourcewise.config import Settings
from sourcewise.doors.http import create_app
from sourcewise.doors.mcp import build_server
from sourcewise.doors.service import DoorSettings

from clirun import run_cli
from doorkit import uvicorn_thread

SAID = "React Server Components render on the server and send no JavaScript to the client [1]."


@pytest.fixture(scope="module")
def search_server() -> Iterator[str]:
    """The MCP search server, once for the module over Streamable HTTP: each test started its own
    over stdio, seconds of imports apiece; the stdio transport is test_mcp_provider's."""
    from mcp_search_server import app

    with uvicorn_thread(app.streamable_http_app()) as base:
        yield f"{base}/mcp"


def grounded_settings(tmp_path: Path, search_server: str) -> Settings:
    options: dict[str, Any] = {
        "providers": ["mcp"],
        "provider_options": {
            "mcp": {"url": search_server, "tool": "gemini_prose", "arguments": {"q": "{query}"}}
        },
        "gemini_redirect_hosts": [],  # no resolving: no test reaches the internet
        "state_dir": tmp_path / "state",
        "timeout": 20.0,
    }
    return load_settings(**options)


async def test_mcp_web_search_text_carries_the_answer(tmp_path: Path, search_server: str) -> None:
    async with Client(build_server(grounded_settings(tmp_path, search_server))) as client:
        result = await client.call_tool("web_search", {"query": "react server components"})
    assert not result.is_error
    assert result.structured_content is not None
    assert SAID in result.structured_content["answer"]
    block = result.content[0]
    assert block.type == "text"
    assert "Answer from mcp" in block.text
    assert SAID in block.text
    assert block.text.index(SAID) < block.text.index("https://react.dev/reference/rsc/server-components")


async def test_mcp_web_search_compact_text_carries_the_answer_too(tmp_path: Path, search_server: str) -> None:
    async with Client(build_server(grounded_settings(tmp_path, search_server))) as client:
        result = await client.call_tool(
            "web_search", {"query": "react server components", "detail": "compact"}
        )
    assert not result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert SAID in text
    assert "[1] tier 1 " in text  # the results stay one line each
    assert text.index(SAID) < text.index("[1] tier 1 ")


def test_http_search_carries_the_answer(tmp_path: Path, search_server: str) -> None:
    with uvicorn_thread(create_app(grounded_settings(tmp_path, search_server), DoorSettings())) as url:
        response = httpx.post(f"{url}/search", json={"query": "react server components"}, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    assert SAID in body["answer"]
    assert body["results"][0]["tier"] == 1


def _cli(tmp_path: Path, search_server: str, *args: str) -> str:
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("SOURCEWISE_")}
    env.update(
        SOURCEWISE_PROVIDERS="mcp",
        SOURCEWISE_MCP_URL=search_server,
        SOURCEWISE_MCP_TOOL="gemini_prose",
        SOURCEWISE_MCP_ARGUMENTS=json.dumps({"q": "{query}"}),
        SOURCEWISE_GEMINI_REDIRECT_HOSTS="",
        SOURCEWISE_STATE_DIR=str(tmp_path / "state"),
        SOURCEWISE_TIMEOUT="20",
    )
    out = run_cli(["search", *args], env)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_cli_quick_layout_carries_the_answer_under_the_seeds_headings(
    tmp_path: Path, search_server: str
) -> None:
    out = _cli(tmp_path, search_server, "react server components")
    assert out.startswith("## Answer\n\n")
    assert SAID in out
    references = out.split("## References\n\n", 1)[1]
    assert references.startswith("- [official docs] ")  # rated, not numbered: the answer's [n] are its own
    assert "\nSources:\n- [" in references


def test_cli_json_carries_the_answer(tmp_path: Path, search_server: str) -> None:
    out = json.loads(_cli(tmp_path, search_server, "react server components", "--json"))
    assert SAID in out["answer"]
    assert out["results"][0]["tier"] == 1


def test_cli_deep_dive_carries_the_answer(tmp_path: Path, search_server: str) -> None:
    out = _cli(tmp_path, search_server, "react server components", "--format", "deep")
    assert out.startswith("## Answer")
    assert SAID in out
    assert "## Official docs (Tier 1)" in out


def test_cli_progressive_in_korean_carries_the_answer_under_korean_headings(
    tmp_path: Path, search_server: str
) -> None:
    out = _cli(tmp_path, search_server, "리액트 서버 컴포넌트", "--format", "progressive")
    assert out.startswith("## 답변")
    assert SAID in out
    assert "## 초기 검색 결과" in out
    assert "더 알아보고 싶은 영역:" in out
