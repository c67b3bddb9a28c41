"""The ``Source`` interface: one kind of place to look, searched in its own syntax.

A source plug-in is a subclass of ``Source`` registered under the ``sourcewise.sources`` entry-point
group (the built-ins are registered the same way). It declares:

- ``type``: the plug-in name used in config and on the command line (``kb``, ``code:PATH`` ...);
- ``kind``: what kind of place it is (``knowledge_base``, ``chat``, ``email``, ``project_tracker``,
  ``code``, ``web``, or a kind of its own);
- ``syntax``: how it writes a plan as queries (a function of ``planning.syntax``, default ``plain``),
  or an override of ``render(plan)``: the source owns its query syntax;
- ``authority``: seed 003's authority class of what it holds, for the per-query-type hierarchies;
- ``Options``: a pydantic model of its options, validated from ``[sources.NAME]`` in the config
  (unknown keys are an error, so a typo is caught);
- ``filters``: the filter keys its syntax understands; anything else in a query is reported back
  as a warning in the ``SourceResult``;
- ``capabilities``: what the orchestrators may ask of it (``Capabilities``), so that they never
  ask what class a source is.

A ``Session`` opens a source once, ``bind``s it to itself (the shared engine, fetcher and
client) and closes it with ``aclose`` at the end of its life. See docs/adding-a-source.md.

``search`` is async, takes one ``SourceQuery`` and returns a ``SourceResult``. It raises a
``SourceError`` subclass when the source cannot answer at all (missing path, corrupt export ...).
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from sourcewise.errors import SourceStillIndexing, SourceUnavailable
from sourcewise.models import Authority, Hit, Plan, SourceInfo, SourceKind, SourceQuery, SourceResult
from sourcewise.planning import syntax as _syntax
from sourcewise.sources.filters import ParsedQuery, parse_query
from sourcewise.sources.workers import Workers

if TYPE_CHECKING:  # types only: loading the settings loads the registry, which loads this
    from sourcewise.config import Settings
    from sourcewise.session import Session

__all__ = ["Capabilities", "Names", "Source", "SourceOptions"]

T = TypeVar("T")

Names = Annotated[list[str], BeforeValidator(lambda v: [v] if isinstance(v, str) else v)]
"""An option naming who may read a source's documents (mail's ``owner``, github's ``readers``):
one name or a list of them, turned into principals by ``access.named``."""


@dataclass(frozen=True)
class Capabilities:
    """What a source can do, for the orchestrators (``ask``, ``retrieve``, the doors)."""

    code: bool = False
    """its hits are source files (a path and lines), so co-change and path globs apply"""
    whole_item: bool = False
    """it can say whether it holds an item (``Source.holds``) and read it whole"""
    history: bool = False
    """it keeps a version history (a git repository at ``options.path``) for co-change"""
    web: bool = False
    """it searches the public web: left out of internal questions, and of refinement cycles
    and variant queries (every query costs a provider request)"""
    documents: bool = False
    """its hits are pages of documents, classed by ``answer/doctype.py`` (meeting notes, status
    update, spec, wiki page, announcement; ``options.classes`` overrides) for the authority
    hierarchies"""


class SourceOptions(BaseModel):
    """Options every source accepts; plug-ins extend this model with their own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path | None = Field(default=None, description="the file, folder or export to read")
    limit: int = Field(default=10, ge=1, le=200, description="hits to return per query by default")
    workers: int = Field(
        default=2,
        ge=1,
        le=32,
        description="threads this source's blocking work (reads, index queries) may use at once; "
        "its calls beyond that wait for one, and a source that hangs holds only these",
    )
    classes: dict[str, Authority] = Field(
        default_factory=dict,
        description="document classes by glob over path or title, overriding answer/doctype.py's rules "
        '(e.g. {"minutes/*": "meeting_notes"})',
    )

    def require_path(self, source: str) -> Path:
        """``path``, expanded, or ``SourceUnavailable`` saying how to set it."""
        if self.path is None:
            raise SourceUnavailable(source, "no path configured: give one as TYPE:PATH or in [sources.NAME]")
        return self.path.expanduser()


