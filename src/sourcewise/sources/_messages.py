"""What the chat and mail sources share: an in-memory FTS5 index, date spans, snippets, clean text.

Both sources read a whole export (a Slack export, an mbox or a Maildir) once per source instance
into records, index each record's analyzed text (``core/analyze.py``) in an in-memory SQLite FTS5
table ranked by BM25, and then filter the ranked rows with their own predicates. In memory rather
than a cache file: reading a 10,000-message mbox and indexing it takes about a second, once, and
a query afterwards takes milliseconds (``benchmarks/run.py messages``).
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import date, datetime, tzinfo
from typing import Generic, Protocol, TypeVar

from ..core.analyze import fts_query
from ..core.filters import ParsedQuery

__all__ = ["FtsIndex", "Loaded", "clean", "date_span", "day_bounds", "matching_rows", "snippet"]

_CONTROL = dict.fromkeys([*range(0, 9), 11, 12, *range(14, 32), 127, *range(0x80, 0xA0)])
_CONTROL.update(dict.fromkeys([0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
SNIPPET_CHARS = 240


def clean(text: str) -> str:
    """Text from outside without control characters (bidi overrides included); tabs, newlines kept."""
    return text.replace("\r\n", "\n").translate(_CONTROL)


def day_bounds(start: date | None, end: date | None, zone: tzinfo) -> tuple[float, float]:
    """``[start, end)`` as epoch seconds at midnight in ``zone`` (open ends are infinite)."""
    lo = datetime.combine(start, datetime.min.time(), zone).timestamp() if start else -math.inf
    hi = datetime.combine(end, datetime.min.time(), zone).timestamp() if end else math.inf
    return lo, hi


def date_span(value: str) -> tuple[date, date] | None:
    """``2025``, ``2025-01`` or ``2025-01-15`` (``/`` or ``.`` between parts too) as the half-open
    range ``[first day, day after the last)``; ``None`` when ``value`` is not such a date."""
    parts = value.strip().replace("/", "-").replace(".", "-").split("-")
    if not all(p.isascii() and p.isdigit() for p in parts) or len(parts[0]) != 4:
        return None
    try:
        year = int(parts[0])
        if len(parts) == 1:
            return date(year, 1, 1), date(year + 1, 1, 1)
        month = int(parts[1])
        if len(parts) == 2:
            end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
            return date(year, month, 1), end
        if len(parts) == 3:
            day = date(year, month, int(parts[2]))
            return day, date.fromordinal(day.toordinal() + 1)
    except (ValueError, OverflowError):
        return None
    return None


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def snippet(text: str, words: Iterable[str], width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` on one line around the first of ``words`` it contains."""
    flat = " ".join(text.split())
    low = flat.casefold()
    found = [i for w in words if w and (i := low.find(w.casefold())) >= 0]
    pos = min(found, default=0)
    start = max(0, pos - width // 4)
    if start:
        space = flat.rfind(" ", 0, start)
        start = space + 1 if space >= 0 and start - space < 30 else start
    cut = flat[start : start + width]
    return ("…" if start else "") + cut + ("…" if start + width < len(flat) else "")


class FtsIndex:
    """An in-memory FTS5 table over analyzed text, one row per record (rowid = record number)."""

    def __init__(self, columns: Sequence[str], weights: Sequence[float]) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._weights = ", ".join(str(float(w)) for w in weights)
        self._db.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5({', '.join(columns)}, "
            "tokenize=\"unicode61 remove_diacritics 0 tokenchars '_'\")"
        )
        self._columns = tuple(columns)

    def add(self, rows: Iterable[tuple[int, Sequence[str]]]) -> None:
        """Index ``(rowid, analyzed column texts)`` rows in one transaction."""
        marks = ", ".join("?" * (len(self._columns) + 1))
        with self._db:
            self._db.executemany(
                f"INSERT INTO docs(rowid, {', '.join(self._columns)}) VALUES ({marks})",
                ((r, *cols) for r, cols in rows),
            )

    def search(self, text: str) -> Iterator[tuple[int, float]]:
        """``(rowid, score)`` for rows holding any analyzed term of ``text``, best (highest) first;
        lazy, so a caller that stops after ``limit`` kept rows reads no further."""
        match = fts_query(text)
        if not match:
            return
        rows = self._db.execute(
            f"SELECT rowid, bm25(docs, {self._weights}) AS s FROM docs WHERE docs MATCH ? ORDER BY s",
            (match,),
        )
        for rowid, score in rows:
            yield rowid, -score

    def containing(self, text: str) -> set[int]:
        """Rows holding any analyzed term of ``text`` (for ``-negations``)."""
        match = fts_query(text)
        if not match:
            return set()
        return {r for (r,) in self._db.execute("SELECT rowid FROM docs WHERE docs MATCH ?", (match,))}

    def close(self) -> None:
        self._db.close()


def matching_rows(
    index: FtsIndex,
    parsed: ParsedQuery,
    newest_first: Callable[[], Iterable[int]],
    text_of: Callable[[int], str],
) -> Iterator[tuple[int, float]]:
    """Rows for the text of ``parsed`` (BM25 order), or every row newest first when the query is only
    filters; ``-negations`` and ``"exact phrases"`` applied. Nothing for a query with neither."""
    candidates: Iterable[tuple[int, float]]
    if fts_query(parsed.text):
        candidates = index.search(parsed.text)
    elif parsed.filters or parsed.negations:
        candidates = ((row, 0.0) for row in newest_first())
    else:
        return
    excluded = index.containing(" ".join(parsed.negations)) if parsed.negations else set()
    phrases = [_fold(p) for p in parsed.phrases if p.strip()]
    for row, score in candidates:
        if row in excluded:
            continue
        if phrases and not all(p in _fold(text_of(row)) for p in phrases):
            continue
        yield row, score


class _Closable(Protocol):
    signature: tuple[int, ...]
    index: FtsIndex


T = TypeVar("T", bound=_Closable)


class Loaded(Generic[T]):
    """One source's loaded index, built off the event loop once and again only when the files change."""

    def __init__(self) -> None:
        self.value: T | None = None
        self._lock: asyncio.Lock | None = None

    async def get(self, signature: Callable[[], tuple[int, ...]], build: Callable[[], T]) -> T:
        if self.value is not None and self.value.signature == signature():
            return self.value
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.value is None or self.value.signature != signature():
                fresh = await asyncio.to_thread(build)
                old, self.value = self.value, fresh
                if old is not None:
                    old.index.close()
            return self.value

    def close(self) -> None:
        if self.value is not None:
            self.value.index.close()
            self.value = None
