"""A damaged knowledge base: the error that says how to rebuild it, and the rebuild's first step.

A truncated or overwritten SQLite file or engine segment is detected when the store opens (both
SQLite and the engine check what they read) and reported as ``IndexDamaged`` with the command
that fixes it; ``sourcewise index --rebuild`` removes the index (``remove_index``) and indexes
the named folders again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sourcewise.errors import IndexDamaged

__all__ = ["REBUILD", "damaged", "remove_index"]

REBUILD = "sourcewise index --rebuild [--kb FILE] FOLDER..."


def damaged(where: str, exc: BaseException) -> IndexDamaged:
    why = " ".join(str(exc).split())[:160]
    return IndexDamaged(
        "kb", f"{where} is damaged or is not a sourcewise index ({why}); rebuild it from its files: {REBUILD}"
    )


def remove_index(location: str) -> None:
    """Delete the index at ``location``: the SQLite file with its journal, and the engine's folder
    (``index --rebuild``). Nothing else is touched."""
    if location == ":memory:":
        return
    for suffix in ("", "-wal", "-shm", "-journal", ".lex.npz"):
        Path(location + suffix).unlink(missing_ok=True)
    folder = Path(location + ".tantivy")
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder)