class Source(ABC):
    """One configured place to search. Subclasses set the class variables and ``search``."""

    type: ClassVar[str]
    kind: ClassVar[SourceKind]
    authority: ClassVar[Authority]
    filters: ClassVar[frozenset[str]] = frozenset()
    Options: ClassVar[builtins.type[SourceOptions]] = SourceOptions
    syntax: ClassVar[staticmethod[[_syntax.QueryParts], list[dict[str, object]]]] = staticmethod(
        _syntax.plain
    )
    capabilities: ClassVar[Capabilities] = Capabilities()
    #: For an authority class of the plug-in's own: its level (1 = top) in each query type's
    #: hierarchy (``answer.relevance.AUTHORITY``), e.g. ``{"fact": 1, "status": 3}``. A query type
    #: left out, or a class without levels, is off that hierarchy (authority 0.2).
    authority_levels: ClassVar[Mapping[str, int]] = {}

    def __init__(self, name: str, options: SourceOptions, settings: Settings) -> None:
        self.name = name
        self.options = options
        self.settings = settings
        self._session: Session | None = None
        self._workers: Workers | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def bind(self, session: Session | None) -> None:
        """Called by the ``Session`` that opened this source (the shared resources it may use),
        and with ``None`` when that session closes."""
        self._session = session

    @property
    def session(self) -> Session:
        """The session this source belongs to; ``SourceUnavailable`` when it was never opened by one."""
        if self._session is None:
            raise SourceUnavailable(self.name, "not opened by a Session: use Session.source(...)")
        return self._session

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in one of this source's own threads (``options.workers`` at
        most): its blocking I/O runs where the caller's deadline can give up on it, and a read
        that never returns holds this source's threads, never another source's or the server's.
        Every built-in source runs its blocking work here; a plug-in should too."""
        if self._workers is None:
            self._workers = Workers(self.name, self.options.workers)
        return await self._workers.run(fn, *args, **kwargs)

    @classmethod
    def render(cls, plan: Plan) -> list[SourceQuery]:
        """``plan`` as queries in this source's own syntax, the keyword query first."""
        from sourcewise.planning.planner import render

        return render(plan, cls.kind, cls.syntax)

    def query_for(self, plan: Plan) -> list[SourceQuery]:
        """The queries this source runs for ``plan`` (``render``; a source may adapt them)."""
        return self.render(plan)

    def holds(self, path: str) -> bool:
        """Whether this source holds the item at ``path`` (``capabilities.whole_item``)."""
        return False

    def parse(self, query: SourceQuery) -> tuple[ParsedQuery, list[str]]:
        """The query in this source's syntax, and a warning for each filter it cannot honour."""
        parsed = parse_query(query.query)
        warnings = [
            f"{self.name}: filter {f!r} is not supported by {self.type} sources; ignored"
            for f in parsed.unsupported(self.filters)
        ]
        return parsed, warnings

    def result(self, query: SourceQuery, hits: list, warnings: list[str]) -> SourceResult:  # type: ignore[type-arg]
        return SourceResult(
            source=self.name, kind=self.kind, query=query.query, hits=tuple(hits), warnings=tuple(warnings)
        )

    @abstractmethod
    async def search(self, query: SourceQuery, *, limit: int | None = None) -> SourceResult:
        """Run ``query`` (in this source's syntax); at most ``limit`` hits, best first."""

    async def info(self) -> SourceInfo:
        """What ``sourcewise sources`` shows; override to add size and freshness."""
        path = self.options.path
        return SourceInfo(
            name=self.name,
            type=self.type,
            kind=self.kind,
            location=str(path) if path else None,
            ready=path is None or path.expanduser().exists(),
            detail="" if path is None or path.expanduser().exists() else "path does not exist",
        )

    def pending(self) -> str | None:
        """What the source is still doing when a search times out (a first index: "still indexing,
        N of M files"), so that the report says so instead of a bare time-out; ``None``: nothing."""
        return None

    def still_indexing(self, deadline: float) -> SourceStillIndexing | None:
        """What a search that did not answer within ``deadline`` seconds says when the source is
        still building its first index (``pending``), else ``None``: the one place ``ask``,
        ``retrieve`` and ``search_sources`` decide a time-out is "still indexing", not "nothing"."""
        busy = self.pending()
        if busy is None:
            return None
        return SourceStillIndexing(self.name, f"no answer within the {deadline:g} s deadline: {busy}")

    def warm(self) -> None:  # noqa: B027 (optional hook; most sources have nothing slow to load)
        """Start loading, in the background, what a search will need (a lasting session's start)."""

    async def read(
        self, hits: Sequence[Hit], question: str, depth: int, seconds: float
    ) -> tuple[list[Hit], int, list[str]]:
        """``ask``'s fetch depth (its ``effort``): the first ``depth`` hits read in full within
        ``seconds``, each hit's text then the passages that best answer ``question``; the hits,
        how many were read and a note per page that was not. Most sources' hits are whole already:
        they come back as they are (the web reads its result pages)."""
        return list(hits), 0, []

    async def aclose(self) -> None:  # noqa: B027 (optional hook; most sources hold nothing)
        """Release what the source holds (database handles, clients). Safe to call twice."""

    def close_workers(self) -> None:
        """End this source's idle threads (the ``Session`` calls it after ``aclose``)."""
        workers, self._workers = self._workers, None
        if workers is not None:
            workers.close()
