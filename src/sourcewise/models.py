"""Typed models at every public boundary."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "ProviderHit",
    "ProviderStatus",
    "RawResult",
    "SearchResponse",
    "SearchResult",
    "SourceRating",
    "Tier",
]

Tier = Literal[1, 2, 3, 4]
SNIPPET_MAX = 200


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


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
    """A validated, de-duplicated and rated web search result."""

    title: str = Field(min_length=1)
    url: str
    canonical_url: str
    snippet: str = Field(default="", max_length=SNIPPET_MAX)
    tier: Tier
    reliability_score: int = Field(ge=0, le=100)
    reason: str
    providers: tuple[ProviderHit, ...] = ()
    published: datetime | None = None

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        from .core.urls import is_http_url  # local: models must import without the core

        if not is_http_url(value):
            raise ValueError(f"not an absolute http(s) URL: {value!r}")
        return value


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
