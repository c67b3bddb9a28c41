"""The local knowledge base: ``sourcewise.KnowledgeBase`` and the ``kb`` source.

Markdown, text, reStructuredText, HTML and PDF files are chunked on headings and paragraphs and
kept in a tantivy index beside a small SQLite file (default ``STATE_DIR/kb.sqlite3``; ``kbstore``).
Search is lexical (tantivy's BM25 over the terms of ``kbterms``' analyzer, title and headings
weighted), semantic (MiniLM cosine, with the ``semantic`` extra) or hybrid (both, fused by
``answer.fusion.convex``; a query mostly in a non-Latin script, which the English model cannot read,
is searched lexically: ``answer.fusion.semantic_reads``). Filters in the query: ``path:``,
``type:``/``ext:``, ``title:``, ``after:``/``before:`` (the front-matter ``date``, else the file's
modification day); each also negated (``-path:drafts``). Any other filter is reported, not silently
dropped.
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import model_validator

from sourcewise import access
from sourcewise.answer.fusion import convex, semantic_reads
from sourcewise.config import Settings, load_settings
from sourcewise.errors import InvalidOption, InvalidQuery, SourceUnavailable
from sourcewise.models import Hit, SourceInfo, SourceQuery, SourceResult
from sourcewise.planning import syntax as _syntax
from sourcewise.sources.base import Capabilities, Source, SourceOptions
from sourcewise.sources.filters import ParsedQuery
from sourcewise.sources.kb import search as kbsearch
from sourcewise.sources.kb import terms as kbterms
from sourcewise.sources.kb.embed import Embedder, embedder, embedder_within, semantic_available
from sourcewise.sources.kb.index import IndexReport, Progress, run_index
from sourcewise.sources.kb.pg import display_url, is_url
from sourcewise.sources.kb.query import StoreFilter, Viewer
from sourcewise.sources.kb.rows import Store
from sourcewise.sources.kb.search import DIVERSIFY, KB_FILTERS, Key, diversified, hit, lex_query, parse
from sourcewise.sources.kb.status import KBStatus, last_run_record, status_of
from sourcewise.sources.kb.store import open_store, rebuild_hint
from sourcewise.sources.kb.vectors import Vectors

__all__ = ["KB_FILTERS", "IndexReport", "KnowledgeBase", "KnowledgeBaseSource"]

log = logging.getLogger("sourcewise")
Mode = Literal["hybrid", "lexical", "semantic"]
CANDIDATES = 100  # per leg, for hybrid fusion
MAX_LIMIT = 200
_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning("%s", message)


def _writable_dir(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


class KnowledgeBase:
    """A local knowledge base (see the module). ``KnowledgeBase()`` opens the default one."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        semantic: bool | None = None,
        settings: Settings | None = None,
        name: str = "kb",
        store: Store | None = None,
        rebuild: bool = True,
    ) -> None:
        """``rebuild``: an earlier schema's index is rebuilt now, else ``SourceUnavailable`` (a search)."""
        self.name = name
        self.semantic = semantic  # None: when the extra is installed
        # None: wait for the model however long it takes to load; a number: search lexically
        # (and say so) when it is not ready within that many seconds (the sources under a deadline).
        self.model_wait: float | None = None
        self.store: Store = store or open_store(self.location_for(path, settings))
        self.vectors = Vectors(self.store)
        if self.store.get_meta("analyzer") not in (None, kbterms.ANALYZER_ID):
            # said on every open, `index` included: the words fit a search and an index run alike
            _warn_once(f"{self.location} was built by another analyzer: `sourcewise index` reads them again")
        legacy = self.store.legacy_paths
        if legacy is not None:  # an index of an earlier schema: written again from its files
            if not rebuild:
                self.store.close()
                raise SourceUnavailable(name, rebuild_hint(self.location, len(legacy)))
            if legacy:
                log.warning("kb: %s: rebuilding it from the %d files it held", self.location, len(legacy))
                r = self.index([p for p in legacy if Path(p).is_file()])
                log.warning("kb: %s rebuilt: %d files, %d chunks", self.location, len(r.added), r.chunks)
            self.store.rebuilt()

    @staticmethod
    def location_for(path: str | os.PathLike[str] | None, settings: Settings | None) -> str:
        """The index file ``KnowledgeBase(path, settings=settings)`` opens (``:memory:`` when its
        folder cannot be written)."""
        if is_url(path):  # a PostgreSQL knowledge base (kbpg)
            return str(path)
        if path is None:
            target = (settings or load_settings()).state_dir / "kb.sqlite3"
        else:
            target = Path(path).expanduser()
        try:  # a name from a byte-level argv (surrogate escapes) cannot reach SQLite or the engine
            str(target).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidOption(f"the index path {str(target)!a} is not valid UTF-8: name another") from None
        if "\x00" in str(target):  # no file system takes it (argv cannot carry one; the API can)
            raise InvalidOption(f"the index path {str(target)!a} holds a NUL character: name another")
        if str(target) == ":memory:" or _writable_dir(target.parent):
            return str(target)
        if target.exists():  # never an empty stand-in for an index that is there: 0 hits would lie
            raise SourceUnavailable(
                "kb",
                f"the index {target} is in a folder that cannot be written; the search engine writes "
                "a lock file beside its index even to read it. Make the folder writable, or copy the "
                "index (the file and its .tantivy folder) to a writable folder and pass --kb FILE.",
            )
        _warn_once(f"cannot write to {target.parent}; the knowledge base is in memory for this run only")
        return ":memory:"

    @property
    def location(self) -> str:
        return self.store.location

    def index(
        self,
        paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
        progress: Progress | None = None,
    ) -> IndexReport:
        """Add, update and remove files under ``paths``; a report of what changed and what was
        skipped, its ``seconds`` the whole run's (embedding included). ``progress``: see ``Progress``."""
        started = time.monotonic()
        if isinstance(paths, str | os.PathLike):
            paths = [paths]
        force = self.store.get_meta("analyzer") not in (None, kbterms.ANALYZER_ID)
        report = run_index(self.store, paths, force=force, progress=progress)
        self.store.set_meta("analyzer", kbterms.ANALYZER_ID)
        self.vectors.forget()
        embedded = self.vectors.embed_missing(progress) if self._wants_model() else 0
        seconds = round(time.monotonic() - started, 3)
        self.store.set_meta("last_run", last_run_record(
            seconds, len(report.added), len(report.updated), len(report.removed), report.unchanged,
            len(report.skipped), report.chunks))  # fmt: skip
        return report.model_copy(update={"embedded": embedded, "seconds": seconds})

    def _wants_model(self) -> bool:
        """Semantic search on: asked for (``semantic=True``: the missing extra is said), or left
        to the default (``None``: on when the extra is installed, silently off when not)."""
        return self.semantic is True or (self.semantic is None and semantic_available())

    def warm(self) -> None:
        """Start loading the model in the background if semantic search can run here (the extra,
        embeddings in the index): a door's first hybrid search then need not search lexically."""
        if self.semantic is not False and semantic_available() and self.vectors.any():
            embedder_within(0)

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: Mode = "hybrid",
        filters: Mapping[str, str | list[str]] | None = None,
        readers: Sequence[str] | None = None,
    ) -> list[Hit]:
        """The best chunks for ``query``, best first; warnings (unsupported filters) are logged.
        ``readers``: only chunks of files one of these principals may read (``access.readers``)."""
        hits, warnings = self.search_with_warnings(
            query, limit=limit, mode=mode, filters=filters, readers=readers
        )
        for w in warnings:
            log.warning("%s", w)
        return hits

    def search_with_warnings(
        self,
        query: str,
        *,
        limit: int = 10,
        mode: Mode = "hybrid",
        filters: Mapping[str, str | list[str]] | None = None,
        readers: Sequence[str] | None = None,
    ) -> tuple[list[Hit], list[str]]:
        if not isinstance(query, str):
            raise InvalidQuery(f"a query is text, got {type(query).__name__}")
        if not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise InvalidOption(f"limit must be 1-{MAX_LIMIT}, got {limit!r}")
        if mode not in ("hybrid", "lexical", "semantic"):
            raise InvalidOption(f"mode must be hybrid, lexical or semantic, got {mode!r}")
        parsed, negations, where, warnings = parse(query, filters, readers)
        view = self.store.view()  # one searcher: the keys it ranks are the ones it reads
        wider = min(MAX_LIMIT, limit * DIVERSIFY)
        scored = self._ranked(view, parsed, negations, where, mode, wider, warnings)
        wanted = kbterms.wanted(parsed.text)
        hits = [hit(row, score, wanted, self.name) for row, score in diversified(view, scored, limit)]
        return hits, warnings

    def _ranked(
        self, view: Viewer, parsed: ParsedQuery, negations: list[str], where: StoreFilter, mode: Mode,
        limit: int, warnings: list[str],
    ) -> list[tuple[Key, float]]:  # fmt: skip
        model: Embedder | None = None
        if mode == "hybrid" and not semantic_reads(parsed.text):
            # MiniLM reads English: on a Korean (or other non-Latin) query its leg only adds noise.
            mode = "lexical"
        if mode != "lexical":
            # Cheap checks first: the model (torch) is loaded only when there are vectors to compare.
            if self.semantic is False:
                warnings.append("kb: semantic search is off for this knowledge base; searched lexically")
            elif not semantic_available():
                if self.semantic is True or mode == "semantic":  # asked for: say how to install it
                    embedder()
            elif not self.vectors.any():
                warnings.append(
                    "kb: this index has no embeddings (built with --no-semantic?); searched lexically"
                )
            else:
                got = embedder() if self.model_wait is None else embedder_within(self.model_wait)
                if got is False:
                    warnings.append("kb: the semantic model is still loading; searched lexically this time")
                elif isinstance(got, Embedder):
                    model = got
            if model is None:
                mode = "lexical"
        query = lex_query(parsed, negations)
        if mode == "lexical":
            return view.lexical(query, where, limit)
        assert model is not None
        semantic = self.vectors.nearest(
            view, model, parsed.text, where, limit if mode == "semantic" else CANDIDATES
        )
        if mode == "semantic":
            return semantic
        lexical = view.lexical(query, where, CANDIDATES)
        return convex(lexical, semantic, read=kbsearch.read_shares(view, [*lexical, *semantic]))[:limit]

    def status(self) -> KBStatus:
        """Size on disk, chunks, files, the last run and every file's coverage (``index --status``)."""
        return status_of(self.store)

    def info(self) -> tuple[int, int, datetime | None]:
        files, chunks, updated = self.store.stats()
        return files, chunks, datetime.fromtimestamp(updated, UTC) if updated else None

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class KnowledgeBaseOptions(SourceOptions):
    """``path`` is the index file (default ``STATE_DIR/kb.sqlite3``) or a ``postgresql://`` URL
    (kept as ``url``: a URL is not a file path)."""

    mode: Mode | None = None  # None: the settings' ``kb_mode`` (``KnowledgeBaseSource.mode``)
    semantic: bool | None = None
    url: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _url_path(cls, data: Any) -> Any:
        if isinstance(data, dict) and is_url(data.get("path")):
            data = {**data, "url": data["path"], "path": None}
        return data


