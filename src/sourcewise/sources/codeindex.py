"""The code source's file walk and its SQLite FTS5 index, kept up to date by mtime and size.

The walk honours every ``.gitignore`` on the way down (and ``.git/info/exclude``) with ``pathspec``
on its RE2 backend: a repository's ignore patterns are text from outside, and Python's ``re`` takes
seconds on a pattern like ``*a*a*a*b`` against a long name; RE2 is linear. Ignored directories are
pruned, never entered; symlinks are not followed (they can point out of the repository).

The index is one SQLite file per repository under ``state_dir/code`` (or ``:memory:``). A refresh
stats every candidate file and re-reads only those whose mtime or size changed, in one transaction,
so a failing refresh leaves the previous index whole.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from ..core.analyze import analyze
from ..core.outline import Outline, Symbol, chunk_spans, outline
from ..errors import IndexVersionError

__all__ = [
    "SCHEMA",
    "Candidate",
    "ChunkRow",
    "CodeIndex",
    "Globs",
    "Walk",
    "compile_globs",
    "index_path",
    "walk",
]

SCHEMA = 2  # 2: per-file term counts for whole-file BM25
BINARY_SNIFF = 8192
MAX_IGNORE_BYTES = 1_000_000  # a larger .gitignore is not a real one; it is skipped and reported
PROGRESS_EVERY = 500  # files read between two progress reports of a long refresh
LONG_LINE = 1000  # average characters per line above which a file is minified or generated
WEIGHTS = (2.0, 4.0, 1.0)

Globs = pathspec.PathSpec[pathspec.Pattern]


def compile_globs(lines: list[str] | tuple[str, ...]) -> Globs:
    """Git-style globs (``src/**``, ``*.test.*``) matched in linear time."""
    return pathspec.PathSpec.from_lines("gitignore", lines, backend="re2")


@dataclass(frozen=True)
class Candidate:
    rel: str
    path: Path
    mtime_ns: int
    size: int


@dataclass
class Walk:
    files: list[Candidate] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    ignored: int = 0


def _ignore_spec(directory: Path, name: str, walk_: Walk, rel: str) -> pathspec.GitIgnoreSpec | None:
    path = directory / name
    try:
        if not path.is_file():
            return None
        if path.stat().st_size > MAX_IGNORE_BYTES:
            walk_.skipped.append((rel, "ignore file larger than 1 MB; not applied"))
            return None
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        walk_.skipped.append((rel, f"ignore file not read: {exc.strerror or exc}"))
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines, backend="re2")
    except ValueError:  # git skips a pattern it cannot read and applies the rest; so do we
        good = [line for line in lines if _valid(line)]
        walk_.skipped.append((rel, f"{len(lines) - len(good)} pattern(s) not understood; the rest applied"))
        return pathspec.GitIgnoreSpec.from_lines(good, backend="re2")


def _valid(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line], backend="re2")
    except ValueError:
        return False
    return True


def _ignored(specs: list[tuple[str, pathspec.GitIgnoreSpec]], rel: str) -> bool:
    """Git's rule: the deepest ignore file with a matching pattern decides; its last match wins."""
    for prefix, spec in reversed(specs):
        result = spec.check_file(rel[len(prefix) :])
        if result.include is not None:
            return bool(result.include)
    return False


def walk(
    root: Path,
    *,
    include: Globs | None,
    exclude: Globs | None,
    gitignore: bool,
    max_bytes: int,
    max_files: int,
) -> Walk:
    """The files under ``root`` to index, in path order, and the ones skipped with why."""
    out = Walk()
    stack: list[tuple[Path, str, list[tuple[str, pathspec.GitIgnoreSpec]]]] = [(root, "", [])]
    if gitignore and (spec := _ignore_spec(root / ".git" / "info", "exclude", out, ".git/info/exclude")):
        stack[0][2].append(("", spec))
    while stack:
        directory, prefix, specs = stack.pop()
        if gitignore and (spec := _ignore_spec(directory, ".gitignore", out, f"{prefix}.gitignore")):
            specs = [*specs, (prefix, spec)]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            out.skipped.append((prefix or ".", f"unreadable directory: {exc.strerror or exc}"))
            continue
        for entry in entries:
            rel = prefix + entry.name
            if entry.name == ".git":
                continue
            if entry.is_symlink():
                out.skipped.append((rel, "symlink, not followed"))
            elif entry.is_dir(follow_symlinks=False):
                if _ignored(specs, rel + "/") or (exclude is not None and exclude.match_file(rel + "/")):
                    out.ignored += 1
                else:
                    stack.append((Path(entry.path), rel + "/", specs))
            elif entry.is_file(follow_symlinks=False):
                _consider(out, entry, rel, specs, include, exclude, max_bytes, max_files)
    out.files.sort(key=lambda c: c.rel)
    return out


def _consider(
    out: Walk,
    entry: os.DirEntry[str],
    rel: str,
    specs: list[tuple[str, pathspec.GitIgnoreSpec]],
    include: Globs | None,
    exclude: Globs | None,
    max_bytes: int,
    max_files: int,
) -> None:
    if (
        _ignored(specs, rel)
        or (include is not None and not include.match_file(rel))
        or (exclude is not None and exclude.match_file(rel))
    ):
        out.ignored += 1
        return
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        out.skipped.append((rel, f"unreadable: {exc.strerror or exc}"))
        return
    if st.st_size > max_bytes:
        out.skipped.append((rel, f"too large: {st.st_size:,} bytes (limit {max_bytes:,})"))
    elif len(out.files) >= max_files:
        out.skipped.append((rel, f"file limit reached ({max_files:,} files)"))
    else:
        out.files.append(Candidate(rel, Path(entry.path), st.st_mtime_ns, st.st_size))


def read_source(path: Path) -> tuple[str | None, str]:
    """The file's text, or ``None`` and why it is skipped (binary, minified, unreadable)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    if b"\x00" in data[:BINARY_SNIFF]:
        return None, "binary"
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.count("\n") + 1
    if len(text) > 20 * LONG_LINE and len(text) / lines > LONG_LINE:
        return None, "minified or generated (lines average over 1,000 characters)"
    return text, ""


def index_path(state_dir: Path, root: Path) -> Path:
    """Where the index of ``root`` lives: one file per resolved repository path."""
    key = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return state_dir / "code" / f"{key}.sqlite3"


@dataclass(frozen=True)
class ChunkRow:
    path: str
    start: int
    end: int
    text: str
    symbols: list[Symbol]
    score: float


_DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, mtime_ns INTEGER,
    size INTEGER, lang TEXT, skipped TEXT, defines TEXT, imports TEXT, symbols TEXT);
CREATE TABLE IF NOT EXISTS chunks(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, start_line INTEGER,
    end_line INTEGER, text TEXT);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE TABLE IF NOT EXISTS terms(term TEXT NOT NULL, file_id INTEGER NOT NULL, tf INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS terms_term ON terms(term);
CREATE INDEX IF NOT EXISTS terms_file ON terms(file_id);
CREATE TABLE IF NOT EXISTS lengths(file_id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(path, names, body,
    tokenize="unicode61 remove_diacritics 0 tokenchars '_'");
"""


def _symbols_json(symbols: list[Symbol]) -> str:
    return json.dumps([[s.name, s.start, s.end, s.depth] for s in symbols])


def _symbols(raw: str | None) -> list[Symbol]:
    return [Symbol(str(n), int(a), int(b), int(d)) for n, a, b, d in json.loads(raw or "[]")]


class CodeIndex:
    """SQLite FTS5 over ~``chunk_lines``-line chunks; safe to use from worker threads one at a time."""

    def __init__(self, db: Path | None, chunk_lines: int) -> None:
        self.db = db
        self.chunk_lines = chunk_lines
        self.lock = threading.Lock()
        self.conn = self._open()

    def _open(self) -> sqlite3.Connection:
        if self.db is None:
            return self._prepare(sqlite3.connect(":memory:", check_same_thread=False))
        self.db.parent.mkdir(parents=True, exist_ok=True)
        try:
            return self._prepare(sqlite3.connect(self.db, check_same_thread=False, timeout=10))
        except sqlite3.DatabaseError:  # a corrupt cache: it is only a cache, so start it again
            self.db.unlink(missing_ok=True)
            return self._prepare(sqlite3.connect(self.db, check_same_thread=False, timeout=10))

    def _prepare(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        try:
            if self.db is not None:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(
                    "PRAGMA synchronous=NORMAL"
                )  # WAL stays consistent; a crash loses the last refresh only
            conn.execute("PRAGMA cache_size=-65536")  # 64 MB: a cold build rewrites FTS pages otherwise
            conn.executescript(_DDL)
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError:
            conn.close()
            raise
        schema = int(meta.get("schema", SCHEMA))
        if schema > SCHEMA:
            conn.close()
            raise IndexVersionError(
                str(self.db), f"code index schema {schema} is newer than this sourcewise ({SCHEMA})"
            )
        if schema < SCHEMA or int(meta.get("chunk_lines", self.chunk_lines)) != self.chunk_lines:
            with conn:
                conn.execute("DELETE FROM chunks_fts")
                conn.execute("DELETE FROM chunks")
                conn.execute("DELETE FROM files")
                conn.execute("DELETE FROM terms")
                conn.execute("DELETE FROM lengths")
        with conn:
            conn.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [("schema", str(SCHEMA)), ("chunk_lines", str(self.chunk_lines))],
            )
        return conn

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def refresh(
        self,
        files: list[Candidate],
        progress: Callable[[int, int], None] | None = None,
        stop: threading.Event | None = None,
    ) -> tuple[int, int, int]:
        """Bring the index in line with ``files``: ``(added, updated, removed)``. ``progress(done,
        total)`` is called once the files to read are known, then after each file, when there are
        ``PROGRESS_EVERY`` or more to read.
        ``stop`` set: the files read so far are committed and the rest left for the next refresh
        (a search that gave up waiting: its process can end, and the next run goes on from there)."""
        with self.lock, self.conn:
            known = {
                p: (i, m, s) for i, p, m, s in self.conn.execute("SELECT id, path, mtime_ns, size FROM files")
            }
            wanted = {c.rel for c in files}
            removed = [i for p, (i, _, _) in known.items() if p not in wanted]
            for file_id in removed:
                self._delete(file_id)
            added = updated = 0
            todo = [c for c in files if (known.get(c.rel) or (0, None, None))[1:] != (c.mtime_ns, c.size)]
            # Progress only for a long refresh: every file (what ``pending`` says at a deadline);
            # the source prints every ``PROGRESS_EVERY``.
            report = progress if progress is not None and len(todo) >= PROGRESS_EVERY else None
            if report is not None:
                report(0, len(todo))  # the files are listed: how many there are to read
            for done, cand in enumerate(todo, 1):
                if stop is not None and stop.is_set():
                    return added, updated, len(removed)
                old = known.get(cand.rel)
                if old is not None:
                    self._delete(old[0])
                    updated += 1
                else:
                    added += 1
                self._add(cand)
                if report is not None:
                    report(done, len(todo))
            return added, updated, len(removed)

    def _delete(self, file_id: int) -> None:
        self.conn.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,)
        )
        self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM terms WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM lengths WHERE file_id = ?", (file_id,))
        self.conn.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _add(self, cand: Candidate) -> None:
        text, why = read_source(cand.path)
        try:
            info = outline(cand.rel, text) if text is not None else Outline(None)
        except Exception as exc:  # one file the outline cannot read is skipped, never the whole index
            text, why, info = None, f"not indexed: its outline failed ({type(exc).__name__})", Outline(None)
        cur = self.conn.execute(
            "INSERT INTO files(path, mtime_ns, size, lang, skipped, defines, imports, symbols) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (cand.rel, cand.mtime_ns, cand.size, info.language, why or None, json.dumps(info.defines),
             json.dumps(info.imports), _symbols_json(info.symbols)),
        )  # fmt: skip
        if text is None:
            return
        lines = text.split("\n")
        path_terms = " ".join(analyze(cand.rel))
        counts = Counter(path_terms.split())
        for start, end in chunk_spans(len(lines), info.symbols, self.chunk_lines):
            body = "\n".join(lines[start - 1 : end])
            body_terms = analyze(body)
            counts.update(body_terms)
            names = " ".join(s.name for s in info.symbols if start <= s.start <= end)
            chunk = self.conn.execute(
                "INSERT INTO chunks(file_id, start_line, end_line, text) VALUES (?, ?, ?, ?)",
                (cur.lastrowid, start, end, body),
            )
            self.conn.execute(
                "INSERT INTO chunks_fts(rowid, path, names, body) VALUES (?, ?, ?, ?)",
                (chunk.lastrowid, path_terms, " ".join(analyze(names)), " ".join(body_terms)),
            )
        self.conn.executemany(
            "INSERT INTO terms(term, file_id, tf) VALUES (?, ?, ?)",
            [(t, cur.lastrowid, n) for t, n in counts.items()],
        )
        self.conn.execute(
            "INSERT INTO lengths(file_id, n) VALUES (?, ?)", (cur.lastrowid, sum(counts.values()))
        )

    def search(self, match: str, exclude: str, keep: Callable[[str], bool], limit: int) -> list[ChunkRow]:
        """Chunks matching the FTS5 expression ``match`` (best first), or with no ``match`` the first
        chunk of each file in path order; ``exclude`` removes chunks that match it."""
        cols = "f.path, c.start_line, c.end_line, c.text, f.symbols"
        not_in = (
            "AND c.id NOT IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH :neg)" if exclude else ""
        )
        if match:
            rank = f"bm25(chunks_fts, {', '.join(map(str, WEIGHTS))})"
            sql = (
                f"SELECT {cols}, -{rank} FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
                f"JOIN files f ON f.id = c.file_id WHERE chunks_fts MATCH :q AND sw_keep(f.path) {not_in} "
                f"ORDER BY {rank} LIMIT :n"
            )
        else:
            sql = (
                f"SELECT {cols}, 0.0 FROM chunks c JOIN files f ON f.id = c.file_id "
                f"WHERE c.start_line = 1 AND sw_keep(f.path) {not_in} ORDER BY f.path LIMIT :n"
            )
        with self.lock:
            self.conn.create_function("sw_keep", 1, lambda p: 1 if keep(p) else 0, deterministic=True)
            rows = self.conn.execute(sql, {"q": match, "neg": exclude, "n": limit}).fetchall()
        return [ChunkRow(p, a, b, t, _symbols(s), float(score)) for p, a, b, t, s, score in rows]

    def file_bm25(self, query: list[str], k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
        """Each searchable file's BM25 score for ``query`` over whole files (path and body terms;
        Lucene's variant with bm25s's defaults), computed inside SQLite."""
        terms = list(dict.fromkeys(query))
        if not terms:
            return {}
        marks = ", ".join("?" * len(terms))
        with self.lock:
            n, avg = self.conn.execute("SELECT COUNT(*), AVG(n) FROM lengths").fetchone()
            df = self.conn.execute(
                f"SELECT term, COUNT(*) FROM terms WHERE term IN ({marks}) GROUP BY term", terms
            ).fetchall()
            if not df:
                return {}
            idf = [(t, math.log(1 + (n - d + 0.5) / (d + 0.5))) for t, d in df]
            values = ", ".join("(?, ?)" for _ in idf)
            sql = (
                f"WITH q(term, idf) AS (VALUES {values}) SELECT f.path, SUM(q.idf * t.tf * (:k1 + 1) / "
                f"(t.tf + :k1 * (1 - :b + :b * l.n / :avg))) FROM terms t JOIN q ON q.term = t.term "
                f"JOIN lengths l ON l.file_id = t.file_id JOIN files f ON f.id = t.file_id "
                f"WHERE f.skipped IS NULL GROUP BY t.file_id"
            )
            args = [v for pair in idf for v in pair]
            sql = sql.replace(":k1", repr(k1)).replace(":b", repr(b)).replace(":avg", repr(float(avg or 1.0)))
            rows = self.conn.execute(sql, args).fetchall()
        return {str(p): float(v) for p, v in rows}

    def facts(self) -> list[tuple[str, list[str], list[str], list[Symbol]]]:
        """Every searchable file's ``(path, defines, imports, symbols)``."""
        with self.lock:
            rows = self.conn.execute(
                "SELECT path, defines, imports, symbols FROM files WHERE skipped IS NULL ORDER BY path"
            ).fetchall()
        return [(str(p), json.loads(d or "[]"), json.loads(i or "[]"), _symbols(s)) for p, d, i, s in rows]

    def holds(self, rel: str) -> bool:
        """Whether ``rel`` is an indexed file whose text is searchable: the walk kept it (not ignored,
        excluded or too large) and it was read (not binary, minified or unreadable)."""
        with self.lock:
            sql = "SELECT 1 FROM files WHERE path = ? AND skipped IS NULL"
            row = self.conn.execute(sql, (rel,)).fetchone()
        return row is not None

    def outline(self, rel: str) -> Outline | None:
        with self.lock:
            row = self.conn.execute(
                "SELECT lang, defines, imports, symbols FROM files WHERE path = ?", (rel,)
            ).fetchone()
        if row is None:
            return None
        return Outline(row[0], json.loads(row[1] or "[]"), json.loads(row[2] or "[]"), _symbols(row[3]))

    def stats(self) -> tuple[int, int, list[tuple[str, str]], int]:
        """``(files indexed, chunks, files skipped when read with why, newest mtime_ns)``."""
        with self.lock:
            files, newest = self.conn.execute(
                "SELECT COUNT(*), COALESCE(MAX(mtime_ns), 0) FROM files WHERE skipped IS NULL"
            ).fetchone()
            chunks = self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            skipped = self.conn.execute(
                "SELECT path, skipped FROM files WHERE skipped IS NOT NULL ORDER BY path"
            )
            return int(files), int(chunks), [(str(p), str(r)) for p, r in skipped], int(newest)
