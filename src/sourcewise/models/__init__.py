"""Typed models at every public boundary (the web search ones in ``models.web``), imported by every
layer and importing nothing of the package outside this folder."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from sourcewise.models._base import SNIPPET_MAX as SNIPPET_MAX  # re-exported: the snippet limit is shared
from sourcewise.models._base import Tier
from sourcewise.models._base import _Model as _Model  # re-exported: the base of the other modules' models
from sourcewise.models.web import (
    ProviderHit,
    ProviderStatus,
    RawResult,
    SearchResponse,
    SearchResult,
    SourceRating,
)

__all__ = [
    "Answer",
    "Authority",
    "Candidate",
    "Citation",
    "Constraints",
    "Cycle",
    "Factor",
    "FoundBy",
    "Hit",
    "Learned",
    "Page",
    "Passage",
    "Plan",
    "ProviderHit",
    "ProviderStatus",
    "QueryType",
    "RankedHit",
    "RawResult",
    "Reading",
    "Retrieval",
    "Route",
    "SearchResponse",
    "SearchResult",
    "SourceInfo",
    "SourceKind",
    "SourceQuery",
    "SourceRating",
    "SourceReport",
    "SourceResult",
    "Tier",
    "failed_everywhere",
]


class Route(_Model):
    """Seed 001's decision: ``search`` the web, ``fetch`` the URLs given, or ``skip``."""

    action: Literal["search", "fetch", "skip"]
    reason: str
    query: str | None = Field(default=None, description="the web query to run, for 'search'")
    urls: list[str] = Field(default_factory=list, description="the URLs to read, for 'fetch'")
    signals: dict[str, list[str]] = Field(
        default_factory=dict, description="keywords found, by kind: recency, external, internal"
    )
    readings: list[str] = Field(
        default_factory=list,
        description="readings that would send the question to different sources (private, then the web): "
        "asked about before searching",
    )


QueryKind = Literal["decision", "status", "document", "person", "fact", "temporal", "exploration"]
KIND_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
SourceKind = Annotated[str, StringConstraints(pattern=KIND_PATTERN)]
"""Which kind of place a source is: the built-ins are ``chat``, ``code``, ``email``,
``knowledge_base``, ``project_tracker`` and ``web``; a plug-in may declare its own."""
Authority = Annotated[str, StringConstraints(pattern=KIND_PATTERN)]
"""Seed 003's authority classes: what kind of record a hit is, for the per-query-type hierarchies
(``official_doc``, ``wiki``, ``shared_doc``, ``meeting_notes``, ``thread_conclusion``,
``status_doc``, ``announcement``, ``tracker_task``, ``email``, ``chat``, ``code``, ``web``; a
plug-in may declare its own, see docs/adding-a-source.md)."""


class QueryType(_Model):
    """Seed 003 step 1: what kind of question this is, and the words that said so."""

    kind: QueryKind
    signals: list[str] = Field(default_factory=list)
    source_priority: list[str] = Field(default_factory=list, description="where to look first")


class Constraints(_Model):
    """Filters from the question: ``from:`` authors, ``in:`` channels, dates, ``type:``."""

    authors: list[str] = Field(default_factory=list)
    channels: list[str] = Field(default_factory=list)
    after: date | None = None
    before: date | None = None
    types: list[str] = Field(default_factory=list)
    dates_from: list[str] = Field(default_factory=list, description="the words the dates came from")
    mine: bool = Field(default=False, description="the question is about the asker's own items")


class SourceQuery(_Model):
    """One query for one source, in that source's own syntax."""

    source: SourceKind
    mode: Literal["semantic", "keyword"]
    query: str
    params: dict[str, str | bool | list[str]] = Field(default_factory=dict)


class Plan(_Model):
    """Seed 003's decomposition of a question into per-source queries."""

    question: str
    query_type: QueryType
    keywords: list[str]
    entities: list[str]
    phrases: list[str] = Field(default_factory=list, description="quoted phrases, kept exact")
    intent: list[str]
    constraints: Constraints
    negations: list[str]
    variants: dict[str, list[str]]
    mode: Literal["semantic", "keyword"]
    mode_reason: str
    sources: list[SourceQuery] = Field(
        description="the question as each source kind asked for writes it, in its own syntax (a "
        "broadened plan has none: each source renders it)"
    )
    today: date
    level: int = Field(default=0, description="how many broadening steps produced this plan")
    dropped: list[str] = Field(default_factory=list, description="what broadening removed, in order")


class Passage(_Model):
    """A part of a page that answers the prompt, with where it stands in the page's content."""

    index: int = Field(description="paragraph number in the page, from 0")
    start: int = Field(description="character offset of the passage in the full content")
    end: int
    text: str
    score: float


