"""The web as one source: the provider fallback chain, its results as hits with tiers."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from sourcewise.errors import FetchError, NoProviderAvailable, SourceRateLimited, SourceUnavailable
from sourcewise.models import Hit, Page, Plan, SearchResult, SourceInfo, SourceQuery, SourceResult
from sourcewise.planning.validate import MAX_QUERY
from sourcewise.sources.base import Capabilities, Source, SourceOptions

if TYPE_CHECKING:
    from sourcewise.session import Session
    from sourcewise.web.engine import Engine

__all__ = ["GROUNDED", "PagesSource", "WebSource", "hit_from_result", "page_text"]

GROUNDED = frozenset({"gemini", "gemini-cli"})
"""Providers that answer a question in words (a model searching), not a keyword query."""


def hit_from_result(result: SearchResult, source: str, position: int) -> Hit:
    """A rated web result as a ``Hit``; its score falls with the rank the chain gave it."""
    return Hit(
        title=result.title,
        location=result.url,
        snippet=result.snippet,
        text=result.snippet,
        source=source,
        kind="web",
        authority="official_doc" if result.tier == 1 else "web",
        score=1.0 / (1 + position),
        timestamp=result.published,
        tier=result.tier,
        reliability_score=result.reliability_score,
        meta={
            "reason": result.reason,
            "canonical_url": result.canonical_url,
            "providers": ",".join(dict.fromkeys(p.provider for p in result.providers)),
        },
    )


def page_text(page: Page) -> str:
    """What a page read for a question says to the answer: the passages that best answer it, or
    the start of the page."""
    return "\n\n".join(p.text for p in page.passages) or page.content[:2000]


class WebSource(Source):
    """Web search through the session's provider chain (first provider that answers wins)."""

    type = "web"
    kind = "web"
    authority = "web"
    filters: ClassVar[frozenset[str]] = frozenset()
    capabilities = Capabilities(web=True)

    @property
    def engine(self) -> Engine:
        """The session's engine: its client, provider state (SQLite or Redis) and providers."""
        return self.session.engine

    def grounded_first(self) -> bool:
        """The first ready, unsuspended provider of the chain is a grounded one (Gemini)."""
        for status in self.engine.status():
            if status.in_chain and status.configured and status.suspended_until is None:
                return status.name in GROUNDED
        return False

    def query_for(self, plan: Plan) -> list[SourceQuery]:
        """The plan's keyword query; a grounded provider (Gemini) gets the user's question,
        which it reads better than keywords."""
        queries = self.render(plan)
        if len(plan.question.strip()) <= MAX_QUERY and self.grounded_first():
            return [q.model_copy(update={"query": plan.question}) for q in queries[:1]]
        return queries

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        try:
            response = await self.engine.asearch(
                query.query, max_results=min(limit or self.options.limit, 50)
            )
        except NoProviderAvailable as exc:
            wait = self._suspended_for()
            if wait is None:
                raise
            # every provider that could answer is held back (a 429, a quota): say when to retry
            raise SourceRateLimited(self.name, str(exc), retry_after=wait) from exc
        hits = [hit_from_result(r, self.name, i) for i, r in enumerate(response.results)]
        return self.result(query, hits, list(response.warnings))

    async def read(
        self, hits: Sequence[Hit], question: str, depth: int, seconds: float
    ) -> tuple[list[Hit], int, list[str]]:
        """The first ``depth`` result pages read at once through the guarded fetcher (robots.txt
        obeyed, the page cache used), within ``seconds``; a page not read keeps its snippet."""
        from sourcewise.web.pages import afetch  # the extractor: loaded only when a page is read

        out = list(hits)
        tasks = [
            asyncio.ensure_future(afetch(h.location, question, session=self.session)) for h in hits[:depth]
        ]
        if not tasks:
            return out, 0, []
        try:
            await asyncio.wait(tasks, timeout=max(seconds, 0.0))
        finally:
            for task in tasks:
                task.cancel()  # past the deadline, or the caller was cancelled: nothing left running
            await asyncio.gather(*tasks, return_exceptions=True)
        read, notes = 0, []
        for i, task in enumerate(tasks):
            failure = None if task.cancelled() else task.exception()
            if task.cancelled():
                notes.append(f"{hits[i].location}: not read within the {seconds:.1f} s left")
            elif failure is not None:
                why = failure.detail if isinstance(failure, FetchError) else type(failure).__name__
                notes.append(f"{hits[i].location}: not read ({why})")
            else:
                out[i] = hits[i].model_copy(update={"text": page_text(task.result())})
                read += 1
        return out, read, notes

    def _suspended_for(self) -> float | None:
        """Seconds until the first configured provider of the chain is asked again, when every one
        of them is suspended; ``None`` when one is not (then the failure is not a rate limit)."""
        chain = [s for s in self.engine.status() if s.in_chain and s.configured]
        holds = [s.suspended_until for s in chain if s.suspended_until is not None]
        if not chain or len(holds) < len(chain):
            return None
        return max(0.0, min(h.timestamp() for h in holds) - self.engine.clock())

    async def info(self) -> SourceInfo:
        ready = [s.name for s in self.engine.status() if s.configured and s.in_chain]
        return SourceInfo(
            name=self.name,
            type=self.type,
            kind=self.kind,
            ready=bool(ready),
            detail=f"providers: {', '.join(ready) or 'none configured'}",
        )


class PagesSource(Source):
    """The URLs a question holds (seed 001's "fetch"), read through the guarded fetcher as hits.

    Not a plug-in: ``ask`` makes one when the question names pages. Each page is one hit whose text
    is the passages that best answer the question (or the start of the page).
    """

    type = "pages"
    kind = "web"
    authority = "web"
    capabilities = Capabilities(web=True)

    def __init__(self, urls: list[str], session: Session) -> None:
        super().__init__("pages", SourceOptions(), session.settings)
        self.urls = urls
        self.unread: list[tuple[str, str]] = []  # (URL, why) for each page that could not be read
        self.bind(session)

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        from sourcewise.web.pages import (
            afetch,  # pages pulls in the extractor: load it only when a URL is asked
        )

        hits: list[Hit] = []
        warnings: list[str] = []
        self.unread = []
        for i, url in enumerate(self.urls[: limit or self.options.limit]):
            try:
                page = await afetch(url, query.query, session=self.session)
            except FetchError as exc:
                warnings.append(f"{url}: {exc.detail}")
                self.unread.append((url, exc.detail))
                continue
            text = page_text(page)
            hits.append(
                Hit(
                    title=page.title or page.url,
                    location=page.url,
                    snippet=text[:200],
                    text=text,
                    source=self.name,
                    kind="web",
                    authority="official_doc" if page.tier == 1 else "web",
                    score=1.0 / (1 + i),
                    tier=page.tier,
                    reliability_score=page.reliability_score,
                    meta={"reason": page.reason, "asked": url},  # the URL as the question wrote it
                )
            )
        if not hits and warnings:
            raise SourceUnavailable(self.name, "; ".join(warnings))
        return self.result(query, hits, warnings)
