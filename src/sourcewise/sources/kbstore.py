"""Knowledge-base storage behind a small interface, so a server backend (PostgreSQL with tsvector
and pgvector) can follow without touching the search logic in ``kb.py``.

``SQLiteStore`` keeps files, chunks, an FTS5 index of analyzed terms (title, headings, body, ranked
by bm25() with column weights) and float32 embeddings keyed by the hash of the text they embed, in
one SQLite file in WAL mode. Writes come in batches, one transaction each: a run that is killed or
fails leaves every earlier batch, and so a complete index, behind it.

Plain OR queries are ranked by ``kblex``, an in-memory copy of FTS5's bm25 derived from the FTS
index (saved as ``<db>.lex.npz``), keyed by a generation every write replaces; everything else, and
any query while that copy is missing or stale, goes to FTS5.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from ..errors import IndexVersionError, SourceFormatError
from . import kblex

log = logging.getLogger("sourcewise")

__all__ = ["SCHEMA_VERSION", "ChunkRow", "FileRow", "Row", "SQLiteStore", "Store", "StoreFilter"]

SCHEMA_VERSION = 1
WEIGHTS = (4.0, 2.0, 1.0)  # bm25() weights: title, headings, body
_BM25 = "bm25(chunks_fts, {}, {}, {})".format(*WEIGHTS)
_SCORING = repr((kblex.FORMAT, kblex.K1, kblex.B, WEIGHTS)).encode()


@dataclass(frozen=True)
class FileRow:
    path: str
    hash: str
    mtime_ns: int
    size: int
    title: str
    doc_date: str  # ISO date: front matter, else the file's modification day
    ext: str
    mtime_dated: bool = True  # doc_date follows the modification time (no front-matter date)


@dataclass(frozen=True)
class ChunkRow:
    ordinal: int
    text: str
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    terms_title: str
    terms_headings: str
    terms_body: str
    embed_hash: str


@dataclass(frozen=True)
class Row:
    """A stored chunk with its file, as search reads it back."""

    chunk_id: int
    path: str
    title: str
    doc_date: str
    heading_path: tuple[str, ...]
    text: str
    start_line: int
    end_line: int
    embed_hash: str
    dated: bool = True  # the date is the document's own (front matter), not its file's mtime


@dataclass
class StoreFilter:
    """Conditions on the file a chunk comes from; each list is OR-ed, the lists AND-ed."""

    paths: list[str] = field(default_factory=list)  # glob (``*``, ``?``) or a path prefix
    not_paths: list[str] = field(default_factory=list)
    exts: list[str] = field(default_factory=list)
    not_exts: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)  # substring, case-insensitive
    not_titles: list[str] = field(default_factory=list)
    after: str | None = None  # ISO date, inclusive
    before: str | None = None  # ISO date, exclusive

    def sql(self) -> tuple[str, list[str]]:
        parts: list[str] = []
        args: list[str] = []

        def any_of(values: list[str], clause: str, arg: Iterable[str], negate: bool) -> None:
            if values:
                joined = " OR ".join([clause] * len(values))
                parts.append(f"{'NOT ' if negate else ''}({joined})")
                args.extend(arg)

        path_clause = "(f.path GLOB ? OR f.path LIKE ? ESCAPE '\\')"
        for values, negate in ((self.paths, False), (self.not_paths, True)):
            any_of(values, path_clause, (x for v in values for x in (_glob(v), _prefix(v))), negate)
        any_of(self.exts, "f.ext = ?", (e.lower().lstrip(".") for e in self.exts), False)
        any_of(self.not_exts, "f.ext = ?", (e.lower().lstrip(".") for e in self.not_exts), True)
        any_of(self.titles, "instr(lower(f.title), ?) > 0", (t.lower() for t in self.titles), False)
        any_of(self.not_titles, "instr(lower(f.title), ?) > 0", (t.lower() for t in self.not_titles), True)
        if self.after:
            parts.append("f.doc_date >= ?")
            args.append(self.after)
        if self.before:
            parts.append("f.doc_date < ?")
            args.append(self.before)
        return " AND ".join(parts), args


def _generation(db: sqlite3.Connection) -> str:
    """What the lexical accelerator is keyed by: the token every write of this version replaces,
    FTS5's own averages record (row count and token totals) and structure record (its segments
    and write counter), which any writer of the FTS index changes, even one keeping the totals,
    and the scoring constants the saved shares were computed with."""
    row = db.execute(
        "SELECT (SELECT value FROM meta WHERE key='generation'),"
        " (SELECT block FROM chunks_fts_data WHERE id=1), (SELECT block FROM chunks_fts_data WHERE id=10)"
    ).fetchone()
    digest = hashlib.blake2b(bytes(row[1] or b""), digest_size=16)
    digest.update(bytes(row[2] or b""))
    digest.update(_SCORING)  # a release that scores otherwise never reads an older file
    return f"{row[0]}-{digest.hexdigest()}"


@lru_cache(maxsize=4096)
def _headings(stored: str) -> tuple[str, ...]:
    """A chunk's stored heading path (JSON); chunks of one file share theirs, so a cache reads it once."""
    return tuple(json.loads(stored))


