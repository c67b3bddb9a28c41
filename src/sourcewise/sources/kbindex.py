"""Building and updating the knowledge base: walk, read, extract, chunk, analyze, store in batches.

A file is read again only when its size or modification time changed, and re-indexed only when
its content hash changed. Files that vanished from an indexed folder are removed. Every batch of
files is one transaction, so a run that is killed or fails leaves the index complete: each file is
either in its old form or its new one. A file that cannot be read (a corrupt PDF, a binary, one
past the size limit) is reported as skipped and never stops the run.
"""

from __future__ import annotations

import hashlib
import os
import time
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..core.analyze import analyze
from ..core.chunk import Document, chunk_document
from ..core.extract import decode, extract
from ..errors import InvalidOption
from .kbstore import ChunkRow, FileRow, Store

__all__ = ["FORMATS", "MAX_CHUNKS_PER_FILE", "MAX_FILE_BYTES", "IndexReport", "Skipped", "run_index"]

MAX_FILE_BYTES = 20_000_000
"""Larger files are skipped and reported (a 20 MB Markdown file is a data dump, not a document)."""
MAX_CHUNKS_PER_FILE = 5_000
"""A file is cut after this many chunks (about 6 MB of text), with a warning."""
BATCH_FILES = 64
BATCH_CHUNKS = 4_000
FORMATS = {
    ".md": "markdown", ".markdown": "markdown", ".mdx": "markdown", ".txt": "text", ".text": "text",
    ".rst": "rst", ".html": "html", ".htm": "html", ".pdf": "pdf",
}  # fmt: skip
_SKIP_DIRS = {"node_modules", "__pycache__", "venv", "site-packages"}


class Skipped(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    reason: str


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


@dataclass
class _Prepared:
    file: FileRow
    chunks: list[ChunkRow]
    is_new: bool


def _clean(text: str) -> str:
    """Control characters out (they must never reach a terminal); newlines and tabs kept."""
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")


def walk(roots: Iterable[Path]) -> Iterator[tuple[Path, bool]]:
    """(file, named explicitly) for every file under ``roots``; hidden folders are passed over."""
    for root in roots:
        if root.is_file():
            yield root, True
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
            for name in sorted(files):
                if not name.startswith(".") and Path(name).suffix.lower() in FORMATS:
                    yield Path(folder) / name, False


def _text_of(path: Path, body: bytes, fmt: str) -> tuple[str, str, str | None]:
    """(text, chunking format, title from the file's metadata)."""
    if fmt in ("html", "pdf"):
        media = "text/html" if fmt == "html" else "application/pdf"
        got = extract(body, media, path.as_uri())
        return got.text, "markdown" if fmt == "html" else "text", got.title
    if b"\x00" in body[:8192]:
        raise ValueError("looks binary (NUL bytes)")
    return decode(body, None), fmt, None


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
        warnings.append(f"{path}: cut at {MAX_CHUNKS_PER_FILE} chunks")
        doc.chunks = doc.chunks[:MAX_CHUNKS_PER_FILE]
    title = _clean(doc.title or meta_title or path.stem)[:500]
    title_terms = " ".join(analyze(title, stem=True))
    rows = []
    for i, c in enumerate(doc.chunks):
        embed_hash = hashlib.sha256("\n".join([title, *c.heading_path, c.text]).encode()).hexdigest()[:32]
        rows.append(
            ChunkRow(
                ordinal=i, text=c.text, heading_path=c.heading_path, start_line=c.start_line,
                end_line=c.end_line, terms_title=title_terms,
                terms_headings=" ".join(analyze(" ".join(c.heading_path), stem=True)),
                terms_body=" ".join(analyze(c.text, stem=True)), embed_hash=embed_hash,
            )
        )  # fmt: skip
    ext = path.suffix.lower().lstrip(".")
    day = _meta_date(doc.date)
    file = FileRow(
        str(path), digest, mtime_ns, len(body), title, day or _mtime_day(mtime_ns), ext, day is None
    )
    return file, rows


def _read(path: Path, known: tuple[str, int, int] | None, force: bool) -> tuple[bytes, os.stat_result] | str:
    """The file's bytes and stat, ``"unchanged"``, or raises ``OSError``/``ValueError``."""
    st = path.stat()
    if known and not force and known[1] == st.st_mtime_ns and known[2] == st.st_size:
        return "unchanged"
    if st.st_size > MAX_FILE_BYTES:
        raise ValueError(f"larger than the {MAX_FILE_BYTES // 1_000_000} MB limit")
    return path.read_bytes(), st


class _Run:
    def __init__(self, store: Store, force: bool) -> None:
        self.store = store
        self.force = force
        self.known = store.files()
        self.pending: list[_Prepared] = []
        self.touched: list[tuple[str, int]] = []
        self.added: list[str] = []
        self.updated: list[str] = []
        self.skipped: list[Skipped] = []
        self.warnings: list[str] = []
        self.unchanged = 0
        self.chunks = 0

    def one(self, path: Path, explicit: bool) -> None:
        key = str(path)
        if path.suffix.lower() not in FORMATS:
            if explicit:
                self.skipped.append(Skipped(path=key, reason=f"unsupported file type {path.suffix!r}"))
            return
        known = self.known.get(key)
        try:
            got = _read(path, known, self.force)
            if isinstance(got, str):
                self.unchanged += 1
                return
            body, st = got
            digest = hashlib.sha256(body).hexdigest()
            if known and known[0] == digest and not self.force:
                self.unchanged += 1
                self.touched.append((key, st.st_mtime_ns))
                return
            file, rows = prepare(path, body, st.st_mtime_ns, digest, self.warnings)
        except Exception as exc:  # one unreadable file (corrupt PDF, bad bytes) never stops the run
            self.skipped.append(Skipped(path=key, reason=_reason(exc)))
            return
        self.pending.append(_Prepared(file, rows, known is None))
        if len(self.pending) >= BATCH_FILES or sum(len(p.chunks) for p in self.pending) >= BATCH_CHUNKS:
            self.flush()

    def flush(self) -> None:
        if not self.pending and not self.touched:
            return
        with self.store.batch():
            for p in self.pending:
                self.store.put_file(p.file, p.chunks)
            for key, mtime in self.touched:
                self.store.touch_file(key, mtime, _mtime_day(mtime))
        for p in self.pending:
            (self.added if p.is_new else self.updated).append(p.file.path)
            self.chunks += len(p.chunks)
        self.pending, self.touched = [], []


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return _clean(text.replace("\n", " "))[:300]


def _removed(known: Iterable[str], roots: list[Path], seen: set[str]) -> list[str]:
    dirs = [str(r) + os.sep for r in roots if r.is_dir()]
    files = {str(r) for r in roots if r.is_file() or not r.exists()}
    return sorted(p for p in known if p not in seen and (p in files or p.startswith(tuple(dirs))))


def run_index(store: Store, paths: Iterable[str | os.PathLike[str]], *, force: bool = False) -> IndexReport:
    """Index ``paths`` (files or folders) into ``store``; see the module docstring."""
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
    run = _Run(store, force)
    seen: set[str] = set()
    for path, explicit in walk(roots):
        seen.add(str(path))
        run.one(path, explicit)
    run.flush()
    removed = _removed(run.known, roots, seen)
    if removed:
        with store.batch():
            store.remove_files(removed)
    return IndexReport(
        index=store.location, added=run.added, updated=run.updated, removed=removed,
        unchanged=run.unchanged, skipped=run.skipped, chunks=run.chunks,
        seconds=round(time.monotonic() - started, 3), warnings=run.warnings,
    )  # fmt: skip
