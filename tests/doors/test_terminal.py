"""Issue 7 item 4: text from outside never reaches a terminal with its control characters;
JSON output stays faithful (the same values, escaped)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_cli import run

from servers import LocalServer, Reply

HOSTILE_TITLE = "Docs\x1b[2J\x1b]0;pwned\x07 title\u202egnp.exe\x9b31m"
HOSTILE_SNIPPET = "Snippet \x1b[31mred\x1b[0m text\x00\x08 with\x85 controls \u2066isolate\u2069."
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
BODY = json.dumps(
    {
        "query": "x",
        "results": [
            {"url": "https://react.dev/learn", "title": HOSTILE_TITLE, "content": HOSTILE_SNIPPET},
            {"url": "https://example.org/a", "title": "Plain", "content": "Plain text."},
        ],
    }
)


@pytest.fixture
def hostile(server: LocalServer) -> LocalServer:
    server.route("/search", Reply(200, BODY, content_type="application/json"))
    return server


@pytest.mark.parametrize("fmt", ["quick", "deep", "progressive"])
def test_text_formats_strip_controls(fmt: str, hostile: LocalServer, tmp_path: Path) -> None:
    out = run(
        ["search", "react docs", "--format", fmt, "-v"],
        tmp_path,
        SEARXNG_URL=hostile.url,
        SOURCEWISE_PROVIDERS="searxng",
    )
    assert out.returncode == 0, out.stderr
    assert "Docs" in out.stdout
    assert not UNSAFE.search(out.stdout), repr(out.stdout)
    # escape sequences go whole: no "[2J", "]0;pwned" or "[31m" left behind by a lone ESC removed
    # ESC sequences go whole; an 8-bit control (the title's U+009B) goes alone, its "31m" is text
    assert not re.search(r"\[2J|pwned|\[31m|\[0m", out.stdout), repr(out.stdout)
    assert not UNSAFE.search(out.stderr.replace("\n", "")), repr(out.stderr)


def test_json_stays_faithful_and_safe(hostile: LocalServer, tmp_path: Path) -> None:
    out = run(
        ["search", "react docs", "--json"], tmp_path, SEARXNG_URL=hostile.url, SOURCEWISE_PROVIDERS="searxng"
    )
    assert out.returncode == 0, out.stderr
    assert not UNSAFE.search(out.stdout.replace("\n", ""))
    data = json.loads(out.stdout)
    results = data["results"] if isinstance(data, dict) else data
    titles = [r["title"] for r in results]
    assert any("\x1b[2J" in t and "\u202e" in t for t in titles)


def test_fetched_page_title_and_content_are_stripped(server: LocalServer, tmp_path: Path) -> None:
    page = (
        "<html><head><title>T\x1b]0;owned\x07itle</title></head><body><article><p>"
        + "Body text with an escape \x1b[2J inside and enough words to be the main content. " * 5
        + "</p></article></body></html>"
    )
    server.route("/p", Reply(200, page))
    out = run(["fetch", f"{server.url}/p", "--allow-private"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Body text" in out.stdout
    assert not UNSAFE.search(out.stdout.replace("\n", "").replace("\t", ""))


def test_lone_surrogate_argument_is_a_clean_error(tmp_path: Path) -> None:
    out = run(["rate", "https://a.com/?q=\udcff"], tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith("error:")
    assert "Traceback" not in out.stderr


def test_a_kb_heading_with_escape_sequences_shows_as_its_words(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "n.md").write_text(
        "# Title\x1b]0;PWNED\x07 with \x1b[31mred\x1b[0m\n\nThe wombat rotation is monthly.\n", "utf-8"
    )
    assert run(["index", str(notes), "--no-semantic"], tmp_path).returncode == 0
    out = run(["search", "wombat rotation", "-S", "kb", "--format", "deep"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "Title with red" in out.stdout, out.stdout
    assert not re.search(r"PWNED|\[31m|\[0m|\]0;", out.stdout), out.stdout
