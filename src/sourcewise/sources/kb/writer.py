"""One index run's writes into the embedded store (``kbstore``): chunks into the engine, file rows
into SQLite, each commit of the engine followed by the commit of the matching file rows (see
``kbstore``). A chunk's fields are analyzed as ``kbterms.split`` says: the engine reads what its own
analyzer reads, the extra terms go beside as pre-tokenized values."""

from __future__ import annotations

import copy
import hashlib
import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import tantivy

from sourcewise.sources.kb import terms as kbterms
from sourcewise.sources.kb.query import HEADINGS_SEP, day_number, pack
from sourcewise.sources.kb.rows import ChunkRow, FileRow
from sourcewise.sources.readers import encode

__all__ = ["COMMIT_SECONDS", "WRITER_HEAP", "Owner", "Writer", "file_number", "hex_hashes"]

# The engine commits at least this often during a run (and at its end): what a killed run loses.
# Every commit writes a segment per indexing thread, and every segment costs each query a lookup
# of its own: commits are not made more often than this.
COMMIT_SECONDS = 30.0
# One indexing thread: the run's Python (reading, chunking, the analysis of odd words) is slower
# than one engine thread, so a second thread only halved the segments' size (and doubled their
# number) and the buffer it held. Its buffer bounds the run's memory whatever the corpus' size.
WRITER_HEAP = 64_000_000
WRITER_THREADS = 1


class Owner(Protocol):
    """What a ``Writer`` needs of its store (``kbstore.KBStore``)."""

    index: tantivy.Index
    db: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[None]: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def refresh(self) -> None: ...


def _add(doc: tantivy.Document, name: str, text: str) -> None:
    """``text`` as a value of field ``name``, analyzed as ``kbterms.split`` says: by the engine, with
    the extra terms as a pre-tokenized value beside; a text holding Hangul goes in pre-tokenized whole.
    Nothing is stored here: the chunk's record (``pack``) holds the texts."""
    engine_text, extras = kbterms.split(text)
    if engine_text is text:
        doc.add_text(name, text)
    else:
        tokens = _tokens(kbterms.engine_terms(engine_text))
        doc.add_pre_tokenized_text(name, tantivy.PreTokenizedString("", tokens))
    if extras:
        doc.add_pre_tokenized_text(name, tantivy.PreTokenizedString("", _tokens(extras)))


def file_number(path: str) -> int:
    """The ``file`` column's number for ``path``: 64 bits of its hash (two files sharing one would
    only be spread as one)."""
    return int.from_bytes(hashlib.blake2b(path.encode(), digest_size=8).digest(), "little", signed=True)


def _tokens(terms: Sequence[str]) -> list[tantivy.Token]:
    return [tantivy.Token(t, i, 0, 0) for i, t in enumerate(terms)]


def hex_hashes(blob: bytes) -> list[str]:
    return [blob[i : i + 16].hex() for i in range(0, len(blob), 16)]


class Writer:
    """One index run's writes: add and remove files, commit as it goes (see the module)."""

    def __init__(self, store: Owner) -> None:
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
            self._writer = self.store.index.writer(WRITER_HEAP, WRITER_THREADS)
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
            day=day_number(file.doc_date), file=file_number(file.path), readers=list(file.readers),
        )  # fmt: skip
        _add(shared, "title", file.title)
        engine = self._engine
        for c in chunks:
            doc = copy.copy(shared)
            doc.add_text("hash", c.embed_hash)
            headings = HEADINGS_SEP.join(c.heading_path)
            if headings:
                _add(doc, "headings", headings)
            _add(doc, "body", c.text)
            record = pack(
                file.path, file.title, file.doc_date, not file.mtime_dated, headings, c.text,
                (c.start_line, c.end_line), c.embed_hash, c.plain,
            )  # fmt: skip
            doc.add_bytes("row", record)
            doc.add_integer("embedded", c.embedded_chars)
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
        with self.store.transaction():
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
        with store.transaction():
            # Every file's hashes are read only when there are vectors to keep or drop (none
            # without the semantic extra): a 1% change then costs no pass over the whole corpus.
            if store.db.execute("SELECT 1 FROM vectors LIMIT 1").fetchone():
                blobs = store.db.execute("SELECT hashes FROM files")
                live = {h for (blob,) in blobs for h in hex_hashes(blob)}
                stale = [(h,) for (h,) in store.db.execute("SELECT hash FROM vectors") if h not in live]
                store.db.executemany("DELETE FROM vectors WHERE hash = ?", stale)
            store.db.execute("DELETE FROM meta WHERE key = 'run_open'")
        store.refresh()

    def abandon(self) -> None:
        if self._writer is not None:
            self._writer.rollback()
