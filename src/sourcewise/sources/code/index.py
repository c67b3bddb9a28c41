"""The code source's SQLite FTS5 index, kept up to date by mtime and size (the files come from
``codewalk.py``).

The index is one SQLite file per repository under ``state_dir/code`` (or ``:memory:``). A refresh
stats every candidate file and re-reads only those whose mtime or size changed, in one transaction,
so a failing refresh leaves the previous index whole.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sourcewise.errors import IndexVersionError
from sourcewise.sources._fts import fts_match
from sourcewise.sources.code.outline import Outline, Symbol, chunk_spans, outline
from sourcewise.sources.code.walk import Candidate, read_source
from sourcewise.text.analyze import analyze

__all__ = ["SCHEMA", "ChunkRow", "CodeIndex", "index_path"]

SCHEMA = 2  # 2: per-file term counts for whole-file BM25
PROGRESS_EVERY = 500  # files read between two progress reports of a long refresh
WEIGHTS = (2.0, 4.0, 1.0)


def index_path(state_dir: Path, root: Path) -> Path:
    """Where the index of ``root`` lives: one file per resolved repository path."""
    key = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return state_dir / "code" / f"{key}.sqlite3"


@dataclass(frozen=True)
class ChunkRow:
    path: str
    start: int
    end: int
    text: str
    symbols: list[Symbol]
    score: float


MAX_VERBATIM = 24  # strings of a task looked for word for word
MAX_HOLDERS = 12  # a string held by more files (docs and tests too) points nowhere in particular

_DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, mtime_ns INTEGER,
    size INTEGER, lang TEXT, skipped TEXT, defines TEXT, imports TEXT, symbols TEXT);
CREATE TABLE IF NOT EXISTS chunks(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, start_line INTEGER,
    end_line INTEGER, text TEXT);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE TABLE IF NOT EXISTS terms(term TEXT NOT NULL, file_id INTEGER NOT NULL, tf INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS terms_term ON terms(term);
CREATE INDEX IF NOT EXISTS terms_file ON terms(file_id);
CREATE TABLE IF NOT EXISTS lengths(file_id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(path, names, body,
    tokenize="unicode61 remove_diacritics 0 tokenchars '_'");
"""


def _symbols_json(symbols: list[Symbol]) -> str:
    return json.dumps([[s.name, s.start, s.end, s.depth] for s in symbols])


def _symbols(raw: str | None) -> list[Symbol]:
    return [Symbol(str(n), int(a), int(b), int(d)) for n, a, b, d in json.loads(raw or "[]")]


