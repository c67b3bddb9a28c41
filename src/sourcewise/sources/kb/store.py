"""Knowledge-base storage: a tantivy index for the chunks beside a small SQLite file for the rest.

The index file the user names (default ``STATE_DIR/kb.sqlite3``) is a SQLite file holding the
index's metadata, one row per indexed file (content hash, modification time and size, what the
incremental run compares; the embedding keys of its chunks), the coverage of the last runs (files
skipped or failed, with the reason) and the float32 embeddings keyed by the hash of the text they
embed. The chunks themselves (their text stored, their terms indexed by ``kbterms``' analyzer,
title and headings weighted) live in a tantivy index in the folder ``<file>.tantivy`` beside it.

Writes go through one ``Writer`` per run (``kbwriter``): documents are added in the engine's
threads and committed every few seconds; each commit of the engine is followed by the commit of
the matching file rows, so a run that is killed or fails leaves every file either in its old form
or in its new one (a file the engine holds but SQLite does not know yet is written again, over
itself, by the next run).
Readers in other processes see a commit as soon as it is made (the engine's reader reloads).

An index of an earlier schema (1: the SQLite FTS5 version; 2: tantivy without the ``file`` column and
the chunks' readers; 3: each chunk's values stored one by one; 4: a record of text without the
``embedded`` column) is recognized and rebuilt: ``legacy_paths`` tells the knowledge base which files it held,
kept in the ``rebuild`` table until ``rebuilt()``, so that a rebuild cut short goes on at the next open.
"""

from __future__ import annotations

import logging
import shlex
import shutil
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import tantivy

from sourcewise.errors import IndexVersionError
from sourcewise.sources.kb import terms as kbterms
from sourcewise.sources.kb.query import WEIGHTS, View
from sourcewise.sources.kb.repair import damaged
from sourcewise.sources.kb.rows import Store
from sourcewise.sources.kb.writer import Writer, hex_hashes
from sourcewise.sources.readers import decode

log = logging.getLogger("sourcewise")

__all__ = ["SCHEMA_VERSION", "KBStore", "open_store", "rebuild_hint"]

# 1: SQLite FTS5; 2: tantivy; 3: the ``file`` column and readers; 4: one stored record; 5: the
# record's numbers in binary and the ``embedded`` column
SCHEMA_VERSION = 5


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    for name in ("path", "hash", "path_lc", "ext", "title_lc", "readers"):
        b.add_text_field(name, tokenizer_name="raw", index_option="basic")
    for name in WEIGHTS:  # headings: the chunk's heading path, joined by HEADINGS_SEP
        b.add_text_field(name, tokenizer_name=kbterms.TOKENIZER)
    b.add_integer_field("day", indexed=True, fast=True)
    # A number per file (``file_number``), read in a column for many hits at once without reading
    # their stored documents: search spreads results over files by it.
    b.add_integer_field("file", fast=True)
    # What a hit reads back, as one value (``query.pack``): a document of nine stored values took
    # twice as long to read and turn into a row (31 against 17 us a chunk on the real 100k corpus).
    b.add_bytes_field("row", stored=True)
    # The length of the text each chunk's embedding read, in a column: hybrid search weighs the
    # semantic score by it for ~200 candidates a query (``search.read_shares``) without reading them.
    b.add_integer_field("embedded", fast=True)
    return b.build()


