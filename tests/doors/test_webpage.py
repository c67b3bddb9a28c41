"""The web page at ``/`` in a real browser: Playwright driving Debian's chromium against a real
server on 127.0.0.1, over a knowledge base this test writes. Skips cleanly without either."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sourcewise import load_settings
from sourcewise.doors.http import create_app
from sourcewise.doors.service import DoorSettings
from sourcewise.sources.kb.source import KnowledgeBase

from doorkit import JSON, SMALL, uvicorn_thread
from servers import LocalServer, Reply

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROTATION = """# Key rotation

The signing keys are rotated every 90 days by the rotate-keys job.
After a rotation, old tokens stay valid for one day.
"""
EVIL = """# <script>window.__pwned = 1</script> Quarantine <img src=x onerror="window.__pwned=2">

The quarantine bucket keeps flagged uploads for thirty days <script>window.__pwned = 3</script>,
as the `<script>window.__pwned = 4</script>` setting says.
"""
# Raw tags are markup the answer cleans away; inside inline code they are text the page must escape.


@pytest.fixture
def site(server: LocalServer, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """The server (with an API key) over a knowledge base of two files; (base URL, key)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rotation.md").write_text(ROTATION, encoding="utf-8")
    (docs / "quarantine.md").write_text(EVIL, encoding="utf-8")
    state = tmp_path / "state"
    state.mkdir()
    with KnowledgeBase(state / "kb.sqlite3", semantic=False) as kb:
        assert len(kb.index([docs]).added) == 2
    server.route("/sx/search", Reply(200, SMALL, content_type=JSON))
    settings = load_settings(
        providers=["searxng"],
        provider_options={"searxng": {"url": f"{server.url}/sx"}},
        sources={"kb": {"semantic": False}},
        state_dir=state,
        timeout=5,
    )
    key = "page-key-123"
    with uvicorn_thread(create_app(settings, DoorSettings(api_key=key))) as url:
        yield url, key


@pytest.fixture
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.is_file():
        pytest.skip("Debian's chromium is not installed (/usr/bin/chromium)")
    with sync_api.sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


def _ask(browser: Any, url: str, key: str, question: str) -> Any:
    context = browser.new_context(http_credentials={"username": "me", "password": key})
    page = context.new_page()
    page.goto(f"{url}/")
    page.keyboard.press("Tab")  # keyboard only: the question field has the focus
    page.locator("#q").fill(question)
    page.keyboard.press("Enter")
    page.wait_for_selector("#reports", timeout=60_000)
    return page


def test_the_page_answers_with_cited_linked_sources_and_reports(browser: Any, site: tuple[str, str]) -> None:
    url, key = site
    page = _ask(browser, url, key, "How often are the signing keys rotated?")
    answer = page.locator("#answer").inner_text()
    assert "90 days" in answer
    assert "[1]" in answer
    marker = page.locator("#answer a").first
    assert marker.get_attribute("href") == "#source-1"
    first = page.locator("#source-1").inner_text()
    assert "rotation.md" in first
    assert "#L" in first  # the file path with its lines
    reports = page.locator("#reports").inner_text()
    assert "kb" in reports
    assert "answered" in reports
    page.locator("#index-status summary").focus()
    page.keyboard.press("Enter")  # the index status opens from the keyboard
    assert "kb (knowledge base): ready - 2 files" in page.locator("#index-status").inner_text()
    page.context.close()


def test_the_page_escapes_what_the_sources_hold(browser: Any, site: tuple[str, str]) -> None:
    url, key = site
    page = _ask(browser, url, key, "What does the quarantine bucket keep? <b>bold</b>")
    assert page.evaluate("window.__pwned === undefined")  # no script from a document ran
    text = page.locator("main").inner_text()
    assert "<script>window.__pwned = 4</script>" in text  # inline code: shown as text, not run
    assert page.locator("main b").count() == 0  # the question's markup is text too
    assert page.locator("#q").input_value().endswith("<b>bold</b>")
    page.context.close()


def test_the_page_stands_behind_the_key(site: tuple[str, str]) -> None:
    url, key = site
    refused = httpx.get(f"{url}/", params={"q": "keys"})
    assert refused.status_code == 401
    assert 'Basic realm="sourcewise"' in refused.headers.get_list("www-authenticate")
    wrong = httpx.get(f"{url}/", auth=("me", "not-the-key"))
    assert wrong.status_code == 401
    shown = httpx.get(f"{url}/", auth=("me", key))
    assert shown.status_code == 200
    assert "default-src 'none'" in shown.headers["content-security-policy"]
    assert httpx.get(f"{url}/docs").status_code == 200  # the API's documentation stays open


def test_the_api_documentation_works_offline(site: tuple[str, str]) -> None:
    url, _ = site
    docs = httpx.get(f"{url}/docs").text
    assert "cdn" not in docs.lower()
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert f"/static-offline-docs/{asset}" in docs
        assert httpx.get(f"{url}/static-offline-docs/{asset}").status_code == 200
    redoc = httpx.get(f"{url}/redoc").text
    assert "/static-offline-docs/redoc.standalone.js" in redoc
    assert "cdn" not in redoc.lower()


def test_a_body_that_is_not_json_gets_a_plain_message(site: tuple[str, str]) -> None:
    url, key = site
    response = httpx.post(
        f"{url}/ask", content=b"question=hi", headers={"authorization": f"Bearer {key}", "content-type": JSON}
    )
    assert response.status_code == 422
    message = response.json()["error"]["message"]
    assert message.startswith("body: not valid JSON")
    assert "decode" not in message
