"""Web search models: what providers return, the rated results, a provider's status."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from sourcewise.models._base import SNIPPET_MAX, Tier, _Model

__all__ = ["ProviderHit", "ProviderStatus", "RawResult", "SearchResponse", "SearchResult", "SourceRating"]


class SourceRating(_Model):
    """How far a source can be trusted: its tier, a 0-100 score, and why."""

    tier: Tier
    reliability_score: int = Field(ge=0, le=100)
    reason: str


class ProviderHit(_Model):
    """One provider that returned a result, and the 1-based position it gave it."""

    provider: str
    position: int = Field(ge=1)


class RawResult(_Model):
    """A result as one provider returned it, before validation, dedup and rating."""

    title: str
    url: str
    snippet: str = ""
    provider: str
    position: int = Field(ge=1)
    published: datetime | None = None


class SearchResult(_Model):
    """A de-duplicated and rated web search result. ``url`` was checked where results are built
    (``web.rank``: the canonical-URL key refuses what is not an absolute http(s) URL); models
    import nothing of the package, so a model built by hand is not checked again."""

    title: str = Field(min_length=1)
    url: str
    canonical_url: str
    snippet: str = Field(default="", max_length=SNIPPET_MAX)
    tier: Tier
    reliability_score: int = Field(ge=0, le=100)
    reason: str
    providers: tuple[ProviderHit, ...] = ()
    published: datetime | None = None


class ProviderStatus(_Model):
    """What ``sourcewise providers`` shows for one provider."""

    name: str
    configured: bool
    detail: str
    suspended_until: datetime | None = None
    suspended_reason: str | None = None
    in_chain: bool = True


class SearchResponse(_Model):
    """The results of one search, with what was asked and who answered."""

    query: str
    strategy: Literal["default", "official", "comprehensive", "progressive"] = "default"
    results: tuple[SearchResult, ...]
    provider: str | None = Field(default=None, description="the provider that answered")
    attempts: tuple[tuple[str, str], ...] = Field(
        default=(), description="providers tried before the one that answered, with why they failed"
    )
    warnings: tuple[str, ...] = ()
    answer: str | None = Field(
        default=None, description="a grounded provider's answer, with [n] citations and its sources list"
    )
