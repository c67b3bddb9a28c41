"""A local code repository as a source: ``code:./myrepo``.

Files are found by a walk that honours ``.gitignore`` and the ``include``/``exclude`` globs, cut
into chunks of about 40 lines aligned to top-level definitions and indexed with SQLite FTS5 (BM25,
with the path and the defined names weighted above the body). Identifiers are split by the shared
analyzer, so "token expiry" finds ``tokenExpiry``, ``token_expiry`` and ``TokenExpiry``.

Query syntax: plain words (any may match; more matches rank higher), ``"exact phrase"`` (must
appear), ``-word`` (must not), ``path:src/auth`` (a substring of the path, or a glob like
``path:src/**/*.py``), ``ext:py``, ``lang:python``, and ``-path:``/``-ext:``/``-lang:`` to exclude.
A query of filters only lists the matching files.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sourcewise.config import Settings
from sourcewise.errors import ConfigError, SourceUnavailable
from sourcewise.models import Hit, SourceInfo, SourceQuery, SourceResult
from sourcewise.sources._fts import fts_match
from sourcewise.sources.base import Capabilities, Source, SourceOptions
from sourcewise.sources.code.index import PROGRESS_EVERY, ChunkRow, CodeIndex, index_path
from sourcewise.sources.code.locate import FileFacts, Located, Repo, rank, verbatim_strings
from sourcewise.sources.code.outline import ALIASES, LANGUAGES, Outline, enclosing, language_of
from sourcewise.sources.code.taskread import Reading, task_words
from sourcewise.sources.code.walk import Globs, compile_globs, walk
from sourcewise.sources.filters import ParsedQuery
from sourcewise.text.analyze import analyze, fts_query
from sourcewise.text.sanitize import strip_controls

__all__ = ["CodeIndexReport", "CodeOptions", "CodeSource"]

MAX_SKIPPED_REPORTED = 200
MAX_TERMS = 96  # distinct words of a task ranked on: what it names first, then its prose in order
PASSAGE_WORDS = 64  # distinct words of its prose a file's passages are scored on (with what the task
# names first, measured: the loop's Acc@5 fell from 102 to 99 of the 107 tuning tasks)


class CodeOptions(SourceOptions):
    """``[sources.NAME]`` options of a ``code`` source."""

    include: tuple[str, ...] = Field(default=(), description="git-style globs to index (default: all)")
    exclude: tuple[str, ...] = Field(default=(), description="git-style globs never to index")
    gitignore: bool = Field(default=True, description="honour .gitignore files and .git/info/exclude")
    max_file_bytes: int = Field(default=1_000_000, ge=1, le=50_000_000, description="larger are skipped")
    max_files: int = Field(default=50_000, ge=1, le=1_000_000, description="files indexed at most")
    chunk_lines: int = Field(default=40, ge=5, le=400, description="lines per chunk at most")
    cache: bool = Field(default=True, description="keep the index under state_dir/code (False: in memory)")

    @field_validator("include", "exclude", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value


class CodeIndexReport(BaseModel):
    """What a refresh of the code index did."""

    model_config = ConfigDict(frozen=True)

    files: int
    chunks: int
    added: int
    updated: int
    removed: int
    ignored: int = Field(description="files left out by .gitignore or the include/exclude globs")
    skipped: list[tuple[str, str]] = Field(description="files not indexed, with why (binary, too large ...)")


def _exts(values: list[str], warnings: list[str], name: str) -> set[str]:
    """``ext:py,ts`` and ``lang:python`` as a set of extensions."""
    out: set[str] = set()
    for value in values:
        kind, _, raw = value.partition(":")
        for item in (p.strip().lower().lstrip(".") for p in raw.split(",")):
            if not item:
                continue
            if kind == "ext":
                out.add(item)
                continue
            lang = ALIASES.get(item, item)
            if lang not in LANGUAGES:
                known = ", ".join(LANGUAGES)
                warnings.append(f"{name}: unknown language {item!r} (known: {known}); read as an extension")
            out.update(LANGUAGES.get(lang, (item,)))
    return out


@dataclass
class PathFilter:
    """Which indexed paths a query keeps: ``path:`` substrings or globs, extensions, and their negations."""

    paths: list[str] = field(default_factory=list)
    globs: Globs | None = None
    not_paths: list[str] = field(default_factory=list)
    not_globs: Globs | None = None
    exts: set[str] = field(default_factory=set)
    not_exts: set[str] = field(default_factory=set)

    def __call__(self, rel: str) -> bool:
        ext = PurePosixPath(rel).suffix.lower().lstrip(".")
        if (self.exts and ext not in self.exts) or ext in self.not_exts:
            return False
        low = rel.casefold()
        if any(p in low for p in self.not_paths) or (self.not_globs and self.not_globs.match_file(rel)):
            return False
        if not self.paths and self.globs is None:
            return True
        return any(p in low for p in self.paths) or bool(self.globs and self.globs.match_file(rel))


def _split_paths(values: list[str], name: str, warnings: list[str]) -> tuple[list[str], Globs | None]:
    plain = [v.casefold().removeprefix("./") for v in values if not any(ch in v for ch in "*?[")]
    globs = [v for v in values if any(ch in v for ch in "*?[")]
    try:
        return plain, compile_globs(globs) if globs else None
    except ValueError as exc:
        warnings.append(f"{name}: path glob not understood ({exc}); ignored")
        return plain, None


def path_filter(parsed: ParsedQuery, name: str, warnings: list[str]) -> tuple[PathFilter, list[str]]:
    """The path filter of a parsed query, and the negations left that are words, not filters."""
    neg = {"path": [], "ext": [], "lang": []}  # type: dict[str, list[str]]
    words: list[str] = []
    for n in parsed.negations:
        key, sep, value = n.partition(":")
        if sep and value and key.lower() in neg:
            neg[key.lower()].append(value)
        else:
            words.append(n)
    paths, globs = _split_paths(parsed.values("path"), name, warnings)
    not_paths, not_globs = _split_paths(neg["path"], name, warnings)
    kinds = [f"ext:{v}" for v in parsed.values("ext")] + [f"lang:{v}" for v in parsed.values("lang")]
    not_kinds = [f"ext:{v}" for v in neg["ext"]] + [f"lang:{v}" for v in neg["lang"]]
    return (
        PathFilter(
            paths, globs, not_paths, not_globs, _exts(kinds, warnings, name), _exts(not_kinds, warnings, name)
        ),
        words,
    )


def hit_from_row(row: ChunkRow, query_terms: set[str], source: str) -> Hit:
    """A chunk as a hit: the lines that hold query terms (the chunk's head if only the path matched),
    titled by the definition around the line with the most query terms, which is also the snippet."""
    lines = row.text.split("\n")
    found = [len(query_terms & set(analyze(line))) for line in lines]
    marked = [i for i, n in enumerate(found) if n]
    first, last = (marked[0], marked[-1]) if marked else (0, min(len(lines), 10) - 1)
    best = max(marked, key=lambda i: (found[i], -i)) if marked else 0  # most query terms, first of ties
    start, end = row.start + first, row.start + last
    shown = "\n".join(lines[first : last + 1])
    title = enclosing(row.symbols, row.start + best) or PurePosixPath(row.path).name
    snippet = " ".join(lines[best].split())[:200]
    return Hit(
        title=strip_controls(title),
        location=f"{row.path}#L{start}-L{end}",
        snippet=strip_controls(snippet),
        text=strip_controls(shown, keep="\n\t"),
        source=source,
        kind="code",
        authority="code",
        score=row.score,
        path=row.path,
        start_line=start,
        end_line=end,
        meta={"language": language_of(row.path) or "", "chunk": f"L{row.start}-L{row.end}"},
    )


class CodeSource(Source):
    """A local repository, indexed on first use and refreshed (changed files only) on each search."""

    type = "code"
    kind = "code"
    authority = "code"
    capabilities = Capabilities(code=True, whole_item=True, history=True)
    filters: ClassVar[frozenset[str]] = frozenset({"path", "ext", "lang"})
    Options = CodeOptions

    _index: CodeIndex | None = None
    _indexing: tuple[int, int] | None = None  # (files done, files found) while an index runs
    _last: CodeIndexReport | None = None
    _repo: Repo | None = None  # the repository's structure, per state of the index
    _lexical: tuple[list[str], dict[str, float]] | None = None  # the task's words' BM25, for later cycles
    _verbatim: tuple[Reading, dict[str, set[str]]] | None = None  # the files holding what it quotes

    def __init__(self, name: str, options: SourceOptions, settings: Settings) -> None:
        super().__init__(name, options, settings)
        opts = self.code_options
        try:
            self._include = compile_globs(opts.include) if opts.include else None
            self._exclude = compile_globs(opts.exclude) if opts.exclude else None
        except ValueError as exc:
            raise ConfigError(f"source {name!r} (code): include/exclude glob not understood: {exc}") from exc
        self._refresh_lock = asyncio.Lock()

    @property
    def code_options(self) -> CodeOptions:
        opts = self.options
        return opts if isinstance(opts, CodeOptions) else CodeOptions(**opts.model_dump())

    def _root(self) -> Path:
        root = self.options.require_path(self.name)
        if not root.exists():
            raise SourceUnavailable(self.name, f"{root} does not exist")
        if not root.is_dir():
            raise SourceUnavailable(self.name, f"{root} is not a directory (a code source is a repository)")
        return root

    def _refresh_sync(self, stop: threading.Event | None = None) -> CodeIndexReport:
        root, opts = self._root(), self.code_options
        if self._index is None:
            db = index_path(self.settings.state_dir.expanduser(), root) if opts.cache else None
            try:
                self._index = CodeIndex(db, opts.chunk_lines)
            except OSError:  # the state folder cannot be written: keep the index in memory instead
                self._index = CodeIndex(None, opts.chunk_lines)
        found = walk(
            root,
            include=self._include,
            exclude=self._exclude,
            gitignore=opts.gitignore,
            max_bytes=opts.max_file_bytes,
            max_files=opts.max_files,
        )
        added, updated, removed = self._index.refresh(found.files, self._progress(), stop)
        files, chunks, unreadable, _ = self._index.stats()
        skipped = sorted([*found.skipped, *unreadable])
        return CodeIndexReport(
            files=files, chunks=chunks, added=added, updated=updated, removed=removed,
            ignored=found.ignored, skipped=skipped[:MAX_SKIPPED_REPORTED],
        )  # fmt: skip

    def _progress(self) -> Callable[[int, int], None]:
        """Progress of a long first index: kept for ``pending`` and shown on stderr when stderr is
        a terminal (never in a pipe)."""
        shown = sys.stderr.isatty()

        def report(done: int, total: int) -> None:
            self._indexing = (done, total)
            if shown and (done % PROGRESS_EVERY == 0 or done == total):
                end = "\n" if done == total else ""
                line = f"\rsourcewise: indexing {self.name}: {done:,} of {total:,} files"
                print(line, end=end, file=sys.stderr)

        return report

    def pending(self) -> str | None:
        if self._indexing is None:
            return None
        done, total = self._indexing
        where = f"{done:,} of {total:,} files" if total else "listing the files"
        return f"still indexing ({where}); what is indexed is kept: run the search again to go on"

    async def refresh(self) -> CodeIndexReport:
        """Index new and changed files, drop deleted ones; what it did and what it skipped.
        Cancelled (a deadline gave up waiting, Ctrl-C): the files read so far are kept and the
        thread stops at the next file, so that a one-shot command ends then, not after the index."""
        async with self._refresh_lock:
            stop = threading.Event()
            try:
                self._last = await self.run(self._refresh_done, stop)
            except asyncio.CancelledError:
                stop.set()
                raise
            return self._last

    def _refresh_done(self, stop: threading.Event) -> CodeIndexReport:
        """The refresh, then ``pending`` cleared: in the thread, which goes on until ``stop`` after
        a deadline gave up waiting for it (so a time-out can still say how far the index got)."""
        self._indexing = (0, 0)
        try:
            return self._refresh_sync(stop)
        finally:
            self._indexing = None

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        parsed, warnings = self.parse(query)
        keep, negated = path_filter(parsed, self.name, warnings)
        await self.refresh()
        assert self._index is not None
        exclude = fts_query(" ".join(negated))
        rows = await self.run(
            self._index.search,
            fts_match(parsed.terms, parsed.phrases),
            exclude,
            keep,
            min(limit or self.options.limit, 200),
        )
        terms = set(analyze(parsed.text))
        return self.result(query, [hit_from_row(r, terms, self.name) for r in rows], warnings)

    async def locate(
        self,
        reading: Reading,
        terms: Sequence[str] = (),
        *,
        about: frozenset[str] = frozenset(),
        fresh: bool = True,
    ) -> list[Located]:
        """The repository's files ranked for a task (``sources/code/locate.py``): what the task names,
        its words (``taskread.task_words``; ``terms`` added) and the kinds of files.
        ``fresh=False``: rank the index as of the last refresh (a retrieval's later cycles)."""
        report = await self.refresh() if fresh or self._last is None else self._last
        index = self._index
        assert index is not None
        said = task_words(reading)
        kept = set(list(dict.fromkeys(said))[:MAX_TERMS])
        words = [w for w in said if w in kept]  # repeats kept: a word said often weighs more
        added = [w for w in dict.fromkeys(t for term in terms for t in analyze(term)) if w not in words]

        def run() -> list[Located]:
            if self._repo is None or report.added or report.updated or report.removed:
                self._repo = Repo(
                    [FileFacts(p, tuple(d), tuple(i), tuple(s)) for p, d, i, s in index.facts()]
                )
            # BM25 sums over words: a later cycle adds its learned words' scores to the task's
            if fresh or self._lexical is None or self._lexical[0] != words:
                self._lexical = (words, index.file_bm25(words))
            lexical = dict(self._lexical[1])
            for p, value in index.file_bm25(added).items():
                lexical[p] = lexical.get(p, 0.0) + value
            if fresh or self._verbatim is None or self._verbatim[0] is not reading:
                self._verbatim = (reading, index.containing(verbatim_strings(reading)))
            verbatim = self._verbatim[1]
            return rank(reading, self._repo, lexical, about=about, extra_names=terms, verbatim=verbatim)

        return await self.run(run)

    async def passages(self, reading: Reading, paths: Sequence[str]) -> dict[str, float]:
        """Each of ``paths``' best passage's BM25 for the task's words (damaged: SourceUnavailable)."""
        index, words = self._index, list(dict.fromkeys(analyze(reading.prose)))[:PASSAGE_WORDS]
        try:
            return await self.run(lambda: index.best_passages(words, set(paths))) if index and paths else {}
        except sqlite3.Error as exc:
            raise SourceUnavailable(self.name, f"its index could not be read ({exc})") from exc

    def holds(self, path: str) -> bool:
        """Whether the index, as of its last refresh, holds ``path`` (relative to the repository) as a
        searchable file (never what the source leaves out; before the first search, nothing)."""
        try:
            return self._index is not None and self._index.holds(path)
        except sqlite3.Error:
            return False

    async def outline(self, path: str) -> Outline:
        """What the indexed file ``path`` (relative to the repository) defines and imports."""
        await self.refresh()
        assert self._index is not None
        found = self._index.outline(path.replace("\\", "/").removeprefix("./"))
        if found is None:
            raise SourceUnavailable(self.name, f"{path!r} is not an indexed file of this repository")
        return found

    async def info(self) -> SourceInfo:
        base = await super().info()
        if not base.ready:
            return base
        try:
            report = await self.refresh()
        except SourceUnavailable as exc:
            return base.model_copy(update={"ready": False, "detail": exc.detail})
        assert self._index is not None
        newest = self._index.stats()[3]
        reasons: dict[str, int] = {}
        for _, why in report.skipped:
            key = why.split(":")[0].split(" (")[0]
            reasons[key] = reasons.get(key, 0) + 1
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))
        return base.model_copy(
            update={
                "items": report.files,
                "updated": datetime.fromtimestamp(newest / 1e9, UTC) if newest else None,
                "detail": f"{report.files} files, {report.chunks} chunks"
                + (f"; skipped: {skipped}" if skipped else ""),
            }
        )

    async def aclose(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None
            self._repo = None
            self._lexical = None
            self._verbatim = None
