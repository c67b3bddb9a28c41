"""What the chat and mail sources share: a stored FTS5 index per export, date spans, snippets, clean text.

Both sources read a whole export (a Slack export, an mbox or a Maildir) into records and index each
record's analyzed text (``text/analyze.py``) in an SQLite FTS5 table ranked by BM25, then filter the
ranked rows with their own predicates. Reading and analyzing 10,000 mails takes tens of seconds on a
busy machine, so the index and the records are kept in ``STATE_DIR/exports/KIND-HASH.sqlite3`` (one
file per export path): built into a temporary file and renamed into place, so no half-written index
is ever read; rebuilt when the export changes (its signature), when the analyzer or the schema
changes, or when the file is damaged; reopened in well under a second otherwise
(``benchmarks/run.py messages``). When the state directory cannot be written the index is built in
memory for the run, with one warning.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import os
import sqlite3
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import quote
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator

from sourcewise import access
from sourcewise.config import Settings
from sourcewise.errors import SourceError, SourceUnavailable
from sourcewise.models import SourceInfo
from sourcewise.sources._fts import FtsIndex
from sourcewise.sources.base import Source, SourceOptions
from sourcewise.text.analyze import ANALYZER_ID

__all__ = [
    "EXPORT_SCHEMA",
    "ExportCodec",
    "ExportSource",
    "Loaded",
    "clean",
    "date_span",
    "day_bounds",
    "export_index_path",
    "open_export",
    "snippet",
]

log = logging.getLogger("sourcewise")
EXPORT_SCHEMA = 2  # 2: each record's readers
_warned: set[str] = set()

_CONTROL = dict.fromkeys([*range(0, 9), 11, 12, *range(14, 32), 127, *range(0x80, 0xA0)])
_CONTROL.update(dict.fromkeys([0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
SNIPPET_CHARS = 240


def clean(text: str) -> str:
    """Text from outside without control characters (bidi overrides included); tabs, newlines kept."""
    return text.replace("\r\n", "\n").translate(_CONTROL)


def day_bounds(start: date | None, end: date | None, zone: tzinfo) -> tuple[float, float]:
    """``[start, end)`` as epoch seconds at midnight in ``zone`` (open ends are infinite)."""
    lo = datetime.combine(start, datetime.min.time(), zone).timestamp() if start else -math.inf
    hi = datetime.combine(end, datetime.min.time(), zone).timestamp() if end else math.inf
    return lo, hi


def date_span(value: str) -> tuple[date, date] | None:
    """``2025``, ``2025-01`` or ``2025-01-15`` (``/`` or ``.`` between parts too) as the half-open
    range ``[first day, day after the last)``; ``None`` when ``value`` is not such a date."""
    parts = value.strip().replace("/", "-").replace(".", "-").split("-")
    if not all(p.isascii() and p.isdigit() for p in parts) or len(parts[0]) != 4:
        return None
    try:
        year = int(parts[0])
        if len(parts) == 1:
            return date(year, 1, 1), date(year + 1, 1, 1)
        month = int(parts[1])
        if len(parts) == 2:
            end = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
            return date(year, month, 1), end
        if len(parts) == 3:
            day = date(year, month, int(parts[2]))
            return day, date.fromordinal(day.toordinal() + 1)
    except (ValueError, OverflowError):
        return None
    return None


def snippet(text: str, words: Iterable[str], width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` on one line around the first of ``words`` it contains."""
    flat = " ".join(text.split())
    low = flat.casefold()
    found = [i for w in words if w and (i := low.find(w.casefold())) >= 0]
    pos = min(found, default=0)
    start = max(0, pos - width // 4)
    if start:
        space = flat.rfind(" ", 0, start)
        start = space + 1 if space >= 0 and start - space < 30 else start
    cut = flat[start : start + width]
    return ("…" if start else "") + cut + ("…" if start + width < len(flat) else "")


class _Closable(Protocol):
    signature: tuple[int, ...]
    index: FtsIndex


T = TypeVar("T", bound=_Closable)


R = TypeVar("R")


class Runner(Protocol):
    """``Source.run``: a blocking call in the source's own threads."""

    def __call__(self, fn: Callable[[], R], /) -> Awaitable[R]: ...


class Loaded(Generic[T]):
    """One source's loaded index, built off the event loop once and again only when the files change."""

    def __init__(self) -> None:
        self.value: T | None = None
        self._lock: asyncio.Lock | None = None

    async def get(
        self, source: str, path: Path, signature: Callable[[Path], tuple[int, ...]], build: Callable[[], T],
        run: Runner,
    ) -> T:
        """The index of the export at ``path``, rebuilt when ``signature(path)`` changed; both run
        through ``run`` (the source's own threads, ``Source.run``): even a ``stat`` of a hung file
        system never blocks the loop. A missing or unreadable export is ``SourceUnavailable``."""
        def current_signature() -> tuple[int, ...]:
            if not path.exists():
                raise SourceUnavailable(source, f"{path} does not exist")
            try:
                return signature(path)
            except OSError as exc:
                raise SourceUnavailable(source, f"{path} cannot be read ({exc.strerror or exc})") from exc

        current = await run(current_signature)  # first: it says what is missing or unreadable
        if self.value is not None and self.value.signature == current:
            return self.value
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.value is None or self.value.signature != await run(current_signature):
                fresh = await run(build)
                old, self.value = self.value, fresh
                if old is not None:
                    old.index.close()
            return self.value

    def close(self) -> None:
        if self.value is not None:
            self.value.index.close()
            self.value = None


class ExportSource(Source, Generic[T]):
    """A message export (mail, Slack) indexed once per instance and again when its files change
    (``Loaded``). ``info`` adds what ``_summary`` says of the loaded index, except to a door's user
    (``access.readers()`` set): no counts of messages they may not see."""

    def __init__(self, name: str, options: SourceOptions, settings: Settings) -> None:
        super().__init__(name, options, settings)
        self._cache: Loaded[T] = Loaded()

    async def _load(self) -> T:
        raise NotImplementedError

    def _summary(self, loaded: T) -> dict[str, Any]:
        """``SourceInfo`` fields (items, updated, detail) for the loaded index."""
        raise NotImplementedError

    async def info(self) -> SourceInfo:
        base = await super().info()
        if not base.ready or access.readers() is not None:
            return base
        try:
            loaded = await self._load()
        except SourceError as exc:
            return base.model_copy(update={"ready": False, "detail": exc.detail})
        return base.model_copy(update=self._summary(loaded))

    async def aclose(self) -> None:
        self._cache.close()


# -- Stored export indexes ----------------------------------------------------------------------

D = TypeVar("D")


class MessageOptions(SourceOptions):
    """Options every message export (mail, Slack) takes: the calendar of its date filters, and
    whether its index is stored."""

    timezone: str = Field(default="UTC", description="IANA zone whose calendar days the date filters mean")
    cache: bool = Field(
        default=True, description="keep the index under state_dir/exports (False: in memory, per run)"
    )

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown time zone {value!r}; e.g. UTC or Asia/Seoul") from exc
        return value


@dataclass(frozen=True)
class ExportCodec(Generic[D]):
    """How one kind of export is stored: its FTS columns and weights, and its loaded data (the
    records and what the source keeps beside them) to and from JSON."""

    kind: str  # "mail", "slack": the file name's prefix
    columns: tuple[str, ...]
    weights: tuple[float, ...]
    dump: Callable[[D], Any]
    load: Callable[[Any], D]
    # rowid -> who may read that record, for the records that say (the others: everyone)
    readers: Callable[[D], Mapping[int, Sequence[str]]] = lambda data: {}


def export_index_path(state_dir: Path, kind: str, export: Path) -> Path:
    """``STATE_DIR/exports/KIND-HASH.sqlite3``, one file per resolved export path."""
    key = hashlib.sha256(str(export.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return state_dir / "exports" / f"{kind}-{key}.sqlite3"


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


def _meta(codec: ExportCodec[Any], signature: tuple[int, ...]) -> dict[str, str]:
    return {
        "schema": str(EXPORT_SCHEMA),
        "kind": codec.kind,
        "analyzer": ANALYZER_ID,
        "columns": ",".join(codec.columns),
        "signature": json.dumps(list(signature)),
    }


def _reopen(codec: ExportCodec[D], file: Path, signature: tuple[int, ...]) -> tuple[D, FtsIndex] | None:
    """The stored index when it is whole and still describes the export; ``None`` to rebuild."""
    if not file.is_file():
        return None
    db: sqlite3.Connection | None = None
    try:
        db = sqlite3.connect(f"file:{quote(str(file))}?mode=ro", uri=True, check_same_thread=False)
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if meta != _meta(codec, signature):
            db.close()
            return None  # the export, the analyzer or the format changed: not damage, just stale
        (payload,) = db.execute("SELECT data FROM payload").fetchone()
        data = codec.load(json.loads(payload))
        db.execute("SELECT rowid FROM docs WHERE docs MATCH 'x' LIMIT 1").fetchall()
        return data, FtsIndex(codec.columns, codec.weights, db)
    except (sqlite3.Error, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        if db is not None:
            db.close()
        log.warning("%s is damaged (%s); rebuilding it", file, exc)
        return None


def _write(
    codec: ExportCodec[D],
    file: Path,
    signature: tuple[int, ...],
    data: D,
    rows: Iterable[tuple[int, Sequence[str]]],
) -> None:
    """Build the index in a temporary file beside ``file`` and rename it into place."""
    file.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=f".{codec.kind}-", suffix=".tmp")
    os.close(fd)
    try:
        db = sqlite3.connect(tmp)
        try:
            db.execute("PRAGMA journal_mode=OFF")  # a temporary file: the rename is the commit
            FtsIndex.create(db, codec.columns)
            db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            db.execute("CREATE TABLE payload(data TEXT NOT NULL)")
            with db:
                FtsIndex.fill(db, codec.columns, rows, codec.readers(data))
                db.execute("INSERT INTO docs(docs) VALUES('optimize')")
                db.execute("INSERT INTO payload VALUES(?)", (json.dumps(codec.dump(data)),))
                db.executemany("INSERT INTO meta VALUES(?, ?)", _meta(codec, signature).items())
        finally:
            db.close()
        os.replace(tmp, file)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def open_export(
    codec: ExportCodec[D],
    export: Path,
    signature: tuple[int, ...],
    state_dir: Path | None,
    read: Callable[[], D],
    rows: Callable[[D], Iterable[tuple[int, Sequence[str]]]],
) -> tuple[D, FtsIndex]:
    """The export's data and FTS index: reopened from ``state_dir`` when stored and current, else
    read, analyzed and stored there (in memory when ``state_dir`` is ``None`` or cannot be written).
    ``signature`` is taken before reading, so an export changing meanwhile is read again next time."""
    if state_dir is not None:
        file = export_index_path(state_dir.expanduser(), codec.kind, export)
        if (found := _reopen(codec, file, signature)) is not None:
            return found
    data = read()
    if state_dir is not None:
        try:
            _write(codec, file, signature, data, rows(data))
        except (OSError, sqlite3.OperationalError) as exc:
            _warn_once(f"cannot store the {codec.kind} index under {file.parent} ({exc}); kept in memory")
        else:
            if (found := _reopen(codec, file, signature)) is not None:
                return found
    index = FtsIndex(codec.columns, codec.weights)
    index.add(rows(data), codec.readers(data))
    return data, index
