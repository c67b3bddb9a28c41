"""The page cache: SQLite, keyed by canonical URL, 15 minutes by default (seed 000). Beside the
pages, each origin's robots.txt answer (status and body), under the same rules.

Each write is one transaction, so a crash never leaves a half-written entry. A cache file that
cannot be opened (corrupt, read-only home) is reported once and replaced by an in-memory cache;
a read or write that fails later is reported and bypassed, never fatal to a fetch. Expired
rows are purged as new ones are written.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import asdict
from pathlib import Path
from typing import NamedTuple

from sourcewise.net.db import open_db
from sourcewise.text.extract import Extracted

__all__ = ["CachedDocument", "CachedRobots", "PageCache"]

log = logging.getLogger("sourcewise")


Hop = tuple[str, int, list[str]]


class CachedDocument:
    """A fetched page. ``hops`` are (host, port, addresses connected to) for every request that
    led to it, so that a later caller is served it only if its own guard allows each of them."""

    def __init__(
        self,
        url: str,
        extracted: Extracted,
        fetched_at: float,
        truncated: bool,
        hops: list[Hop] | None = None,
    ) -> None:
        self.url = url
        self.extracted = extracted
        self.fetched_at = fetched_at
        self.truncated = truncated
        self.hops: list[Hop] = hops or []

    def to_json(self) -> str:
        return json.dumps(
            {
                "url": self.url,
                "extracted": asdict(self.extracted),
                "fetched_at": self.fetched_at,
                "truncated": self.truncated,
                "hops": self.hops,
            },
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> CachedDocument:
        data = json.loads(text)
        # A row without hops (written by an older version) cannot be re-checked: a miss.
        hops = [(str(h), int(p), [str(a) for a in addresses]) for h, p, addresses in data["hops"]]
        if not hops:
            raise ValueError("no hops")
        return cls(data["url"], Extracted(**data["extracted"]), data["fetched_at"], data["truncated"], hops)


class CachedRobots(NamedTuple):
    """An origin's robots.txt answer: the HTTP status, the body read (2xx only), and a note on
    the answer for messages ("answered HTTP 503")."""

    status: int
    body: bytes
    note: str


def _setup(db: sqlite3.Connection) -> None:
    # WAL: several workers (uvicorn --workers N, CLI runs beside a server) read while one writes,
    # instead of waiting on each other's locks; NORMAL sync is enough for a cache.
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    with db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS page"
            " (key TEXT PRIMARY KEY, fetched_at REAL NOT NULL, doc TEXT NOT NULL)"
        )
        db.execute(
            "CREATE TABLE IF NOT EXISTS robots (key TEXT PRIMARY KEY, fetched_at REAL NOT NULL,"
            " status INTEGER NOT NULL, body BLOB NOT NULL, note TEXT NOT NULL)"
        )


class PageCache:
    def __init__(self, path: Path | None, ttl: float) -> None:
        self.ttl = ttl
        self.path = path
        self._db: sqlite3.Connection | None = open_db(path, _setup, "page cache")

    def get(self, key: str, now: float) -> CachedDocument | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT fetched_at, doc FROM page WHERE key = ?", (key,)).fetchone()
        except sqlite3.DatabaseError as exc:
            log.warning("page cache read failed (%s); fetching anew", exc)
            return None
        if row is None or now - row[0] >= self.ttl:
            return None
        try:
            return CachedDocument.from_json(row[1])
        except (ValueError, KeyError, TypeError):
            return None

    def put(self, keys: list[str], doc: CachedDocument, now: float | None = None) -> None:
        if self._db is None:
            return
        try:
            with self._db:
                if now is not None:  # expired rows are purged as new ones come in
                    self._db.execute("DELETE FROM page WHERE fetched_at <= ?", (now - self.ttl,))
                self._db.executemany(
                    "INSERT OR REPLACE INTO page VALUES (?, ?, ?)",
                    [(key, doc.fetched_at, doc.to_json()) for key in dict.fromkeys(keys)],
                )
        except sqlite3.DatabaseError as exc:
            log.warning("page cache write failed (%s); the page is not cached", exc)

    def get_robots(self, key: str, now: float) -> CachedRobots | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT fetched_at, status, body, note FROM robots WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            log.warning("page cache read failed (%s); fetching robots.txt anew", exc)
            return None
        if row is None or now - row[0] >= self.ttl:
            return None
        return CachedRobots(int(row[1]), bytes(row[2]), str(row[3]))

    def put_robots(self, key: str, robots: CachedRobots, now: float) -> None:
        if self._db is None:
            return
        try:
            with self._db:
                self._db.execute("DELETE FROM robots WHERE fetched_at <= ?", (now - self.ttl,))
                self._db.execute("INSERT OR REPLACE INTO robots VALUES (?, ?, ?, ?, ?)", (key, now, *robots))
        except sqlite3.DatabaseError as exc:
            log.warning("page cache write failed (%s); robots.txt is not cached", exc)

    def clear(self) -> int:
        if self._db is None:
            return 0
        with self._db:
            self._db.execute("DELETE FROM robots")
            return self._db.execute("DELETE FROM page").rowcount

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
