"""Seed 003's per-source query syntax: one plan, rendered for each kind of source.

| filter         | chat               | email (Gmail-like)   | project tracker                      |
|----------------|--------------------|----------------------|--------------------------------------|
| ``from:sarah`` | ``from:sarah``     | ``from:sarah``       | ``assignee_any`` or ``created_by_any`` |
| ``in:eng``     | ``in:#eng``        | ``label:eng``        | (dropped)                            |
| ``after:D``    | ``after:D``        | ``after:YYYY/MM/DD`` | ``modified_on_after: D``             |
| ``before:D``   | ``before:D``       | ``before:YYYY/MM/DD``| ``modified_on_before: D``            |
| ``type:thread``| ``is:thread``      | (dropped)            | (dropped)                            |
| ``type:file``  | ``has:file``       | ``has:attachment``   | (dropped)                            |
| ``type:X``     | (dropped)          | (dropped)            | ``resource_subtype: X`` (milestone ...) |

Dates: a plan's ``after``/``before`` are the first and last day wanted (inclusive). Each source
is written in its own documented semantics: Slack's ``after:``/``before:`` exclude the day
named, Gmail's ``after:`` includes it and ``before:`` excludes it, and the tracker's
``modified_on.after``/``.before`` (Asana search) exclude it; so ``after:D`` for chat is the day
before the first day wanted. The table above shows the shape; these shifts apply to it.

The knowledge base gets a semantic ``descriptive_query`` or exact keyword phrases; the web gets
plain terms, exact phrases and ``-negations``; so does code.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from ..models import Constraints, SourceKind, SourceQuery
from .text import is_hangul

__all__ = ["SOURCES", "render_sources", "render_specs"]

SOURCES: tuple[SourceKind, ...] = ("chat", "code", "email", "knowledge_base", "project_tracker", "web")
INTENT_NOUN = {
    "decision": "decision",
    "status": "status update",
    "document": "document",
    "person": "owner",
    "fact": "policy",
    "temporal": "date",
    "exploration": "",
}
INTENT_NOUN_KO = {
    "decision": "결정 근거",
    "status": "진행 상황",
    "document": "문서",
    "person": "담당자",
    "fact": "정책",
    "temporal": "날짜",
    "exploration": "",
}


def _quoted(phrases: Sequence[str]) -> list[str]:
    return [f'"{p}"' for p in phrases]


def _neg(negations: Sequence[str]) -> list[str]:
    return [f"-{n}" if " " not in n else f'-"{n}"' for n in negations]


def _slash(day: date) -> str:
    return day.strftime("%Y/%m/%d")


def _shift(day: date, days: int) -> date:
    """``day`` moved by ``days``; at the ends of the calendar it stays (nothing lies beyond)."""
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return day


def render_sources(
    sources: Sequence[SourceKind],
    *,
    terms: Sequence[str],
    phrases: Sequence[str],
    negations: Sequence[str],
    constraints: Constraints,
    natural: str,
    kind: str,
    mode: str,
) -> list[SourceQuery]:
    """One or more ``SourceQuery`` per source, in that source's own syntax."""
    specs = render_specs(
        sources,
        terms=terms,
        phrases=phrases,
        negations=negations,
        constraints=constraints,
        natural=natural,
        kind=kind,
        mode=mode,
    )
    return [SourceQuery(**spec) for spec in specs]  # type: ignore[arg-type]


def render_specs(
    sources: Sequence[SourceKind],
    *,
    terms: Sequence[str],
    phrases: Sequence[str],
    negations: Sequence[str],
    constraints: Constraints,
    natural: str,
    kind: str,
    mode: str,
) -> list[dict[str, object]]:
    """``render_sources`` as the fields of each ``SourceQuery``, for a model that validates them
    as part of its own (one validation instead of one per query)."""
    text = " ".join(terms)
    exact = _quoted(phrases) if phrases else []
    neg = _neg(negations) if negations else []
    c = constraints
    filtered = bool(c.channels or c.authors or c.after or c.before or c.types)
    out: list[dict[str, object]] = []
    for source in sources:
        if source == "chat":
            filters: list[str] = []
            if filtered:
                filters = [f"in:#{ch.lstrip('#')}" for ch in c.channels] + [f"from:{a}" for a in c.authors]
                filters += [f"after:{_shift(c.after, -1).isoformat()}"] if c.after else []
                filters += [f"before:{_shift(c.before, 1).isoformat()}"] if c.before else []
                filters += ["is:thread" for t in c.types if t == "thread"] + [
                    "has:file" for t in c.types if t == "file"
                ]
            keyword = " ".join([*exact, text, *filters, *neg]).strip()
            if mode == "semantic":
                said = {"params": {"exclude": list(negations)}} if negations else {}
                out.append({"source": "chat", "mode": "semantic", "query": natural, **said})
            out.append({"source": "chat", "mode": "keyword", "query": keyword})
        elif source == "email":
            filters = []
            if filtered:
                filters = [f"from:{a}" for a in c.authors] + [f"label:{ch.lstrip('#')}" for ch in c.channels]
                filters += [f"after:{_slash(c.after)}"] if c.after else []
                filters += [f"before:{_slash(_shift(c.before, 1))}"] if c.before else []
                filters += ["has:attachment" for t in c.types if t == "file"]
            out.append(
                {
                    "source": "email",
                    "mode": "keyword",
                    "query": " ".join([*exact, text, *filters, *neg]).strip(),
                }
            )
        elif source == "knowledge_base":
            if mode == "semantic":
                nouns = INTENT_NOUN_KO if is_hangul(natural) else INTENT_NOUN
                noun = nouns.get(kind, "")
                if noun and noun.lower() in text.lower().split():
                    noun = ""  # the question already names it ("expense policy")
                described = (f"{text} {noun}" if text and noun else text or noun).strip() or natural
                semantic: dict[str, str | bool | list[str]] = {"descriptive_query": described}
                if negations:  # a description cannot say "not": the exclusion goes as data
                    semantic["exclude"] = list(negations)
                out.append(
                    {"source": "knowledge_base", "mode": "semantic", "query": described, "params": semantic}
                )
            else:
                query = " ".join([*exact, text, *neg]).strip()
                out.append(
                    {
                        "source": "knowledge_base",
                        "mode": "keyword",
                        "query": query,
                        "params": {"query": query},
                    }
                )
        elif source == "project_tracker":
            params: dict[str, str | bool | list[str]] = {"text": " ".join([*phrases, text]).strip()}
            if c.mine:
                params["assignee_any"] = "me"
            if c.authors:
                params["assignee_any" if kind in ("person", "status") else "created_by_any"] = ",".join(
                    c.authors
                )
            if c.after:
                params["modified_on_after"] = _shift(c.after, -1).isoformat()
            if c.before:
                params["modified_on_before"] = _shift(c.before, 1).isoformat()
            if c.types:
                subtypes = [t for t in c.types if t not in ("thread", "file")]
                if subtypes:
                    params["resource_subtype"] = subtypes[0]
            if kind == "status":
                params["completed"] = False
            if negations:
                params["exclude"] = list(negations)
            query = " ".join([f"{k}:{v}" for k, v in params.items()])
            out.append({"source": "project_tracker", "mode": "keyword", "query": query, "params": params})
        elif source in ("web", "code"):
            out.append({"source": source, "mode": "keyword", "query": " ".join([*exact, text, *neg]).strip()})
    return out
