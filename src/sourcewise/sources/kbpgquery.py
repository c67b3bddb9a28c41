"""The query side of the PostgreSQL store: BM25 over the one analyzer's terms, computed in SQL.

The ranking is the embedded engine's (tantivy): per field, ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``
and ``idf * (k1 + 1) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with k1 = 1.2, b = 0.75, ``N`` the
chunks, ``df`` the chunks whose field holds the term, ``dl`` the field's length in terms and ``avgdl``
its average; each field's score weighted as ``kbquery.WEIGHTS`` says, summed over the query's clauses.
A required term scores as a clause of its own; a phrase (several words) must occur in one field, in
order, and scores like the engine's phrase query: its frequency, the sum of its words' idf, unweighted.
Filters, required and excluded terms are conditions of the same SQL query, never applied after it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import SourceUnavailable
from .kbquery import HEADINGS_SEP, WEIGHTS, LexQuery, Row, StoreFilter

__all__ = ["FIELDS", "K1", "B", "PgView", "filter_sql", "guarded"]

FIELDS = tuple(WEIGHTS)  # field numbers in kb_postings: 0 title, 1 headings, 2 body
K1 = 1.2
B = 0.75

_SCORE = """
WITH q(clause, term) AS (SELECT * FROM unnest(%(clauses)s::int[], %(terms)s::text[])),
w(field, weight) AS (SELECT * FROM unnest(%(fields)s::int[], %(weights)s::float8[])),
n AS (SELECT greatest(value, 1)::float8 AS n FROM kb_counts WHERE name = 'docs'),
avg AS (SELECT substr(name, 8)::int AS field, greatest(value::float8 / n.n, 1e-9) AS avgdl
        FROM kb_counts, n WHERE name LIKE 'tokens\\_%%'),
df AS (SELECT term, field, count(*)::float8 AS df FROM kb_postings WHERE term = ANY(%(terms)s)
       GROUP BY term, field),
per AS (
    SELECT p.chunk_id, q.clause, sum(
        w.weight * ln(1 + (n.n - df.df + 0.5) / (df.df + 0.5)) * %(k1p)s * p.tf
        / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.dl / a.avgdl))) AS s
    FROM q JOIN kb_postings p ON p.term = q.term
    JOIN df ON df.term = p.term AND df.field = p.field
    JOIN w ON w.field = p.field JOIN avg a ON a.field = p.field CROSS JOIN n
    WHERE %(only)s::bigint[] IS NULL OR p.chunk_id = ANY(%(only)s::bigint[])
    GROUP BY p.chunk_id, q.clause),
agg AS (SELECT chunk_id, sum(s) AS score, array_agg(clause) AS got FROM per GROUP BY chunk_id),
cands AS (SELECT chunk_id FROM agg WHERE %(only)s::bigint[] IS NULL
          UNION SELECT unnest(%(only)s::bigint[]))
SELECT c.id, coalesce(agg.score, 0) FROM cands JOIN kb_chunks c ON c.id = cands.chunk_id
LEFT JOIN agg ON agg.chunk_id = cands.chunk_id
WHERE coalesce(agg.got, '{}') @> %(required)s::int[] AND {filter}
  AND NOT EXISTS (SELECT 1 FROM kb_postings x WHERE x.chunk_id = c.id AND x.term = ANY(%(excluded)s))
ORDER BY 2 DESC, 1 LIMIT %(limit)s
"""

_PHRASE = """
SELECT chunk_id, field, term, positions, dl FROM kb_postings
WHERE term = ANY(%(words)s) AND (chunk_id, field) IN (
    SELECT chunk_id, field FROM kb_postings WHERE term = ANY(%(words)s)
    GROUP BY chunk_id, field HAVING count(*) = %(count)s)
"""

_STATS = """
SELECT 'n', -1, value::float8 FROM kb_counts WHERE name = 'docs'
UNION ALL SELECT '', substr(name, 8)::int, value::float8 FROM kb_counts WHERE name LIKE 'tokens\\_%%'
UNION ALL SELECT term, field, count(*)::float8 FROM kb_postings WHERE term = ANY(%(words)s)
    GROUP BY term, field
