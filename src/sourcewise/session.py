"""``Session``: the one owner of every long-lived resource.

``async with Session(settings) as s:`` holds, for its whole life:

- the settings, resolved once at the edge (a door, a CLI command, the caller) and passed down;
- the plug-in registry (providers and sources, ``registry.py``);
- one HTTP client for provider and model APIs, whose ``transport`` is the one seam tests use;
- the page fetcher with its guarded clients and its page cache, and the redirect cache;
- the provider state (suspensions), in SQLite or, with ``redis_url`` set, in Redis;
- every source opened through it: knowledge bases and code indexes stay open until ``aclose()``.

Everything is built on first use, so a session that only rates URLs opens nothing. The module
functions (``sourcewise.ask`` ...) open a short-lived session when not given ``session=``; a door
process holds one per worker (``lasting=True``: it warms what is slow to load); each CLI command
holds one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING

from sourcewise.config import Settings, load_settings
from sourcewise.registry import Registry

if TYPE_CHECKING:
    import httpx

    from sourcewise.net.cache import PageCache
    from sourcewise.net.fetch import Fetcher
    from sourcewise.net.guard import Resolver
    from sourcewise.net.redirects import RedirectCache
    from sourcewise.net.state import ProviderState
    from sourcewise.sources.base import Source
    from sourcewise.web.engine import Engine
    from sourcewise.web.tiers import SourceTable

__all__ = ["Session"]


class Session:
    """Settings, the registry, the HTTP client, the fetcher, the stores and open sources."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        resolver: Resolver | None = None,
        registry: Registry | None = None,
        lasting: bool = False,
    ) -> None:
        # The edge: settings not given are read here, once, for everything the session does.
        self.settings = load_settings() if settings is None else settings
        # A door's session serves many calls: what is slow to load once (the semantic model) pays
        # off there, not in a one-shot command (``kb_mode = "auto"``).
        self.lasting = lasting
        self.registry = registry or Registry.load(self.settings)
        self.transport = transport
        self.clock = clock
        self.resolver = resolver
        self._client: httpx.AsyncClient | None = None
        self._engine: Engine | None = None
        self._fetcher: Fetcher | None = None
        self._state: ProviderState | None = None
        self._cache: PageCache | None = None
        self._redirects: RedirectCache | None = None
        self._sources: dict[str, Source] = {}

    # -- resources, each built on first use ----------------------------------------------------
    @property
    def store(self) -> str:
        """Where the page cache and suspensions live: ``redis`` or ``sqlite``."""
        return "redis" if self.settings.redis_url else "sqlite"

    def _redis(self) -> str | None:
        url = self.settings.redis_url
        return url.get_secret_value() if url else None

    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client for provider and model APIs (``transport`` replaces the network)."""
        if self._client is None:
            from sourcewise.net.http import make_client

            self._client = make_client(self.settings, self.transport)
        return self._client

    @property
    def state(self) -> ProviderState:
        """Provider suspensions, shared with every worker through the same file or Redis."""
        if self._state is None:
            url = self._redis()
            if url:
                from sourcewise.net.redis_store import RedisProviderState

                self._state = RedisProviderState(url, self.settings.state_dir / "state.sqlite3")
            else:
                from sourcewise.net.state import ProviderState

                self._state = ProviderState(self.settings.state_dir / "state.sqlite3")
        return self._state

    @property
    def page_cache(self) -> PageCache:
        if self._cache is None:
            url = self._redis()
            if url:
                from sourcewise.net.redis_store import RedisPageCache

                self._cache = RedisPageCache(url, self.settings.cache_ttl)
            else:
                from sourcewise.net.cache import PageCache

                self._cache = PageCache(self.settings.state_dir / "pages.sqlite3", self.settings.cache_ttl)
        return self._cache

    @property
    def redirects(self) -> RedirectCache:
        """Resolved grounding links (Gemini's redirect URLs), kept between searches."""
        if self._redirects is None:
            from sourcewise.net.redirects import RedirectCache

            self._redirects = RedirectCache(self.settings.state_dir / "redirects.sqlite3")
        return self._redirects

    @property
    def engine(self) -> Engine:
        """The provider chain over the session's client, state and providers."""
        if self._engine is None:
            from sourcewise.web.engine import Engine

            self._engine = Engine(
                self.settings,
                client=self.client,
                clock=self.clock,
                state=self.state,
                providers=self.registry.providers,
                options=self.registry.provider_options,
                links=lambda: (self.fetcher, self.redirects),  # opened only when a provider resolves links
            )
        return self._engine

    @property
    def fetcher(self) -> Fetcher:
        """The guarded page fetcher over the session's page cache (one flight per URL)."""
        if self._fetcher is None:
            from sourcewise.net.fetch import Fetcher

            self._fetcher = Fetcher(
                self.settings, clock=self.clock, resolver=self.resolver, cache=self.page_cache
            )
        return self._fetcher

    @property
    def table(self) -> SourceTable:
        """The tier table: the built-in one extended by ``official`` and ``tiers``."""
        from sourcewise.web.domains import table_for

        return table_for(self.settings.official, self.settings.tiers)

    # -- sources -------------------------------------------------------------------------------
    def source(self, spec: str | Source) -> Source:
        """The session's source for ``spec``: opened once, kept open, reused by every call."""
        from sourcewise.sources.base import Source

        if isinstance(spec, str) and spec.strip() in self._sources:
            return self._sources[spec.strip()]
        source = spec if isinstance(spec, Source) else self.registry.source(spec, self.settings)
        kept = self._sources.setdefault(source.name, source)
        kept.bind(self)
        return kept

    def sources(self, specs: Iterable[str | Source] | str | Source) -> list[Source]:
        from sourcewise.sources.base import Source

        if isinstance(specs, str | Source):
            specs = [specs]
        found = {s.name: s for s in (self.source(spec) for spec in specs)}
        return list(found.values())

    # -- life ------------------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close every source, the fetcher, the client and the stores. Safe to call twice."""
        sources, self._sources = list(self._sources.values()), {}
        for source in sources:
            await source.aclose()
            source.close_workers()
            source.bind(None)
        if self._fetcher is not None:
            await self._fetcher.aclose()  # closes the page cache too
            self._cache = None
        if self._cache is not None:
            self._cache.close()
        if self._client is not None:
            await self._client.aclose()
        for store in (self._state, self._redirects):
            if store is not None:
                store.close()
        self._client = self._engine = self._fetcher = self._state = self._cache = self._redirects = None

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
