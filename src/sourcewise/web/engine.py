"""Orchestration: the provider fallback chain, suspensions, and the three search strategies."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, TypeVar

import httpx

from sourcewise._sync import run_sync
from sourcewise.config import Settings
from sourcewise.errors import (
    InvalidOption,
    NoNetwork,
    NoProviderAvailable,
    ParseError,
    ProviderError,
    SourcewiseError,
    TransientError,
)
from sourcewise.models import ProviderStatus, RawResult, SearchResponse, SearchResult
from sourcewise.net.deadline import Deadline
from sourcewise.net.http import make_client, send
from sourcewise.net.mcp import Connections
from sourcewise.net.reasons import brief
from sourcewise.net.redirects import RedirectCache
from sourcewise.net.state import MAX_SUSPENSION, OWN_BASE, OWN_MAX, ProviderState
from sourcewise.planning.validate import (
    validate_max_results,
    validate_query,
    validate_strategy,
    validate_tier,
)
from sourcewise.registry import provider_options
from sourcewise.web.domains import table_for
from sourcewise.web.providers import HttpResponse, Provider, load_providers
from sourcewise.web.providers.base import ProviderCall, ProviderOutput
from sourcewise.web.rank import dedup, merge_results, pick_per_tier, rank, widen_by_tier
from sourcewise.web.tiers import SourceTable

if TYPE_CHECKING:
    from sourcewise.net.fetch import Fetcher

__all__ = ["Engine", "WebAnswer", "run_sync"]

log = logging.getLogger("sourcewise")
T = TypeVar("T")
RETRY_DELAY = 1.0  # seconds before the one retry of a transient failure, if it fits the deadline
EXAMPLE_TERMS = "example tutorial"


@dataclass
class WebAnswer:
    raw: list[RawResult]
    provider: str
    attempts: list[tuple[str, str]] = field(default_factory=list)
    text: str | None = None  # a grounded provider's cited answer


def _parsed(provider: Provider, response: HttpResponse) -> list[RawResult]:
    """``provider.parse``; anything but a typed error from it means the answer was garbage."""
    try:
        return provider.parse(response)
    except SourcewiseError:
        raise
    except Exception as exc:  # a plug-in's parser tripping over a wrong shape must not stop the chain
        raise ParseError(provider.name, f"the answer has an unexpected shape ({type(exc).__name__})") from exc


class Engine:
    """Runs searches over the provider chain: settings, providers, suspensions, a clock, a client.

    A ``Session`` builds the one engine of its life over its own client, provider state and
    redirect cache and fetcher (``session.engine``). Built alone (tests, benchmarks), the engine
    makes its own client on first use from ``transport`` (the seam tests use,
    ``httpx.MockTransport``), and its own fetcher and redirect cache when a provider resolves
    grounding links, and keeps them until ``aclose()``; ``state`` defaults to the SQLite file
    in ``settings.state_dir``.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
        state: ProviderState | None = None,
        providers: dict[str, Provider] | None = None,
        options: Mapping[str, object] | None = None,
        links: Callable[[], tuple[Fetcher, RedirectCache]] | None = None,
    ) -> None:
        self.settings = settings
        self.transport = transport
        self.clock = clock
        self.state = state or ProviderState(self.settings.state_dir / "state.sqlite3")
        self.providers = providers or load_providers()
        # the providers' validated [providers.NAME] options: a session's registry passes its own
        self.options = dict(options) if options is not None else provider_options(self.providers, settings)
        self._links = links
        self._own_links: tuple[Fetcher, RedirectCache] | None = None
        self.connections = Connections(settings)  # MCP servers a provider calls, kept until aclose()
        self.table: SourceTable = table_for(self.settings.official, self.settings.tiers)
        self._client = client
        self._owns = (client is None, state is None)  # what it made itself, it closes

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = make_client(self.settings, self.transport)
        return self._client

    def links(self) -> tuple[Fetcher, RedirectCache]:
        """The fetcher (its guarded client) and redirect cache grounding links are resolved
        with: the session's (``links``), or, built alone, the engine's own, made on first use."""
        if self._links is not None:
            return self._links()
        if self._own_links is None:
            from sourcewise.net.fetch import Fetcher  # here: only a provider that resolves links needs it

            fetcher = Fetcher(self.settings, clock=self.clock)
            self._own_links = fetcher, RedirectCache(self.settings.state_dir / "redirects.sqlite3")
        return self._own_links

    async def aclose(self) -> None:
        """Close what the engine made itself (a session closes what it lent)."""
        owns_client, owns_state = self._owns
        await self.connections.aclose()
        if self._own_links is not None:
            fetcher, redirects = self._own_links
            await fetcher.aclose()
            redirects.close()
            self._own_links = None
        if owns_client and self._client is not None:
            await self._client.aclose()
            self._client = None
        if owns_state:
            self.state.close()

    def _config(self, name: str) -> object:
        """What a provider's ``configured``/``build`` read: its own validated options when it
        declares a model, else the settings."""
        return self.options.get(name, self.settings)

    # -- the chain ---------------------------------------------------------------------------
    def chain(self, names: Sequence[str] | None = None) -> list[str]:
        if isinstance(names, str):
            raise InvalidOption(f"providers must be a list of names, e.g. [{names!r}], not a string")
        if names is not None and (
            not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names)
        ):
            raise InvalidOption(f"providers must be a list of provider names, got {names!r}")
        names = [n.strip().lower() for n in names or self.settings.providers]
        unknown = [n for n in names if n not in self.providers]
        if unknown:
            raise InvalidOption(
                f"unknown provider(s) {', '.join(unknown)}; known: {', '.join(sorted(self.providers))}"
            )
        return names

    def status(self) -> list[ProviderStatus]:
        """Every installed provider: configured or not, suspended or not, in the chain or not."""
        now = self.clock()
        chain = self.settings.providers
        order = list(chain) + sorted(set(self.providers) - set(chain))
        out = []
        for name in order:
            if name not in self.providers:
                continue
            ready, detail = self.providers[name].configured(self._config(name))
            hold = self.state.suspended(name, now)
            out.append(
                ProviderStatus(
                    name=name,
                    configured=ready,
                    detail=detail,
                    suspended_until=datetime.fromtimestamp(hold.until, UTC) if hold else None,
                    suspended_reason=hold.reason if hold else None,
                    in_chain=name in chain,
                )
            )
        return out

    def reset(self, name: str | None = None) -> int:
        """Lift the suspension of provider ``name`` (of all when ``None``); how many were lifted."""
        if name is not None and name.lower() not in self.providers:
            raise InvalidOption(f"unknown provider {name!r}; known: {', '.join(sorted(self.providers))}")
        return self.state.clear(name.lower() if name else None, everywhere=True)

    async def web(
        self,
        query: str,
        max_results: int,
        names: Sequence[str] | None = None,
        deadline: Deadline | None = None,
    ) -> WebAnswer:
        """Ask each provider in the chain in turn; the first that answers wins (even with []).

        The chain shares one deadline (``settings.timeout`` unless the caller's): a provider
        reached after it has passed is reported as skipped, not asked."""
        deadline = deadline or Deadline(self.settings.timeout)
        attempts: list[tuple[str, str]] = []
        client = self.client
        offline = False
        for name in self.chain(names):
            provider = self.providers[name]
            ready, detail = provider.configured(self._config(name))
            if not ready:
                attempts.append((name, f"not configured ({detail})"))
                continue
            if offline and not provider.self_hosted:
                attempts.append((name, "skipped: no network"))
                continue
            hold = self.state.suspended(name, self.clock())
            if hold:
                left = hold.until - self.clock()
                attempts.append((name, f"suspended for {left:.0f} s more after: {hold.reason}"))
                continue
            if deadline.passed():
                attempts.append((name, f"not asked: the search's {deadline.seconds:g} s deadline has passed"))
                continue
            try:
                out = await self._ask(client, provider, query, max_results, deadline)
            except ProviderError as exc:
                offline = offline or isinstance(exc, NoNetwork)
                attempts.append((name, self._handle(exc)))
                continue
            self.state.clear(name)
            return WebAnswer(out.results, name, attempts, out.answer)
        raise NoProviderAvailable(attempts, offline=offline)

    async def _ask(
        self, client: httpx.AsyncClient, provider: Provider, query: str, max_results: int, deadline: Deadline
    ) -> ProviderOutput:
        """One provider call within ``deadline``: every try gets what is left, and the one retry of
        a transient failure happens only if it fits (``Deadline.fits``)."""
        limit = min(max_results, provider.max_per_request)
        for attempt in (1, 2):
            try:
                return await self._try(client, provider, query, limit, deadline.left())
            except TransientError as exc:
                delay = exc.retry_after or RETRY_DELAY
                if attempt == 2:
                    raise
                if not deadline.fits(delay):
                    log.info("%s; %s", exc, deadline.why_not(delay))
                    raise
                log.info("%s; retrying once in %.1f s", exc, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _try(
        self, client: httpx.AsyncClient, provider: Provider, query: str, limit: int, seconds: float
    ) -> ProviderOutput:
        """One try, held to ``seconds`` whatever the provider does inside."""
        seconds = round(seconds, 2)  # what is left, as messages say it ("within 0.5 s")
        begun = time.monotonic()  # the try's clock starts here: work a provider does after its answer counts
        try:
            async with asyncio.timeout(seconds):
                if provider.run is not None:
                    fetcher, redirects = self.links()
                    call = ProviderCall(
                        query, limit, self.settings, client, seconds, self.clock,
                        options=self.options.get(provider.name), redirects=redirects, fetcher=fetcher,
                        connections=self.connections, started=begun,
                    )  # fmt: skip
                    return await provider.run(call)
                request = provider.build(query, limit, self._config(provider.name))
                response = await send(
                    client, request, provider.name, seconds, self.clock(), max_bytes=self.settings.max_bytes
                )
                return ProviderOutput(_parsed(provider, response))
        except TimeoutError as exc:
            raise TransientError(provider.name, f"no answer within {seconds:g} s") from exc

    def _handle(self, exc: ProviderError) -> str:
        said = brief(exc.detail)  # a provider's own words, short and whole, in the log and the reason
        if exc.policy == "suspend":
            own = exc.provider in self.providers and self.providers[exc.provider].self_hosted
            base = min(self.settings.suspend_seconds, OWN_BASE) if own else self.settings.suspend_seconds
            hold = self.state.suspend(
                exc.provider,
                self.clock(),
                said,
                base,
                exc.retry_after,
                cap=OWN_MAX if own else MAX_SUSPENSION,
            )
            wait = hold.until - self.clock()
            log.warning("%s: %s; suspended for %.0f s", exc.provider, said, wait)
            return f"{exc.kind}: {said} (suspended for {wait:.0f} s)"
        if exc.kind in ("quota exceeded", "auth failed"):
            log.warning("%s: %s; moving on to the next provider", exc.provider, said)
        else:
            log.info("%s: %s; moving on to the next provider", exc.provider, said)
        return f"{exc.kind}: {said}"

    # -- searches ----------------------------------------------------------------------------
    async def asearch(
        self,
        query: str,
        *,
        tier: int | None = None,
        max_results: int | None = None,
        strategy: str = "default",
        providers: Sequence[str] | None = None,
    ) -> SearchResponse:
        text = validate_query(query)
        wanted_tier = validate_tier(tier)
        limit, warning = validate_max_results(
            self.settings.max_results if max_results is None else max_results
        )
        strategy = validate_strategy(strategy)
        self.chain(providers)
        warnings = [warning] if warning else []
        if warning:
            log.warning(warning)
        deadline = Deadline(self.settings.timeout)  # the whole search, every provider and retry
        if strategy == "progressive":
            results, answer = await self._progressive(text, providers, warnings, deadline)
        else:
            wide = max(20, limit * 2) if (wanted_tier or strategy != "default") else limit
            answer = await self.web(text, wide, providers, deadline)
            results = self._merge(answer.raw, text)
            if strategy == "official":
                results = widen_by_tier(
                    results, [(frozenset({1}), 3), (frozenset({2}), 5), (frozenset({3, 4}), 0)]
                )
            elif strategy == "comprehensive":
                results = pick_per_tier(results, per_tier=3, limit=min(10, limit))
        if wanted_tier is not None:
            results = [r for r in results if r.tier == wanted_tier]
        results = results[:limit]
        if not results:
            note = f"No results found for query: {text!r}"
            if wanted_tier is not None:
                note += f" at tier {wanted_tier} (try without --tier)"
            log.warning(note)
            warnings.append(note)
        return SearchResponse(
            query=text,
            strategy=strategy,  # type: ignore[arg-type]
            results=tuple(results),
            provider=answer.provider,
            attempts=tuple(answer.attempts),
            warnings=tuple(warnings),
            answer=answer.text,
        )

    def _merge(self, raw: Sequence[RawResult], query: str) -> list[SearchResult]:
        merged, dropped = merge_results(raw, query, self.table)
        for note in dropped:
            log.warning(note)
        return merged

    async def _progressive(
        self, query: str, providers: Sequence[str] | None, warnings: list[str], deadline: Deadline
    ) -> tuple[list[SearchResult], WebAnswer]:
        """Seed 000 pattern 3: tiers 1-2 first (5), then tier 3 with example terms (10), merged;
        both rounds within the search's one deadline."""
        first = await self.web(query, 20, providers, deadline)
        start = [r for r in self._merge(first.raw, query) if r.tier <= 2][:5]
        try:
            more = await self.web(f"{query} {EXAMPLE_TERMS}", 20, providers, deadline)
        except NoProviderAvailable as exc:
            warnings.append(f"the follow-up search failed, showing the first round only: {exc}")
            return start, first
        follow = [r for r in self._merge(more.raw, query) if r.tier <= 3][:10]
        return rank(dedup([*start, *follow])), first
