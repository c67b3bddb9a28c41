"""Seed 003's relevance score: four factors, weighted by query type, each explained.

| factor       | decision | status | document | fact | person | temporal | exploration |
|--------------|----------|--------|----------|------|--------|----------|-------------|
| keyword      | 0.3      | 0.2    | 0.4      | 0.3  | 0.3    | 0.3      | 0.4         |
| recency      | 0.3      | 0.4    | 0.2      | 0.1  | 0.3    | 0.1      | 0.2         |
| authority    | 0.2      | 0.1    | 0.3      | 0.4  | 0.2    | 0.2      | 0.2         |
| completeness | 0.2      | 0.3    | 0.1      | 0.2  | 0.2    | 0.4      | 0.2         |

The first four columns are seed 003's table. Ours for the other three: a person question wants
recent activity as much as matching words; a temporal question ("when did X happen?") wants a hit
that carries a date and the whole event (completeness), not the newest; exploration leans on the
words, like a document search.

Authority follows seed 003's hierarchies (fact/policy: wiki > shared doc > email > chat; decision:
meeting notes > thread conclusion > email > chat; status: tracker > recent chat > status doc >
email). Web hits enter through their tier: tier 1 ranks with official docs, tier 2 with shared
documents, tier 3 with email and tier 4 with chat (``TIER_AUTHORITY``); an untiered web hit is off
every hierarchy (0.2).

Everything here is pure: ``today`` is an argument.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime

from sourcewise.models import Authority, Factor, Hit, QueryKind
from sourcewise.text.analyze import analyze, readable

__all__ = ["AUTHORITY", "WEIGHTS", "authority_value", "score_hit", "summary_page"]

WEIGHTS: dict[QueryKind, tuple[float, float, float, float]] = {
    "decision": (0.3, 0.3, 0.2, 0.2),
    "status": (0.2, 0.4, 0.1, 0.3),
    "document": (0.4, 0.2, 0.3, 0.1),
    "fact": (0.3, 0.1, 0.4, 0.2),
    "person": (0.3, 0.3, 0.2, 0.2),
    "temporal": (0.3, 0.1, 0.2, 0.4),
    "exploration": (0.4, 0.2, 0.2, 0.2),
}

AUTHORITY: dict[QueryKind, tuple[tuple[Authority, ...], ...]] = {
    # Each level is a tuple of classes of equal standing, best first.
    "fact": (
        ("official_doc", "wiki"), ("shared_doc",), ("email", "announcement"), ("chat", "thread_conclusion")
    ),
    "document": (
        ("official_doc", "wiki", "shared_doc"), ("status_doc", "meeting_notes"), ("email", "announcement"),
        ("chat",),
    ),
    "decision": (("meeting_notes",), ("thread_conclusion",), ("email", "announcement"), ("chat",)),
    "status": (("tracker_task",), ("chat", "thread_conclusion"), ("status_doc",), ("email", "announcement")),
    "person": (("tracker_task",), ("chat", "thread_conclusion", "email"), ("wiki", "shared_doc")),
    "temporal": (("meeting_notes", "tracker_task"), ("thread_conclusion", "email"), ("chat", "wiki")),
    "exploration": (
        ("official_doc", "wiki", "shared_doc"),
        ("meeting_notes", "thread_conclusion"),
        ("email", "chat", "tracker_task"),
    ),
}  # fmt: skip
TIER_AUTHORITY: dict[int, Authority] = {1: "official_doc", 2: "shared_doc", 3: "email", 4: "chat"}
HALF_LIFE_DAYS = 90.0
UNDATED = 0.3  # an undated hit is neither fresh nor stale
COMPLETE_CHARS = 400  # a passage this long usually carries a whole answer


def authority_value(
    hit: Hit, kind: QueryKind, extra: Mapping[str, Mapping[str, int]] | None = None
) -> tuple[float, str]:
    """Where the hit's class stands in this query type's hierarchy: 1.0 at the top, 0.2 off it.
    ``extra``: a plug-in authority class -> its level (1 = top) per query type, as the source
    declares it (``Source.authority_levels``); a class in neither is off the hierarchy."""
    cls: Authority = TIER_AUTHORITY.get(hit.tier or 0, hit.authority) if hit.kind == "web" else hit.authority
    if hit.kind == "code":
        return 0.6, "code: the source of truth for how it works"
    levels = AUTHORITY[kind]
    found = next((i for i, level in enumerate(levels) if cls in level), None)
    declared = (extra or {}).get(cls, {}).get(kind)
    if found is None and declared is not None:
        found = min(max(1, declared), len(levels)) - 1
    if found is not None:
        value = 1.0 - 0.8 * found / max(1, len(levels) - 1) if len(levels) > 1 else 1.0
        via = f" (web tier {hit.tier})" if hit.kind == "web" else ""
        return round(value, 3), f"{cls}{via}: level {found + 1} of {len(levels)} for {kind} questions"
    return 0.2, f"{cls}: not in the {kind} hierarchy"


def _recency(stamp: datetime | None, today: date) -> tuple[float, str]:
    if stamp is None:
        return UNDATED, "undated"
    when = stamp.astimezone(UTC).date() if stamp.tzinfo else stamp.date()
    age = max(0, (today - when).days)
    return round(math.pow(0.5, age / HALF_LIFE_DAYS), 3), f"{age} days old (half-life {HALF_LIFE_DAYS:.0f})"


def _coverage(terms: Sequence[str], hit: Hit) -> tuple[float, list[str]]:
    if not terms:
        return 0.0, []
    have = set(analyze(" ".join([hit.title, hit.text or hit.snippet, *hit.heading_path])))
    missing = [t for t in terms if t not in have]
    return 1 - len(missing) / len(terms), missing


_SUMMARIES = (
    "changelog",
    "change-log",
    "changes",
    "release-notes",
    "release_notes",
    "releasenotes",
    "history",
    "news",
    "whatsnew",
    "whats-new",
    "third_party_packages",
    "third-party-packages",
    "plugins",
)
_ABOUT_CHANGES = frozenset(
    analyze(
        "change changes changed changelog release releases released new version "
        "versions history upgrade 변경 릴리스 버전",
        stem=False,
    )
)


def summary_page(hit: Hit, terms: Sequence[str]) -> bool:
    """A changelog, release notes, a generated list (of plugins, packages) or a page whose name
    starts with one "_" (by the convention of documentation tools a partial or a generated page,
    such as FastAPI's ``_llm-test.md``, which quotes every other page) that a question not about
    changes should find below the pages those entries summarise."""
    name = (hit.path or hit.location).split("#", 1)[0].rsplit("/", 1)[-1].lower()
    stem = name.rsplit(".", 1)[0]
    partial = stem[:1] == "_" and stem[1:2] != "_"  # "__init__" is a module, no partial
    titled = hit.title.lower().startswith(("changelog", "release notes"))
    if not (stem.startswith(_SUMMARIES) or titled or partial):
        return False
    return not _ABOUT_CHANGES.intersection(terms)


def score_hit(
    hit: Hit,
    *,
    terms: Sequence[str],
    kind: QueryKind,
    today: date,
    rank: int,
    authorities: Mapping[str, Mapping[str, int]] | None = None,
) -> tuple[float, tuple[Factor, ...]]:
    """Relevance 0-1 and its factors. ``terms`` are analyzed query terms; ``rank`` the hit's place
    (from 0) in its own source's list, which carries that source's own judgement of the match. A
    changelog or generated list counts as incomplete unless the question is about changes."""
    wk, wr, wa, wc = WEIGHTS[kind]
    covered, missing = _coverage(terms, hit)
    keyword = 0.7 * covered + 0.3 / (1 + rank)
    recency, rnote = _recency(hit.timestamp, today)
    authority, anote = authority_value(hit, kind, authorities)
    length = len(hit.text or hit.snippet)
    completeness = round(0.5 * min(1.0, length / COMPLETE_CHARS) + 0.5 * (1.0 if not missing else covered), 3)
    summary = ""
    if summary_page(hit, terms):
        completeness, keyword = 0.0, keyword * 0.5
        summary = "; a changelog or list, below the pages it summarises"
    shown = readable(missing)
    knote = f"{round(covered * 100)}% of terms" + (f", missing {', '.join(shown[:5])}" if shown else "")
    knote += f"; #{rank + 1} in {hit.source}"
    factors = (
        Factor(name="keyword", value=round(min(1.0, keyword), 3), weight=wk, note=knote),
        Factor(name="recency", value=recency, weight=wr, note=rnote),
        Factor(name="authority", value=authority, weight=wa, note=anote),
        Factor(name="completeness", value=completeness, weight=wc, note=f"{length} characters" + summary),
    )  # fmt: skip
    return round(sum(f.value * f.weight for f in factors), 4), factors