"""

_ROW = "c.id, c.path, c.title, c.day, c.headings, c.body, c.start_line, c.end_line, c.embed_hash, c.dated"


@contextmanager
def guarded(location: str) -> Iterator[None]:
    """A database error (the server gone, a lost connection) as ``SourceUnavailable`` naming the
    location (never the password); what the transaction held is rolled back by the server."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise SourceUnavailable("kb", f"{location}: {first}") from exc


def _like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def filter_sql(where: StoreFilter, params: dict[str, Any]) -> str:
    """The filter as an SQL condition on ``kb_chunks c`` (its values added to ``params``)."""
    conds: list[str] = []

    def any_of(column: str, patterns: list[str], negate: bool) -> None:
        if not patterns:
            return
        names = []
        for pattern in patterns:
            name = f"f{len(params)}"
            params[name] = pattern
            names.append(f"c.{column} LIKE %({name})s")
        conds.append(("NOT " if negate else "") + "(" + " OR ".join(names) + ")")

    for values, negate in ((where.paths, False), (where.not_paths, True)):
        globs = [
            "%" + "".join("%" if ch == "*" else "_" if ch == "?" else _like(ch) for ch in v.lower()) + "%"
            for v in values
        ]
        any_of("path_lc", globs, negate)
    for values, negate in ((where.titles, False), (where.not_titles, True)):
        any_of("title_lc", ["%" + _like(v.lower()) + "%" for v in values], negate)
    for values, negate in ((where.exts, False), (where.not_exts, True)):
        if values:
            name = f"f{len(params)}"
            params[name] = [e.lower().lstrip(".") for e in values]
            conds.append(f"{'NOT ' if negate else ''}c.ext = ANY(%({name})s)")
    for value, op in ((where.after, ">="), (where.before, "<")):
        if value:
            name = f"f{len(params)}"
            params[name] = int(value.replace("-", ""))
            conds.append(f"c.day {op} %({name})s")
    return " AND ".join(conds) or "TRUE"


def _bm25(tf: float, dl: float, avgdl: float, idf: float) -> float:
    return idf * (K1 + 1) * tf / (tf + K1 * (1 - B + B * dl / avgdl))


def _idf(n: float, df: float) -> float:
    import math

    return math.log(1 + (n - df + 0.5) / (df + 0.5))


