"""The local knowledge base: ``sourcewise.KnowledgeBase`` and the ``kb`` source.

Markdown, text, reStructuredText, HTML and PDF files are chunked on headings and paragraphs and
kept in a tantivy index beside a small SQLite file (default ``STATE_DIR/kb.sqlite3``; ``kbstore``).
Search is lexical (tantivy's BM25 over the terms of ``kbterms``' analyzer, title and headings
weighted), semantic (MiniLM cosine, with the
``semantic`` extra) or hybrid (both, fused by ``core.fusion.convex``; a query mostly in a non-Latin
script, which the English model cannot read, is searched lexically: ``core.fusion.semantic_reads``).
Filters in the query: ``path:``, ``type:``/``ext:``, ``title:``, ``after:``/``before:`` (the
front-matter ``date``, else the file's modification day);
each also negated (``-path:drafts``). Any other filter is reported, not silently dropped.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections.abc import Hashable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import model_validator

from .. import access
from ..config import Settings, load_settings
from ..core import syntax as _syntax
from ..core.analyze import MAX_TERM
from ..core.filters import ParsedQuery, parse_query
from ..core.fusion import convex, semantic_reads
from ..core.rank import _builder
from ..errors import InvalidOption, InvalidQuery, SourceUnavailable
from ..models import Hit, SourceInfo, SourceQuery, SourceResult
from . import kbterms
from .base import Capabilities, Source, SourceOptions
from .kbembed import Embedder, embedder, embedder_within, semantic_available
from .kbindex import IndexReport, Progress, run_index
from .kbpg import display_url, is_url
from .kbquery import LexQuery, Row, StoreFilter, Viewer
from .kbsnippet import snippet as _snippet
from .kbstatus import KBStatus, last_run_record, status_of
from .kbstore import Store, open_store

__all__ = ["KB_FILTERS", "IndexReport", "KnowledgeBase", "KnowledgeBaseSource"]

log = logging.getLogger("sourcewise")
Mode = Literal["hybrid", "lexical", "semantic"]
KB_FILTERS = frozenset({"path", "type", "ext", "title", "after", "before"})
TYPE_EXTS = {
    "markdown": ("md", "markdown", "mdx"), "md": ("md", "markdown", "mdx"), "text": ("txt", "text"),
    "txt": ("txt", "text"), "rst": ("rst",), "html": ("html", "htm"), "htm": ("html", "htm"), "pdf": ("pdf",),
}  # fmt: skip
CANDIDATES = 100  # per leg, for hybrid fusion
EMBED_BATCH = 256
Key = tuple[int, int]  # a chunk in one view of the index
MAX_LIMIT = 200
# Results diversified per file: of the best ``DIVERSIFY`` x limit chunks, a file's first
# ``PER_FILE`` keep their places and its others follow every file's first ones, so one long page
# cannot fill the list and push out the page that answers.
DIVERSIFY = 3
PER_FILE = 3


def diversified(view: Viewer, scored: list[tuple[Key, float]], limit: int) -> list[tuple[Row, float]]:
    """The first ``limit`` of ``scored`` (best first) once each file's chunks after its
    ``PER_FILE``-th are moved to the end, in order, with their rows: the files come from
    ``view.files`` (a column), so only the chunks returned are read."""
    seen: dict[Hashable, int] = {}
    first: list[tuple[Key, float]] = []
    rest: list[tuple[Key, float]] = []
    for (key, score), file in zip(scored, view.files([key for key, _ in scored]), strict=True):
        seen[file] = seen.get(file, 0) + 1
        (first if seen[file] <= PER_FILE else rest).append((key, score))
    chosen = (first + rest)[:limit]
    rows = view.rows([key for key, _ in chosen])
    return [(rows[key], score) for key, score in chosen if key in rows]


_new_hit = _builder(Hit)
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


def _day(value: str, key: str, warnings: list[str]) -> str | None:
    try:
        return date.fromisoformat(value.replace("/", "-")).isoformat()
    except ValueError:
        warnings.append(f"kb: {key}:{value} is not a date like 2025-01-15; ignored")
        return None


def build_filter(pairs: Iterable[tuple[str, str, bool]], warnings: list[str]) -> StoreFilter:
    """A ``StoreFilter`` from (key, value, negated) triples of the KB's filter keys."""
    where = StoreFilter()
    for key, value, negated in pairs:
        if key == "path":
            (where.not_paths if negated else where.paths).append(value)
        elif key in ("type", "ext"):
            exts = TYPE_EXTS.get(value.lower().lstrip("."), (value.lower().lstrip("."),))
            (where.not_exts if negated else where.exts).extend(exts)
        elif key == "title":
            (where.not_titles if negated else where.titles).append(value)
        elif key in ("after", "before") and (day := _day(value, key, warnings)):
            if negated:
                warnings.append(f"kb: -{key}: is not supported; use the other of after:/before:")
            elif key == "after":
                where.after = max(where.after or day, day)
            else:
                where.before = min(where.before or day, day)
    return where