class Page(_Model):
    """A fetched page: its main content as Markdown, rated, with the passages for a prompt."""

    url: str = Field(description="the URL after redirects")
    requested_url: str
    title: str | None = None
    author: str | None = None
    published: str | None = None
    declared_canonical: str | None = Field(default=None, description="the page's own rel=canonical")
    content_type: str
    content: str = Field(description="this slice of the content, from ``start``, at most ``max_chars``")
    start: int = 0
    next_start: int | None = Field(default=None, description="where the next slice starts, if any")
    total_chars: int
    truncated: bool = Field(default=False, description="the body was cut at the size limit")
    tier: Tier
    reliability_score: int = Field(ge=0, le=100)
    reason: str
    fetched_at: datetime
    from_cache: bool = False
    passages: list[Passage] = Field(default_factory=list)


class Hit(_Model):
    """One thing a source found, in the same shape for every source (web included)."""

    title: str
    location: str = Field(description="what to cite: a URL, ``path#L10-L24`` or a message permalink")
    snippet: str = ""
    text: str = Field(default="", description="the matched text: a chunk, message, section or issue")
    source: str = Field(description="the configured name of the source that found it")
    kind: SourceKind
    authority: Authority
    score: float = Field(description="the source's own relevance score; higher is better")
    author: str | None = None
    timestamp: datetime | None = None
    path: str | None = Field(default=None, description="the file it came from, for file-backed sources")
    heading_path: tuple[str, ...] = Field(default=(), description="headings above the text, outermost first")
    start_line: int | None = None
    end_line: int | None = None
    tier: Tier | None = Field(default=None, description="web hits: the source tier")
    reliability_score: int | None = Field(default=None, ge=0, le=100)
    meta: dict[str, str] = Field(default_factory=dict, description="source-specific fields, e.g. channel")


class SourceResult(_Model):
    """What one source returned for one query: its hits and anything it could not honour."""

    source: str
    kind: SourceKind
    query: str
    hits: tuple[Hit, ...] = ()
    warnings: tuple[str, ...] = Field(default=(), description="e.g. a filter this source cannot apply")


class SourceInfo(_Model):
    """What ``sourcewise sources`` shows for one source."""

    name: str
    type: str = Field(description="the plug-in that implements it: kb, code, slack, mail, github, web")
    kind: SourceKind
    location: str | None = Field(default=None, description="the path or URL it reads")
    ready: bool
    detail: str = ""
    items: int | None = Field(default=None, description="documents, files, messages or issues indexed")
    updated: datetime | None = None
    in_ask: str | None = Field(
        default=None, description="why `ask` reads it when no source is named; null: only when named"
    )


ReportStatus = Literal["ok", "empty", "failed", "unavailable", "rate_limited", "timeout"]


class SourceReport(_Model):
    """What one source did during an ``ask``: what it ran, what it found, or why it failed."""

    source: str
    kind: SourceKind
    status: ReportStatus
    queries: tuple[str, ...] = Field(default=(), description="every query run, broadened ones included")
    hits: int = 0
    broadened: tuple[str, ...] = Field(default=(), description="what broadening dropped, in order")
    warnings: tuple[str, ...] = ()
    error: str | None = None
    retry_after: float | None = Field(default=None, description="seconds until a rate limit lifts")
    elapsed_ms: float = 0.0
    pages_read: int = Field(default=0, description="result pages read in full (the effort's fetch depth)")


def failed_everywhere(reports: Sequence[SourceReport]) -> bool:
    """Every source failed (none answered, not even with nothing): a door's 503, the CLI's exit 3.
    What looks like "no results" must not hide it."""
    return bool(reports) and all(r.status not in ("ok", "empty") for r in reports)


class Factor(_Model):
    """One factor of a hit's relevance: its value (0-1), its weight for this query type, and why."""

    name: Literal["keyword", "recency", "authority", "completeness"]
    value: float = Field(ge=0, le=1)
    weight: float = Field(ge=0, le=1)
    note: str


class FoundBy(_Model):
    """One source that returned a merged item (SearXNG shows its engines so): the rank it gave it,
    the relevance its copy scored (its weight in the merge: the item keeps the best copy) and, for
    the web, the providers behind it."""

    source: str
    position: int = Field(ge=1, description="the 1-based rank this source gave the item")
    weight: float = Field(ge=0, le=1, description="the relevance this source's copy scored")
    providers: tuple[str, ...] = Field(default=(), description="the web providers that returned it")


class RankedHit(_Model):
    """A hit with its relevance for this question and the factors that made it."""

    hit: Hit
    relevance: float = Field(ge=0, le=1)
    factors: tuple[Factor, ...]
    found_by: tuple[FoundBy, ...] = Field(
        default=(), description="every source that returned this item, in the order met, with its weight"
    )
    reading: str | None = Field(default=None, description="the reading of an ambiguous question it fits")

    @property
    def sources(self) -> tuple[str, ...]:
        """The names of ``found_by``: every source that returned this item (not a field: the
        JSON holds ``found_by`` once)."""
        return tuple(f.source for f in self.found_by)


