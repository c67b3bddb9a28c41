"""Seed 001 routing: the seed's example tables, misfires, Korean particles, order of signals."""

from __future__ import annotations

from datetime import date

import pytest

from sourcewise import InvalidQuery, extract_urls, load_settings, route

TODAY = date(2026, 11, 21)


@pytest.mark.parametrize(
    ("question", "keywords", "query"),
    [  # seed 001 section 3.1, with the year taken from `today`
        ("AI 헬스케어 최신 트렌드", {"최신", "ai"}, "AI 헬스케어 트렌드 2026"),
        ("2025년 SaaS 시장 규모", {"2025", "시장", "규모"}, "2025 SaaS 시장 규모"),
        ("경쟁사 벤치마크 분석", {"경쟁사", "벤치마크"}, "경쟁사 벤치마크 2026"),
        ("요즘 핫한 배달앱 기능", {"요즘", "핫한"}, "배달앱 기능 트렌드 2026"),
    ],
)
def test_seed_searches(question: str, keywords: set[str], query: str) -> None:
    decision = route(question, today=TODAY)
    assert decision.action == "search"
    found = {k for kind in ("recency", "external") for k in decision.signals[kind]}
    assert keywords <= found
    assert decision.query == query
    assert all(k.lower() in decision.reason.lower() for k in keywords)


@pytest.mark.parametrize(
    ("question", "why"),
    [  # seed 001 section 3.2
        ("점심 메뉴 추천 앱", "general request"),
        ("사내 규정 기반 시스템", "internal"),
        ("우리 회사 프로세스 개선", "internal"),
    ],
)
def test_seed_skips(question: str, why: str) -> None:
    decision = route(question, today=TODAY)
    assert decision.action == "skip"
    assert why in decision.reason
    assert decision.query is None


def test_url_is_fetched_not_searched() -> None:
    decision = route("https://example.com 참고", today=TODAY)
    assert decision.action == "fetch"
    assert decision.urls == ["https://example.com"]


@pytest.mark.parametrize(
    "question",
    ["painting lessons for kids", "knowledge sharing tips", "snowy mountain photos", "maintain a garden"],
)
def test_words_not_substrings(question: str) -> None:
    # "ai" in painting/maintain, "now" in knowledge/snowy must not fire
    decision = route(question, today=TODAY)
    assert decision.action == "skip", decision.reason


@pytest.mark.parametrize(
    ("question", "kind", "word"),
    [
        ("AI 시장을 분석해줘", "external", "시장"),
        ("헬스케어 트렌드가 궁금해", "recency", "트렌드"),
        ("사내규정에서 휴가 일수", "internal", "사내규정"),
        ("회사의 복리후생 제도", "internal", "회사"),
    ],
)
def test_korean_particles(question: str, kind: str, word: str) -> None:
    decision = route(question, today=TODAY, settings=load_settings(internal_keywords=["사내규정"]))
    assert word in decision.signals[kind]


def test_english_internal_words() -> None:
    for question in ("What is our company policy on remote work?", "internal handbook for onboarding"):
        assert route(question, today=TODAY).action == "skip"


def test_mixed_korean_english() -> None:
    decision = route("React 19 최신 기능 정리", today=TODAY)
    assert decision.action == "search"
    assert decision.query == "React 19 기능 2026"


def test_signal_order_internal_beats_recency() -> None:
    # documented order: URLs, internal, recency, external
    decision = route("우리 회사 최신 규정", today=TODAY)
    assert decision.action == "skip"
    assert decision.signals["recency"] == ["최신"]
    url_first = route("사내 규정 https://wiki.example.com/rules 확인", today=TODAY)
    assert url_first.action == "fetch"


def test_year_comes_from_today_and_old_years_are_not_recent() -> None:
    assert route("latest Python release", today=date(2031, 1, 2)).query == "Python release 2031"
    assert route("2008 financial crisis causes", today=TODAY).action == "skip"


def test_config_extends_keywords() -> None:
    settings = load_settings(
        recency_keywords=["새로운"], external_keywords=["글로벌"], internal_keywords=["우리팀"]
    )
    assert route("우리팀 온보딩", today=TODAY, settings=settings).action == "skip"
    assert route("drone regulations worldwide", today=TODAY).action == "skip"
    custom = load_settings(external_keywords=["regulations"])
    assert route("drone regulations worldwide", today=TODAY, settings=custom).action == "search"


def test_bad_question() -> None:
    with pytest.raises(InvalidQuery):
        route("  ", today=TODAY)


@pytest.mark.parametrize(
    ("text", "urls"),
    [
        ("see https://ko.wikipedia.org/wiki/리액트를 참고", ["https://ko.wikipedia.org/wiki/리액트"]),
        ("docs.python.org/3/whatsnew/3.13.html에서 확인", ["https://docs.python.org/3/whatsnew/3.13.html"]),
        (
            "www.naver.com이랑 example.com/page?x=1, https://x.com참고",
            ["https://www.naver.com", "https://example.com/page?x=1", "https://x.com"],
        ),
        ("(https://en.wikipedia.org/wiki/Foo_(bar)).", ["https://en.wikipedia.org/wiki/Foo_(bar)"]),
        ("Node.js와 ASP.NET, main.py, README.md, mail a@b.com", []),
        ("https://a.example/x, https://a.example/x again", ["https://a.example/x"]),
    ],
)
def test_extract_urls(text: str, urls: list[str]) -> None:
    assert extract_urls(text) == urls


@pytest.mark.parametrize(
    "question",
    [
        "What changed in Python 3.14?",  # issue 12's example
        "What's new in React 19?",
        "what is new in Django",
        "What has changed in Node.js 22?",
        "Python 3.14 변경사항 알려줘",
    ],
)
def test_release_questions_need_the_web(question: str) -> None:
    decision = route(question, today=TODAY)
    assert decision.action == "search", decision.reason
    assert "recency" in decision.reason


@pytest.mark.parametrize(
    "question",
    [
        "What changed in our deploy process?",
        "What changed in the config file?",
        "What is the new hire process?",
    ],
)
def test_a_change_without_a_version_is_no_recency_signal(question: str) -> None:
    assert route(question, today=TODAY).action == "skip"
