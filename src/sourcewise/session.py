"""``Session``: the one object that owns long-lived resources for the doors that live long.

``async with Session(settings) as s:`` holds the settings, the provider engine (HTTP client seam,
provider suspensions in SQLite) and every source opened through it, and closes them on exit. The
module-level functions in ``api.py`` each run over a short-lived session; the MCP server and the
HTTP API keep one open.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from types import TracebackType

import httpx

from .config import Settings, load_settings
from .engine import Engine
from .sources import Source, resolve_source
from .sources.web import WebSource

__all__ = ["Session"]


class Session:
    """Settings, the web engine and open sources, closed together."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        engine: Engine | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        self.transport = transport
        self.clock = clock
        self._engine: Engine | None = engine
        self._owns_engine = engine is None  # a long-lived door lends its engine; it closes it
        self._sources: dict[str, Source] = {}

    @property
    def engine(self) -> Engine:
        """The provider chain, built on first use and shared by every web source of the session."""
        if self._engine is None:
            self._engine = Engine(self.settings, transport=self.transport, clock=self.clock)
        return self._engine

    def source(self, spec: str | Source) -> Source:
        """The session's source for ``spec`` (opened once, reused)."""
        if isinstance(spec, str) and spec.strip() in self._sources:
            return self._sources[spec.strip()]
        source = resolve_source(spec, self.settings)
        if isinstance(source, WebSource):
            source.engine = self.engine
        return self._sources.setdefault(source.name, source)

    def sources(self, specs: Iterable[str | Source] | str | Source) -> list[Source]:
        if isinstance(specs, str | Source):
            specs = [specs]
        found = {s.name: s for s in (self.source(spec) for spec in specs)}
        return list(found.values())

    async def aclose(self) -> None:
        for source in self._sources.values():
            if not isinstance(source, WebSource):
                await source.aclose()
        self._sources.clear()
        if self._engine is not None and self._owns_engine:
            self._engine.state.close()
        self._engine = None

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
