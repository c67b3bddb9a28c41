"""Vectors on PostgreSQL: pgvector (an HNSW index, cosine distance) when the server has the extension,
else compared in the process as the embedded store does, with the reason said once.

``kb_vectors.vec`` (float32 bytes) stays what every server can read: a database moved to a server
without pgvector still answers semantically. ``kb_vectors.embedding`` (``vector(EMBED_DIM)``) is the
HNSW index's copy, written beside it when pgvector is there and filled from ``vec`` for rows written
before. The nearest chunks are one SQL query: the filters (readers included) are conditions of it,
with pgvector's iterative scan so that a filter leaving few rows still fills the limit.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from sourcewise.sources.kb.embed import EMBED_DIM

__all__ = ["IN_PROCESS", "NEAREST", "PGVECTOR", "as_vector", "setup"]

log = logging.getLogger("sourcewise")
PGVECTOR = "pgvector (HNSW, cosine)"
IN_PROCESS = "compared in this process"
_LOCK = 0x5357_0003
BACKFILL = 2_000

NEAREST = """
SELECT c.id, 1 - (v.embedding <=> %(q)s::vector) FROM kb_vectors v JOIN kb_chunks c ON c.embed_hash = v.hash
WHERE v.embedding IS NOT NULL AND {where}
ORDER BY v.embedding <=> %(q)s::vector, c.id LIMIT %(limit)s
"""


def as_vector(blob: bytes) -> str:
    """float32 bytes as pgvector's text form ``[x,y,...]``."""
    import numpy as np

    return "[" + ",".join(f"{x:.8g}" for x in np.frombuffer(blob, dtype=np.float32)) + "]"


def _why_not(db: Any) -> str | None:
    """``None`` when the ``vector`` extension is in the database (created here if it may be)."""
    import psycopg

    if db.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        return None
    if not db.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone():
        return "the server has no pgvector extension (e.g. apt-get install postgresql-15-pgvector)"
    try:
        with db.transaction():  # a savepoint: a refusal leaves the outer transaction usable
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        return (
            f"pgvector is on the server but not in this database ({first}): a superuser can run "
            "CREATE EXTENSION vector"
        )
    return None


def setup(db: Any, lock: threading.RLock, location: str) -> str:
    """How this database compares vectors (``PGVECTOR`` or ``IN_PROCESS: why``); the column, the
    index and the backfill made when pgvector is there (nothing written when all is in place, so
    a read replica opens without a write)."""
    import psycopg

    with lock:
        try:
            ready = db.execute(
                "SELECT 1 FROM pg_indexes WHERE indexname = 'kb_vectors_hnsw' "
                "AND schemaname = current_schema()"
            ).fetchone()
            why = None
            if not ready:
                with db.transaction():
                    db.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
                    why = _why_not(db)
                    if why is None:
                        db.execute(
                            f"ALTER TABLE kb_vectors ADD COLUMN IF NOT EXISTS embedding vector({EMBED_DIM})"
                        )
                        db.execute("CREATE INDEX IF NOT EXISTS kb_vectors_hnsw ON kb_vectors "
                                   "USING hnsw (embedding vector_cosine_ops)")  # fmt: skip
            if why is None:
                _backfill(db)
                db.execute("SET hnsw.iterative_scan = strict_order")  # a filter still fills the limit
        except psycopg.Error as exc:  # a read-only replica without the column, a lost connection
            why = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    if why is None:
        return PGVECTOR
    log.info("kb: %s: vectors are %s: %s", location, IN_PROCESS, why)
    return f"{IN_PROCESS}: {why}"


def _backfill(db: Any) -> None:
    """``embedding`` for the rows written without it (by a server without pgvector)."""
    while rows := db.execute(
        "SELECT hash, vec FROM kb_vectors WHERE embedding IS NULL LIMIT %s", (BACKFILL,)
    ).fetchall():
        with db.transaction(), db.cursor() as cur:
            cur.executemany(
                "UPDATE kb_vectors SET embedding = %s::vector WHERE hash = %s",
                [(as_vector(bytes(vec)), h) for h, vec in rows],
            )
