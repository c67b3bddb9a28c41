"""Validate, rate, de-duplicate, rank and select results. Pure: no I/O, no clock, stable order."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel

from sourcewise.errors import InvalidURL, redact
from sourcewise.models import SNIPPET_MAX, ProviderHit, RawResult, SearchResult
from sourcewise.text.words import cut_words
from sourcewise.web.rating import rate_key
from sourcewise.web.tiers import SourceTable, wanted_projects
from sourcewise.web.urls import canonical_url

__all__ = ["cut_snippet", "dedup", "merge_results", "pick_per_tier", "rank", "widen_by_tier"]

_M = TypeVar("_M", bound=BaseModel)
_H = TypeVar("_H")
_SPACE = re.compile(r"\s+")
_SURROGATE = re.compile("[\ud800-\udfff]")
_FRACTION = re.compile(r"(\.\d{6})\d+")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_LETTER = re.compile(r"[^\W\d_]")
_DATE_MAX = 100  # characters; a longer "date" is not one
_TAG = re.compile(r"<[^<>]+>")  # not [^>]: "<<<<..." would rescan to the end from every "<"


def clean_text(text: str) -> str:
    """Plain text on one line: tags removed, entities decoded, white space collapsed, lone
    surrogates (which no encoder accepts) replaced by U+FFFD."""
    if "<" in text:
        text = _TAG.sub("", text)
    if "&" in text:
        text = html.unescape(text)
    text = " ".join(text.split())  # str.split and \s agree on what white space is
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def cut_snippet(text: str, limit: int = SNIPPET_MAX) -> str:
    """``text`` cleaned and cut to at most ``limit`` characters at a word boundary, with '…'."""
    return cut_words(clean_text(text), limit)


def merge_results(
    raw: Iterable[RawResult], query: str, table: SourceTable
) -> tuple[list[SearchResult], list[str]]:
    """Provider results as rated, de-duplicated, ranked results, and what was dropped (a bad URL),
    said as notes for the caller to log (no I/O here).

    One result per canonical URL: the first is titled (by its URL when it has no title), rated and
    built; later ones add what ``_absorb`` keeps. Ranked by ``rank``.
    """
    dropped: list[str] = []
    wanted = tuple(wanted_projects(table, query).items())
    # Plain values on the way: the first result per key, and the later ones with the same key.
    first: dict[str, RawResult] = {}
    later: dict[str, list[RawResult]] = {}
    for item in raw:
        try:
            key = canonical_url(item.url)
        except InvalidURL as exc:
            dropped.append(f"dropped a {item.provider} result with an invalid URL: {exc}")
            continue
        if key in first:
            if key in later:
                later[key].append(item)
            else:
                later[key] = [item]
        else:
            first[key] = item
    out: list[SearchResult] = []
    build = _builder(SearchResult)
    for key, item in first.items():
        snippet = cut_snippet(item.snippet)
        hits = [(item.provider, item.position)]
        published = item.published
        for other in later.get(key, ()):
            # Cleaning never lengthens a text: a snippet no longer than the kept one cannot replace it.
            other_snippet = cut_snippet(other.snippet) if len(other.snippet) > len(snippet) else ""
            snippet, published = _absorb(
                hits, snippet, published, [(other.provider, other.position)], other_snippet, other.published
            )
        rating = rate_key(key, wanted, table)
        out.append(
            build({
                "title": clean_text(item.title) or redact(clean_text(item.url)),
                "url": redact(item.url.strip()),
                "canonical_url": key,
                "snippet": snippet,
                "tier": rating.tier,
                "reliability_score": rating.reliability_score,
                "reason": rating.reason,
                "providers": tuple([_provider_hit(p, n) for p, n in hits]),
                "published": published,
            })
        )
    return rank(out), dropped


@lru_cache(maxsize=4096)
def _provider_hit(provider: str, position: int) -> ProviderHit:
    return ProviderHit.model_construct(provider=provider, position=position)  # frozen: shared


def _builder(cls: type[_M]) -> Callable[[dict[str, Any]], _M]:
    """``cls.model_construct`` for values already checked, given as a dict of every field in
    declaration order (a dict display: a call with keywords packed them into one at more cost).

    It does what ``model_construct`` does for a model without aliases, extra fields, private
    attributes or a post-init hook, minus the per-field search for aliases and defaults.
    """
    fields = cls.model_fields
    if (
        cls.__pydantic_post_init__
        or cls.__private_attributes__
        or cls.model_config.get("extra") == "allow"
        or any(f.alias or f.validation_alias for f in fields.values())
    ):  # pragma: no cover - not the case for SearchResult
        return lambda values: cls.model_construct(**values)
    new = cls.__new__
    setattr_ = object.__setattr__
    every = set(fields)  # every field is given: each model gets a copy, as ``set(values)`` made

    def build(values: dict[str, Any]) -> _M:
        model = new(cls)
        setattr_(model, "__dict__", values)
        setattr_(model, "__pydantic_fields_set__", every.copy())
        setattr_(model, "__pydantic_extra__", None)
        setattr_(model, "__pydantic_private__", None)
        return model

    return build


def _absorb(
    hits: list[_H], snippet: str, published: datetime | None,
    more_hits: Iterable[_H], more_snippet: str, more_published: datetime | None,
) -> tuple[str, datetime | None]:
    """What a later result of the same page adds (the one rule of ``merge_results`` and ``dedup``):
    its providers to ``hits`` (in place), a longer snippet, a date where there was none."""
    hits.extend(h for h in more_hits if h not in hits)
    return (more_snippet if len(more_snippet) > len(snippet) else snippet), published or more_published


def dedup(results: Iterable[SearchResult]) -> list[SearchResult]:
    """Keep the first result per canonical URL, with what later ones add (``_absorb``)."""
    kept: dict[str, SearchResult] = {}
    for result in results:
        first = kept.get(result.canonical_url)
        if first is None:
            kept[result.canonical_url] = result
            continue
        hits = list(first.providers)
        snippet, published = _absorb(
            hits, first.snippet, first.published, result.providers, result.snippet, result.published
        )
        kept[result.canonical_url] = first.model_copy(
            update={"providers": tuple(hits), "snippet": snippet, "published": published}
        )
    return list(kept.values())


def _recency(result: SearchResult) -> float:
    if result.published is None:
        return float("-inf")
    stamp = result.published
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def rank(results: Sequence[SearchResult]) -> list[SearchResult]:
    """Tier (1 first), then reliability score, then recency when known; ties keep their order."""
    return sorted(results, key=lambda r: (r.tier, -r.reliability_score, -_recency(r)))


def widen_by_tier(
    results: Sequence[SearchResult], steps: Sequence[tuple[frozenset[int], int]]
) -> list[SearchResult]:
    """Seed 000 pattern 1: take tiers step by step while there are fewer than each step's minimum.

    ``steps`` is ``[(tiers, enough), ...]``: after taking ``tiers``, stop if at least ``enough``.
    """
    allowed: set[int] = set()
    chosen: list[SearchResult] = []
    for tiers, enough in steps:
        allowed |= tiers
        chosen = [r for r in results if r.tier in allowed]
        if len(chosen) >= enough:
            break
    return chosen


def pick_per_tier(results: Sequence[SearchResult], per_tier: int, limit: int) -> list[SearchResult]:
    """Seed 000 pattern 2: group by tier, the top ``per_tier`` of each, at most ``limit``."""
    picked: list[SearchResult] = []
    for tier in (1, 2, 3, 4):
        picked.extend([r for r in results if r.tier == tier][:per_tier])
    return picked[:limit]


def published_from(text: Any, now: datetime | None = None) -> datetime | None:
    """A provider's publication date: ISO-8601 first, then loose forms ("Jul 16, 2025",
    "2 days ago", "3일 전") through dateparser. Relative forms count from ``now`` (when the
    answer came) and are ``None`` without it; ``None`` as well when absent or unreadable."""
    if not isinstance(text, str) or not text.strip() or len(text) > _DATE_MAX:
        return None
    value = text.strip().replace("Z", "+00:00")
    # Some engines send seven fractional digits ("2025-07-16T00:00:00.0000000").
    value = _FRACTION.sub(r"\1", value)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return _loose_date(text.strip(), now)
    # A time without an offset is taken as UTC, so that every published value is a full RFC 3339
    # date-time: MCP clients check structured output against the schema's "date-time" format.
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _loose_date(text: str, now: datetime | None) -> datetime | None:
    year = _YEAR.search(text)
    if not (year or (now is not None and _LETTER.search(text))):
        return None  # a bare number ("12") is no date, and a relative one needs a base
    import dateparser  # imported here: slow to load, and ISO dates are the rule

    base = (now or datetime(2000, 1, 1, tzinfo=UTC)).astimezone(UTC).replace(tzinfo=None)
    try:
        found: datetime | None = dateparser.parse(
            text, settings={"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past"}
        )
    except (ValueError, OverflowError, TypeError, LookupError):  # pragma: no cover - parser quirks
        return None
    if found is None or (now is None and not (year and str(found.year) == year.group(0))):
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)
