"""The web as one source: the provider fallback chain, its results as hits with tiers."""

from __future__ import annotations

from typing import ClassVar

from ..engine import Engine
from ..models import Hit, SearchResult, SourceInfo, SourceQuery, SourceResult
from .base import Source

__all__ = ["WebSource", "hit_from_result"]


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
        meta={"reason": result.reason, "canonical_url": result.canonical_url},
    )


class WebSource(Source):
    """Web search through the configured provider chain (first provider that answers wins)."""

    type = "web"
    kind = "web"
    authority = "web"
    filters: ClassVar[frozenset[str]] = frozenset()

    _engine: Engine | None = None

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = Engine(self.settings)
        return self._engine

    @engine.setter
    def engine(self, engine: Engine) -> None:
        self._engine = engine

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        response = await self.engine.asearch(query.query, max_results=min(limit or self.options.limit, 50))
        hits = [hit_from_result(r, self.name, i) for i, r in enumerate(response.results)]
        return self.result(query, hits, list(response.warnings))

    async def info(self) -> SourceInfo:
        ready = [s.name for s in self.engine.status() if s.configured and s.in_chain]
        return SourceInfo(
            name=self.name,
            type=self.type,
            kind=self.kind,
            ready=bool(ready),
            detail=f"providers: {', '.join(ready) or 'none configured'}",
        )

    async def aclose(self) -> None:
        if self._engine is not None:
            self._engine.state.close()
            self._engine = None