class PgView:
    """Ranks, filters and reads chunks of the PostgreSQL store (keys: ``(0, chunk id)``)."""

    def __init__(self, db: Any, lock: threading.RLock, location: str) -> None:
        self.db = db
        self._lock = lock
        self.location = location

    def _all(self, sql: str, params: dict[str, Any] | Sequence[Any]) -> list[tuple[Any, ...]]:
        with self._lock, guarded(self.location):
            return list(self.db.execute(sql.encode(), params).fetchall())

    def lexical(self, q: LexQuery, where: StoreFilter, limit: int) -> list[tuple[tuple[int, int], float]]:
        """(chunk key, BM25 score) best first."""
        if q.empty():
            return []
        phrased: dict[int, float] | None = None
        for words in q.phrases:
            got = self._phrase(words) if len(words) > 1 else None
            if got is not None:
                keep = got if phrased is None else {k: v + phrased[k] for k, v in got.items() if k in phrased}
                phrased = keep
        single = [w[0] for w in q.phrases if len(w) == 1]
        clauses = [(i, t) for i, t in enumerate(q.terms)]
        required = list(range(len(clauses), len(clauses) + len(single) + len(q.required)))
        clauses += [(i, t) for i, t in zip(required, [*single, *q.required], strict=True)]
        params: dict[str, Any] = {
            "clauses": [c for c, _ in clauses],
            "terms": [t for _, t in clauses],
            "required": required,
            "fields": list(range(len(FIELDS))),
            "weights": [WEIGHTS[f] for f in FIELDS],
            "k1": K1,
            "k1p": K1 + 1,
            "b": B,
            "excluded": q.excluded,
            "only": None if phrased is None else list(phrased),
            "limit": limit if phrased is None else None,
        }
        if phrased is not None and not phrased:
            return []
        sql = _SCORE.replace("{filter}", filter_sql(where, params))
        rows = self._all(sql, params)
        scored = [((0, int(i)), float(s) + (phrased or {}).get(int(i), 0.0)) for i, s in rows]
        if phrased is not None:
            scored.sort(key=lambda x: (-x[1], x[0]))
        return scored[:limit]

    def _phrase(self, words: list[str]) -> dict[int, float]:
        """chunk id -> the phrase's score, for the chunks holding it in some field (summed over fields)."""
        distinct = list(dict.fromkeys(words))
        stats = self._all(_STATS, {"words": distinct})
        n = max(next(v for t, f, v in stats if t == "n" and f == -1), 1.0)
        avgdl = {f: max(v / n, 1e-9) for t, f, v in stats if t == "" and f >= 0}
        df = {(t, f): v for t, f, v in stats if t not in ("n", "")}
        found: dict[tuple[int, int], tuple[dict[str, list[int]], int]] = {}
        for chunk_id, field, term, positions, dl in self._all(
            _PHRASE, {"words": distinct, "count": len(distinct)}
        ):
            found.setdefault((chunk_id, field), ({}, dl))[0][term] = positions
        out: dict[int, float] = {}
        for (chunk_id, field), (positions, dl) in found.items():
            later = [set(positions[w]) for w in words[1:]]
            freq = sum(all(p + i + 1 in s for i, s in enumerate(later)) for p in positions[words[0]])
            if freq:
                idf = sum(_idf(n, df.get((w, field), 0.0)) for w in words)
                out[chunk_id] = out.get(chunk_id, 0.0) + _bm25(freq, dl, avgdl.get(field, 1.0), idf)
        return out

    def by_hashes(
        self, hashes: Sequence[str], where: StoreFilter, limit: int
    ) -> dict[str, list[tuple[int, int]]]:
        params: dict[str, Any] = {"hashes": list(hashes), "limit": limit}
        sql = "SELECT c.embed_hash, c.id FROM kb_chunks c WHERE c.embed_hash = ANY(%(hashes)s) AND "
        sql += filter_sql(where, params) + " ORDER BY c.id LIMIT %(limit)s"
        out: dict[str, list[tuple[int, int]]] = {}
        for h, chunk_id in self._all(sql, params):
            out.setdefault(h, []).append((0, int(chunk_id)))
        return out

    def rows(self, keys: Sequence[tuple[int, int]]) -> dict[tuple[int, int], Row]:
        ids = [k[1] for k in dict.fromkeys(keys)]
        if not ids:
            return {}
        got = self._all(f"SELECT {_ROW} FROM kb_chunks c WHERE c.id = ANY(%s)", [ids])
        return {(0, int(r[0])): _row(r) for r in got}

    def texts(self, hashes: Sequence[str]) -> list[tuple[str, str]]:
        got = self._all(
            f"SELECT DISTINCT ON (c.embed_hash) {_ROW} FROM kb_chunks c "
            "WHERE c.embed_hash = ANY(%s) ORDER BY c.embed_hash, c.id",
            [list(hashes)],
        )
        return [
            (row.embed_hash, "\n".join([row.title, *row.heading_path, row.text])) for row in map(_row, got)
        ]


def _row(r: tuple[Any, ...]) -> Row:
    day = str(r[3])
    headings = tuple(r[4].split(HEADINGS_SEP)) if r[4] else ()
    return Row(
        (0, int(r[0])),
        r[1],
        r[2],
        f"{day[:4]}-{day[4:6]}-{day[6:]}",
        headings,
        r[5],
        r[6],
        r[7],
        r[8],
        bool(r[9]),
    )
