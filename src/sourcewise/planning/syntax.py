"""Seed 003's query syntaxes: pure functions from a plan's parts to queries in one syntax.

Each source owns its syntax: a ``Source`` names the function here that renders a plan for it
(``Source.syntax``) or overrides ``Source.render``; the planner keeps the language-level work
and never asks what kind a source is. The built-in syntaxes:

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

The knowledge base gets a semantic ``descriptive_query`` or exact keyword phrases, with
``after:D`` (on or after) and ``before:D`` (before: the day after the last one wanted); ``plain`` (the
web, code, and the default for a kind the core has never heard of) gets plain terms, exact
phrases and ``-negations``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import NamedTuple

from sourcewise.models import Constraints
from sourcewise.text.words import is_hangul

__all__ = ["QueryParts", "Syntax", "chat", "email", "knowledge_base", "plain", "project_tracker"]

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


class QueryParts(NamedTuple):
    """What a syntax renders: the plan's language-level parts (``planning.planner.parts``)."""

    terms: Sequence[str]
    phrases: Sequence[str]
    negations: Sequence[str]
    constraints: Constraints
    natural: str  # the question in words (without typed filters), for semantic queries
    kind: str  # the query type (decision, status ...)
    mode: str  # semantic or keyword


Syntax = Callable[[QueryParts], list[dict[str, object]]]
"""A syntax: the fields (``mode``, ``query``, ``params``) of each query, keyword query first."""


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


def _filtered(c: Constraints) -> bool:
    return bool(c.channels or c.authors or c.after or c.before or c.types)


def plain(p: QueryParts) -> list[dict[str, object]]:
    """Terms, exact phrases and ``-negations``: the web, code, and any kind without its own."""
    query = " ".join([*_quoted(p.phrases), " ".join(p.terms), *_neg(p.negations)]).strip()
    return [{"mode": "keyword", "query": query}]


def chat(p: QueryParts) -> list[dict[str, object]]:
    """Slack's syntax: ``in:#ch from:a after:D before:D is:thread has:file``."""
    c = p.constraints
    filters: list[str] = []
    if _filtered(c):
        filters = [f"in:#{ch.lstrip('#')}" for ch in c.channels] + [f"from:{a}" for a in c.authors]
        filters += [f"after:{_shift(c.after, -1).isoformat()}"] if c.after else []
        filters += [f"before:{_shift(c.before, 1).isoformat()}"] if c.before else []
        filters += ["is:thread" for t in c.types if t == "thread"]
        filters += ["has:file" for t in c.types if t == "file"]
    keyword = " ".join([*_quoted(p.phrases), " ".join(p.terms), *filters, *_neg(p.negations)]).strip()
    out: list[dict[str, object]] = []
    if p.mode == "semantic":  # a semantic query cannot say "not": the exclusion goes as data
        said = {"params": {"exclude": list(p.negations)}} if p.negations else {}
        out.append({"mode": "semantic", "query": p.natural, **said})
    out.append({"mode": "keyword", "query": keyword})
    return out


def email(p: QueryParts) -> list[dict[str, object]]:
    """Gmail's syntax: ``from:a label:l after:YYYY/MM/DD before:YYYY/MM/DD has:attachment``."""
    c = p.constraints
    filters: list[str] = []
    if _filtered(c):
        filters = [f"from:{a}" for a in c.authors] + [f"label:{ch.lstrip('#')}" for ch in c.channels]
        filters += [f"after:{_slash(c.after)}"] if c.after else []
        filters += [f"before:{_slash(_shift(c.before, 1))}"] if c.before else []
        filters += ["has:attachment" for t in c.types if t == "file"]
    query = " ".join([*_quoted(p.phrases), " ".join(p.terms), *filters, *_neg(p.negations)]).strip()
    return [{"mode": "keyword", "query": query}]


def _kb_dates(c: Constraints) -> list[str]:
    """The knowledge base's ``after:D`` (on or after D) and ``before:D`` (before D): its date
    filters, which read an undated file by its modification day (docs/knowledge-base.md)."""
    after = [f"after:{c.after.isoformat()}"] if c.after else []
    return after + ([f"before:{_shift(c.before, 1).isoformat()}"] if c.before else [])


def knowledge_base(p: QueryParts) -> list[dict[str, object]]:
    """A semantic ``descriptive_query`` (the terms and the intent's noun) or exact keywords; the
    plan's dates as the knowledge base's filters in either."""
    dates = _kb_dates(p.constraints)
    text = " ".join(p.terms)
    if p.mode == "semantic":
        nouns = INTENT_NOUN_KO if is_hangul(p.natural) else INTENT_NOUN
        noun = nouns.get(p.kind, "")
        if noun and noun.lower() in text.lower().split():
            noun = ""  # the question already names it ("expense policy")
        described = (f"{text} {noun}" if text and noun else text or noun).strip() or p.natural
        semantic: dict[str, str | bool | list[str]] = {"descriptive_query": described}
        if p.negations:  # a description cannot say "not": the exclusion goes as data
            semantic["exclude"] = list(p.negations)
        return [{"mode": "semantic", "query": " ".join([described, *dates]), "params": semantic}]
    query = " ".join([*_quoted(p.phrases), text, *dates, *_neg(p.negations)]).strip()
    return [{"mode": "keyword", "query": query, "params": {"query": query}}]


def project_tracker(p: QueryParts) -> list[dict[str, object]]:
    """A tracker's search fields (Asana's): ``assignee_any``, ``modified_on_after`` ..."""
    c = p.constraints
    params: dict[str, str | bool | list[str]] = {"text": " ".join([*p.phrases, " ".join(p.terms)]).strip()}
    if c.mine:
        params["assignee_any"] = "me"
    if c.authors:
        params["assignee_any" if p.kind in ("person", "status") else "created_by_any"] = ",".join(c.authors)
    if c.after:
        params["modified_on_after"] = _shift(c.after, -1).isoformat()
    if c.before:
        params["modified_on_before"] = _shift(c.before, 1).isoformat()
    subtypes = [t for t in c.types if t not in ("thread", "file")]
    if subtypes:
        params["resource_subtype"] = subtypes[0]
    if p.kind == "status":
        params["completed"] = False
    if p.negations:
        params["exclude"] = list(p.negations)
    query = " ".join([f"{k}:{v}" for k, v in params.items()])
    return [{"mode": "keyword", "query": query, "params": params}]
