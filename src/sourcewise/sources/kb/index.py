"""Building and updating the knowledge base: walk, read, extract, chunk, analyze, store in batches.

A file costs one ``stat`` when its size and modification time are as recorded; it is read and
hashed when they changed, and re-indexed only when its content hash changed. Files that vanished
from an indexed folder are removed. The store's writer commits as it goes, so a run that is killed
or fails leaves the index complete: each file is either in its old form or its new one. Reading,
chunking and the analysis of identifiers and Hangul run here while the engine indexes in its own
threads. A file that cannot be read is reported (skipped: unsupported, too large, binary; failed:
anything else, like a corrupt PDF), kept in the index's coverage, and never stops the run.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import stat
import time
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, date, datetime
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from w3lib.encoding import read_bom

from sourcewise.errors import IndexWriteError, InvalidOption, SourcewiseError
from sourcewise.sources._files import file_kind, read_capped, shown
from sourcewise.sources.kb.query import embedded
from sourcewise.sources.kb.rows import ChunkRow, FileRow, Store, StoreWriter
from sourcewise.sources.kb.snippet import plain
from sourcewise.sources.kb.walk import walk
from sourcewise.sources.readers import FileReaders
from sourcewise.text.chunk import Document, chunk_document
from sourcewise.text.extract import decode, extract
from sourcewise.text.sanitize import drop_escapes

__all__ = [
    "FORMATS",
    "MAX_CHUNKS_PER_FILE",
    "MAX_FILE_BYTES",
    "IndexReport",
    "Progress",
    "Skipped",
    "run_index",
]

MAX_FILE_BYTES = 20_000_000
"""Larger files are skipped and reported (a 20 MB Markdown file is a data dump, not a document)."""
MAX_CHUNKS_PER_FILE = 5_000
"""A file is cut after this many chunks (about 6 MB of text), with a warning."""
FORMATS = {
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".txt": "text", ".text": "text",
    ".rst": "rst", ".html": "html", ".htm": "html", ".pdf": "pdf",
}  # fmt: skip
_SUFFIXES = frozenset(FORMATS)
log = logging.getLogger("sourcewise")


class Skipped(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    reason: str
    state: str = Field(default="skipped", description="skipped (by rule) or failed (could not be read)")


# Called as (step, done, total or None): "files" while indexing, "model" while the semantic
# model loads, "embed" while chunks are embedded.
Progress = Callable[[str, int, int | None], None]


class IndexReport(BaseModel):
    """What one ``KnowledgeBase.index`` run did."""

    model_config = ConfigDict(frozen=True)

    index: str = Field(description="the index file (or ':memory:')")
    added: list[str] = Field(default_factory=list)
    updated: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    unchanged: int = 0
    skipped: list[Skipped] = Field(default_factory=list)
    chunks: int = Field(default=0, description="chunks written by this run")
    embedded: int = Field(default=0, description="chunks embedded by this run (semantic extra)")
    seconds: float = 0.0
    warnings: list[str] = Field(default_factory=list)


class _Skip(ValueError):
    """A file left out by rule (not an error in the file): reported as skipped."""


@lru_cache(maxsize=1)
def _controls() -> re.Pattern[str]:
    """One class of the control, format, surrogate and private-use characters (categories Cc, Cf,
    Cs, Co) but newline and tab: a linear-time ``sub`` in place of a loop over characters. Format
    characters live below U+20000 and in plane 14; planes 15 and 16 are private use."""
    ranges: list[list[int]] = [[0xF0000, 0xFFFFD], [0x100000, 0x10FFFD]]
    for code in (*range(0x20000), *range(0xE0000, 0xE1000)):
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Cs", "Co") and chr(code) not in "\n\t":
            if ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges) + "]")


_ASCII_CONTROLS = dict.fromkeys(c for c in range(128) if chr(c) not in "\n\t" and (c < 32 or c == 127))


def _clean(text: str) -> str:
    """Control and format characters out (they must never reach a terminal), escape sequences
    whole (``drop_escapes``); newlines and tabs kept."""
    text = drop_escapes(text)
    if text.isascii():
        return text.translate(_ASCII_CONTROLS)
    if text.replace("\n", " ").replace("\t", " ").isprintable():  # nothing of category C in it
        return text
    return _controls().sub("", text)


def _text_of(path: Path, body: bytes, fmt: str) -> tuple[str, str, str | None]:
    """(text, chunking format, title from the file's metadata)."""
    if fmt in ("html", "pdf"):
        media = "text/html" if fmt == "html" else "application/pdf"
        got = extract(body, media, path.as_uri())
        return got.text, "markdown" if fmt == "html" else "text", got.title
    # UTF-16 and UTF-32 text is half NUL bytes: with a byte-order mark (``decode`` reads it) only
    # text that still holds NUL once decoded is binary; without one, NUL bytes say so undecoded.
    if read_bom(body)[0] is None and b"\x00" in body[:8192]:
        raise _Skip("looks binary (NUL bytes)")
    text = decode(body, None)
    if "\x00" in text[:8192]:
        raise _Skip("looks binary (NUL bytes)")
    return text, fmt, None


def _meta_date(meta_date: str | None) -> str | None:
    try:
        return date.fromisoformat(meta_date[:10].replace("/", "-")).isoformat() if meta_date else None
    except ValueError:
        return None


def _mtime_day(mtime_ns: int) -> str:
    return datetime.fromtimestamp(mtime_ns / 1e9, UTC).date().isoformat()


def prepare(
    path: Path, body: bytes, mtime_ns: int, digest: str, warnings: list[str]
) -> tuple[FileRow, list[ChunkRow]]:
    fmt = FORMATS[path.suffix.lower()]
    text, chunk_fmt, meta_title = _text_of(path, body, fmt)
    doc: Document = chunk_document(_clean(text), chunk_fmt, max_chunks=MAX_CHUNKS_PER_FILE + 1)
    if len(doc.chunks) > MAX_CHUNKS_PER_FILE:
        warnings.append(f"{shown(str(path))}: cut at {MAX_CHUNKS_PER_FILE} chunks")
        doc.chunks = doc.chunks[:MAX_CHUNKS_PER_FILE]
    title = _clean(doc.title or meta_title or path.stem)[:500]
    rows = []
    for i, c in enumerate(doc.chunks):
        read = embedded(title, c.heading_path, c.text)
        rows.append(
            ChunkRow(
                ordinal=i, text=c.text, heading_path=c.heading_path, start_line=c.start_line,
                end_line=c.end_line, embed_hash=hashlib.sha256(read.encode()).hexdigest()[:32],
                embedded_chars=len(read), plain=plain(c.text),
            )
        )  # fmt: skip
    ext = path.suffix.lower().lstrip(".")
    day = _meta_date(doc.date)
    file = FileRow(
        shown(str(path)), digest, mtime_ns, len(body), title, day or _mtime_day(mtime_ns), ext, day is None
    )
    return file, rows


def _read(
    path: str,
    known: tuple[str, int, int] | None,
    force: bool,
    same_readers: Callable[[os.stat_result], bool] = lambda st: True,
) -> tuple[bytes, os.stat_result] | str:
    """The file's bytes and stat, ``"unchanged"`` (same size, time and readers), or raises
    ``OSError``/``ValueError``.

    Only a regular file is read, and never more than the size limit (``read_capped`` checks the
    open descriptor, so a FIFO or a device put in its place is refused, not read)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise _Skip(f"{file_kind(st.st_mode)}, not a regular file; not read")
    if known and not force and known[1] == st.st_mtime_ns and known[2] == st.st_size and same_readers(st):
        return "unchanged"
    too_large = _Skip(f"larger than the {MAX_FILE_BYTES // 1_000_000} MB limit")
    if st.st_size > MAX_FILE_BYTES:
        raise too_large
    body = read_capped(Path(path), MAX_FILE_BYTES)
    if body is None:
        raise too_large
    return body, st


class _Run:
    def __init__(self, store: Store, writer: StoreWriter, force: bool) -> None:
        self.writer = writer
        self.force = force
        self.known = store.files()
        self.known_readers = store.readers()
        self.readers = FileReaders()
        self.added: list[str] = []
        self.updated: list[str] = []
        self.skipped: list[Skipped] = []
        self.warnings: list[str] = []
        self.unchanged = 0
        self.chunks = 0

    def one(self, path: str, key: str, explicit: bool, why: str | None = None) -> None:
        """Index the file at ``path`` (``key``: its name as the index keeps it)."""
        if why is not None:
            self._skip(key, why, "skipped")
            return
        if os.path.splitext(path)[1].lower() not in FORMATS:
            if explicit:
                self._skip(key, f"unsupported file type {Path(path).suffix!r}", "skipped")
            return
        known = self.known.get(key)
        had = self.known_readers.get(key)
        try:
            # a chmod changes no content and no modification time, only who may read the file
            got = _read(path, known, self.force, lambda st: self.readers.of(path, st) == had)
            if isinstance(got, str):
                self.unchanged += 1
                return
            body, st = got
            digest = hashlib.sha256(body).hexdigest()
            file, rows = prepare(Path(path), body, st.st_mtime_ns, digest, self.warnings)
            file = replace(file, readers=self.readers.of(path, st))
        except Exception as exc:  # one unreadable file (corrupt PDF, bad bytes) never stops the run
            self._skip(key, _reason(exc), "skipped" if isinstance(exc, _Skip) else "failed")
            return
        if known and known[0] == digest and not self.force and file.readers == had:
            # Same content, new modification time: written again only if its date follows that time.
            self.unchanged += 1
            if not file.mtime_dated:
                self.writer.touch(file)
                return
        else:
            (self.updated if known else self.added).append(key)
            self.chunks += len(rows)
        self.writer.put_file(file, rows, known=known is not None)
        if self.writer.due():
            self.writer.commit()

    def _skip(self, key: str, reason: str, state: str) -> None:
        self.skipped.append(Skipped(path=key, reason=reason, state=state))
        self.writer.not_indexed(key, state, reason)


def _reason(exc: BaseException) -> str:
    # An OSError's text repeats the path the report already names: the system's reason is enough.
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot be read: {exc.strerror}"
    text = str(exc) or type(exc).__name__
    return _clean(text.replace("\n", " "))[:300]


def _removed(known: Iterable[str], roots: list[Path], seen: set[str]) -> list[str]:
    dirs = [shown(str(r)).rstrip(os.sep) + os.sep for r in roots if r.is_dir()]
    files = {shown(str(r)) for r in roots if r.is_file() or not r.exists()}
    return sorted(p for p in known if p not in seen and (p in files or p.startswith(tuple(dirs))))


def _abandon(writer: StoreWriter) -> None:
    try:
        writer.abandon()
    except (OSError, sqlite3.DatabaseError, ValueError) as exc:  # a full disk may refuse that too
        log.warning("kb: the run's uncommitted changes could not be rolled back cleanly (%s)", exc)


def _not_written(location: str, exc: BaseException) -> IndexWriteError:
    folder = Path(location).parent if location != ":memory:" else Path(":memory:")
    why = " ".join(str(exc).split())[:200] or type(exc).__name__
    return IndexWriteError(
        "kb",
        f"could not write the index in {shown(str(folder))} ({why}); the files committed before "
        "are kept and the previous index still answers. Free space on that disk (or check the "
        "folder's permissions) and run `sourcewise index` again.",
    )


def run_index(
    store: Store,
    paths: Iterable[str | os.PathLike[str]],
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> IndexReport:
    """Index ``paths`` (files or folders) into ``store``; see the module docstring. ``progress``
    is called with ("files", files done, files found) after each file."""
    started = time.monotonic()
    try:
        roots = [Path(p).expanduser().resolve() for p in paths]
    except (TypeError, ValueError, OSError) as exc:  # not a path, a NUL byte, a loop
        raise InvalidOption(f"cannot index {exc}") from exc
    if not roots:
        raise InvalidOption("nothing to index: give one or more files or folders")
    missing = []
    for root in roots:
        try:
            if not root.exists():
                missing.append(str(root))
        except OSError as exc:  # a name longer than the system allows, a path it cannot stat
            raise InvalidOption(f"cannot index {_clean(str(root))[:200]}: {exc.strerror or exc}") from exc
    if missing:
        raise InvalidOption(f"no such file or folder: {', '.join(missing)}")
    writer = store.writer()
    try:
        run = _Run(store, writer, force)
        seen: set[str] = set()
        found = list(walk(roots, _SUFFIXES))  # walked first: the total makes a rate and an end time
        for done, (path, explicit, why) in enumerate(found, 1):
            key = shown(path)
            seen.add(key)
            run.one(path, key, explicit, why)
            if progress is not None:
                progress("files", done, len(found))
        removed = _removed(run.known, roots, seen)
        gone_skipped = _removed([p for p, _, _ in store.coverage()], roots, seen)
        for gone in [*removed, *gone_skipped]:
            writer.remove(gone)
        writer.finish()
    except SourcewiseError:
        writer.abandon()
        raise
    except (OSError, sqlite3.DatabaseError, ValueError) as exc:  # the store could not write
        _abandon(writer)
        raise _not_written(store.location, exc) from exc
    except BaseException:  # Ctrl-C, a kill: what was committed stays, the rest is rolled back
        _abandon(writer)
        raise
    return IndexReport(
        index=store.location, added=run.added, updated=run.updated, removed=removed,
        unchanged=run.unchanged, skipped=run.skipped, chunks=run.chunks,
        seconds=round(time.monotonic() - started, 3), warnings=run.warnings,
    )  # fmt: skip
