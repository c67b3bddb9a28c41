"""Reading a source's own query syntax: ``aurora in:#eng after:2025-01-15 "exact phrase" -draft``.

Every private source takes the query the planner wrote for it (or the user typed) in its own syntax.
This module splits such a query into plain terms, exact phrases, negated terms and ``key:value``
filters in one left-to-right pass (no regular expression, so its time is linear in the input).
A source then keeps the filters it understands and reports the rest: a filter it cannot honour is
said, never silently dropped.

Only words of the shared filter vocabulary (``FILTER_KEYS``) count as filters, so ``http://x`` or
``12:30`` stay plain terms.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

__all__ = ["FILTER_KEYS", "MAX_QUERY_CHARS", "ParsedQuery", "filter_of", "parse_query"]

MAX_QUERY_CHARS = 4_000
"""Longer source queries are cut here: no real filter query is longer, and scans stay cheap."""

FILTER_KEYS = frozenset(
    {
        "from", "to", "in", "after", "before", "during", "on", "is", "has", "type", "subject",
        "label", "assignee", "author", "milestone", "state", "path", "lang", "ext", "title",
        "assignee_any", "created_by_any", "modified_on_after", "modified_on_before",
        "resource_subtype", "completed", "text", "kind", "channel", "updated", "created",
    }
)  # fmt: skip


@dataclass(frozen=True)
class ParsedQuery:
    """A query split into its parts, in the order they were written."""

    terms: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    negations: list[str] = field(default_factory=list)
    filters: list[tuple[str, str]] = field(default_factory=list)

    def values(self, key: str) -> list[str]:
        """Every value given for ``key`` (``from:a from:b`` gives both)."""
        return [v for k, v in self.filters if k == key]

    def unsupported(self, keys: Collection[str]) -> list[str]:
        """The filters not in ``keys``, written as they were, for a warning."""
        return [f"{k}:{v}" for k, v in self.filters if k not in keys]

    @property
    def text(self) -> str:
        """Terms and phrases as plain words, for a full-text index."""
        return " ".join([*self.phrases, *self.terms])


def _tokens(query: str) -> list[tuple[str, bool]]:
    """Whitespace-separated tokens; a double-quoted run is one token. ``(token, was_quoted)``.

    A closing quote ends its token: what follows it is a token of its own (``"한 날"은``: the phrase
    and the particle; ``"exact phrase"s``); an opening quote starts one unless it follows ``key:``
    or ``-`` (``from:"Sarah Kim"``, ``-"exact phrase"``). A quote left open is not a quote (an
    inch mark after a digit if there is one, else the last): a question with one stray ``"`` would
    otherwise turn all that follows it into one required phrase; ``-"draft`` is ``-draft``."""
    if '"' not in query:  # what the loop below makes of it, split in C (every query is parsed)
        return [(token, False) for token in query.split()]
    if query.count('"') % 2:  # one quote is not a quote: an inch mark (5") if any, else the last
        inch = next((i for i in range(1, len(query)) if query[i] == '"' and query[i - 1].isdigit()), -1)
        at = inch if inch >= 0 else query.rindex('"')
        query = query[:at] + query[at + 1 :]
    out: list[tuple[str, bool]] = []
    buf: list[str] = []
    quoted = False
    had_quote = False
    for ch in query:
        if ch == '"':
            if quoted and buf:  # the closing quote: the phrase (or key:"value") is whole
                out.append(("".join(buf), True))
                buf, had_quote = [], False
            elif buf and buf[-1] != ":" and buf != ["-"]:  # word"phrase": two tokens
                out.append(("".join(buf), had_quote))
                buf, had_quote = [], False
            quoted = not quoted
            had_quote = had_quote or quoted
            continue
        if ch.isspace() and not quoted:
            if buf:
                out.append(("".join(buf), had_quote))
            buf, had_quote = [], False
            continue
        buf.append(ch)
    if buf:
        out.append(("".join(buf), had_quote))
    return out


def filter_of(token: str) -> tuple[str, str] | None:
    """``(key, value)`` when the token is a filter of the shared vocabulary (``after:2026-01-01``)."""
    key, sep, value = token.partition(":")
    return (key.lower(), value) if sep and value and key.lower() in FILTER_KEYS else None


def parse_query(query: str) -> ParsedQuery:
    """Split ``query`` into terms, phrases, negations and filters (linear time; cut at 4,000 chars)."""
    parsed = ParsedQuery()
    for token, was_quoted in _tokens(query[:MAX_QUERY_CHARS]):
        found = filter_of(token)
        if found is not None:
            parsed.filters.append(found)
        elif token.startswith("-") and len(token) > 1:
            parsed.negations.append(token[1:])
        elif was_quoted:
            parsed.phrases.append(token)
        else:
            parsed.terms.append(token)
    return parsed