_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    title TEXT NOT NULL, doc_date TEXT NOT NULL, ext TEXT NOT NULL, mtime_dated INTEGER NOT NULL,
    chunks INTEGER NOT NULL, hashes BLOB NOT NULL, indexed_at REAL NOT NULL, readers TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS coverage(path TEXT PRIMARY KEY, state TEXT NOT NULL, reason TEXT NOT NULL,
    at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS vectors(hash TEXT PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS rebuild(path TEXT PRIMARY KEY);
"""
_LEGACY_TABLES = ("chunks_fts", "chunks", "files")


class KBStore:
    """The embedded store: ``path`` is the SQLite file (or ``:memory:``), the engine's folder beside it."""

    vector_search = "compared in this process"

    def __init__(self, path: Path | str) -> None:
        self.location = str(path)
        self._lock = threading.RLock()
        self.legacy_paths: list[str] | None = None
        try:
            self.db = sqlite3.connect(self.location, check_same_thread=False, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self._check_version()
            self.db.executescript(_SCHEMA_SQL)
            self.db.execute("INSERT OR IGNORE INTO meta VALUES('schema_version', ?)", (str(SCHEMA_VERSION),))
            # files an upgrade still has to write again: kept on disk until the rebuild is done, so
            # a rebuild cut short (Ctrl-C, a deadline, a crash) goes on at the next open
            pending = [r[0] for r in self.db.execute("SELECT path FROM rebuild ORDER BY path")]
            self.legacy_paths = pending if pending or self.legacy_paths is not None else None
        except sqlite3.DatabaseError as exc:
            if hasattr(self, "db"):
                self.db.close()
            raise damaged(self.location, exc) from exc
        self.folder = None if self.location == ":memory:" else Path(self.location + ".tantivy")
        # The engine's own reader already reloads on every commit (its default policy; tested with
        # a commit made by another process): configuring another built every segment's reader
        # twice, a few milliseconds of every new process's first query.
        self.index = self._open_index()

    def _check_version(self) -> None:
        if not self.db.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone():
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
        if version < SCHEMA_VERSION:
            self._drop_legacy(version)

    def _drop_legacy(self, version: int) -> None:
        """An earlier layout (schema 1: SQLite FTS5; 2: tantivy without the ``file`` column and the
        chunks' readers; 3: stored values one by one; 4: without the ``embedded`` column): its file
        list kept for the rebuild (in the ``rebuild`` table, in the transaction that drops the rest),
        its embeddings kept, its chunks dropped."""
        self.legacy_paths = [r[0] for r in self.db.execute("SELECT path FROM files ORDER BY path")]
        log.warning(
            "kb: %s was written by an earlier sourcewise (index schema %d); its %d files are kept to "
            "be indexed again in the current format", self.location, version, len(self.legacy_paths),
        )  # fmt: skip
        if self.location != ":memory:":
            shutil.rmtree(self.location + ".tantivy", ignore_errors=True)
        with self.transaction():
            for table in _LEGACY_TABLES:
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self.db.execute("DELETE FROM meta")
            self.db.execute("CREATE TABLE IF NOT EXISTS rebuild(path TEXT PRIMARY KEY)")
            self.db.executemany("INSERT OR IGNORE INTO rebuild VALUES(?)", ((p,) for p in self.legacy_paths))
        Path(self.location + ".lex.npz").unlink(missing_ok=True)

    def _open_index(self) -> tantivy.Index:
        if self.folder is None:
            index = tantivy.Index(_schema())
        else:
            fresh = not (self.folder / "meta.json").is_file()
            if fresh and self.db.execute("SELECT 1 FROM files LIMIT 1").fetchone():
                log.warning("kb: %s lost its chunks; the next index run writes them again", self.location)
                with self.transaction():
                    self.db.execute("DELETE FROM files")
            self.folder.mkdir(parents=True, exist_ok=True)
            try:
                index = tantivy.Index(_schema(), path=str(self.folder), reuse=True)
            except (OSError, ValueError) as exc:
                self.db.close()
                raise damaged(str(self.folder), exc) from exc
        kbterms.register(index)
        return index

    def rebuilt(self) -> None:
        """The upgrade's rebuild is done: its file list is dropped."""
        with self.transaction():
            self.db.execute("DELETE FROM rebuild")
        self.legacy_paths = None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

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

    def readers(self) -> dict[str, tuple[str, ...]]:
        """path -> the file's readers, as the last run found them."""
        with self._lock:
            return {r[0]: decode(r[1]) for r in self.db.execute("SELECT path, readers FROM files")}

    def writer(self) -> Writer:
        return Writer(self)

    def view(self) -> View:
        return View(self.index.searcher(), self.index.schema)

    def refresh(self) -> None:
        self.index.reload()

    def missing_vectors(self, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` (embed hash, text to embed) of chunks with no stored vector."""
        with self._lock:
            have = {r[0] for r in self.db.execute("SELECT hash FROM vectors")}
            wanted: list[str] = []
            for (blob,) in self.db.execute("SELECT hashes FROM files"):
                wanted.extend(h for h in hex_hashes(blob) if h not in have)
        todo = list(dict.fromkeys(wanted))[:limit]
        return self.view().texts(todo) if todo else []

    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> None:
        with self.transaction():
            self.db.executemany("INSERT OR REPLACE INTO vectors VALUES(?, ?)", items)

    def vectors(self) -> tuple[list[str], list[bytes]]:
        with self._lock:
            rows = self.db.execute("SELECT hash, vec FROM vectors ORDER BY hash").fetchall()
        return [r[0] for r in rows], [bytes(r[1]) for r in rows]

    def vector_count(self) -> int:
        with self._lock:
            return int(self.db.execute("SELECT count(*) FROM vectors").fetchone()[0])

    def stats(self) -> tuple[int, int, float | None]:
        """(files, chunks, when the last file was indexed, as a Unix time)."""
        with self._lock:
            files, chunks, updated = self.db.execute(
                "SELECT count(*), coalesce(sum(chunks), 0), max(indexed_at) FROM files"
            ).fetchone()
        return int(files), int(chunks), updated

    def indexed(self) -> list[tuple[str, int]]:
        """(path, chunks) of every indexed file."""
        with self._lock:
            return [(r[0], r[1]) for r in self.db.execute("SELECT path, chunks FROM files ORDER BY path")]

    def coverage(self) -> list[tuple[str, str, str]]:
        """(path, "skipped" or "failed", reason) of the files the runs did not index."""
        with self._lock:
            return [
                (r[0], r[1], r[2])
                for r in self.db.execute("SELECT path, state, reason FROM coverage ORDER BY path")
            ]

    def disk_bytes(self) -> int:
        paths = [Path(self.location + s) for s in ("", "-wal", "-shm")] if self.folder else []
        if self.folder is not None and self.folder.is_dir():
            paths.extend(self.folder.iterdir())
        return sum(p.stat().st_size for p in paths if p.is_file())

    def close(self) -> None:
        with self._lock:
            self.db.close()


def rebuild_hint(location: str, files: int) -> str:
    """What a search says of an index an earlier sourcewise wrote: the command that rebuilds it."""
    how = f"`sourcewise index --status --kb {shlex.quote(location)}` rebuilds it from its {files} files"
    return f"an earlier sourcewise wrote this index: {how}"


def open_store(location: str) -> Store:
    """The store at ``location``: PostgreSQL for a ``postgresql://`` URL, else the embedded one."""
    from sourcewise.sources.kb import pg as kbpg

    return kbpg.PgStore(location) if kbpg.is_url(location) else KBStore(location)