class Citation(_Model):
    """An ``[n]`` marker in an answer: the sentence it closes and the hit it points to."""

    marker: int = Field(ge=1, description="n in [n]; the n-th entry of ``Answer.sources``")
    sentence: str
    start: int = Field(description="character offset of the sentence in ``Answer.text``")
    end: int
    location: str
    supported: bool = Field(default=True, description="the cited passage supports the sentence")


class Reading(_Model):
    """One interpretation of an ambiguous question, as found in the hits."""

    label: str
    hits: int
    share: float


Band = Literal["high", "medium", "low", "none"]
"""Seed 004's bands: high 0.8-1.0 implements the target, medium 0.5-0.7 related patterns or types,
low 0.2-0.4 indirectly related, none below 0.2 (excluded)."""


class Candidate(_Model):
    """Something a retrieval found, with seed 004's relevance 0-1, why, and what it leaves out."""

    hit: Hit
    relevance: float = Field(ge=0, le=1)
    band: Band
    reason: str
    missing: tuple[str, ...] = Field(default=(), description="task terms this candidate does not cover")
    cycle: int = Field(ge=1, description="the cycle that first found it")
    scorer: Literal["rules", "model"] = "rules"
    relevant: bool = Field(default=False, description="relevance 0.7 or more: seed 004's set to hand over")


class Learned(_Model):
    """A word of the codebase's own vocabulary, learned from what scored well."""

    term: str
    stands_for: tuple[str, ...] = Field(default=(), description="the uncovered task terms it targets")
    via: Literal["imports", "defines", "co-occurs", "variant"]
    origin: str = Field(default="", description="where it was seen: a path or a location")
    confidence: float = Field(
        default=1.0, ge=0, le=1, description="evidence relative to the best word learned"
    )


class Cycle(_Model):
    """One dispatch-evaluate-refine cycle: what it searched, found and changed."""

    number: int = Field(ge=1)
    queries: tuple[str, ...] = Field(default=(), description="``source: query`` as sent")
    found: int = Field(default=0, description="hits returned")
    new: int = Field(default=0, description="candidates not seen in earlier cycles")
    relevant: int = Field(default=0, description="candidates at 0.7 or more after this cycle")
    learned: tuple[Learned, ...] = ()
    feedback: tuple[str, ...] = Field(
        default=(), description="words of the best candidates added to the next query (RM3 feedback)"
    )
    excluded: tuple[str, ...] = Field(default=(), description="locations scored below 0.2, left out")
    uncovered: tuple[str, ...] = Field(default=(), description="key task terms no relevant candidate covers")
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    broadened: tuple[str, ...] = Field(default=(), description="filters relaxed (seed 003 order)")
    decision: str = ""
    reports: tuple[SourceReport, ...] = ()


class Retrieval(_Model):
    """Seed 004's answer: the candidates at 0.7 or more (or the best found), and every cycle."""

    task: str
    candidates: tuple[Candidate, ...] = Field(default=(), description="the 0.7+ set, or the best found")
    considered: tuple[Candidate, ...] = Field(default=(), description="every candidate kept, best first")
    cycles: tuple[Cycle, ...] = ()
    key_terms: tuple[str, ...] = ()
    sufficient: bool = Field(default=False, description="3+ candidates at 0.7 and no key term uncovered")
    missing: tuple[str, ...] = Field(default=(), description="key task terms nothing found covers")
    summary: str = ""
    warnings: tuple[str, ...] = ()


class Answer(_Model):
    """The answer to a question: cited text, the sources behind it, and how it was found."""

    question: str
    text: str = Field(description="the answer; every sentence ends with [n] markers")
    citations: tuple[Citation, ...] = ()
    sources: tuple[RankedHit, ...] = Field(default=(), description="numbered from 1, as cited")
    hits: tuple[RankedHit, ...] = Field(default=(), description="everything found, best first")
    route: Route
    plan: Plan
    reports: tuple[SourceReport, ...] = ()
    writer: Literal["extractive", "model", "none"] = "extractive"
    clarification: str | None = Field(default=None, description="a question back, when the hits split")
    readings: tuple[Reading, ...] = ()
    answered: bool = Field(
        default=True,
        description="false when nothing found answers the question: no [n] text, and ``hits`` are only "
        "the closest results, which may not answer it",
    )
    suggestions: tuple[str, ...] = Field(default=(), description="rewordings, when nothing answers")
    dropped: tuple[str, ...] = Field(default=(), description="model sentences or citations refused")
    warnings: tuple[str, ...] = ()
    timings: dict[str, float] = Field(default_factory=dict, description="milliseconds per stage")
    cycles: tuple[Cycle, ...] = Field(default=(), description="refinement cycles run after the first pass")
