"""The ``Source`` interface: one kind of place to look, searched in its own syntax.

A source plug-in is a subclass of ``Source`` registered under the ``sourcewise.sources`` entry-point
group (the built-ins are registered the same way). It declares:

- ``type``: the plug-in name used in config and on the command line (``kb``, ``code:PATH`` ...);
- ``kind``: which of the planner's syntaxes it reads (``knowledge_base``, ``chat``, ``email``,
  ``project_tracker``, ``code``, ``web``), so ``query_for(plan)`` hands it the right sub-query;
- ``authority``: seed 003's authority class of what it holds, for the per-query-type hierarchies;
- ``Options``: a pydantic model of its options, validated from ``[sources.NAME]`` in the config
  (unknown keys are an error, so a typo is caught);
- ``filters``: the filter keys its syntax understands; anything else in a query is reported back
  as a warning in the ``SourceResult``.

``search`` is async, takes one ``SourceQuery`` and returns a ``SourceResult``. It raises a
``SourceError`` subclass when the source cannot answer at all (missing path, corrupt export ...).
"""

from __future__ import annotations

import builtins
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..config import Settings
from ..core.filters import ParsedQuery, parse_query
from ..errors import SourceUnavailable
from ..models import Authority, Plan, SourceInfo, SourceKind, SourceQuery, SourceResult

__all__ = ["Source", "SourceOptions"]


class SourceOptions(BaseModel):
    """Options every source accepts; plug-ins extend this model with their own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path | None = Field(default=None, description="the file, folder or export to read")
    limit: int = Field(default=10, ge=1, le=200, description="hits to return per query by default")
    classes: dict[str, Authority] = Field(
        default_factory=dict,
        description="document classes by glob over path or title, overriding core/doctype.py's rules "
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

    def __init__(self, name: str, options: SourceOptions, settings: Settings) -> None:
        self.name = name
        self.options = options
        self.settings = settings

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def query_for(self, plan: Plan) -> list[SourceQuery]:
        """The planner's sub-queries for this source's kind (keyword first), or the plain keywords."""
        mine = [q for q in plan.sources if q.source == self.kind]
        if mine:
            return sorted(mine, key=lambda q: q.mode != "keyword")
        words = " ".join([*(f'"{p}"' for p in plan.phrases), *plan.keywords]) or plan.question
        return [SourceQuery(source=self.kind, mode="keyword", query=words)]

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

    async def aclose(self) -> None:  # noqa: B027 (optional hook; most sources hold nothing)
        """Release what the source holds (database handles, clients). Safe to call twice."""
