"""What the doors serve: one long-lived ``Service`` per process, one async method per capability.

The MCP server (``mcp_server.py``) and the HTTP API (``server.py``) are thin: each tool or
endpoint validates its arguments, calls one method here and renders the result. Long-lived
resources (the provider state, the page fetcher and its cache) live here so that concurrent
requests share them, and so that several worker processes share them through the state files
(SQLite) or Redis (``SOURCEWISE_REDIS_URL``).

Adding a capability (``search``, ``ask``, ``retrieve`` as they land): one method on ``Service``
in the section marked below, then one tool in ``mcp_server.py`` and one endpoint in ``server.py``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from ._version import __version__
from .ask import aask
from .config import Settings
from .core.urls import canonical_url
from .core.validate import validate_query
from .engine import Engine
from .errors import (
    AddressNotAllowed,
    ConfigError,
    FetchError,
    FetchTimeout,
    IndexVersionError,
    InvalidInput,
    InvalidOption,
    ModelError,
    NoProviderAvailable,
    ProviderError,
    SourceError,
    SourceRateLimited,
    SourceUnavailable,
    SourcewiseError,
)
from .models import Answer, Page, Retrieval, Route, SearchResponse, SourceReport, SourceResult, _Model
from .net.cache import PageCache
from .net.fetch import Fetcher
from .net.state import ProviderState
from .pages import build_page
from .retrieve import aretrieve
from .routing import route as _route
from .session import Session
from .sources_api import asearch_sources

__all__ = ["DOOR_MAX_CHARS", "DoorSettings", "Failure", "Health", "Progress", "Service", "classify"]

log = logging.getLogger("sourcewise")
DOOR_MAX_CHARS = 100_000  # the largest page slice one call may ask for
Progress = Callable[[float, float, str], Awaitable[None]]


async def _no_progress(_done: float, _total: float, _message: str) -> None:
    return None


class DoorSettings(BaseSettings):
    """Knobs of the doors only (not of the library), from ``SOURCEWISE_*`` environment variables
    or the ``sourcewise serve`` / ``sourcewise mcp --http`` options."""

    model_config = SettingsConfigDict(env_prefix="SOURCEWISE_", extra="ignore", frozen=True)

    api_key: SecretStr | None = Field(
        default=None, description="clients must send it (Authorization: Bearer KEY or X-API-Key)"
    )
    rate_limit: float = Field(default=120.0, ge=0, description="requests per minute per client; 0: none")
    rate_burst: int = Field(default=30, ge=1, description="requests a client may send at once")
    max_body_bytes: int = Field(default=65_536, ge=1024, description="largest request body accepted")
    request_timeout: float = Field(default=60.0, gt=0, le=600, description="seconds one request may take")
    redis_url: SecretStr | None = Field(
        default=None, description="redis://host:port/db: page cache and suspensions in Redis, not SQLite"
    )


class Health(_Model):
    """What ``/health`` says: up, the version, and which providers could answer now."""

    status: str = "ok"
    version: str = __version__
    providers_ready: list[str] = Field(default_factory=list)
    providers_suspended: list[str] = Field(default_factory=list)
    store: str = Field(description="where the page cache and suspensions live: sqlite or redis")
    worker: int = Field(default_factory=os.getpid, description="the process id of the worker that answered")


@dataclass(frozen=True)
class Failure:
    """A library error as a door reports it: an HTTP status, the error's type and message."""

    status: int
    kind: str
    message: str
    extra: dict[str, Any] = field(default_factory=dict)


def classify(exc: SourcewiseError) -> Failure:
    """The status and typed reason for ``exc``. Messages never hold a key or a stack trace."""
    kind, message = type(exc).__name__, str(exc)
    if isinstance(exc, InvalidInput):
        return Failure(400, kind, message)
    if isinstance(exc, NoProviderAvailable):
        tried = [{"provider": name, "reason": why} for name, why in exc.attempts]
        return Failure(503, kind, message, {"attempts": tried})
    if isinstance(exc, ProviderError):
        return Failure(502, kind, message, {"provider": exc.provider})
    if isinstance(exc, AddressNotAllowed):
        return Failure(403, kind, message)
    if isinstance(exc, FetchTimeout):
        return Failure(504, kind, message)
    if isinstance(exc, FetchError):
        status = getattr(exc, "status", None)
        return Failure(502, kind, message, {"upstream_status": status} if status else {})
    if isinstance(exc, ConfigError):
        return Failure(503, kind, f"the server's configuration is invalid: {message}")
    if isinstance(exc, SourceRateLimited):
        return Failure(429, kind, message, {"source": exc.source, "retry_after": exc.retry_after})
    if isinstance(exc, SourceUnavailable | IndexVersionError):
        return Failure(503, kind, message, {"source": exc.source})
    if isinstance(exc, SourceError | ModelError):
        return Failure(502, kind, message)
    return Failure(500, kind, message)


def open_stores(settings: Settings, redis_url: str | None) -> tuple[PageCache, ProviderState, str]:
    """The page cache and provider state: Redis when configured, else the SQLite files."""
    if redis_url:
        from .net.redis_store import RedisPageCache, RedisProviderState

        return RedisPageCache(redis_url, settings.cache_ttl), RedisProviderState(redis_url), "redis"
    cache = PageCache(settings.state_dir / "pages.sqlite3", settings.cache_ttl)
    return cache, ProviderState(settings.state_dir / "state.sqlite3"), "sqlite"


