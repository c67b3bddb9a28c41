"""Resolve redirect links (Gemini's ``vertexaisearch.cloud.google.com/grounding-api-redirect/...``)
to the page they point at, so that tiers and dedup see the real site.

One GET per link through the guarded client (``net.guard``), never following further: the
``Location`` of the first answer is the page. Answers are cached in SQLite beside the page cache.
A link that cannot be resolved (refused, timed out, no redirect, not an http(s) target) is kept
as it was: resolution never fails a search.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from ..config import Settings
from ..core.urls import is_http_url
from ..errors import SourcewiseError
from .db import open_db
from .guard import AddressGuard, GuardedTransport, Resolver

__all__ = ["REDIRECT_TTL", "RedirectCache", "resolve_redirects"]

log = logging.getLogger("sourcewise")
REDIRECT_TTL = 86_400.0  # a grounding link keeps pointing at the same page; a day is plenty
CONCURRENCY = 8
_REDIRECTS = (301, 302, 303, 307, 308)


def _setup(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")  # shared by the workers of one server, like the page cache
    with db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS redirect"
            " (link TEXT PRIMARY KEY, target TEXT NOT NULL, resolved_at REAL NOT NULL)"
        )


class RedirectCache:
    """Link -> target, in SQLite. An unusable file is reported once and replaced by memory."""

    def __init__(self, path: Path | None, ttl: float = REDIRECT_TTL) -> None:
        self.ttl = ttl
        self._db: sqlite3.Connection | None = open_db(path, _setup, "redirect cache")

    def get(self, link: str, now: float) -> str | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT target, resolved_at FROM redirect WHERE link = ?", (link,)
            ).fetchone()
        except sqlite3.DatabaseError:
            return None
        return str(row[0]) if row and now - row[1] < self.ttl else None

    def put(self, link: str, target: str, now: float) -> None:
        if self._db is None:
            return
        try:
            with self._db:
                self._db.execute("INSERT OR REPLACE INTO redirect VALUES (?, ?, ?)", (link, target, now))
        except sqlite3.DatabaseError as exc:
            log.warning("redirect cache write failed (%s)", exc)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


async def _one(client: httpx.AsyncClient, link: str, seconds: float) -> str | None:
    """The ``Location`` the link answers with, or ``None``."""
    try:
        async with asyncio.timeout(seconds), client.stream("GET", link) as response:
            location = response.headers.get("location")
            if response.status_code not in _REDIRECTS or not location:
                log.info("grounding link answered HTTP %d without a redirect; kept", response.status_code)
                return None
    except (TimeoutError, httpx.HTTPError, SourcewiseError) as exc:
        log.info("could not resolve a grounding link (%s); kept", type(exc).__name__)
        return None
    target: str = urljoin(link, str(location).strip())
    if not is_http_url(target) or "@" in urlsplit(target).netloc:  # user info is never kept
        return None
    return target


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
    clock: Callable[[], float],
    seconds: float | None = None,
    resolver: Resolver | None = None,
    cache: RedirectCache | None = None,
) -> dict[str, str]:
    """``{link: target}`` for every link on one of ``settings.gemini_redirect_hosts`` that resolved."""
    hosts = frozenset(h.lower() for h in settings.gemini_redirect_hosts)
    todo = list(dict.fromkeys(link for link in links if _resolvable(link, hosts)))
    if not todo:
        return {}
    own = cache is None
    store = cache or RedirectCache(settings.state_dir / "redirects.sqlite3")
    found = {link: hit for link in todo if (hit := store.get(link, clock())) is not None}
    missing = [link for link in todo if link not in found]
    if not missing:
        if own:
            store.close()
        return found
    guard = AddressGuard(
        allow_private=settings.allow_private, allow_hosts=settings.allow_hosts, resolver=resolver
    )
    gate = asyncio.Semaphore(CONCURRENCY)
    limit = seconds if seconds is not None else settings.timeout

    async def run(link: str) -> tuple[str, str | None]:
        async with gate:
            return link, await _one(client, link, limit)

    try:
        async with httpx.AsyncClient(
            transport=GuardedTransport(guard),
            timeout=httpx.Timeout(limit),
            headers={"User-Agent": settings.user_agent},
            follow_redirects=False,
            trust_env=False,
        ) as client:
            for link, target in await asyncio.gather(*(run(link) for link in missing)):
                if target is not None:
                    found[link] = target
                    store.put(link, target, clock())
    finally:
        if own:
            store.close()
    return found
