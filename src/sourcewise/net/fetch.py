"""The page fetcher: guarded connections, redirects, size limit, retries, politeness, cache,
single flight. Seed 000's detailed search with WebFetch, seed 001's direct URL fetch."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from sourcewise.config import Settings
from sourcewise.errors import (
    AddressNotAllowed,
    ChallengePage,
    FetchConnectionError,
    FetchError,
    FetchHTTPError,
    FetchTimeout,
    InvalidURL,
    TooManyRedirects,
)
from sourcewise.net.cache import CachedDocument, PageCache
from sourcewise.net.deadline import Deadline
from sourcewise.net.flight import SingleFlight
from sourcewise.net.guard import AddressGuard, GuardedTransport, Resolver
from sourcewise.net.http import retry_after_seconds
from sourcewise.net.reasons import failure
from sourcewise.net.robots import RobotsGate
from sourcewise.text.extract import extract, is_challenge
from sourcewise.web.urlparse import parse_web_url
from sourcewise.web.urls import canonical_url

__all__ = ["Fetcher"]

log = logging.getLogger("sourcewise")
BACKOFF = 0.5  # seconds before the first retry; doubles; a retry is made only if it fits the deadline


@dataclass
class _Host:
    """One host's politeness: ``gate`` bounds the requests at once (``host_concurrency``), ``turn``
    lets one wait at a time for ``host_interval`` after ``last``, when the one before it started."""

    gate: asyncio.Semaphore
    turn: asyncio.Lock
    last: float = -1e9


@dataclass
class _Raw:
    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    truncated: bool


def request_url(url: str) -> str:
    """The URL to send for ``url``: built from the parse that was validated and keyed, and
    refused when httpx would read it differently (one parser's view end to end)."""
    parts = parse_web_url(url)
    target = parts.request_url()
    try:
        seen = httpx.URL(target)
        same = seen.raw_host.decode("ascii").strip("[]").lower() == parts.host and seen.port == parts.port
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:
        raise InvalidURL(f"Invalid URL {target!r}: the HTTP client cannot read it ({exc})") from exc
    if not same:
        raise InvalidURL(f"Invalid URL {target!r}: the HTTP client reads its host differently")
    return target


class Fetcher:
    """Fetches pages. One per process is enough; ``aclose()`` when done.

    ``transport`` replaces the guarded transport (tests of other parts only); ``resolver``
    replaces DNS for the guard; ``clock`` drives the cache.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        clock: Callable[[], float] = time.time,
        resolver: Resolver | None = None,
        cache: PageCache | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.resolver = resolver
        self.cache = cache or PageCache(settings.state_dir / "pages.sqlite3", settings.cache_ttl)
        self._clients: dict[bool, httpx.AsyncClient] = {}
        self._guards: dict[bool, AddressGuard] = {}
        self.robots = RobotsGate(self.cache, clock, settings.user_agent)
        self._flights: SingleFlight[tuple[str, bool, bool], CachedDocument] = SingleFlight()
        self._hosts: dict[str, _Host] = {}

    def guard(self, allow_private: bool) -> AddressGuard:
        """The address guard for ``allow_private``: one per setting, for the fetcher's life."""
        if allow_private not in self._guards:
            self._guards[allow_private] = AddressGuard(
                allow_private=allow_private, allow_hosts=self.settings.allow_hosts, resolver=self.resolver
            )
        return self._guards[allow_private]

    def client(self, allow_private: bool) -> httpx.AsyncClient:
        """The guarded client for ``allow_private`` (never follows redirects by itself): pages
        and grounding links (``net.redirects``) go through it, no other client reaches web pages."""
        if allow_private not in self._clients:
            guard = self.guard(allow_private)
            self._clients[allow_private] = httpx.AsyncClient(
                transport=GuardedTransport(guard),
                timeout=httpx.Timeout(self.settings.timeout),
                headers={
                    "User-Agent": self.settings.user_agent,
                    "Accept": "text/html,application/xhtml+xml,"
                    "application/pdf,text/plain,application/json;q=0.9,*/*;q=0.5",
                },
                follow_redirects=False,
                trust_env=False,
            )
        return self._clients[allow_private]

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
        self.cache.close()

    async def document(
        self, url: str, *, allow_private: bool = False, use_cache: bool = True, obey_robots: bool = True
    ) -> tuple[CachedDocument, bool]:
        """The extracted document for ``url`` and whether it came from the cache. With
        ``obey_robots`` the site's robots.txt is asked first, cached page or not, and again at
        each redirect: ``RobotsDisallowed`` when it refuses."""
        key = canonical_url(url)
        deadline = Deadline(self.settings.timeout)  # the whole fetch: robots.txt, every hop, retry and wait
        if obey_robots:
            await self._robots_check(url, allow_private, deadline)
        if use_cache:
            cached = self.cache.get(key, self.clock())
            if cached is not None and self._permitted(cached, allow_private):
                return cached, True
        async def fetch() -> CachedDocument:
            doc = await self._download(url, allow_private, obey_robots, deadline)
            if doc.hops:
                self.cache.put([key, canonical_url(doc.url)], doc, self.clock())
            return doc

        return await self._flights.run((key, allow_private, obey_robots), fetch), False

    def _permitted(self, doc: CachedDocument, allow_private: bool) -> bool:
        """A cached page reaches only a caller whose own guard would have let every hop through."""
        guard = self.guard(allow_private)
        try:
            for host, port, addresses in doc.hops:
                guard.check(host, port, addresses)
        except AddressNotAllowed as exc:
            log.info("not serving %s from the cache: %s", doc.url, exc.detail)
            return False
        return True

    async def _robots_check(self, url: str, allow_private: bool, deadline: Deadline) -> None:
        client = self.client(allow_private)
        await self.robots.check(
            url,
            lambda target: self._with_retries(client, request_url(target), deadline),
            private=allow_private,
        )

    async def _download(
        self, url: str, allow_private: bool, obey_robots: bool, deadline: Deadline
    ) -> CachedDocument:
        client = self.client(allow_private)
        guard = self.guard(allow_private)
        current = request_url(url)
        hops: list[tuple[str, int, list[str]]] = []
        for hop in range(self.settings.max_redirects + 1):
            if obey_robots and hop:  # the first hop was checked before the cache
                await self._robots_check(current, allow_private, deadline)
            raw = await self._with_retries(client, current, deadline)
            target = httpx.URL(current)
            port = target.port or (443 if target.scheme == "https" else 80)
            host = target.raw_host.decode("ascii").strip("[]").lower()
            hops.append((host, port, guard.approved.get((host, port), [])))
            if raw.status in (301, 302, 303, 307, 308) and "location" in raw.headers:
                location = urljoin(current, raw.headers["location"])
                try:
                    current = request_url(location)
                except InvalidURL as exc:
                    raise FetchError(
                        current, f"redirected to something that is not a web page: {location!r}"
                    ) from exc
                continue
            doc = self._read(raw)
            # Only a page whose every hop's addresses are known can be re-checked from the cache.
            doc.hops = hops if all(addresses for _, _, addresses in hops) else []
            return doc
        raise TooManyRedirects(url, f"more than {self.settings.max_redirects} redirects")

    def _read(self, raw: _Raw) -> CachedDocument:
        if raw.status >= 400:
            text = raw.body[:20000].decode("utf-8", "replace")
            if raw.status in (403, 429, 503) and is_challenge(text, raw.headers):
                raise ChallengePage(
                    raw.url, f"HTTP {raw.status}: a bot challenge (CAPTCHA) instead of the page"
                )
            raise FetchHTTPError(
                raw.url,
                raw.status,
                f"HTTP {raw.status}",
                retry_after=retry_after_seconds(raw.headers, self.clock()),
            )
        if raw.truncated:
            log.warning("⚠️ %s is larger than %d bytes; read only that much", raw.url, self.settings.max_bytes)
        extracted = extract(raw.body, raw.headers.get("content-type", ""), raw.url, raw.headers)
        return CachedDocument(raw.url, extracted, self.clock(), raw.truncated)

    async def _with_retries(self, client: httpx.AsyncClient, url: str, deadline: Deadline) -> _Raw:
        """GET ``url`` within ``deadline``, retrying transient failures (up to ``fetch_retries``)
        only while a retry after its back-off still fits."""
        delay = BACKOFF
        for attempt in range(self.settings.fetch_retries + 1):
            last = attempt == self.settings.fetch_retries
            try:
                raw = await self._within(client, url, deadline)
            except (FetchTimeout, FetchConnectionError) as exc:
                if last or not exc.transient:  # a host DNS does not know: asking again changes nothing
                    raise
                if not deadline.fits(delay):
                    log.info("%s; %s", exc, deadline.why_not(delay))
                    raise
                log.info("%s; retrying in %.1f s", exc, delay)
                await asyncio.sleep(delay)
                delay *= 2
                continue
            wait = retry_after_seconds(raw.headers, self.clock())
            if raw.status in (429, 503) and (wait or 0) <= self.settings.max_retry_after:
                wait = wait if wait is not None else delay
            elif raw.status in (502, 504):
                wait = delay
            else:
                return raw
            if last or not deadline.fits(wait):
                if not last:
                    log.info("%s: HTTP %d; %s", url, raw.status, deadline.why_not(wait))
                return raw
            await asyncio.sleep(wait)
            delay *= 2
        raise AssertionError("unreachable")

    async def _within(self, client: httpx.AsyncClient, url: str, deadline: Deadline) -> _Raw:
        """One polite GET, held to what is left of ``deadline``."""
        left = deadline.left()
        try:
            async with asyncio.timeout(left):
                return await self._polite(client, url)
        except TimeoutError as exc:
            raise FetchTimeout(url, f"no answer within the {deadline.seconds:g} s deadline") from exc

    async def _polite(self, client: httpx.AsyncClient, url: str) -> _Raw:
        host = httpx.URL(url).raw_host.decode("ascii").lower()
        if host not in self._hosts:
            self._hosts[host] = _Host(asyncio.Semaphore(self.settings.host_concurrency), asyncio.Lock())
        place = self._hosts[host]
        async with place.gate:
            if self.settings.host_interval > 0:
                # One request at a time waits for its turn, and the turn is counted from when the one
                # before it really started: slots reserved ahead let a request that woke late (a busy
                # machine) be followed at once by the next one's slot, 0.05 s apart for 0.3 s asked.
                async with place.turn:
                    wait = place.last + self.settings.host_interval - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    place.last = time.monotonic()
            return await self._get(client, url)

    async def _get(self, client: httpx.AsyncClient, url: str) -> _Raw:
        limit = self.settings.max_bytes
        try:
            async with client.stream("GET", url) as response:
                chunks: list[bytes] = []
                size = 0
                truncated = False
                if not response.is_redirect:
                    async for chunk in response.aiter_bytes():
                        if size + len(chunk) > limit:
                            chunks.append(chunk[: limit - size])
                            truncated = True
                            break
                        chunks.append(chunk)
                        size += len(chunk)
                headers = {k.lower(): v for k, v in response.headers.items()}
                return _Raw(str(response.url), response.status_code, headers, b"".join(chunks), truncated)
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise FetchTimeout(url, f"no answer within {self.settings.timeout:g} s") from exc
        except httpx.TooManyRedirects as exc:  # pragma: no cover - redirects are followed by hand
            raise TooManyRedirects(url, str(exc)) from exc
        except httpx.TransportError as exc:
            raise FetchConnectionError(url, failure(exc)) from exc
