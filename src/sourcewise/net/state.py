"""Provider suspensions, persisted in SQLite so that every process honours a back-off.

A provider that is rate-limited or blocked is suspended for as long as its ``Retry-After``
asks, or else for ``base`` seconds doubled for each consecutive strike (at most one hour; a
user's own instance gets short back-offs, see ``OWN_BASE``). A successful answer clears the
strikes; ``sourcewise providers --reset [NAME]`` lifts a suspension by hand.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import NamedTuple

from sourcewise.net.db import open_db

__all__ = ["MAX_SUSPENSION", "OWN_BASE", "OWN_MAX", "ProviderState", "Suspension"]

MAX_SUSPENSION = 3600.0
#: A user's own instance (SearXNG at a configured URL) is theirs to retry: short back-offs.
OWN_BASE = 10.0
OWN_MAX = 120.0


class Suspension(NamedTuple):
    until: float
    reason: str
    strikes: int


def _setup(db: sqlite3.Connection) -> None:
    db.isolation_level = None  # transactions are explicit: suspend() is one BEGIN IMMEDIATE
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS suspension ("
        " provider TEXT PRIMARY KEY, until REAL NOT NULL, reason TEXT NOT NULL,"
        " strikes INTEGER NOT NULL)"
    )


class ProviderState:
    """Suspension records; ``path=None`` keeps them in memory (for one process only)."""

    def __init__(self, path: Path | None = None) -> None:
        self._db = open_db(path, _setup, "provider state")

    def get(self, provider: str) -> Suspension | None:
        row = self._db.execute(
            "SELECT until, reason, strikes FROM suspension WHERE provider = ?", (provider,)
        ).fetchone()
        return Suspension(*row) if row else None

    def suspended(self, provider: str, now: float) -> Suspension | None:
        """The suspension in force at ``now``, if any."""
        record = self.get(provider)
        return record if record and record.until > now else None

    def suspend(
        self,
        provider: str,
        now: float,
        reason: str,
        base: float,
        retry_after: float | None = None,
        *,
        cap: float = MAX_SUSPENSION,
    ) -> Suspension:
        """Add a strike and suspend: for ``retry_after`` when the provider said how long (never
        longer than ``cap``), else ``base`` doubled per consecutive strike up to ``cap``.
        Read and write are one transaction, so strikes from several processes all count."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            record = self.get(provider)
            strikes = (record.strikes if record else 0) + 1
            if retry_after is not None:
                wait = min(cap, max(1.0, retry_after))
            else:
                wait = min(cap, base * 2 ** min(strikes - 1, 32))
            suspension = Suspension(now + wait, reason, strikes)
            self._db.execute("INSERT OR REPLACE INTO suspension VALUES (?, ?, ?, ?)", (provider, *suspension))
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
        return suspension

    def clear(self, provider: str | None = None, *, everywhere: bool = False) -> int:
        """Lift the suspension of ``provider`` (of every provider when ``None``); how many.
        ``everywhere``: a user's explicit lift, which must reach every worker (this file does)."""
        if provider is None:
            return self._db.execute("DELETE FROM suspension").rowcount
        return self._db.execute("DELETE FROM suspension WHERE provider = ?", (provider,)).rowcount

    def close(self) -> None:
        self._db.close()