class KnowledgeBaseSource(Source):
    """The local knowledge base as a source: build it with ``sourcewise index PATH``."""

    type = "kb"
    kind = "knowledge_base"
    authority = "wiki"
    syntax = staticmethod(_syntax.knowledge_base)
    filters: ClassVar[frozenset[str]] = KB_FILTERS
    Options = KnowledgeBaseOptions
    capabilities = Capabilities(documents=True)

    _kb: KnowledgeBase | None = None

    def __init__(self, name: str, options: SourceOptions, settings: Settings) -> None:
        super().__init__(name, options, settings)
        self._opening = threading.Lock()  # two first searches in two threads open one index

    def _file(self) -> Path | str:
        """The index file, or the ``postgresql://`` URL of a team knowledge base (``kbpg``)."""
        assert isinstance(self.options, KnowledgeBaseOptions)
        if self.options.url is not None:
            return self.options.url
        return (self.options.path or self.settings.state_dir / "kb.sqlite3").expanduser()

    def _ready(self, path: Path | str) -> bool:
        return isinstance(path, str) or path.is_file()

    def open(self) -> KnowledgeBase:
        with self._opening:
            return self._open()

    def _open(self) -> KnowledgeBase:
        if self._kb is None:
            path = self._file()
            if not self._ready(path):
                raise SourceUnavailable(
                    self.name, f"no knowledge base at {path}: run `sourcewise index PATH` first"
                )
            assert isinstance(self.options, KnowledgeBaseOptions)
            self._kb = KnowledgeBase(path, semantic=self.options.semantic, name=self.name, rebuild=False)
            # Under the gather's deadline: a model still loading leaves half of it to the search.
            self._kb.model_wait = self.settings.source_timeout / 2
        return self._kb

    def _search(
        self, text: str, limit: int, mode: Mode, readers: Sequence[str] | None
    ) -> tuple[list[Hit], list[str]]:
        # Opening is I/O too (SQLite, the index folder): in the source's thread with the query.
        return self.open().search_with_warnings(text, limit=limit, mode=mode, readers=readers)

    def mode(self) -> Mode:
        """How descriptive queries are searched: the source's ``mode``, else ``kb_mode``, whose
        ``auto`` is hybrid in a lasting session (a door: the model loads once, at its start) or
        when the source asks for semantic search (``semantic = true``), and lexical in a one-shot
        session (loading torch and the model costs seconds a run, for one query)."""
        assert isinstance(self.options, KnowledgeBaseOptions)
        chosen = self.options.mode or self.settings.kb_mode
        if chosen == "auto":
            lasting = self._session is not None and self._session.lasting
            return "hybrid" if lasting or self.options.semantic is True else "lexical"
        return chosen

    def warm(self) -> None:
        """A lasting session's start: the model starts loading in the background when this
        knowledge base's searches will use it."""
        if self.mode() != "lexical" and self._ready(self._file()):
            self.open().warm()

    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        assert isinstance(self.options, KnowledgeBaseOptions)
        # The planner's keyword queries are exact words: lexical; descriptive ones get the configured mode.
        mode: Mode = "lexical" if query.mode == "keyword" else self.mode()
        # The door's user is read here, in the request's context: their documents only, inside the query.
        hits, warnings = await self.run(
            self._search, query.query, min(limit or self.options.limit, MAX_LIMIT), mode, access.readers()
        )
        return self.result(query, hits, [w.replace("kb:", f"{self.name}:", 1) for w in warnings])

    async def read(
        self, hits: Sequence[Hit], question: str, depth: int, seconds: float
    ) -> tuple[list[Hit], int, list[str]]:
        """``ask``'s fetch depth: the first ``depth`` hits read on into their next chunk
        (``search.following``) within ``seconds``; the hits, how many were read on, notes."""
        first = list(hits[: max(0, depth)])
        if not first or seconds <= 0:
            return list(hits), 0, []
        try:
            job = self.run(kbsearch.following, self.open().store.view(), first)
            read = await asyncio.wait_for(job, seconds)
        except TimeoutError:  # the hits as found, and a note: never a failure that looks like none
            return list(hits), 0, [f"{self.name}: the chunks after its first hits were not read in time"]
        return [*read, *hits[len(first) :]], sum("after" in h.meta for h in read), []

    async def info(self) -> SourceInfo:
        path = self._file()
        location = display_url(path) if isinstance(path, str) else str(path)
        if not self._ready(path):
            return SourceInfo(
                name=self.name, type=self.type, kind=self.kind, location=location, ready=False,
                detail="not indexed: run `sourcewise index PATH`",
            )  # fmt: skip
        if access.readers() is not None:  # a door's user: counts would include files they may not read
            return SourceInfo(name=self.name, type=self.type, kind=self.kind, location=location, ready=True)
        files, chunks, updated = self.open().info()
        return SourceInfo(
            name=self.name, type=self.type, kind=self.kind, location=location, ready=True,
            detail=f"{files} files, {chunks} chunks", items=files, updated=updated,
        )  # fmt: skip

    async def aclose(self) -> None:
        if self._kb is not None:
            self._kb.close()
            self._kb = None
