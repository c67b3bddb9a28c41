"""The PostgreSQL knowledge base's schema: numbered migrations, run in order on open (``kbpg``).

Tables (prefix ``kb_``) are described in ``kbpg``; a migration is only ever added, never changed.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
CREATE TABLE kb_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE kb_files(
    path TEXT PRIMARY KEY, hash TEXT NOT NULL, mtime_ns BIGINT NOT NULL, size BIGINT NOT NULL,
    title TEXT NOT NULL, doc_date TEXT NOT NULL, ext TEXT NOT NULL, mtime_dated BOOLEAN NOT NULL,
    chunks INTEGER NOT NULL, indexed_at DOUBLE PRECISION NOT NULL);
CREATE TABLE kb_coverage(path TEXT PRIMARY KEY, state TEXT NOT NULL, reason TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL);
CREATE TABLE kb_vectors(hash TEXT PRIMARY KEY, vec BYTEA NOT NULL);
CREATE TABLE kb_chunks(
    id BIGSERIAL PRIMARY KEY, path TEXT NOT NULL, path_lc TEXT NOT NULL, ext TEXT NOT NULL,
    title_lc TEXT NOT NULL, day INTEGER NOT NULL, dated BOOLEAN NOT NULL, title TEXT NOT NULL,
    headings TEXT NOT NULL, body TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    embed_hash TEXT NOT NULL, len_title INTEGER NOT NULL, len_headings INTEGER NOT NULL,
    len_body INTEGER NOT NULL);
CREATE INDEX kb_chunks_path ON kb_chunks(path);
CREATE INDEX kb_chunks_hash ON kb_chunks(embed_hash);
CREATE TABLE kb_postings(
    term TEXT NOT NULL, field SMALLINT NOT NULL, chunk_id BIGINT NOT NULL
        REFERENCES kb_chunks(id) ON DELETE CASCADE,
    tf INTEGER NOT NULL, dl INTEGER NOT NULL, positions INTEGER[] NOT NULL,
    PRIMARY KEY(term, field, chunk_id) INCLUDE (tf, dl));
CREATE INDEX kb_postings_chunk ON kb_postings(chunk_id);
CREATE TABLE kb_counts(name TEXT PRIMARY KEY, value BIGINT NOT NULL);
INSERT INTO kb_counts VALUES ('docs', 0), ('tokens_0', 0), ('tokens_1', 0), ('tokens_2', 0);
""",
    ),
    (
        2,  # who may read each file and chunk (``readers``); rows written before: public, as they were
        """
ALTER TABLE kb_files ADD COLUMN readers TEXT[] NOT NULL DEFAULT '{*}';
ALTER TABLE kb_chunks ADD COLUMN readers TEXT[] NOT NULL DEFAULT '{*}';
CREATE INDEX kb_chunks_readers ON kb_chunks USING gin(readers);
""",
    ),
    (
        # the length of the text each chunk's embedding read (``query.embedded``: title, headings and
        # body joined by newlines), kept for hybrid search; rows written before: computed from theirs
        3,
        """
ALTER TABLE kb_chunks ADD COLUMN embedded_chars INTEGER;
UPDATE kb_chunks SET embedded_chars = char_length(title) + char_length(headings) + char_length(body)
    + CASE WHEN headings = '' THEN 1 ELSE 2 END;
ALTER TABLE kb_chunks ALTER COLUMN embedded_chars SET NOT NULL;
""",
    ),
]
