"""Knowledge-base storage on PostgreSQL: the team's index, behind the same ``Store`` as the embedded one.

Chosen by location: a ``postgresql://`` (or ``postgres://``) URL wherever a knowledge-base path is
accepted. The password comes from the URL, ``PGPASSWORD`` or a ``.pgpass`` file (libpq reads them);
the location shown anywhere (reports, status, errors) never holds it.

Tables (prefix ``kb_``): ``kb_chunks`` (one row per chunk: its text, file fields for the filters, the
length of each field in the analyzer's terms), ``kb_postings`` (term, field, chunk, term frequency,
the field's length and the positions of the term, for phrases), ``kb_counts`` (chunks and tokens per
field: BM25's average lengths), ``kb_files``, ``kb_coverage``, ``kb_meta`` and ``kb_vectors`` as in
the embedded store. Terms are ``kbterms``' (the one analyzer); ranking is ``kbpgquery``'s BM25.

Schema migrations are numbered (``kb_migrations``) and run on open under an advisory lock. Every
batch of a run is one transaction under another advisory lock: a run killed (or a server killed)
mid-batch leaves the previous index whole, and two indexers at once take turns batch by batch; each
batch deletes a file's chunks before writing them, so nothing is ever duplicated.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sourcewise.errors import IndexVersionError, SourceUnavailable
from sourcewise.sources.kb import pgvector as kbpgvector
from sourcewise.sources.kb import terms as kbterms
from sourcewise.sources.kb.pgquery import FIELDS, PgView, fieldnorm, guarded
from sourcewise.sources.kb.pgschema import MIGRATIONS
from sourcewise.sources.kb.query import HEADINGS_SEP
from sourcewise.sources.kb.rows import ChunkRow, FileRow

__all__ = ["PgStore", "PgWriter", "display_url", "is_url"]

_LOCK_MIGRATE = 0x5357_0001  # advisory lock keys ("SW"...)
_LOCK_WRITE = 0x5357_0002
BATCH_CHUNKS = 20_000  # a batch is committed at this many chunks or after COMMIT_SECONDS
COMMIT_SECONDS = 10.0


def is_url(location: object) -> bool:
    return isinstance(location, str) and location.split("://", 1)[0] in ("postgresql", "postgres")


def display_url(url: str) -> str:
    """The URL without its password (and without query options that might carry one)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = (
        (f"{parts.username}@" if parts.username else "") + host + (f":{parts.port}" if parts.port else "")
    )
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _connect(url: str, location: str) -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise SourceUnavailable(
            "kb", "a postgresql:// knowledge base needs psycopg: pip install 'sourcewise[team]'"
        ) from exc
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise SourceUnavailable("kb", f"cannot connect to {location}: {_reason(exc, url)}") from exc


def _reason(exc: BaseException, url: str) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    password = urlsplit(url).password
    return text.replace(password, "***") if password else text


