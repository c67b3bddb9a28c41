"""Knowledge-base storage: a tantivy index for the chunks beside a small SQLite file for the rest.

The index file the user names (default ``STATE_DIR/kb.sqlite3``) is a SQLite file holding the
index's metadata, one row per indexed file (content hash, modification time and size, what the
incremental run compares; the embedding keys of its chunks), the coverage of the last runs (files
skipped or failed, with the reason) and the float32 embeddings keyed by the hash of the text they
embed. The chunks themselves (their text stored, their terms indexed by ``kbterms``' analyzer,
title and headings weighted) live in a tantivy index in the folder ``<file>.tantivy`` beside it.

Writes go through one ``Writer`` per run: documents are added in the engine's threads and committed
every few seconds; each commit of the engine is followed by the commit of the matching file rows,
so a run that is killed or fails leaves every file either in its old form or in its new one (a
file the engine holds but SQLite does not know yet is written again, over itself, by the next run).
Readers in other processes see a commit as soon as it is made (the engine's reader reloads).

An index of an earlier schema (1: the SQLite FTS5 version; 2: tantivy without the ``file`` column and
the chunks' readers) is recognized and rebuilt: ``legacy_paths`` tells the knowledge base which files it held.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import tantivy

from ..errors import IndexVersionError
from . import kbterms
from .kbquery import HEADINGS_SEP, WEIGHTS, Row, View, Viewer, day_number
from .kbrepair import damaged
from .readers import decode, encode

log = logging.getLogger("sourcewise")

__all__ = [
    "SCHEMA_VERSION", "WEIGHTS", "ChunkRow", "FileRow", "KBStore", "Row", "Store", "StoreWriter", "Writer",
    "open_store",
]  # fmt: skip

SCHEMA_VERSION = 3  # 1: SQLite FTS5; 2: tantivy; 3: the ``file`` fast field and each chunk's readers
COMMIT_SECONDS = 10.0  # the engine commits at least this often during a run (and at its end)
WRITER_HEAP = 128_000_000  # the engine's default indexing buffer, split over its threads


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
    readers: tuple[str, ...] = ("*",)  # who may read it (``readers``): everyone by default


@dataclass(frozen=True)
class ChunkRow:
    ordinal: int
    text: str
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    embed_hash: str


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    for name in ("path", "hash"):
        b.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    for name in ("path_lc", "ext", "title_lc", "readers"):
        b.add_text_field(name, tokenizer_name="raw", index_option="basic")
    for name in WEIGHTS:  # headings: the chunk's heading path, joined by HEADINGS_SEP
        b.add_text_field(name, stored=True, tokenizer_name=kbterms.TOKENIZER)
    b.add_integer_field("day", stored=True, indexed=True, fast=True)
    # A number per file (``file_number``), read in a column for many hits at once without reading
    # their stored documents: search spreads results over files by it.
    b.add_integer_field("file", fast=True)
    b.add_integer_field("lines", stored=True)  # first and last line
    b.add_integer_field("dated", stored=True)  # 1: the day is the document's own (front matter), 0: its mtime
    return b.build()


def _add(doc: tantivy.Document, name: str, text: str) -> None:
    """``text`` as a value of field ``name``, analyzed as ``kbterms.split`` says: by the engine, with
    the extra terms as a pre-tokenized value beside; a text holding Hangul goes in pre-tokenized whole
    (its stored value is the text as it was)."""
    engine_text, extras = kbterms.split(text)
    if engine_text is text:
        doc.add_text(name, text)
    else:
        tokens = _tokens(kbterms.engine_terms(engine_text))
        doc.add_pre_tokenized_text(name, tantivy.PreTokenizedString(text, tokens))
    if extras:
        doc.add_pre_tokenized_text(name, tantivy.PreTokenizedString("", _tokens(extras)))


def file_number(path: str) -> int:
    """The ``file`` column's number for ``path``: 64 bits of its hash (two files sharing one would
    only be spread as one)."""
    return int.from_bytes(hashlib.blake2b(path.encode(), digest_size=8).digest(), "little", signed=True)


def _tokens(terms: Sequence[str]) -> list[tantivy.Token]:
    return [tantivy.Token(t, i, 0, 0) for i, t in enumerate(terms)]


class Store(Protocol):
    """What the knowledge base needs from its storage."""

    location: str
    legacy_paths: list[str] | None
    vector_search: str  # how vectors are compared: in this process, or by the database's index

    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def files(self) -> dict[str, tuple[str, int, int]]: ...
    def readers(self) -> dict[str, tuple[str, ...]]: ...
    def writer(self) -> StoreWriter: ...
    def view(self) -> Viewer: ...
    def missing_vectors(self, limit: int) -> list[tuple[str, str]]: ...
    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> None: ...
    def vectors(self) -> tuple[list[str], list[bytes]]: ...
    def vector_count(self) -> int: ...
    def stats(self) -> tuple[int, int, float | None]: ...
    def coverage(self) -> list[tuple[str, str, str]]: ...
    def indexed(self) -> list[tuple[str, int]]: ...
    def disk_bytes(self) -> int: ...
    def close(self) -> None: ...


class StoreWriter(Protocol):
    """One index run's writes (``kbindex`` drives it): the embedded ``Writer``, PostgreSQL's ``PgWriter``."""

    def put_file(self, file: FileRow, chunks: Sequence[ChunkRow], *, known: bool) -> None: ...
    def touch(self, file: FileRow) -> None: ...
    def remove(self, path: str) -> None: ...
    def not_indexed(self, path: str, state: str, reason: str) -> None: ...
    def due(self) -> bool: ...
    def commit(self) -> None: ...
    def finish(self) -> None: ...
    def abandon(self) -> None: ...


_SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    title TEXT NOT NULL, doc_date TEXT NOT NULL, ext TEXT NOT NULL, mtime_dated INTEGER NOT NULL,
    chunks INTEGER NOT NULL, hashes BLOB NOT NULL, indexed_at REAL NOT NULL, readers TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS coverage(path TEXT PRIMARY KEY, state TEXT NOT NULL, reason TEXT NOT NULL,
    at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS vectors(hash TEXT PRIMARY KEY, vec BLOB NOT NULL);
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
        except sqlite3.DatabaseError as exc:
            if hasattr(self, "db"):
                self.db.close()
            raise damaged(self.location, exc) from exc
        self.folder = None if self.location == ":memory:" else Path(self.location + ".tantivy")
        self.index = self._open_index()
        self.index.config_reader(reload_policy="OnCommit")

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
        chunks' readers): its file list kept for the rebuild, its embeddings kept, its chunks
        dropped."""
        self.legacy_paths = [r[0] for r in self.db.execute("SELECT path FROM files ORDER BY path")]
        log.warning(
            "kb: %s was written by an earlier sourcewise (index schema %d); rebuilding it in the "
            "current format from the %d files it held", self.location, version, len(self.legacy_paths),
        )  # fmt: skip
        if self.location != ":memory:":
            shutil.rmtree(self.location + ".tantivy", ignore_errors=True)
        with self._transaction():
            for table in _LEGACY_TABLES:
                self.db.execute(f"DROP TABLE IF EXISTS {table}")
            self.db.execute("DELETE FROM meta")
        Path(self.location + ".lex.npz").unlink(missing_ok=True)

    def _open_index(self) -> tantivy.Index:
        if self.folder is None:
            index = tantivy.Index(_schema())
        else:
            fresh = not (self.folder / "meta.json").is_file()
            if fresh and self.db.execute("SELECT 1 FROM files LIMIT 1").fetchone():
                log.warning("kb: %s lost its chunks; the next index run writes them again", self.location)
                with self._transaction():
                    self.db.execute("DELETE FROM files")
            self.folder.mkdir(parents=True, exist_ok=True)
            try:
                index = tantivy.Index(_schema(), path=str(self.folder), reuse=True)
            except (OSError, ValueError) as exc:
                self.db.close()
                raise damaged(str(self.folder), exc) from exc
        kbterms.register(index)
        return index

    @contextmanager
    def _transaction(self) -> Iterator[None]:
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
                wanted.extend(h for h in _hex_hashes(blob) if h not in have)
        todo = list(dict.fromkeys(wanted))[:limit]
        return self.view().texts(todo) if todo else []

    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> None:
        with self._transaction():
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


