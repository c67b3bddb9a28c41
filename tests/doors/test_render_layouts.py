"""Issue 24 item 5: seed 000's three layouts in the question's language, the grounded answer in
each, and the key points of each source in the deep dive."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sourcewise import rate_source
from sourcewise.doors.render import key_points, render
from sourcewise.models import SearchResponse, SearchResult

SNIPPET = (
    "Server Components are a new type of Component. They render ahead of time. "
    "React Server Components run on the server, not in the browser."
)


def _result(url: str, title: str, snippet: str, query: str) -> SearchResult:
    rating = rate_source(url, query)
    return SearchResult(
        title=title,
        url=url,
        canonical_url=url,
        snippet=snippet,
        tier=rating.tier,
        reliability_score=rating.reliability_score,
        reason=rating.reason,
        providers=(),
    )


def _response(query: str, answer: str | None = None) -> SearchResponse:
    results = (
        _result("https://react.dev/reference/rsc/server-components", "Server Components", SNIPPET, query),
        _result("https://blog.reactjs.org/2020/x", "React blog", "A post on the blog.", query),
        _result("https://stackoverflow.com/questions/1/rsc", "RSC on SO", "How do RSC work?", query),
        _result("https://medium.com/@a/rsc", "RSC explained", "My notes on RSC.", query),
    )
    return SearchResponse(query=query, strategy="default", results=results, provider="x", answer=answer)


@pytest.mark.parametrize(
    ("fmt", "korean", "english"),
    [
        ("quick", ["## 답변", "## 참고 링크", "[공식 문서]", "[준공식]", "[커뮤니티]", "[전문가 블로그]", "신뢰도"], ["## Answer", "## References"]),
        ("deep", ["## 공식 문서 (Tier 1)", "## 준공식 (Tier 2)", "## 커뮤니티 (Tier 3)", "## 전문가 블로그 (Tier 4)", "- 신뢰도:", "주요 내용:"], ["## Official docs (Tier 1)", "Key points:", "reliability:"]),
        ("progressive", ["## 초기 검색 결과 (Top 4)", "더 알아보고 싶은 영역:", "공식 문서 상세 보기"], ["## Initial results (Top 4)", "Explore further:"]),
    ],
)  # fmt: skip
def test_layouts_speak_the_question_s_language(fmt: str, korean: list[str], english: list[str]) -> None:
    ko = render(_response("리액트 서버 컴포넌트"), fmt)
    en = render(_response("React Server Components"), fmt)
    for said in korean:
        assert said in ko, said
        assert said not in en, said
    for said in english:
        assert said in en, said
        assert said not in ko, said
    assert "Sources:" in ko  # the seed's layouts end with Sources: in Korean too


@pytest.mark.parametrize("fmt", ["quick", "deep", "progressive"])
@pytest.mark.parametrize(
    ("query", "heading"), [("React Server Components", "## Answer"), ("리액트 서버", "## 답변")]
)
def test_every_layout_leads_with_the_grounded_answer(fmt: str, query: str, heading: str) -> None:
    text = render(
        _response(query, answer="RSC render on the server [1].\n\nSources:\n[1] React (https://react.dev)"),
        fmt,
    )
    assert text.startswith(f"{heading}\n\nRSC render on the server [1].")


def test_deep_dive_lists_the_best_sentences_of_each_source_as_key_points() -> None:
    text = render(_response("React Server Components server"), "deep")
    block = text.split("Key points:\n", 1)[1].split("\n\n", 1)[0]
    assert block.splitlines() == [
        "- Server Components are a new type of Component.",
        "- React Server Components run on the server, not in the browser.",
    ]  # "They render ahead of time." names none of the query's words


def test_key_points_fall_back_to_the_first_sentence_and_are_bounded() -> None:
    assert key_points("Nothing in common here. Nor here.", "kubernetes") == ["Nothing in common here."]
    assert key_points("", "kubernetes") == []
    many = " ".join(f"Kubernetes fact {i}." for i in range(10))
    assert len(key_points(many, "kubernetes fact")) == 3


@given(st.text(max_size=300), st.text(max_size=60))
def test_key_points_of_hostile_text(snippet: str, query: str) -> None:
    points = key_points(snippet, query)
    assert len(points) <= 3
    assert all(p.strip() for p in points)


def test_a_grounded_quick_answer_keeps_the_seeds_layout_in_korean() -> None:
    """The provider's answer is the 답변; its sources, rated, are the 참고 링크, then Sources:."""
    text = render(_response("리액트 서버 컴포넌트", answer="RSC는 서버에서 렌더링됩니다 [1]."), "quick")
    answer, rest = text.split("## 참고 링크\n\n", 1)
    assert answer == "## 답변\n\nRSC는 서버에서 렌더링됩니다 [1].\n\n"
    assert rest.startswith("- [공식 문서] Server Components (tier 1, 신뢰도 ")
    assert "\nSources:\n- [Server Components](https://react.dev/reference/rsc/server-components)" in rest


@pytest.mark.parametrize("fmt", ["quick", "deep", "progressive"])
def test_a_grounded_answer_without_sources_is_still_shown(fmt: str) -> None:
    response = _response("React Server Components", answer="RSC render on the server.")
    empty = response.model_copy(update={"results": ()})
    assert render(empty, fmt) == "## Answer\n\nRSC render on the server."
    assert render(_response("React Server Components").model_copy(update={"results": ()}), fmt) == (
        "No results for 'React Server Components'."
    )


def test_key_points_of_a_korean_source_for_a_korean_question() -> None:
    snippet = (
        "리액트 서버 컴포넌트는 서버에서 렌더링됩니다. 날씨가 좋습니다. 서버 컴포넌트는 번들 크기를 줄입니다."
    )
    assert key_points(snippet, "리액트 서버 컴포넌트") == [
        "리액트 서버 컴포넌트는 서버에서 렌더링됩니다.",
        "서버 컴포넌트는 번들 크기를 줄입니다.",
    ]  # the weather names none of the question's words


def test_a_page_is_rendered_alike_in_every_door_with_the_doors_own_next_slice_hint() -> None:
    from datetime import UTC, datetime

    from sourcewise.doors.present import render_page
    from sourcewise.models import Page, Passage

    page = Page(
        url="https://docs.python.org/3/library/os.html",
        requested_url="https://docs.python.org/3/library/os.html",
        title="os — Miscellaneous",
        content_type="text/html",
        content="x" * 100,
        start=0,
        next_start=100,
        total_chars=250,
        tier=1,
        reliability_score=95,
        reason="official",
        fetched_at=datetime(2026, 11, 28, tzinfo=UTC),
        passages=[Passage(index=0, start=10, end=20, score=1.5, text="the passage")],
    )
    cli = render_page(page, lambda at: f"--start {at}")
    mcp = render_page(page, lambda at: f"call web_fetch with url={page.url!r} and start={at}")
    assert cli.split("\n")[:-1] == mcp.split("\n")[:-1]  # one rendering; only the hint differs
    assert cli.endswith("[150 more characters: --start 100]")
    assert mcp.endswith(f"[150 more characters: call web_fetch with url={page.url!r} and start=100]")
    assert "[10-20, score 1.5] the passage" in cli
    assert "characters 0-100 of 250" in cli
