"""The query side of the PostgreSQL store: BM25 over the one analyzer's terms, computed in SQL.

The ranking is the embedded engine's (tantivy): per field, ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``
and ``idf * (k1 + 1) * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with k1 = 1.2, b = 0.75, ``N`` the
chunks, ``df`` the chunks whose field holds the term, ``dl`` the field's length in terms (stored as
the engine stores it: ``fieldnorm``) and ``avgdl`` its exact average; each field's score weighted as
``kbquery.WEIGHTS`` says and by the term's own weight (``LexQuery.weights``), summed over the query's clauses.
A required term scores as a clause of its own; a phrase (several words) must occur in one field, in
order, and scores like the engine's phrase query: its frequency, the sum of its words' idf, unweighted.
Filters, required and excluded terms are conditions of the same SQL query, never applied after it.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sourcewise.errors import SourceUnavailable
from sourcewise.sources.kb.pgvector import NEAREST, as_vector
from sourcewise.sources.kb.query import HEADINGS_SEP, WEIGHTS, LexQuery, Row, StoreFilter, embedded

__all__ = ["FIELDS", "K1", "B", "PgView", "fieldnorm", "filter_sql", "guarded"]

FIELDS = tuple(WEIGHTS)  # field numbers in kb_postings: 0 title, 1 headings, 2 body
K1 = 1.2
B = 0.75

_SCORE = """
WITH q(clause, term, w) AS (
    SELECT * FROM unnest(%(clauses)s::int[], %(terms)s::text[], %(boosts)s::float8[])),
st AS (SELECT (SELECT greatest(value, 1)::float8 FROM kb_counts WHERE name = 'docs') AS n,
    ARRAY(SELECT value::float8 FROM kb_counts WHERE name LIKE 'tokens\\_%%' ORDER BY name) AS tokens),
p AS (SELECT chunk_id, term, field, tf, dl, count(*) OVER (PARTITION BY term, field)::float8 AS df
      FROM kb_postings WHERE term = ANY(%(terms)s)),
per AS (
    SELECT p.chunk_id, q.clause, sum(
        q.w * (%(weights)s::float8[])[p.field + 1]
        * ln(1 + (st.n - p.df + 0.5) / (p.df + 0.5)) * %(k1p)s * p.tf
        / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.dl / greatest(st.tokens[p.field + 1] / st.n, 1e-9)))) AS s
    FROM p JOIN q ON q.term = p.term CROSS JOIN st
    {only}
    GROUP BY p.chunk_id, q.clause),
