"""Issue 29, items 3-4 at the doors: a source that fails reaches a remote caller with its name and
kind, never its file path; ``retrieve`` whose every source failed is a 503 / exit 3, as ``ask``.

On the code before: ``/sources/search``, ``/ask``, ``/retrieve`` and the MCP tools printed
``gone: /srv/.../no-such-secret-path does not exist`` to the caller, and ``/retrieve`` answered
200 (the CLI exit 0, "nothing relevant found") when every source had failed.
"""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from test_cli import run

from sourcewise import KnowledgeBase, load_settings
from sourcewise.config import Settings
from sourcewise.doors.http import create_app
from sourcewise.doors.mcp import build_server
from sourcewise.doors.safe import door_safe
from sourcewise.doors.service import DoorSettings

from doorkit import uvicorn_thread

HIDDEN = "no-such-secret-path"


def rollback_state(tmp_path: Path) -> Path:
    """A state folder whose knowledge base holds one note on rolling back a deployment."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text("# Rollback\n\nTo roll back a deployment, redeploy the previous tag.\n")
    state = tmp_path / "state"
    with KnowledgeBase(state / "kb.sqlite3", semantic=False) as base:
        base.index([docs])
    return state


def _settings(tmp_path: Path) -> Settings:
    state = rollback_state(tmp_path)
    gone = str(tmp_path / "srv" / "mail" / HIDDEN)
    return load_settings(
        state_dir=state, providers=["searxng"],
        sources={"gone": {"type": "mail", "path": gone}, "notes": {"type": "kb"}},
    )  # fmt: skip


def _clean(text: str) -> None:
    assert HIDDEN not in text
    assert "/srv/" not in text
    assert "/tmp" not in text


def test_http_errors_name_the_source_never_its_path(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    settings = _settings(tmp_path)
    caplog.set_level(logging.INFO, logger="sourcewise")
    with uvicorn_thread(create_app(settings, DoorSettings())) as url:
        searched = httpx.post(f"{url}/sources/search", json={"query": "rollback", "sources": ["gone"]})
        asked = httpx.post(f"{url}/ask", json={"question": "How do I roll back?", "sources": ["gone"]})
        retrieved = httpx.post(f"{url}/retrieve", json={"task": "change the rollback", "sources": ["gone"]})
        partial = httpx.post(
            f"{url}/ask", json={"question": "How do I roll back?", "sources": ["gone", "kb"]}
        )
    assert searched.status_code == 503, searched.text
    assert asked.status_code == 503, asked.text
    assert retrieved.status_code == 503, retrieved.text  # was 200 with "nothing relevant found"
    assert partial.status_code == 200, partial.text
    for response in (searched, asked, retrieved):
        _clean(response.text)
    assert "gone" in searched.text
    assert {r["source"] for r in retrieved.json()["error"]["reports"]} == {"gone"}
    gone = next(r for r in partial.json()["reports"] if r["source"] == "gone")
    assert gone["status"] == "unavailable"
    _clean(gone["error"])  # the kb's hits keep their locations: they are the answer, not an error
    assert HIDDEN in caplog.text  # the operator's log keeps the detail


async def test_mcp_tools_name_the_source_never_its_path(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    async with Client(build_server(settings)) as client:
        for tool, args in (
            ("search_sources", {"query": "rollback", "sources": ["gone"]}),
            ("ask", {"question": "How do I roll back?", "sources": ["gone"]}),
            ("retrieve", {"task": "change the rollback steps", "sources": ["gone"]}),
        ):
            got = await client.call_tool(tool, args)
            assert got.is_error, (tool, got)
            text = " ".join(getattr(block, "text", "") for block in got.content)
            assert "gone" in text
            _clean(text)


def test_cli_retrieve_with_every_source_failing_exits_3(tmp_path: Path) -> None:
    out = run(["retrieve", "change the rollback steps", "--source", f"mail:{tmp_path / HIDDEN}"], tmp_path)
    assert out.returncode == 3, (out.stdout, out.stderr)
    assert "error: no source could answer" in out.stderr
    assert "Traceback" not in out.stderr


@given(
    st.text(max_size=60),
    st.sampled_from(
        ["/srv/mail/secret.mbox", "C:\\Users\\x\\mail", "~/notes/x.md", "https://u:p@h.example/x"]
    ),
)
def test_door_safe_text_never_holds_a_path_or_url(prefix: str, path: str) -> None:
    said = door_safe(f"{prefix} {path} does not exist")
    assert path not in said
    rest = said.replace(door_safe(prefix), "", 1)
    assert "secret" not in rest
    assert "u:p@" not in rest
    assert said.endswith(" does not exist")


@given(st.text(max_size=40), st.text(min_size=1, max_size=20))
def test_a_known_path_with_spaces_goes_whole(prefix: str, name: str) -> None:
    path = f"/srv/a b/{name}"
    said = door_safe(f"{prefix}{path} does not exist", hidden=[path])
    assert said == f"{door_safe(prefix)}<path> does not exist" or path not in said
