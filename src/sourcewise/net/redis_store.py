"""The page cache and provider suspensions in Redis, for workers on several machines or many
writers at once (``SOURCEWISE_REDIS_URL``). Same interface as the SQLite stores.

A cached page expires with Redis' own clock after ``ttl`` and is also checked against the
caller's clock, as the SQLite cache is. A suspension is one Lua script, so two workers that are
rate-limited at the same moment count two strikes. Calls are synchronous, like SQLite's: a
round trip to a Redis nearby takes well under a millisecond. A Redis that cannot be reached is
a ``ConfigError`` at start-up; after that the cache degrades to no cache (a warning), as a broken
SQLite cache does, and suspensions to this machine's state (a warning); what needs the shared
state itself (emptying the cache, lifting suspensions) is a ``StoreUnavailable`` (a door's 503).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from sourcewise.errors import ConfigError, StoreUnavailable
from sourcewise.net.cache import CachedDocument, CachedRobots, PageCache
from sourcewise.net.state import MAX_SUSPENSION, ProviderState, Suspension

__all__ = ["RedisPageCache", "RedisProviderState"]

log = logging.getLogger("sourcewise")
PREFIX = "sourcewise:"

_SUSPEND = """
local strikes = tonumber(redis.call('HGET', KEYS[1], 'strikes') or '0') + 1
local now, base, retry, cap = tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local wait = math.min(cap, base * 2 ^ (strikes - 1))
if retry >= 0 then wait = math.min(cap, math.max(1, retry)) end
local untl = now + wait
redis.call('HSET', KEYS[1], 'until', tostring(untl), 'reason', ARGV[2], 'strikes', strikes)
return {tostring(untl), strikes}
"""


def _connect(url: str) -> Any:
    try:
        import redis
    except ImportError as exc:
        missing = "SOURCEWISE_REDIS_URL is set but the redis client is missing: pip install redis"
        raise ConfigError(missing) from exc
    try:
        client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        client.ping()
    except (redis.RedisError, ValueError) as exc:
        # The URL may hold a password: name the failure, never the URL.
        raise ConfigError(f"Redis at SOURCEWISE_REDIS_URL cannot be used: {type(exc).__name__}") from exc
    return client


class RedisPageCache(PageCache):
    """Pages under ``sourcewise:page:<canonical URL>``, robots.txt answers under
    ``sourcewise:robots:<origin>|<guard>``. (The SQLite base is not opened.)"""

    def __init__(self, url: str, ttl: float) -> None:
        # Deliberately no super().__init__(): it would open a SQLite file.
        self.ttl = ttl
        self.path = None
        self._db = None
        self._redis = _connect(url)

    def get(self, key: str, now: float) -> CachedDocument | None:
        import redis

        try:
            raw = self._redis.get(PREFIX + "page:" + key)
        except redis.RedisError as exc:
            log.warning("page cache read failed (%s); fetching anew", type(exc).__name__)
            return None
        if raw is None:
            return None
        try:
            doc = CachedDocument.from_json(raw.decode("utf-8"))
        except (ValueError, KeyError, TypeError):
            return None
        return doc if now - doc.fetched_at < self.ttl else None

    def put(self, keys: list[str], doc: CachedDocument, now: float | None = None) -> None:
        # Redis expires rows by itself (px below); ``now`` is for the SQLite cache's purge.
        import redis

        if self.ttl <= 0:
            return
        text = doc.to_json()
        try:
            with self._redis.pipeline() as pipe:
                for key in dict.fromkeys(keys):
                    pipe.set(PREFIX + "page:" + key, text, px=max(1, int(self.ttl * 1000)))
                pipe.execute()
        except redis.RedisError as exc:
            log.warning("page cache write failed (%s); the page is not cached", type(exc).__name__)

    def get_robots(self, key: str, now: float) -> CachedRobots | None:
        import redis

        try:
            row = self._redis.hgetall(PREFIX + "robots:" + key)
        except redis.RedisError as exc:
            log.warning("page cache read failed (%s); fetching robots.txt anew", type(exc).__name__)
            return None
        try:
            if not row or now - float(row[b"fetched_at"]) >= self.ttl:
                return None
            return CachedRobots(int(row[b"status"]), bytes(row[b"body"]), row[b"note"].decode("utf-8"))
        except (KeyError, ValueError):
            return None

    def put_robots(self, key: str, robots: CachedRobots, now: float) -> None:
        import redis

        if self.ttl <= 0:
            return
        fields = {"fetched_at": repr(now), "status": robots.status, "body": robots.body, "note": robots.note}
        try:
            with self._redis.pipeline() as pipe:
                pipe.hset(PREFIX + "robots:" + key, mapping=fields)
                pipe.pexpire(PREFIX + "robots:" + key, max(1, int(self.ttl * 1000)))
                pipe.execute()
        except redis.RedisError as exc:
            log.warning("page cache write failed (%s); robots.txt is not cached", type(exc).__name__)

    def clear(self) -> int:
        removed = 0
        try:
            for key in self._redis.scan_iter(match=PREFIX + "robots:*", count=500):
                self._redis.delete(key)
            for key in self._redis.scan_iter(match=PREFIX + "page:*", count=500):
                removed += int(self._redis.delete(key))
        except redis_errors() as exc:
            raise _unreachable(exc, "the shared page cache was not emptied") from exc
        return removed

    def close(self) -> None:
        self._redis.close()


class RedisProviderState(ProviderState):
    """Suspensions under ``sourcewise:suspension:<provider>``. (The SQLite base is not opened.)

    Redis going away does not stop searches: each call that cannot reach it is answered from
    ``fallback`` (this machine's SQLite state, or memory), with one warning until Redis answers
    again; suspensions recorded meanwhile stay local to this machine."""

    def __init__(self, url: str, fallback: Path | None = None) -> None:
        # Deliberately no super().__init__(): it would open a SQLite file.
        self._redis = _connect(url)
        self._suspend = self._redis.register_script(_SUSPEND)
        self._fallback = fallback
        self._local: ProviderState | None = None
        self._down = False

    def _key(self, provider: str) -> str:
        return PREFIX + "suspension:" + provider

    def _degraded(self, exc: Exception) -> ProviderState:
        if not self._down:
            self._down = True
            log.warning(
                "Redis at SOURCEWISE_REDIS_URL cannot be reached (%s): provider suspensions are kept "
                "in local state until it answers again", type(exc).__name__,
            )  # fmt: skip
        if self._local is None:
            self._local = ProviderState(self._fallback)
        return self._local

    def _up(self) -> None:
        if self._down:
            self._down = False
            log.warning("Redis at SOURCEWISE_REDIS_URL answers again: provider suspensions are shared")

    def get(self, provider: str) -> Suspension | None:
        try:
            row = self._redis.hgetall(self._key(provider))
        except redis_errors() as exc:
            return self._degraded(exc).get(provider)
        self._up()
        if not row:
            return None
        return Suspension(float(row[b"until"]), row[b"reason"].decode("utf-8"), int(row[b"strikes"]))

    def suspend(
        self,
        provider: str,
        now: float,
        reason: str,
        base: float,
        retry_after: float | None = None,
        *,
        cap: float = MAX_SUSPENSION,
    ) -> Suspension:
        retry = -1.0 if retry_after is None else retry_after
        args = [repr(now), reason, repr(base), repr(retry), repr(cap)]
        try:
            until, strikes = self._suspend(keys=[self._key(provider)], args=args)
        except redis_errors() as exc:
            return self._degraded(exc).suspend(provider, now, reason, base, retry_after, cap=cap)
        self._up()
        return Suspension(float(until), reason, int(strikes))

    def clear(self, provider: str | None = None, *, everywhere: bool = False) -> int:
        """Lift suspensions. A provider's success lifts its own as it can (local state while
        Redis is gone); a user's lift (``everywhere``) needs the shared state: on this machine
        alone it would seem to work while every other worker keeps them (``StoreUnavailable``)."""
        local = self._local.clear(provider) if self._local is not None else 0
        try:
            if provider is not None:
                removed = int(self._redis.delete(self._key(provider)))
            else:
                removed = 0
                for key in self._redis.scan_iter(match=PREFIX + "suspension:*", count=500):
                    removed += int(self._redis.delete(key))
        except redis_errors() as exc:
            if not everywhere:
                return self._degraded(exc).clear(provider) + local
            self._degraded(exc)
            raise _unreachable(exc, "the suspensions every worker shares were not lifted") from exc
        self._up()
        return removed + local

    def close(self) -> None:
        self._redis.close()
        if self._local is not None:
            self._local.close()


def _unreachable(exc: Exception, what: str) -> StoreUnavailable:
    # The URL may hold a password: name the failure, never the URL.
    return StoreUnavailable(
        f"Redis at SOURCEWISE_REDIS_URL cannot be reached ({type(exc).__name__}): {what}; "
        "try again when it answers"
    )


def redis_errors() -> tuple[type[Exception], ...]:
    """What the redis client raises when the server is gone (imported only when Redis is used)."""
    import redis

    return (redis.RedisError, OSError)
