"""Output formats of seed 000: quick answer, deep dive, progressive discovery, and JSON.

The text layouts speak the question's language: a question in Hangul gets the seed's Korean
headings and labels (답변, 참고 링크, 공식 문서 / 준공식 / 커뮤니티 / 전문가 블로그, 신뢰도), any other
English. A grounded provider's own answer leads every layout, and the deep dive lists the key
points of each source: the sentences of its snippet that best match the query (BM25)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from sourcewise.answer.extractive import sentences
from sourcewise.doors.formats import FORMATS
from sourcewise.errors import InvalidOption
from sourcewise.models import SearchResponse, SearchResult
from sourcewise.text.analyze import analyze, query_terms
from sourcewise.text.passages import bm25_scores
from sourcewise.text.words import is_hangul, json_safe, printable

__all__ = ["ENGLISH", "KOREAN", "Words", "key_points", "render", "words_for"]


_SENTENCE = re.compile(r"(?<=[.!?。])\s+")
KEY_POINTS = 3  # sentences of a source listed under its key points in the deep dive


@dataclass(frozen=True)
class Words:
    """The headings and labels of the layouts in one language (seed 000 writes them in Korean)."""

    answer: str
    references: str
    tiers: dict[int, str]  # section headings of the deep dive
    labels: dict[int, str]  # [label] before a reference
    reliability: str
    key_points: str
    why: str
    caution: str
    initial: str
    explore: str
    official_more: str
    examples: str
    community: str
    nothing: str
    no_snippet: str


ENGLISH = Words(
    answer="Answer",
    references="References",
    tiers={1: "Official docs", 2: "Semi-official", 3: "Community", 4: "Blogs and media"},
    labels={1: "official docs", 2: "semi-official", 3: "community", 4: "blog/media"},
    reliability="reliability",
    key_points="Key points:",
    why="Why this tier",
    caution="Caution: community or personal source; check it against official docs.",
    initial="Initial results",
    explore="Explore further:",
    official_more="Official docs in depth",
    examples="Practical examples",
    community="Community opinion",
    nothing="No results for {query!r}.",
    no_snippet="The sources below match the query; their pages hold the answer.",
)
KOREAN = Words(
    answer="답변",
    references="참고 링크",
    tiers={1: "공식 문서", 2: "준공식", 3: "커뮤니티", 4: "전문가 블로그"},
    labels={1: "공식 문서", 2: "준공식", 3: "커뮤니티", 4: "전문가 블로그"},
    reliability="신뢰도",
    key_points="주요 내용:",
    why="이 등급인 이유",
    caution="주의: 커뮤니티나 개인의 출처입니다. 공식 문서와 대조해 확인하세요.",
    initial="초기 검색 결과",
    explore="더 알아보고 싶은 영역:",
    official_more="공식 문서 상세 보기",
    examples="실전 예제 찾기",
    community="커뮤니티 의견 확인",
    nothing="{query!r}에 대한 검색 결과가 없습니다.",
    no_snippet="아래 출처가 질문과 맞습니다. 답은 각 페이지에 있습니다.",
)
#: kept for callers of the English labels
TIER_NAMES = ENGLISH.tiers
TIER_LABELS = ENGLISH.labels


def words_for(query: str) -> Words:
    """The layouts' words in the question's language: Korean for a question in Hangul."""
    return KOREAN if is_hangul(query) else ENGLISH


def _text(title: str) -> str:
    """A title as Markdown link text: controls out first (``printable``), so that a backslash put
    before a bracket cannot split an escape sequence ("ESC [2J") into visible text."""
    return re.sub(r"([\[\]\\])", r"\\\1", printable(title, one_line=True))


def _link(result: SearchResult) -> str:
    url = result.url
    target = f"<{url}>" if any(c in url for c in " ()<>") else url
    return f"[{_text(result.title)}]({target})"


def _sources(results: Sequence[SearchResult]) -> list[str]:
    return ["Sources:", *(f"- {_link(r)}" for r in results)]


def _first_sentence(snippet: str) -> str:
    return _SENTENCE.split(snippet.strip(), maxsplit=1)[0] if snippet else ""


def key_points(snippet: str, query: str, limit: int = KEY_POINTS) -> list[str]:
    """The sentences of ``snippet`` that best match ``query`` (BM25), in their order; the first
    sentence when none matches."""
    found = [s for s in sentences(snippet) if s.strip()]
    if not found:
        return []
    scores = bm25_scores(query_terms(query, stem=True, repeats=True), [analyze(s, stem=True) for s in found])
    best = sorted((i for i in range(len(found)) if scores[i] > 0), key=lambda i: (-scores[i], i))[:limit]
    return [found[i] for i in sorted(best)] or found[:1]


def _answer(response: SearchResponse, words: Words) -> list[str]:
    """A grounded provider's own answer (its [n] point at its own sources list), if it gave one."""
    if not response.answer:
        return []
    return [f"## {words.answer}", "", printable(response.answer).strip(), ""]