def _glob(value: str) -> str:
    return value if value.startswith("/") or value.startswith("*") else "*" + value


def _prefix(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "%" + escaped + "%"


class Store(Protocol):
    """What the knowledge base needs from its storage."""

    location: str

    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def files(self) -> dict[str, tuple[str, int, int]]: ...
    def batch(self) -> AbstractContextManager[None]: ...
    def put_file(self, file: FileRow, chunks: Sequence[ChunkRow]) -> None: ...
    def touch_file(self, path: str, mtime_ns: int, mtime_day: str) -> None: ...
    def remove_files(self, paths: Iterable[str]) -> None: ...
    def lexical(self, match: str, where: StoreFilter, limit: int) -> list[tuple[int, float]]: ...
    def prepare_search(self) -> None: ...
    def rows(self, chunk_ids: Sequence[int]) -> dict[int, Row]: ...
    def filtered_ids(self, where: StoreFilter) -> set[int] | None: ...
    def missing_vectors(self) -> list[tuple[str, str]]: ...
    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> None: ...
    def vectors(self) -> tuple[list[int], list[bytes]]: ...
    def stats(self) -> tuple[int, int, float | None]: ...
    def close(self) -> None: ...


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, hash TEXT NOT NULL, mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL, title TEXT NOT NULL, doc_date TEXT NOT NULL, ext TEXT NOT NULL,
    mtime_dated INTEGER NOT NULL,
    indexed_at REAL NOT NULL DEFAULT ((julianday('now') - 2440587.5) * 86400.0));
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL, heading_path TEXT NOT NULL, text TEXT NOT NULL,
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, embed_hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE INDEX IF NOT EXISTS chunks_embed ON chunks(embed_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    title, headings, body, tokenize = "unicode61 remove_diacritics 0 tokenchars '_'");
CREATE TABLE IF NOT EXISTS vectors(hash TEXT PRIMARY KEY, vec BLOB NOT NULL);
"""


class SQLiteStore:
    """The embedded default: one SQLite file (or ``:memory:``)."""

    def __init__(self, path: Path | str) -> None:
        self.location = str(path)
        self._lock = threading.RLock()
        try:
            self.db = sqlite3.connect(self.location, check_same_thread=False, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.execute("PRAGMA cache_size=-32000")  # 32 MB of pages: a large index stays warm
            self._check_version()
            self.db.executescript(_SCHEMA)
            rank = "bm25({}, {}, {})".format(*WEIGHTS)
            # Set only when it differs: writing FTS5's configuration changes its structure record,
            # which keys the lexical accelerator (every open would make the saved one stale).
            if (
                self.db.execute("SELECT 1 FROM chunks_fts_config WHERE k='rank' AND v=?", (rank,)).fetchone()
                is None
            ):
                self.db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('rank', ?)", (rank,))
            self.db.execute("INSERT OR IGNORE INTO meta VALUES('schema_version', ?)", (str(SCHEMA_VERSION),))
            self.db.execute("INSERT OR IGNORE INTO meta VALUES('generation', lower(hex(randomblob(8))))")
        except sqlite3.DatabaseError as exc:
            raise SourceFormatError("kb", f"{self.location} is not a sourcewise index ({exc})") from exc
        # The lexical accelerator (kblex): a cache of the FTS index, keyed by the generation.
        self.accelerate = kblex.available()
        self._lex: kblex.LexIndex | None = None
        self._lex_asked = 0  # queries the accelerator could have answered
        self._lex_looked = ""  # the generation last looked for on disk
        self._lex_failed = ""  # a generation whose text FTS5 splits otherwise: FTS5 until the next write
        self._lex_build = threading.Lock()
        self._lex_took = 0.0
        self._lex_built_at = -math.inf
        self._lex_file = None if self.location == ":memory:" else Path(self.location + ".lex.npz")

    def _check_version(self) -> None:
        has_meta = self.db.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone()
        if not has_meta:
            return
        row = self.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        version = int(row[0]) if row and str(row[0]).isdigit() else 0
        if version > SCHEMA_VERSION:
            self.db.close()
            raise IndexVersionError(
                "kb",
                f"{self.location} was written by a newer sourcewise (index schema {version}; this "
                f"version reads up to {SCHEMA_VERSION}). Upgrade sourcewise, or index into another file "
                "with --kb FILE.",
            )

    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))

    def files(self) -> dict[str, tuple[str, int, int]]:
        """path -> (content hash, mtime_ns, size)."""
        with self._lock:
            rows = self.db.execute("SELECT path, hash, mtime_ns, size FROM files").fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}

    @contextmanager
    def batch(self) -> Iterator[None]:
        """One transaction: everything inside is committed together or not at all."""
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def _bump(self) -> None:
        """A new generation: the accelerator of any earlier one is no longer used."""
        self.db.execute("INSERT OR REPLACE INTO meta VALUES('generation', lower(hex(randomblob(8))))")

    def _delete_file(self, path: str) -> None:
        ids = "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?"
        self.db.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({ids})", (path,))
        self.db.execute("DELETE FROM files WHERE path = ?", (path,))

    def put_file(self, file: FileRow, chunks: Sequence[ChunkRow]) -> None:
        self._bump()
        self._delete_file(file.path)
        cur = self.db.execute(
            "INSERT INTO files(path, hash, mtime_ns, size, title, doc_date, ext, mtime_dated)"
            " VALUES(?,?,?,?,?,?,?,?)",
            (file.path, file.hash, file.mtime_ns, file.size, file.title, file.doc_date, file.ext,
             file.mtime_dated),
        )  # fmt: skip
        file_id = cur.lastrowid
        for c in chunks:
            cur = self.db.execute(
                "INSERT INTO chunks(file_id, ordinal, heading_path, text, start_line, end_line, embed_hash)"
                " VALUES(?,?,?,?,?,?,?)",
                (file_id, c.ordinal, json.dumps(c.heading_path, ensure_ascii=False), c.text,
                 c.start_line, c.end_line, c.embed_hash),
            )  # fmt: skip
            self.db.execute(
                "INSERT INTO chunks_fts(rowid, title, headings, body) VALUES(?,?,?,?)",
                (cur.lastrowid, c.terms_title, c.terms_headings, c.terms_body),
            )

    def touch_file(self, path: str, mtime_ns: int, mtime_day: str) -> None:
        """Same content, new modification time: the date moves with it unless front matter set it."""
        self.db.execute(
            "UPDATE files SET mtime_ns = ?, doc_date = CASE WHEN mtime_dated THEN ? ELSE doc_date END"
            " WHERE path = ?",
            (mtime_ns, mtime_day, path),
        )

    def remove_files(self, paths: Iterable[str]) -> None:
        for path in paths:
            self._bump()
            self._delete_file(path)
        # Embeddings no chunk uses any more go too; the ones still used survive re-index runs.
        self.db.execute("DELETE FROM vectors WHERE hash NOT IN (SELECT embed_hash FROM chunks)")

    def lexical(self, match: str, where: StoreFilter, limit: int) -> list[tuple[int, float]]:
        """(chunk id, score) best first; the score is FTS5's bm25 negated, so higher is better."""
        clause, args = where.sql()
        terms = kblex.plain_terms(match) if self.accelerate else None
        lex = self._accelerator() if terms is not None else None
        if lex is not None and terms is not None and all(lex.knows(t) for t in terms):

            def keep(ids: list[int]) -> set[int]:
                return self._keep(ids, clause, args)

            with self._lock:  # the accelerator's score buffer is shared
                return lex.top(terms, limit, keep if clause else None)
        # bm25() called by name and sorted by its alias: on 100,000 chunks this is 2-3x faster than
        # ``ORDER BY rank`` with the same function set as the table's rank (benchmarks, kb suite).
        with self._lock:
            if not clause:
                rows = self.db.execute(
                    f"SELECT rowid, {_BM25} AS s FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?",
                    (match, limit),
                ).fetchall()
            else:
                rows = self.db.execute(
                    f"SELECT chunks_fts.rowid, {_BM25} AS s FROM chunks_fts"
                    " JOIN chunks c ON c.id = chunks_fts.rowid"
                    f" JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH ? AND {clause}"
                    " ORDER BY s LIMIT ?",
                    (match, *args, limit),
                ).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    def _keep(self, ids: list[int], clause: str, args: list[str]) -> set[int]:
        """The chunk ids among ``ids`` that the filter keeps."""
        out: set[int] = set()
        with self._lock:
            for start in range(0, len(ids), 10_000):
                part = ids[start : start + 10_000]
                marks = ",".join("?" * len(part))
                rows = self.db.execute(
                    f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN ({marks})"
                    f" AND {clause}",
                    (*part, *args),
                ).fetchall()
                out.update(int(r[0]) for r in rows)
        return out

    def _lex_path(self) -> Path | None:
        return self._lex_file

    def _generation(self) -> str:
        return _generation(self.db)

    def _accelerator(self, *, force: bool = False) -> kblex.LexIndex | None:
        """The accelerator of the index as it is now: in memory, else from disk, else built (at
        most a fifth of the time: while another process writes, FTS5 answers instead). Not read
        for a process's first query: loading costs as much as dozens of FTS5 queries, and a
        one-shot ``sourcewise search`` asks just one."""
        path = self._lex_path()
        with self._lock:
            generation = self._generation()
            if self._lex is not None and self._lex.generation == generation:
                return self._lex
            self._lex = None
            self._lex_asked += 1
            if not force and (self._lex_asked < 2 or self._lex_failed == generation):
                return None
            if path is not None and self._lex_looked != generation:
                self._lex_looked = generation
                self._lex = kblex.load(path, generation)
                if self._lex is not None:
                    return self._lex
            if not force and time.monotonic() - self._lex_built_at < 4 * self._lex_took:
                return None
        return self._build_accelerator(path)

    def _build_accelerator(self, path: Path | None) -> kblex.LexIndex | None:
        if not self._lex_build.acquire(blocking=False):
            return None  # another thread is building it
        try:
            start = time.monotonic()
            if path is None:
                with self._lock:
                    generation = self._generation()
                    built = kblex.build(self.db, generation, WEIGHTS)
            else:
                # Its own connection, in one read transaction: searches go on meanwhile (by FTS5).
                db = sqlite3.connect(self.location, isolation_level=None)
                try:
                    db.execute("BEGIN")
                    generation = _generation(db)
                    built = kblex.build(db, generation, WEIGHTS, save_to=path)
                    db.execute("COMMIT")
                finally:
                    db.close()
            self._lex_took = time.monotonic() - start
            self._lex_built_at = time.monotonic()
        except (sqlite3.Error, MemoryError) as exc:
            log.debug("kb: no lexical accelerator: %s", exc)
            return None
        finally:
            self._lex_build.release()
        with self._lock:
            if built is None:
                self._lex_failed = generation
                log.debug("kb: the FTS index does not split on whitespace; ranking stays with FTS5")
                return None
            if built.generation != self._generation():
                return None
            self._lex = built
            return built

    def prepare_search(self) -> None:
        """After an index run: the lexical accelerator, built and saved unless it is current."""
        if self.accelerate:
            self._accelerator(force=True)

    def rows(self, chunk_ids: Sequence[int]) -> dict[int, Row]:
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        with self._lock:
            found = self.db.execute(
                "SELECT c.id, f.path, f.title, f.doc_date, c.heading_path, c.text, c.start_line, c.end_line,"
                f" c.embed_hash, NOT f.mtime_dated FROM chunks c JOIN files f ON f.id = c.file_id"
                f" WHERE c.id IN ({marks})",
                list(chunk_ids),
            ).fetchall()
        return {
            r[0]: Row(r[0], r[1], r[2], r[3], _headings(r[4]), r[5], r[6], r[7], r[8], bool(r[9]))
            for r in found
        }

    def filtered_ids(self, where: StoreFilter) -> set[int] | None:
        """The chunk ids the filter keeps, or ``None`` when there is no filter."""
        clause, args = where.sql()
        if not clause:
            return None
        with self._lock:
            rows = self.db.execute(
                f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE {clause}", args
            ).fetchall()
        return {int(r[0]) for r in rows}

    def missing_vectors(self) -> list[tuple[str, str]]:
        """(embed hash, text to embed) for chunks with no stored vector."""
        with self._lock:
            rows = self.db.execute(
                "SELECT c.embed_hash, f.title, c.heading_path, c.text FROM chunks c JOIN files f"
                " ON f.id = c.file_id WHERE c.embed_hash NOT IN (SELECT hash FROM vectors)"
                " GROUP BY c.embed_hash"
            ).fetchall()
        return [(r[0], "\n".join([r[1], *json.loads(r[2]), r[3]])) for r in rows]

    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO vectors VALUES(?, ?)", items)

    def vectors(self) -> tuple[list[int], list[bytes]]:
        with self._lock:
            rows = self.db.execute(
                "SELECT c.id, v.vec FROM chunks c JOIN vectors v ON v.hash = c.embed_hash ORDER BY c.id"
            ).fetchall()
        return [int(r[0]) for r in rows], [bytes(r[1]) for r in rows]

    def stats(self) -> tuple[int, int, float | None]:
        """(files, chunks, when the last file was indexed, as a Unix time)."""
        with self._lock:
            files, updated = self.db.execute("SELECT count(*), max(indexed_at) FROM files").fetchone()
            chunks = self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        return int(files), int(chunks), updated

    def close(self) -> None:
        with self._lock:
            self.db.close()
