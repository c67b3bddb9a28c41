"""Cross-source merge: one entry per item however many sources returned it, ranked for the question.

The key is the canonical URL for anything with an http(s) location (so the web and a wiki page that
links the same URL meet) and the location itself otherwise (``path#L10-L24``, ``mid:...``). The
entry keeps the best-scoring hit and lists every source that returned it (``found_by``), with the
rank that source gave it and the relevance its copy scored, as SearXNG shows its engines. Ranking is
``relevance.score_hit`` per hit, then a stable order: relevance, then source name, then location.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

from sourcewise.answer.relevance import score_hit
from sourcewise.errors import InvalidURL
from sourcewise.models import FoundBy, Hit, QueryKind, RankedHit
from sourcewise.web.urls import canonical_url

__all__ = ["hit_key", "merge_and_rank"]


def hit_key(hit: Hit) -> str:
    """The dedup key of a hit (canonical URL, or the location as given)."""
    if hit.location.startswith(("http://", "https://")):
        try:
            return canonical_url(hit.location)
        except InvalidURL:
            return hit.location
    return hit.location


def merge_and_rank(
    per_source: Sequence[Sequence[Hit]],
    *,
    terms: Sequence[str],
    kind: QueryKind,
    today: date,
    authorities: Mapping[str, Mapping[str, int]] | None = None,
) -> list[RankedHit]:
    """Score every hit, merge duplicates across sources, best first. ``authorities``: the levels
    plug-in sources declare for their own authority classes (``Source.authority_levels``)."""
    best: dict[str, RankedHit] = {}
    seen_in: dict[str, dict[str, FoundBy]] = {}
    for hits in per_source:
        for rank, hit in enumerate(hits):
            relevance, factors = score_hit(
                hit, terms=terms, kind=kind, today=today, rank=rank, authorities=authorities
            )
            key = hit_key(hit)
            weight = min(1.0, relevance)
            found = seen_in.setdefault(key, {})
            prior = found.get(hit.source)
            if prior is None or weight > prior.weight:  # a source's weight is its best copy's
                found[hit.source] = FoundBy(
                    source=hit.source, position=prior.position if prior else rank + 1,
                    weight=round(weight, 4), providers=_providers(hit),
                )  # fmt: skip
            current = best.get(key)
            if current is None or relevance > current.relevance:
                best[key] = RankedHit(hit=hit, relevance=weight, factors=factors)
    ranked = [r.model_copy(update={"found_by": tuple(seen_in[k].values())}) for k, r in best.items()]
    ranked.sort(key=lambda r: (-r.relevance, r.hit.source, r.hit.location))
    return ranked


def _providers(hit: Hit) -> tuple[str, ...]:
    """The web providers behind a web hit (``sources.web.hit_from_result`` notes them)."""
    named = hit.meta.get("providers", "")
    return tuple(named.split(",")) if named else ()