def _no_results(response: SearchResponse, words: Words) -> str:
    """What a layout shows with no results: a grounded answer still (a model may answer without
    grounding it), else that nothing was found."""
    return "\n".join(_answer(response, words)).strip() or words.nothing.format(query=response.query)


def quick(response: SearchResponse) -> str:
    """The answer (a grounded provider's own, else a short extractive one from the best 2-3
    sources, cited [n]), then the rated references and the links, as seed 000's quick layout."""
    words = words_for(response.query)
    results = response.results
    if not results:
        return _no_results(response, words)
    if response.answer:  # its [n] point at its own sources list: the references are not numbered
        lines, number = _answer(response, words), False
    else:
        sentences_ = [
            f"{_first_sentence(r.snippet)} [{i}]" for i, r in enumerate(results[:3], start=1) if r.snippet
        ]
        lines, number = (
            [f"## {words.answer}", "", " ".join(sentences_) if sentences_ else words.no_snippet, ""],
            True,
        )
    lines += [f"## {words.references}", ""]
    # As the seed's layout: the references name each source and its rating; the links follow
    # once, under Sources, in the same order.
    lines += [
        f"- {f'[{i}] ' if number else ''}[{words.labels[r.tier]}] {_text(r.title)} "
        f"(tier {r.tier}, {words.reliability} {r.reliability_score}/100)"
        for i, r in enumerate(results, start=1)
    ]
    return "\n".join([*lines, "", *_sources(results)])


def deep(response: SearchResponse) -> str:
    """Every source, grouped by tier, with its score, summary, key points and why it was rated so."""
    words = words_for(response.query)
    if not response.results:
        return _no_results(response, words)
    lines: list[str] = _answer(response, words)
    for tier in (1, 2, 3, 4):
        group = [r for r in response.results if r.tier == tier]
        if not group:
            continue
        lines += [f"## {words.tiers[tier]} (Tier {tier})", ""]
        for r in group:
            lines += [f"### {_link(r)} - {words.reliability}: {r.reliability_score}/100", ""]
            points = key_points(r.snippet, response.query)
            if r.snippet and points != [r.snippet.strip()]:
                lines += [r.snippet, ""]
            if points:
                lines += [words.key_points, *(f"- {p}" for p in points), ""]
            lines += [f"{words.why}: {r.reason}"]
            if tier >= 3:
                lines += [words.caution]
            lines.append("")
    return "\n".join([*lines, *_sources(response.results)])


def progressive(response: SearchResponse) -> str:
    """The top five, then where to dig next (as commands that do it)."""
    words = words_for(response.query)
    results = response.results
    if not results:
        return _no_results(response, words)
    q = response.query.replace('"', '\\"')
    lines = [*_answer(response, words), f"## {words.initial} (Top {min(5, len(results))})", ""]
    lines += [
        f"{i}. {_link(r)} - tier {r.tier}, score: {r.reliability_score}"
        for i, r in enumerate(results[:5], start=1)
    ]
    lines += [
        "",
        words.explore,
        f'- [ ] {words.official_more}: `sourcewise search "{q}" --strategy official --format deep`',
        f'- [ ] {words.examples}: `sourcewise search "{q} example" --strategy progressive`',
        f'- [ ] {words.community}: `sourcewise search "{q}" --tier 3`',
        "",
    ]
    return "\n".join([*lines, *_sources(results)])


def as_json(response: SearchResponse) -> str:
    """The results as a JSON array (the seed's output contract), one object per result."""
    return json.dumps([r.model_dump(mode="json") for r in response.results], ensure_ascii=False, indent=2)


def render(response: SearchResponse, fmt: str = "quick") -> str:
    """``response`` as text in ``fmt``. Titles and snippets come from outside: the text formats
    lose control characters and bidi overrides, JSON escapes them (same values), so either can
    go to a terminal."""
    renderers = {"quick": quick, "deep": deep, "progressive": progressive}
    if fmt == "json":
        return json_safe(as_json(response))
    if fmt not in renderers:
        raise InvalidOption(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    return printable(renderers[fmt](response))