agg AS (SELECT chunk_id, sum(s) AS score, array_agg(clause) AS got FROM per GROUP BY chunk_id)
"""


def _score_sql(where: StoreFilter, params: dict[str, Any], phrased: bool) -> str:
    """The scoring query: only the conditions the query has (a condition always true still costs
    the planner a join it cannot estimate)."""
    only = "WHERE p.chunk_id = ANY(%(only)s::bigint[])" if phrased else ""
    source = "(SELECT unnest(%(only)s::bigint[]) AS chunk_id) cands LEFT JOIN agg USING (chunk_id)"
    ref = "cands.chunk_id" if phrased else "agg.chunk_id"
    conds = []
    if params["required"]:
        conds.append("coalesce(agg.got, '{}') @> %(required)s::int[]")
    if params["excluded"]:
        conds.append(f"NOT EXISTS (SELECT 1 FROM kb_postings x WHERE x.chunk_id = {ref} "
                     "AND x.term = ANY(%(excluded)s))")  # fmt: skip
    filtered = filter_sql(where, params)
    join = ""
    if filtered != "TRUE":
        join = f" JOIN kb_chunks c ON c.id = {ref}"
        conds.append(filtered)
    return (
        _SCORE.replace("{only}", only)
        + f"SELECT {ref}, coalesce(agg.score, 0) FROM {source if phrased else 'agg'}{join} "
        + f"WHERE {' AND '.join(conds) or 'TRUE'} ORDER BY 2 DESC, 1 LIMIT %(limit)s"
    )


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
    if where.readers is not None:  # only chunks one of the user's principals may read
        name = f"f{len(params)}"
        params[name] = list(where.readers)
        conds.append(f"c.readers && %({name})s::text[]")
    return " AND ".join(conds) or "TRUE"


def _fieldnorms() -> list[int]:
    """The engine's 256 field lengths (tantivy's ``FIELD_NORMS_TABLE``): exact up to 40, then 8 steps
    per doubling of the step; a length is stored as the largest of them not above it."""
    table, value, step = list(range(41)), 40, 2
    while len(table) < 256:
        for _ in range(min(8, 256 - len(table))):
            value += step
            table.append(value)
        step *= 2
    return table


_NORMS = _fieldnorms()


def fieldnorm(length: int) -> int:
    """A field's length as the engine ranks with it (lossy above 40 terms, like tantivy's)."""
    return _NORMS[bisect.bisect_right(_NORMS, length) - 1]


def _bm25(tf: float, dl: float, avgdl: float, idf: float) -> float:
    return idf * (K1 + 1) * tf / (tf + K1 * (1 - B + B * dl / avgdl))


def _idf(n: float, df: float) -> float:
    import math

    return math.log(1 + (n - df + 0.5) / (df + 0.5))


class PgView:
    """Ranks, filters and reads chunks of the PostgreSQL store (keys: ``(0, chunk id)``)."""

    def __init__(self, db: Any, lock: threading.RLock, location: str, pgvector: bool = False) -> None:
        self.pgvector = pgvector
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
            "boosts": [q.weights.get(t, 1.0) if i < len(q.terms) else 1.0 for i, t in clauses],
            "required": required,
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
        rows = self._all(_score_sql(where, params, phrased is not None), params)
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

    def nearest(
        self, vector: bytes, where: StoreFilter, limit: int
    ) -> list[tuple[tuple[int, int], float]] | None:
        """(chunk key, cosine similarity) nearest first, by pgvector's HNSW index with the filter
        inside the query; ``None`` without pgvector (the caller compares in its process)."""
        if not self.pgvector:
            return None
        params: dict[str, Any] = {"q": as_vector(vector), "limit": limit}
        rows = self._all(NEAREST.replace("{where}", filter_sql(where, params)), params)
        return [((0, int(i)), float(s)) for i, s in rows]

    def files(self, keys: Sequence[tuple[int, int]]) -> list[Hashable]:
        """The path of each key's chunk (a value per key, the same for the chunks of one file)."""
        ids = [k[1] for k in keys]
        if not ids:
            return []
        got = dict(self._all("SELECT c.id, c.path FROM kb_chunks c WHERE c.id = ANY(%s)", [ids]))
        return [got.get(i) for i in ids]

    def embedded_chars(self, keys: Sequence[tuple[int, int]]) -> list[int]:
        """Per key, the length of the text its chunk's embedding read (a column: no text sent)."""
        ids = [k[1] for k in keys]
        if not ids:
            return []
        got = dict(self._all("SELECT c.id, c.embedded_chars FROM kb_chunks c WHERE c.id = ANY(%s)", [ids]))
        return [int(got.get(i, 0)) for i in ids]

    def rows(self, keys: Sequence[tuple[int, int]]) -> dict[tuple[int, int], Row]:
        ids = [k[1] for k in dict.fromkeys(keys)]
        if not ids:
            return {}
        got = self._all(f"SELECT {_ROW} FROM kb_chunks c WHERE c.id = ANY(%s)", [ids])
        return {(0, int(r[0])): _row(r) for r in got}

    def after(self, path: str, line: int, limit: int) -> Row | None:
        """The chunk of ``path`` that starts first after ``line`` (``limit``: the embedded store's)."""
        got = self._all(
            f"SELECT {_ROW} FROM kb_chunks c WHERE c.path = %s AND c.start_line > %s "
            "ORDER BY c.start_line LIMIT 1",
            [path, line],
        )
        return _row(got[0]) if got else None

    def texts(self, hashes: Sequence[str]) -> list[tuple[str, str]]:
        got = self._all(
            f"SELECT DISTINCT ON (c.embed_hash) {_ROW} FROM kb_chunks c "
            "WHERE c.embed_hash = ANY(%s) ORDER BY c.embed_hash, c.id",
            [list(hashes)],
        )
        return [
            (row.embed_hash, embedded(row.title, row.heading_path, row.text)) for row in map(_row, got)
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
