"""SQLite FTS5 over analyzed text, shared by the SQLite-backed sources (chat, mail, issues, code):
match expressions from a parsed query, and an index of records with who may read each."""

from __future__ import annotations

import sqlite3
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from sourcewise.access import PUBLIC
from sourcewise.sources.filters import ParsedQuery
from sourcewise.text.analyze import analyze, fts_query

__all__ = ["FtsIndex", "fts_match", "matching_rows"]


def fts_match(terms: Sequence[str], phrases: Sequence[str] = ()) -> str:
    """Any of ``terms`` and every phrase (a quoted FTS5 phrase of analyzed terms), or ``""``.

    Every term is quoted, so nothing typed by a user is read as FTS5 syntax."""
    any_term = fts_query(" ".join(terms))
    parts = [any_term] if any_term else []
    for phrase in phrases:
        words = analyze(phrase)
        if words:
            parts.append('"' + " ".join(w.replace('"', '""') for w in words) + '"')
    return " AND ".join(f"({p})" for p in parts)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


class FtsIndex:
    """An FTS5 table over analyzed text, one row per record (rowid = record number): in memory, or
    in an open stored export file (``db``) whose ``docs`` table already exists."""

    def __init__(
        self, columns: Sequence[str], weights: Sequence[float], db: sqlite3.Connection | None = None
    ) -> None:
        self._weights = ", ".join(str(float(w)) for w in weights)
        self._columns = tuple(columns)
        if db is None:
            db = sqlite3.connect(":memory:", check_same_thread=False)
            self.create(db, columns)
        self._db = db

    @staticmethod
    def create(db: sqlite3.Connection, columns: Sequence[str]) -> None:
        db.execute(
            f"CREATE VIRTUAL TABLE docs USING fts5({', '.join(columns)}, "
            "tokenize=\"unicode61 remove_diacritics 0 tokenchars '_'\")"
        )
        # who may read each record (``readers``): ``*`` for everyone, else user:/group: principals
        db.execute("CREATE TABLE readers(row INTEGER NOT NULL, principal TEXT NOT NULL)")
        db.execute("CREATE INDEX readers_principal ON readers(principal, row)")

    @staticmethod
    def fill(
        db: sqlite3.Connection,
        columns: Sequence[str],
        rows: Iterable[tuple[int, Sequence[str]]],
        readers: Mapping[int, Sequence[str]] | None = None,
    ) -> None:
        """Insert ``(rowid, analyzed column texts)`` rows and their readers (everyone, for a row
        ``readers`` does not name), in the caller's transaction."""
        marks = ", ".join("?" * (len(columns) + 1))
        ids: list[int] = []

        def each() -> Iterator[tuple[object, ...]]:
            for r, cols in rows:
                ids.append(r)
                yield (r, *cols)

        db.executemany(f"INSERT INTO docs(rowid, {', '.join(columns)}) VALUES ({marks})", each())
        known = readers or {}
        pairs = ((r, p) for r in ids for p in known.get(r, (PUBLIC,)))
        db.executemany("INSERT INTO readers VALUES (?, ?)", pairs)

    def add(
        self, rows: Iterable[tuple[int, Sequence[str]]], readers: Mapping[int, Sequence[str]] | None = None
    ) -> None:
        """Index rows (see ``fill``) in one transaction."""
        with self._db:
            self.fill(self._db, self._columns, rows, readers)

    def search(self, text: str, principals: Sequence[str] | None = None) -> Iterator[tuple[int, float]]:
        """``(rowid, score)`` for rows holding any analyzed term of ``text`` (and, given
        ``principals``, that one of them may read: a condition of the same query), best (highest)
        first; lazy, so a caller that stops after ``limit`` kept rows reads no further."""
        return self.matching(fts_query(text), principals)

    def matching(self, match: str, principals: Sequence[str] | None = None) -> Iterator[tuple[int, float]]:
        """``search`` for an FTS5 expression already built (``_fts.fts_match``: phrases, any-of terms)."""
        if not match:
            return
        readable, args = _readable(principals)
        rows = self._db.execute(
            f"SELECT rowid, bm25(docs, {self._weights}) AS s FROM docs WHERE docs MATCH ?{readable} "
            "ORDER BY s",
            (match, *args),
        )
        for rowid, score in rows:
            yield rowid, -score

    def visible(self, principals: Sequence[str]) -> set[int]:
        """The rows one of ``principals`` may read."""
        readable, args = _readable(principals)
        return {r for (r,) in self._db.execute(f"SELECT rowid FROM docs WHERE 1{readable}", args)}

    def containing(self, text: str) -> set[int]:
        """Rows holding any analyzed term of ``text`` (for ``-negations``)."""
        match = fts_query(text)
        if not match:
            return set()
        return {r for (r,) in self._db.execute("SELECT rowid FROM docs WHERE docs MATCH ?", (match,))}

    def close(self) -> None:
        self._db.close()


def _readable(principals: Sequence[str] | None) -> tuple[str, tuple[str, ...]]:
    """The SQL condition (and its arguments) keeping rows one of ``principals`` may read."""
    if principals is None:
        return "", ()
    marks = ", ".join("?" * len(principals)) or "NULL"
    return f" AND rowid IN (SELECT row FROM readers WHERE principal IN ({marks}))", tuple(principals)


def matching_rows(
    index: FtsIndex,
    parsed: ParsedQuery,
    newest_first: Callable[[], Iterable[int]],
    text_of: Callable[[int], str],
    principals: Sequence[str] | None = None,
) -> Iterator[tuple[int, float]]:
    """Rows for the text of ``parsed`` (BM25 order), or every row newest first when the query is only
    filters; ``-negations`` and ``"exact phrases"`` applied; given ``principals``, only the rows one
    of them may read (``access.readers``). Nothing for a query with neither text nor filters."""
    candidates: Iterable[tuple[int, float]]
    if fts_query(parsed.text):
        candidates = index.search(parsed.text, principals)
    elif parsed.filters or parsed.negations:
        visible = None if principals is None else index.visible(principals)
        candidates = ((row, 0.0) for row in newest_first() if visible is None or row in visible)
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
