"""Resolve redirect links (Gemini's ``vertexaisearch.cloud.google.com/grounding-api-redirect/...``)
to the page they point at, so that tiers and dedup see the real site.

One GET per link through the session's guarded client (the fetcher's ``client``, ``net.guard``),
never following further: the ``Location`` of the first answer is the page. No client is built
here: the session's fetcher lends its own, so links obey the same guard as pages. Answers are
cached in SQLite beside the page cache.
A link that cannot be resolved (refused, timed out, no redirect, not an http(s) target) is kept
as it was: resolution never fails a search.

The cache keeps what the guard decided on (the host, port and addresses the GET connected to) and
serves a link only to a caller whose own guard would let that connection through, as the page
cache does: a link resolved with ``allow_private`` is not served to a default caller. User info
(``user:password@``) is never sent, stored or logged: a link is requested and keyed without it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from sourcewise.config import Settings
from sourcewise.errors import AddressNotAllowed, SourcewiseError
from sourcewise.net.db import open_db
from sourcewise.net.guard import AddressGuard
from sourcewise.web.urls import is_http_url

if TYPE_CHECKING:
    from sourcewise.net.fetch import Fetcher

__all__ = ["REDIRECT_TTL", "RedirectCache", "resolve_redirects"]

log = logging.getLogger("sourcewise")
REDIRECT_TTL = 86_400.0  # a grounding link keeps pointing at the same page; a day is plenty
CONCURRENCY = 8
_REDIRECTS = (301, 302, 303, 307, 308)

#: (host, port, addresses connected to): what the address guard decided on for one GET
Hop = tuple[str, int, list[str]]


def _setup(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")  # shared by the workers of one server, like the page cache
    with db:
        # The first table kept neither the guard's inputs nor links without user info: drop it.
        db.execute("DROP TABLE IF EXISTS redirect")
        db.execute(
            "CREATE TABLE IF NOT EXISTS redirect_hop (link TEXT PRIMARY KEY, target TEXT NOT NULL,"
            " resolved_at REAL NOT NULL, host TEXT NOT NULL, port INTEGER NOT NULL, addresses TEXT NOT NULL)"
        )


def request_link(link: str) -> str:
    """``link`` as it is requested and keyed: without user info (the host ``_resolvable`` read)."""
    parts = urlsplit(link)
    if "@" not in parts.netloc:
        return link
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


class RedirectCache:
    """Link -> target, in SQLite, with the hop the guard approved. An unusable file is reported
    once and replaced by memory."""

    def __init__(self, path: Path | None, ttl: float = REDIRECT_TTL) -> None:
        self.ttl = ttl
        self._db: sqlite3.Connection | None = open_db(path, _setup, "redirect cache")

    def get(self, link: str, now: float, guard: AddressGuard) -> str | None:
        """The cached target of ``link`` if fresh and ``guard`` would let its GET through."""
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT target, resolved_at, host, port, addresses FROM redirect_hop WHERE link = ?",
                (request_link(link),),
            ).fetchone()
        except sqlite3.DatabaseError:
            return None
        if not row or now - row[1] >= self.ttl:
            return None
        try:
            addresses = json.loads(row[4])
            if not addresses or not all(isinstance(a, str) for a in addresses):
                return None  # nothing to re-check: resolve again
            guard.check(str(row[2]), int(row[3]), addresses)
        except (ValueError, TypeError, AddressNotAllowed) as exc:
            log.info("not serving a grounding link from the cache (%s)", type(exc).__name__)
            return None
        return str(row[0])

    def put(self, link: str, target: str, now: float, hop: Hop) -> None:
        """Keep ``link`` -> ``target``; only a link whose addresses are known is kept."""
        host, port, addresses = hop
        if self._db is None or not addresses or "@" in urlsplit(target).netloc:
            return
        try:
            with self._db:
                self._db.execute(
                    "INSERT OR REPLACE INTO redirect_hop VALUES (?, ?, ?, ?, ?, ?)",
                    (request_link(link), target, now, host, port, json.dumps(addresses)),
                )
        except sqlite3.DatabaseError as exc:
            log.warning("redirect cache write failed (%s)", exc)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


async def _one(
    client: httpx.AsyncClient, guard: AddressGuard, link: str, until: float, limit: float
) -> tuple[str, Hop] | None:
    """The ``Location`` the link answers with and the hop the guard approved, or ``None``.

    ``until`` is the event loop's time by which every link of the batch must be done."""
    url = request_link(link)
    try:
        async with (
            asyncio.timeout_at(until),
            client.stream("GET", url, timeout=httpx.Timeout(limit)) as response,
        ):
            location = response.headers.get("location")
            if response.status_code not in _REDIRECTS or not location:
                log.info("grounding link answered HTTP %d without a redirect; kept", response.status_code)
                return None
            asked = response.request.url
    except (TimeoutError, httpx.HTTPError, SourcewiseError) as exc:
        log.info("could not resolve a grounding link (%s); kept", type(exc).__name__)
        return None
    target: str = urljoin(url, str(location).strip())
    if not is_http_url(target) or "@" in urlsplit(target).netloc:  # user info is never kept
        return None
    host = asked.raw_host.decode("ascii").strip("[]").lower().rstrip(".")
    port = asked.port or (443 if asked.scheme == "https" else 80)
    return target, (host, port, list(guard.approved.get((host, port), [])))


def _resolvable(link: str, hosts: frozenset[str]) -> bool:
    try:
        parts = urlsplit(link)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and (parts.hostname or "").lower() in hosts


async def resolve_redirects(
    links: Iterable[str],
    settings: Settings,
    *,
    fetcher: Fetcher,
    cache: RedirectCache,
    clock: Callable[[], float],
    seconds: float | None = None,
) -> dict[str, str]:
    """``{link: target}`` for every link on one of ``settings.gemini_redirect_hosts`` that resolved.

    The GETs go through ``fetcher``'s guarded client for ``settings.allow_private`` (the session's
    one client and address guard); ``cache`` is the session's redirect cache.
    ``seconds`` (default: the settings' timeout) bounds the whole batch, not each link: a caller
    passes what is left of its own budget, so resolving never makes a search outlast its timeout.
    With no time left nothing is requested (cached answers are still used)."""
    limit = seconds if seconds is not None else settings.timeout
    until = asyncio.get_running_loop().time() + limit  # from here: the cache and client count too
    hosts = frozenset(h.lower() for h in settings.gemini_redirect_hosts)
    todo = list(dict.fromkeys(link for link in links if _resolvable(link, hosts)))
    if not todo:
        return {}
    guard = fetcher.guard(settings.allow_private)
    found = {link: hit for link in todo if (hit := cache.get(link, clock(), guard)) is not None}
    missing = [link for link in todo if link not in found]
    if not missing:
        return found
    if limit <= 0:
        log.info("no time left to resolve %d grounding link(s); kept as they are", len(missing))
        return found
    client = fetcher.client(settings.allow_private)
    gate = asyncio.Semaphore(CONCURRENCY)

    async def run(link: str) -> tuple[str, tuple[str, Hop] | None]:
        async with gate:
            return link, await _one(client, guard, link, until, limit)

    for link, answer in await asyncio.gather(*(run(link) for link in missing)):
        if answer is not None:
            target, hop = answer
            found[link] = target
            cache.put(link, target, clock(), hop)
    return found
