"""The fetcher's robots.txt gate (RFC 9309 section 2.3): each origin's robots.txt is fetched once
(concurrent checks share one request), kept in the page cache for its time to live, and asked
before every page request the fetcher makes for an agent.

What an answer means: 2xx, the rules in the body; 4xx (not 429), no rules, everything allowed;
5xx or 429, everything disallowed until it answers (``RobotsDisallowed``, cached like an answer).
No answer at all (a timeout, a refused connection, a name that does not resolve) is disallowed
too, but says so with its own cause: that ``FetchTimeout`` or ``FetchConnectionError`` (about the
robots.txt URL) is raised and the page is not requested; it is not cached, as a page that could
not be fetched is not. Redirects are followed up to ``ROBOTS_REDIRECTS`` hops; past that, or to
something that is not a web URL, the file counts as unavailable (allowed), as the RFC permits;
so does any other answer (a 3xx without a target, 1xx).
An address the caller's guard refuses is likewise that error, not a robots verdict.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol
from urllib.parse import urljoin

from sourcewise.errors import InvalidURL, RobotsDisallowed
from sourcewise.net.cache import CachedRobots, PageCache
from sourcewise.net.flight import SingleFlight
from sourcewise.web.robots import MAX_BYTES, robots_allowed
from sourcewise.web.urlparse import parse_web_url

__all__ = ["ROBOTS_REDIRECTS", "RobotsGate"]

ROBOTS_REDIRECTS = 5  # RFC 9309 section 2.3.1.2: follow at least five


class Answer(Protocol):
    status: int
    headers: dict[str, str]
    body: bytes


Get = Callable[[str], Awaitable[Answer]]


class RobotsGate:
    """Per-origin robots.txt verdicts for one fetcher. ``get`` is how it requests a URL."""

    def __init__(self, cache: PageCache, clock: Callable[[], float], user_agent: str) -> None:
        self.cache = cache
        self.clock = clock
        self.user_agent = user_agent
        self._flights: SingleFlight[str, CachedRobots] = SingleFlight()

    async def check(self, url: str, get: Get, *, private: bool) -> None:
        """Return when robots.txt lets us request ``url``; ``RobotsDisallowed`` when not."""
        parts = parse_web_url(url)
        if parts.path == "/robots.txt":  # RFC 9309 section 2.2.2: implicitly allowed
            return
        origin = f"{parts.scheme}://{parts.netloc}"
        # A private caller's answers are kept apart: a public caller must not learn an
        # intranet's rules from the cache.
        robots = await self._robots(f"{origin}|{'private' if private else 'public'}", origin, get)
        if 200 <= robots.status < 300:
            if not robots_allowed(robots.body, self.user_agent, parts.request_url()):
                token = self.user_agent.split("/", 1)[0]
                raise RobotsDisallowed(url, f"{origin}/robots.txt does not allow {token} to fetch this page")
        elif robots.status == 429 or robots.status >= 500:
            why = f"{origin}/robots.txt {robots.note}: the site is off limits until it answers (RFC 9309)"
            raise RobotsDisallowed(url, why)

    async def _robots(self, key: str, origin: str, get: Get) -> CachedRobots:
        cached = self.cache.get_robots(key, self.clock())
        if cached is not None:
            return cached

        async def fetch() -> CachedRobots:
            robots = await _fetch(origin + "/robots.txt", get)
            self.cache.put_robots(key, robots, self.clock())
            return robots

        return await self._flights.run(key, fetch)  # one request per origin at a time


async def _fetch(url: str, get: Get) -> CachedRobots:
    current, status = url, 0
    for _hop in range(ROBOTS_REDIRECTS + 1):
        try:
            answer = await get(current)  # no answer at all: its FetchError goes to the caller
        except InvalidURL:  # a redirect target the HTTP client reads differently
            return CachedRobots(status, b"", "redirects to something that is not a web page")
        status = answer.status
        if status in (301, 302, 303, 307, 308) and "location" in answer.headers:
            try:
                current = parse_web_url(urljoin(current, answer.headers["location"])).request_url()
            except InvalidURL:
                return CachedRobots(status, b"", "redirects to something that is not a web page")
            continue
        body = answer.body[:MAX_BYTES] if 200 <= status < 300 else b""
        return CachedRobots(status, body, f"answered HTTP {status}")
    return CachedRobots(status, b"", f"redirects more than {ROBOTS_REDIRECTS} times")
