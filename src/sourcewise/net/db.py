"""Opening the SQLite files in the state directory, or memory when they cannot be used.

Agents, containers and CI often run with a read-only or missing home: a state directory that
cannot be created or written, or a file that is not a database, must not stop a search. The
fallback is an in-memory database (nothing persists between processes) and one warning per
file per process. Two processes opening a new file at once (workers starting together) race to
switch it to WAL; SQLite answers the loser "database is locked" without waiting, so that answer is
retried a few times before the file is given up.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["open_db"]

log = logging.getLogger("sourcewise")
_warned: set[str] = set()


def open_db(path: Path | None, setup: Callable[[sqlite3.Connection], None], what: str) -> sqlite3.Connection:
    """A connection to ``path`` set up by ``setup``; in memory (with one warning) if that fails."""
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return _open_file(path, setup)
        except (OSError, sqlite3.Error) as exc:
            if str(path) not in _warned:
                _warned.add(str(path))
                log.warning("%s %s cannot be used (%s); keeping it in memory for this run", what, path, exc)
    db = sqlite3.connect(":memory:", check_same_thread=False)
    setup(db)
    return db


def _open_file(path: Path, setup: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    for attempt in range(_TRIES):
        db = sqlite3.connect(str(path), timeout=10, check_same_thread=False)
        try:
            setup(db)
            return db
        except sqlite3.OperationalError as exc:
            db.close()
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or attempt == _TRIES - 1:
                raise
            time.sleep(0.05 * 2**attempt)
        except BaseException:
            db.close()
            raise
    raise AssertionError("unreachable")


_TRIES = 6
