"""Provider suspensions, persisted in SQLite so that every process honours a back-off.

A provider that is rate-limited or blocked is suspended for ``base`` seconds, doubled for
each consecutive strike (at most one hour), or for as long as its ``Retry-After`` asks.
A successful answer clears the strikes.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import NamedTuple

__all__ = ["MAX_SUSPENSION", "ProviderState", "Suspension"]

MAX_SUSPENSION = 3600.0


class Suspension(NamedTuple):
    until: float
    reason: str
    strikes: int


class ProviderState:
    """Suspension records; ``path=None`` keeps them in memory (for one process only)."""

    def __init__(self, path: Path | None = None) -> None:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path) if path else ":memory:", timeout=10, check_same_thread=False)
        with self._db:
            self._db.execute("PRAGMA journal_mode=WAL") if path else None
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS suspension ("
                " provider TEXT PRIMARY KEY, until REAL NOT NULL, reason TEXT NOT NULL,"
                " strikes INTEGER NOT NULL)"
            )

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
        self, provider: str, now: float, reason: str, base: float, retry_after: float | None = None
    ) -> Suspension:
        record = self.get(provider)
        strikes = (record.strikes if record else 0) + 1
        wait = min(MAX_SUSPENSION, base * 2 ** (strikes - 1))
        if retry_after is not None:
            wait = min(MAX_SUSPENSION, max(wait, retry_after))
        suspension = Suspension(now + wait, reason, strikes)
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO suspension VALUES (?, ?, ?, ?)", (provider, *suspension))
        return suspension

    def clear(self, provider: str) -> None:
        with self._db:
            self._db.execute("DELETE FROM suspension WHERE provider = ?", (provider,))

    def close(self) -> None:
        self._db.close()