class Service:
    """The library's capabilities over long-lived resources. ``aclose()`` when done."""

    def __init__(self, settings: Settings, doors: DoorSettings | None = None) -> None:
        self.settings = settings
        self.doors = doors or DoorSettings()
        url = self.doors.redis_url.get_secret_value() if self.doors.redis_url else None
        cache, self.state, self.store = open_stores(settings, url)
        self.engine = Engine(settings, state=self.state)
        self.fetcher = Fetcher(settings, cache=cache)

    async def aclose(self) -> None:
        await self.fetcher.aclose()
        self.state.close()

    def health(self) -> Health:
        rows = self.engine.status()
        return Health(
            providers_ready=[r.name for r in rows if r.in_chain and r.configured and not r.suspended_until],
            providers_suspended=[r.name for r in rows if r.suspended_until],
            store=self.store,
        )

    async def web_search(
        self,
        query: str,
        *,
        tier: int | None = None,
        max_results: int | None = None,
        strategy: str = "default",
        progress: Progress = _no_progress,
    ) -> SearchResponse:
        """The provider chain; results rated, de-duplicated and ranked (``sourcewise.asearch``)."""
        await progress(0, 1, f"searching the web for {validate_query(query)!r}")
        response = await self.engine.asearch(query, tier=tier, max_results=max_results, strategy=strategy)
        await progress(1, 1, f"{len(response.results)} results from {response.provider}")
        return response

    async def web_fetch(
        self,
        url: str,
        *,
        prompt: str | None = None,
        start: int = 0,
        max_chars: int | None = None,
        progress: Progress = _no_progress,
    ) -> Page:
        """One slice of a page. The operator's ``allow_private`` decides the address guard, never
        the caller; the next slice of a page read within ``cache_ttl`` comes from the cache."""
        canonical_url(url)
        size = self.settings.max_chars if max_chars is None else max_chars
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise InvalidOption(f"start must be 0 or more, got {start!r}")
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= DOOR_MAX_CHARS:
            raise InvalidOption(f"max_chars must be from 1 to {DOOR_MAX_CHARS}, got {max_chars!r}")
        await progress(0, 2, "fetching the page")
        doc, cached = await self.fetcher.document(url, allow_private=self.settings.allow_private)
        await progress(1, 2, "read from the cache" if cached else "fetched and extracted")
        page = build_page(
            doc, url, prompt=prompt, start=start, max_chars=size, from_cache=cached, settings=self.settings
        )
        await progress(2, 2, f"{page.total_chars} characters")
        return page

    async def route(self, question: str) -> Route:
        """Search the web, fetch the URLs in the question, or skip it (seed 001)."""
        return _route(question, settings=self.settings)

    # -- private sources, ask and retrieve -------------------------------------------------------
    def door_sources(self, sources: Sequence[str] | None) -> list[str] | None:
        """Only configured names, ``kb`` and ``web`` cross a network door: a spec such as
        ``code:/etc`` would let a remote caller read the server's files."""
        if sources is None:
            return None
        allowed = {*self.settings.sources, "kb", "web"}
        bad = [s for s in sources if s not in allowed]
        if bad:
            raise InvalidOption(
                f"unknown source(s) {', '.join(map(repr, bad[:5]))}: over this door only configured "
                f"names are accepted ({', '.join(sorted(allowed))})"
            )
        return list(sources)

    async def search_sources(
        self, query: str, sources: Sequence[str], *, limit: int = 10
    ) -> list[SourceResult]:
        """Search private sources with a query in their own syntax (``sourcewise.search_sources``)."""
        chosen = self.door_sources(sources) or ["kb"]
        return await asearch_sources(query, chosen, limit=limit, settings=self.settings)

    async def ask(
        self, question: str, *, sources: Sequence[str] | None = None, progress: Progress = _no_progress
    ) -> Answer:
        """One question across every source, cited (``sourcewise.aask``)."""
        chosen = self.door_sources(sources)
        done = 0

        async def report(item: SourceReport | str) -> None:
            nonlocal done
            done += 1
            text = (
                f"{item.source}: {item.status} ({item.hits} results)"
                if isinstance(item, SourceReport)
                else item
            )
            await progress(done, done + 1, text)

        async with Session(self.settings, engine=self.engine) as session:
            return await aask(question, sources=chosen, session=session, progress=report)

    async def retrieve(
        self, task: str, *, sources: Sequence[str], max_cycles: int = 3, progress: Progress = _no_progress
    ) -> Retrieval:
        """Iterative retrieval over private sources (``sourcewise.aretrieve``)."""
        chosen = self.door_sources(sources) or ["kb"]
        await progress(0, max_cycles, f"retrieving for {task[:80]!r}")
        async with Session(self.settings) as session:
            result = await aretrieve(task, sources=chosen, max_cycles=max_cycles, session=session)
        await progress(max_cycles, max_cycles, f"{len(result.candidates)} candidates")
        return result
