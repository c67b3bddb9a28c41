"""Opening the SQLite files in the state directory, or memory when they cannot be used.

Agents, containers and CI often run with a read-only or missing home: a state directory that
cannot be created or written, or a file that is not a database, must not stop a search. The
fallback is an in-memory database (nothing persists between processes) and one warning per
file per process.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path

__all__ = ["open_db"]

log = logging.getLogger("sourcewise")
_warned: set[str] = set()


def open_db(path: Path | None, setup: Callable[[sqlite3.Connection], None], what: str) -> sqlite3.Connection:
    """A connection to ``path`` set up by ``setup``; in memory (with one warning) if that fails."""
    if path is not None:
        db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(path), timeout=10, check_same_thread=False)
            setup(db)
            return db
        except (OSError, sqlite3.Error) as exc:
            if db is not None:
                db.close()
            if str(path) not in _warned:
                _warned.add(str(path))
                log.warning("%s %s cannot be used (%s); keeping it in memory for this run", what, path, exc)
    db = sqlite3.connect(":memory:", check_same_thread=False)
    setup(db)
    return db