def kb_query_terms(text: str) -> list[str]:
    """The query's terms (``kbterms.query_terms``) without the identifier parts that are one
    character or only digits: "python3" keeps "python3" and "python", "w123" keeps "w123", but not
    "w", "3" or "123", which match a large share of all chunks (every "w2", every number) and cost a
    read of their long posting lists. A word standing on its own in the query always stays."""
    terms = kbterms.query_terms(text)
    whole = {first for w in text.split() if (first := _first_term(w[:MAX_TERM]))}
    return [t for t in terms if t in whole or (len(t) > 1 and not t.isdigit())] or terms


@lru_cache(maxsize=65536)
def _first_term(word: str) -> str | None:
    found = kbterms.terms(word)
    return found[0] if found else None


def lex_query(parsed: ParsedQuery, negations: list[str]) -> LexQuery:
    """Required phrases, any of the terms, none of the negated words, all analyzed by ``kbterms``.

    A phrase is matched by position on the engine's terms; a phrase holding identifiers or Hangul
    (whose extra terms have no positions of their own) requires each of its terms instead."""
    q = LexQuery(terms=kb_query_terms(" ".join(parsed.terms)))
    for phrase in parsed.phrases:
        engine_text, extras = kbterms.split(phrase)
        words = kbterms.engine_terms(engine_text)
        if extras:
            q.required.extend(dict.fromkeys([*words, *extras]))
        elif words:
            q.phrases.append(words)
    q.excluded = list(dict.fromkeys(t for n in negations for t in kbterms.terms(n)))
    return q


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
    ) -> None:
        self.name = name
        self.semantic = semantic  # None: when the extra is installed
        # None: wait for the model however long it takes to load; a number: search lexically
        # (and say so) when it is not ready within that many seconds (the sources under a deadline).
        self.model_wait: float | None = None
        self.store: Store = store or open_store(self.location_for(path, settings))
        self._matrix: tuple[Any, Any] | None = None
        if self.store.get_meta("analyzer") not in (None, kbterms.ANALYZER_ID):
            _warn_once(f"{self.store.location} was built by another analyzer; run `sourcewise index` again")
        legacy = self.store.legacy_paths
        if legacy is not None:  # an index of the SQLite FTS5 version: written again from its files
            report = self.index([p for p in legacy if Path(p).is_file()]) if legacy else None
            if report is not None:
                log.warning(
                    "kb: %s rebuilt: %d files, %d chunks", self.location, len(report.added), report.chunks
                )
            self.store.legacy_paths = None

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
        self._matrix = None
        embedded = self._embed_missing(progress) if self._wants_model() else 0
        seconds = round(time.monotonic() - started, 3)
        self.store.set_meta("last_run", last_run_record(
            seconds, len(report.added), len(report.updated), len(report.removed), report.unchanged,
            len(report.skipped), report.chunks))  # fmt: skip
        return report.model_copy(update={"embedded": embedded, "seconds": seconds})

    def _wants_model(self) -> bool:
        """Semantic search on: asked for (``semantic=True``: the missing extra is said), or left
        to the default (``None``: on when the extra is installed, silently off when not)."""
        if self.semantic is True:
            return True
        return self.semantic is None and semantic_available()

    def warm(self) -> None:
        """Start loading the model in the background if semantic search can run here (the extra,
        embeddings in the index): a door's first hybrid search then need not search lexically."""
        if self.semantic is not False and semantic_available() and self._vectors()[0].size:
            embedder_within(0)

    def _embed_missing(self, progress: Progress | None = None) -> int:
        if progress is not None:
            progress("model", 0, None)
        model = embedder()
        if model is None:
            return 0
        _, chunks, _ = self.store.stats()
        total = max(0, chunks - self.store.vector_count())
        done = 0
        # Batch by batch, each stored in its own transaction: a killed run keeps what was embedded
        # and the next one starts where it stopped.
        while part := self.store.missing_vectors(EMBED_BATCH):
            vecs = model.encode([text for _, text in part])
            self.store.put_vectors([(h, v.tobytes()) for (h, _), v in zip(part, vecs, strict=True)])
            done += len(part)
            if progress is not None:
                progress("embed", done, max(total, done))
            log.info("kb: %d chunks embedded", done)
            if len(part) < EMBED_BATCH:
                break
        self._matrix = None
        return done

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
        parsed = parse_query(query)
        warnings = [
            f"kb: filter {f!r} is not supported by kb sources; ignored"
            for f in parsed.unsupported(KB_FILTERS)
        ]
        pairs = [(k, v, False) for k, v in parsed.filters if k in KB_FILTERS]
        negations: list[str] = []
        for n in parsed.negations:
            key, sep, value = n.partition(":")
            if sep and value and key.lower() in KB_FILTERS:
                pairs.append((key.lower(), value, True))
            else:
                negations.append(n)
        pairs.extend(_filter_pairs(filters))
        where = build_filter(pairs, warnings)
        where.readers = None if readers is None else tuple(readers)  # applied inside the query
        view = self.store.view()  # one searcher: the keys it ranks are the ones it reads
        wider = min(MAX_LIMIT, limit * DIVERSIFY)
        scored = self._ranked(view, parsed, negations, where, mode, wider, warnings)
        terms = set(kbterms.query_terms(parsed.text))
        return [self._hit(row, score, terms) for row, score in diversified(view, scored, limit)], warnings

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
            elif not (self.store.vector_count() if self._indexed_vectors() else self._vectors()[0].size):
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
        semantic = self._semantic(
            view, model, parsed.text, where, limit if mode == "semantic" else CANDIDATES
        )
        if mode == "semantic":
            return semantic
        return convex(view.lexical(query, where, CANDIDATES), semantic)[:limit]

    def _indexed_vectors(self) -> bool:
        """The store compares vectors in its own index (pgvector), not in this process."""
        return not self.store.vector_search.startswith("compared in this process")

    def _vectors(self) -> tuple[Any, Any]:
        """(embed hashes, flat float32 vectors), read once and kept until the next index run."""
        import numpy as np

        if self._matrix is None:
            hashes, blobs = self.store.vectors()
            self._matrix = (np.array(hashes), np.frombuffer(b"".join(blobs), dtype=np.float32))
        return self._matrix

    def _semantic(
        self, view: Viewer, model: Embedder, text: str, where: StoreFilter, limit: int
    ) -> list[tuple[Key, float]]:
        import numpy as np

        if not text.strip():
            return []
        query = model.encode([text])[0]
        near = view.nearest(query.astype(np.float32).tobytes(), where, limit)  # the store's index
        if near is not None:
            return near
        hashes, flat = self._vectors()
        if not len(hashes):
            return []
        scores = flat.reshape(len(hashes), -1) @ query
        # The nearest texts, then the chunks holding them that the filter keeps (with a filter,
        # many more texts: the filter may leave few of the nearest).
        wanted = limit if where.empty() else max(20 * limit, 2000)
        top = np.argsort(-scores)[:wanted]
        found = view.by_hashes([str(hashes[i]) for i in top], where, 4 * len(top))
        out = [(key, float(scores[i])) for i in top for key in found.get(str(hashes[i]), [])]
        return out[:limit]

    def _hit(self, row: Row, score: float, terms: set[str]) -> Hit:
        # Built without validation (``rank._builder``, every field given in order): each value is
        # typed here or by the store's ``Row``, the texts cleaned when indexed; validating ten hits
        # cost about a fifth of a query.
        return _new_hit(
            title=row.title,
            location=f"{row.path}#L{row.start_line}-L{row.end_line}",
            snippet=_snippet(row.text, terms),
            text=row.text,
            source=self.name,
            kind="knowledge_base",
            authority="wiki",
            score=round(score, 6),
            author=None,
            # a file without a date of its own is undated: its modification time says when it
            # was copied or checked out, not when it was written (no recency either way)
            timestamp=_day_start(row.doc_date) if row.dated else None,
            path=row.path,
            heading_path=row.heading_path,
            start_line=row.start_line,
            end_line=row.end_line,
            tier=None,
            reliability_score=None,
            meta={},
        )

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


def _filter_pairs(filters: Mapping[str, str | list[str]] | None) -> list[tuple[str, str, bool]]:
    if filters is None:
        return []
    if not isinstance(filters, Mapping):
        raise InvalidOption("filters is a mapping like {'ext': 'md', 'after': '2025-01-01'}")
    out: list[tuple[str, str, bool]] = []
    for key, value in filters.items():
        name = str(key).lstrip("-").lower()
        if name not in KB_FILTERS:
            raise InvalidOption(f"unknown kb filter {key!r}; known: {', '.join(sorted(KB_FILTERS))}")
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InvalidOption(f"kb filter {key!r} takes a string or a list of strings")
        out.extend((name, v, str(key).startswith("-")) for v in values)
    return out


@lru_cache(maxsize=4096)
def _day_start(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)  # immutable: one object per day is enough


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
            self._kb = KnowledgeBase(path, semantic=self.options.semantic, name=self.name)
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
