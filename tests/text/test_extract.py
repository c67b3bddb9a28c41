"""Pure extraction: charsets, pass-through, empty pages, challenges; and the render formats."""

from __future__ import annotations

import codecs
import json

import pytest

from sourcewise import ChallengePage, EmptyContent, UnsupportedContent
from sourcewise.doors.render import render
from sourcewise.models import SearchResponse, SearchResult
from sourcewise.text.extract import decode, extract

URL = "https://example.com/page"


def test_byte_order_mark_wins() -> None:
    body = codecs.BOM_UTF8 + "<p>안녕하세요</p>".encode()
    assert decode(body, "iso-8859-1", html=True) == "<p>안녕하세요</p>"


def test_json_that_is_not_json_passes_through() -> None:
    assert extract(b"{not json", "application/json", URL).text == "{not json"
    assert json.loads(extract(b'{"a":1}', "application/problem+json", URL).text) == {"a": 1}


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(b"", "text/plain"), (b"   \n ", "text/plain"), (b"<html><body></body></html>", "text/html")],
)
def test_empty_pages_are_an_error_not_empty_content(body: bytes, content_type: str) -> None:
    with pytest.raises(EmptyContent):
        extract(body, content_type, URL)


def test_sniffing_when_the_type_is_missing() -> None:
    assert (
        "hello"
        in extract(
            b"<html><body><article><p>hello there, this is the text</p></article></body></html>", "", URL
        ).text
    )
    with pytest.raises(UnsupportedContent):
        extract(b"%PDF-1.4 broken", "application/octet-stream", URL)


def test_challenge_in_plain_text() -> None:
    with pytest.raises(ChallengePage):
        extract(b"Our systems have detected unusual traffic from your computer network.", "text/plain", URL)


def _response(*titles: str) -> SearchResponse:
    results = tuple(
        SearchResult(
            title=t,
            url=f"https://docs.example.com/{i}",
            canonical_url=f"https://docs.example.com/{i}",
            snippet=f"Sentence {i} about it. More text.",
            tier=1,
            reliability_score=95,
            reason="r",
        )
        for i, t in enumerate(titles)
    )
    return SearchResponse(query="q", results=results)


def test_quick_answer_cites_and_escapes() -> None:
    text = render(_response("Guide [beta]", "Other"), "quick")
    assert "Sentence 0 about it. [1] Sentence 1 about it. [2]" in text
    assert "[Guide \\[beta\\]](https://docs.example.com/0)" in text
    assert text.rstrip().endswith("- [Other](https://docs.example.com/1)")


def test_empty_response_in_every_format() -> None:
    empty = SearchResponse(query="zzz", results=())
    assert render(empty, "json") == "[]"
    for fmt in ("quick", "deep", "progressive"):
        assert "No results" in render(empty, fmt)


# -- issue 7 item 14: WHATWG encoding rules and mojibake ------------------------------------

CP1252_TEXT = "“Quoted” words — it’s the smart punctuation of windows-1252, café."


@pytest.mark.parametrize("media", ["text/html", "text/plain"])
def test_iso_8859_1_label_means_windows_1252(media: str) -> None:
    body = f"<html><body><p>{CP1252_TEXT}</p></body></html>" if media == "text/html" else CP1252_TEXT
    got = decode(body.encode("cp1252"), "iso-8859-1", html=media == "text/html")
    assert "“Quoted” words — it’s" in got


def test_meta_declared_latin1_is_windows_1252() -> None:
    body = b'<html><head><meta charset="ISO-8859-1"></head><body>' + CP1252_TEXT.encode("cp1252")
    assert "“Quoted”" in decode(body, None, html=True)


@pytest.mark.parametrize(
    ("declared", "html"), [("iso-8859-1", True), ("iso-8859-1", False), ("windows-1252", True)]
)
def test_utf8_labelled_as_latin1_is_not_mojibake(declared: str, html: bool) -> None:
    got = decode("café “naïve” résumé — 한국어".encode(), declared, html=html)
    assert got == "café “naïve” résumé — 한국어"
    assert "Ã" not in got


def test_a_date_said_only_in_the_prose_is_not_searched_for() -> None:
    """Page metadata without htmldate's extensive search: its last resort hands the text's
    date-like strings to dateparser, whose every locale loads on first use (~4 s of CPU in each
    process; Debian's nettle.html 6.5 -> 2.1 s). The trade, measured on the extraction benchmark's
    181 real pages: 2 dates that only the prose gave are not found; a date in the markup still is."""
    prose = (
        "<html><head><title>Notes</title></head><body><article><h1>Release notes</h1>"
        "<p>We shipped the new parser. Thanks to everyone who tested it over the winter months.</p>"
        "<p>Written on 3 March 2019 by the team, after the long review of every open report.</p>"
        "</article></body></html>"
    )
    assert extract(prose.encode(), "text/html", "file:///notes.html").published is None
    tagged = prose.replace("<head>", '<head><meta property="article:published_time" content="2019-03-03">')
    assert extract(tagged.encode(), "text/html", "file:///notes.html").published == "2019-03-03"