def _hex_hashes(blob: bytes) -> list[str]:
    return [blob[i : i + 16].hex() for i in range(0, len(blob), 16)]


class Writer:
    """One index run's writes: add and remove files, commit as it goes (see the module)."""

    def __init__(self, store: KBStore) -> None:
        self.store = store
        self.schema = store.index.schema
        self._writer: tantivy.IndexWriter | None = None  # opened at the first change: none, no cost
        self._rows: list[tuple[object, ...]] = []
        self._gone: list[str] = []
        self._coverage: list[tuple[str, str, str]] = []
        self._touched: list[tuple[int, str]] = []
        self._last = time.monotonic()
        # A run that died after a commit of the engine but before its file rows left files the
        # engine holds and SQLite does not know: until a run ends cleanly every file is deleted first.
        self._dirty = store.get_meta("run_open") is not None

    @property
    def _engine(self) -> tantivy.IndexWriter:
        if self._writer is None:
            self.store.set_meta("run_open", "1")
            self._writer = self.store.index.writer(WRITER_HEAP, 0)
        return self._writer

    def put_file(self, file: FileRow, chunks: Sequence[ChunkRow], *, known: bool) -> None:
        if known or self._dirty:
            self._engine.delete_documents_by_term("path", file.path)
        if chunks:
            self._add_chunks(file, chunks)
        hashes = b"".join(bytes.fromhex(c.embed_hash) for c in chunks)
        self._rows.append((
            file.path, file.hash, file.mtime_ns, file.size, file.title, file.doc_date, file.ext,
            int(file.mtime_dated), len(chunks), hashes, time.time(), encode(file.readers),
        ))  # fmt: skip
        self._gone.append(file.path)  # its coverage entry, if any, goes

    def _add_chunks(self, file: FileRow, chunks: Sequence[ChunkRow]) -> None:
        # What the chunks of a file share is made once and copied (a copy made in the engine, no
        # Python value read again), the title analyzed once.
        shared = tantivy.Document(
            path=file.path, path_lc=file.path.lower(), ext=file.ext, title_lc=file.title.lower(),
            day=day_number(file.doc_date), dated=int(not file.mtime_dated), file=file_number(file.path),
            readers=list(file.readers),
        )  # fmt: skip
        _add(shared, "title", file.title)
        engine = self._engine
        for c in chunks:
            doc = copy.copy(shared)
            doc.add_text("hash", c.embed_hash)
            doc.add_integer("lines", c.start_line)
            doc.add_integer("lines", c.end_line)
            if c.heading_path:
                _add(doc, "headings", HEADINGS_SEP.join(c.heading_path))
            _add(doc, "body", c.text)
            engine.add_document(doc)

    def touch(self, file: FileRow) -> None:
        """Same content, new modification time (the date does not follow it): the row only."""
        self._touched.append((file.mtime_ns, file.path))

    def remove(self, path: str) -> None:
        self._engine.delete_documents_by_term("path", path)
        self._gone.append(path)

    def not_indexed(self, path: str, state: str, reason: str) -> None:
        self._coverage.append((path, state, reason))

    def due(self) -> bool:
        return time.monotonic() - self._last >= COMMIT_SECONDS

    def commit(self) -> None:
        """The engine's commit, then the matching file rows (see the module)."""
        if self._writer is not None:
            self._writer.commit()
        with self.store._transaction():
            db = self.store.db
            db.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in self._gone])
            db.executemany("DELETE FROM coverage WHERE path = ?", [(p,) for p in self._gone])
            db.executemany("INSERT INTO files VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", self._rows)
            db.executemany("UPDATE files SET mtime_ns = ? WHERE path = ?", self._touched)
            db.executemany("INSERT OR REPLACE INTO coverage VALUES(?,?,?,?)",
                           [(*c, time.time()) for c in self._coverage])  # fmt: skip
        self._rows, self._gone, self._coverage, self._touched = [], [], [], []
        self._last = time.monotonic()

    def finish(self) -> None:
        """The last commit; embeddings no chunk uses any more go; the run is closed cleanly."""
        self.commit()
        if self._writer is None:  # nothing changed in the engine (a run with nothing new)
            return
        self._writer.wait_merging_threads()
        store = self.store
        with store._transaction():
            live = {h for (blob,) in store.db.execute("SELECT hashes FROM files") for h in _hex_hashes(blob)}
            stale = [(h,) for (h,) in store.db.execute("SELECT hash FROM vectors") if h not in live]
            store.db.executemany("DELETE FROM vectors WHERE hash = ?", stale)
            store.db.execute("DELETE FROM meta WHERE key = 'run_open'")
        store.refresh()

    def abandon(self) -> None:
        if self._writer is not None:
            self._writer.rollback()


def open_store(location: str) -> Store:
    """The store at ``location``: PostgreSQL for a ``postgresql://`` URL, else the embedded one."""
    from . import kbpg

    return kbpg.PgStore(location) if kbpg.is_url(location) else KBStore(location)
