"""Seed 001 and seed 003 as public functions: route, classify_query, plan, conditional_web_search."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date

from pydantic import Field

from .config import Settings, load_settings
from .core import plan as _plan
from .core import route as _route
from .core.classify import classify_query
from .core.validate import validate_query
from .engine import run_sync
from .errors import SourcewiseError
from .models import Page, Plan, Route, SearchResult, _Model
from .pages import afetch

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
    """Search the web, fetch the URLs in the question, or skip (seed 001), and why."""
    validate_query(question)
    settings = settings or load_settings()
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
) -> Plan:
    """Query type, keywords, entities, filters, variants and one query per source (seed 003)."""
    settings = settings or load_settings()
    return _plan.plan(question, sources or _plan.DEFAULT_SOURCES, today=today, variants=settings.variants)


class WebContext(_Model):
    """What ``conditional_web_search`` did: whether it went to the web, why, and the context."""

    searched: bool = Field(description="the web was asked (a search or a fetch)")
    reason: str
    route: Route
    context: str | None = Field(description="text for the answerer; None when skipped or the web failed")
    results: list[SearchResult] = Field(default_factory=list)
    pages: list[Page] = Field(default_factory=list)
    error: str | None = None


def _search_context(results: Sequence[SearchResult]) -> str:
    return "\n\n".join(
        f"[{i}] {r.title} (tier {r.tier}, {r.reliability_score}/100)\n{r.url}\n{r.snippet}".rstrip()
        for i, r in enumerate(results, start=1)
    )


def _page_context(pages: Sequence[Page]) -> str:
    return "\n\n".join(f"# {p.title or p.url}\n{p.url}\n\n{p.content}" for p in pages)


async def aconditional_web_search(
    question: str,
    rag_context: str | None = None,
    *,
    today: date | None = None,
    settings: Settings | None = None,
) -> WebContext:
    """Seed 001's integration function. Never raises for a web failure: ``context`` is then
    ``None`` and ``error`` says why (bad input still raises ``InvalidQuery``)."""
    from .api import asearch

    settings = settings or load_settings()
    decision = route(question, today=today, settings=settings)
    if decision.action == "skip":
        where = "the private context given" if rag_context else "private sources"
        log.info("📚 웹 검색 스킵: %s", decision.reason)
        return WebContext(
            searched=False, reason=f"{decision.reason} (answer from {where})", route=decision, context=None
        )
    if decision.action == "fetch":
        log.info("🔗 URL 직접 참조: %d개", len(decision.urls))
        pages = [
            p
            for p in [await afetch(u, question, best_effort=True, settings=settings) for u in decision.urls]
            if p
        ]
        error = None if pages else "none of the URLs could be read"
        if error:
            log.warning("⚠️ 웹 조회 실패: %s", error)
        return WebContext(
            searched=True,
            reason=decision.reason,
            route=decision,
            context=_page_context(pages) or None,
            pages=pages,
            error=error,
        )
    log.info("🔍 웹 검색 수행: %s", decision.reason)
    try:
        response = await asearch(decision.query or question, settings=settings)
    except SourcewiseError as exc:
        log.warning("⚠️ 웹 검색 실패: %s", exc)
        return WebContext(searched=True, reason=decision.reason, route=decision, context=None, error=str(exc))
    return WebContext(
        searched=True,
        reason=decision.reason,
        route=decision,
        context=_search_context(response.results) or None,
        results=list(response.results),
    )


def conditional_web_search(
    question: str,
    rag_context: str | None = None,
    *,
    today: date | None = None,
    settings: Settings | None = None,
) -> WebContext:
    """Synchronous ``aconditional_web_search``."""
    return run_sync(aconditional_web_search(question, rag_context, today=today, settings=settings))
