"""Issue 24 item 3: sources out of an agent's prose answer (markdown links, numbered lists,
``Sources:`` blocks), the answer kept as written."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sourcewise.web.prose import read_prose


def test_a_sources_block_of_numbered_titles_and_urls() -> None:
    text = (
        "Use the async API [1]. Streams are covered too [2].\n\n"
        "**Sources:**\n"
        "[1] asyncio - Python docs (https://docs.python.org/3/library/asyncio.html)\n"
        "[2]: https://docs.python.org/3/library/asyncio-stream.html\n"
    )
    read = read_prose(text, "mcp")
    assert [(r.position, r.title, r.url) for r in read.results] == [
        (1, "asyncio - Python docs", "https://docs.python.org/3/library/asyncio.html"),
        (2, "", "https://docs.python.org/3/library/asyncio-stream.html"),
    ]
    assert [r.snippet for r in read.results] == ["Use the async API.", "Streams are covered too."]
    assert read.answer == text.strip()  # the [n] markers keep their sources list


def test_numbered_markdown_links_and_a_korean_heading() -> None:
    text = (
        "리액트 서버 컴포넌트는 서버에서 렌더링됩니다.\n\n"
        "1. [Server Components – React](https://react.dev/reference/rsc/server-components) - 공식 문서\n"
        "2. https://dev.to/someone/understanding-rsc\n\n"
        "참고 링크:\n- <https://stackoverflow.com/questions/1/rsc>\n"
    )
    read = read_prose(text, "gemini-cli")
    assert [r.url for r in read.results] == [
        "https://stackoverflow.com/questions/1/rsc",
        "https://react.dev/reference/rsc/server-components",
        "https://dev.to/someone/understanding-rsc",
    ]
    assert read.results[1].snippet == "공식 문서"
    assert read.answer.startswith("리액트 서버 컴포넌트는")


def test_links_in_the_text_are_sources_once_each() -> None:
    text = "See [the docs](https://react.dev/learn) and [again](https://react.dev/learn), or <https://vuejs.org/guide/>."
    read = read_prose(text, "mcp")
    assert [(r.title, r.url) for r in read.results] == [
        ("the docs", "https://react.dev/learn"),
        ("", "https://vuejs.org/guide/"),
    ]


def test_no_links_no_sources_and_other_schemes_are_not_sources() -> None:
    assert read_prose("I could not find anything.", "mcp").results == []
    assert read_prose("[x](javascript:alert(1)) and [y](ftp://a.b/c)", "mcp").results == []


@given(st.text(max_size=400))
def test_hostile_prose_gives_http_sources_or_none(text: str) -> None:
    read = read_prose(text, "mcp")
    assert all(r.url.startswith(("http://", "https://")) for r in read.results)
    assert [r.position for r in read.results] == list(range(1, len(read.results) + 1))
    assert len(read.answer) <= len(text)


def test_a_url_with_balanced_parentheses_is_read_whole() -> None:
    """Wikipedia's titles hold parentheses; a closing one of the sentence is not the URL's."""
    wiki = "https://en.wikipedia.org/wiki/Rust_(programming_language)"
    text = (
        f"Rust is a language ([Rust]({wiki})).\n\nSources:\n[1] Rust ({wiki})\n[2] https://example.org/Foo)."
    )
    read = read_prose(text, "mcp")
    assert [r.url for r in read.results] == [wiki, "https://example.org/Foo"]


def test_footnotes_and_bare_urls_in_the_text_are_sources() -> None:
    text = (
        "RSC run on the server.[^1] The guide is at https://nextjs.org/docs/app.\n\n"
        "[^1]: https://react.dev/reference/rsc/server-components"
    )
    read = read_prose(text, "mcp")
    assert [r.url for r in read.results] == [
        "https://react.dev/reference/rsc/server-components",
        "https://nextjs.org/docs/app",
    ]
    assert read.results[0].snippet == "RSC run on the server."  # the sentence citing [^1]