class PgStore:
    """The ``Store`` on PostgreSQL (see the module)."""

    legacy_paths: list[str] | None = None  # PostgreSQL upgrades by migrations, never a rebuild

    def __init__(self, url: str) -> None:
        self.url = url
        self.location = display_url(url)
        self._lock = threading.RLock()
        self.db = _connect(url, self.location)
        try:
            self._migrate()
            self.vector_search = kbpgvector.setup(self.db, self._lock, self.location)
        except BaseException:
            self.db.close()
            raise

    def _version(self) -> int:
        with self._lock, guarded(self.location):
            if self.db.execute("SELECT to_regclass('kb_migrations')").fetchone()[0] is None:
                return 0
            return int(self.db.execute("SELECT coalesce(max(version), 0) FROM kb_migrations").fetchone()[0])

    def _migrate(self) -> None:
        """Run the migrations this database lacks (none written when it is current: a read replica
        opens without a write)."""
        latest = MIGRATIONS[-1][0]
        current = self._version()
        if current == latest:
            return
        with self._lock, guarded(self.location), self.db.transaction():
            self.db.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_MIGRATE,))
            self.db.execute("CREATE TABLE IF NOT EXISTS kb_migrations(version INTEGER PRIMARY KEY, "
                            "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())")  # fmt: skip
            row = self.db.execute("SELECT coalesce(max(version), 0) FROM kb_migrations").fetchone()
            current = int(row[0])
            if current > latest:
                raise IndexVersionError(
                    "kb",
                    f"{self.location} was written by a newer sourcewise (schema {current}; this version "
                    f"reads up to {latest}). Upgrade sourcewise, or use another database.",
                )
            for version, sql in MIGRATIONS:
                if version > current:
                    self.db.execute(sql)
                    self.db.execute("INSERT INTO kb_migrations(version) VALUES (%s)", (version,))

    def _all(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._lock, guarded(self.location):
            return list(self.db.execute(sql, params).fetchall())

    def rebuilt(self) -> None:
        """Nothing to do: PostgreSQL upgrades by migrations (``legacy_paths`` is always ``None``)."""

    def get_meta(self, key: str) -> str | None:
        rows = self._all("SELECT value FROM kb_meta WHERE key = %s", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self.db.execute(
                "INSERT INTO kb_meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                (key, value),
            )

    def files(self) -> dict[str, tuple[str, int, int]]:
        return {
            r[0]: (r[1], r[2], r[3]) for r in self._all("SELECT path, hash, mtime_ns, size FROM kb_files")
        }

    def readers(self) -> dict[str, tuple[str, ...]]:
        return {r[0]: tuple(r[1]) for r in self._all("SELECT path, readers FROM kb_files")}

    def writer(self) -> PgWriter:
        return PgWriter(self)

    def view(self) -> PgView:
        return PgView(self.db, self._lock, self.location, self.vector_search == kbpgvector.PGVECTOR)

    def missing_vectors(self, limit: int) -> list[tuple[str, str]]:
        rows = self._all(
            "SELECT DISTINCT ON (c.embed_hash) c.embed_hash, c.title, c.headings, c.body FROM kb_chunks c "
            "WHERE NOT EXISTS (SELECT 1 FROM kb_vectors v WHERE v.hash = c.embed_hash) "
            "ORDER BY c.embed_hash LIMIT %s",
            (limit,),
        )
        return [(h, "\n".join([t, *(hd.split(HEADINGS_SEP) if hd else []), b])) for h, t, hd, b in rows]

    def put_vectors(self, items: Sequence[tuple[str, bytes]]) -> None:
        with self._lock, self.db.transaction(), self.db.cursor() as cur:
            if self.vector_search == kbpgvector.PGVECTOR:  # the HNSW index's copy beside the bytes
                cur.executemany(
                    "INSERT INTO kb_vectors VALUES (%s, %s, %s::vector) ON CONFLICT (hash) DO UPDATE "
                    "SET vec = EXCLUDED.vec, embedding = EXCLUDED.embedding",
                    [(h, v, kbpgvector.as_vector(v)) for h, v in items],
                )
                return
            cur.executemany(
                "INSERT INTO kb_vectors VALUES (%s, %s) ON CONFLICT (hash) DO UPDATE SET vec = EXCLUDED.vec",
                list(items),
            )

    def vectors(self) -> tuple[list[str], list[bytes]]:
        rows = self._all("SELECT hash, vec FROM kb_vectors ORDER BY hash")
        return [r[0] for r in rows], [bytes(r[1]) for r in rows]

    def vector_count(self) -> int:
        return int(self._all("SELECT count(*) FROM kb_vectors")[0][0])

    def stats(self) -> tuple[int, int, float | None]:
        files, chunks, updated = self._all(
            "SELECT count(*), coalesce(sum(chunks), 0), max(indexed_at) FROM kb_files"
        )[0]
        return int(files), int(chunks), updated

    def indexed(self) -> list[tuple[str, int]]:
        return [(r[0], r[1]) for r in self._all("SELECT path, chunks FROM kb_files ORDER BY path")]

    def coverage(self) -> list[tuple[str, str, str]]:
        return [
            (r[0], r[1], r[2]) for r in self._all("SELECT path, state, reason FROM kb_coverage ORDER BY path")
        ]

    def disk_bytes(self) -> int:
        rows = self._all(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND c.relname LIKE 'kb\\_%%' "
            "AND n.nspname = current_schema()"
        )
        return int(rows[0][0])

    def close(self) -> None:
        with self._lock:
            self.db.close()


def _field_terms(text: str) -> tuple[Counter[str], dict[str, list[int]], int]:
    """(term frequencies, positions of the engine's terms, length in terms) of one field's text."""
    engine_text, extras = kbterms.split(text)
    words = kbterms.engine_terms(engine_text)
    positions: dict[str, list[int]] = {}
    for i, t in enumerate(words):
        positions.setdefault(t, []).append(i)
    return Counter(words) + Counter(extras), positions, len(words) + len(extras)


class PgWriter:
    """One index run's writes on PostgreSQL: each batch one transaction (see the module)."""

    def __init__(self, store: PgStore) -> None:
        self.store = store
        self._chunks: list[tuple[Any, ...]] = []
        self._postings: list[
            list[tuple[str, int, int, int, list[int]]]
        ] = []  # per chunk, id filled at commit
        self._files: list[tuple[Any, ...]] = []
        self._gone: list[str] = []
        self._touched: list[tuple[int, str]] = []
        self._coverage: list[tuple[str, str, str]] = []
        self._changed = False
        self._last = time.monotonic()

    def put_file(self, file: FileRow, chunks: Sequence[ChunkRow], *, known: bool) -> None:
        day = int(file.doc_date.replace("-", ""))
        title = _field_terms(file.title)
        for c in chunks:
            headings = HEADINGS_SEP.join(c.heading_path)
            fields = (title, _field_terms(headings), _field_terms(c.text))
            self._chunks.append(
                (
                    file.path,
                    file.path.lower(),
                    file.ext,
                    file.title.lower(),
                    day,
                    not file.mtime_dated,
                    file.title,
                    headings,
                    c.text,
                    c.start_line,
                    c.end_line,
                    c.embed_hash,
                    fields[0][2],
                    fields[1][2],
                    fields[2][2],
                    list(file.readers),
                    c.embedded_chars,
                )
            )
            self._postings.append(
                [
                    (term, f, tf, fieldnorm(dl), positions.get(term, []))
                    for f, (freqs, positions, dl) in enumerate(fields)
                    for term, tf in freqs.items()
                ]
            )
        self._files.append(
            (
                file.path,
                file.hash,
                file.mtime_ns,
                file.size,
                file.title,
                file.doc_date,
                file.ext,
                file.mtime_dated,
                len(chunks),
                time.time(),
                list(file.readers),
            )
        )
        self._gone.append(file.path)

    def touch(self, file: FileRow) -> None:
        self._touched.append((file.mtime_ns, file.path))

    def remove(self, path: str) -> None:
        self._gone.append(path)

    def not_indexed(self, path: str, state: str, reason: str) -> None:
        self._coverage.append((path, state, reason))

    def due(self) -> bool:
        return len(self._chunks) >= BATCH_CHUNKS or time.monotonic() - self._last >= COMMIT_SECONDS

    def commit(self) -> None:
        """One transaction under the write lock: old chunks of the batch's files out, new ones in."""
        if not (self._gone or self._touched or self._coverage):
            return
        store = self.store
        with store._lock, guarded(store.location), store.db.transaction(), store.db.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_WRITE,))
            self._delete_chunks(cur)
            self._insert_chunks(cur)
            cur.execute("DELETE FROM kb_files WHERE path = ANY(%s)", (self._gone,))
            cur.execute("DELETE FROM kb_coverage WHERE path = ANY(%s)", (self._gone,))
            with cur.copy("COPY kb_files FROM STDIN") as copy:
                for row in self._files:
                    copy.write_row(row)
            cur.executemany("UPDATE kb_files SET mtime_ns = %s WHERE path = %s", self._touched)
            cur.executemany(
                "INSERT INTO kb_coverage VALUES (%s, %s, %s, %s) ON CONFLICT (path) DO UPDATE SET "
                "state = EXCLUDED.state, reason = EXCLUDED.reason, at = EXCLUDED.at",
                [(*c, time.time()) for c in self._coverage],
            )
        self._changed = self._changed or bool(self._gone)
        self._chunks, self._postings, self._files, self._gone, self._touched, self._coverage = (
            [],
            [],
            [],
            [],
            [],
            [],
        )
        self._last = time.monotonic()

    def _delete_chunks(self, cur: Any) -> None:
        cur.execute(
            "SELECT count(*), coalesce(sum(len_title), 0), coalesce(sum(len_headings), 0), "
            "coalesce(sum(len_body), 0) FROM kb_chunks WHERE path = ANY(%s)",
            (self._gone,),
        )
        self._count(cur, [-int(v) for v in cur.fetchone()])
        cur.execute("DELETE FROM kb_chunks WHERE path = ANY(%s)", (self._gone,))

    def _insert_chunks(self, cur: Any) -> None:
        if not self._chunks:
            return
        cur.execute("SELECT nextval('kb_chunks_id_seq') FROM generate_series(1, %s)", (len(self._chunks),))
        ids = [r[0] for r in cur.fetchall()]
        with cur.copy(
            "COPY kb_chunks(id, path, path_lc, ext, title_lc, day, dated, title, headings, body, start_line, "
            "end_line, embed_hash, len_title, len_headings, len_body, readers, embedded_chars) FROM STDIN"
        ) as copy:
            for chunk_id, row in zip(ids, self._chunks, strict=True):
                copy.write_row((chunk_id, *row))
        with cur.copy("COPY kb_postings(term, field, chunk_id, tf, dl, positions) FROM STDIN") as copy:
            for chunk_id, postings in zip(ids, self._postings, strict=True):
                for term, field, tf, dl, positions in postings:
                    copy.write_row((term, field, chunk_id, tf, dl, positions))
        lengths = [sum(r[12 + i] for r in self._chunks) for i in range(len(FIELDS))]
        self._count(cur, [len(self._chunks), *lengths])

    @staticmethod
    def _count(cur: Any, deltas: list[int]) -> None:
        names = ["docs", *(f"tokens_{i}" for i in range(len(FIELDS)))]
        cur.executemany(
            "UPDATE kb_counts SET value = value + %s WHERE name = %s",
            [(d, n) for d, n in zip(deltas, names, strict=True) if d],
        )

    def finish(self) -> None:
        """The last batch; embeddings no chunk uses any more go."""
        self.commit()
        if self._changed:
            with self.store._lock, guarded(self.store.location), self.store.db.transaction():
                self.store.db.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_WRITE,))
                self.store.db.execute(
                    "DELETE FROM kb_vectors v WHERE NOT EXISTS "
                    "(SELECT 1 FROM kb_chunks c WHERE c.embed_hash = v.hash)"
                )

    def abandon(self) -> None:
        """Nothing of the batch not yet committed was sent: it is dropped."""
        self._chunks, self._postings, self._files = [], [], []