class CodeIndex:
    """SQLite FTS5 over ~``chunk_lines``-line chunks; safe to use from worker threads one at a time."""

    def __init__(self, db: Path | None, chunk_lines: int) -> None:
        self.db = db
        self.chunk_lines = chunk_lines
        self.lock = threading.Lock()
        self.conn = self._open()

    def _open(self) -> sqlite3.Connection:
        if self.db is None:
            return self._prepare(sqlite3.connect(":memory:", check_same_thread=False))
        self.db.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._prepare(sqlite3.connect(self.db, check_same_thread=False, timeout=10))
        except sqlite3.DatabaseError:  # a corrupt cache: it is only a cache, so start it again
            self.db.unlink(missing_ok=True)
            return self._prepare(sqlite3.connect(self.db, check_same_thread=False, timeout=10))

    def _prepare(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        try:
            if self.db is not None:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(
                    "PRAGMA synchronous=NORMAL"
                )  # WAL stays consistent; a crash loses the last refresh only
            conn.execute("PRAGMA cache_size=-65536")  # 64 MB: a cold build rewrites FTS pages otherwise
            conn.executescript(_DDL)
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError:
            conn.close()
            raise
        schema = int(meta.get("schema", SCHEMA))
        if schema > SCHEMA:
            conn.close()
            raise IndexVersionError(
                str(self.db), f"code index schema {schema} is newer than this sourcewise ({SCHEMA})"
            )
        if schema < SCHEMA or int(meta.get("chunk_lines", self.chunk_lines)) != self.chunk_lines:
            with conn:
                conn.execute("DELETE FROM chunks_fts")
                conn.execute("DELETE FROM chunks")
                conn.execute("DELETE FROM files")
                conn.execute("DELETE FROM terms")
                conn.execute("DELETE FROM lengths")
        with conn:
            conn.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [("schema", str(SCHEMA)), ("chunk_lines", str(self.chunk_lines))],
            )
        return conn

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def refresh(
        self,
        files: list[Candidate],
        progress: Callable[[int, int], None] | None = None,
        stop: threading.Event | None = None,
    ) -> tuple[int, int, int]:
        """Bring the index in line with ``files``: ``(added, updated, removed)``. ``progress(done,
        total)`` is called once the files to read are known, then after each file, when there are
        ``PROGRESS_EVERY`` or more to read.
        ``stop`` set: the files read so far are committed and the rest left for the next refresh
        (a search that gave up waiting: its process can end, and the next run goes on from there)."""
        with self.lock, self.conn:
            known = {
                p: (i, m, s) for i, p, m, s in self.conn.execute("SELECT id, path, mtime_ns, size FROM files")
            }
            wanted = {c.rel for c in files}
            removed = [i for p, (i, _, _) in known.items() if p not in wanted]
            for file_id in removed:
                self._delete(file_id)
            added = updated = 0
            todo = [c for c in files if (known.get(c.rel) or (0, None, None))[1:] != (c.mtime_ns, c.size)]
            # Progress only for a long refresh: every file (what ``pending`` says at a deadline);
            # the source prints every ``PROGRESS_EVERY``.
            report = progress if progress is not None and len(todo) >= PROGRESS_EVERY else None
            if report is not None:
                report(0, len(todo))  # the files are listed: how many there are to read
            for done, cand in enumerate(todo, 1):
                if stop is not None and stop.is_set():
                    return added, updated, len(removed)
                old = known.get(cand.rel)
                if old is not None:
                    self._delete(old[0])
                    updated += 1
                else:
                    added += 1
                self._add(cand)
                if report is not None:
                    report(done, len(todo))
            return added, updated, len(removed)

    def _delete(self, file_id: int) -> None:
        self.conn.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,)
        )
        self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM terms WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM lengths WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _add(self, cand: Candidate) -> None:
        text, why = read_source(cand.path)
        try:
            info = outline(cand.rel, text) if text is not None else Outline(None)
        except Exception as exc:  # one file the outline cannot read is skipped, never the whole index
            text, why, info = None, f"not indexed: its outline failed ({type(exc).__name__})", Outline(None)
        cur = self.conn.execute(
            "INSERT INTO files(path, mtime_ns, size, lang, skipped, defines, imports, symbols) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (cand.rel, cand.mtime_ns, cand.size, info.language, why or None, json.dumps(info.defines),
             json.dumps(info.imports), _symbols_json(info.symbols)),
        )  # fmt: skip
        if text is None:
            return
        lines = text.split("\n")
        path_terms = " ".join(analyze(cand.rel))
        counts = Counter(path_terms.split())
        for start, end in chunk_spans(len(lines), info.symbols, self.chunk_lines):
            body = "\n".join(lines[start - 1 : end])
            body_terms = analyze(body)
            counts.update(body_terms)
            names = " ".join(s.name for s in info.symbols if start <= s.start <= end)
            chunk = self.conn.execute(
                "INSERT INTO chunks(file_id, start_line, end_line, text) VALUES (?, ?, ?, ?)",
                (cur.lastrowid, start, end, body),
            )
            self.conn.execute(
                "INSERT INTO chunks_fts(rowid, path, names, body) VALUES (?, ?, ?, ?)",
                (chunk.lastrowid, path_terms, " ".join(analyze(names)), " ".join(body_terms)),
            )
        self.conn.executemany(
            "INSERT INTO terms(term, file_id, tf) VALUES (?, ?, ?)",
            [(t, cur.lastrowid, n) for t, n in counts.items()],
        )
        self.conn.execute(
            "INSERT INTO lengths(file_id, n) VALUES (?, ?)", (cur.lastrowid, sum(counts.values()))
        )

    def search(self, match: str, exclude: str, keep: Callable[[str], bool], limit: int) -> list[ChunkRow]:
        """Chunks matching the FTS5 expression ``match`` (best first), or with no ``match`` the first
        chunk of each file in path order; ``exclude`` removes chunks that match it."""
        cols = "f.path, c.start_line, c.end_line, c.text, f.symbols"
        not_in = (
            "AND c.id NOT IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH :neg)" if exclude else ""
        )
        if match:
            rank = f"bm25(chunks_fts, {', '.join(map(str, WEIGHTS))})"
            sql = (
                f"SELECT {cols}, -{rank} FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
                f"JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH :q AND sw_keep(f.path) {not_in} "
                f"ORDER BY {rank} LIMIT :n"
            )
        else:
            sql = (
                f"SELECT {cols}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
                f"WHERE c.start_line = 1 AND sw_keep(f.path) {not_in} ORDER BY f.path LIMIT :n"
            )
        with self.lock:
            self.conn.create_function("sw_keep", 1, lambda p: 1 if keep(p) else 0, deterministic=True)
            rows = self.conn.execute(sql, {"q": match, "neg": exclude, "n": limit}).fetchall()
        return [ChunkRow(p, a, b, t, _symbols(s), float(score)) for p, a, b, t, s, score in rows]

    def best_passages(self, words: list[str], paths: set[str], rows: int = 400) -> dict[str, float]:
        """Each of ``paths``' best chunk's BM25 for ``words``: the one passage most about them (of
        the best ``rows`` chunks of those files). The files are named in the query, so SQLite reads
        only their chunks (a filter called back per matching chunk took 6.8x as long on a
        1,000-file repository, benchmarks/RESULTS.md, retrieve)."""
        match = fts_match(words)
        if not match or not paths:
            return {}
        rank = f"bm25(chunks_fts, {', '.join(map(str, WEIGHTS))})"
        sql = (
            f"SELECT f.path, -{rank} FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
            f"JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH ? "
            f"AND f.path IN ({', '.join('?' * len(paths))}) ORDER BY {rank} LIMIT ?"
        )
        best: dict[str, float] = {}
        with self.lock:
            found = self.conn.execute(sql, [match, *sorted(paths), rows]).fetchall()
        for path, score in found:
            best[path] = max(best.get(path, 0.0), float(score))
        return best

    def file_bm25(self, query: list[str], k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
        """Each searchable file's BM25 score for ``query`` over whole files (path and body terms;
        Lucene's variant with bm25s's defaults), computed inside SQLite."""
        counts = Counter(query)  # a word the task repeats weighs more, as in bm25s's sum over the query
        terms = list(counts)
        if not terms:
            return {}
        marks = ", ".join("?" * len(terms))
        with self.lock:
            n, avg = self.conn.execute("SELECT COUNT(*), AVG(n) FROM lengths").fetchone()
            df = self.conn.execute(
                f"SELECT term, COUNT(*) FROM terms WHERE term IN ({marks}) GROUP BY term", terms
            ).fetchall()
            if not df:
                return {}
            idf = [(t, (1 + math.log(counts[t])) * math.log(1 + (n - d + 0.5) / (d + 0.5))) for t, d in df]
            values = ", ".join("(?, ?)" for _ in idf)
            sql = (
                f"WITH q(term, idf) AS (VALUES {values}) SELECT f.path, SUM(q.idf * t.tf * (:k1 + 1) / "
                f"(t.tf + :k1 * (1 - :b + :b * l.n / :avg))) FROM terms t JOIN q ON q.term = t.term "
                f"JOIN lengths l ON l.file_id = t.file_id JOIN files f ON f.id = t.file_id "
                f"WHERE f.skipped IS NULL GROUP BY t.file_id"
            )
            args = [v for pair in idf for v in pair]
            sql = sql.replace(":k1", repr(k1)).replace(":b", repr(b)).replace(":avg", repr(float(avg or 1.0)))
            rows = self.conn.execute(sql, args).fetchall()
        return {str(p): float(v) for p, v in rows}

    def containing(self, strings: list[str], most: int = MAX_HOLDERS) -> dict[str, set[str]]:
        """The searchable files holding each of ``strings`` word for word (a config key, an error
        message), for a string held by at most ``most`` files: the files holding all its words
        (the term index), then its exact text in their chunks."""
        out: dict[str, set[str]] = {}
        with self.lock:
            for text in list(dict.fromkeys(s for s in strings if s))[:MAX_VERBATIM]:
                words = list(dict.fromkeys(analyze(text)))
                if not words:
                    continue
                marks = ", ".join("?" * len(words))
                ids = self.conn.execute(
                    f"SELECT file_id FROM terms WHERE term IN ({marks}) GROUP BY file_id "
                    f"HAVING COUNT(*) = ? LIMIT ?",
                    [*words, len(words), 4 * most + 1],
                ).fetchall()
                if not ids or len(ids) > 4 * most:
                    continue  # none, or too common to point anywhere
                holders = self.conn.execute(
                    f"SELECT DISTINCT f.path FROM chunks c JOIN files f ON f.id = c.file_id WHERE "
                    f"c.file_id IN ({', '.join('?' * len(ids))}) AND instr(c.text, ?) > 0 LIMIT ?",
                    [*(i for (i,) in ids), text, most + 1],
                ).fetchall()
                if 0 < len(holders) <= most:
                    out[text] = {str(p) for (p,) in holders}
        return out

    def facts(self) -> list[tuple[str, list[str], list[str], list[Symbol]]]:
        """Every searchable file's ``(path, defines, imports, symbols)``."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT path, defines, imports, symbols FROM files WHERE skipped IS NULL ORDER BY path"
            ).fetchall()
        return [(str(p), json.loads(d or "[]"), json.loads(i or "[]"), _symbols(s)) for p, d, i, s in rows]

    def holds(self, rel: str) -> bool:
        """Whether ``rel`` is an indexed file whose text is searchable: the walk kept it (not ignored,
        excluded or too large) and it was read (not binary, minified or unreadable)."""
        with self.lock:
            sql = "SELECT 1 FROM files WHERE path = ? AND skipped IS NULL"
            row = self.conn.execute(sql, (rel,)).fetchone()
        return row is not None

    def outline(self, rel: str) -> Outline | None:
        with self.lock:
            row = self.conn.execute(
                "SELECT lang, defines, imports, symbols FROM files WHERE path = ?", (rel,)
            ).fetchone()
        if row is None:
            return None
        return Outline(row[0], json.loads(row[1] or "[]"), json.loads(row[2] or "[]"), _symbols(row[3]))

    def stats(self) -> tuple[int, int, list[tuple[str, str]], int]:
        """``(files indexed, chunks, files skipped when read with why, newest mtime_ns)``."""
        with self.lock:
            files, newest = self.conn.execute(
                "SELECT COUNT(*), COALESCE(MAX(mtime_ns), 0) FROM files WHERE skipped IS NULL"
            ).fetchone()
            chunks = self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            skipped = self.conn.execute(
                "SELECT path, skipped FROM files WHERE skipped IS NOT NULL ORDER BY path"
            )
            return int(files), int(chunks), [(str(p), str(r)) for p, r in skipped], int(newest)
