"""Seed 001 and seed 003 as public functions: route, classify_query, plan, conditional_web_search."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from pydantic import Field

from sourcewise._sync import sync
from sourcewise.config import Settings, load_settings
from sourcewise.errors import InvalidOption, NoProviderAvailable, SourcewiseError
from sourcewise.models import Page, Plan, Route, SearchResult, _Model
from sourcewise.planning import planner as _plan
from sourcewise.planning import route as _route
from sourcewise.planning.classify import classify_query
from sourcewise.planning.validate import validate_question, validate_today
from sourcewise.registry import source_kinds
from sourcewise.text.words import is_hangul
from sourcewise.web.domains import table_for

if TYPE_CHECKING:
    from sourcewise.session import Session

__all__ = [
    "WebContext",
    "aconditional_web_search",
    "classify_query",
    "conditional_web_search",
    "plan",
    "route",
]

log = logging.getLogger("sourcewise")


def route(question: str, *, today: date | None = None, settings: Settings | None = None) -> Route:
    """Search the web, fetch the URLs in the question, or skip, and why.

    Raises ``InvalidQuery`` for a question that is not text, under 3 or over ``MAX_QUESTION``
    (10,000) characters, and ``InvalidOption`` for a ``today`` that is not a date.
    """
    question = validate_question(question)
    today = validate_today(today) or date.today()  # the edge reads the clock, once
    settings = load_settings() if settings is None else settings  # the edge, for this call
    return _route.route(
        question,
        today=today,
        recency=settings.recency_keywords,
        external=settings.external_keywords,
        internal=settings.internal_keywords,
    )


def plan(
    question: str,
    sources: Sequence[str] | None = None,
    *,
    today: date | None = None,
    settings: Settings | None = None,
    session: Session | None = None,
) -> Plan:
    """Query type, keywords, entities, filters, variants and one query per source kind (seed 003),
    each written by the sources of that kind in their own syntax.

    ``sources``: source kinds (``chat``, ``email``, ``knowledge_base`` ... or a plug-in's own);
    default: chat, knowledge base and project tracker."""
    if session is not None:
        settings, known, table = session.settings, session.registry.kinds(), session.table
    else:
        settings = load_settings() if settings is None else settings
        known, table = source_kinds(settings), table_for(settings.official, settings.tiers)
    kinds = _plan.DEFAULT_SOURCES if sources is None else sources
    if isinstance(kinds, str) or not isinstance(kinds, Sequence):
        raise InvalidOption(f"sources must be a list of source kinds, e.g. [{kinds!r}], not a string")
    unknown = [k for k in kinds if not isinstance(k, str) or k not in known]
    if unknown or not kinds:
        raise InvalidOption(f"sources must be some of {', '.join(sorted(known))}; got {list(kinds)!r}")
    syntaxes = {kind: known[kind].syntax for kind in sorted(set(kinds))}
    today = validate_today(today) or date.today()  # the edge reads the clock, once
    return _plan.plan(question, syntaxes, today=today, table=table, variants=settings.variants)


class WebContext(_Model):
    """What ``conditional_web_search`` did: whether it went to the web, why, and the context."""

    searched: bool = Field(description="the web was asked (a search or a fetch)")
    reason: str
    route: Route
    context: str | None = Field(description="text for the answerer; None when skipped or the web failed")
    results: list[SearchResult] = Field(default_factory=list)
    pages: list[Page] = Field(default_factory=list)
    error: str | None = None
    no_provider: bool = Field(default=False, description="the search failed because no provider answered")
    web_urls: list[str] = Field(default_factory=list, description="the URLs of the question that were read")
    failed_urls: list[str] = Field(
        default_factory=list, description="the URLs of the question that could not be read ([웹 조회 실패])"
    )


def _search_context(results: Sequence[SearchResult]) -> str:
    return "\n\n".join(
        f"[{i}] {r.title} (tier {r.tier}, {r.reliability_score}/100)\n{r.url}\n{r.snippet}".rstrip()
        for i, r in enumerate(results, start=1)
    )


FAILED = "[웹 조회 실패]"  # seed 001's marker for a URL that could not be read


def _page_context(pages: Sequence[Page], failed: Sequence[tuple[str, str]]) -> str:
    read = [f"# {p.title or p.url}\n{p.url}\n\n{p.content}" for p in pages]
    return "\n\n".join([*read, *(f"# {url}\n{FAILED} {why}" for url, why in failed)])


def _say(question: str, korean: str, english: str) -> str:
    """The console line in the question's language."""
    return korean if is_hangul(question) else english


async def _read_pages(
    question: str, urls: Sequence[str], session: Session
) -> tuple[list[Page], list[tuple[str, str]]]:
    from sourcewise.web.pages import afetch  # here: the HTTP client loads when a page is first read

    pages: list[Page] = []
    problems: list[tuple[str, str]] = []
    for url in urls:
        try:
            page = await afetch(url, question, session=session)
        except SourcewiseError as exc:  # a bad or unreachable URL is a web failure, never raised
            log.warning(_say(question, "⚠️ URL 조회 실패: %s", "⚠️ could not read the URL: %s"), exc)
            problems.append((url, str(exc)))
            continue
        pages.append(page)
    return pages, problems


async def aconditional_web_search(
    question: str,
    rag_context: str | None = None,
    *,
    today: date | None = None,
    settings: Settings | None = None,
    session: Session | None = None,
) -> WebContext:
    """Search or fetch only when the question needs the web. Never raises for a web failure
    (a provider down, a URL refused or unreadable): ``context`` is then ``None`` and ``error``
    says why. Bad input still raises ``InvalidQuery`` / ``InvalidOption``."""
    if session is None:
        from sourcewise.session import Session

        async with Session(settings) as own:
            return await _conditional(question, rag_context, today, own)
    return await _conditional(question, rag_context, today, session)


async def _conditional(
    question: str, rag_context: str | None, today: date | None, session: Session
) -> WebContext:
    settings = session.settings
    decision = route(question, today=today, settings=settings)
    if decision.action == "skip":
        where = "the private context given" if rag_context else "private sources"
        log.info(_say(question, "📚 웹 검색 스킵: %s", "📚 no web search: %s"), decision.reason)
        return WebContext(
            searched=False, reason=f"{decision.reason} (answer from {where})", route=decision, context=None
        )
    if decision.action == "fetch":
        log.info(
            _say(question, "🔗 URL 직접 참조: %d개", "🔗 reading %d URL(s) from the question"),
            len(decision.urls),
        )
        pages, problems = await _read_pages(question, decision.urls, session)
        error = None if pages else "none of the URLs could be read: " + "; ".join(why for _, why in problems)
        return WebContext(
            searched=True,
            reason=decision.reason,
            route=decision,
            # seed 001 5.3: nothing read, no context (the caller answers from private sources)
            context=_page_context(pages, problems) if pages else None,
            pages=pages,
            error=error,
            web_urls=[url for url in decision.urls if url not in {u for u, _ in problems}],
            failed_urls=[url for url, _ in problems],
        )
    log.info(_say(question, "🔍 웹 검색 수행: %s", "🔍 searching the web: %s"), decision.reason)
    try:
        response = await session.engine.asearch(decision.query or question)
    except SourcewiseError as exc:
        log.warning(_say(question, "⚠️ 웹 검색 실패: %s", "⚠️ the web search failed: %s"), exc)
        return WebContext(
            searched=True,
            reason=decision.reason,
            route=decision,
            context=None,
            error=str(exc),
            no_provider=isinstance(exc, NoProviderAvailable),
        )
    return WebContext(
        searched=True,
        reason=decision.reason,
        route=decision,
        context=_search_context(response.results) or None,
        results=list(response.results),
    )


conditional_web_search = sync(aconditional_web_search)
